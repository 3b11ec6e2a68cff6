// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Internal (amupmu_text): numbers as text and back, whatever the C locale
// (LC_NUMERIC, setlocale()) or the C++ global locale say: std::to_chars
// and std::from_chars only, never printf, iostreams or strtod. A decimal
// point is always '.', digits are never grouped. Header-only.
#ifndef AMUPMU_TEXT_NUMTEXT_HPP
#define AMUPMU_TEXT_NUMTEXT_HPP

#include <charconv>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#pragma GCC visibility push(hidden)

namespace amupmu::text {

/// printf's "%.*f": fixed(0.5, 2) == "0.50".
[[nodiscard]] inline std::string fixed(double v, int decimals)
{
	char buf[352];	// DBL_MAX with its 309 digits, and the decimals
	const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed, decimals);
	return r.ec == std::errc{} ? std::string{buf, r.ptr} : std::string{"?"};
}

/// printf's "%.*g": general(1.19, 6) == "1.19", general(1e-7, 4) == "1e-07".
[[nodiscard]] inline std::string general(double v, int precision)
{
	char buf[64];
	const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, precision);
	return r.ec == std::errc{} ? std::string{buf, r.ptr} : std::string{"?"};
}

/// An integer in decimal, without digit grouping.
template <std::integral T>
[[nodiscard]] std::string decimal(T v)
{
	char buf[24];
	const auto r = std::to_chars(buf, buf + sizeof(buf), v);
	return {buf, r.ptr};
}

/// Nanoseconds as seconds with nine decimals: seconds(1500000000) ==
/// "1.500000000" (exact, no floating point).
[[nodiscard]] inline std::string seconds(std::uint64_t ns)
{
	std::string frac = decimal(ns % 1000000000);
	frac.insert(0, 9 - frac.size(), '0');
	return decimal(ns / 1000000000) + "." + frac;
}

/// part of whole in percent with two decimals: percent(1, 8) == "12.50%"
/// ("0.00%" when whole is 0).
[[nodiscard]] inline std::string percent(std::uint64_t part, std::uint64_t whole)
{
	return fixed(whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0, 2) + "%";
}

/// The whole of s as a number of type T (base for integers); nullopt when s
/// is empty, has anything else or does not fit in T.
template <typename T>
[[nodiscard]] std::optional<T> parse(std::string_view s, int base = 10)
{
	T out{};
	std::from_chars_result r{};
	if constexpr (std::floating_point<T>)
		r = std::from_chars(s.data(), s.data() + s.size(), out);
	else
		r = std::from_chars(s.data(), s.data() + s.size(), out, base);
	if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size())
		return std::nullopt;
	return out;
}

} // namespace amupmu::text

#pragma GCC visibility pop

#endif
