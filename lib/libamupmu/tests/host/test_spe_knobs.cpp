// SPDX-License-Identifier: GPL-2.0
//
// The arm_spe debugfs knobs on a fake directory [host][spe][knobs]: the
// files as the driver lays them out (one per knob, plus the read-only
// config and cpuN/ that are not knobs). The driver's own checks cannot run
// here; a refused write is played by a knob that reads but refuses
// writes (a link to /proc/version).
#include <amupmu/spe_knobs.hpp>

#include "tempdir.hpp"

#include <catch2/catch.hpp>

#include <linux/amupmu.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

using namespace amupmu;
using amupmu::test::put;
using amupmu::test::slurp;
namespace fs = std::filesystem;

namespace {

struct FakeArmSpe {
	FakeArmSpe()
	{
		for (const SpeKnob& k : spe_knobs())
			put(dir() / std::string{k.name}, "0\n");
		put(dir() / "pmsirr_interval", "256\n");
		put(dir() / "pmsfcr_type", "0x0\n");
		put(dir() / "config", "pmsfcr=0x0 pmsevfr=0x0 pmsnevfr=0x0 pmslatfr=0x0 pmsirr=0x100\n");
		put(dir() / "cpu0/pmsidr", "0x2a137\n");
	}
	[[nodiscard]] fs::path dir() const { return tmp.path() / "arm_spe"; }
	[[nodiscard]] std::string file(const std::string& name) const { return slurp(dir() / name); }

	test::TempDir tmp{"amupmu-debugfs"};
};

} // namespace

TEST_CASE("arm_spe knobs: the table", "[host][spe][knobs]")
{
	REQUIRE(spe_knobs().size() == 11);
	CHECK(spe_knobs().front().name == "pmsfcr_fe");
	CHECK(spe_knobs().back().name == "pmsirr_rnd");
	REQUIRE(find_spe_knob("pmslatfr_minlat"));
	CHECK_THAT(std::string{find_spe_knob("pmslatfr_minlat")->field}, Catch::Contains("PMSLATFR_EL1.MINLAT"));
	CHECK_FALSE(find_spe_knob("config"));
	CHECK_FALSE(find_spe_knob("cpu0/pmsidr"));
	CHECK_FALSE(find_spe_knob("PMSFCR_FE"));
}

TEST_CASE("arm_spe knobs: read every knob, or one", "[host][spe][knobs]")
{
	FakeArmSpe f;
	const std::vector<SpeKnobValue> all = read_spe_knobs(f.dir());
	REQUIRE(all.size() == 11);
	CHECK(all[0] == SpeKnobValue{"pmsfcr_fe", "0"});
	CHECK(all[4] == SpeKnobValue{"pmsfcr_type", "0x0"});
	CHECK(all[9] == SpeKnobValue{"pmsirr_interval", "256"});
	CHECK(read_spe_knob(f.dir(), "pmsirr_interval") == "256");
	CHECK_THROWS_WITH(read_spe_knob(f.dir(), "config"),
			  Catch::Contains("unknown arm_spe knob 'config'") && Catch::Contains("pmsirr_rnd"));

	// an older driver without a knob: left out of the listing
	fs::remove(f.dir() / "pmsnevfr");
	CHECK(read_spe_knobs(f.dir()).size() == 10);
	CHECK_THROWS_AS(read_spe_knob(f.dir(), "pmsnevfr"), Error);
}

TEST_CASE("arm_spe knobs: no directory says why", "[host][spe][knobs]")
{
	FakeArmSpe f;
	const fs::path none = f.tmp.path() / "nonexistent";
	CHECK_THROWS_AS(read_spe_knobs(none), DeviceMissing);
	CHECK_THROWS_WITH(read_spe_knob(none, "pmsfcr_fe"), Catch::Contains("debugfs not mounted") &&
								    Catch::Contains("ENOENT"));
	const SpeKnobAssignment a[] = {{"pmsfcr_fe", "1"}};
	CHECK_THROWS_AS(write_spe_knobs(none, a), DeviceMissing);
	CHECK_FALSE(fs::exists(none));
}

