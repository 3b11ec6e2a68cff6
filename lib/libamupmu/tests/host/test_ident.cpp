// SPDX-License-Identifier: GPL-2.0
//
// AMU register fields and the identification of AMU/PMU frames [host]:
// golden tables (values worked out by hand from the Arm ARM's field
// positions, DDI 0487), JEP106 decoding, and the AMIIDR / AMPIDR / MIDR
// cross-check reporting mismatches.
#include <amupmu/amu.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/decode.hpp>
#include <amupmu/events.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using namespace amupmu;
using Catch::Matchers::Contains;

TEST_CASE("AMCFGR_EL0 / AMCGCR_EL0 fields: golden table", "[host][amu][decode]")
{
	struct Row {
		std::uint64_t amcfgr = 0;
		std::uint64_t amcgcr = 0;
		AmuConfig want{};
	};
	const Row rows[] = {
		// NCG [31:28] = 1 (2 groups), HDBG [24], SIZE [13:8] = 63, N [7:0] = 6; CG1NC 3, CG0NC 4
		{0x11003F06, 0x0304, {.groups = 2, .counters = 7, .counter_bits = 64, .hdbg = true,
				      .group0_counters = 4, .group1_counters = 3}},
		// one group, no HDBG, 32-bit, 4 counters; no group 1
		{0x00001F03, 0x0004, {.groups = 1, .counters = 4, .counter_bits = 32, .hdbg = false,
				      .group0_counters = 4, .group1_counters = 0}},
		// 16 auxiliary counters, N = 19 (20 counters)
		{0x10003F13, 0x1004, {.groups = 2, .counters = 20, .counter_bits = 64, .hdbg = false,
				      .group0_counters = 4, .group1_counters = 16}},
		// bits outside the fields are ignored (RES0 [27:25], [23:14]; AMCGCR [63:16])
		{0x0EFFC000u | 0x00003F03, 0xFFFF0004ull, {.groups = 1, .counters = 4, .counter_bits = 64,
							  .hdbg = false, .group0_counters = 4,
							  .group1_counters = 0}},
	};
	for (const Row& r : rows) {
		INFO("amcfgr " << std::hex << r.amcfgr << " amcgcr " << r.amcgcr);
		CHECK(decode_amu(r.amcfgr, r.amcgcr) == r.want);
	}
}

TEST_CASE("AMCR_EL0 fields: HDBG [10], CG1RZ [17]", "[host][amu][decode]")
{
	CHECK(decode_amcr(0) == Amcr{});
	CHECK(decode_amcr(1u << 10) == Amcr{.hdbg = true, .cg1rz = false});
	CHECK(decode_amcr(1u << 17) == Amcr{.hdbg = false, .cg1rz = true});
	CHECK(decode_amcr((1u << 17) | (1u << 10)) == Amcr{.hdbg = true, .cg1rz = true});
	// neighbours of the fields are not the fields
	CHECK(decode_amcr((1u << 9) | (1u << 11) | (1u << 16) | (1u << 18)) == Amcr{});
}

TEST_CASE("AMU event types are looked up, not assumed by position", "[host][amu][decode]")
{
	const std::uint16_t arch[] = {0x0011, 0x4004, 0x0008, 0x4005};
	CHECK(amu_counter_of(arch, 4, amu_ev::cpu_cycles) == 0u);
	CHECK(amu_counter_of(arch, 4, amu_ev::cnt_cycles) == 1u);
	CHECK(amu_counter_of(arch, 4, amu_ev::inst_retired) == 2u);
	CHECK(amu_counter_of(arch, 4, amu_ev::stall_backend_mem) == 3u);
	const std::uint16_t shuffled[] = {0x4005, 0x0008, 0x0011, 0x4004};
	CHECK(amu_counter_of(shuffled, 4, amu_ev::cpu_cycles) == 2u);
	CHECK(amu_counter_of(shuffled, 4, amu_ev::stall_backend_mem) == 0u);
	// only the first n (CG0NC) count
	CHECK_FALSE(amu_counter_of(shuffled, 2, amu_ev::cnt_cycles).has_value());
	CHECK_FALSE(amu_counter_of(arch, 4, 0x1234).has_value());
	CHECK(amu_event_name(0x4004) == "CNT_CYCLES");
	CHECK(amu_event_name(0x4005) == "STALL_BACKEND_MEM");
	CHECK(amu_event_name(0x0011) == "CPU_CYCLES");
	CHECK(amu_event_name(0x0008) == "INST_RETIRED");
}

