// SPDX-License-Identifier: GPL-2.0
//
// Event catalogue [host]: pure logic, no device. Golden numbers from the
// Arm ARM / include/linux/perf/arm_pmuv3.h, typed in here independently of
// the library's tables.
#include "fixtures.hpp"

#include <amupmu/events.hpp>

#include <linux/amupmu.h>

#include <catch2/catch.hpp>

#include <cerrno>

using namespace amupmu;
using Catch::Matchers::Contains;

namespace {

constexpr std::uint64_t x2_r2p1 = 0x412FD481;
constexpr std::uint64_t qemu_max = 0x000f0510;

struct Golden {
	const char* name;
	std::uint16_t number;
};

// ARMV8_PMUV3_PERFCTR_* / ARMV8_IMPDEF_PERFCTR_* of Linux 6.12
constexpr Golden golden[] = {
	{"sw_incr", 0x00},	     {"l1i_cache_refill", 0x01}, {"l1d_cache_refill", 0x03},
	{"l1d_cache", 0x04},	     {"inst_retired", 0x08},	 {"exc_taken", 0x09},
	{"exc_return", 0x0A},	     {"pc_write_retired", 0x0C}, {"br_mis_pred", 0x10},
	{"cpu_cycles", 0x11},	     {"br_pred", 0x12},		 {"mem_access", 0x13},
	{"l2d_cache", 0x16},	     {"l2d_cache_refill", 0x17}, {"inst_spec", 0x1B},
	{"bus_cycles", 0x1D},	     {"chain", 0x1E},		 {"br_retired", 0x21},
	{"br_mis_pred_retired", 0x22}, {"stall_frontend", 0x23}, {"stall_backend", 0x24},
	{"ll_cache_miss_rd", 0x37},  {"stall_slot", 0x3F},	 {"l1d_cache_rd", 0x40},
	{"l1d_cache_wr", 0x41},	     {"l1d_cache_refill_rd", 0x42}, {"l2d_cache_rd", 0x50},
	{"ld_spec", 0x70},	     {"st_spec", 0x71},		 {"br_indirect_spec", 0x7A},
	{"exc_undef", 0x81},	     {"exc_svc", 0x82},		 {"exc_irq", 0x86},
	{"exc_hvc", 0x8A},	     {"exc_trap_other", 0x8D},	 {"l3d_cache_rd", 0xA0},
	{"stall_backend_mem", 0x4005}, {"l1i_cache_lmiss", 0x4006}, {"ldst_align_lat", 0x4020},
};

} // namespace

TEST_CASE("golden event names <-> numbers", "[host][events]")
{
	for (const Golden& g : golden) {
		INFO(g.name);
		const auto e = find_event(g.name, qemu_max);
		REQUIRE(e);
		CHECK(e->number == g.number);
		CHECK(e->source == EventSource::common);
		CHECK(event_display_name(g.number, qemu_max) == g.name);
	}
}

TEST_CASE("names are case-insensitive; perf aliases", "[host][events]")
{
	CHECK(find_event("L1D_CACHE_REFILL", 0)->number == 0x03);
	CHECK(find_event("Inst_Retired", 0)->number == 0x08);
	CHECK(find_event("cycles", 0)->number == 0x11);
	CHECK(find_event("instructions", 0)->number == 0x08);
	CHECK(find_event("branch-misses", 0)->number == 0x10);
	CHECK_FALSE(find_event("l1d_miss", 0));
}

TEST_CASE("the Cortex-X2 table is chosen by MIDR", "[host][events]")
{
	const auto e = find_event("imp_stall_backend_mcq", x2_r2p1);
	REQUIRE(e);
	CHECK(e->number == 0x0160);
	CHECK(e->source == EventSource::core);
	// any revision of the part
	CHECK(find_event("imp_stall_backend_mcq", 0x410FD480));
	// not on another core or implementer
	CHECK_FALSE(find_event("imp_stall_backend_mcq", qemu_max));
	CHECK_FALSE(find_event("imp_stall_backend_mcq", 0x410FD4F0));	// Neoverse V2
	CHECK_FALSE(find_event("imp_stall_backend_mcq", 0x4E0FD480));	// NVIDIA, same part number
	REQUIRE(core_table(x2_r2p1));
	CHECK(core_table(x2_r2p1)->core == "Cortex-X2");
	CHECK(event_display_name(0x160, x2_r2p1) == "imp_stall_backend_mcq");
	CHECK(event_display_name(0x160, qemu_max) == "r160");
}

