// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/affinity.hpp>
#include <amupmu/amu.hpp>
#include <amupmu/bits.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/events.hpp>
#include <amupmu/report/amu_format.hpp>
#include <amupmu/report/json.hpp>

#include <amupmu/text/numtext.hpp>
#include <amupmu/text/columns.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
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

std::string cpu_list_of(const std::vector<unsigned>& cpus)
{
	return (cpus.size() == 1 ? "CPU " : "CPUs ") + format_cpu_list(cpus);
}

std::string not_counted_why(const AmuNotCounted& n)
{
	switch (n.why) {
	case AmuNotCountedWhy::no_counter: return "no group 0 counter has this event type";
	case AmuNotCountedWhy::not_enabled: {
		const std::string idx = std::to_string(n.counter);
		return "counter " + idx + " not enabled (AMCNTENSET0_EL0 bit " + idx + " clear)";
	}
	case AmuNotCountedWhy::group1_reads_zero: break;
	}
	return "AMCR_EL0.CG1RZ set (AMUv1p1): they read zero below the highest EL";
}

} // namespace

std::string_view amu_backend(const AmuReport& r) noexcept
{
	return r.mock ? "mock AMU model" : "hardware AMU";
}

std::vector<std::string> amu_flags(const AmuReport& r)
{
	std::vector<unsigned> offline, no_amu, restarted;
	std::map<std::string, std::vector<unsigned>> erratum_cpus;
	// (what, why) -> CPUs: one line per kind, however many CPUs
	std::map<std::pair<std::string, std::string>, std::vector<unsigned>> not_counted;
	for (const AmuCpuDelta& d : r.per_cpu) {
		if (d.state == AmuWhy::no_amu)
			no_amu.push_back(d.cpu);
		if (d.state == AmuWhy::offline)
			offline.push_back(d.cpu);
		if (d.restarted)
			restarted.push_back(d.cpu);
		if (!d.erratum.empty())
			erratum_cpus[d.erratum].push_back(d.cpu);
		for (const AmuNotCounted& n : d.not_counted) {
			std::string what = n.why == AmuNotCountedWhy::group1_reads_zero ? "group 1 counters"
											 : std::string{amu_event_name(n.event)};
			not_counted[{std::move(what), not_counted_why(n)}].push_back(d.cpu);
		}
	}
	std::vector<std::string> flags;
	for (const auto& [id, cpus] : erratum_cpus) {
		const Erratum* e = find_erratum(id);
		flags.push_back("erratum " + id + " on " + cpu_list_of(cpus) + " (" + std::string{e->core} + " " +
				affected_range(*e) + "): " + std::string{e->summary} + " [" + std::string{e->provenance} +
				"]");
	}
	for (const auto& [what, cpus] : not_counted)
		flags.push_back("not counted: " + cpu_list_of(cpus) + " " + what.first + ": " + what.second);
	if (!offline.empty())
		flags.push_back("offline: " + cpu_list_of(offline) + " offline at a read: no figures for the interval");
	if (!restarted.empty())
		flags.push_back("restarted: " + cpu_list_of(restarted) +
				" powered down in the interval; amupmu added the earlier counts back, figures still valid");
	if (!no_amu.empty())
		flags.push_back("no AMU: " + cpu_list_of(no_amu) +
				" without a usable AMU (not implemented, amu=0, or never online)");
	return flags;
}

std::vector<std::string> amu_notes(const AmuReport& r)
{
	std::vector<unsigned> zero;
	for (const AmuCpuDelta& d : r.per_cpu)
		if (d.amu_zero)
			zero.push_back(d.cpu);
	if (zero.empty())
		return {};
	return {cpu_list_of(zero) +
		": AMU_ZERO, the cycle counters read zero at discovery (firmware left them disabled or reset)"};
}

std::string format_amu_text(const AmuRun& run)
{
	const AmuReport& r = run.amu;
	const std::vector<std::string> flags = amu_flags(r);
	const std::vector<std::string> notes = amu_notes(r);
	std::string out;
	const std::string prefix = run.interval_end ? pad_left(fixed(*run.interval_end, 6), 14) + " " : "";
	if (!run.interval_end) {
		out += "\n AMU activity of CPUs " + r.cpus;
		if (!run.command.empty())
			out += " for '" + command_text(run.command) + "'";
		out += " (" + fixed(run.seconds, 6) + " s), backend: ";
		out += r.mock ? "MOCK AMU MODEL (test build: the numbers come from the mock register model, "
				"not from hardware)"
			      : std::string{amu_backend(r)};
		out += "\n timer " + fixed(static_cast<double>(r.timer_freq) / 1e6, 3) + " MHz";
		if (!flags.empty()) {
			std::string kinds;
			for (const std::string& f : flags) {
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
	if (!run.interval_end) {
		out += "\n MHz = dCPU_CYCLES / dCNT_CYCLES x timer (while not in WFI); IPC = dINST_RETIRED / "
		       "dCPU_CYCLES;\n MemStall = dSTALL_BACKEND_MEM / dCPU_CYCLES; Active = dCNT_CYCLES / "
		       "dtime; 'all': sums over the CPUs with the figure.\n"
		       " n/c: not counted, ERRATUM: counter unreliable on this core, offline: CPU offline at a "
		       "read, idle: no cycles, no-amu: no usable AMU\n";
		if (run.exit_status && *run.exit_status != 0)
			out += "\n" + pad_left(std::to_string(*run.exit_status), 20) + " exit status of the command\n";
		for (const std::string& f : flags)
			out += "\n flag: " + f;
		for (const std::string& n : notes)
			out += "\n note: " + n;
		if (!flags.empty() || !notes.empty())
			out += "\n";
		out += "\n";
	}
	return out;
}

std::string format_amu_json(const AmuRun& run, unsigned indent)
{
	JsonWriter w{indent};
	write_amu_json(w, run);
	return w.str() + "\n";
}

void write_amu_json(JsonWriter& w, const AmuRun& run)
{
	const AmuReport& r = run.amu;
	w.begin_object();
	w.key("command").begin_array();
	for (const std::string& a : run.command)
		w.value(a);
	w.end_array();
	w.member("cpus", r.cpus)
		.member("backend", amu_backend(r))
		.member("mock", r.mock)
		.member("timer_freq", r.timer_freq)
		.member("seconds", run.seconds);
	if (run.interval_end)
		w.member("interval_end", *run.interval_end);
	if (run.exit_status)
		w.member("exit_status", *run.exit_status);
	w.key("per_cpu").begin_array();
	for (const AmuCpuDelta& d : r.per_cpu)
		json_row(w, d, false);
	w.end_array();
	w.key("total");
	json_row(w, r.total, true);
	w.key("flags").begin_array();
	for (const std::string& f : amu_flags(r))
		w.value(f);
	w.end_array();
	w.key("notes").begin_array();
	for (const std::string& n : amu_notes(r))
		w.value(n);
	w.end_array();
	w.end_object();
}

std::string format_amu_csv(const AmuRun& run, std::string_view sep)
{
	const AmuReport& r = run.amu;
	std::string out;
	const std::string s{sep};
	const std::string prefix = run.interval_end ? fixed(*run.interval_end, 6) + s : "";
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
