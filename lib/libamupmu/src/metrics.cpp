// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/events.hpp>
#include <amupmu/metrics.hpp>

#include <optional>

namespace amupmu {

namespace {

constexpr MetricDef defs[] = {
	{"ipc", "inst_retired / cpu_cycles", "", ev::inst_retired, ev::cpu_cycles, false},
	{"l1d_hit_rate", "1 - l1d_cache_refill / l1d_cache", "%", ev::l1d_cache_refill, ev::l1d_cache, true},
	{"branch_pred_accuracy", "1 - br_mis_pred / br_pred", "%", ev::br_mis_pred, ev::br_pred, true},
	{"backend_stall_share", "stall_backend / cpu_cycles", "%", ev::stall_backend, ev::cpu_cycles, false},
	{"frontend_stall_share", "stall_frontend / cpu_cycles", "%", ev::stall_frontend, ev::cpu_cycles, false},
};

std::optional<EventCount> find(std::span<const EventCount> counts, std::uint16_t number,
			       std::optional<std::uint32_t> flags)
{
	for (const EventCount& c : counts)
		if (c.number == number && (!flags || (c.flags & ~evflag::raw) == *flags))
			return c;
	return std::nullopt;
}

} // namespace

std::span<const MetricDef> metric_defs() noexcept
{
	return defs;
}

std::vector<Metric> derive_metrics(std::span<const EventCount> counts)
{
	std::vector<Metric> out;
	for (const MetricDef& d : defs) {
		// the denominator with the numerator's exclusions
		const auto num = find(counts, d.numerator, std::nullopt);
		if (!num)
			continue;
		const auto den = find(counts, d.denominator, num->flags & ~evflag::raw);
		if (!den || den->value == 0)
			continue;
		double v = num->value / den->value;
		if (d.complement)
			v = 1 - v;
		if (d.unit == "%")
			v *= 100;
		out.push_back({d.name, d.formula, d.unit, v});
	}
	return out;
}

} // namespace amupmu
