// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The result of a counting run (what `amupmu stat` prints): raw totals,
// erratum-compensated values beside them, derived metrics; rendered as perf
// stat renders them (tools/perf/util/stat-display.c): its table, its -x
// separated values and its --json lines, so that what reads perf's output
// reads amupmu's. What perf has no column for (the CPUs, the command,
// errata, notes, the AMU's backend) is in comment lines, "# ...".
#ifndef AMUPMU_REPORT_STAT_HPP
#define AMUPMU_REPORT_STAT_HPP

#include <amupmu/amu.hpp>
#include <amupmu/compensation.hpp>
#include <amupmu/counters.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/events.hpp>
#include <amupmu/info.hpp>
#include <amupmu/metrics.hpp>
#include <amupmu/topdown.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu::report {

struct StatRow {
	std::string name{};		///< "inst_retired:u"
	std::uint16_t number = 0;
	std::uint32_t flags = 0;	///< evflag::*
	std::string modifiers{};	///< perf's modifiers, canonical ("u"; "" none)
	/// total over the CPUs (-r: the mean of the runs); a multiplexed
	/// group's: perf's estimate (ScaledCount::value)
	double value = 0;
	/// ns: the group's time enabled, and the smallest time running over
	/// the CPUs; a multiplexed group's: the event's, summed over the CPUs
	/// (perf stat's aggregate)
	std::uint64_t time_enabled = 0;
	std::uint64_t time_running = 0;
	/// The event multiplexed (Scheduling::multiplex): value is scaled
	/// from raw by time_enabled / time_running, and "<not counted>" when
	/// it never ran (counted false)
	bool multiplexed = false;
	std::uint64_t raw = 0;		///< multiplexed: what the counters counted
	bool counted = true;		///< false: never on a counter (perf's <not counted>)
	bool added = false;		///< added for an erratum model, not asked for
	int cpu = -1;			///< -A: the CPU this row counts; -1: summed over the CPUs
	/// -r: the standard deviation of the runs' mean, in % of the mean
	/// (perf's rel_stddev_stats(stddev_stats()))
	std::optional<double> noise_pct{};

	/// The erratum compensation, when one applies.
	std::optional<double> compensated{};
	std::string erratum{};		///< id of the erratum that applies or must be verified
	std::string note{};		///< parameters / "verify" / cross-check
};

struct StatReport {
	std::vector<std::string> command{};
	/// Every online CPU (perf stat -a, the header's 'system wide'), or the
	/// CPUs of -C (perf's 'CPU(s) 0-1').
	bool system_wide = true;
	std::string cpus{};		///< "0-1"
	std::string cpu_description{};	///< "Arm Cortex-X2 r2p1"
	double seconds = 0;		///< wall time of the run (or interval)
	std::optional<double> interval_end{};	///< -I: seconds since start
	std::optional<int> exit_status{};
	unsigned runs = 1;		///< -r N: rows hold the means
	double seconds_stddev = 0;	///< -r: the standard deviation of the mean wall time
	/// The totals printed after -I intervals (perf stat -I --summary: the
	/// separated values start with a "summary" column).
	bool summary = false;
	/// -I: print the column header comment first (perf: every 25 intervals)
	bool interval_header = false;
	std::vector<StatRow> rows{};
	/// Metric::source indexes rows: the row whose line carries it.
	std::vector<Metric> metrics{};
	std::vector<std::string> notes{};	///< errata not applied, warnings
	/// The PMU mode the counts were taken in (Info::pmu_mode()): shared
	/// mode gets a comment line (perf core placed the counters)
	PmuMode pmu_mode = PmuMode::exclusive;
	/// Shared mode: the CPUs whose READ said evicted (perf core took a
	/// counter away): a warning line, their counts are short
	std::vector<unsigned> evicted_cpus{};
	/// The group multiplexed (amupmu stat --multiplex): the pmu comment
	/// line says the counts are perf's estimates
	bool multiplexed = false;
	/// amupmu stat --amu: the AMU over the same interval, as counter lines
	/// of their own: amu/frequency/ (MHz), amu/ipc/, amu/mem_stall/ (%),
	/// amu/active/ (%), summed over the CPUs (per CPU with per_cpu), a
	/// figure that has no value "<not counted>", with seconds as their run
	/// time; the backend and the flags (amu_flags()) in comment lines.
	std::optional<AmuReport> amu{};
};

