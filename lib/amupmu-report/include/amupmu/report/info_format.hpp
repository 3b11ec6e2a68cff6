// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Rendering of an Info for people (amupmu info) and for programs (--json).
#ifndef AMUPMU_REPORT_INFO_FORMAT_HPP
#define AMUPMU_REPORT_INFO_FORMAT_HPP

#include <amupmu/info.hpp>
#include <amupmu/platform.hpp>

#include <optional>
#include <string>

namespace amupmu::report {

struct FormatOptions {
	bool verbose = false;	///< text: raw registers and the event list
	/// The interrupt controller (read_gic_version()), shown when set: the
	/// driver does not report it.
	std::optional<GicVersion> gic{};
	/// The Info came from the netlink dumps (amupmu info without the
	/// device): what they do not carry (the ABI version, the ioctls, the
	/// kernel's EL, the clock, the PMU's event bitmaps) is shown as
	/// unknown in the text, and JSON says "source": "netlink".
	bool from_netlink = false;
};

/// Human-readable report, one block per CPU, ending in a newline.
[[nodiscard]] std::string format_info_text(const Info& info, const FormatOptions& options = {});

/// JSON document (an object) describing everything format_info_text shows,
/// raw registers as "0x..." strings, ending in a newline.
[[nodiscard]] std::string format_info_json(const Info& info, const FormatOptions& options = {});

} // namespace amupmu::report

#endif
