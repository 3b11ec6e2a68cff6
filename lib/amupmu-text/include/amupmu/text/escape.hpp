// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Internal (amupmu_text): the word escaping of amupmu's line-based files
// (recordings): an argument or path has no spaces or line breaks in the
// file. And the UTF-8 check of the JSON and XML writers.
#ifndef AMUPMU_TEXT_ESCAPE_HPP
#define AMUPMU_TEXT_ESCAPE_HPP

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#pragma GCC visibility push(hidden)

namespace amupmu::text {

/// %XX for '%', space, tab, CR and LF; "%" alone is the empty string.
[[nodiscard]] std::string escape_word(std::string_view s);
/// The inverse; nullopt for a '%' not followed by two hex digits.
[[nodiscard]] std::optional<std::string> unescape_word(std::string_view s);

/// Length of the valid UTF-8 sequence at s[i] (i < s.size()), 0 if it is
/// not one.
[[nodiscard]] std::size_t utf8_length(std::string_view s, std::size_t i) noexcept;

} // namespace amupmu::text

#pragma GCC visibility pop

#endif
