// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/compensation.hpp>
#include <amupmu/error.hpp>

#include <algorithm>
#include <cerrno>
#include <string>

namespace amupmu {

namespace {

bool same_levels(std::uint32_t a, std::uint32_t b) noexcept
{
	return (a & evflag::exclusions) == (b & evflag::exclusions);
}

// The count of number at the same exception levels as flags: a model uses
// the companions counted as its own event is.
const EventCount* count_of(std::span<const EventCount> counts, std::uint16_t number, std::uint32_t flags) noexcept
{
	for (const EventCount& c : counts)
		if (c.number == number && same_levels(c.flags, flags))
			return &c;
	return nullptr;
}

} // namespace

std::string_view to_string(CompensationStatus s) noexcept
{
	switch (s) {
	case CompensationStatus::compensated: return "compensated";
	case CompensationStatus::verify: return "verify";
	case CompensationStatus::disabled: return "disabled";
	case CompensationStatus::needs_companion: break;
	}
	return "needs companion";
}

std::optional<Compensation> compensate(std::span<const EventCount> counts, std::size_t event, std::uint64_t midr,
				       const CompensationOptions& options)
{
	if (event >= counts.size())
		throw InvalidArgument{"compensate: event index " + std::to_string(event) + " of " +
					      std::to_string(counts.size()),
				      EINVAL};
	const EventCount& count = counts[event];
	const std::vector<ErratumMatch> matches = errata_for(midr, ErratumUnit::pmu);
	const auto match = std::ranges::find(matches, count.number,
					     [](const ErratumMatch& m) { return m.erratum->event; });
	if (match == matches.end())
		return std::nullopt;
	const Erratum& e = *match->erratum;
	Compensation c{.erratum = &e, .applicability = match->applicability, .raw = count.value};
	if (match->applicability == Applicability::verify) {
		c.status = CompensationStatus::verify;
		return c;
	}
	if (!options.enabled) {
		c.status = CompensationStatus::disabled;
		return c;
	}
	const Parameter p = parameter_for(e, midr, options.calibration ? &*options.calibration : nullptr);
	if (e.model == ErratumModel::undercount_ec0) {
		c.parameter = p;
		c.exc_undef_ec0 = options.exc_undef_ec0;
		c.value = compensate_undercount(count.value, options.exc_undef_ec0, p.value);
		const EventCount* taken = count_of(counts, ev::exc_taken, count.flags);
		const EventCount* ret = count_of(counts, ev::exc_return, count.flags);
		if (taken && ret)
			c.cross_check = cross_check_exc_undef(*c.value, taken->value, ret->value);
		return c;
	}
	// overcount_minus_companion (unreliable_counter is an AMU model:
	// errata_for(midr, pmu) has none)
	const EventCount* companion = count_of(counts, e.companion, count.flags);
	if (!companion) {
		c.status = CompensationStatus::needs_companion;
		return c;
	}
	c.parameter = p;
	c.companion = companion->value;
	c.value = compensate_overcount(count.value, companion->value, p.value);
	return c;
}

std::vector<EventSpec> errata_companions(std::span<const EventSpec> events, std::uint64_t midr)
{
	std::vector<EventSpec> add;
	const auto same = [](std::uint16_t n, std::uint32_t flags) {
		return [=](const EventSpec& e) { return e.number == n && same_levels(e.flags, flags); };
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

} // namespace amupmu