/// Appends the rows of a Counters reading: one per event with
/// CounterResult's exact totals, or with per_cpu (-A) one per event and
/// CPU, event by event; time enabled is the group's, time running the
/// smallest over the CPUs (a summed row) or the CPU's. A multiplexed
/// result's rows are CounterResult::count()'s: perf's estimates with the
/// event's own times (summed over the CPUs, or the CPU's), "<not counted>"
/// where it never ran (a note names it), and report.multiplexed.
/// added[i] marks event i as added for an erratum model (missing: false).
/// Each CPU that was offline when read gets a note.
void add_counter_rows(StatReport& report, const CounterResult& result, bool per_cpu,
		      const std::vector<bool>& added = {});

/// -I: the rows of report (totals since the start) become the counts
/// since previous (the rows of the report before, in the same order, as
/// they were before this call changed them): each value minus the previous
/// one; a multiplexed row, as perf stat -I computes it, its raw count and
/// times minus the previous ones, scaled again (scale_count()). Rows
/// beyond previous stay as they are.
void subtract_previous(StatReport& report, std::span<const StatRow> previous);

/// The report's PMU mode and the CPUs of readings that say evicted (shared
/// mode: counts short), from what the counters' last read gave
/// (Counters::reading()).
void add_pmu_state(StatReport& report, PmuMode mode, std::span<const CpuReading> readings);

/// Fills compensated/erratum/note of the rows the errata of midr touch
/// (the library's compensate() of each row among the rows of its CPU) and
/// the report's notes, one per erratum. Disabled: rows stay raw, and a
/// note says which errata were not compensated.
void apply_errata(StatReport& report, std::uint64_t midr, const CompensationOptions& options);

/// Recomputes report.metrics from the rows: those of each CPU (-A) on
/// their own. only: the metric names to compute (-M; empty: every one the
/// rows allow). Throws InvalidArgument for a name metric_defs() lacks.
void derive_report_metrics(StatReport& report, std::span<const std::string> only = {});

/// What amupmu stat --topdown (-M TopdownL1) computes: a metric set (the
/// one of the counted CPUs' core, metric_set_for()) up to a level, with
/// the CPUs' PMMIR_EL1.SLOTS (0: none).
struct TopdownRequest {
	const MetricSet* set = nullptr;
	unsigned level = 0;
	unsigned slots = 0;
	std::uint64_t midr = 0;		///< event names resolve by it
};

/// Appends to report.metrics the top-down metrics of request computed from
/// the rows of each CPU (-A) on their own, or the summed rows: each
/// formula's events are the rows without modifiers (flags 0) of their
/// numbers that were counted; a metric is a share printed in % (value x
/// 100), on the line of its first event's row. A metric some of whose
/// inputs no row has gets no value and a note naming them ("topdown:
/// frontend_bound not computed: missing STALL_SLOT_FRONTEND, #slots"), or
/// why it has none ("... not computed: CPU_CYCLES counted 0"),
/// once per metric. Call after derive_report_metrics(), which clears the
/// metrics. Throws InvalidArgument if a formula of the set does not parse.
void derive_topdown(StatReport& report, const TopdownRequest& request);

