// SPDX-License-Identifier: GPL-2.0
//
// Every core's events by name (core_events.hpp): libpfm4's tables chosen
// by MIDR, per CPU. libpfm4 compiles its arm64 tables into arm64 builds
// only: the aarch64 build (qemu-user on the host, the boards) checks the
// golden table of names and numbers below; the x86-64 build checks that
// every core says it has no table, and why.
#include <catch2/catch.hpp>

#include <amupmu/core_events.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/events.hpp>

#include <algorithm>
#include <string>

using namespace amupmu;

namespace {

constexpr std::uint64_t midr_n1 = 0x414fd0c1;	// Neoverse N1 r4p1
constexpr std::uint64_t midr_n2 = 0x410fd490;
constexpr std::uint64_t midr_v1 = 0x411fd401;
constexpr std::uint64_t midr_v2 = 0x410fd4f0;
constexpr std::uint64_t midr_a57 = 0x411fd070;
constexpr std::uint64_t midr_a53 = 0x410fd034;
constexpr std::uint64_t midr_a64fx = 0x461f0010;
constexpr std::uint64_t midr_tx2 = 0x431f0af1;
constexpr std::uint64_t midr_kunpeng = 0x481fd010;
constexpr std::uint64_t midr_a76 = 0x414fd0b1;	// Raspberry Pi 5
constexpr std::uint64_t midr_a72 = 0x410fd083;
constexpr std::uint64_t midr_a55 = 0x412fd050;
constexpr std::uint64_t midr_x2 = 0x412fd480;

// libpfm4 4.13's names and numbers, as its tables (and the cores' TRMs,
// the A64FX PMU Events specification) give them
struct Golden {
	std::uint64_t midr;
	std::string_view name;
	std::uint16_t number;
};
constexpr Golden golden[] = {
	{midr_n1, "l1i_cache_access", 0x14},
	{midr_n1, "l2d_cache_access", 0x16},
	{midr_n1, "mem_read_access", 0x66},
	{midr_n1, "br_ret_spec", 0x79},
	{midr_n1, "L3_CACHE_RD", 0xa0},
	{midr_n2, "bus_master_cycle", 0x1d},
	{midr_n2, "ase_inst_spec", 0x8005},
	{midr_n2, "sve_inst_spec", 0x8006},
	{midr_n2, "fp_dp_spec", 0x801c},
	{midr_n2, "mem_access_rd_checked", 0x4025},
	{midr_v1, "sve_pred_spec", 0x8074},
	{midr_v1, "sve_ldff_spec", 0x80bc},
	{midr_v1, "fp_scale_ops_spec", 0x80c0},
	{midr_v1, "fp_fixed_ops_spec", 0x80c1},
	{midr_v2, "l2_tlb_req", 0x2f},
	{midr_v2, "ase_sve_int8_spec", 0x80e3},
	{midr_v2, "sve_pred_not_full_spec", 0x8079},
	{midr_a57, "l1d_read_access", 0x40},
	{midr_a57, "bus_periph_access", 0x65},
	{midr_a57, "barrier_spec_exec_dmb", 0x7e},
	{midr_a57, "exception_hvc", 0x8a},
	{midr_a53, "branch_mispred", 0x10},
	{midr_a53, "exception_taken", 0x09},
	{midr_a64fx, "l1d_cache_refill_prf", 0x49},
	{midr_a64fx, "l2d_cache_refill_prf", 0x59},
	{midr_a64fx, "dczva_spec", 0x9f},
	{midr_a64fx, "fp_mv_spec", 0x105},
	{midr_a64fx, "prd_spec", 0x108},
	{midr_tx2, "l1d_lhs_fwd", 0xc4},
	{midr_kunpeng, "fetch_bubble", 0x2014},
	{midr_kunpeng, "exe_stall_cycle", 0x7001},
	{midr_kunpeng, "mem_stall_anyload", 0x7004},
};

} // namespace