TEST_CASE("arm_spe knobs: writes, in order", "[host][spe][knobs]")
{
	FakeArmSpe f;
	const SpeKnobAssignment a[] = {{"pmsfcr_type", "0x18"}, {"pmsfcr_ft", "1"}, {"pmslatfr_minlat", "200"},
				       {"pmsfcr_fl", "1"}, {"pmsevfr", "0X2"}, {"pmsirr_interval", "010000"}};
	write_spe_knobs(f.dir(), a);
	CHECK(f.file("pmsfcr_type") == "0x18\n");
	CHECK(f.file("pmsfcr_ft") == "1\n");
	CHECK(f.file("pmslatfr_minlat") == "200\n");
	CHECK(f.file("pmsfcr_fl") == "1\n");
	CHECK(f.file("pmsevfr") == "0X2\n");
	CHECK(f.file("pmsirr_interval") == "010000\n");
	CHECK(f.file("config").starts_with("pmsfcr=0x0"));
	write_spe_knobs(f.dir(), {});
	const SpeKnobAssignment big[] = {{"pmsevfr", "18446744073709551615"}, {"pmsnevfr", "+0xffffffffffffffff"}};
	write_spe_knobs(f.dir(), big);
	CHECK(f.file("pmsevfr") == "18446744073709551615\n");
}

TEST_CASE("arm_spe knobs: a bad name or value writes nothing", "[host][spe][knobs]")
{
	FakeArmSpe f;
	const auto unchanged = [&] {
		CHECK(f.file("pmsfcr_fe") == "0\n");
		CHECK(f.file("pmsfcr_ft") == "0\n");
	};
	const SpeKnobAssignment unknown[] = {{"pmsfcr_fe", "1"}, {"pmsfcr_bogus", "1"}};
	CHECK_THROWS_WITH(write_spe_knobs(f.dir(), unknown), Catch::Contains("unknown arm_spe knob 'pmsfcr_bogus'"));
	unchanged();
	const SpeKnobAssignment info[] = {{"pmsfcr_fe", "1"}, {"config", "1"}};
	CHECK_THROWS_AS(write_spe_knobs(f.dir(), info), InvalidArgument);
	CHECK(f.file("config").starts_with("pmsfcr=0x0"));
	unchanged();
	for (const char* v : {"", "x", "1x", "0x", "-1", "1 ", "08", "0xg", "18446744073709551616", "1\n2"}) {
		const SpeKnobAssignment bad[] = {{"pmsfcr_fe", "1"}, {"pmsfcr_ft", v}};
		CHECK_THROWS_WITH(write_spe_knobs(f.dir(), bad), Catch::Contains("is not a number"));
		unchanged();
	}
}

