// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Internal (amupmu_text): the column helpers of the report component's text
// renderers and the tool's lines. Header-only.
#ifndef AMUPMU_TEXT_COLUMNS_HPP
#define AMUPMU_TEXT_COLUMNS_HPP

#include <cstddef>
#include <string>
#include <string_view>

#pragma GCC visibility push(hidden)

namespace amupmu::text {

/// s right-aligned in width columns (unchanged when wider).
inline std::string pad_left(std::string s, std::size_t width)
{
	if (s.size() < width)
		s.insert(0, width - s.size(), ' ');
	return s;
}

/// s left-aligned in width columns (unchanged when wider).
inline std::string pad_right(std::string s, std::size_t width)
{
	if (s.size() < width)
		s.append(width - s.size(), ' ');
	return s;
}

/// s with every occurrence of the field separator sep blanked out, so that
/// a name cannot split a -x row (nothing changes when sep is empty).
inline std::string clean(std::string s, std::string_view sep)
{
	if (sep.empty())
		return s;
	for (std::size_t pos = 0; (pos = s.find(sep, pos)) != std::string::npos;)
		s.replace(pos, sep.size(), std::string(sep.size(), ' '));
	return s;
}

} // namespace amupmu::text

#pragma GCC visibility pop

#endif
