// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Internal: a CPU set as the driver takes it (AMUPMU_PMU_CONFIG's and
// AMUPMU_SPE_CONFIG's cpus_uptr bitmap, 64 CPUs a word).
#ifndef AMUPMU_SRC_CPUMASK_HPP
#define AMUPMU_SRC_CPUMASK_HPP

#include <cstdint>
#include <span>
#include <vector>

namespace amupmu::detail {

struct CpuMask {
	std::vector<std::uint64_t> words{};	///< bit c % 64 of word c / 64
	std::vector<unsigned> cpus{};		///< the set as the driver sees it: ascending, each CPU once
};

inline CpuMask cpu_mask(std::span<const unsigned> cpus)
{
	CpuMask m;
	for (const unsigned cpu : cpus) {
		if (cpu / 64 >= m.words.size())
			m.words.resize(cpu / 64 + 1);
		m.words[cpu / 64] |= std::uint64_t{1} << (cpu % 64);
	}
	for (std::size_t w = 0; w < m.words.size(); ++w)
		for (unsigned b = 0; b < 64; ++b)
			if ((m.words[w] >> b) & 1)
				m.cpus.push_back(static_cast<unsigned>(w * 64 + b));
	return m;
}

} // namespace amupmu::detail

#endif