TEST_CASE("arm_spe knobs: a refused write gives the earlier ones back", "[host][spe][knobs]")
{
	FakeArmSpe f;
	put(f.dir() / "pmslatfr_minlat", "5\n");
	// a knob that reads but refuses every write: /proc/version (EACCES
	// without root; EINVAL or EIO with, as the kernel has it)
	fs::remove(f.dir() / "pmsfcr_fl");
	fs::create_symlink("/proc/version", f.dir() / "pmsfcr_fl");
	const SpeKnobAssignment a[] = {{"pmsfcr_fe", "1"}, {"pmslatfr_minlat", "300"}, {"pmsfcr_fl", "1"},
				       {"pmsfcr_ft", "1"}};
	try {
		write_spe_knobs(f.dir(), a);
		FAIL("no error");
	} catch (const SpeKnobRefused& e) {
		CHECK(e.errnum() != 0);
		CHECK_THAT(e.what(), Catch::StartsWith("arm_spe knob pmsfcr_fl=1: ") &&
					     Catch::Contains("the 2 knob(s) written before it are restored"));
	}
	CHECK(f.file("pmsfcr_fe") == "0\n");
	CHECK(f.file("pmslatfr_minlat") == "5\n");
	CHECK(f.file("pmsfcr_ft") == "0\n");

	CHECK(spe_knob_errno_meaning(EINVAL).find("CONSTRAINED UNPREDICTABLE") != std::string_view::npos);
	CHECK(spe_knob_errno_meaning(EOPNOTSUPP).find("lacks that filter") != std::string_view::npos);
	CHECK(spe_knob_errno_meaning(ENOSPC).empty());
	const SpeKnobRefused e{"pmsfcr_fl", "1", EINVAL, ""};
	CHECK_THAT(e.what(), Catch::Equals(std::string{"arm_spe knob pmsfcr_fl=1: Invalid argument (EINVAL) -- "} +
					   std::string{spe_knob_errno_meaning(EINVAL)}));
}

TEST_CASE("arm_spe knobs: the defaults a DEFAULTS session takes, from config", "[host][spe][knobs]")
{
	FakeArmSpe f;
	SpeRecordedConfig given;
	given.flags = AMUPMU_SPE_CFG_DEFAULTS;
	given.enables = AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_TS;
	given.buf_pages = 64;
	put(f.dir() / "config", "pmsfcr=0x180003 pmsevfr=0x2 pmsnevfr=0x80 pmslatfr=0xc8 pmsirr=0x1001\n");
	const SpeRecordedConfig r = resolve_spe_defaults(f.dir(), given);
	CHECK(r.flags == (AMUPMU_SPE_CFG_DEFAULTS | AMUPMU_SPE_CFG_JITTER));
	CHECK(r.enables == given.enables);
	CHECK(r.buf_pages == 64);
	CHECK(r.pmsfcr == (AMUPMU_SPE_PMSFCR_FE | AMUPMU_SPE_PMSFCR_FT | AMUPMU_SPE_PMSFCR_FP | AMUPMU_SPE_PMSFCR_SIMD));
	CHECK(r.pmsevfr == 2);
	CHECK(r.pmsnevfr == 0x80);
	CHECK(r.min_latency == 200);
	CHECK(r.interval == 4096);
	put(f.dir() / "config", "pmsfcr=0x0 pmsevfr=0x0 pmsnevfr=0x0 pmslatfr=0x0 pmsirr=0x100\n");
	CHECK(resolve_spe_defaults(f.dir(), given).flags == AMUPMU_SPE_CFG_DEFAULTS);
	CHECK(resolve_spe_defaults(f.dir(), given).interval == 256);

	// without DEFAULTS: the configuration as given, nothing read
	SpeRecordedConfig own;
	own.interval = 1024;
	CHECK(resolve_spe_defaults(f.tmp.path() / "nonexistent", own) == own);

	for (const char* bad : {"", "pmsfcr=0x0", "pmsfcr=0x0 pmsevfr=0x0 pmsnevfr=0x0 pmslatfr=0x0 pmsirr=0x100 more",
				"pmsfcr=0 pmsevfr=0x0 pmsnevfr=0x0 pmslatfr=0x0 pmsirr=0x100",
				"pmsfcr=0x pmsevfr=0x0 pmsnevfr=0x0 pmslatfr=0x0 pmsirr=0x100",
				"pmsevfr=0x0 pmsfcr=0x0 pmsnevfr=0x0 pmslatfr=0x0 pmsirr=0x100"}) {
		put(f.dir() / "config", std::string{bad} + "\n");
		CHECK_THROWS_WITH(resolve_spe_defaults(f.dir(), given), Catch::Contains("is not the defaults' registers"));
	}
	CHECK_THROWS_AS(resolve_spe_defaults(f.tmp.path() / "nonexistent", given), DeviceMissing);
}
