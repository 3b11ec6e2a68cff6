// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Derived metrics from counted events. Formulas (Documentation/userspace-api/
// amupmu-tool.rst):
//   ipc                        INST_RETIRED / CPU_CYCLES
//   l1d_hit_rate               1 - L1D_CACHE_REFILL / L1D_CACHE
//   branch_pred_accuracy       1 - BR_MIS_PRED / BR_PRED
//   backend_stall_share        STALL_BACKEND / CPU_CYCLES
//   frontend_stall_share       STALL_FRONTEND / CPU_CYCLES
// A metric is produced for each count of its numerator whose denominator
// was counted with the same exclusions (e.g. both ":u") and is not zero.
#ifndef AMUPMU_METRICS_HPP
#define AMUPMU_METRICS_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace amupmu {

/// One counted event: number, flags (evflag::*) and total.
struct EventCount {
	std::uint16_t number = 0;
	std::uint32_t flags = 0;
	double value = 0;
};

struct MetricDef {
	std::string_view name;
	std::string_view formula;
	std::string_view unit;		///< "" (ratio) or "%"
	std::uint16_t numerator;
	std::uint16_t denominator;
	bool complement;		///< 1 - num/den
};

/// The metric definitions, in output order.
[[nodiscard]] std::span<const MetricDef> metric_defs() noexcept;

struct Metric {
	std::string_view name;
	std::string_view formula;
	std::string_view unit;
	double value = 0;	///< ratio; "%" metrics are * 100
	std::size_t source = 0;	///< index of the numerator's count (or row)
};

/// The definition named name ("ipc"), or nullptr.
[[nodiscard]] const MetricDef* find_metric_def(std::string_view name) noexcept;

/// The metrics computable from counts.
[[nodiscard]] std::vector<Metric> derive_metrics(std::span<const EventCount> counts);

} // namespace amupmu

#endif
