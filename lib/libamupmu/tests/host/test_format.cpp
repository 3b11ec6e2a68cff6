// SPDX-License-Identifier: GPL-2.0
//
// amupmu info rendering of synthetic reports.
#include "fixtures.hpp"
#include "json_check.hpp"

#include <amupmu/bits.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/info.hpp>
#include <amupmu/report/info_format.hpp>

#include <catch2/catch.hpp>

using namespace amupmu;
using namespace amupmu::report;
using Catch::Matchers::Contains;

TEST_CASE("hex()", "[host][format]")
{
	CHECK(hex(0x41, 2) == "0x41");
	CHECK(hex(0x51, 3) == "0x051");
	CHECK(hex(1) == "0x0000000000000001");
	CHECK(hex(0x1f, 0) == "0x1f");
	CHECK(hex(~std::uint64_t{0}) == "0xffffffffffffffff");
}

TEST_CASE("feature, ioctl and owner names", "[host][format]")
{
	CHECK(feature_string(0x1F) == "pmu pmu_exclusive amu spe mock");
	// ABI 2.3; sysfs' name style (pmu_exclusive), not "bit5"
	CHECK(feature_string(0x21) == "pmu pmu_shared");
	CHECK(feature_names(std::uint64_t{1} << 5) == std::vector<std::string>{"pmu_shared"});
	CHECK(feature_names(std::uint64_t{1} << 6) == std::vector<std::string>{"bit6"});
	CHECK(feature_string(0x01) == "pmu");
	CHECK(feature_string(0).empty());
	CHECK(feature_names(std::uint64_t{1} << 7) == std::vector<std::string>{"bit7"});
	CHECK(ioctl_names(1) == std::vector<std::string>{"AMUPMU_INFO"});
	CHECK(ioctl_names(0xe) == std::vector<std::string>{"AMUPMU_PMU_CONFIG", "AMUPMU_PMU_CTL",
							    "AMUPMU_PMU_READ"});
	CHECK(ioctl_names(0x10) == std::vector<std::string>{"AMUPMU_AMU_READ"});
	CHECK(ioctl_names(0xe0) == std::vector<std::string>{"AMUPMU_SPE_CONFIG", "AMUPMU_SPE_CTL",
							     "AMUPMU_SPE_READ"});
	CHECK(ioctl_names(0x100) == std::vector<std::string>{"cmd 0x88"});
	CHECK(to_string(PmuOwner::none) == "none");
	CHECK(to_string(PmuOwner::kernel) == "kernel");
	CHECK(to_string(PmuOwner::amupmu) == "amupmu");
	CHECK(to_string(static_cast<PmuOwner>(7)) == "unknown");
	CHECK(to_string(SpeOwner::none) == "none");
	CHECK(to_string(SpeOwner::kernel) == "kernel");
	CHECK(to_string(SpeOwner::amupmu) == "amupmu");
	CHECK(to_string(SpeOwner::unclaimed) == "unclaimed");
	CHECK(to_string(static_cast<SpeOwner>(9)) == "unknown");
	CHECK(describe(SpeOwner::kernel) == "the kernel's arm_spe_pmu holds the SPE device; amupmu SPE "
					    "requests are refused with ENXIO");
	CHECK(describe(PmuOwner::kernel) ==
	      "arm_pmu/perf owns the PMU; amupmu counts through perf core (shared mode), or refuses PMU "
	      "requests with ENXIO when shared mode is off (pmu_shared=N, or no arm_pmu registered with perf "
	      "core)");
	CHECK(to_string(PmuMode::none) == "none");
	CHECK(to_string(PmuMode::exclusive) == "exclusive");
	CHECK(to_string(PmuMode::shared) == "shared");
	CHECK(to_string(PmuMode::refused) == "refused");
	CHECK(to_string(static_cast<PmuMode>(9)) == "unknown");
	CHECK(kernel_el_name(2) == "EL2 (VHE)");
	CHECK(kernel_el_name(1) == "EL1");
	CHECK(kernel_el_name(0) == "unknown");
	CHECK(kernel_el_name(3) == "unknown");
	CHECK(to_string(Clock::cntvct) == "CNTVCT_EL0");
	CHECK(to_string(Clock::cntpct) == "CNTPCT_EL0");
	CHECK(to_string(Clock::unknown) == "unknown");
	CHECK(to_string(static_cast<Clock>(9)) == "unknown");
	CHECK(counter_mask_list(0) == "none");
	CHECK(counter_mask_list(0x8000003f) == "0-5, cycle");
	CHECK(counter_mask_list(0x80000000) == "cycle");
	CHECK(counter_mask_list(0x2d) == "0,2-3,5");
}

