// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Decoding of the PMUv3, SPE and AMU identification registers that
// AMUPMU_INFO reports. Pure functions: no device needed. Field positions are
// those of the Arm ARM (DDI 0487).
#ifndef AMUPMU_DECODE_HPP
#define AMUPMU_DECODE_HPP

#include <amupmu/bits.hpp>
#include <amupmu/info.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace amupmu {

// ---------------------------------------------------------------- ID registers

/// ID_AA64DFR0_EL1.PMUVer [11:8]
[[nodiscard]] constexpr unsigned dfr0_pmuver(std::uint64_t dfr0) noexcept
{
	return static_cast<unsigned>(field<11, 8>(dfr0));
}
/// ID_AA64DFR0_EL1.PMSVer [35:32]
[[nodiscard]] constexpr unsigned dfr0_pmsver(std::uint64_t dfr0) noexcept
{
	return static_cast<unsigned>(field<35, 32>(dfr0));
}
/// ID_AA64DFR0_EL1.TraceBuffer [47:44]
[[nodiscard]] constexpr unsigned dfr0_tracebuffer(std::uint64_t dfr0) noexcept
{
	return static_cast<unsigned>(field<47, 44>(dfr0));
}
/// ID_AA64DFR0_EL1.BRBE [55:52]
[[nodiscard]] constexpr unsigned dfr0_brbe(std::uint64_t dfr0) noexcept
{
	return static_cast<unsigned>(field<55, 52>(dfr0));
}
/// ID_AA64PFR0_EL1.EL2 [11:8]: 0 when the CPU does not implement EL2
[[nodiscard]] constexpr unsigned pfr0_el2(std::uint64_t pfr0) noexcept
{
	return static_cast<unsigned>(field<11, 8>(pfr0));
}
/// ID_AA64PFR0_EL1.AMU [47:44]
[[nodiscard]] constexpr unsigned pfr0_amu(std::uint64_t pfr0) noexcept
{
	return static_cast<unsigned>(field<47, 44>(pfr0));
}

inline constexpr unsigned pmuver_none = 0x0;
inline constexpr unsigned pmuver_v3 = 0x1;
inline constexpr unsigned pmuver_v3p1 = 0x4;
inline constexpr unsigned pmuver_v3p4 = 0x5;
inline constexpr unsigned pmuver_imp_def = 0xF;

/// PMUv3 is implemented: PMUVer is neither 0 (none) nor 0xF (IMPDEF PMU).
[[nodiscard]] constexpr bool pmuver_is_pmuv3(unsigned pmuver) noexcept
{
	return pmuver != pmuver_none && pmuver != pmuver_imp_def;
}

/// "none", "PMUv3", "PMUv3p1", "PMUv3p4" ... "PMUv3p9",
/// "IMPLEMENTATION DEFINED"; "reserved" for unallocated values.
[[nodiscard]] std::string_view pmu_version_name(unsigned pmuver) noexcept;
/// "none", "SPE", "SPEv1p1" ... "SPEv1p4"; "reserved" otherwise.
[[nodiscard]] std::string_view spe_version_name(unsigned pmsver) noexcept;
/// "none", "AMUv1", "AMUv1p1"; "reserved" otherwise.
[[nodiscard]] std::string_view amu_version_name(unsigned amu) noexcept;

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

/// PMMIR_EL1.SLOTS [7:0]: operations the PE can handle per cycle (0: not
/// reported).
[[nodiscard]] constexpr unsigned pmmir_slots(std::uint64_t pmmir) noexcept
{
	return static_cast<unsigned>(field<7, 0>(pmmir));
}

/// First extended common event number (PMCEID<n>_EL0 bits [63:32]).
inline constexpr std::uint16_t ext_event_base = 0x4000;

/// The common events PMCEID0/1 mark implemented, ascending: 0x00-0x3F from
/// bits [31:0] of each register, plus 0x4000-0x403F from bits [63:32] only
/// when ext (PMUv3p1 or later; AMUPMU_CPU_PMCEID_EXT) is set.
[[nodiscard]] std::vector<std::uint16_t> implemented_events(std::uint64_t pmceid0,
							    std::uint64_t pmceid1, bool ext);
/// implemented_events() of a CPU's report (empty without a PMU).
[[nodiscard]] std::vector<std::uint16_t> implemented_events(const CpuInfo& cpu);

/// Architectural name of a common event ("INST_RETIRED", "EXC_UNDEF");
/// empty if unknown.
[[nodiscard]] std::string_view event_name(std::uint16_t event) noexcept;

