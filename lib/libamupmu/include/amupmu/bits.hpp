// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Register values: field extraction, with field positions written as in
// the Arm ARM (DDI 0487): field<hi, lo>(value) is value[hi:lo]; and the
// hexadecimal form the library's names and messages print them in.
#ifndef AMUPMU_BITS_HPP
#define AMUPMU_BITS_HPP

#include <cstdint>
#include <string>

namespace amupmu {

/// value[Hi:Lo], shifted down to bit 0.
template <unsigned Hi, unsigned Lo>
[[nodiscard]] constexpr std::uint64_t field(std::uint64_t value) noexcept
{
	static_assert(Hi < 64 && Lo <= Hi, "field<hi, lo>: bad bit range");
	constexpr unsigned width = Hi - Lo + 1;
	constexpr std::uint64_t mask =
		width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
	return (value >> Lo) & mask;
}

/// value[Bit] as a bool.
template <unsigned Bit>
[[nodiscard]] constexpr bool bit(std::uint64_t value) noexcept
{
	return field<Bit, Bit>(value) != 0;
}

/// value as "0x" and digits hex digits at least: hex(0x41, 2) == "0x41",
/// hex(1) == "0x0000000000000001".
[[nodiscard]] std::string hex(std::uint64_t value, unsigned digits = 16);

} // namespace amupmu

#endif