TEST_CASE("AMIIDR / PMIIDR: ProductID [31:20], Variant [19:16], Revision [15:12], Implementer [11:0]",
	  "[host][ident]")
{
	// an Arm part 0xd48 r2p1
	CHECK(decode_iidr(0xD482143B) ==
	      Iidr{.product_id = 0xD48, .variant = 2, .revision = 1, .implementer = 0x43B});
	CHECK(decode_iidr(0x12345678) ==
	      Iidr{.product_id = 0x123, .variant = 4, .revision = 5, .implementer = 0x678});
	// the reversed layout of seed 001 would put the implementer at the top: it is not
	CHECK(decode_iidr(0x43B00000).implementer == 0);
	CHECK(decode_iidr(0x43B00000).product_id == 0x43B);
}

TEST_CASE("DEVARCH: ARCHITECT [31:21], PRESENT [20], REVISION [19:16], ARCHID [15:0]", "[host][ident]")
{
	// Arm AMU with FEAT_AMU_EXT64: architect 0x23b (continuation 4, identity 0x3b), ARCHID 0x0a67
	const Devarch amu = decode_devarch(0x47700A67);
	CHECK(amu.architect == 0x23B);
	CHECK(amu.present);
	CHECK(amu.revision == 0);
	CHECK(amu.archid == 0x0A67);
	CHECK(amu.archver == 0);
	CHECK(amu.archpart == 0xA67);
	CHECK(jep106_from_architect(amu.architect) == jep106_arm);
	CHECK(archid_name(0x0A66) == "AMUv1 (FEAT_AMU_EXT32)");
	CHECK(archid_name(amu.archid) == "AMUv1 (FEAT_AMU_EXT64)");
	const Devarch pmu = decode_devarch(0x47712A16);
	CHECK(pmu.revision == 1);
	CHECK(pmu.archver == 2);
	CHECK(pmu.archpart == 0xA16);
	CHECK_THAT(std::string{archid_name(pmu.archid)}, Contains("PMU"));
	CHECK(archid_name(0x1234).empty());
	CHECK_FALSE(decode_devarch(0x47600A66).present);
}

TEST_CASE("DEVTYPE: MAJOR [3:0], SUB [7:4]", "[host][ident]")
{
	CHECK(decode_devtype(0x16) == Devtype{.major = 6, .sub = 1});
	CHECK(describe_devtype(decode_devtype(0x16)) == "performance monitor component within a PE");
	CHECK_THAT(describe_devtype(decode_devtype(0x13)), Contains("trace source"));
}

TEST_CASE("PIDR0-4 fields and the designer they spell", "[host][ident]")
{
	// Arm (DES_2 4, DES_1 3, DES_0 0xb), part 0xd48, r2p1, CMOD 0, SIZE 0
	const std::array<std::uint32_t, 5> arm{0x48, 0xBD, 0x2B, 0x10, 0x04};
	const Pidr p = decode_pidr(arm);
	CHECK(p.part == 0xD48);
	CHECK(p.des_0 == 0xB);
	CHECK(p.des_1 == 3);
	CHECK(p.jedec);
	CHECK(p.revision == 2);
	CHECK(p.revand == 1);
	CHECK(p.cmod == 0);
	CHECK(p.des_2 == 4);
	CHECK(p.size == 0);
	CHECK(p.designer() == jep106_arm);
	CHECK(p.designer().code() == 0x43B);
	// every field on its own
	CHECK(decode_pidr(std::array<std::uint32_t, 5>{0xFF, 0, 0, 0, 0}).part == 0x0FF);
	CHECK(decode_pidr(std::array<std::uint32_t, 5>{0, 0x0F, 0, 0, 0}).part == 0xF00);
	CHECK(decode_pidr(std::array<std::uint32_t, 5>{0, 0xF0, 0, 0, 0}).des_0 == 0xF);
	CHECK(decode_pidr(std::array<std::uint32_t, 5>{0, 0, 0x07, 0, 0}).des_1 == 7);
	CHECK_FALSE(decode_pidr(std::array<std::uint32_t, 5>{0, 0, 0xF7, 0, 0}).jedec);
	CHECK(decode_pidr(std::array<std::uint32_t, 5>{0, 0, 0, 0x0A, 0}).cmod == 0xA);
	CHECK(decode_pidr(std::array<std::uint32_t, 5>{0, 0, 0, 0xA0, 0}).revand == 0xA);
	CHECK(decode_pidr(std::array<std::uint32_t, 5>{0, 0, 0, 0, 0x30}).size == 3);
	CHECK(decode_pidr(std::array<std::uint32_t, 5>{0, 0, 0, 0, 0x03}).des_2 == 3);
}