TEST_CASE("parse_event: raw events and modifiers", "[host][events]")
{
	const EventSpec r = parse_event("r160", qemu_max);
	CHECK(r.number == 0x160);
	CHECK(r.source == EventSource::raw);
	CHECK((r.flags & evflag::raw) != 0);	// PMCEID does not describe 0x160
	CHECK(parse_event("r8", 0).flags == 0);	// 0x08 is checked against PMCEID
	CHECK(parse_event("R11", 0).number == 0x11);
	CHECK_THROWS_AS(parse_event("r10000", 0), InvalidArgument);

	const EventSpec u = parse_event("inst_retired:u", 0);
	CHECK(u.name == "inst_retired:u");
	CHECK(u.flags == (AMUPMU_EV_EXCL_KERNEL | AMUPMU_EV_EXCL_HV));
	CHECK(u.modifiers == "u");
	CHECK(parse_event("inst_retired", 0).modifiers.empty());
	const EventSpec ku = parse_event("cpu_cycles:ku", 0);
	CHECK(ku.name == "cpu_cycles:ku");	// as typed
	CHECK(ku.modifiers == "uk");		// canonical
	CHECK(ku.flags == AMUPMU_EV_EXCL_HV);
	CHECK(parse_event("exc_undef", 0).flags == evflag::raw);	// 0x81: not in PMCEID
	CHECK(parse_event("exc_undef:k", 0).flags == (evflag::raw | AMUPMU_EV_EXCL_USER | AMUPMU_EV_EXCL_HV));
	CHECK(parse_event("r160:u", 0).flags == (evflag::raw | AMUPMU_EV_EXCL_KERNEL | AMUPMU_EV_EXCL_HV));
	CHECK_THROWS_WITH(parse_event("cpu_cycles:x", 0),
			  "event 'cpu_cycles:x': modifier 'x' (amupmu takes u, k, h, G, H): "
			  "Invalid argument (EINVAL)");
	CHECK_THROWS_AS(parse_event("cpu_cycles:", 0), InvalidArgument);
	CHECK_THROWS_AS(parse_event("", 0), InvalidArgument);

	const auto list = parse_event_list("cycles,inst_retired:u,r81", 0);
	REQUIRE(list.size() == 3);
	CHECK(list[0].number == 0x11);
	CHECK(list[1].number == 0x08);
	CHECK(list[2].number == 0x81);
}

TEST_CASE("perf's generic events as Linux's PMUv3 driver maps them", "[host][events]")
{
	// drivers/perf/arm_pmuv3.c: armv8_pmuv3_perf_map, armv8_pmuv3_perf_cache_map
	const struct {
		const char* name;
		std::uint16_t number;
	} golden[] = {
		{"cycles", 0x11},
		{"cpu-cycles", 0x11},
		{"instructions", 0x08},
		{"cache-references", 0x04},
		{"cache-misses", 0x03},
		{"branches", 0x21},
		{"branch-instructions", 0x21},
		{"branch-misses", 0x10},
		{"bus-cycles", 0x1D},
		{"stalled-cycles-frontend", 0x23},
		{"idle-cycles-frontend", 0x23},
		{"stalled-cycles-backend", 0x24},
		{"idle-cycles-backend", 0x24},
		{"L1-dcache-loads", 0x04},
		{"L1-dcache-load-misses", 0x03},
		{"L1-icache-loads", 0x14},
		{"L1-icache-load-misses", 0x01},
		{"dTLB-loads", 0x25},
		{"dTLB-load-misses", 0x05},
		{"iTLB-loads", 0x26},
		{"iTLB-load-misses", 0x02},
		{"LLC-loads", 0x36},
		{"LLC-load-misses", 0x37},
		{"branch-loads", 0x12},
		{"branch-load-misses", 0x10},
	};
	for (const auto& g : golden) {
		INFO(g.name);
		const EventSpec e = parse_event(g.name, qemu_max);
		CHECK(e.number == g.number);
		CHECK(e.name == g.name);	// printed as perf prints it
		CHECK(e.source == EventSource::common);
		CHECK(parse_event(std::string{g.name} + ":u", 0).name == std::string{g.name} + ":u");
	}
	// the suggestions know them
	CHECK_THAT(UnknownEvent("x", closest_event_names("cache-mises", 0)).what(), Contains("'cache-misses'"));
}

