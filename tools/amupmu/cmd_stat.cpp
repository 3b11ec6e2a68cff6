// SPDX-License-Identifier: GPL-2.0
//
// amupmu stat: count events while a command runs; perf-stat-like output.
#include "amu_common.hpp"
#include "child.hpp"
#include "cli.hpp"
#include "count_options.hpp"
#include "signal_wait.hpp"

#include <amupmu/affinity.hpp>
#include <amupmu/compensation.hpp>
#include <amupmu/core_events.hpp>
#include <amupmu/counters.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/device.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/events.hpp>
#include <amupmu/report/stat.hpp>
#include <amupmu/topdown.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <csignal>
#include <iostream>
#include <optional>

namespace amupmu::cli {

using namespace amupmu::report;

namespace {

constexpr std::string_view usage = R"(Usage: amupmu stat [-a] [-A] [-e EVENTS] [-M METRICS] [--topdown[=LEVEL]] [--metric-only] [-C CPUS]
                   [-I MS [--interval-count N]] [-r N] [--json | -x SEP] [-o FILE]
                   [--multiplex] [--amu] [--no-compensate] [--ec0-count N]
                   [--calibration FILE] [--device PATH] [--] [COMMAND [ARGS...]]

Count PMU events on whole CPUs, as perf stat -a does: every online CPU, or
those of CPUS (the counters are per CPU, so everything running there is
counted), while COMMAND runs, or without a command until Ctrl-C (SIGINT
or SIGTERM). Then print the totals, derived metrics (IPC, L1D hit rate,
branch prediction accuracy, backend-stall share) and erratum
annotations, in perf stat's formats. Exits with the command's status
(128 + signal when it was killed); without a command amupmu ends by the
signal that stopped it, as perf stat does, after the report.

Where the kernel's arm_pmu owns the PMU (a stock devicetree), amupmu
counts through the kernel's perf core (shared mode, `amupmu info` says
which mode is in force): pinned counters, exact as in exclusive mode; a
comment line says so, and a warning line names the CPUs where perf core
took a counter away (their counts are short). With --multiplex the events
may multiplex there instead, as perf's do: more events than counters are
accepted, and each count is perf's estimate, scaled by time enabled /
time running, with its running share as perf stat prints it.

Options:
  -a, --all-cpus    count every online CPU: what amupmu always does without
                    -C (accepted as perf's; the header says 'system wide')
  -e EVENTS         comma-separated events, repeatable: perf names
                    (cpu_cycles, inst_retired, l1d_cache_refill, exc_undef,
                    imp_stall_backend_mcq on Cortex-X2, ...), perf's generic
                    names as Linux maps them on PMUv3 (cycles, instructions,
                    branches, branch-misses, cache-references, cache-misses,
                    stalled-cycles-frontend/-backend, bus-cycles,
                    L1-dcache-loads, ...), raw r<hex> or amupmu/event=0x11/;
                    perf's modifiers :u (user) :k (kernel) :h (hypervisor)
                    :G (guest) :H (host), combinable (:uk); perf's groups
                    {a,b}:u (amupmu counts every event together anyway: a
                    group changes nothing but its modifiers). Default:
                    cpu_cycles,inst_retired,br_retired,br_pred,br_mis_pred,
                    l1d_cache,l1d_cache_refill,stall_backend (those the
                    CPU implements)
  -M METRICS        comma-separated metrics, repeatable: ipc, l1d_hit_rate,
                    branch_pred_accuracy, backend_stall_share,
                    frontend_stall_share; their events are added, only they
                    are printed (without -e: only their events are counted);
                    perf's metric groups TopdownL1, TopdownL2: --topdown=1, 2
  --topdown[=LEVEL] Arm's top-down analysis, level 1 (default) or 2: the
                    share of the slots (PMMIR_EL1.SLOTS per cycle) that were
                    frontend bound, backend bound, bad speculation and
                    retiring, from STALL_SLOT_FRONTEND, STALL_SLOT_BACKEND,
                    STALL_SLOT, OP_SPEC, OP_RETIRED, CPU_CYCLES (and
                    BR_MIS_PRED on the Neoverse N2, V1, V2, whose telemetry
                    specifications also define level 2); the formulas and
                    their source are in 'amupmu list TopdownL'. Each metric
                    is counted in one group; when the events do not fit the
                    counters (level 2), the COMMAND runs once per group and
                    each metric comes from its group's run. Where the AMU
                    counts CPU_CYCLES (group 0) on every CPU it is read
                    there, not on a PMU counter (a comment line says which
                    counts came from where). A metric whose events a CPU lacks (by PMCEID;
                    QEMU has no STALL_SLOT events) or whose SLOTS read 0 is
                    not printed: a comment line names what is missing
  --metric-only     print the metrics only, one line (per CPU with -A)
  -A, --no-aggr, --per-cpu
                    each CPU on its own lines, not summed
  -C CPUS           CPU list, e.g. 0 or 0-3,6
  -I MS             also print the counts of every MS milliseconds
  --interval-count N
                    with -I: N intervals, then the totals (a COMMAND still
                    running is counted to its end)
  -r N, --repeat N  run COMMAND N times and print the means, with the
                    relative standard deviation of each mean ( +- x% )
  --json            perf stat's JSON: one object per counter and line
  -x SEP            perf stat's separated values: value, unit, event, run
                    time (ns), running %, metric value, metric unit
                    (amupmu's notes in lines starting with '#')
  -o FILE           write the counts to FILE instead of stderr
  --multiplex       shared mode: let perf core rotate the events over its
                    counters instead of refusing a group that does not fit
                    (pinned, the default); each line is then perf's scaled
                    estimate with its running share: (66.67%) after the
                    count in the table, the run time (ns) and running %
                    columns of -x, event-runtime and pcnt-running in
                    --json, and <not counted> for an event that never ran.
                    Refused in exclusive mode (amupmu owns the PMU: pinned
                    counters)
  --amu             also read the Activity Monitors of the same CPUs over
                    the same run (and each -I interval): MHz, IPC, memory
                    stall and active share per CPU (see 'amupmu amu')
  --no-compensate   report raw values only (errata are still named)
  --ec0-count N     software count of EC=0x00 exceptions in the run, for
                    the EXC_UNDEF model (default: every counted one)
  --calibration F   calibration file (default $AMUPMU_CALIBRATION or
                    /var/lib/amupmu/calibration)
  --device PATH     device node (default /dev/amupmu)
  -h, --help        show this help
)";

constexpr std::string_view default_events =
	"cpu_cycles,inst_retired,br_retired,br_pred,br_mis_pred,l1d_cache,l1d_cache_refill,stall_backend";

struct Options : CountOptions {
	std::vector<std::string> events;
	std::vector<std::string> metrics;	///< -M
	bool metric_only = false;
	bool per_cpu = false;			///< -A
	unsigned interval_count = 0;		///< 0: until the end
	unsigned repeat = 1;			///< -r
	bool compensate = true;
	bool amu = false;
	bool multiplex = false;
	unsigned topdown = 0;			///< --topdown level; 0: none
	std::optional<double> ec0;
	std::optional<std::string> calibration;
};

// -M a,b: names metric_defs() knows and perf's top-down groups
// (TopdownL1, TopdownL2), checked before anything is opened
void split_metrics(Options& o, std::string_view list)
{
	std::vector<std::string>& out = o.metrics;
	for (std::size_t pos = 0; pos <= list.size();) {
		const std::size_t comma = std::min(list.find(',', pos), list.size());
		const std::string_view name = list.substr(pos, comma - pos);
		if (const std::optional<unsigned> level = topdown_group_level(name)) {
			o.topdown = std::max(o.topdown, *level);
			pos = comma + 1;
			continue;
		}
		if (!find_metric_def(name)) {
			std::string known;
			for (const MetricDef& d : metric_defs())
				known += (known.empty() ? "" : ", ") + std::string{d.name};
			throw UsageError{"unknown metric '" + std::string{name} + "' (amupmu has " + known +
					 "; the groups TopdownL1, TopdownL2)"};
		}
		out.emplace_back(name);
		pos = comma + 1;
	}
}

unsigned repeat_arg(std::string_view opt, std::string_view v)
{
	const auto n = number_arg<unsigned>(opt, v);
	if (n == 0 || n > 1000000)
		throw UsageError{"option '" + std::string{opt} + "' needs a count from 1 to 1000000"};
	return n;
}

Options parse(Args args)
{
	Options o;
	std::size_t i = 0;
	bool ended = false;
	for (; i < args.size(); ++i) {
		const std::string_view a = args[i];
		if (end_of_options(args, i)) {
			ended = true;
			break;
		}
		if (a == "-a" || a == "--all-cpus")
			continue;	// what amupmu always counts (perf stat -a)
		if (auto v = option_value(args, i, "-e"))
			o.events.emplace_back(*v);
		else if (auto v = option_value(args, i, "--event"))
			o.events.emplace_back(*v);
		else if (auto v = option_value(args, i, "-M"))
			split_metrics(o, *v);
		else if (auto v = option_value(args, i, "--metrics"))
			split_metrics(o, *v);
		else if (a == "--topdown")
			o.topdown = std::max(o.topdown, 1u);
		else if (a.starts_with("--topdown=")) {
			const auto level = number_arg<unsigned>("--topdown", a.substr(10));
			if (level < 1 || level > 2)
				throw UsageError{"--topdown=LEVEL: level 1 or 2"};
			o.topdown = std::max(o.topdown, level);
		}
		else if (a == "--metric-only")
			o.metric_only = true;
		else if (a == "-A" || a == "--no-aggr" || a == "--per-cpu")
			o.per_cpu = true;
		else if (auto v = option_value(args, i, "--interval-count")) {
			o.interval_count = number_arg<unsigned>("--interval-count", *v);
			if (o.interval_count == 0)
				throw UsageError{"--interval-count needs at least 1"};
		} else if (auto v = option_value(args, i, "-r"))
			o.repeat = repeat_arg("-r", *v);
		else if (auto v = option_value(args, i, "--repeat"))
			o.repeat = repeat_arg("--repeat", *v);
		else if (count_option(args, i, o))
			continue;
		else if (a == "--no-compensate")
			o.compensate = false;
		else if (a == "--amu")
			o.amu = true;
		else if (a == "--multiplex")
			o.multiplex = true;
		else if (auto v = option_value(args, i, "--ec0-count"))
			o.ec0 = static_cast<double>(number_arg<unsigned long long>("--ec0-count", *v));
		else if (auto v = option_value(args, i, "--calibration"))
			o.calibration = std::string{*v};
		else
			throw UsageError{"unknown argument '" + std::string{a} + "'"};
	}
	end_count_options(args, i, ended, o);	// no command: until Ctrl-C
	if (o.interval_count && !o.interval_ms)
		throw UsageError{"--interval-count needs -I"};
	if (o.repeat > 1 && o.command.empty())
		throw UsageError{"-r needs a COMMAND to repeat"};
	if (o.repeat > 1 && o.interval_ms)
		throw UsageError{"-r and -I exclude each other"};
	if (o.repeat > 1 && o.amu)
		throw UsageError{"-r and --amu exclude each other"};
	if (o.topdown && o.multiplex)
		throw UsageError{"--topdown counts each metric's events together in one group: not with --multiplex"};
	if (o.metric_only && o.amu)
		throw UsageError{"--metric-only and --amu exclude each other (the AMU figures are counts)"};
	return o;
}

struct Plan {
	std::vector<EventSpec> events;
	std::vector<bool> added;
	std::vector<unsigned> cpus;
	bool system_wide = true;	///< no -C: every online CPU
	std::uint64_t midr = 0;
	std::vector<std::string> notes;
	PmuMode pmu_mode = PmuMode::exclusive;
	TopdownRequest topdown{};
	/// events the AMU counts instead of the PMU (--topdown)
	std::vector<std::uint16_t> amu_events;
	/// --topdown whose events do not fit the PMU's counters: the groups
	/// of plan_topdown_groups() and, for each, the plan of its own run of
	/// the command (its events, the AMU's; no top-down of its own)
	std::vector<TopdownGroup> topdown_groups;
	std::vector<Plan> group_plans;
};

std::string lowercase(std::string_view s)
{
	std::string out{s};
	std::ranges::transform(out, out.begin(),
			       [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
	return out;
}

std::string uppercase(std::string_view s)
{
	std::string out{s};
	std::ranges::transform(out, out.begin(),
			       [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); });
	return out;
}

// Whether AMU group 0 counts event on every CPU of cpus (enabled at
// discovery), and the driver reads the AMU.
bool amu_counts(const Info& info, std::span<const unsigned> cpus, std::uint16_t event)
{
	if (!info.supports(Ioctl::amu_read) || cpus.empty())
		return false;
	for (const unsigned c : cpus) {
		const CpuInfo& ci = info.cpus[c];
		if (!ci.amu_usable())
			return false;
		const unsigned n0 = static_cast<unsigned>(field<7, 0>(ci.amcgcr));
		const std::optional<unsigned> i = amu_counter_of(ci.amevtyper0, n0, event);
		if (!i || !((ci.amcntenset0 >> *i) & 1))
			return false;
	}
	return true;
}

// --topdown whose PMU events (pmu) are more than the room (counters event
// counters and the cycle counter): the groups of plan_topdown() (see
// there), each a plan of its own run of the command.
void plan_topdown_runs(Plan& p, const std::vector<EventSpec>& pmu, std::size_t counters, std::size_t room)
{
	const MetricSet& set = *p.topdown.set;
	std::vector<std::string> outside;
	for (const std::uint16_t n : p.amu_events)
		outside.push_back(uppercase(amu_event_name(n)));
	const auto on_pmu = [&](const std::string& name) {
		const std::optional<std::uint16_t> n = event_number(name, p.midr);
		return n && std::ranges::any_of(pmu, [&](const EventSpec& e) { return e.number == *n; });
	};
	if (!p.events.empty())
		throw UsageError{"--topdown=" + std::to_string(p.topdown.level) + " needs " + std::to_string(pmu.size()) +
				 " PMU events and -e/-M " + std::to_string(p.events.size()) + " more, " +
				 std::to_string(pmu.size() + p.events.size()) + " in all, more than the room for " +
				 std::to_string(room) + " (" + std::to_string(counters) + " event counters" +
				 (room > counters ? " and the cycle counter" : "") +
				 "): the level's groups are counted one run each, without -e or -M events"};
	std::string text = "topdown: ";
	text.append(set.title).append(", level ").append(std::to_string(p.topdown.level));
	text.append(" (").append(set.id).append(": ").append(set.source).append("); slots ");
	text.append(p.topdown.slots ? std::to_string(p.topdown.slots) + " (PMMIR_EL1.SLOTS)" : std::string{"none"});
	text.append("; ").append(std::to_string(pmu.size())).append(" PMU events, ");
	text.append(std::to_string(counters)).append(" counters: each group counted over its own run of the command, ");
	text.append("each metric from its group's run only");
	if (!p.amu_events.empty()) {
		std::string names;
		for (const std::uint16_t n : p.amu_events)
			names += (names.empty() ? "" : ", ") + lowercase(amu_event_name(n));
		text += "; " + names + " from the AMU in every run (amu/NAME/ lines)";
	}
	p.notes.push_back(std::move(text));
	for (TopdownGroup& g : plan_topdown_groups(set, p.topdown.level, counters, outside)) {
		// only the metrics computable here (the plan named the others)
		std::erase_if(g.metrics, [&](const MetricFormula* m) {
			return std::ranges::any_of(metric_events(set, *m), [&](const std::string& e) {
				return std::ranges::find(outside, e) == outside.end() && !on_pmu(e);
			});
		});
		if (g.metrics.empty())
			continue;
		Plan run;
		run.cpus = p.cpus;
		run.system_wide = p.system_wide;
		run.midr = p.midr;
		run.pmu_mode = p.pmu_mode;
		run.amu_events = p.amu_events;
		std::string names;
		for (const std::string& e : g.events) {
			if (!std::ranges::any_of(g.metrics, [&](const MetricFormula* m) {
				    const std::vector<std::string> need = metric_events(set, *m);
				    return std::ranges::find(need, e) != need.end();
			    }))
				continue;
			run.events.push_back(parse_event(lowercase(e), p.midr));
			names += (names.empty() ? "" : ", ") + lowercase(e);
		}
		std::string metrics;
		for (const MetricFormula* m : g.metrics)
			metrics += (metrics.empty() ? "" : ", ") + std::string{m->name};
		std::string note = "topdown: run " + std::to_string(p.group_plans.size() + 1) + ": ";
		note.append(names).append(" (").append(metrics).append(")");
		p.notes.push_back(std::move(note));
		run.added.assign(run.events.size(), false);
		p.topdown_groups.push_back(std::move(g));
		p.group_plans.push_back(std::move(run));
	}
}

// --topdown: the set of the counted CPUs' core up to the level, its
// PMMIR_EL1.SLOTS, and the events of the metrics whose inputs are all
// there (CPU_CYCLES, INST_RETIRED from the AMU where group 0 counts them,
// the others on the PMU, in the one group); what a metric lacks in the
// notes.
void plan_topdown(Plan& p, unsigned asked, const Info& info)
{
	const MetricSet& set = metric_set_for(p.midr);
	TopdownRequest& t = p.topdown;
	t.set = &set;
	t.midr = p.midr;
	t.level = std::min(asked, set.max_level);
	if (asked > set.max_level)
		p.notes.push_back("topdown: level " + std::to_string(asked) +
				  " is defined for the Neoverse N2, V1 and V2 (their telemetry specifications); " +
				  describe_midr(p.midr) + " has level " + std::to_string(set.max_level) + " (" +
				  std::string{set.id} + ")");
	const CpuInfo& first = info.cpus[p.cpus.front()];
	t.slots = first.has_pmmir() ? pmmir_slots(first.pmmir) : 0;
	for (const unsigned c : p.cpus)
		if (const CpuInfo& ci = info.cpus[c]; (ci.has_pmmir() ? pmmir_slots(ci.pmmir) : 0) != t.slots)
			p.notes.push_back("topdown: CPU " + std::to_string(c) + " has other PMMIR_EL1.SLOTS than CPU " +
					  std::to_string(p.cpus.front()) + "; CPU " + std::to_string(p.cpus.front()) +
					  "'s are used");
	const std::string slots_why =
		first.has_pmmir() ? "PMMIR_EL1.SLOTS reads 0" : "no PMMIR_EL1 (a PMU before PMUv3p4)";
	std::vector<EventSpec> pmu;
	std::vector<std::uint16_t> amu;
	std::vector<EventSpec> available;	// what exists of every metric's events
	std::vector<std::uint16_t> available_amu;
	for (const MetricFormula* m : topdown_metrics(set, t.level)) {
		std::string why;
		std::vector<EventSpec> m_pmu;
		std::vector<std::uint16_t> m_amu;
		for (const std::string& name : metric_events(set, *m)) {
			EventSpec e = parse_event(lowercase(name), p.midr);
			const bool counted = std::ranges::any_of(p.events, [&](const EventSpec& x) {
				return x.number == e.number && (x.flags & ~evflag::raw) == 0;
			});
			if (counted)
				continue;	// -e counts it on the PMU already
			if ((e.number == ev::cpu_cycles || e.number == ev::inst_retired) &&
			    amu_counts(info, p.cpus, e.number)) {
				m_amu.push_back(e.number);
				if (std::ranges::find(available_amu, e.number) == available_amu.end())
					available_amu.push_back(e.number);
				continue;
			}
			const EventSpec one[] = {e};
			const std::vector<MissingEvent> miss = missing_events(one, info, p.cpus);
			if (miss.empty()) {
				m_pmu.push_back(e);
				available.push_back(e);
				continue;
			}
			std::vector<unsigned> on;
			on.reserve(miss.size());
			for (const MissingEvent& x : miss)
				on.push_back(x.cpu);
			why += (why.empty() ? "" : "; ") + e.name + " (" + hex(e.number, 2) + "): " + miss.front().reason +
			       " on CPU" + (on.size() > 1 ? "s " : " ") + format_cpu_list(on);
		}
		// does it divide by the slots? evaluated with every event present
		const auto one = [](std::string_view) -> std::optional<double> { return 1.0; };
		for (const MetricValue& v : evaluate_topdown(set, m->level, one, 0))
			if (v.metric == m && !v.missing.empty() && t.slots == 0)
				why += (why.empty() ? "" : "; ") + std::string{"#slots: "} + slots_why;
		if (!why.empty()) {
			p.notes.push_back("topdown: " + std::string{m->name} + " not computed: missing " + why);
			continue;
		}
		for (EventSpec& e : m_pmu)
			if (std::ranges::none_of(pmu, [&](const EventSpec& x) { return x.number == e.number; }))
				pmu.push_back(std::move(e));
		for (const std::uint16_t n : m_amu)
			if (std::ranges::find(amu, n) == amu.end())
				amu.push_back(n);
	}
	const bool computable = !pmu.empty() || !amu.empty();
	if (!computable) {
		// no metric can be computed: count what exists of their events,
		// so the run shows them (and where they come from)
		for (EventSpec& e : available)
			if (std::ranges::none_of(pmu, [&](const EventSpec& x) { return x.number == e.number; }))
				pmu.push_back(std::move(e));
		amu = available_amu;
		// a PMU group needs an event: the cycles, beside the AMU's
		if (pmu.empty() && p.events.empty())
			pmu.push_back(parse_event("cpu_cycles", p.midr));
	}
	p.amu_events = amu;
	// more events than counters: the groups of plan_topdown_groups() (the
	// AMU's events beside every group) of the metrics computable here,
	// each counted over its own run of the command, so that no formula
	// takes counts of two runs (two windows). The driver's shared-mode
	// multiplexing schedules each event on its own, not a group together,
	// so it cannot keep a metric's events in the same windows.
	const std::size_t counters = first.pmu_num_counters;
	const auto cycles = [](const EventSpec& e) { return e.number == ev::cpu_cycles; };
	// the cycle counter holds CPU_CYCLES beside the event counters
	const std::size_t room =
		counters + (std::ranges::any_of(pmu, cycles) || std::ranges::any_of(p.events, cycles) ? 1 : 0);
	if (counters && computable && p.events.size() + pmu.size() > room) {
		plan_topdown_runs(p, pmu, counters, room);
		return;
	}
	for (EventSpec& e : pmu)
		p.events.push_back(std::move(e));
	std::string text = "topdown: ";
	text.append(set.title).append(", level ").append(std::to_string(t.level));
	text.append(" (").append(set.id).append(": ").append(set.source).append("); slots ");
	text.append(t.slots ? std::to_string(t.slots) + " (PMMIR_EL1.SLOTS)" : std::string{"none"});
	text.append("; each metric's events counted together in one group");
	if (!amu.empty()) {
		std::string names;
		for (const std::uint16_t n : amu)
			names += (names.empty() ? "" : ", ") + lowercase(amu_event_name(n));
		text += "; " + names + " from the AMU (group 0, amu/NAME/ lines), the other events from the PMU";
	} else {
		text += "; every event from the PMU";
	}
	p.notes.push_back(std::move(text));
}

Plan plan(const Options& o, const Info& info)
{
	Plan p;
	p.cpus = cpu_set(info, o.cpus);
	p.system_wide = o.cpus.empty();
	p.pmu_mode = info.pmu_mode();
	if (p.cpus.empty())
		throw UsageError{"no online CPU to count on"};
	p.midr = info.cpus[p.cpus.front()].midr;
	for (const unsigned c : p.cpus)
		if (info.cpus[c].discovered() && info.cpus[c].midr != p.midr)
			p.notes.push_back("CPUs of different types (" + describe_midr(info.cpus[c].midr) +
					  "): names and errata follow CPU " + std::to_string(p.cpus.front()));
	if (o.events.empty() && o.metrics.empty() && !o.topdown) {
		for (const EventSpec& e : parse_event_list(default_events, p.midr)) {
			const EventSpec one[] = {e};
			if (missing_events(one, info, p.cpus).empty())
				p.events.push_back(e);
			else
				p.notes.push_back(e.name + " left out of the default set: not implemented here");
		}
	} else {
		for (const std::string& list : o.events)
			for (EventSpec& e : parse_event_list(list, p.midr))
				p.events.push_back(std::move(e));
	}
	// -M: the events of each metric that are not counted yet (perf adds a
	// metric's events too), without modifiers
	for (const std::string& m : o.metrics) {
		const MetricDef* d = find_metric_def(m);
		for (const std::uint16_t n : {d->numerator, d->denominator})
			if (std::ranges::none_of(p.events, [&](const EventSpec& e) { return e.number == n; }))
				p.events.push_back(parse_event(event_display_name(n, p.midr), p.midr));
	}
	if (o.topdown)
		plan_topdown(p, o.topdown, info);
	if (!p.group_plans.empty()) {
		if (o.command.empty() || o.interval_ms || o.repeat > 1 || o.amu)
			throw UsageError{"--topdown=" + std::to_string(p.topdown.level) +
					 " counts its groups one run of the command each: it needs a COMMAND, "
					 "and not -I, -r or --amu"};
		for (const Plan& run : p.group_plans) {
			require_events(run.events, info, run.cpus);
			require_same_events(run.events, info, run.cpus);
			require_countable(run.events, info, run.cpus);
		}
		return p;
	}
	if (p.events.empty())
		throw UsageError{"no event to count on the PMU"};
	p.added.assign(p.events.size(), false);
	// events an erratum model needs, unless compensation is off
	if (o.compensate) {
		for (EventSpec& e : errata_companions(p.events, p.midr)) {
			p.events.push_back(std::move(e));
			p.added.push_back(true);
		}
	}
	if (p.events.size() > max_group_events)
		throw UsageError{std::to_string(p.events.size()) + " events: a group has at most " +
				 std::to_string(max_group_events)};
	// before anything is programmed
	require_events(p.events, info, p.cpus);
	require_same_events(p.events, info, p.cpus);
	require_countable(p.events, info, p.cpus);
	return p;
}

// A report of what the counters hold: the rows from Counters' totals,
// and with delta, the counts since the previous call (-I; a multiplexed
// row's scaled from the deltas of its count and times, as perf's); the
// PMU mode and the CPUs whose counters perf core took away (shared mode)
// from the driver's readings.
class Reporter {
public:
	Reporter(const Plan& p, bool per_cpu) : plan_{p}, per_cpu_{per_cpu} {}

	StatReport report(const CounterResult& counts, bool delta, std::span<const CpuReading> readings)
	{
		StatReport r;
		r.system_wide = plan_.system_wide;
		r.cpus = format_cpu_list(plan_.cpus);
		r.cpu_description = describe_midr(plan_.midr);
		r.notes = plan_.notes;
		add_counter_rows(r, counts, per_cpu_, plan_.added);
		add_pmu_state(r, plan_.pmu_mode, readings);
		std::vector<StatRow> totals = r.rows;
		if (delta)
			subtract_previous(r, last_);
		last_ = std::move(totals);
		return r;
	}

	/// The next run (-r) starts from zero.
	void restart() { last_.clear(); }

private:
	const Plan& plan_;
	bool per_cpu_;
	std::vector<StatRow> last_{};	///< the totals of the previous report
};

std::string render(const Options& o, const StatReport& r)
{
	const StatFormat f{.metric_only = o.metric_only};
	if (o.json)
		return format_stat_json(r, f);
	if (o.sep)
		return format_stat_csv(r, *o.sep, f);
	return format_stat_text(r, f);
}

// A count of a plan's events over the runs of the command (or until the
// signal): the group through the library's Counters (its totals are the
// rows) and, with --amu, the AMU of the same CPUs, both opened and
// configured at construction, so that what the driver refuses is said
// before the command runs.
class StatCount {
public:
	StatCount(const Options& o, const Info& info, Device dev, const Plan& p)
		: o_{o},
		  p_{p},
		  comp_{.enabled = o.compensate, .exc_undef_ec0 = o.ec0, .calibration = calibration(o, p)},
		  // the AMU on its own descriptor: refused before anything is programmed
		  // (--amu, or --topdown's AMU counts)
		  amu_{o.amu || !p.amu_events.empty() ? std::optional{open_amu(Device::open(o.device), p.cpus)}
						      : std::nullopt},
		  counters_{std::move(dev), info},
		  reporter_{p, o.per_cpu}
	{
		counters_.set_cpus(p.cpus);
		if (o.multiplex)
			counters_.set_multiplex();	// Unsupported, saying why, where it cannot
		for (const EventSpec& e : p.events)
			counters_.add(e);
		counters_.configure();
	}

	/// Every run (-r), their -I reports written to out as they come;
	/// stop ends a run without a command. The totals (-r: the means, each
	/// with its standard deviation); nullopt when the command could not
	/// run.
	std::optional<StatReport> runs(std::ostream& out, const SignalWait* stop)
	{
		// -r: every run's totals, row by row, and wall time
		std::vector<RunStats> values;
		RunStats wall;
		StatReport r;
		for (unsigned k = 0; k < o_.repeat; ++k) {
			std::optional<StatReport> one = measure(out, stop);
			if (!one)
				return std::nullopt;
			values.resize(one->rows.size());
			for (std::size_t i = 0; i < one->rows.size(); ++i)
				values[i].add(one->rows[i].value);
			wall.add(one->seconds);
			r = std::move(*one);
		}
		r.summary = o_.interval_ms > 0;
		r.command = o_.command;
		if (o_.repeat > 1) {
			// perf stat -r: the means, each with its standard deviation
			r.runs = o_.repeat;
			for (std::size_t i = 0; i < r.rows.size(); ++i) {
				r.rows[i].value = values[i].mean();
				r.rows[i].noise_pct = values[i].rel_stddev_pct();
			}
			r.seconds = wall.mean();
			r.seconds_stddev = wall.stddev_mean();
		}
		finish(r);
		if (amu_ && o_.amu)
			r.amu = amu_interval(amu_->info(), amu_first_, amu_now_);
		return r;
	}

	/// --interval-count ended the last run, not a signal.
	[[nodiscard]] bool ended_by_count() const noexcept { return by_count_; }

private:
	static std::optional<Calibration> calibration(const Options& o, const Plan& p)
	{
		const std::string path = o.calibration.value_or(default_calibration_path());
		if (o.compensate && !errata_for(p.midr).empty())
			return load_calibration(path);
		return std::nullopt;
	}

	void finish(StatReport& r) const
	{
		apply_errata(r, p_.midr, comp_);
		derive_report_metrics(r, o_.metrics);
		derive_topdown(r, p_.topdown);
	}

	// One run of the command, with its -I reports: its totals (seconds,
	// exit_status), nullopt when it could not run.
	std::optional<StatReport> measure(std::ostream& out, const SignalWait* stop)
	{
		// the command (SIGINT/SIGQUIT go to it, not to us; child.hpp)
		std::optional<Child> child;
		if (!o_.command.empty())
			child.emplace(o_.command);
		if (amu_) {
			read_amu(*amu_, amu_first_);
			amu_last_ = amu_first_;
		}
		counters_.start();
		reporter_.restart();
		const auto t0 = std::chrono::steady_clock::now();
		const auto since = [&] {
			return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		};
		if (child) {
			try {
				child->start();
			} catch (const Error& e) {
				counters_.stop();
				std::cerr << "amupmu stat: " << e.what() << "\n";
				return std::nullopt;
			}
		}
		// asleep in poll() until the command's exit or the signal, waking
		// only for the -I reports (at t0 + n intervals however long a
		// report takes)
		auto next = t0;
		unsigned n = 0;
		for (;;) {
			const bool more = o_.interval_ms > 0 && (!o_.interval_count || n < o_.interval_count);
			if (!more && o_.interval_count && !child) {
				by_count_ = true;
				break;
			}
			const int timeout = more ? ms_until(next += std::chrono::milliseconds(o_.interval_ms)) : -1;
			if (child ? child->wait(timeout) : stop->wait(timeout) != 0)
				break;
			interval_report(out, n++, since());
		}
		counters_.stop();
		const double seconds = since();
		if (amu_)
			read_amu(*amu_, amu_now_);
		StatReport r = reporter_.report(counters_.result(), false, counters_.reading().cpus());
		if (!p_.amu_events.empty())
			add_amu_rows(r, p_.amu_events, amu_first_, amu_now_, amu_->info(), p_.cpus, o_.per_cpu);
		r.seconds = seconds;
		if (child)
			r.exit_status = child->status();
		return r;
	}

	// The counts of the n-th -I interval, ended at `end` s, written to out.
	void interval_report(std::ostream& out, unsigned n, double end)
	{
		const CounterResult now = counters_.read();
		if (amu_)
			read_amu(*amu_, amu_now_);
		StatReport r = reporter_.report(now, true, counters_.reading().cpus());
		if (!p_.amu_events.empty())
			add_amu_rows(r, p_.amu_events, amu_last_, amu_now_, amu_->info(), p_.cpus, o_.per_cpu);
		r.interval_header = n % 25 == 0;	// perf's column header comment
		r.interval_end = end;
		r.seconds = o_.interval_ms / 1000.0;
		finish(r);
		if (amu_) {
			if (o_.amu)
				r.amu = amu_interval(amu_->info(), amu_last_, amu_now_);
			std::swap(amu_last_, amu_now_);
		}
		out << render(o_, r) << std::flush;
	}

	const Options& o_;
	const Plan& p_;
	const CompensationOptions comp_;
	std::optional<Amu> amu_;
	AmuReading amu_first_, amu_last_, amu_now_;
	Counters counters_;
	Reporter reporter_;
	bool by_count_ = false;
};

// --topdown in groups (plan_topdown_runs()): the command runs once per
// group; the report has every run's rows, and each metric computed from
// its own group's run alone (evaluate_topdown_groups(), with the run's
// times), on the line of its first event in that run.
int run_groups(const Options& o, const Info& info, Device dev, const Plan& p)
{
	StatReport all;
	std::vector<std::size_t> begin;		// each run's first row in all.rows
	std::optional<int> status;
	std::optional<Device> first{std::move(dev)};	// the first run's; the others open their own
	for (std::size_t g = 0; g < p.group_plans.size(); ++g) {
		Device d = first ? std::move(*first) : Device::open(o.device);
		first.reset();
		StatCount count{o, info, std::move(d), p.group_plans[g]};
		std::optional<StatReport> r = count.runs(std::cerr, nullptr);
		if (!r) {
			if (g == 0)
				return 127;	// the command could not run
			// the earlier runs' rows stand; this run's metrics say
			// they never ran
			all.notes.push_back("topdown: run " + std::to_string(g + 1) +
					    " could not start the command: the later runs not made");
			if (!status || *status == 0)
				status = 127;
			break;
		}
		if (g == 0) {
			all = *r;
			all.rows.clear();
			all.metrics.clear();
			all.notes = p.notes;
			all.seconds = 0;
		}
		for (const std::string& n : r->notes)
			if (std::ranges::find(all.notes, n) == all.notes.end())
				all.notes.push_back(n);
		begin.push_back(all.rows.size());
		all.rows.insert(all.rows.end(), r->rows.begin(), r->rows.end());
		all.seconds += r->seconds;
		if (r->exit_status && (!status || *status == 0))
			status = r->exit_status;
		// the command killed by a signal (Ctrl-C: 130): no more runs, as
		// perf stops
		if (r->exit_status && *r->exit_status > 128 && g + 1 < p.group_plans.size()) {
			all.notes.push_back("topdown: run " + std::to_string(g + 1) + "'s command ended by signal " +
					    std::to_string(*r->exit_status - 128) + ": the later runs not made");
			break;
		}
	}
	// runs not made: no rows, their metrics never ran
	while (begin.size() <= p.group_plans.size())
		begin.push_back(all.rows.size());
	all.exit_status = status;
	derive_topdown_groups(all, p.topdown, p.topdown_groups, begin);
	ReportOutput output{o.output};
	output.stream() << render(o, all) << std::flush;
	output.close();
	return all.exit_status.value_or(exit_ok);
}

int run(const Options& o)
{
	Device dev = Device::open(o.device);
	const Info info = dev.info();
	const Plan p = plan(o, info);
	if (!p.group_plans.empty())
		return run_groups(o, info, std::move(dev), p);
	StatCount count{o, info, std::move(dev), p};
	ReportOutput output{o.output};
	std::ostream& out = output.stream();

	// without a command whole CPUs until Ctrl-C or SIGTERM (perf stat -a)
	std::optional<SignalWait> stop;
	if (o.command.empty())
		stop.emplace();
	const std::optional<StatReport> r = count.runs(out, stop ? &*stop : nullptr);
	if (!r)
		return 127;	// the command could not run
	out << render(o, *r) << std::flush;
	output.close();
	if (r->exit_status)
		return *r->exit_status;
	if (count.ended_by_count())
		return exit_ok;
	// the report is out: end by the signal, as perf stat does
	const int sig = SignalWait::caught();
	stop.reset();
	raise_default(sig);
	return 128 + sig;
}

} // namespace

const Command stat_command{
	.name = "stat",
	.summary = "count PMU events on whole CPUs over a command (perf stat -a): totals, metrics, errata",
	.usage = usage,
	.run = parse_then_run<parse, run>,
};

} // namespace amupmu::cli
