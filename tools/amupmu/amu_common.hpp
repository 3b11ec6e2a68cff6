// SPDX-License-Identifier: GPL-2.0
//
// The AMU as `amupmu amu` and `amupmu stat --amu` use it: opened and read
// with the errors worded for people.
#ifndef AMUPMU_TOOL_AMU_COMMON_HPP
#define AMUPMU_TOOL_AMU_COMMON_HPP

#include "cli.hpp"

#include <amupmu/amu.hpp>
#include <amupmu/error.hpp>

#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu::cli {

inline constexpr std::string_view no_amu_hint = "no CPU has a usable AMU (QEMU hides it; amu=0?)";
inline constexpr std::string_view perfmon_hint =
	"the AMU counters are system-wide: reading them needs CAP_PERFMON (or root)";

/// Throws e as a Failure with the hint its errno calls for (EOPNOTSUPP,
/// EACCES/EPERM); returns for other errors (the caller rethrows them as
/// they are).
inline void throw_hinted(const Error& e)
{
	if (e.errnum() == EOPNOTSUPP)
		throw Failure{e, no_amu_hint};
	if (e.errnum() == EACCES || e.errnum() == EPERM)
		throw Failure{e, perfmon_hint};
}

inline Amu open_amu(Device device, std::vector<unsigned> cpus)
{
	try {
		return Amu::create(std::move(device), std::move(cpus));
	} catch (const Error& e) {
		throw_hinted(e);
		throw;
	}
}

inline void read_amu(Amu& amu, AmuReading& out)
{
	try {
		amu.read(out);
	} catch (const Error& e) {
		throw_hinted(e);
		throw;
	}
}

} // namespace amupmu::cli

#endif
