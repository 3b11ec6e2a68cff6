// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Decoding of the PMUv3, AMU and SPE configuration registers AMUPMU_INFO
// reports (PMCR_EL0, PMMIR_EL1, AMCFGR_EL0, AMCGCR_EL0, AMCR_EL0,
// PMSIDR_EL1). Field positions are the Arm ARM's (DDI 0487). Pure
// functions: no device needed, nothing throws. A CPU's identity and
// features are in cpu.hpp, its PMCEID events in events.hpp.
#ifndef AMUPMU_DECODE_HPP
#define AMUPMU_DECODE_HPP

#include <amupmu/bits.hpp>

#include <cstdint>

namespace amupmu {

// ---------------------------------------------------------------- PMUv3

/// PMCR_EL0 fields.
struct Pmcr {
	unsigned n = 0;		///< [15:11] event counters besides the cycle counter
	bool lp = false;	///< [7] event counter overflow on 64 bits
	bool lc = false;	///< [6] cycle counter overflow on 64 bits
	bool enabled = false;	///< [0] E
	unsigned imp = 0;	///< [31:24] implementer code (older PMUs; RAZ since v3p7)

	friend constexpr bool operator==(const Pmcr&, const Pmcr&) = default;
};

/// Splits PMCR_EL0 into its fields.
[[nodiscard]] constexpr Pmcr decode_pmcr(std::uint64_t pmcr) noexcept
{
	return Pmcr{
		.n = static_cast<unsigned>(field<15, 11>(pmcr)),
		.lp = bit<7>(pmcr),
		.lc = bit<6>(pmcr),
		.enabled = bit<0>(pmcr),
		.imp = static_cast<unsigned>(field<31, 24>(pmcr)),
	};
}

/// PMMIR_EL1.SLOTS [7:0]: operations the PE can handle per cycle; 0 when
/// not reported.
[[nodiscard]] constexpr unsigned pmmir_slots(std::uint64_t pmmir) noexcept
{
	return static_cast<unsigned>(field<7, 0>(pmmir));
}

// ---------------------------------------------------------------- AMU

/// AMCFGR_EL0 and AMCGCR_EL0 fields.
struct AmuConfig {
	unsigned groups = 0;		///< AMCFGR.NCG [31:28] + 1
	unsigned counters = 0;		///< AMCFGR.N [7:0] + 1, all groups
	unsigned counter_bits = 0;	///< AMCFGR.SIZE [13:8] + 1
	bool hdbg = false;		///< AMCFGR.HDBG [24]: halt-on-debug control
	unsigned group0_counters = 0;	///< AMCGCR.CG0NC [7:0] (architected)
	unsigned group1_counters = 0;	///< AMCGCR.CG1NC [15:8] (auxiliary)

	friend constexpr bool operator==(const AmuConfig&, const AmuConfig&) = default;
};

/// Splits AMCFGR_EL0 and AMCGCR_EL0 into their fields.
[[nodiscard]] constexpr AmuConfig decode_amu(std::uint64_t amcfgr, std::uint64_t amcgcr) noexcept
{
	return AmuConfig{
		.groups = static_cast<unsigned>(field<31, 28>(amcfgr)) + 1,
		.counters = static_cast<unsigned>(field<7, 0>(amcfgr)) + 1,
		.counter_bits = static_cast<unsigned>(field<13, 8>(amcfgr)) + 1,
		.hdbg = bit<24>(amcfgr),
		.group0_counters = static_cast<unsigned>(field<7, 0>(amcgcr)),
		.group1_counters = static_cast<unsigned>(field<15, 8>(amcgcr)),
	};
}

/// AMCR_EL0 fields (amupmu reads the register, never writes it).
struct Amcr {
	bool hdbg = false;	///< [10] counters halted while the PE is in Debug state
	bool cg1rz = false;	///< [17] (AMUv1p1) group 1 counters read zero below the highest EL

	friend constexpr bool operator==(const Amcr&, const Amcr&) = default;
};

/// Splits AMCR_EL0 into its fields.
[[nodiscard]] constexpr Amcr decode_amcr(std::uint64_t amcr) noexcept
{
	return Amcr{.hdbg = bit<10>(amcr), .cg1rz = bit<17>(amcr)};
}

// ---------------------------------------------------------------- SPE

/// PMSIDR_EL1 fields.
struct SpeId {
	bool filter_event = false;	///< FE [0]: filtering by event
	bool filter_type = false;	///< FT [1]: filtering by operation type
	bool filter_latency = false;	///< FL [2]: filtering by latency
	bool arch_inst = false;		///< ArchInst [3]: architectural instruction profiling
	bool lds = false;		///< LDS [4]: data source indicator for loads
	bool ernd = false;		///< ERnd [5]: random interval perturbation
	bool filter_not_event = false;	///< FnE [6]: inverted event filter
	bool pbt = false;		///< PBT [24]: previous branch target address packet
	unsigned interval_code = 0;	///< Interval [11:8]
	unsigned max_size_code = 0;	///< MaxSize [15:12]
	unsigned count_size_code = 0;	///< CountSize [19:16]
	unsigned format = 0;		///< Format [23:20]: record format

	/// The recommended minimum sampling interval (PMSIRR_EL1.INTERVAL); 0
	/// when the code is reserved.
	[[nodiscard]] constexpr unsigned min_interval() const noexcept
	{
		constexpr unsigned table[16] = {256, 0, 512, 768, 1024, 1536, 2048, 3072, 4096};
		return table[interval_code & 0xF];
	}
	/// The largest record in bytes (a power of two, 16..2048); 0 when
	/// the code is reserved.
	[[nodiscard]] constexpr unsigned max_record_bytes() const noexcept
	{
		return max_size_code >= 4 && max_size_code <= 11 ? 1u << max_size_code : 0;
	}
	/// The width of the records' saturating counters (12 or 16); 0 when
	/// the code is reserved.
	[[nodiscard]] constexpr unsigned count_bits() const noexcept
	{
		return count_size_code == 2 ? 12 : count_size_code == 3 ? 16 : 0;
	}

	friend constexpr bool operator==(const SpeId&, const SpeId&) = default;
};

/// Splits PMSIDR_EL1 into its fields.
[[nodiscard]] constexpr SpeId decode_pmsidr(std::uint64_t pmsidr) noexcept
{
	return SpeId{
		.filter_event = bit<0>(pmsidr),
		.filter_type = bit<1>(pmsidr),
		.filter_latency = bit<2>(pmsidr),
		.arch_inst = bit<3>(pmsidr),
		.lds = bit<4>(pmsidr),
		.ernd = bit<5>(pmsidr),
		.filter_not_event = bit<6>(pmsidr),
		.pbt = bit<24>(pmsidr),
		.interval_code = static_cast<unsigned>(field<11, 8>(pmsidr)),
		.max_size_code = static_cast<unsigned>(field<15, 12>(pmsidr)),
		.count_size_code = static_cast<unsigned>(field<19, 16>(pmsidr)),
		.format = static_cast<unsigned>(field<23, 20>(pmsidr)),
	};
}

} // namespace amupmu

#endif
