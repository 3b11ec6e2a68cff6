// SPDX-License-Identifier: LGPL-2.1-or-later
//
// What the board is, from what Linux publishes besides the driver: the
// interrupt controller's version (/proc/interrupts).
#ifndef AMUPMU_PLATFORM_HPP
#define AMUPMU_PLATFORM_HPP

#include <string>
#include <string_view>

namespace amupmu {

enum class GicVersion {
	unknown,
	v2,	///< GICv2 (Linux's irq-gic: chip "GIC-0", "GIC", "GICv2")
	v3,	///< GICv3 or GICv4 (irq-gic-v3: chip "GICv3")
};

/// "GICv2", "GICv3", "unknown".
[[nodiscard]] std::string_view to_string(GicVersion gic) noexcept;

/// The GIC version the irq chips of a /proc/interrupts text name: on each
/// numbered interrupt's line, the first field after the per-CPU counts.
/// GICv3 when any line names "GICv3" (or "GICv4"), else GICv2 when one
/// names "GIC-<n>", "GIC" or "GICv2", else unknown.
[[nodiscard]] GicVersion gic_version_from_interrupts(std::string_view proc_interrupts);

/// gic_version_from_interrupts() of the file at path; unknown when it
/// cannot be read.
[[nodiscard]] GicVersion read_gic_version(const std::string& path = "/proc/interrupts");

} // namespace amupmu

#endif