TEST_CASE("pfm_core chooses libpfm4's table by MIDR implementer and part", "[core_events]")
{
	REQUIRE(pfm_core(midr_n1) != nullptr);
	CHECK(pfm_core(midr_n1)->pmu == "arm_n1");
	CHECK(pfm_core(0x410fd0c0)->pmu == "arm_n1");	// variant and revision do not matter
	CHECK(pfm_core(midr_n2)->pmu == "arm_n2");
	CHECK(pfm_core(midr_v1)->pmu == "arm_v1");
	CHECK(pfm_core(midr_v2)->pmu == "arm_v2");
	CHECK(pfm_core(midr_a57)->pmu == "arm_ac57");
	CHECK(pfm_core(midr_a53)->pmu == "arm_ac53");
	CHECK(pfm_core(midr_a64fx)->pmu == "arm_a64fx");
	CHECK(pfm_core(midr_tx2)->pmu == "arm_thunderx2");
	CHECK(pfm_core(0x420f5160)->pmu == "arm_thunderx2");
	CHECK(pfm_core(midr_kunpeng)->pmu == "arm_kunpeng");
	CHECK(pfm_core(0x500f0000)->pmu == "arm_xgene");
	// libpfm4 4.13 has none of these
	CHECK(pfm_core(midr_a76) == nullptr);
	CHECK(pfm_core(midr_a72) == nullptr);
	CHECK(pfm_core(midr_a55) == nullptr);
	CHECK(pfm_core(midr_x2) == nullptr);
	CHECK(pfm_core(0x000f0510) == nullptr);	// QEMU -cpu max
	CHECK(pfm_cores().size() == 11);
}

TEST_CASE("a core libpfm4 lacks says so and keeps the architected names and raw codes", "[core_events]")
{
	const CoreEventTable& t = core_event_table(midr_a76);
	CHECK(t.core == "Arm Cortex-A76 r4p1");
	CHECK(t.fallback.find("has no event table for Arm Cortex-A76 r4p1") != std::string::npos);
	CHECK(t.fallback.find("architected events and raw codes (r<hex>) only") != std::string::npos);
	CHECK(t.events.empty());
	CHECK(t.source.empty());
	CHECK(event_number("inst_retired", midr_a76) == 0x08);
	CHECK(event_number("l2d_cache_lmiss_rd", midr_a76) == 0x4009);
	CHECK(event_number("l1d_cache_refill_prf", midr_a76) == std::nullopt);
	CHECK(parse_event("r4009", midr_a76).number == 0x4009);
	CHECK(parse_event("amupmu/event=0x11/", midr_a76).number == 0x11);
	// the built-in Cortex-X2 table stays, and the fallback names it
	const CoreEventTable& x2 = core_event_table(midr_x2);
	CHECK(x2.source == "amupmu built-in table (Cortex-X2)");
	CHECK(x2.fallback.find("architected events and the built-in table's and raw codes") != std::string::npos);
	REQUIRE(x2.events.size() == 1);
	CHECK(x2.events[0].name == "imp_stall_backend_mcq");
	CHECK(x2.events[0].group == EventGroup::core);
}

TEST_CASE("the architected catalogue is the library's own table for every core", "[core_events]")
{
	for (const std::uint64_t midr : {midr_n1, midr_a76, std::uint64_t{0}}) {
		const std::vector<CatalogEvent> a = architected_catalog(midr);
		REQUIRE(a.size() == common_events_named().size());
		CHECK(a[0x08].name == "inst_retired");
		CHECK(a[0x08].number == 0x08);
		CHECK(a[0x3F].name == "stall_slot");
		CHECK(std::ranges::all_of(a, [](const CatalogEvent& e) { return e.group == EventGroup::architected; }));
	}
}

TEST_CASE("a name resolves per CPU by each CPU's MIDR", "[core_events]")
{
	Info info;
	info.cpus.resize(4);
	for (unsigned c = 0; c < 4; ++c) {
		info.cpus[c].cpu = c;
		info.cpus[c].flags = static_cast<std::uint32_t>(CpuFlag::discovered);
		info.cpus[c].midr = c < 2 ? midr_a64fx : midr_a76;
	}
	const std::vector<unsigned> cpus{0, 1, 2, 3};
	const std::vector<EventOnCpu> arch = resolve_on_cpus("cpu_cycles", info, cpus);
	CHECK(std::ranges::all_of(arch, [](const EventOnCpu& e) { return e.number == 0x11; }));
	const EventSpec cycles = parse_event("cpu_cycles", midr_a64fx);
	CHECK_NOTHROW(require_same_events(std::span{&cycles, 1}, info, cpus));
	const EventSpec raw = parse_event("r49", midr_a64fx);
	CHECK_NOTHROW(require_same_events(std::span{&raw, 1}, info, cpus));
	const std::vector<EventOnCpu> prf = resolve_on_cpus("l1d_cache_refill_prf", info, cpus);
	CHECK(prf[2].number == std::nullopt);
	CHECK(prf[3].number == std::nullopt);
#if defined(__aarch64__)
	CHECK(prf[0].number == 0x49);
	const EventSpec e = parse_event("l1d_cache_refill_prf", midr_a64fx);
	CHECK(e.source == EventSource::core);
	try {
		require_same_events(std::span{&e, 1}, info, cpus);
		FAIL("a name only CPUs 0-1 know was accepted on CPUs 0-3");
	} catch (const InvalidArgument& err) {
		const std::string what = err.what();
		CHECK(what.find("event 'l1d_cache_refill_prf' (0x0049) is an event of CPUs 0-1 (Fujitsu A64FX") !=
		      std::string::npos);
		CHECK(what.find("CPUs 2-3 (Arm Cortex-A76 r4p1) have no event of that name") != std::string::npos);
	}
	const std::vector<unsigned> big{0, 1};
	CHECK_NOTHROW(require_same_events(std::span{&e, 1}, info, big));
#else
	CHECK(prf[0].number == std::nullopt);
#endif
}