TEST_CASE("perf's PMU syntax: amupmu/event=N/ with its modifiers", "[host][events]")
{
	const EventSpec e = parse_event("amupmu/event=0x11/", qemu_max);
	CHECK(e.number == 0x11);
	CHECK(e.name == "amupmu/event=0x11/");
	CHECK(e.flags == 0);
	CHECK(e.modifiers.empty());
	CHECK(parse_event("amupmu/config=17/", 0).number == 0x11);
	CHECK(parse_event("amupmu/event=0x160/", 0).flags == evflag::raw);	// not in PMCEID
	// modifiers after the last '/', with or without ':'
	const EventSpec u = parse_event("amupmu/event=0x8/u", 0);
	CHECK(u.number == 0x08);
	CHECK(u.name == "amupmu/event=0x8/u");
	CHECK(u.modifiers == "u");
	CHECK(u.flags == (AMUPMU_EV_EXCL_KERNEL | AMUPMU_EV_EXCL_HV));
	CHECK(parse_event("amupmu/event=0x8/:k", 0).flags == (AMUPMU_EV_EXCL_USER | AMUPMU_EV_EXCL_HV));
	// what perf would refuse, or amupmu cannot count
	CHECK_THROWS_WITH(parse_event("cpu/event=0x11/", 0),
			  Contains("PMU 'cpu' (amupmu's is 'amupmu': amupmu/event=0x11/)"));
	CHECK_THROWS_WITH(parse_event("amupmu/event=0x10000/", 0), Contains("16 bits at most"));
	CHECK_THROWS_WITH(parse_event("amupmu/umask=1/", 0), Contains("term 'umask=1'"));
	CHECK_THROWS_WITH(parse_event("amupmu/event=0x11,event=0x8/", 0), Contains("given twice"));
	CHECK_THROWS_WITH(parse_event("amupmu//", 0), Contains("no event=N term"));
	CHECK_THROWS_WITH(parse_event("amupmu/event=0x11", 0), Contains("no closing '/'"));
	CHECK_THROWS_WITH(parse_event("amupmu/event=zz/", 0), Contains("'event=zz'"));
	CHECK_THROWS_WITH(parse_event("amupmu/event=0x11/x", 0), Contains("modifier 'x'"));
	// in a list, its commas are its own
	const auto list = parse_event_list("cycles,amupmu/event=0x8/u,branches", 0);
	REQUIRE(list.size() == 3);
	CHECK(list[1].name == "amupmu/event=0x8/u");
	CHECK(list[2].number == 0x21);
}

TEST_CASE("perf's groups {a,b}: the events of a session count together anyway", "[host][events]")
{
	const auto g = parse_event_list("{cycles,instructions},branch-misses", 0);
	REQUIRE(g.size() == 3);
	CHECK(g[0].name == "cycles");
	CHECK(g[1].number == 0x08);
	CHECK(g[2].number == 0x10);
	// the group's modifiers join each member's
	const auto m = parse_event_list("{cycles,inst_retired:k,amupmu/event=0x12/}:u", 0);
	REQUIRE(m.size() == 3);
	CHECK(m[0].name == "cycles:u");
	CHECK(m[0].modifiers == "u");
	CHECK(m[1].modifiers == "uk");
	CHECK(m[2].name == "amupmu/event=0x12/u");
	CHECK(m[2].modifiers == "u");
	// two groups, PMU events inside
	CHECK(parse_event_list("{amupmu/event=0x11/,amupmu/event=0x8/},{branches}", 0).size() == 3);
	// malformed: an error naming the list, nothing parsed
	CHECK_THROWS_WITH(parse_event_list("{cycles,instructions", 0), Contains("'{' without '}'"));
	CHECK_THROWS_WITH(parse_event_list("cycles}", 0), Contains("'}' without '{'"));
	CHECK_THROWS_WITH(parse_event_list("{{cycles}}", 0), Contains("groups do not nest"));
	CHECK_THROWS_WITH(parse_event_list("{}", 0), Contains("is empty"));
	CHECK_THROWS_WITH(parse_event_list("{cycles}u", 0), Contains("':' expected after '}'"));
	CHECK_THROWS_WITH(parse_event_list("{cycles}:q", 0), Contains("modifier 'q'"));
}

