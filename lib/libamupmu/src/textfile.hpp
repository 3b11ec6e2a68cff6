// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Internal: the word escaping of amupmu's line-based files (recordings):
// an argument or path has no spaces or line breaks in the file.
#ifndef AMUPMU_SRC_TEXTFILE_HPP
#define AMUPMU_SRC_TEXTFILE_HPP

#include <optional>
#include <string>
#include <string_view>

namespace amupmu::detail {

/// %XX for '%', space, tab, CR and LF; "%" alone is the empty string.
[[nodiscard]] std::string escape_word(std::string_view s);
/// The inverse; nullopt for a '%' not followed by two hex digits.
[[nodiscard]] std::optional<std::string> unescape_word(std::string_view s);

} // namespace amupmu::detail

#endif