TEST_CASE("free counters of a CPU", "[host][format]")
{
	CpuInfo c = test::qemu_max_cpu(0);
	CHECK(c.counters_free() == 0);
	c.pmu_counters_free = 0x8000003f;
	CHECK(c.counters_free() == 7);
	CHECK(c.cycle_counter_free());
	c.pmu_counters_free = 0x3c;
	CHECK(c.counters_free() == 4);
	CHECK_FALSE(c.cycle_counter_free());
}

TEST_CASE("Info flag helpers", "[host][format]")
{
	const Info q = test::qemu_info();
	CHECK(q.has_pmu());
	CHECK_FALSE(q.pmu_exclusive());
	CHECK_FALSE(q.mock());
	CHECK(q.supports(Ioctl::info));
	const Info m = test::mock_info();
	CHECK(m.has_amu());
	CHECK(m.has_spe());
	CHECK(m.pmu_exclusive());
	CHECK(m.cpus[0].has_amu());
	CHECK(m.cpus[0].mock());
	CHECK_FALSE(m.cpus[2].discovered());
}

TEST_CASE("PMU mode: which one is in force and why", "[host][format]")
{
	STATIC_REQUIRE(static_cast<std::uint64_t>(Feature::pmu_shared) == 0x20);
	const Info shared = test::shared_info();
	CHECK(shared.pmu_shared());
	CHECK_FALSE(shared.pmu_exclusive());
	CHECK(shared.pmu_mode() == PmuMode::shared);
	CHECK(pmu_mode_text(shared) == "shared: arm_pmu owns the PMU, amupmu counts through perf core (pmu_shared=Y)");

	const Info excl = test::mock_info();
	CHECK_FALSE(excl.pmu_shared());
	CHECK(excl.pmu_mode() == PmuMode::exclusive);
	CHECK(pmu_mode_text(excl) == "exclusive: devicetree node amupmu,pmuv3");

	// arm_pmu owns the PMU, no shared feature: pmu_shared=N
	const Info refused = test::qemu_info();
	CHECK_FALSE(refused.pmu_shared());
	CHECK(refused.pmu_mode() == PmuMode::refused);
	CHECK(pmu_mode_text(refused) == "refused: the kernel owns the PMU and shared mode is off (pmu_shared=N, or "
				       "no arm_pmu registered with perf core)");
	// a driver before ABI 2.3 has no shared mode to turn on
	Info old = test::qemu_info();
	old.abi_minor = 2;
	CHECK(old.pmu_mode() == PmuMode::refused);
	CHECK(pmu_mode_reason(old) == "arm_pmu owns the PMU and this driver (ABI 2.2) has no shared mode");
	// the netlink dumps carry no ABI version: the parameter is the reason
	Info nl = test::qemu_info();
	nl.abi_major = 0;
	nl.abi_minor = 0;
	CHECK(pmu_mode_reason(nl) == "the kernel owns the PMU and shared mode is off (pmu_shared=N, or no arm_pmu "
				     "registered with perf core)");

	Info none;
	CHECK(none.pmu_mode() == PmuMode::none);
	CHECK(pmu_mode_text(none) == "none: no CPU implements PMUv3");
	// exclusive wins over a (never reported) shared bit with it
	Info both = test::mock_info();
	both.features |= static_cast<std::uint64_t>(Feature::pmu_shared);
	CHECK(both.pmu_mode() == PmuMode::exclusive);
}

TEST_CASE("backend names", "[host][format]")
{
	CHECK(backend_name(test::qemu_info()) == "hardware");
	CHECK(backend_description(test::qemu_info()) == "QEMU PMU + hardware ID registers");
	CHECK(backend_name(test::mock_info()) == "mock");
	CHECK(backend_description(test::mock_info()) ==
	      "hardware PMU + hardware ID registers + mock AMU/SPE register model");
	Info none;
	none.cpus = {test::offline_cpu(0)};
	CHECK(backend_description(none) == "no PMU + hardware ID registers");
}

