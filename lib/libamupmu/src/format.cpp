// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/cpu.hpp>
#include <amupmu/format.hpp>
#include <amupmu/info.hpp>

#include <cstdio>
#include <vector>

namespace amupmu {

std::string hex(std::uint64_t value, unsigned digits)
{
	char buf[24];
	std::snprintf(buf, sizeof(buf), "0x%0*llx", static_cast<int>(digits),
		      static_cast<unsigned long long>(value));
	return buf;
}

std::string counter_mask_list(std::uint32_t mask)
{
	std::vector<unsigned> events;
	for (unsigned n = 0; n < cycle_counter_bit; ++n)
		if ((mask >> n) & 1)
			events.push_back(n);
	std::string s = format_cpu_list(events);
	if ((mask >> cycle_counter_bit) & 1)
		s += (s.empty() ? "" : ", ") + std::string{"cycle"};
	return s.empty() ? "none" : s;
}

} // namespace amupmu
