// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Arm's top-down methodology as data: metric sets whose formulas are
// expressions in perf's metric JSON syntax (MetricExpr: events by their Arm
// ARM names, "#slots" for PMMIR_EL1.SLOTS, other metrics of the set by
// name, + - * / and parentheses), each with its source named, and the
// evaluator that computes them from counts. A metric whose inputs are not
// all there (an event the PMU lacks, SLOTS that reads 0) gets no value and
// names what is missing: nothing is computed from partial inputs.
//
// The sets (Documentation/userspace-api/amupmu-library.rst, "Top-down"),
// each with its source in MetricSet::source:
//   sbsa         level 1 for every PMUv3 core with the STALL_SLOT events
//                (Armv8.4 and later; required by Arm's SBSA, DEN0029):
//                Linux perf's pmu-events/arch/arm64/sbsa.json
//   neoverse-n2-r0p0 (N2 r0p0-r0p2), neoverse-n2 (N2 r0p3 and later),
//   neoverse-v1, neoverse-v2
//                level 1 as each core's Arm telemetry specification
//                corrects it for branch mispredictions (and N2 r0p0-r0p2
//                for their STALL_SLOT overcount), and level 2, the
//                specification's cycle accounting
// Checked against: perf's sbsa.json (602bf183), neoverse-v1 (918e37d5) and
// neoverse-n2-v2 (0df82189) metrics, Arm's telemetry-solution (917257c7).
//
// A level needs more events than a PMU has counters (level 2: nine, six
// counters on most cores): plan_topdown_groups() splits the metrics into
// groups that fit, each metric's events in one group, and
// evaluate_topdown_groups() computes each metric from its group's counts
// alone (scaled by the group's time enabled over its time running, as
// perf scales a multiplexed group), never from counts of different
// windows.
// Functions not marked noexcept throw std::bad_alloc, and what their
// comment says.
#ifndef AMUPMU_TOPDOWN_HPP
#define AMUPMU_TOPDOWN_HPP

#include <amupmu/decode.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

/// One metric of a set, in perf's metric JSON terms.
struct MetricFormula {
	std::string_view name;		///< MetricName: "frontend_bound"
	std::string_view group;		///< MetricGroup: "TopdownL1", "TopdownL2"
	unsigned level;			///< 1, 2
	std::string_view expr;		///< MetricExpr (perf's syntax)
	std::string_view unit;		///< "%": the value is a share, printed * 100
	std::string_view description;
	std::string_view parent;	///< level 2: the level-1 metric it divides; "" otherwise
};

/// A set of formulas and the cores it is for.
struct MetricSet {
	std::string_view id;		///< "sbsa", "neoverse-n2", ...
	std::string_view title;		///< "Arm top-down level 1 (SBSA)"
	std::string_view source;	///< where the formulas come from
	/// The MIDR_EL1 implementer and parts it is for; no part: every core.
	std::uint8_t implementer;
	std::span<const std::uint16_t> parts;
	/// The revisions of those parts it is for, variant << 4 | revision
	/// (r0p2: 0x02), both included.
	std::uint8_t revision_min;
	std::uint8_t revision_max;
	std::span<const MetricFormula> metrics;
	unsigned max_level;
};

/// Every set, the generic one ("sbsa") first.
[[nodiscard]] std::span<const MetricSet> metric_sets() noexcept;
/// The set for a CPU of midr: its core's own (by part and revision) where
/// the library has one, else the generic "sbsa".
[[nodiscard]] const MetricSet& metric_set_for(std::uint64_t midr) noexcept;
/// The set with that id, or nullptr.
[[nodiscard]] const MetricSet* find_metric_set(std::string_view id) noexcept;

/// The level of a perf metric group name: "TopdownL1" (perf's spelling),
/// "TopDownL1", "topdownl2" -> 1, 2 (case-insensitive); nullopt otherwise.
[[nodiscard]] std::optional<unsigned> topdown_group_level(std::string_view group) noexcept;

/// The metrics of set up to level, level by level in the set's order.
[[nodiscard]] std::vector<const MetricFormula*> topdown_metrics(const MetricSet& set, unsigned level);

/// The name perf's expressions use for the slots: "#slots", the CPU's
/// PMMIR_EL1.SLOTS (pmmir_slots(), decode.hpp).
inline constexpr std::string_view slots_name = "#slots";

/// The identifiers of an expression, each once in order of appearance
/// ("#slots" included), as written. Throws InvalidArgument on a syntax
/// error.
[[nodiscard]] std::vector<std::string> expr_identifiers(std::string_view expr);

