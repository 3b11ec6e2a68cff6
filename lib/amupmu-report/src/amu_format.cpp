// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/amu.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/format.hpp>
#include <amupmu/report/amu_format.hpp>
#include <amupmu/report/json.hpp>

#include <amupmu/text/numtext.hpp>
#include <amupmu/text/columns.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace amupmu::report {

namespace {

using text::fixed;
using text::pad_left;
using text::clean;

// A missing figure in the table: short, explained in the legend.
std::string_view marker(AmuWhy why) noexcept
{
	switch (why) {
	case AmuWhy::not_counted: return "n/c";
	case AmuWhy::erratum: return "ERRATUM";
	case AmuWhy::offline: return "offline";
	case AmuWhy::no_amu: return "no-amu";
	case AmuWhy::no_cycles: return "idle";
	case AmuWhy::ok: break;
	}
	return "";
}

std::string figure_text(const AmuFigure& f, double scale, int decimals)
{
	return f.ok() ? fixed(f.value * scale, decimals) : std::string{marker(f.why)};
}

std::string count_text(const std::optional<std::uint64_t>& v)
{
	return v ? std::to_string(*v) : std::string{};
}

// The flags of one row, for the CSV and the table: "erratum X; restarted".
// all: the number of CPUs of the summed row, which then says which figures
// cover fewer of them.
std::string row_flags(const AmuCpuDelta& d, std::size_t all = 0)
{
	std::vector<std::string> out;
	if (all) {
		std::string partial;
		const struct {
			const AmuFigure& f;
			std::string_view name;
		} figs[] = {{d.frequency, "MHz"}, {d.ipc, "IPC"}, {d.mem_stall, "MemStall"}, {d.active, "Active"}};
		for (const auto& x : figs)
			if (x.f.ok() && x.f.cpus < all)
				partial += (partial.empty() ? "" : ", ") + std::string{x.name} + " " +
					   std::to_string(x.f.cpus) + "/" + std::to_string(all);
		if (!partial.empty())
			out.push_back("over " + partial + " CPUs");
	}
	if (d.state == AmuWhy::offline)
		out.emplace_back("offline");
	if (d.state == AmuWhy::no_amu)
		out.emplace_back("no AMU");
	if (!d.erratum.empty())
		out.push_back("erratum " + d.erratum);
	for (const AmuFigure* f : {&d.frequency, &d.ipc, &d.mem_stall, &d.active})
		if (!all && f->why == AmuWhy::not_counted) {
			out.emplace_back("not counted");
			break;
		}
	if (d.restarted)
		out.push_back("restarted x" + std::to_string(d.restarts));
	std::string s;
	for (const std::string& x : out)
		s += (s.empty() ? "" : "; ") + x;
	return s;
}

std::string command_text(const std::vector<std::string>& command)
{
	std::string cmd;
	for (const std::string& a : command)
		cmd += (cmd.empty() ? "" : " ") + a;
	return cmd;
}

void json_count(JsonWriter& w, std::string_view name, const std::optional<std::uint64_t>& v)
{
	w.key(name);
	if (v)
		w.value(*v);
	else
		w.null();
}

void json_figure(JsonWriter& w, std::string_view name, const AmuFigure& f, bool total)
{
	w.key(name).begin_object().key("value");
	if (f.ok())
		w.value(f.value);
	else
		w.null();
	w.member("status", to_string(f.why));
	if (total)
		w.member("cpus", f.cpus);
	w.end_object();
}

void json_row(JsonWriter& w, const AmuCpuDelta& d, bool total)
{
	w.begin_object();
	if (total)
		w.member("cpu", "all");
	else
		w.member("cpu", d.cpu);
	w.member("state", to_string(d.state))
		.member("restarted", d.restarted)
		.member("restarts", d.restarts)
		.member("seconds", d.seconds)
		.member("ticks", d.ticks);
	w.key("counts").begin_object();
	json_count(w, "cpu_cycles", d.cpu_cycles);
	json_count(w, "cnt_cycles", d.cnt_cycles);
	json_count(w, "inst_retired", d.inst_retired);
	json_count(w, "stall_backend_mem", d.stall_backend_mem);
	w.end_object();
	w.key("aux").begin_array();
	for (const AmuAuxDelta& x : d.aux) {
		w.begin_object().member("event", hex(x.event, 4));
		json_count(w, "delta", x.delta);
		w.end_object();
	}
	w.end_array();
	json_figure(w, "frequency_hz", d.frequency, total);
	json_figure(w, "ipc", d.ipc, total);
	json_figure(w, "mem_stall", d.mem_stall, total);
	json_figure(w, "active", d.active, total);
	if (!total) {
		w.key("erratum");
		if (d.erratum.empty())
			w.null();
		else
			w.value(d.erratum);
	}
	w.end_object();
}

} // namespace