TEST_CASE("modifiers: perf's parse-events golden table", "[host][events]")
{
	// tools/perf/util/parse-events.c, parse_events__modifier_list(): the
	// first of u/k/h sets exclude_user/kernel/hv, each one given clears
	// its own again; G/H likewise for exclude_guest/host; no default
	// exclude_guest outside perf kvm. Typed in from perf, not from the
	// library: the UAPI's constants are perf's attribute bits.
	constexpr std::uint32_t U = AMUPMU_EV_EXCL_USER, K = AMUPMU_EV_EXCL_KERNEL, HV = AMUPMU_EV_EXCL_HV;
	constexpr std::uint32_t HOST = AMUPMU_EV_EXCL_HOST, GUEST = AMUPMU_EV_EXCL_GUEST;
	struct Row {
		const char* mods = "";
		std::uint32_t flags = 0;
		const char* canonical = "";
	};
	constexpr Row rows[] = {
		{"u", K | HV, "u"},
		{"k", U | HV, "k"},
		{"h", U | K, "h"},
		{"uk", HV, "uk"},
		{"ku", HV, "uk"},
		{"uh", K, "uh"},
		{"kh", U, "kh"},
		{"ukh", 0, "ukh"},
		{"hku", 0, "ukh"},
		{"uu", K | HV, "u"},
		{"G", HOST, "G"},
		{"H", GUEST, "H"},
		{"GH", 0, "GH"},
		{"HG", 0, "GH"},
		{"uG", K | HV | HOST, "uG"},
		{"Gu", K | HV | HOST, "uG"},
		{"uH", K | HV | GUEST, "uH"},
		{"kG", U | HV | HOST, "kG"},
		{"kH", U | HV | GUEST, "kH"},
		{"hG", U | K | HOST, "hG"},
		{"ukhGH", 0, "ukhGH"},
		{"HkG", U | HV, "kGH"},
	};
	for (const Row& r : rows) {
		CAPTURE(r.mods);
		CHECK(parse_modifiers(r.mods) == r.flags);
		CHECK(canonical_modifiers(r.mods) == r.canonical);
		const EventSpec e = parse_event(std::string{"cpu_cycles:"} + r.mods, 0);
		CHECK(e.flags == r.flags);
		CHECK(e.modifiers == r.canonical);
	}
	// perf's other modifiers mean nothing here; case matters as in perf
	for (const char* bad : {"", "p", "pp", "P", "I", "S", "D", "W", "e", "b", "R", "U", "K", "uX", "u k"}) {
		CAPTURE(bad);
		CHECK_THROWS_AS(parse_modifiers(bad), InvalidArgument);
	}
	// perf_event_attr's words
	using V = std::vector<std::string_view>;
	CHECK(exclusion_names(0).empty());
	CHECK(exclusion_names(K | HV) == V{"kernel", "hv"});
	CHECK(exclusion_names(U | K | HV | HOST | GUEST | AMUPMU_EV_RAW) == V{"user", "kernel", "hv", "host", "guest"});
	STATIC_REQUIRE(evflag::exclusions == (U | K | HV | HOST | GUEST));
}

