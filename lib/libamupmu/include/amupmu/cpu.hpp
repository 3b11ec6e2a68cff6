// SPDX-License-Identifier: LGPL-2.1-or-later
//
// CPU identification (MIDR_EL1) and Linux CPU lists ("0-3,6").
#ifndef AMUPMU_CPU_HPP
#define AMUPMU_CPU_HPP

#include <amupmu/bits.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

/// MIDR_EL1 fields.
struct Midr {
	std::uint8_t implementer = 0;	///< [31:24]
	std::uint8_t variant = 0;	///< [23:20], the "r" of rXpY
	std::uint8_t architecture = 0;	///< [19:16], 0xF: ID registers scheme
	std::uint16_t part = 0;		///< [15:4]
	std::uint8_t revision = 0;	///< [3:0], the "p" of rXpY

	friend constexpr bool operator==(const Midr&, const Midr&) = default;
};

[[nodiscard]] constexpr Midr decode_midr(std::uint64_t midr) noexcept
{
	return Midr{
		.implementer = static_cast<std::uint8_t>(field<31, 24>(midr)),
		.variant = static_cast<std::uint8_t>(field<23, 20>(midr)),
		.architecture = static_cast<std::uint8_t>(field<19, 16>(midr)),
		.part = static_cast<std::uint16_t>(field<15, 4>(midr)),
		.revision = static_cast<std::uint8_t>(field<3, 0>(midr)),
	};
}

/// Implementer name ("Arm", "NVIDIA", ...); 0x00 is "reserved for software
/// use (e.g. QEMU -cpu max)". Empty when unknown.
[[nodiscard]] std::string_view implementer_name(std::uint8_t implementer) noexcept;

/// Part name ("Cortex-X2") of a known implementer; empty when unknown.
[[nodiscard]] std::string_view part_name(std::uint8_t implementer, std::uint16_t part) noexcept;

/// "r<variant>p<revision>", e.g. "r2p1".
[[nodiscard]] std::string revision_string(const Midr& midr);

/// One-line identification: "Arm Cortex-X2 r2p1", "Arm part 0xd99 r0p0"
/// (known vendor, unknown part) or "implementer 0x00 part 0x051 r0p0".
[[nodiscard]] std::string describe_midr(std::uint64_t midr);

/// Parses a Linux CPU list ("0-3,6", "0", "" = empty; trailing newline
/// allowed) into ascending, de-duplicated CPU numbers. nullopt when malformed.
[[nodiscard]] std::optional<std::vector<unsigned>> parse_cpu_list(std::string_view list);

/// The inverse: {0,1,2,3,6} -> "0-3,6". cpus must be ascending.
[[nodiscard]] std::string format_cpu_list(std::span<const unsigned> cpus);

} // namespace amupmu

#endif