/// amupmu stat --topdown in groups, the command run once per group: the
/// report's rows are the runs' rows one after the other, run g's from
/// begin[g] to begin[g + 1] (groups.size() + 1 entries), run g the one
/// that counted groups[g] (plan_topdown_groups()). Appends to
/// report.metrics each metric of the groups computed from its own run's
/// rows alone (evaluate_topdown_groups(), with the run's time enabled and
/// time running: those of its first row of that CPU that has them), of
/// each CPU (-A) or of the summed rows as derive_topdown(), on the line of
/// its first event in that run; a metric without a value gets a note, once,
/// naming what it lacks or why ("topdown: retiring not computed: run 2
/// never ran (time running 0 of 5000 ns)"). Throws InvalidArgument if a
/// formula of the set does not parse.
void derive_topdown_groups(StatReport& report, const TopdownRequest& request, std::span<const TopdownGroup> groups,
			   std::span<const std::size_t> begin);

/// An event counted by the AMU instead of the PMU (amupmu stat --topdown
/// where AMU group 0 counts it): one row named "amu/NAME/" (number the
/// event's, flags 0) with the sum of the deltas of first..last over cpus,
/// or with per_cpu one row per CPU. A CPU whose reading has no value for
/// the event makes the row <not counted> (counted false).
void add_amu_rows(StatReport& report, std::span<const std::uint16_t> events, const AmuReading& first,
		  const AmuReading& last, const Info& info, std::span<const unsigned> cpus, bool per_cpu);

/// Mean and standard deviation of the runs of -r, as perf's stats (Welford).
class RunStats {
public:
	void add(double x) noexcept;
	[[nodiscard]] unsigned count() const noexcept { return n_; }
	[[nodiscard]] double mean() const noexcept { return mean_; }
	/// perf's stddev_stats(): the standard deviation of the mean,
	/// sqrt(M2 / (n - 1) / n); 0 for fewer than two runs.
	[[nodiscard]] double stddev_mean() const noexcept;
	/// perf's rel_stddev_stats(): stddev_mean() in % of the mean (0 for a
	/// zero mean).
	[[nodiscard]] double rel_stddev_pct() const noexcept;

private:
	unsigned n_ = 0;
	double mean_ = 0;
	double m2_ = 0;
};

/// How a report is printed.
struct StatFormat {
	/// perf stat --metric-only: one line of metrics (per CPU with -A)
	/// under a header line naming them, no counts.
	bool metric_only = false;
};

/// "12,345,678"
[[nodiscard]] std::string group_digits(double value);

/// perf stat's table: " Performance counter stats for 'system wide':"
/// (or 'CPU(s) 0-1'), one line per row, "%18s %-4s %-32s": value with
/// grouped digits, unit, event, then its metric after " # " as perf prints
/// a named metric ("    0.50 ipc", "    95.0 %  l1d_hit_rate"), -r's
/// "( +- 1.23% )", the running share "(50.00%)" when below 100 %; the
/// elapsed seconds; then amupmu's comment lines. -I: each line starts with
/// the interval's end in seconds ("%6lu.%09lu ").
[[nodiscard]] std::string format_stat_text(const StatReport& report, const StatFormat& format = {});
/// perf stat --json: one object per row and line, perf's keys in perf's
/// order: ["interval", "cpu",] "counter-value" (a string, "%f"), "unit",
/// "event", ["variance",] "event-runtime" (ns), "pcnt-running",
/// ["metric-value" (a string), "metric-unit"]; a second metric of a row
/// on a line of its own. No comments: JSON has none.
[[nodiscard]] std::string format_stat_json(const StatReport& report, const StatFormat& format = {});
/// perf stat -x SEP, in perf's columns:
///   [interval | "summary",] [CPU<n>,] value, unit, event, [noise %,]
///   run time (ns), running %, metric value, metric unit
/// a row's second metric on a line of its own with the columns before the
/// metric's empty; then amupmu's comment lines ("# ..."). Separators
/// inside fields are replaced by spaces.
[[nodiscard]] std::string format_stat_csv(const StatReport& report, std::string_view sep,
					  const StatFormat& format = {});

} // namespace amupmu::report

#endif