/// Evaluates expr: numbers, identifiers (value() gives each one's value,
/// nullopt when it has none), + - * / (division by zero gives an
/// infinity or NaN, as perf's), unary minus, parentheses. Throws
/// InvalidArgument on a syntax error or an identifier value() has no value
/// for.
[[nodiscard]] double evaluate_expr(std::string_view expr,
				   const std::function<std::optional<double>(std::string_view)>& value);

/// The events (Arm ARM names, upper case) a metric needs, with those of
/// the set's metrics it refers to, each once, in order; "#slots" is not an
/// event and not included. Throws InvalidArgument as expr_identifiers().
[[nodiscard]] std::vector<std::string> metric_events(const MetricSet& set, const MetricFormula& metric);

/// One evaluated metric.
struct MetricValue {
	const MetricFormula* metric = nullptr;
	std::optional<double> value{};	///< a share (1.0: 100 %); nullopt: missing inputs
	/// What it lacks: event names (upper case), "#slots"
	std::vector<std::string> missing{};
	/// evaluate_topdown_groups(): the index of the group its counts
	/// come from; nullopt otherwise
	std::optional<std::size_t> group{};
	/// Why it has no value when that is not a missing input: "run 2
	/// never ran (time running 0 of 2000000 ns)", "CPU_CYCLES counted
	/// 0" (a result that is not finite); "" otherwise
	std::string reason{};
};

/// Evaluates the metrics of set up to level. count(name) gives an event's
/// count by its upper-case Arm ARM name (nullopt: not counted); slots the
/// PMMIR_EL1.SLOTS value (0: none). A metric with a missing input names
/// it and has no value. Throws InvalidArgument if a formula of the set
/// does not parse (never, for the library's own).
[[nodiscard]] std::vector<MetricValue> evaluate_topdown(
	const MetricSet& set, unsigned level, const std::function<std::optional<double>(std::string_view)>& count,
	unsigned slots);

/// One group of a top-down plan: events counted together, in the same
/// windows, and the metrics computed from them alone.
struct TopdownGroup {
	/// The events counted in the group (upper-case Arm ARM names), in the
	/// order of the metrics that need them
	std::vector<std::string> events{};
	/// The metrics of the set computed from the group's counts
	std::vector<const MetricFormula*> metrics{};
};

/// Splits the metrics of set up to level into groups of at most counters
/// events each (the PMU's event counters: CPU_CYCLES, on the cycle
/// counter, is in every group that needs it and does not take one of
/// them): every metric's events (metric_events()) in one group, less
/// those in outside (counted beside every group, such as the AMU's
/// CPU_CYCLES, which the caller then counts over each group's windows),
/// and a metric whose events are all in a group already goes to that
/// group. Metrics go first-fit in the set's order, so level 1 comes
/// first. One group when everything fits. Throws InvalidArgument when
/// counters is 0 or a metric alone needs more than counters events besides
/// CPU_CYCLES (naming it), or a formula of the set does not parse.
[[nodiscard]] std::vector<TopdownGroup> plan_topdown_groups(const MetricSet& set, unsigned level,
							    std::size_t counters,
							    std::span<const std::string> outside = {});

/// What one group counted over its windows: the raw count of each event by
/// its upper-case Arm ARM name (nullopt: not counted), including those
/// counted outside the group over the same windows, and the group's times
/// (ns): enabled over the whole run, running while it held the counters.
struct TopdownGroupCounts {
	std::function<std::optional<double>(std::string_view)> count{};
	std::uint64_t time_enabled = 0;
	std::uint64_t time_running = 0;
};

/// Evaluates every metric of groups (plan_topdown_groups()) from its own
/// group's counts (counts[i] for groups[i]), each count of the group's
/// events (not an outside one, counted over the whole run) scaled by the
/// group's time_enabled / time_running as perf scales a multiplexed count
/// (scale_count(); a ratio of counts of one group does not change). A
/// metric with a missing input names it; a metric whose group never ran
/// (time_running 0, or no counts entry) has no value and says so in
/// reason. MetricValue::group is the group's index. In the order of the
/// set. Throws InvalidArgument as evaluate_topdown().
[[nodiscard]] std::vector<MetricValue> evaluate_topdown_groups(const MetricSet& set,
							       std::span<const TopdownGroup> groups,
							       std::span<const TopdownGroupCounts> counts,
							       unsigned slots);

} // namespace amupmu

#endif
