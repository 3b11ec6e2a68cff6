// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Small text helpers the library's messages and names use. The reports
// (amupmu info, stat, amu, record, spe) are rendered by the tool's static
// component, lib/amupmu-report/, which is not part of the shared library.
#ifndef AMUPMU_FORMAT_HPP
#define AMUPMU_FORMAT_HPP

#include <cstdint>
#include <string>

namespace amupmu {

/// "0x%0*llx": hex(0x41, 2) == "0x41", hex(1) == "0x0000000000000001".
[[nodiscard]] std::string hex(std::uint64_t value, unsigned digits = 16);

/// A counter mask (CpuInfo::pmu_counters_free) as a list: "0-5, cycle",
/// "cycle", "none".
[[nodiscard]] std::string counter_mask_list(std::uint32_t mask);

} // namespace amupmu

#endif
