// SPDX-License-Identifier: GPL-2.0
//
// Synthetic AMUPMU_INFO reports for the host tests.
#ifndef AMUPMU_TESTS_FIXTURES_HPP
#define AMUPMU_TESTS_FIXTURES_HPP

#include <amupmu/info.hpp>

#include <cstdint>
#include <initializer_list>

namespace amupmu::test {

constexpr std::uint32_t flags_of(std::initializer_list<CpuFlag> flags)
{
	std::uint32_t v = 0;
	for (const CpuFlag f : flags)
		v |= static_cast<std::uint32_t>(f);
	return v;
}

constexpr std::uint64_t bit64(unsigned n)
{
	return std::uint64_t{1} << n;
}

/// What QEMU -cpu max reports: MIDR 0x000f0510, PMUv3p5 with 6 counters,
/// no AMU, no SPE.
inline CpuInfo qemu_max_cpu(std::uint32_t cpu)
{
	CpuInfo c;
	c.cpu = cpu;
	c.flags = flags_of({CpuFlag::possible, CpuFlag::online, CpuFlag::discovered, CpuFlag::pmu,
			    CpuFlag::pmceid_ext, CpuFlag::pmmir});
	c.midr = 0x000f0510;
	c.id_aa64dfr0 = 0x0000000000000609;	// PMUVer 6 (v3p5), DebugVer 9
	c.pmcr = 0x41003000;			// IMP 0x41, N 6
	c.pmceid0 = bit64(0x00) | bit64(0x08) | bit64(0x11) | bit64(32 + 0x04);	// + 0x4004
	c.pmceid1 = bit64(0x21 - 0x20) | bit64(0x3F - 0x20);
	c.pmmir = 0;
	c.pmu_version = 6;
	c.pmu_num_counters = 6;
	return c;
}

/// A Cortex-X2 r2p1 with AMU and SPE from the mock register model.
inline CpuInfo mock_x2_cpu(std::uint32_t cpu)
{
	CpuInfo c;
	c.cpu = cpu;
	c.flags = flags_of({CpuFlag::possible, CpuFlag::online, CpuFlag::discovered, CpuFlag::pmu,
			    CpuFlag::pmceid_ext, CpuFlag::pmmir, CpuFlag::amu, CpuFlag::spe,
			    CpuFlag::mock});
	c.midr = 0x412FD481;
	c.id_aa64dfr0 = (std::uint64_t{3} << 32) | 0x609;	// SPEv1p2, PMUv3p5
	c.id_aa64pfr0 = std::uint64_t{2} << 44;			// AMUv1p1
	c.pmcr = 6u << 11;
	c.pmceid0 = 0xffffffff;
	c.pmceid1 = 0xffffffff;
	c.pmmir = 8;
	c.amcfgr = 0x11003F06;	// NCG 1, HDBG, SIZE 63, N 6
	c.amcgcr = 0x0304;	// CG1NC 3, CG0NC 4
	c.pmsidr = 0x26417;	// FE FT FL LDS, interval 1024, 64 B, 12-bit, format 0
	c.pmu_version = 6;
	c.pmu_num_counters = 6;
	c.amu_version = 2;
	c.spe_version = 3;
	c.amcr = 0;
	c.amcntenset0 = 0xF;
	c.amcntenset1 = 0x7;
	c.amevtyper0 = {0x0011, 0x4004, 0x0008, 0x4005};	// CPU_CYCLES, CNT_CYCLES, INST_RETIRED, STALL_BACKEND_MEM
	c.amevtyper1 = {0x0301, 0x0302, 0x0303};		// IMPLEMENTATION DEFINED
	return c;
}

/// A possible CPU that has never been online: no register data.
inline CpuInfo offline_cpu(std::uint32_t cpu)
{
	CpuInfo c;
	c.cpu = cpu;
	c.flags = flags_of({CpuFlag::possible});
	return c;
}

/// QEMU virt board: two CPUs (the second offline and undiscovered), kernel
/// arm_pmu owns the PMU, shared mode off (pmu_shared=N).
inline Info qemu_info()
{
	Info info;
	info.abi_major = abi_major;
	info.abi_minor = abi_minor;
	info.features = static_cast<std::uint64_t>(Feature::pmu);
	info.supported_ioctls = 1;
	info.pmu_owner = PmuOwner::kernel;
	info.cpus = {qemu_max_cpu(0), offline_cpu(1)};
	info.kernel_el = 1;
	info.clock = Clock::cntvct;
	return info;
}

/// The same board with shared mode on (ABI 2.3, pmu_shared=Y): arm_pmu
/// owns the PMU, amupmu counts through perf core.
inline Info shared_info()
{
	Info info = qemu_info();
	info.features |= static_cast<std::uint64_t>(Feature::pmu_shared);
	return info;
}

/// A test build with the mock AMU/SPE backend and an exclusive PMU, on a
/// VHE host; a session holds counters 0 and 1 of CPU 0.
inline Info mock_info()
{
	Info info = qemu_info();
	info.features = 0x1F;
	info.pmu_owner = PmuOwner::amupmu;
	info.cpus = {mock_x2_cpu(0), mock_x2_cpu(1), offline_cpu(2)};
	info.cpus[0].pmu_counters_free = 0x8000003c;	// 2-5 and the cycle counter
	info.cpus[1].pmu_counters_free = 0x8000003f;
	info.kernel_el = 2;
	info.clock = Clock::cntpct;
	return info;
}

} // namespace amupmu::test

#endif
