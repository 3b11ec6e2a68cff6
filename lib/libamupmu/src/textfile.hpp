// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Internal: the word escaping of amupmu's line-based files (recordings):
// an argument or path has no spaces or line breaks in the file. And the
// UTF-8 check of the JSON and XML writers.
#ifndef AMUPMU_SRC_TEXTFILE_HPP
#define AMUPMU_SRC_TEXTFILE_HPP

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace amupmu::detail {

/// %XX for '%', space, tab, CR and LF; "%" alone is the empty string.
[[nodiscard]] std::string escape_word(std::string_view s);
/// The inverse; nullopt for a '%' not followed by two hex digits.
[[nodiscard]] std::optional<std::string> unescape_word(std::string_view s);

/// Length of the valid UTF-8 sequence at s[i] (i < s.size()), 0 if it is
/// not one (json.cpp).
[[nodiscard]] std::size_t utf8_length(std::string_view s, std::size_t i) noexcept;

} // namespace amupmu::detail

#endif
