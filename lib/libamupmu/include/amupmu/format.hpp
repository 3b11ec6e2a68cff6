// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Rendering of an Info for people (amupmu info) and for programs (--json).
#ifndef AMUPMU_FORMAT_HPP
#define AMUPMU_FORMAT_HPP

#include <amupmu/info.hpp>
#include <amupmu/platform.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace amupmu {

struct FormatOptions {
	bool verbose = false;	///< text: raw registers and the event list
	/// The interrupt controller (read_gic_version()), shown when set: the
	/// driver does not report it.
	std::optional<GicVersion> gic{};
};

/// "0x%0*llx": hex(0x41, 2) == "0x41", hex(1) == "0x0000000000000001".
[[nodiscard]] std::string hex(std::uint64_t value, unsigned digits = 16);

/// Human-readable report, one block per CPU, ending in a newline.
[[nodiscard]] std::string format_info_text(const Info& info, const FormatOptions& options = {});

/// JSON document (an object) describing everything format_info_text shows,
/// raw registers as "0x..." strings, ending in a newline.
[[nodiscard]] std::string format_info_json(const Info& info, const FormatOptions& options = {});

/// A counter mask (CpuInfo::pmu_counters_free) as a list: "0-5, cycle",
/// "cycle", "none".
[[nodiscard]] std::string counter_mask_list(std::uint32_t mask);

} // namespace amupmu

#endif