TEST_CASE("CIDR0-3: preamble and CLASS", "[host][ident]")
{
	const std::array<std::uint32_t, 4> coresight{0x0D, 0x90, 0x05, 0xB1};
	CHECK(decode_cidr(coresight) == Cidr{.component_class = 0x9, .preamble_ok = true});
	CHECK(describe_component_class(0x9) == "CoreSight component");
	CHECK(decode_cidr(std::array<std::uint32_t, 4>{0x0D, 0xF0, 0x05, 0xB1}).component_class == 0xF);
	CHECK(describe_component_class(0x1) == "ROM table");
	CHECK_FALSE(decode_cidr(std::array<std::uint32_t, 4>{0x0C, 0x90, 0x05, 0xB1}).preamble_ok);
	CHECK_FALSE(decode_cidr(std::array<std::uint32_t, 4>{0x0D, 0x91, 0x05, 0xB1}).preamble_ok);
	CHECK_FALSE(decode_cidr(std::array<std::uint32_t, 4>{}).preamble_ok);
}

TEST_CASE("JEP106: Arm is continuation 4, identity 0x3b (0x43b)", "[host][ident][jep106]")
{
	const Jep106 arm = jep106_from_iidr(0x43B);
	CHECK(arm.continuation == 4);
	CHECK(arm.identity == 0x3B);
	CHECK(arm.bank() == 5);
	CHECK(arm.code() == 0x43B);
	CHECK(arm == jep106_arm);
	CHECK(jep106_name(arm) == "Arm Limited");
	CHECK(describe_jep106(arm) == "Arm Limited (JEP106 0x43b: bank 5, 0x3b)");
	// bit 7 of IIDR.Implementer is RES0: not part of the identity
	CHECK(jep106_from_iidr(0x4BB) == jep106_arm);
	CHECK(jep106_name(jep106_from_iidr(0x36B)) == "NVIDIA");
	CHECK(jep106_name(jep106_from_iidr(0xA16)) == "Ampere Computing");
	CHECK(jep106_name(jep106_from_iidr(0x070)) == "Qualcomm");
	CHECK(jep106_name(jep106_from_iidr(0x123)).empty());
	CHECK_THAT(describe_jep106(jep106_from_iidr(0x123)), Contains("not in the library's table"));
	CHECK_THAT(describe_jep106(jep106_from_iidr(0x123)), Contains("bank 2"));
	CHECK(describe_jep106(Jep106{}) == "none (0)");
	CHECK_FALSE(Jep106{}.valid());
}

TEST_CASE("MIDR_EL1.Implementer maps to the company's JEP106 code", "[host][ident][jep106]")
{
	CHECK(midr_implementer_jep106(0x41) == jep106_arm);	// 'A'
	CHECK(midr_implementer_jep106(0x4E)->code() == 0x36B);	// NVIDIA
	CHECK(midr_implementer_jep106(0xC0)->code() == 0xA16);	// Ampere
	CHECK_FALSE(midr_implementer_jep106(0x00).has_value());	// software use (QEMU)
	CHECK_FALSE(midr_implementer_jep106(0x7F).has_value());
	// every mapped implementer has a name on both sides
	for (unsigned code = 0; code < 256; ++code)
		if (const auto j = midr_implementer_jep106(static_cast<std::uint8_t>(code))) {
			INFO("MIDR implementer " << code);
			CHECK_FALSE(jep106_name(*j).empty());
			CHECK_FALSE(implementer_name(static_cast<std::uint8_t>(code)).empty());
		}
}

namespace {

// The AMU frame of an Arm Cortex-X2 r2p1 as the Arm ARM lays it out.
IdFrame x2_amu_frame()
{
	IdFrame f;
	f.iidr = 0xD482143B;
	f.devarch = 0x47700A67;
	f.devtype = 0x16;
	f.pidr = {0x48, 0xBD, 0x2B, 0x10, 0x04};
	f.cidr = {0x0D, 0x90, 0x05, 0xB1};
	return f;
}

constexpr std::uint64_t midr_x2_r2p1 = 0x412FD481;

std::size_t count(const std::vector<IdCheck>& checks, CheckResult r)
{
	return static_cast<std::size_t>(std::ranges::count(checks, r, &IdCheck::result));
}

const IdCheck* find_check(const std::vector<IdCheck>& checks, std::string_view what)
{
	const auto it = std::ranges::find_if(checks, [&](const IdCheck& c) { return c.what.find(what) != std::string::npos; });
	return it == checks.end() ? nullptr : &*it;
}

} // namespace

