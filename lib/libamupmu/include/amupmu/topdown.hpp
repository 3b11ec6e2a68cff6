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
// The sets (Documentation/userspace-api/amupmu-library.rst, "Top-down"):
//   sbsa         level 1 for every PMUv3 core with the STALL_SLOT events
//                (Armv8.4 and later; required by Arm's SBSA, DEN0029)
//   neoverse-n2, neoverse-v1, neoverse-v2
//                level 1 as the cores' telemetry specifications correct
//                it for branch mispredictions, and level 2 (their cycle
//                accounting)
// Functions not marked noexcept throw std::bad_alloc, and what their
// comment says.
#ifndef AMUPMU_TOPDOWN_HPP
#define AMUPMU_TOPDOWN_HPP

#include <amupmu/decode.hpp>

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
	std::span<const MetricFormula> metrics;
	unsigned max_level;
};

/// Every set, the generic one ("sbsa") first.
[[nodiscard]] std::span<const MetricSet> metric_sets() noexcept;
/// The set for a CPU of midr: its core's own where the library has one,
/// else the generic "sbsa".
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
};

/// Evaluates the metrics of set up to level. count(name) gives an event's
/// count by its upper-case Arm ARM name (nullopt: not counted); slots the
/// PMMIR_EL1.SLOTS value (0: none). A metric with a missing input names
/// it and has no value. Throws InvalidArgument if a formula of the set
/// does not parse (never, for the library's own).
[[nodiscard]] std::vector<MetricValue> evaluate_topdown(
	const MetricSet& set, unsigned level, const std::function<std::optional<double>(std::string_view)>& count,
	unsigned slots);

} // namespace amupmu

#endif
