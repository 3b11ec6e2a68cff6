// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/bits.hpp>

#include <cstdio>

namespace amupmu {

std::string hex(std::uint64_t value, unsigned digits)
{
	char buf[24];
	std::snprintf(buf, sizeof(buf), "0x%0*llx", static_cast<int>(digits),
		      static_cast<unsigned long long>(value));
	return buf;
}

} // namespace amupmu
