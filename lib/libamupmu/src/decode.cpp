// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/decode.hpp>

#include <array>

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
struct NamedEvent {
	std::uint16_t number;
	std::string_view name;
};
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

// Events base .. base+31 for the set bits of a 32-bit PMCEID half.
void append_events(std::vector<std::uint16_t>& out, std::uint64_t half, std::uint16_t base)
{
	for (unsigned n = 0; n < 32; ++n)
		if ((half >> n) & 1)
			out.push_back(static_cast<std::uint16_t>(base + n));
}

} // namespace

std::string_view pmu_version_name(unsigned pmuver) noexcept
{
	switch (pmuver) {
	case 0x0: return "none";
	case 0x1: return "PMUv3";
	case 0x4: return "PMUv3p1";
	case 0x5: return "PMUv3p4";
	case 0x6: return "PMUv3p5";
	case 0x7: return "PMUv3p7";
	case 0x8: return "PMUv3p8";
	case 0x9: return "PMUv3p9";
	case 0xF: return "IMPLEMENTATION DEFINED";
	default: return "reserved";
	}
}

std::string_view spe_version_name(unsigned pmsver) noexcept
{
	switch (pmsver) {
	case 0x0: return "none";
	case 0x1: return "SPE";
	case 0x2: return "SPEv1p1";
	case 0x3: return "SPEv1p2";
	case 0x4: return "SPEv1p3";
	case 0x5: return "SPEv1p4";
	default: return "reserved";
	}
}

std::string_view amu_version_name(unsigned amu) noexcept
{
	switch (amu) {
	case 0x0: return "none";
	case 0x1: return "AMUv1";
	case 0x2: return "AMUv1p1";
	default: return "reserved";
	}
}

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
	for (const NamedEvent& e : ext_events)
		if (e.number == event)
			return e.name;
	return {};
}

} // namespace amupmu
