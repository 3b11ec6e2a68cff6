// SPDX-License-Identifier: LGPL-2.1-or-later
#include "textfile.hpp"

#include <charconv>

namespace amupmu::detail {

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

} // namespace amupmu::detail