#if defined(__aarch64__)

TEST_CASE("libpfm4 golden: names to numbers for N1, N2, V1, V2, A57, A53, A64FX, ThunderX2, Kunpeng",
	  "[core_events][golden]")
{
	INFO("backend: libpfm4 " << (pfm_library().version >> 16) << "." << (pfm_library().version & 0xFFFF)
				 << " arm64 tables");
	REQUIRE(pfm_library().initialized);
	REQUIRE(pfm_library().arm64_tables);
	for (const Golden& g : golden) {
		INFO(describe_midr(g.midr) << ": " << g.name);
		CHECK(event_number(g.name, g.midr) == g.number);
		const EventSpec e = parse_event(std::string{g.name} + ":u", g.midr);
		CHECK(e.number == g.number);
		CHECK(e.source == EventSource::core);
		CHECK(e.modifiers == "u");
	}
	// the table's fallback is empty, its source named
	const CoreEventTable& n1 = core_event_table(midr_n1);
	CHECK(n1.fallback.empty());
	CHECK(n1.source == "libpfm4 arm_n1 (Arm Neoverse N1)");
	CHECK(n1.events.size() == 7);
	// architected names stay the library's, with libpfm4's description
	CHECK(event_number("l2d_cache_lmiss_rd", midr_n1) == 0x4009);
	CHECK(event_number("stall_backend_mem", midr_n1) == 0x4005);
	const std::vector<CatalogEvent> arch = architected_catalog(midr_n1);
	CHECK(arch[0x03].description == "Level 1 data cache refills");
	// a core's name that is not another core's
	CHECK(event_number("l1d_cache_refill_prf", midr_n1) == std::nullopt);
	CHECK(event_display_name(0x49, midr_a64fx) == "l1d_cache_refill_prf");
	// suggestions include the core's names
	const std::vector<std::string> near = closest_event_names("l1d_cache_refil_prf", midr_a64fx);
	REQUIRE_FALSE(near.empty());
	CHECK(near[0] == "l1d_cache_refill_prf");
}

TEST_CASE("a core table that gives an architected name another number is noted, the name stays architected",
	  "[core_events][golden]")
{
	const CoreEventTable& tx2 = core_event_table(midr_tx2);
	REQUIRE(tx2.notes.size() == 1);
	CHECK(tx2.notes[0] == "libpfm4 arm_thunderx2 names 0xe8 OP_RETIRED, the Arm ARM's OP_RETIRED is 0x3a: "
			      "'op_retired' counts the architected event, re8 the core's");
	CHECK(event_number("op_retired", midr_tx2) == 0x3a);
	CHECK(core_event_table(midr_n1).notes.empty());
}

#else

TEST_CASE("an x86-64 libpfm4 has no arm64 tables: every core says so", "[core_events]")
{
	INFO("backend: libpfm4 of the host (x86-64 build)");
	REQUIRE(pfm_library().initialized);
	CHECK_FALSE(pfm_library().arm64_tables);
	CHECK(pfm_library().note == "libpfm4 compiles its arm64 tables into arm64 builds only");
	const CoreEventTable& n1 = core_event_table(midr_n1);
	CHECK(n1.events.empty());
	CHECK(n1.fallback ==
	      "the libpfm4 linked in has no arm64 tables (libpfm4 compiles its arm64 tables into arm64 builds "
	      "only), so none for Arm Neoverse-N1 r4p1: architected events and raw codes (r<hex>) only");
	for (const Golden& g : golden)
		CHECK(event_number(g.name, g.midr) == std::nullopt);
}

#endif
