// SPDX-License-Identifier: LGPL-2.1-or-later
//
// What `amupmu doctor` found (its checks, tools/amupmu/doctor.hpp) as text
// grouped per unit, or as one JSON document with stable keys.
#ifndef AMUPMU_REPORT_DOCTOR_FORMAT_HPP
#define AMUPMU_REPORT_DOCTOR_FORMAT_HPP

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace amupmu::report {

enum class DoctorStatus {
	ok,	///< works
	warn,	///< works, with a limit the user should know
	fail,	///< does not work
	skip,	///< not checked: nothing to check, or an earlier check failed
};

/// "ok", "warn", "fail", "skip".
[[nodiscard]] std::string_view to_string(DoctorStatus status) noexcept;

/// The units, in the order the checks walk them: "module", "device",
/// "privileges", "pmu", "amu", "spe". Counting needs the first four.
inline constexpr std::string_view doctor_units[] = {"module", "device", "privileges", "pmu", "amu", "spe"};

/// One check's verdict.
struct DoctorCheck {
	std::string unit;		///< one of doctor_units
	std::string name;		///< the check, stable: "loaded", "node", "mode", "cpu", ...
	std::optional<unsigned> cpu;	///< the CPU a per-CPU check is about
	DoctorStatus status = DoctorStatus::skip;
	std::string why;		///< one line, without the newline
	std::string fix;		///< the command (or setting) that fixes it; "" when none
	std::string device;		///< the device a per-device check is about (SPE); "" when none
};

/// What the checks were run on, for the report's first line.
struct DoctorContext {
	std::string root;		///< "/" on the running system
	std::string kernel;		///< the running kernel's release ("" unknown)
};

/// Whether everything counting needs works: no check of the module,
/// device, privileges or pmu units failed.
[[nodiscard]] bool doctor_counting_works(std::span<const DoctorCheck> checks) noexcept;

/// The checks grouped per unit, one line each ("  ok    cpu0: ..."; a fix
/// on the line after it), then a summary line.
[[nodiscard]] std::string format_doctor_text(std::span<const DoctorCheck> checks, const DoctorContext& context);

/// One JSON object: "root", "kernel", "counting" (doctor_counting_works),
/// "counts" (ok, warn, fail, skip) and "checks", each with "unit",
/// "check", "cpu" (null when not per CPU), "device" (only in a check about
/// one device), "status", "why" and "fix" (null when none).
[[nodiscard]] std::string format_doctor_json(std::span<const DoctorCheck> checks, const DoctorContext& context);

} // namespace amupmu::report

#endif
