// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/cpu.hpp>
#include <amupmu/events.hpp>
#include <amupmu/format.hpp>
#include <amupmu/json.hpp>
#include <amupmu/stat.hpp>

#include "numtext.hpp"

#include <algorithm>
#include <cmath>

namespace amupmu {

namespace {

using detail::fixed;

std::string param_text(const Erratum& e, const Parameter& p)
{
	return std::string{e.parameter} + " " + detail::general(p.value, 4) +
	       (p.calibrated ? " (calibrated)" : " (default)");
}

// The row of number counted at the same exception levels as flags says:
// a compensation uses the companions of its own row's modifiers.
const StatRow* row_of(const StatReport& r, std::uint16_t number, std::uint32_t flags)
{
	for (const StatRow& row : r.rows)
		if (row.number == number && (row.flags & evflag::exclusions) == (flags & evflag::exclusions))
			return &row;
	return nullptr;
}

double running_pct(const StatRow& row)
{
	return row.time_enabled ? 100.0 * static_cast<double>(row.time_running) /
					  static_cast<double>(row.time_enabled)
				: 100.0;
}

std::string pad_left(std::string s, std::size_t width)
{
	if (s.size() < width)
		s.insert(0, width - s.size(), ' ');
	return s;
}

std::string pad_right(std::string s, std::size_t width)
{
	if (s.size() < width)
		s.append(width - s.size(), ' ');
	return s;
}

std::string clean(std::string s, std::string_view sep)
{
	if (sep.empty())
		return s;
	for (std::size_t pos = 0; (pos = s.find(sep, pos)) != std::string::npos;)
		s.replace(pos, sep.size(), std::string(sep.size(), ' '));
	return s;
}

std::string metric_value_text(const Metric& m)
{
	return fixed(m.value, 2) + (m.unit == "%" ? " %" : "");
}

} // namespace

std::vector<EventSpec> errata_companions(std::span<const EventSpec> events, std::uint64_t midr)
{
	std::vector<EventSpec> add;
	const auto same = [](std::uint16_t n, std::uint32_t flags) {
		return [=](const EventSpec& e) {
			return e.number == n && (e.flags & evflag::exclusions) == (flags & evflag::exclusions);
		};
	};
	const auto have = [&](std::uint16_t n, std::uint32_t flags) {
		return std::ranges::any_of(events, same(n, flags)) || std::ranges::any_of(add, same(n, flags));
	};
	// each row of an affected event, with its modifiers, gets its own
	const auto need = [&](std::uint16_t n, const EventSpec& row) {
		if (!have(n, row.flags))
			add.push_back(parse_event(event_display_name(n, midr) +
							  (row.modifiers.empty() ? "" : ":" + row.modifiers),
						  midr));
	};
	for (const ErratumMatch& m : errata_for(midr, ErratumUnit::pmu)) {
		if (m.applicability != Applicability::yes)
			continue;
		for (const EventSpec& row : events) {
			if (row.number != m.erratum->event)
				continue;
			if (m.erratum->model == ErratumModel::overcount_minus_companion)
				need(m.erratum->companion, row);
			if (m.erratum->model == ErratumModel::undercount_ec0)
				for (const std::uint16_t n : {ev::exc_taken, ev::exc_return})
					need(n, row);
		}
	}
	return add;
}

namespace {

// One row of an erratum's event (every row of it gets its own: with
// "exc_undef:u,exc_undef:k" two, each with the companions counted at its
// own exception levels); the report's note once per erratum.
void apply_erratum(StatReport& report, StatRow& row, const ErratumMatch& match, std::uint64_t midr,
		   const CompensationOptions& options, bool& noted)
{
	const Erratum& e = *match.erratum;
	const auto note = [&](const std::string& text) {
		if (!noted)
			report.notes.push_back(std::string{e.id} + ": " + text);
		noted = true;
	};
	row.erratum = std::string{e.id};
	if (match.applicability == Applicability::verify) {
		row.note = "verify: " + std::string{e.core} + " " + revision_string(decode_midr(midr)) +
			   " is after the affected " + affected_range(e) + "; not compensated";
		note(row.note);
		return;
	}
	if (!options.enabled) {
		row.note = "erratum applies; compensation off";
		note(std::string{e.summary} + " -- compensation turned off, raw value shown");
		return;
	}
	const Parameter p = parameter_for(e, midr, options.calibration);
	if (e.model == ErratumModel::undercount_ec0) {
		row.compensated = compensate_undercount(row.value, options.exc_undef_ec0, p.value);
		row.note = param_text(e, p) +
			   (options.exc_undef_ec0 ? ", EC=0x00 ground truth " + group_digits(*options.exc_undef_ec0)
						  : ", all counted taken as EC=0x00");
		const StatRow* taken = row_of(report, ev::exc_taken, row.flags);
		const StatRow* ret = row_of(report, ev::exc_return, row.flags);
		if (taken && ret) {
			const CrossCheck c = cross_check_exc_undef(*row.compensated, taken->value, ret->value);
			row.note += std::string{"; cross-check "} + (c.consistent ? "ok" : "FAILED") + ": " + c.note;
		}
	} else {
		const StatRow* comp = row_of(report, e.companion, row.flags);
		const std::string companion =
			event_display_name(e.companion, midr) + (row.modifiers.empty() ? "" : ":" + row.modifiers);
		if (!comp) {
			row.note = "needs " + companion + " in the group";
			return;
		}
		row.compensated = compensate_overcount(row.value, comp->value, p.value);
		row.note = param_text(e, p) + ", minus min(measured * factor, " + companion + ")";
	}
	note(std::string{e.summary} + " [" + std::string{e.provenance} + "]");
}

} // namespace

void apply_errata(StatReport& report, std::uint64_t midr, const CompensationOptions& options)
{
	for (const ErratumMatch& match : errata_for(midr, ErratumUnit::pmu)) {
		bool noted = false;
		// every row of the event: "exc_undef:u,exc_undef:k" are two
		for (StatRow& row : report.rows)
			if (row.number == match.erratum->event)
				apply_erratum(report, row, match, midr, options, noted);
	}
}

void derive_report_metrics(StatReport& report)
{
	std::vector<EventCount> counts;
	for (const StatRow& r : report.rows)
		counts.push_back({r.number, r.flags, r.value});
	report.metrics = derive_metrics(counts);
}

std::string group_digits(double value)
{
	const bool neg = value < 0;
	std::string digits = fixed(std::fabs(std::round(value)), 0);
	std::string out;
	const std::size_t n = digits.size();
	for (std::size_t i = 0; i < n; ++i) {
		if (i && (n - i) % 3 == 0)
			out += ',';
		out += digits[i];
	}
	return neg ? "-" + out : out;
}

std::string format_stat_text(const StatReport& r)
{
	std::string out;
	const std::string prefix = r.interval_end ? pad_left(fixed(*r.interval_end, 6), 14) + " " : "";
	if (!r.interval_end) {
		std::string cmd;
		for (const std::string& a : r.command)
			cmd += (cmd.empty() ? "" : " ") + a;
		out += "\n Performance counter stats for '" + cmd + "' (CPUs " + r.cpus;
		if (!r.cpu_description.empty())
			out += ", " + r.cpu_description;
		out += "):\n\n";
	}
	for (const StatRow& row : r.rows) {
		std::string line = prefix + pad_left(group_digits(row.value), 20) + "      " +
				   pad_right(row.name, 26) + " " + hex(row.number, 4);
		if (const double pct = running_pct(row); pct < 99.995)
			line += "  (" + fixed(pct, 2) + " %)";
		if (row.added)
			line += "  [for " + row.erratum + "]";
		if (!row.compensated && !row.note.empty())
			line += "  # " + row.erratum + ": " + row.note;
		out += line + "\n";
		if (row.compensated)
			out += prefix + pad_left(group_digits(*row.compensated), 20) + "      " +
			       pad_right(row.name + " (compensated)", 26) + "        # " + row.erratum + ": " + row.note +
			       "\n";
	}
	if (!r.metrics.empty()) {
		out += "\n";
		for (const Metric& m : r.metrics)
			out += prefix + pad_left(metric_value_text(m), 20) + "      " + pad_right(std::string{m.name}, 26) +
			       " # " + std::string{m.formula} + "\n";
	}
	if (!r.interval_end) {
		out += "\n" + pad_left(fixed(r.seconds, 6), 20) + " seconds time elapsed\n";
		if (r.exit_status && *r.exit_status != 0)
			out += pad_left(std::to_string(*r.exit_status), 20) + " exit status of the command\n";
		for (const std::string& n : r.notes)
			out += "\n note: " + n;
		if (!r.notes.empty())
			out += "\n";
		out += "\n";
	}
	if (r.amu) {
		AmuReport amu = *r.amu;
		amu.interval_end = r.interval_end;
		out += format_amu_text(amu);
	}
	return out;
}

std::string format_stat_json(const StatReport& r, unsigned indent)
{
	JsonWriter w{indent};
	w.begin_object();
	w.key("command").begin_array();
	for (const std::string& a : r.command)
		w.value(a);
	w.end_array();
	w.member("cpus", r.cpus);
	w.member("cpu", r.cpu_description);
	if (r.interval_end)
		w.member("interval_end", *r.interval_end);
	w.member("seconds", r.seconds);
	if (r.exit_status)
		w.member("exit_status", *r.exit_status);
	w.key("events").begin_array();
	for (const StatRow& row : r.rows) {
		w.begin_object();
		w.member("name", row.name);
		w.member("code", hex(row.number, 4));
		w.member("modifiers", row.modifiers);
		w.key("exclude").begin_array();
		for (const std::string_view e : exclusion_names(row.flags))
			w.value(e);
		w.end_array();
		w.member("value", row.value);
		w.member("time_enabled_ns", row.time_enabled);
		w.member("time_running_ns", row.time_running);
		w.member("added", row.added);
		if (!row.erratum.empty()) {
			w.key("erratum").begin_object();
			w.member("id", row.erratum);
			w.key("compensated");
			if (row.compensated)
				w.value(*row.compensated);
			else
				w.null();
			w.member("note", row.note);
			w.end_object();
		}
		w.end_object();
	}
	w.end_array();
	w.key("metrics").begin_array();
	for (const Metric& m : r.metrics) {
		w.begin_object();
		w.member("name", m.name);
		w.member("value", m.value);
		w.member("unit", m.unit);
		w.member("formula", m.formula);
		w.end_object();
	}
	w.end_array();
	w.key("notes").begin_array();
	for (const std::string& n : r.notes)
		w.value(n);
	w.end_array();
	if (r.amu) {
		w.key("amu");
		write_amu_json(w, *r.amu);
	}
	w.end_object();
	return w.str() + "\n";
}

std::string format_stat_csv(const StatReport& r, std::string_view sep)
{
	std::string out;
	const std::string s{sep};
	const std::string prefix = r.interval_end ? fixed(*r.interval_end, 6) + s : "";
	const auto line = [&](std::initializer_list<std::string> fields) {
		std::string l = prefix;
		bool first = true;
		for (const std::string& f : fields) {
			l += (first ? "" : s) + clean(f, sep);
			first = false;
		}
		out += l + "\n";
	};
	for (const StatRow& row : r.rows) {
		line({"count", fixed(row.value, 0), "", row.name, hex(row.number, 4), fixed(running_pct(row), 2),
		      row.erratum, row.compensated ? "" : row.note, row.modifiers});
		if (row.compensated)
			line({"compensated", fixed(*row.compensated, 0), "", row.name, hex(row.number, 4),
			      fixed(running_pct(row), 2), row.erratum, row.note, row.modifiers});
	}
	for (const Metric& m : r.metrics)
		line({"metric", fixed(m.value, 4), std::string{m.unit}, std::string{m.name}, "", "", "",
		      std::string{m.formula}, ""});
	if (r.amu) {
		const auto amu_lines = [&](const AmuCpuDelta& d, const std::string& cpu) {
			const struct {
				const AmuFigure& f;
				double scale;
				std::string_view unit, name;
			} figs[] = {{d.frequency, 1e-6, "MHz", "frequency"},
				    {d.ipc, 1, "", "ipc"},
				    {d.mem_stall, 100, "%", "mem_stall"},
				    {d.active, 100, "%", "active"}};
			for (const auto& x : figs)
				line({"amu", x.f.ok() ? fixed(x.f.value * x.scale, 4) : "", std::string{x.unit},
				      std::string{x.name}, cpu, "", d.erratum, std::string{to_string(x.f.why)}, ""});
		};
		for (const AmuCpuDelta& d : r.amu->per_cpu)
			amu_lines(d, std::to_string(d.cpu));
		amu_lines(r.amu->total, "all");
	}
	return out;
}

} // namespace amupmu
