// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/affinity.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/core_events.hpp>
#include <amupmu/events.hpp>
#include <amupmu/report/amu_format.hpp>
#include <amupmu/report/json.hpp>
#include <amupmu/report/stat.hpp>

#include <amupmu/text/numtext.hpp>
#include <amupmu/text/columns.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <utility>

namespace amupmu::report {

namespace {

using text::fixed;
using text::pad_left;
using text::pad_right;
using text::clean;

std::string param_text(const Erratum& e, const Parameter& p)
{
	return std::string{e.parameter} + " " + text::general(p.value, 4) +
	       (p.calibrated ? " (calibrated)" : " (default)");
}

// The counts of the rows of one CPU (-1: the sums), for compensate(); the
// index of row among them.
std::vector<EventCount> counts_of(const StatReport& r, const StatRow& row, std::size_t& index)
{
	std::vector<EventCount> counts;
	for (const StatRow& other : r.rows)
		if (other.cpu == row.cpu) {
			if (&other == &row)
				index = counts.size();
			counts.push_back({.number = other.number, .flags = other.flags, .value = other.value});
		}
	return counts;
}

// One row of an erratum's event (every row of it gets its own: with
// "exc_undef:u,exc_undef:k" two, each with the companions counted at its
// own exception levels) from the library's compensation of it; the
// report's note once per erratum.
void show_compensation(StatReport& report, StatRow& row, const Compensation& c, std::uint64_t midr, bool& noted)
{
	const Erratum& e = *c.erratum;
	const auto note = [&](const std::string& text) {
		if (!noted)
			report.notes.push_back(std::string{e.id} + ": " + text);
		noted = true;
	};
	row.erratum = std::string{e.id};
	row.compensated = c.value;
	switch (c.status) {
	case CompensationStatus::verify:
		row.note = "verify: " + std::string{e.core} + " " + revision_string(decode_midr(midr)) +
			   " is after the affected " + affected_range(e) + "; not compensated";
		note(row.note);
		return;
	case CompensationStatus::disabled:
		row.note = "erratum applies; compensation off";
		note(std::string{e.summary} + " -- compensation turned off, raw value shown");
		return;
	case CompensationStatus::needs_companion:
		row.note = "needs " + event_display_name(e.companion, midr) +
			   (row.modifiers.empty() ? "" : ":" + row.modifiers) + " in the group";
		return;
	case CompensationStatus::compensated:
		break;
	}
	if (e.model == ErratumModel::undercount_ec0) {
		row.note = param_text(e, c.parameter) +
			   (c.exc_undef_ec0 ? ", EC=0x00 ground truth " + group_digits(*c.exc_undef_ec0)
					    : ", all counted taken as EC=0x00");
		if (c.cross_check)
			row.note += std::string{"; cross-check "} + (c.cross_check->consistent ? "ok" : "FAILED") +
				    ": " + c.cross_check->note;
	} else {
		row.note = param_text(e, c.parameter) + ", minus min(measured * factor, " +
			   event_display_name(e.companion, midr) + (row.modifiers.empty() ? "" : ":" + row.modifiers) +
			   ")";
	}
	note(std::string{e.summary} + " [" + std::string{e.provenance} + "]");
}

} // namespace

namespace {

// A multiplexed row's count and times
void set_count(StatRow& row, const ScaledCount& c)
{
	row.value = static_cast<double>(c.value);
	row.raw = c.raw;
	row.time_enabled = c.time_enabled;
	row.time_running = c.time_running;
	row.counted = c.counted;
}

} // namespace

void add_counter_rows(StatReport& report, const CounterResult& result, bool per_cpu, const std::vector<bool>& added)
{
	const std::span<const EventSpec> events = result.events();
	const std::span<const unsigned> cpus = result.cpus();
	const bool mux = result.multiplexed();
	report.multiplexed = report.multiplexed || mux;
	for (std::size_t i = 0; i < events.size(); ++i) {
		StatRow row{.name = events[i].name,
			    .number = events[i].number,
			    .flags = events[i].flags,
			    .modifiers = events[i].modifiers,
			    .value = static_cast<double>(result.total(i)),
			    .time_enabled = result.time_enabled(),
			    .time_running = result.time_running(),
			    .multiplexed = mux,
			    .added = i < added.size() && added[i]};
		if (mux)
			set_count(row, result.count(i));
		if (!per_cpu) {
			if (!row.counted)
				report.notes.push_back(row.name + " was never on a counter (multiplexed): not counted");
			report.rows.push_back(row);
			continue;
		}
		for (std::size_t c = 0; c < cpus.size(); ++c) {
			StatRow& r = report.rows.emplace_back(row);
			r.cpu = static_cast<int>(cpus[c]);
			r.value = static_cast<double>(result.value(i, c));
			r.time_running = result.time_running(c);
			if (mux)
				set_count(r, result.count(i, c));
		}
	}
	for (std::size_t c = 0; c < cpus.size(); ++c)
		if (result.offline(c))
			report.notes.push_back("CPU " + std::to_string(cpus[c]) + " was offline: its totals stopped then");
}

void subtract_previous(StatReport& report, std::span<const StatRow> previous)
{
	for (std::size_t i = 0; i < report.rows.size() && i < previous.size(); ++i) {
		StatRow& row = report.rows[i];
		const StatRow& was = previous[i];
		if (!row.multiplexed) {
			row.value -= was.value;
			continue;
		}
		// perf: the deltas of the raw count and of the times, then scaled
		set_count(row, scale_count(row.raw - was.raw, row.time_enabled - was.time_enabled,
					   row.time_running - was.time_running));
	}
}

void add_pmu_state(StatReport& report, PmuMode mode, std::span<const CpuReading> readings)
{
	report.pmu_mode = mode;
	for (const CpuReading& c : readings)
		if (c.evicted() && std::ranges::find(report.evicted_cpus, c.cpu) == report.evicted_cpus.end())
			report.evicted_cpus.push_back(c.cpu);
	std::ranges::sort(report.evicted_cpus);
}

void apply_errata(StatReport& report, std::uint64_t midr, const CompensationOptions& options)
{
	for (const ErratumMatch& match : errata_for(midr, ErratumUnit::pmu)) {
		bool noted = false;
		// every row of the event: "exc_undef:u,exc_undef:k" are two
		for (StatRow& row : report.rows) {
			if (row.number != match.erratum->event)
				continue;
			std::size_t index = 0;
			const std::vector<EventCount> counts = counts_of(report, row, index);
			if (const auto c = compensate(counts, index, midr, options); c && c->erratum == match.erratum)
				show_compensation(report, row, *c, midr, noted);
		}
	}
}

void derive_report_metrics(StatReport& report, std::span<const std::string> only)
{
	for (const std::string& name : only)
		if (!find_metric_def(name)) {
			std::string known;
			for (const MetricDef& d : metric_defs())
				known += (known.empty() ? "" : ", ") + std::string{d.name};
			std::string what = "metric '";
			what.append(name).append("' (amupmu has ").append(known).append(")");
			throw InvalidArgument{what, EINVAL};
		}
	report.metrics.clear();
	// the rows of each CPU (-A) on their own; -1 is the sum
	std::vector<int> cpus;
	for (const StatRow& r : report.rows)
		if (std::ranges::find(cpus, r.cpu) == cpus.end())
			cpus.push_back(r.cpu);
	for (const int cpu : cpus) {
		std::vector<EventCount> counts;
		std::vector<std::size_t> index;
		for (std::size_t i = 0; i < report.rows.size(); ++i) {
			const StatRow& r = report.rows[i];
			// perf derives nothing from a count it has not
			if (r.cpu != cpu || !r.counted)
				continue;
			counts.push_back({r.number, r.flags, r.value});
			index.push_back(i);
		}
		for (Metric& m : derive_metrics(counts)) {
			if (!only.empty() && std::ranges::find(only, m.name) == only.end())
				continue;
			m.source = index[m.source];
			report.metrics.push_back(m);
		}
	}
	// in the order of the rows whose lines carry them
	std::ranges::stable_sort(report.metrics, {}, &Metric::source);
}

void derive_topdown(StatReport& report, const TopdownRequest& request)
{
	if (!request.set || request.level == 0)
		return;
	std::vector<int> cpus;
	for (const StatRow& r : report.rows)
		if (std::ranges::find(cpus, r.cpu) == cpus.end())
			cpus.push_back(r.cpu);
	std::vector<std::string> noted;
	for (const int cpu : cpus) {
		// the row of an event by its Arm ARM name: the first counted one
		// without modifiers
		const auto row_of = [&](std::string_view name) -> std::optional<std::size_t> {
			const std::optional<std::uint16_t> n = event_number(name, request.midr);
			if (!n)
				return std::nullopt;
			for (std::size_t i = 0; i < report.rows.size(); ++i) {
				const StatRow& r = report.rows[i];
				if (r.cpu == cpu && r.counted && r.number == *n && (r.flags & ~evflag::raw) == 0)
					return i;
			}
			return std::nullopt;
		};
		const auto count = [&](std::string_view name) -> std::optional<double> {
			const std::optional<std::size_t> i = row_of(name);
			return i ? std::optional<double>{report.rows[*i].value} : std::nullopt;
		};
		for (const MetricValue& v : evaluate_topdown(*request.set, request.level, count, request.slots)) {
			const std::string_view name = v.metric->name;
			if (!v.value) {
				if (std::ranges::find(noted, name) != noted.end())
					continue;
				noted.emplace_back(name);
				// the plan said why already (amupmu stat)
				const std::string said = "topdown: " + std::string{name} + " not computed";
				if (std::ranges::any_of(report.notes, [&](const std::string& n) { return n.starts_with(said); }))
					continue;
				std::string why = v.reason;
				for (const std::string& m : v.missing)
					why.append(why.empty() ? "missing " : ", ").append(m);
				report.notes.push_back("topdown: " + std::string{name} + " not computed: " + why);
				continue;
			}
			const std::vector<std::string> events = metric_events(*request.set, *v.metric);
			const std::optional<std::size_t> at = events.empty() ? std::nullopt : row_of(events.front());
			report.metrics.push_back({name, v.metric->expr, "%", *v.value * 100, at.value_or(0)});
		}
	}
	std::ranges::stable_sort(report.metrics, {}, &Metric::source);
}

void derive_topdown_groups(StatReport& report, const TopdownRequest& request, std::span<const TopdownGroup> groups,
			   std::span<const std::size_t> begin)
{
	if (!request.set)
		return;
	if (begin.size() != groups.size() + 1)
		throw InvalidArgument{"derive_topdown_groups: " + std::to_string(begin.size()) + " run beginnings for " +
					      std::to_string(groups.size()) + " groups (groups + 1 needed)",
				      EINVAL};
	const MetricSet& set = *request.set;
	StatReport& all = report;
	std::vector<int> cpus;
	for (const StatRow& r : all.rows)
		if (std::ranges::find(cpus, r.cpu) == cpus.end())
			cpus.push_back(r.cpu);
	std::vector<std::string> noted;
	for (const int cpu : cpus) {
		// the row of an event in run g: the first counted one of that CPU
		// without modifiers
		const auto row_of = [&](std::size_t g, std::string_view name) -> std::optional<std::size_t> {
			const std::optional<std::uint16_t> n = event_number(name, request.midr);
			for (std::size_t i = begin[g]; n && i < begin[g + 1] && i < all.rows.size(); ++i) {
				const StatRow& r = all.rows[i];
				if (r.cpu == cpu && r.counted && r.number == *n && (r.flags & ~evflag::raw) == 0)
					return i;
			}
			return std::nullopt;
		};
		std::vector<TopdownGroupCounts> counts;
		for (std::size_t g = 0; g < groups.size(); ++g) {
			TopdownGroupCounts c;
			c.count = [&, g](std::string_view name) -> std::optional<double> {
				const std::optional<std::size_t> i = row_of(g, name);
				return i ? std::optional<double>{all.rows[*i].value} : std::nullopt;
			};
			// the run's times: its PMU rows' (the AMU rows have none)
			for (std::size_t i = begin[g]; i < begin[g + 1] && i < all.rows.size(); ++i) {
				const StatRow& r = all.rows[i];
				if (r.cpu != cpu || !r.time_enabled)
					continue;
				c.time_enabled = r.time_enabled;
				c.time_running = r.time_running;
				if (cpu == -1 && !r.multiplexed) {
					// a group that fits its counters counts whenever its
					// CPUs are online: the sums are the counts, not
					// estimates, and time_running is the smallest over
					// the CPUs (0: one was offline all the run). The run
					// counted if one CPU ran it (a count, or time).
					const bool ran = std::ranges::any_of(
						all.rows.begin() + static_cast<std::ptrdiff_t>(begin[g]),
						all.rows.begin() + static_cast<std::ptrdiff_t>(std::min(begin[g + 1], all.rows.size())),
						[&](const StatRow& x) {
							return x.cpu == cpu && x.time_enabled && x.counted &&
							       (x.time_running || x.value != 0);
						});
					c.time_running = ran ? r.time_enabled : 0;
				}
				break;
			}
			counts.push_back(std::move(c));
		}
		for (const MetricValue& v : evaluate_topdown_groups(set, groups, counts, request.slots)) {
			const std::string name{v.metric->name};
			if (v.value && v.group) {
				const std::vector<std::string> events = metric_events(set, *v.metric);
				const std::optional<std::size_t> at =
					events.empty() ? std::nullopt : row_of(*v.group, events.front());
				all.metrics.push_back(
					{v.metric->name, v.metric->expr, "%", *v.value * 100, at.value_or(begin[*v.group])});
				continue;
			}
			if (std::ranges::find(noted, name) != noted.end())
				continue;
			noted.push_back(name);
			std::string why = v.reason;
			for (const std::string& m : v.missing)
				why.append(why.empty() ? "missing " : ", ").append(m);
			std::string note = "topdown: " + name;
			note.append(" not computed: ").append(why);
			all.notes.push_back(std::move(note));
		}
	}
	std::ranges::stable_sort(all.metrics, {}, &Metric::source);
}

void add_amu_rows(StatReport& report, std::span<const std::uint16_t> events, const AmuReading& first,
		  const AmuReading& last, const Info& info, std::span<const unsigned> cpus, bool per_cpu)
{
	for (const std::uint16_t ev : events) {
		std::string name{amu_event_name(ev)};
		std::ranges::transform(name, name.begin(),
				       [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
		StatRow sum{.name = "amu/" + name + "/", .number = ev};
		for (const unsigned c : cpus) {
			const AmuCpuReading* a = first.find(c);
			const AmuCpuReading* b = last.find(c);
			StatRow row = sum;
			row.cpu = static_cast<int>(c);
			row.counted = false;
			if (a && b && c < info.cpus.size()) {
				// (value_or: gcc 12 sees an optional's value as maybe
				// uninitialized behind its has_value())
				const std::uint64_t x = a->counter(ev, info.cpus[c]).value_or(0);
				const std::uint64_t y = b->counter(ev, info.cpus[c]).value_or(0);
				row.counted = a->counter(ev, info.cpus[c]).has_value() &&
					      b->counter(ev, info.cpus[c]).has_value() && y >= x;
				row.value = row.counted ? static_cast<double>(y - x) : 0;
			}
			sum.value += row.value;
			sum.counted = sum.counted && row.counted;
			if (per_cpu)
				report.rows.push_back(row);
		}
		if (!per_cpu)
			report.rows.push_back(sum);
	}
}

void RunStats::add(double x) noexcept
{
	++n_;
	const double delta = x - mean_;
	mean_ += delta / n_;
	m2_ += delta * (x - mean_);
}

double RunStats::stddev_mean() const noexcept
{
	if (n_ < 2)
		return 0;
	return std::sqrt(m2_ / (n_ - 1) / n_);
}

double RunStats::rel_stddev_pct() const noexcept
{
	return mean_ != 0 ? 100.0 * stddev_mean() / mean_ : 0;
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

namespace {

// perf's widths (stat-display.c): COUNTS_LEN, unit_width, EVNAME_LEN,
// METRIC_LEN, metric_only_len
constexpr std::size_t counts_len = 18;
constexpr std::size_t unit_len = 4;
constexpr std::size_t evname_len = 32;
constexpr std::size_t metric_len = 38;
constexpr std::size_t metric_only_len = 20;
constexpr std::string_view not_counted = "<not counted>";

// A metric as perf prints it: the value through its printf format, and
// the unit (a named metric's name, after "%  " when it is a percentage).
struct Shown {
	double value = 0;
	std::string text{};	// "    0.50"
	std::string unit{};	// "ipc", "%  l1d_hit_rate"
};

// One line of counts: a row, or an AMU figure.
struct Line {
	int cpu = -1;
	std::optional<double> value{};	// nullopt: <not counted>
	int decimals = 0;
	std::string unit{};
	std::string event{};
	std::uint64_t run = 0, ena = 0;
	std::optional<double> noise{};
	std::vector<Shown> metrics{};
};

Shown shown(const Metric& m)
{
	// stat-shadow.c's generic_metric(): "%8.1f" and "%  name" with a unit,
	// "%8.2f" and the name without
	if (m.unit == "%")
		return {m.value, pad_left(fixed(m.value, 1), 8), "%  " + std::string{m.name}};
	return {m.value, pad_left(fixed(m.value, 2), 8), std::string{m.name}};
}

std::vector<Line> lines_of(const StatReport& r)
{
	std::vector<Line> out;
	for (std::size_t i = 0; i < r.rows.size(); ++i) {
		const StatRow& row = r.rows[i];
		Line l{.cpu = row.cpu,
		       .value = row.counted ? std::optional<double>{row.value} : std::nullopt,
		       .event = row.name,
		       .run = row.time_running,
		       .ena = row.time_enabled,
		       .noise = row.noise_pct};
		for (const Metric& m : r.metrics)
			if (m.source == i)
				l.metrics.push_back(shown(m));
		if (row.compensated)
			l.metrics.push_back({*row.compensated, pad_left(fixed(*row.compensated, 0), 8),
					     "compensated (" + row.erratum + ")"});
		out.push_back(std::move(l));
	}
	if (r.amu) {
		const AmuReport& a = *r.amu;
		// over the same interval as the counts
		const auto ns = static_cast<std::uint64_t>(std::llround(r.seconds * 1e9));
		const auto figures = [&](const AmuCpuDelta& d, int cpu) {
			const struct {
				const AmuFigure& f;
				double scale;
				int decimals;
				std::string_view unit, name;
			} figs[] = {{d.frequency, 1e-6, 2, "MHz", "amu/frequency/"},
				    {d.ipc, 1, 2, "", "amu/ipc/"},
				    {d.mem_stall, 100, 2, "%", "amu/mem_stall/"},
				    {d.active, 100, 2, "%", "amu/active/"}};
			for (const auto& x : figs)
				out.push_back({.cpu = cpu,
					       .value = x.f.ok() ? std::optional<double>{x.f.value * x.scale}
								 : std::nullopt,
					       .decimals = x.decimals,
					       .unit = std::string{x.unit},
					       .event = std::string{x.name},
					       .run = ns,
					       .ena = ns});
		};
		const bool per_cpu = std::ranges::any_of(r.rows, [](const StatRow& row) { return row.cpu >= 0; });
		if (per_cpu)
			for (const AmuCpuDelta& d : a.per_cpu)
				figures(d, static_cast<int>(d.cpu));
		else
			figures(a.total, -1);
	}
	// -A: perf prints each event on every CPU, event by event
	std::vector<std::pair<std::size_t, Line>> keyed;
	for (Line& l : out) {
		const auto first = std::ranges::find_if(keyed, [&](const auto& k) { return k.second.event == l.event; });
		keyed.emplace_back(first == keyed.end() ? keyed.size() : first->first, std::move(l));
	}
	std::ranges::stable_sort(keyed, {}, &std::pair<std::size_t, Line>::first);
	out.clear();
	for (auto& k : keyed)
		out.push_back(std::move(k.second));
	return out;
}

double running_pct(const Line& l)
{
	return l.ena && l.run != l.ena ? 100.0 * static_cast<double>(l.run) / static_cast<double>(l.ena) : 100.0;
}

std::string value_text(const Line& l, bool grouped)
{
	if (!l.value)
		return std::string{not_counted};
	if (l.decimals == 0)
		return grouped ? group_digits(*l.value) : fixed(*l.value, 0);
	std::string s = fixed(*l.value, l.decimals);
	if (!grouped)
		return s;
	const std::size_t dot = s.find('.');
	return group_digits(std::trunc(*l.value)) + s.substr(dot);
}

// perf's print_metric_csv(): the formatted value's digits and '.' only
std::string csv_metric_value(const Shown& m)
{
	std::string v;
	for (const char c : m.text)
		if ((c >= '0' && c <= '9') || c == '.' || (c == '-' && v.empty()))
			v += c;
	return v;
}

std::string trim_right(std::string s)
{
	while (!s.empty() && s.back() == ' ')
		s.pop_back();
	return s;
}

std::string target_text(const StatReport& r)
{
	return r.system_wide ? "system wide" : "CPU(s) " + r.cpus;
}

std::string command_text(const std::vector<std::string>& command)
{
	std::string cmd;
	for (const std::string& a : command)
		cmd += (cmd.empty() ? "" : " ") + a;
	return cmd;
}

// amupmu's own lines, where perf has none: comments
std::vector<std::string> comments(const StatReport& r)
{
	std::vector<std::string> out;
	std::string where = "counted on CPU" + std::string{r.cpus.find_first_of(",-") == std::string::npos ? " " : "s "} +
			    r.cpus;
	if (!r.cpu_description.empty())
		where += " (" + r.cpu_description + ")";
	out.push_back(where + ": everything that runs there, as perf stat -a counts");
	if (r.pmu_mode == PmuMode::shared && r.multiplexed)
		out.push_back("pmu: shared mode: arm_pmu owns the PMU, counted through perf core (multiplexed: a count "
			      "that ran part of the time is perf's estimate, count x time enabled / time running, "
			      "with its running share)");
	else if (r.pmu_mode == PmuMode::shared)
		out.push_back("pmu: shared mode: arm_pmu owns the PMU, counted through perf core (pinned counters)");
	if (!r.evicted_cpus.empty())
		out.push_back("warning: perf core took counters away on CPU" +
			      std::string{r.evicted_cpus.size() == 1 ? " " : "s "} + format_cpu_list(r.evicted_cpus) +
			      " (evicted): counts short");
	if (!r.command.empty()) {
		std::string c = "command '" + command_text(r.command) + "'";
		if (r.exit_status && *r.exit_status != 0)
			c += ": exit status " + std::to_string(*r.exit_status);
		out.push_back(c);
	}
	std::vector<std::string> done;
	for (const StatRow& row : r.rows) {
		if (row.erratum.empty() || std::ranges::find(done, row.name) != done.end())
			continue;
		done.push_back(row.name);
		if (row.added)
			out.push_back(row.name + ": added for " + row.erratum);
		else if (!row.note.empty())
			out.push_back(row.erratum + ": " + row.name + ": " + row.note);
	}
	for (const std::string& n : r.notes)
		out.push_back("note: " + n);
	if (r.amu) {
		out.push_back("amu: " + (r.amu->mock ? std::string{"MOCK AMU MODEL (test build: the numbers come from "
								    "the mock register model, not from hardware)"}
						     : std::string{amu_backend(*r.amu)}) +
			      "; frequency = dCPU_CYCLES / dCNT_CYCLES x timer, ipc = dINST_RETIRED / dCPU_CYCLES, "
			      "mem_stall = dSTALL_BACKEND_MEM / dCPU_CYCLES, active = dCNT_CYCLES / dtime");
		for (const std::string& f : amu_flags(*r.amu))
			out.push_back("amu flag: " + f);
		for (const std::string& n : amu_notes(*r.amu))
			out.push_back("amu note: " + n);
	}
	return out;
}

std::string cpu_prefix_text(int cpu)
{
	// "CPU%-*d " with aggr_header_lens[AGGR_NONE] - 3
	return cpu < 0 ? "" : pad_right("CPU" + std::to_string(cpu), 6) + " ";
}

std::string interval_text(const StatReport& r)
{
	// "%6lu.%09lu "
	return r.interval_end ? pad_left(fixed(*r.interval_end, 9), 16) + " " : "";
}

bool per_cpu(const std::vector<Line>& lines)
{
	return std::ranges::any_of(lines, [](const Line& l) { return l.cpu >= 0; });
}

std::vector<int> cpus_of(const std::vector<Line>& lines)
{
	std::vector<int> cpus;
	for (const Line& l : lines)
		if (std::ranges::find(cpus, l.cpu) == cpus.end())
			cpus.push_back(l.cpu);
	return cpus;
}

// --metric-only: the metric units of the first CPU's lines, in order
std::vector<std::string> metric_units(const std::vector<Line>& lines)
{
	std::vector<std::string> units;
	const int first = lines.empty() ? -1 : lines.front().cpu;
	for (const Line& l : lines)
		if (l.cpu == first)
			for (const Shown& m : l.metrics)
				units.push_back(m.unit);
	return units;
}

std::vector<const Shown*> metrics_of_cpu(const std::vector<Line>& lines, int cpu)
{
	std::vector<const Shown*> out;
	for (const Line& l : lines)
		if (l.cpu == cpu)
			for (const Shown& m : l.metrics)
				out.push_back(&m);
	return out;
}

std::string text_metric_only(const StatReport& r, const std::vector<Line>& lines)
{
	std::string out;
	const std::vector<std::string> units = metric_units(lines);
	const auto width = [](const std::string& unit) { return std::max(metric_only_len, unit.size() + 1); };
	const std::string prefix = interval_text(r);
	if (!r.interval_end || r.interval_header) {
		std::string head = r.interval_end ? "#" + pad_left("time", 15) + " " : " ";
		if (per_cpu(lines))
			head += pad_right("", 7);
		for (const std::string& u : units)
			head += pad_left(u, width(u)) + " ";
		out += trim_right(head) + "\n";
	}
	for (const int cpu : cpus_of(lines)) {
		std::string line = prefix + (r.interval_end ? "" : " ") + cpu_prefix_text(cpu);
		const std::vector<const Shown*> ms = metrics_of_cpu(lines, cpu);
		for (std::size_t i = 0; i < units.size(); ++i) {
			const std::string v = i < ms.size() ? ms[i]->text : "";
			line += pad_left(v.substr(v.find_first_not_of(' ') == std::string::npos ? v.size()
												   : v.find_first_not_of(' ')),
					 width(units[i])) +
				" ";
		}
		out += trim_right(line) + "\n";
	}
	return out;
}

} // namespace

std::string format_stat_text(const StatReport& r, const StatFormat& format)
{
	std::string out;
	const std::vector<Line> lines = lines_of(r);
	const std::string prefix = interval_text(r);
	if (!r.interval_end) {
		out += "\n Performance counter stats for '" + target_text(r) + "'";
		if (r.runs > 1)
			out += " (" + std::to_string(r.runs) + " runs)";
		out += ":\n\n";
	} else if (r.interval_header && !format.metric_only) {
		// print_header_interval_std()
		std::string head = "#" + pad_left("time", 15);
		if (per_cpu(lines))
			head += " " + pad_right("cpu", 6);
		out += head + " " + pad_left("counts", counts_len) + " " + pad_left("unit", unit_len) + " events\n";
	}
	if (format.metric_only) {
		out += text_metric_only(r, lines);
	} else {
		for (const Line& l : lines) {
			std::string line = prefix + cpu_prefix_text(l.cpu) + pad_left(value_text(l, true), counts_len) +
					   " " + pad_right(l.unit, unit_len) + " " + pad_right(l.event, evname_len);
			const std::string cont = prefix + cpu_prefix_text(l.cpu) + std::string(49, ' ');
			if (l.metrics.empty())
				line += std::string(metric_len, ' ');
			for (std::size_t i = 0; i < l.metrics.size(); ++i) {
				const Shown& m = l.metrics[i];
				const std::string head = " # " + m.text;
				const std::size_t w = metric_len > head.size() + 1 ? metric_len - head.size() - 1 : 0;
				if (i) {
					line = trim_right(line);
					line.append("\n").append(cont);
				}
				line += head + " " + pad_right(m.unit, w);
			}
			if (l.noise && *l.noise != 0)
				line += "  ( +-" + pad_left(fixed(*l.noise, 2), 6) + "% )";
			if (l.run != l.ena && l.ena)
				line += "  (" + fixed(running_pct(l), 2) + "%)";
			out += trim_right(line) + "\n";
		}
	}
	if (!r.interval_end) {
		out += "\n";
		if (r.runs > 1) {
			const double sd = r.seconds_stddev;
			// print_footer(): two digits more than the deviation's first
			const int precision = sd <= 0 ? 9 : (sd > 1 ? 0 : static_cast<int>(std::lround(std::ceil(-std::log10(sd))))) + 2;
			out += " " + pad_left(fixed(r.seconds, precision), 17) + " +- " + fixed(sd, precision) +
			       " seconds time elapsed";
			if (r.seconds != 0 && sd != 0)
				out += "  ( +-" + pad_left(fixed(100.0 * sd / r.seconds, 2), 6) + "% )";
			out += "\n\n";
		} else {
			out += " " + pad_left(fixed(r.seconds, 9), 17) + " seconds time elapsed\n\n";
		}
		for (const std::string& c : comments(r))
			out += "# " + c + "\n";
	}
	return out;
}

namespace {

std::string json_line_start(const StatReport& r, int cpu)
{
	std::string s = "{";
	const auto add = [&](const std::string& member) { s += (s.size() > 1 ? ", " : "") + member; };
	if (r.interval_end)
		add("\"interval\" : " + fixed(*r.interval_end, 9));
	if (cpu >= 0)
		add("\"cpu\" : \"" + std::to_string(cpu) + "\"");
	return s;
}

} // namespace

std::string format_stat_json(const StatReport& r, const StatFormat& format)
{
	std::string out;
	const std::vector<Line> lines = lines_of(r);
	if (format.metric_only) {
		// print_metric_only_json(): {"unit" : "value", ...} per CPU
		for (const int cpu : cpus_of(lines)) {
			std::string s = json_line_start(r, cpu);
			bool any = false;
			for (const Shown* m : metrics_of_cpu(lines, cpu)) {
				s += (s.size() > 1 ? ", " : "") + json_quote(m->unit) + " : \"" + csv_metric_value(*m) + "\"";
				any = true;
			}
			if (!any)
				s += std::string{s.size() > 1 ? ", " : ""} + "\"metric-value\" : \"none\"";
			out += s + "}\n";
		}
		return out;
	}
	for (const Line& l : lines) {
		std::string s = json_line_start(r, l.cpu);
		const auto add = [&](const std::string& member) { s += (s.size() > 1 ? ", " : "") + member; };
		add("\"counter-value\" : \"" + (l.value ? fixed(*l.value, 6) : std::string{not_counted}) + "\"");
		add("\"unit\" : " + json_quote(l.unit));
		add("\"event\" : " + json_quote(l.event));
		if (l.noise)
			add("\"variance\" : " + fixed(*l.noise, 2));
		add("\"event-runtime\" : " + std::to_string(l.run) + ", \"pcnt-running\" : " + fixed(running_pct(l), 2));
		for (std::size_t i = 0; i < l.metrics.size(); ++i) {
			if (i) {
				out += s + "}\n";
				s = json_line_start(r, l.cpu);
			}
			add("\"metric-value\" : \"" + fixed(l.metrics[i].value, 6) + "\", \"metric-unit\" : " +
			    json_quote(l.metrics[i].unit));
		}
		out += s + "}\n";
	}
	return out;
}

std::string format_stat_csv(const StatReport& r, std::string_view sep, const StatFormat& format)
{
	std::string out;
	const std::string s{sep};
	const std::vector<Line> lines = lines_of(r);
	std::string prefix = r.interval_end ? fixed(*r.interval_end, 9) + s : "";
	if (r.summary && !r.interval_end)
		prefix = "summary" + s;
	const auto cpu_field = [&](int cpu) { return cpu < 0 ? std::string{} : "CPU" + std::to_string(cpu) + s; };
	const auto field = [&](const std::string& f) { return clean(f, sep); };
	if (format.metric_only) {
		// print_metric_headers_csv(), then one line of values per CPU
		if (!r.interval_end || r.interval_header) {
			std::string head = r.interval_end ? "time" + s : "";
			if (per_cpu(lines))
				head += "cpu" + s;
			for (const std::string& u : metric_units(lines))
				head += field(u) + s;
			out += head + "\n";
		}
		for (const int cpu : cpus_of(lines)) {
			std::string line = prefix + cpu_field(cpu);
			for (const Shown* m : metrics_of_cpu(lines, cpu))
				line += csv_metric_value(*m) + s;
			out += line + "\n";
		}
	} else {
		for (const Line& l : lines) {
			std::string line = prefix + cpu_field(l.cpu);
			line.append(l.value ? value_text(l, false) : std::string{not_counted})
				.append(s)
				.append(field(l.unit))
				.append(s)
				.append(field(l.event));
			if (l.noise)
				line += s + fixed(*l.noise, 2) + "%";
			line.append(s).append(std::to_string(l.run)).append(s).append(fixed(running_pct(l), 2));
			if (l.metrics.empty())
				line += s + s;
			for (std::size_t i = 0; i < l.metrics.size(); ++i) {
				if (i) {
					// new_line_csv(): the columns before the metric empty
					out += line + "\n";
					line = prefix + cpu_field(l.cpu);
					for (int k = 0; k < (l.noise ? 5 : 4); ++k)
						line += s;
				}
				line.append(s).append(csv_metric_value(l.metrics[i])).append(s).append(field(l.metrics[i].unit));
			}
			out += line + "\n";
		}
	}
	if (!r.interval_end)
		for (const std::string& c : comments(r))
			out += "# " + c + "\n";
	return out;
}

} // namespace amupmu::report