TEST_CASE("modifiers: the exception levels they count at (UAPI translation)", "[host][events]")
{
	constexpr std::uint32_t U = AMUPMU_EV_EXCL_USER, K = AMUPMU_EV_EXCL_KERNEL, HV = AMUPMU_EV_EXCL_HV;
	constexpr std::uint32_t HOST = AMUPMU_EV_EXCL_HOST, GUEST = AMUPMU_EV_EXCL_GUEST;
	struct Row {
		std::uint32_t flags = 0;
		std::uint32_t kernel_el = 0;
		bool has_el2 = false;
		CountedLevels levels{};
	};
	// include/uapi/linux/amupmu.h, enum amupmu_event_flags
	constexpr Row rows[] = {
		// VHE: the kernel at EL2, EL1 only guest kernels
		{0, 2, true, {.el0 = true, .el1 = true, .el2 = true}},
		{K | HV, 2, true, {.el0 = true, .el1 = false, .el2 = false}},	// :u
		{U | HV, 2, true, {.el0 = false, .el1 = true, .el2 = true}},	// :k
		{U | K, 2, true, {}},						// :h: nothing
		{HOST, 2, true, {.el0 = false, .el1 = true, .el2 = false}},	// :G
		{GUEST, 2, true, {.el0 = true, .el1 = false, .el2 = true}},	// :H
		{HV, 2, true, {.el0 = true, .el1 = true, .el2 = true}},		// exclude_hv ignored
		// the kernel at EL1, a hypervisor at EL2
		{0, 1, true, {.el0 = true, .el1 = true, .el2 = true}},
		{K | HV, 1, true, {.el0 = true, .el1 = false, .el2 = false}},	// :u
		{U | HV, 1, true, {.el0 = false, .el1 = true, .el2 = false}},	// :k
		{U | K, 1, true, {.el0 = false, .el1 = false, .el2 = true}},	// :h
		{HOST, 1, true, {.el0 = true, .el1 = true, .el2 = false}},	// :G
		{GUEST, 1, true, {.el0 = true, .el1 = true, .el2 = true}},	// :H changes nothing
		// no EL2 at all
		{0, 1, false, {.el0 = true, .el1 = true, .el2 = false}},
		{U | K, 1, false, {}},						// :h: nothing
	};
	for (const Row& r : rows) {
		CAPTURE(r.flags, r.kernel_el, r.has_el2);
		CHECK(counted_levels(r.flags, r.kernel_el, r.has_el2) == r.levels);
		CHECK(counted_levels(r.flags | AMUPMU_EV_RAW, r.kernel_el, r.has_el2) == r.levels);
	}
}

TEST_CASE("require_countable refuses what the driver would", "[host][events]")
{
	Info info;
	info.cpus = {test::qemu_max_cpu(0)};	// ID_AA64PFR0_EL1.EL2 0: no EL2
	const unsigned cpu0[] = {0};
	const std::vector<EventSpec> h = {parse_event("cpu_cycles:u", 0), parse_event("cpu_cycles:h", 0)};
	CHECK_NOTHROW(require_countable(h, info, cpu0));	// the driver did not say its EL
	info.kernel_el = 1;
	CHECK_THROWS_WITH(require_countable(h, info, cpu0),
			  "event 'cpu_cycles:h' counts at no exception level: the kernel runs at EL1 and CPU 0 "
			  "has no EL2: Invalid argument (EINVAL)");
	info.cpus[0].id_aa64pfr0 = 0x1111;	// EL0-EL3 AArch64
	CHECK_NOTHROW(require_countable(h, info, cpu0));
	info.kernel_el = 2;
	CHECK_THROWS_WITH(require_countable(h, info, cpu0), Contains("EL2 (VHE), where it is the hypervisor"));
	const std::vector<EventSpec> ok = {parse_event("cpu_cycles:k", 0), parse_event("inst_retired:G", 0)};
	CHECK_NOTHROW(require_countable(ok, info, cpu0));
}

TEST_CASE("an unknown name suggests the closest ones", "[host][events]")
{
	CHECK(edit_distance("kitten", "sitting") == 3);
	CHECK(edit_distance("ABC", "abc") == 0);
	CHECK(edit_distance("", "abc") == 3);

	try {
		(void)parse_event("l1d_cache_refil", qemu_max);
		FAIL("no exception");
	} catch (const UnknownEvent& e) {
		CHECK(e.errnum() == EINVAL);
		CHECK(e.name() == "l1d_cache_refil");
		REQUIRE_FALSE(e.suggestions().empty());
		CHECK(e.suggestions().front() == "l1d_cache_refill");
		CHECK_THAT(std::string{e.what()}, Contains("did you mean 'l1d_cache_refill'"));
	}
	CHECK(closest_event_names("br_mispred", qemu_max).front() == "br_mis_pred");
	CHECK(closest_event_names("imp_stall_backend_mqc", x2_r2p1).front() == "imp_stall_backend_mcq");
	// nothing close: no suggestion, still a clear message
	try {
		(void)parse_event("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", 0);
		FAIL("no exception");
	} catch (const UnknownEvent& e) {
		CHECK(e.suggestions().empty());
		CHECK_THAT(std::string{e.what()}, Contains("unknown event"));
	}
}