TEST_CASE("text report", "[host][format]")
{
	SECTION("QEMU virt, kernel owns the PMU")
	{
		const std::string text = format_info_text(test::qemu_info());
		CHECK_THAT(text, Contains("amupmu driver ABI 2.5"));
		CHECK_THAT(text, Contains("spe owner:      none (no CPU has SPE that the kernel may program)\n"));
		CHECK_THAT(text, Contains("features:       pmu\n"));
		CHECK_THAT(text, Contains("ioctls:         AMUPMU_INFO\n"));
		CHECK_THAT(text, Contains("pmu owner:      kernel (arm_pmu/perf owns the PMU; amupmu counts "
					  "through perf core (shared mode), or refuses PMU requests with ENXIO "
					  "when shared mode is off (pmu_shared=N, or no arm_pmu registered with "
					  "perf core))\n"));
		CHECK_THAT(text, Contains("\npmu mode:       refused: the kernel owns the PMU and shared mode is off "
					  "(pmu_shared=N, or no arm_pmu registered with perf core)\n"));
		CHECK_THAT(text, Contains("kernel:         EL1\n"));
		CHECK_THAT(text, Contains("sample clock:   CNTVCT_EL0 (virtual count)\n"));
		CHECK_THAT(text, !Contains("gic:"));	// not asked for
		CHECK_THAT(text, !Contains("pmu free:"));	// the kernel's counters
		CHECK_THAT(text, Contains("backend:        hardware (QEMU PMU + hardware ID registers)\n"));
		CHECK_THAT(text, Contains("cpus:           2 possible (0-1), 1 online (0), 1 discovered (0)\n"));
		CHECK_THAT(text, Contains("cpu0: online, discovered\n"));
		CHECK_THAT(text, Contains("  cpu:          implementer 0x00 part 0x051 r0p0\n"));
		CHECK_THAT(text, Contains("  implementer:  0x00 (reserved for software use (e.g. QEMU -cpu max))\n"));
		CHECK_THAT(text, Contains("  midr_el1:     0x00000000000f0510\n"));
		CHECK_THAT(text, Contains("  pmu:          PMUv3p5, 6 event counters + cycle counter\n"));
		CHECK_THAT(text, Contains("  events:       6 common events implemented (5 in 0x00-0x3f, 1 in 0x4000-0x403f)\n"));
		CHECK_THAT(text, Contains("  pmmir slots:  0 (not reported)\n"));
		CHECK_THAT(text, Contains("  spe:          not implemented\n"));
		CHECK_THAT(text, Contains("  amu:          not implemented\n"));
		CHECK_THAT(text, Contains("cpu1: offline, not discovered (no register data)\n"));
		CHECK_FALSE(text.find("CPU_CYCLES") != std::string::npos);
	}
	SECTION("verbose lists registers and events")
	{
		const std::string text = format_info_text(test::qemu_info(), {.verbose = true});
		CHECK_THAT(text, Contains("  pmcr_el0:     0x0000000041003000\n"));
		CHECK_THAT(text, Contains("                0x0011 CPU_CYCLES\n"));
		CHECK_THAT(text, Contains("                0x4004 CNT_CYCLES\n"));
	}
	SECTION("mock AMU/SPE on a Cortex-X2")
	{
		const std::string text = format_info_text(test::mock_info());
		CHECK_THAT(text, Contains("features:       pmu pmu_exclusive amu spe mock\n"));
		CHECK_THAT(text, Contains("pmu owner:      amupmu ("));
		CHECK_THAT(text, Contains("\npmu mode:       exclusive: devicetree node amupmu,pmuv3\n"));
		CHECK_THAT(text, Contains("kernel:         EL2 (VHE)\n"));
		CHECK_THAT(text, Contains("sample clock:   CNTPCT_EL0 (physical count (EL2 timer of a VHE host))\n"));
		CHECK_THAT(text, Contains("  pmu free:     5 of 7 (2-5, cycle)\n"));
		CHECK_THAT(text, Contains("  pmu free:     7 of 7 (0-5, cycle)\n"));
		CHECK_THAT(text, Contains("cpu0: online, discovered, mock AMU/SPE registers\n"));
		CHECK_THAT(text, Contains("  cpu:          Arm Cortex-X2 r2p1\n"));
		CHECK_THAT(text, Contains("  implementer:  0x41 (Arm)\n"));
		CHECK_THAT(text, Contains("  events:       64 common events implemented (64 in 0x00-0x3f, 0 in 0x4000-0x403f)\n"));
		CHECK_THAT(text, Contains("  pmmir slots:  8\n"));
		CHECK_THAT(text, Contains("  spe:          SPEv1p2 (pmsidr_el1 0x0000000000026417)\n"));
		CHECK_THAT(text, Contains("  spe sampling: min interval 1024, max record 64 bytes, 12-bit counters, record format 0\n"));
		CHECK_THAT(text, Contains("  spe filters:  event, type, latency\n"));
		CHECK_THAT(text, Contains("  spe options:  data-source\n"));
		CHECK_THAT(text, Contains("  amu:          AMUv1p1, 2 counter groups (4 architected + 3 auxiliary counters), 64-bit\n"));
		CHECK_THAT(text, Contains("cpu2: offline, not discovered (no register data)\n"));
	}
	SECTION("shared mode: arm_pmu owns the PMU, amupmu counts through perf core")
	{
		const std::string text = format_info_text(test::shared_info());
		CHECK_THAT(text, Contains("features:       pmu pmu_shared\n"));
		CHECK_THAT(text, Contains("\npmu mode:       shared: arm_pmu owns the PMU, amupmu counts through perf "
					  "core (pmu_shared=Y)\n"));
		CHECK_THAT(text, !Contains("pmu free:"));	// perf core places the counters
	}
	SECTION("no PMCEID extension before PMUv3p1")
	{
		Info info = test::qemu_info();
		info.cpus[0].flags &= ~static_cast<std::uint32_t>(CpuFlag::pmceid_ext);
		CHECK_THAT(format_info_text(info),
			   Contains("5 common events implemented (5 in 0x00-0x3f; 0x4000-0x403f not reported before PMUv3p1)"));
	}
	SECTION("the GIC when the caller read it")
	{
		CHECK_THAT(format_info_text(test::qemu_info(), {.gic = GicVersion::v3}), Contains("\ngic:            GICv3\n"));
		CHECK_THAT(format_info_text(test::qemu_info(), {.gic = GicVersion::unknown}),
			   Contains("\ngic:            unknown\n"));
	}
	SECTION("nothing known")
	{
		const std::string text = format_info_text(Info{});
		CHECK_THAT(text, Contains("features:       (none)\n"));
		CHECK_THAT(text, Contains("cpus:           0 possible, 0 online, 0 discovered\n"));
	}
}