TEST_CASE("cross-check AMIIDR / AMPIDR / MIDR: consistent frame", "[host][ident]")
{
	const std::vector<IdCheck> checks = cross_check_frame(x2_amu_frame(), midr_x2_r2p1, "AM");
	for (const IdCheck& c : checks)
		INFO(c.what << ": " << c.expected << " vs " << c.actual << " " << to_string(c.result));
	CHECK(checks.size() == 10);
	CHECK(count(checks, CheckResult::match) == 10);
	CHECK(cross_check_summary(checks) == "consistent (10 checks)");
	REQUIRE(find_check(checks, "AMIIDR.ProductID vs AMPIDR1.PART_1:AMPIDR0.PART_0"));
	CHECK(find_check(checks, "AMIIDR.ProductID")->expected == "0xd48");
}

TEST_CASE("cross-check reports each mismatch instead of hiding it", "[host][ident]")
{
	SECTION("a SoC whose AMIIDR.ProductID is not the core's part number (seed 001)")
	{
		IdFrame f = x2_amu_frame();
		f.iidr = 0x9992143B;
		f.pidr[0] = 0x99;
		f.pidr[1] = 0xB9;
		const auto checks = cross_check_frame(f, midr_x2_r2p1, "AM");
		CHECK(count(checks, CheckResult::mismatch) == 1);
		const IdCheck* c = find_check(checks, "MIDR_EL1.PartNum");
		REQUIRE(c);
		CHECK(c->result == CheckResult::mismatch);
		CHECK(c->expected == "0xd48");
		CHECK(c->actual == "0x999");
		CHECK(cross_check_summary(checks) == "MISMATCH: 1 of 10 checks");
	}
	SECTION("AMIIDR and AMPIDR disagree on the revision")
	{
		IdFrame f = x2_amu_frame();
		f.pidr[3] = 0x20;	// REVAND 2, IIDR says 1
		const auto checks = cross_check_frame(f, midr_x2_r2p1, "AM");
		CHECK(count(checks, CheckResult::mismatch) == 1);
		CHECK(find_check(checks, "AMIIDR.Revision vs AMPIDR3.REVAND")->result == CheckResult::mismatch);
	}
	SECTION("another designer than the MIDR's implementer")
	{
		IdFrame f = x2_amu_frame();
		f.iidr = 0xD482136B;	// NVIDIA
		const auto checks = cross_check_frame(f, midr_x2_r2p1, "AM");
		CHECK(find_check(checks, "MIDR_EL1.Implementer")->result == CheckResult::mismatch);
		CHECK(find_check(checks, "AMIIDR.Implementer vs")->result == CheckResult::mismatch);
	}
	SECTION("a variant the MIDR does not have")
	{
		const auto checks = cross_check_frame(x2_amu_frame(), 0x413FD481, "AM");	// r3p1
		CHECK(find_check(checks, "MIDR_EL1.Variant")->result == CheckResult::mismatch);
		CHECK(count(checks, CheckResult::mismatch) == 1);
	}
}

TEST_CASE("cross-check without a frame or with an unknown implementer", "[host][ident]")
{
	const auto none = cross_check_frame(IdFrame{}, midr_x2_r2p1, "PM");
	CHECK(count(none, CheckResult::match) == 0);
	CHECK(count(none, CheckResult::mismatch) == 0);
	CHECK(cross_check_summary(none) == "no identification registers to compare");
	CHECK(find_check(none, "PMIIDR.ProductID") != nullptr);
	// QEMU's MIDR implementer 0x00 has no JEP106 code: not compared, said so
	const auto qemu = cross_check_frame(x2_amu_frame(), 0x000f0510, "AM");
	const IdCheck* c = find_check(qemu, "MIDR_EL1.Implementer");
	REQUIRE(c);
	CHECK(c->result == CheckResult::unavailable);
	CHECK_THAT(c->expected, Contains("no JEP106 code known"));
}