std::string format_amu_text(const AmuReport& r)
{
	std::string out;
	const std::string prefix = r.interval_end ? pad_left(fixed(*r.interval_end, 6), 14) + " " : "";
	if (!r.interval_end) {
		out += "\n AMU activity of CPUs " + r.cpus;
		if (!r.command.empty())
			out += " for '" + command_text(r.command) + "'";
		out += " (" + fixed(r.seconds, 6) + " s), backend: ";
		out += r.mock ? "MOCK AMU MODEL (test build: the numbers come from the mock register model, "
				"not from hardware)"
			      : r.backend;
		out += "\n timer " + fixed(static_cast<double>(r.timer_freq) / 1e6, 3) + " MHz";
		if (!r.flags.empty()) {
			std::string kinds;
			for (const std::string& f : r.flags) {
				const std::size_t end = f.starts_with("erratum ") ? f.find(" on ") : f.find(':');
				const std::string kind = f.substr(0, end);
				if (kinds.find(kind) == std::string::npos)
					kinds += (kinds.empty() ? "" : ", ") + kind;
			}
			out += "; flags: " + kinds;
		}
		out += "\n\n";
	} else if (r.mock) {
		out += prefix + "# backend: MOCK AMU MODEL\n";
	}
	// group-1 columns from the first CPU that has them
	std::vector<std::uint16_t> aux_events;
	for (const AmuCpuDelta& d : r.per_cpu)
		if (!d.aux.empty()) {
			for (const AmuAuxDelta& x : d.aux)
				aux_events.push_back(x.event);
			break;
		}
	std::string head = prefix + pad_left("CPU", 5) + pad_left("MHz", 11) + pad_left("IPC", 9) +
			   pad_left("MemStall%", 11) + pad_left("Active%", 10);
	for (const std::uint16_t e : aux_events)
		head += pad_left("aux:" + hex(e, 4), 16);
	out += head + "  flags\n";
	const auto row = [&](const AmuCpuDelta& d, const std::string& name, std::size_t all = 0) {
		std::string line = prefix + pad_left(name, 5) + pad_left(figure_text(d.frequency, 1e-6, 2), 11) +
				   pad_left(figure_text(d.ipc, 1, 3), 9) + pad_left(figure_text(d.mem_stall, 100, 2), 11) +
				   pad_left(figure_text(d.active, 100, 2), 10);
		for (std::size_t i = 0; i < aux_events.size(); ++i) {
			std::string v = "-";
			if (i < d.aux.size())
				v = d.aux[i].delta ? std::to_string(*d.aux[i].delta) : "n/c";
			line += pad_left(v, 16);
		}
		const std::string flags = row_flags(d, all);
		out += line + (flags.empty() ? "" : "  " + flags) + "\n";
	};
	for (const AmuCpuDelta& d : r.per_cpu)
		row(d, std::to_string(d.cpu));
	row(r.total, "all", r.per_cpu.size());
	if (!r.interval_end) {
		out += "\n MHz = dCPU_CYCLES / dCNT_CYCLES x timer (while not in WFI); IPC = dINST_RETIRED / "
		       "dCPU_CYCLES;\n MemStall = dSTALL_BACKEND_MEM / dCPU_CYCLES; Active = dCNT_CYCLES / "
		       "dtime; 'all': sums over the CPUs with the figure.\n"
		       " n/c: not counted, ERRATUM: counter unreliable on this core, offline: CPU offline at a "
		       "read, idle: no cycles, no-amu: no usable AMU\n";
		if (r.exit_status && *r.exit_status != 0)
			out += "\n" + pad_left(std::to_string(*r.exit_status), 20) + " exit status of the command\n";
		for (const std::string& f : r.flags)
			out += "\n flag: " + f;
		for (const std::string& n : r.notes)
			out += "\n note: " + n;
		if (!r.flags.empty() || !r.notes.empty())
			out += "\n";
		out += "\n";
	}
	return out;
}

std::string format_amu_json(const AmuReport& r, unsigned indent)
{
	JsonWriter w{indent};
	write_amu_json(w, r);
	return w.str() + "\n";
}

void write_amu_json(JsonWriter& w, const AmuReport& r)
{
	w.begin_object();
	w.key("command").begin_array();
	for (const std::string& a : r.command)
		w.value(a);
	w.end_array();
	w.member("cpus", r.cpus)
		.member("backend", r.backend)
		.member("mock", r.mock)
		.member("timer_freq", r.timer_freq)
		.member("seconds", r.seconds);
	if (r.interval_end)
		w.member("interval_end", *r.interval_end);
	if (r.exit_status)
		w.member("exit_status", *r.exit_status);
	w.key("per_cpu").begin_array();
	for (const AmuCpuDelta& d : r.per_cpu)
		json_row(w, d, false);
	w.end_array();
	w.key("total");
	json_row(w, r.total, true);
	w.key("flags").begin_array();
	for (const std::string& f : r.flags)
		w.value(f);
	w.end_array();
	w.key("notes").begin_array();
	for (const std::string& n : r.notes)
		w.value(n);
	w.end_array();
	w.end_object();
}

std::string format_amu_csv(const AmuReport& r, std::string_view sep)
{
	std::string out;
	const std::string s{sep};
	const std::string prefix = r.interval_end ? fixed(*r.interval_end, 6) + s : "";
	const auto fig = [](const AmuFigure& f, double scale, int decimals) {
		return f.ok() ? fixed(f.value * scale, decimals) : std::string{};
	};
	const auto line = [&](const AmuCpuDelta& d, const std::string& name, std::size_t all = 0) {
		const std::string fields[] = {
			name,
			fig(d.frequency, 1e-6, 3),
			fig(d.ipc, 1, 4),
			fig(d.mem_stall, 100, 3),
			fig(d.active, 100, 3),
			fixed(d.seconds, 6),
			count_text(d.cpu_cycles),
			count_text(d.cnt_cycles),
			count_text(d.inst_retired),
			count_text(d.stall_backend_mem),
			row_flags(d, all),
		};
		std::string l = prefix;
		bool first = true;
		for (const std::string& f : fields) {
			l += (first ? "" : s) + clean(f, sep);
			first = false;
		}
		out += l + "\n";
	};
	for (const AmuCpuDelta& d : r.per_cpu)
		line(d, std::to_string(d.cpu));
	line(r.total, "all", r.per_cpu.size());
	return out;
}

} // namespace amupmu::report
