// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/text/escape.hpp>

#include <charconv>

namespace amupmu::text {

std::string escape_word(std::string_view s)
{
	static constexpr char digits[] = "0123456789ABCDEF";
	std::string out;
	for (const char c : s) {
		if (c == '%' || c == ' ' || c == '\n' || c == '\t' || c == '\r') {
			const auto u = static_cast<unsigned char>(c);
			out += '%';
			out += digits[u >> 4];
			out += digits[u & 0xF];
		} else {
			out += c;
		}
	}
	return out.empty() ? "%" : out;
}

std::optional<std::string> unescape_word(std::string_view s)
{
	if (s == "%")
		return std::string{};
	std::string out;
	for (std::size_t i = 0; i < s.size(); ++i) {
		if (s[i] != '%') {
			out += s[i];
			continue;
		}
		unsigned v = 0;
		if (i + 3 > s.size())
			return std::nullopt;
		const char* first = s.data() + i + 1;
		const auto [end, ec] = std::from_chars(first, first + 2, v, 16);
		if (ec != std::errc{} || end != first + 2)
			return std::nullopt;
		out += static_cast<char>(v);
		i += 2;
	}
	return out;
}

std::size_t utf8_length(std::string_view s, std::size_t i) noexcept
{
	const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
	const unsigned char c = byte(i);
	std::size_t len;
	unsigned char lo = 0x80;
	unsigned char hi = 0xBF;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0;	// overlong
		if (c == 0xED)
			hi = 0x9F;	// surrogates
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;	// overlong
		if (c == 0xF4)
			hi = 0x8F;	// above U+10FFFF
	} else {
		return 0;
	}
	if (i + len > s.size())
		return 0;
	if (byte(i + 1) < lo || byte(i + 1) > hi)
		return 0;
	for (std::size_t k = 2; k < len; ++k)
		if (byte(i + k) < 0x80 || byte(i + k) > 0xBF)
			return 0;
	return len;
}

} // namespace amupmu::text