/// A common event number and its Arm ARM name.
struct NamedEvent {
	std::uint16_t number;
	std::string_view name;
};

/// Every named common event: architectural 0x00-0x3F, the common
/// microarchitectural 0x40-0xFF and the extended 0x4000-0x403F ones,
/// ascending within each range.
[[nodiscard]] std::span<const NamedEvent> common_events_named();

/// PMCEID0/1 describe the event (0x00-0x3F; 0x4000-0x403F in their upper
/// halves). Other numbers can only be tried.
[[nodiscard]] bool pmceid_describes(std::uint16_t event) noexcept;

/// Whether the CPU's PMCEID0/1 mark the event implemented; nullopt when
/// PMCEID does not describe the event. The upper halves count only with
/// AMUPMU_CPU_PMCEID_EXT.
[[nodiscard]] std::optional<bool> cpu_implements(const CpuInfo& cpu, std::uint16_t event) noexcept;

// ---------------------------------------------------------------- AMU

/// AMCFGR_EL0 and AMCGCR_EL0.
struct AmuConfig {
	unsigned groups = 0;		///< AMCFGR.NCG [31:28] + 1
	unsigned counters = 0;		///< AMCFGR.N [7:0] + 1, all groups
	unsigned counter_bits = 0;	///< AMCFGR.SIZE [13:8] + 1
	bool hdbg = false;		///< AMCFGR.HDBG [24]: halt-on-debug control
	unsigned group0_counters = 0;	///< AMCGCR.CG0NC [7:0] (architected)
	unsigned group1_counters = 0;	///< AMCGCR.CG1NC [15:8] (auxiliary)

	friend constexpr bool operator==(const AmuConfig&, const AmuConfig&) = default;
};

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

/// AMCR_EL0 (amupmu reads it, never writes it).
struct Amcr {
	bool hdbg = false;	///< [10] counters halted while the PE is in Debug state
	bool cg1rz = false;	///< [17] (AMUv1p1) group 1 counters read zero below the highest EL

	friend constexpr bool operator==(const Amcr&, const Amcr&) = default;
};

[[nodiscard]] constexpr Amcr decode_amcr(std::uint64_t amcr) noexcept
{
	return Amcr{.hdbg = bit<10>(amcr), .cg1rz = bit<17>(amcr)};
}

/// The architected AMU events (AMEVTYPER0<n>_EL0.evtCount of group 0 on
/// AMUv1: counters 0-3 in this order, but look them up, never assume).
namespace amu_ev {
inline constexpr std::uint16_t cpu_cycles = 0x0011;		///< core cycles
inline constexpr std::uint16_t cnt_cycles = 0x4004;		///< constant-frequency cycles (system counter rate; not in WFI/WFE)
inline constexpr std::uint16_t inst_retired = 0x0008;		///< instructions retired
inline constexpr std::uint16_t stall_backend_mem = 0x4005;	///< cycles stalled on the memory system
} // namespace amu_ev

/// "CPU_CYCLES", "CNT_CYCLES", "INST_RETIRED", "STALL_BACKEND_MEM", else the
/// PMU common event's name (event_name()) or empty.
[[nodiscard]] std::string_view amu_event_name(std::uint16_t event) noexcept;

/// Index of the group 0 / group 1 counter that counts event among the
/// first n event types; nullopt when none does.
[[nodiscard]] std::optional<unsigned> amu_counter_of(std::span<const std::uint16_t> types, unsigned n,
						     std::uint16_t event) noexcept;

// ---------------------------------------------------------------- SPE

/// PMSIDR_EL1.
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

	/// Recommended minimum sampling interval (PMSIRR_EL1.INTERVAL); 0 if
	/// the code is reserved.
	[[nodiscard]] constexpr unsigned min_interval() const noexcept
	{
		constexpr unsigned table[16] = {256, 0, 512, 768, 1024, 1536, 2048, 3072, 4096};
		return table[interval_code & 0xF];
	}
	/// Largest record in bytes (a power of two, 16..2048); 0 if reserved.
	[[nodiscard]] constexpr unsigned max_record_bytes() const noexcept
	{
		return max_size_code >= 4 && max_size_code <= 11 ? 1u << max_size_code : 0;
	}
	/// Width of the saturating counters in records (12 or 16); 0 if reserved.
	[[nodiscard]] constexpr unsigned count_bits() const noexcept
	{
		return count_size_code == 2 ? 12 : count_size_code == 3 ? 16 : 0;
	}

	friend constexpr bool operator==(const SpeId&, const SpeId&) = default;
};

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
