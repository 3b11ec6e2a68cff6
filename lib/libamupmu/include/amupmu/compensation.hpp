// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Erratum compensation of counts: which PMU erratum (errata.hpp) touches a
// counted event on a core, the value its model corrects the count to with
// the parameter in force (the erratum's default or a board's calibration),
// and the events the model needs counted beside it. What `amupmu stat`
// prints beside the raw counts; Counters::set_compensation() gives it with
// every CounterResult.
//
//   const CompensationOptions o{.calibration = load_calibration(default_calibration_path())};
//   const EventCount counts[] = {{ev::exc_undef, 0, 830}, {ev::exc_taken, 0, 5000},
//                                {ev::exc_return, 0, 5000}};
//   if (const auto c = compensate(counts, 0, midr, o); c && c->value)
//           use(*c->value, c->erratum->id, c->parameter.calibrated);
#ifndef AMUPMU_COMPENSATION_HPP
#define AMUPMU_COMPENSATION_HPP

#include <amupmu/errata.hpp>
#include <amupmu/events.hpp>
#include <amupmu/metrics.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace amupmu {

/// How counts are compensated.
struct CompensationOptions {
	/// false: nothing is compensated; an erratum that applies says
	/// CompensationStatus::disabled
	bool enabled = true;
	/// The EXC_UNDEF model's software ground truth: EC=0x00 exceptions
	/// counted by other means (nullopt: every counted one is taken as
	/// EC=0x00, compensate_undercount())
	std::optional<double> exc_undef_ec0{};
	/// A board's calibration (load_calibration()): its values replace the
	/// errata's defaults when it was measured on the same MIDR
	std::optional<Calibration> calibration{};
};

/// What became of a count an erratum touches.
enum class CompensationStatus : std::uint8_t {
	compensated,		///< Compensation::value holds the corrected count
	verify,			///< a revision after the affected range: not compensated
	disabled,		///< the erratum applies; CompensationOptions::enabled is false
	needs_companion,	///< the model's companion is not counted at the same levels
};
/// "compensated", "verify", "disabled", "needs companion".
[[nodiscard]] std::string_view to_string(CompensationStatus s) noexcept;

/// The compensation of one count, with its provenance.
struct Compensation {
	/// The erratum (its id, core, affected range, summary, provenance).
	const Erratum* erratum = nullptr;
	Applicability applicability = Applicability::yes;	///< yes or verify
	CompensationStatus status = CompensationStatus::compensated;
	double raw = 0;				///< the count as counted
	std::optional<double> value{};		///< the corrected count (status compensated)
	/// The model's parameter in force (status compensated): calibrated
	/// (the calibration's value, same MIDR) or the erratum's default.
	Parameter parameter{};
	/// The undercount model's ground truth used (status compensated):
	/// nullopt when every counted exception was taken as EC=0x00.
	std::optional<double> exc_undef_ec0{};
	/// The overcount model: the companion's count subtracted from.
	std::optional<double> companion{};
	/// The undercount model with EXC_TAKEN and EXC_RETURN counted at the
	/// same levels: cross_check_exc_undef() of the corrected count.
	std::optional<CrossCheck> cross_check{};
};

/// The compensation of counts[event] on a core of midr: the first PMU
/// erratum of errata_for(midr, ErratumUnit::pmu) on its event number, its
/// companions found among counts counted at the same exception levels
/// (evflag::exclusions; the first such count). nullopt when no erratum
/// touches the event. Throws InvalidArgument for event out of range.
[[nodiscard]] std::optional<Compensation> compensate(std::span<const EventCount> counts, std::size_t event,
						     std::uint64_t midr, const CompensationOptions& options = {});

/// Events the errata models of midr need besides events (the companion
/// STALL_BACKEND_MEM, EXC_TAKEN and EXC_RETURN for the cross-check), one
/// set for each event an applying erratum touches, with that event's
/// modifiers ("exc_undef:u" needs "exc_taken:u"), none that events (or an
/// earlier one of the list) has already. Throws as parse_event().
[[nodiscard]] std::vector<EventSpec> errata_companions(std::span<const EventSpec> events, std::uint64_t midr);

} // namespace amupmu

#endif
