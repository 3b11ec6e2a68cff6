// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/bits.hpp>
#include <amupmu/events.hpp>

#include <array>
#include <iterator>

namespace amupmu {

namespace {

// Architectural common events 0x00-0x3F (Arm ARM, "PMU events and event
// numbers"), indexed by number.
constexpr std::array<std::string_view, 0x40> common_events = {
	"SW_INCR",			// 0x00
	"L1I_CACHE_REFILL",		// 0x01
	"L1I_TLB_REFILL",		// 0x02
	"L1D_CACHE_REFILL",		// 0x03
	"L1D_CACHE",			// 0x04
	"L1D_TLB_REFILL",		// 0x05
	"LD_RETIRED",			// 0x06
	"ST_RETIRED",			// 0x07
	"INST_RETIRED",			// 0x08
	"EXC_TAKEN",			// 0x09
	"EXC_RETURN",			// 0x0A
	"CID_WRITE_RETIRED",		// 0x0B
	"PC_WRITE_RETIRED",		// 0x0C
	"BR_IMMED_RETIRED",		// 0x0D
	"BR_RETURN_RETIRED",		// 0x0E
	"UNALIGNED_LDST_RETIRED",	// 0x0F
	"BR_MIS_PRED",			// 0x10
	"CPU_CYCLES",			// 0x11
	"BR_PRED",			// 0x12
	"MEM_ACCESS",			// 0x13
	"L1I_CACHE",			// 0x14
	"L1D_CACHE_WB",			// 0x15
	"L2D_CACHE",			// 0x16
	"L2D_CACHE_REFILL",		// 0x17
	"L2D_CACHE_WB",			// 0x18
	"BUS_ACCESS",			// 0x19
	"MEMORY_ERROR",			// 0x1A
	"INST_SPEC",			// 0x1B
	"TTBR_WRITE_RETIRED",		// 0x1C
	"BUS_CYCLES",			// 0x1D
	"CHAIN",			// 0x1E
	"L1D_CACHE_ALLOCATE",		// 0x1F
	"L2D_CACHE_ALLOCATE",		// 0x20
	"BR_RETIRED",			// 0x21
	"BR_MIS_PRED_RETIRED",		// 0x22
	"STALL_FRONTEND",		// 0x23
	"STALL_BACKEND",		// 0x24
	"L1D_TLB",			// 0x25
	"L1I_TLB",			// 0x26
	"L2I_CACHE",			// 0x27
	"L2I_CACHE_REFILL",		// 0x28
	"L3D_CACHE_ALLOCATE",		// 0x29
	"L3D_CACHE_REFILL",		// 0x2A
	"L3D_CACHE",			// 0x2B
	"L3D_CACHE_WB",			// 0x2C
	"L2D_TLB_REFILL",		// 0x2D
	"L2I_TLB_REFILL",		// 0x2E
	"L2D_TLB",			// 0x2F
	"L2I_TLB",			// 0x30
	"REMOTE_ACCESS",		// 0x31
	"LL_CACHE",			// 0x32
	"LL_CACHE_MISS",		// 0x33
	"DTLB_WALK",			// 0x34
	"ITLB_WALK",			// 0x35
	"LL_CACHE_RD",			// 0x36
	"LL_CACHE_MISS_RD",		// 0x37
	"REMOTE_ACCESS_RD",		// 0x38
	"L1D_CACHE_LMISS_RD",		// 0x39
	"OP_RETIRED",			// 0x3A
	"OP_SPEC",			// 0x3B
	"STALL",			// 0x3C
	"STALL_SLOT_BACKEND",		// 0x3D
	"STALL_SLOT_FRONTEND",		// 0x3E
	"STALL_SLOT",			// 0x3F
};

// The extended common events (0x4000-0x403F) that have a name here; the
// others are listed by number only.
constexpr NamedEvent ext_events[] = {
	{0x4000, "SAMPLE_POP"},
	{0x4001, "SAMPLE_FEED"},
	{0x4002, "SAMPLE_FILTRATE"},
	{0x4003, "SAMPLE_COLLISION"},
	{0x4004, "CNT_CYCLES"},
	{0x4005, "STALL_BACKEND_MEM"},
	{0x4006, "L1I_CACHE_LMISS"},
	{0x4009, "L2D_CACHE_LMISS_RD"},
	{0x400A, "L2I_CACHE_LMISS"},
	{0x400B, "L3D_CACHE_LMISS_RD"},
	{0x400C, "TRB_WRAP"},
	{0x400E, "TRB_TRIG"},
	{0x4010, "TRCEXTOUT0"},
	{0x4011, "TRCEXTOUT1"},
	{0x4012, "TRCEXTOUT2"},
	{0x4013, "TRCEXTOUT3"},
	{0x4018, "CTI_TRIGOUT4"},
	{0x4019, "CTI_TRIGOUT5"},
	{0x401A, "CTI_TRIGOUT6"},
	{0x401B, "CTI_TRIGOUT7"},
	{0x4020, "LDST_ALIGN_LAT"},
	{0x4021, "LD_ALIGN_LAT"},
	{0x4022, "ST_ALIGN_LAT"},
	{0x4024, "MEM_ACCESS_CHECKED"},
	{0x4025, "MEM_ACCESS_CHECKED_RD"},
	{0x4026, "MEM_ACCESS_CHECKED_WR"},
};

// The common microarchitectural events 0x40-0xFF (Arm ARM, "Common
// microarchitectural events"; Linux include/linux/perf/arm_pmuv3.h names
// them ARMV8_IMPDEF_PERFCTR_*). PMCEID0/1 do not describe them.
constexpr NamedEvent micro_events[] = {
	{0x0040, "L1D_CACHE_RD"},
	{0x0041, "L1D_CACHE_WR"},
	{0x0042, "L1D_CACHE_REFILL_RD"},
	{0x0043, "L1D_CACHE_REFILL_WR"},
	{0x0044, "L1D_CACHE_REFILL_INNER"},
	{0x0045, "L1D_CACHE_REFILL_OUTER"},
	{0x0046, "L1D_CACHE_WB_VICTIM"},
	{0x0047, "L1D_CACHE_WB_CLEAN"},
	{0x0048, "L1D_CACHE_INVAL"},
	{0x004C, "L1D_TLB_REFILL_RD"},
	{0x004D, "L1D_TLB_REFILL_WR"},
	{0x004E, "L1D_TLB_RD"},
	{0x004F, "L1D_TLB_WR"},
	{0x0050, "L2D_CACHE_RD"},
	{0x0051, "L2D_CACHE_WR"},
	{0x0052, "L2D_CACHE_REFILL_RD"},
	{0x0053, "L2D_CACHE_REFILL_WR"},
	{0x0056, "L2D_CACHE_WB_VICTIM"},
	{0x0057, "L2D_CACHE_WB_CLEAN"},
	{0x0058, "L2D_CACHE_INVAL"},
	{0x005C, "L2D_TLB_REFILL_RD"},
	{0x005D, "L2D_TLB_REFILL_WR"},
	{0x005E, "L2D_TLB_RD"},
	{0x005F, "L2D_TLB_WR"},
	{0x0060, "BUS_ACCESS_RD"},
	{0x0061, "BUS_ACCESS_WR"},
	{0x0062, "BUS_ACCESS_SHARED"},
	{0x0063, "BUS_ACCESS_NOT_SHARED"},
	{0x0064, "BUS_ACCESS_NORMAL"},
	{0x0065, "BUS_ACCESS_PERIPH"},
	{0x0066, "MEM_ACCESS_RD"},
	{0x0067, "MEM_ACCESS_WR"},
	{0x0068, "UNALIGNED_LD_SPEC"},
	{0x0069, "UNALIGNED_ST_SPEC"},
	{0x006A, "UNALIGNED_LDST_SPEC"},
	{0x006C, "LDREX_SPEC"},
	{0x006D, "STREX_PASS_SPEC"},
	{0x006E, "STREX_FAIL_SPEC"},
	{0x006F, "STREX_SPEC"},
	{0x0070, "LD_SPEC"},
	{0x0071, "ST_SPEC"},
	{0x0072, "LDST_SPEC"},
	{0x0073, "DP_SPEC"},
	{0x0074, "ASE_SPEC"},
	{0x0075, "VFP_SPEC"},
	{0x0076, "PC_WRITE_SPEC"},
	{0x0077, "CRYPTO_SPEC"},
	{0x0078, "BR_IMMED_SPEC"},
	{0x0079, "BR_RETURN_SPEC"},
	{0x007A, "BR_INDIRECT_SPEC"},
	{0x007C, "ISB_SPEC"},
	{0x007D, "DSB_SPEC"},
	{0x007E, "DMB_SPEC"},
	{0x0081, "EXC_UNDEF"},
	{0x0082, "EXC_SVC"},
	{0x0083, "EXC_PABORT"},
	{0x0084, "EXC_DABORT"},
	{0x0086, "EXC_IRQ"},
	{0x0087, "EXC_FIQ"},
	{0x0088, "EXC_SMC"},
	{0x008A, "EXC_HVC"},
	{0x008B, "EXC_TRAP_PABORT"},
	{0x008C, "EXC_TRAP_DABORT"},
	{0x008D, "EXC_TRAP_OTHER"},
	{0x008E, "EXC_TRAP_IRQ"},
	{0x008F, "EXC_TRAP_FIQ"},
	{0x0090, "RC_LD_SPEC"},
	{0x0091, "RC_ST_SPEC"},
	{0x00A0, "L3D_CACHE_RD"},
	{0x00A1, "L3D_CACHE_WR"},
	{0x00A2, "L3D_CACHE_REFILL_RD"},
	{0x00A3, "L3D_CACHE_REFILL_WR"},
	{0x00A6, "L3D_CACHE_WB_VICTIM"},
	{0x00A7, "L3D_CACHE_WB_CLEAN"},
	{0x00A8, "L3D_CACHE_INVAL"},
};

// Events base .. base+31 for the set bits of a 32-bit PMCEID half.
void append_events(std::vector<std::uint16_t>& out, std::uint64_t half, std::uint16_t base)
{
	for (unsigned n = 0; n < 32; ++n)
		if ((half >> n) & 1)
			out.push_back(static_cast<std::uint16_t>(base + n));
}

} // namespace

std::vector<std::uint16_t> implemented_events(std::uint64_t pmceid0, std::uint64_t pmceid1, bool ext)
{
	std::vector<std::uint16_t> events;
	append_events(events, field<31, 0>(pmceid0), 0x00);
	append_events(events, field<31, 0>(pmceid1), 0x20);
	if (ext) {
		append_events(events, field<63, 32>(pmceid0), ext_event_base);
		append_events(events, field<63, 32>(pmceid1), ext_event_base + 0x20);
	}
	return events;
}

std::vector<std::uint16_t> implemented_events(const CpuInfo& cpu)
{
	if (!cpu.has_pmu())
		return {};
	return implemented_events(cpu.pmceid0, cpu.pmceid1, cpu.pmceid_ext());
}

std::string_view event_name(std::uint16_t event) noexcept
{
	if (event < common_events.size())
		return common_events[event];
	for (const NamedEvent& e : micro_events)
		if (e.number == event)
			return e.name;
	for (const NamedEvent& e : ext_events)
		if (e.number == event)
			return e.name;
	return {};
}

std::span<const NamedEvent> common_events_named()
{
	static const std::vector<NamedEvent> all = [] {
		std::vector<NamedEvent> v;
		for (std::size_t n = 0; n < common_events.size(); ++n)
			v.push_back({static_cast<std::uint16_t>(n), common_events[n]});
		v.insert(v.end(), std::begin(micro_events), std::end(micro_events));
		v.insert(v.end(), std::begin(ext_events), std::end(ext_events));
		return v;
	}();
	return all;
}

bool pmceid_describes(std::uint16_t event) noexcept
{
	return event < 0x40 || (event >= ext_event_base && event < ext_event_base + 0x40);
}

std::optional<bool> cpu_implements(const CpuInfo& cpu, std::uint16_t event) noexcept
{
	if (!pmceid_describes(event))
		return std::nullopt;
	if (!cpu.has_pmu())
		return false;
	if (event >= ext_event_base && !cpu.pmceid_ext())
		return false;
	const unsigned n = event >= ext_event_base ? event - ext_event_base : event;
	const std::uint64_t reg = n < 0x20 ? cpu.pmceid0 : cpu.pmceid1;
	const unsigned bitpos = (n & 0x1F) + (event >= ext_event_base ? 32 : 0);
	return ((reg >> bitpos) & 1) != 0;
}

std::string_view amu_event_name(std::uint16_t event) noexcept
{
	switch (event) {
	case amu_ev::cpu_cycles: return "CPU_CYCLES";
	case amu_ev::cnt_cycles: return "CNT_CYCLES";
	case amu_ev::inst_retired: return "INST_RETIRED";
	case amu_ev::stall_backend_mem: return "STALL_BACKEND_MEM";
	default: return event_name(event);
	}
}

} // namespace amupmu