TEST_CASE("events the CPU lacks are found from PMCEID before programming", "[host][events]")
{
	Info info;
	info.cpus = {test::qemu_max_cpu(0), test::offline_cpu(1)};
	// qemu_max_cpu: 0x00 0x08 0x11, 0x21 0x3F, 0x4004
	const std::vector<EventSpec> ok = {parse_event("inst_retired", 0), parse_event("cpu_cycles:u", 0),
					   parse_event("br_retired", 0), parse_event("cnt_cycles", 0),
					   parse_event("exc_undef", 0), parse_event("r160", 0)};
	const unsigned cpu0[] = {0};
	CHECK(missing_events(ok, info, cpu0).empty());
	CHECK_NOTHROW(require_events(ok, info, cpu0));

	const std::vector<EventSpec> bad = {parse_event("l1d_cache", 0), parse_event("stall_backend_mem", 0)};
	const auto missing = missing_events(bad, info, cpu0);
	REQUIRE(missing.size() == 2);
	CHECK(missing[0].number == 0x04);
	CHECK_THAT(missing[0].reason, Contains("PMCEID0_EL0"));
	CHECK(missing[1].number == 0x4005);
	try {
		require_events(bad, info, cpu0);
		FAIL("no exception");
	} catch (const Unsupported& e) {
		CHECK(e.errnum() == EOPNOTSUPP);
		CHECK_THAT(std::string{e.what()},
			   Contains("l1d_cache (0x0004): not implemented (PMCEID0_EL0) on CPU 0; stall_backend_mem"));
	}

	// the extended half counts only with PMCEID_EXT
	info.cpus[0].flags &= ~static_cast<std::uint32_t>(CpuFlag::pmceid_ext);
	const std::vector<EventSpec> ext = {parse_event("cnt_cycles", 0)};
	REQUIRE(missing_events(ext, info, cpu0).size() == 1);
	CHECK_THAT(missing_events(ext, info, cpu0)[0].reason, Contains("extended PMCEID"));

	// one clause per event for all the CPUs it is missing on
	info.cpus.push_back(test::qemu_max_cpu(2));
	const unsigned cpu02[] = {0, 2};
	const std::vector<EventSpec> l1d = {parse_event("l1d_cache", 0)};
	CHECK_THROWS_WITH(require_events(l1d, info, cpu02),
			  "event check: l1d_cache (0x0004): not implemented (PMCEID0_EL0) on CPUs 0,2: "
			  "Operation not supported (EOPNOTSUPP)");

	// an undiscovered CPU lacks everything
	const unsigned cpu1[] = {1};
	CHECK(missing_events(ok, info, cpu1).size() == ok.size());
	const unsigned cpu7[] = {7};
	CHECK(missing_events(ok, info, cpu7).size() == ok.size());
}

TEST_CASE("cpu_implements reads both PMCEID halves", "[host][events][decode]")
{
	const CpuInfo c = test::qemu_max_cpu(0);
	CHECK(cpu_implements(c, 0x08) == true);
	CHECK(cpu_implements(c, 0x03) == false);
	CHECK(cpu_implements(c, 0x3F) == true);
	CHECK(cpu_implements(c, 0x4004) == true);
	CHECK(cpu_implements(c, 0x4005) == false);
	CHECK_FALSE(cpu_implements(c, 0x81).has_value());
	CHECK_FALSE(cpu_implements(c, 0x160).has_value());
	CHECK(event_name(0x81) == "EXC_UNDEF");
	CHECK(event_name(0x40) == "L1D_CACHE_RD");
}