TEST_CASE("JSON report is well-formed", "[host][format][json]")
{
	Info odd = test::qemu_info();
	odd.pmu_owner = static_cast<PmuOwner>(7);
	odd.features = ~std::uint64_t{0};
	odd.supported_ioctls = ~std::uint64_t{0};
	odd.cpus[0].midr = 0x7A0F1232;
	odd.cpus[0].flags = ~std::uint32_t{0};

	const auto [name, info] = GENERATE_COPY(table<std::string, Info>({
		{"qemu", test::qemu_info()},
		{"mock", test::mock_info()},
		{"shared", test::shared_info()},
		{"empty", Info{}},
		{"odd values", odd},
	}));
	CAPTURE(name);
	const std::string json = format_info_json(info);
	INFO(json);
	CHECK(test::json_error(json).empty());
	CHECK(json.back() == '\n');
}

TEST_CASE("JSON report content", "[host][format][json]")
{
	const std::string json = format_info_json(test::mock_info());
	CHECK_THAT(json, Contains(R"("pmu_owner": "amupmu")"));
	CHECK_THAT(json, Contains(R"("pmu_mode": "exclusive")"));
	CHECK_THAT(json, Contains(R"("pmu_mode_reason": "devicetree node amupmu,pmuv3")"));
	const std::string shared = format_info_json(test::shared_info());
	CHECK_THAT(shared, Contains("\"features\": [\n    \"pmu\",\n    \"pmu_shared\"\n  ]"));
	CHECK_THAT(shared, Contains(R"("pmu_mode": "shared")"));
	CHECK_THAT(shared, Contains(
		R"x("pmu_mode_reason": "arm_pmu owns the PMU, amupmu counts through perf core (pmu_shared=Y)")x"));
	CHECK_THAT(format_info_json(test::qemu_info()), Contains(R"("pmu_mode": "refused")"));
	CHECK_THAT(json, Contains(R"("backend": "mock")"));
	CHECK_THAT(json, Contains(R"("features": [)"));
	CHECK_THAT(json, Contains(R"("description": "Arm Cortex-X2 r2p1")"));
	CHECK_THAT(json, Contains(R"("midr": "0x00000000412fd481")"));
	CHECK_THAT(json, Contains(R"("part": 3400)"));
	CHECK_THAT(json, Contains(R"("name": "STALL_SLOT")"));
	CHECK_THAT(json, Contains(R"("min_interval": 1024)"));
	CHECK_THAT(json, Contains(R"("group1_counters": 3)"));

	CHECK_THAT(json, Contains(R"("kernel_el": 2)"));
	CHECK_THAT(json, Contains(R"j("kernel": "EL2 (VHE)")j"));
	CHECK_THAT(json, Contains(R"("clock": "CNTPCT_EL0")"));
	CHECK_THAT(json, Contains(R"("counters_free_mask": "0x8000003c")"));
	CHECK_THAT(json, Contains(R"("counters_free": 5)"));
	CHECK_THAT(json, !Contains(R"("gic")"));
	CHECK_THAT(format_info_json(test::mock_info(), {.gic = GicVersion::v2}), Contains(R"("gic": "GICv2")"));

	const std::string qemu = format_info_json(test::qemu_info());
	CHECK_THAT(qemu, Contains(R"("counters_free": null)"));
	CHECK_THAT(qemu, Contains(R"("kernel": "EL1")"));
	CHECK_THAT(qemu, Contains(R"j("implementer_name": "reserved for software use (e.g. QEMU -cpu max)")j"));
	CHECK_THAT(qemu, Contains(R"("part_name": null)"));
	CHECK_THAT(qemu, Contains(R"("spe": null)"));
	CHECK_THAT(qemu, Contains(R"("amu": null)"));
}

