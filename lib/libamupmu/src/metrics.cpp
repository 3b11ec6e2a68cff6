// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/events.hpp>
#include <amupmu/metrics.hpp>


namespace amupmu {

namespace {

constexpr MetricDef defs[] = {
	{"ipc", "inst_retired / cpu_cycles", "", ev::inst_retired, ev::cpu_cycles, false},
	{"l1d_hit_rate", "1 - l1d_cache_refill / l1d_cache", "%", ev::l1d_cache_refill, ev::l1d_cache, true},
	{"branch_pred_accuracy", "1 - br_mis_pred / br_pred", "%", ev::br_mis_pred, ev::br_pred, true},
	{"backend_stall_share", "stall_backend / cpu_cycles", "%", ev::stall_backend, ev::cpu_cycles, false},
	{"frontend_stall_share", "stall_frontend / cpu_cycles", "%", ev::stall_frontend, ev::cpu_cycles, false},
};

const EventCount* find(std::span<const EventCount> counts, std::uint16_t number, std::uint32_t flags)
{
	for (const EventCount& c : counts)
		if (c.number == number && (c.flags & ~evflag::raw) == flags)
			return &c;
	return nullptr;
}

} // namespace

std::span<const MetricDef> metric_defs() noexcept
{
	return defs;
}

const MetricDef* find_metric_def(std::string_view name) noexcept
{
	for (const MetricDef& d : defs)
		if (d.name == name)
			return &d;
	return nullptr;
}

std::vector<Metric> derive_metrics(std::span<const EventCount> counts)
{
	std::vector<Metric> out;
	for (const MetricDef& d : defs) {
		// each count of the numerator ("inst_retired:u" and
		// "inst_retired:k"), with the denominator of its exclusions
		for (std::size_t i = 0; i < counts.size(); ++i) {
			if (counts[i].number != d.numerator)
				continue;
			const EventCount* den = find(counts, d.denominator, counts[i].flags & ~evflag::raw);
			if (!den || den->value == 0)
				continue;
			double v = counts[i].value / den->value;
			if (d.complement)
				v = 1 - v;
			if (d.unit == "%")
				v *= 100;
			out.push_back({d.name, d.formula, d.unit, v, i});
		}
	}
	return out;
}

} // namespace amupmu