TEST_CASE("info shows the AMU configuration, the ID frames and their cross-check", "[host][format][amu]")
{
	Info info = test::mock_info();
	CpuInfo& c = info.cpus[0];
	c.flags |= static_cast<std::uint32_t>(CpuFlag::amu_frame) | static_cast<std::uint32_t>(CpuFlag::amu_zero);
	c.amcntenset0 = 0x7;	// STALL_BACKEND_MEM not enabled
	c.amcr = 1u << 17;
	c.amu_frame.iidr = 0xD482143B;	// Arm part 0xd48 r2p1, as MIDR 0x412FD481
	c.amu_frame.devarch = 0x47700A67;
	c.amu_frame.devtype = 0x16;
	c.amu_frame.pidr = {0x99, 0xB9, 0x2B, 0x10, 0x04};	// but PIDR says part 0x999
	c.amu_frame.cidr = {0x0D, 0x90, 0x05, 0xB1};
	info.cpus[1].flags |= static_cast<std::uint32_t>(CpuFlag::amu_off);

	const std::string text = format_info_text(info);
	INFO(text);
	CHECK_THAT(text, Contains("amu group 0:  0 CPU_CYCLES (0x0011), 1 CNT_CYCLES (0x4004), 2 INST_RETIRED "
				  "(0x0008), 3 STALL_BACKEND_MEM (0x4005) not enabled"));
	CHECK_THAT(text, Contains("group 0 0x7 (0-2), group 1 0x7 (0-2)"));
	CHECK_THAT(text, Contains("CG1RZ 1"));
	CHECK_THAT(text, Contains("AMU_ZERO"));
	CHECK_THAT(text, Contains("AMIIDR 0xd482143b: Arm Limited (JEP106 0x43b: bank 5, 0x3b) part 0xd48 r2p1"));
	CHECK_THAT(text, Contains("AMUv1 (FEAT_AMU_EXT64)"));
	CHECK_THAT(text, Contains("amu ids:      MISMATCH: 1 of 10 checks"));
	CHECK_THAT(text, Contains("MISMATCH: AMIIDR.ProductID vs AMPIDR1.PART_1:AMPIDR0.PART_0: 0xd48 vs 0x999"));
	CHECK_THAT(text, Contains("not used (AMU_OFF"));

	const std::string json = format_info_json(info);
	CHECK(test::json_error(json).empty());
	CHECK_THAT(json, Contains("\"cross_check\": \"MISMATCH: 1 of 10 checks\""));
	CHECK_THAT(json, Contains("\"name\": \"STALL_BACKEND_MEM\""));
	CHECK_THAT(json, Contains("\"off\": true"));
	CHECK_THAT(json, Contains("\"pmu_frame\": null"));
}

TEST_CASE("info text and JSON of an Info from the netlink dumps: what they lack is unknown", "[host][format]")
{
	FormatOptions o;
	const Info q = test::qemu_info();
	const std::string device = format_info_text(q, o);
	CHECK_THAT(device, Catch::Matchers::Contains("common events implemented"));
	CHECK_THAT(device, !Catch::Matchers::Contains("not in the netlink dump"));
	o.from_netlink = true;
	const std::string nl = format_info_text(q, o);
	INFO(nl);
	CHECK_THAT(nl, Catch::Matchers::StartsWith("amupmu driver ABI unknown (libamupmu "));
	CHECK_THAT(nl, Catch::Matchers::Contains("ioctls") && Catch::Matchers::Contains("unknown (not in the netlink dump)"));
	CHECK_THAT(nl, !Catch::Matchers::Contains("common events implemented"));
	CHECK_THAT(format_info_json(q, o), Catch::Matchers::Contains("\"source\": \"netlink\""));
	CHECK_THAT(format_info_json(q, {}), Catch::Matchers::Contains("\"source\": \"device\""));
}
