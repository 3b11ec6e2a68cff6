// SPDX-License-Identifier: GPL-2.0
//
// Errata, compensation models, the compensation of counts and calibration
// fitting [host]: pure logic on synthetic data, no device. (How amupmu
// stat shows a compensation: test_stat.cpp.)
#include "tempdir.hpp"

#include <amupmu/compensation.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/error.hpp>
#include <amupmu/events.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>

#include <sys/stat.h>
#include <unistd.h>

using namespace amupmu;
using Catch::Matchers::Contains;

namespace {

constexpr std::uint64_t midr_x2(unsigned variant, unsigned revision)
{
	return 0x410F0000u | (0xD48u << 4) | (variant << 20) | revision;
}

const Erratum& undef_erratum()
{
	return *find_erratum("AMUPMU-X2-EXC_UNDEF");
}
const Erratum& mcq_erratum()
{
	return *find_erratum("AMUPMU-X2-MCQ");
}

} // namespace

TEST_CASE("errata table", "[host][errata]")
{
	REQUIRE(errata().size() == 4);	// 2 PMU (seed 003), 2 AMU (Arm-published)
	const Erratum& u = undef_erratum();
	CHECK(u.event == 0x81);
	CHECK(u.part == 0xD48);
	CHECK(u.implementer == 0x41);
	CHECK(u.default_value == Approx(1.21));
	CHECK_THAT(std::string{u.provenance}, Contains("not in Arm's published errata"));
	const Erratum& m = mcq_erratum();
	CHECK(m.event == 0x160);
	CHECK(m.companion == 0x4005);
	CHECK(m.default_value >= 0.28);
	CHECK(m.default_value <= 0.35);
	CHECK(find_erratum("nope") == nullptr);
}

TEST_CASE("errata applicability by MIDR and revision", "[host][errata]")
{
	const Erratum& e = undef_erratum();
	CHECK(applies(e, midr_x2(0, 0)) == Applicability::yes);
	CHECK(applies(e, midr_x2(1, 0)) == Applicability::yes);
	CHECK(applies(e, midr_x2(2, 0)) == Applicability::yes);
	CHECK(applies(e, midr_x2(2, 1)) == Applicability::yes);
	CHECK(applies(e, midr_x2(2, 2)) == Applicability::verify);
	CHECK(applies(e, midr_x2(3, 0)) == Applicability::verify);
	CHECK(applies(e, midr_x2(4, 1)) == Applicability::verify);
	CHECK(applies(e, 0x410FD4F1) == Applicability::no);	// Neoverse V2
	CHECK(applies(e, 0x4E0FD481) == Applicability::no);	// other implementer, same part
	CHECK(applies(e, 0x000f0510) == Applicability::no);	// QEMU max
	CHECK(errata_for(midr_x2(2, 1)).size() == 2);
	CHECK(errata_for(0x000f0510).empty());
	CHECK(to_string(Applicability::verify) == "verify");
}

TEST_CASE("AMU errata: unreliable CNT_CYCLES on Cortex-A510 r0p0-r1p1 and Cortex-A725 r0p0-r0p2", "[host][errata][amu]")
{
	const auto midr = [](unsigned part, unsigned variant, unsigned revision) {
		return std::uint64_t{0x410F0000} | (std::uint64_t{variant} << 20) | (part << 4) | revision;
	};
	const Erratum* a510 = find_erratum("ARM-A510-2457168");
	const Erratum* a725 = find_erratum("ARM-A725-3821522");
	REQUIRE(a510);
	REQUIRE(a725);
	for (const Erratum* e : {a510, a725}) {
		CHECK(e->unit == ErratumUnit::amu);
		CHECK(e->model == ErratumModel::unreliable_counter);
		CHECK(e->event == 0x4004);	// CNT_CYCLES
		CHECK(e->implementer == 0x41);
		// the sources are named in the data
		CHECK_THAT(std::string{e->provenance}, Contains("Software Developer Errata Notice"));
		CHECK_THAT(std::string{e->provenance}, Contains("Linux "));
	}
	CHECK(a510->part == 0xD46);
	CHECK(a725->part == 0xD87);
	CHECK(affected_range(*a510) == "r0p0-r1p1");
	CHECK(affected_range(*a725) == "r0p0-r0p2");
	CHECK(applies(*a510, midr(0xD46, 0, 0)) == Applicability::yes);
	CHECK(applies(*a510, midr(0xD46, 1, 1)) == Applicability::yes);
	CHECK(applies(*a510, midr(0xD46, 1, 2)) == Applicability::verify);
	CHECK(applies(*a510, midr(0xD46, 2, 0)) == Applicability::verify);
	CHECK(applies(*a725, midr(0xD87, 0, 2)) == Applicability::yes);
	CHECK(applies(*a725, midr(0xD87, 0, 3)) == Applicability::verify);
	CHECK(applies(*a725, midr(0xD46, 0, 0)) == Applicability::no);
	// the PMU paths (stat compensation, calibration) never see them
	CHECK(errata_for(midr(0xD46, 1, 0), ErratumUnit::pmu).empty());
	CHECK(errata_for(midr(0xD46, 1, 0), ErratumUnit::amu).size() == 1);
	CHECK(errata_for(midr_x2(2, 1), ErratumUnit::amu).empty());
	CHECK(errata_for(midr_x2(2, 1), ErratumUnit::pmu).size() == 2);
	CHECK(affected_range(undef_erratum()) == "r0p0-r2p1");
}

TEST_CASE("EXC_UNDEF compensation: values worked out by hand", "[host][errata]")
{
	// the seed's field figures: 10000 UDF #0 injected (EC=0x00), 8300
	// counted; default factor 1.21. Expected values are the model's
	// arithmetic done by hand, not by the code under test:
	//   with the software count:  8300 + 10000 * (1 - 1/1.21) = 10035.537...
	//   without it:               8300 * 1.21                  = 10043
	const double factor = undef_erratum().default_value;
	REQUIRE(factor == 1.21);
	CHECK(compensate_undercount(8300, 10000.0, factor) == Approx(10035.5372).margin(1e-3));
	CHECK(compensate_undercount(8300, std::nullopt, factor) == Approx(10043.0).margin(1e-9));
	// both within 0.5 % of the 10000 really taken
	CHECK(std::fabs(compensate_undercount(8300, 10000.0, factor) - 10000) < 50);
	CHECK(std::fabs(compensate_undercount(8300, std::nullopt, factor) - 10000) < 50);
	// mixed: 1000 other undefined exceptions counted exactly, 9000 EC=0x00
	// of which 7470 counted: 8470 + 9000 * (1 - 1/1.21) = 10031.983...
	CHECK(compensate_undercount(8470, 9000.0, factor) == Approx(10031.9835).margin(1e-3));
	// no EC=0x00 exception: nothing added
	CHECK(compensate_undercount(500, 0.0, factor) == 500);
	// factor 1: nothing changes; factor 2: half of them were seen
	CHECK(compensate_undercount(500, 200.0, 1.0) == 500);
	CHECK(compensate_undercount(500, 200.0, 2.0) == 600);
	CHECK(compensate_undercount(500, std::nullopt, 2.0) == 1000);
	// no factor (<= 0): the count as measured
	CHECK(compensate_undercount(500, 200.0, 0.0) == 500);
}

TEST_CASE("IMP_STALL_BACKEND_MCQ: the correction never goes negative", "[host][errata]")
{
	// seed 003: true = measured - min(measured * f, STALL_BACKEND_MEM)
	CHECK(compensate_overcount(1000, 100, 0.3) == 900);
	CHECK(compensate_overcount(1000, 5000, 0.3) == Approx(700));
	CHECK(compensate_overcount(1380, 1e9, 0.38 / 1.38) == Approx(1000));
	std::mt19937_64 rng{42};
	std::uniform_real_distribution<double> d{0, 1e9};
	std::uniform_real_distribution<double> f{-1, 3};
	for (int i = 0; i < 10000; ++i) {
		const double m = d(rng), c = d(rng) - 1e8, k = f(rng);
		const double t = compensate_overcount(m, c, k);
		REQUIRE(t >= 0);
		REQUIRE(t <= m);
	}
	CHECK(compensate_overcount(0, 0, 0.3) == 0);
}

TEST_CASE("EXC_UNDEF cross-check against EXC_TAKEN / EXC_RETURN", "[host][errata]")
{
	CHECK(cross_check_exc_undef(1000, 1500, 1500).consistent);
	CHECK_FALSE(cross_check_exc_undef(1600, 1500, 1500).consistent);
	CHECK_FALSE(cross_check_exc_undef(1000, 100000, 50000).consistent);
}

TEST_CASE("calibration: fitting the EXC_UNDEF factor on synthetic data", "[host][errata][calibration]")
{
	std::mt19937_64 rng{7};
	std::normal_distribution<double> noise{0, 0.002};
	std::vector<UndefRun> runs;
	for (const double n : {1000.0, 2000.0, 5000.0, 10000.0, 20000.0})
		runs.push_back({n, n * 0.83 * (1 + noise(rng))});
	const CalibratedValue v = fit_undercount(runs);
	CHECK(v.value == Approx(1 / 0.83).epsilon(0.005));
	CHECK(v.runs == 5);
	CHECK(v.residual < 0.01);
	CHECK(v.erratum == "AMUPMU-X2-EXC_UNDEF");
	// exact data: exact fit
	const UndefRun exact[] = {{100, 80}, {1000, 800}};
	CHECK(fit_undercount(exact).value == Approx(1.25));
	CHECK(fit_undercount(exact).residual == Approx(0).margin(1e-12));
	// runs that counted nothing are skipped; none left is an error
	const UndefRun none[] = {{100, 0}, {0, 0}};
	CHECK_THROWS_AS(fit_undercount(none), InvalidArgument);
}

TEST_CASE("calibration: fitting MEM_BOUND_FACTOR on synthetic data", "[host][errata][calibration]")
{
	// true MCQ stalls b, measured 1.38 b (38 % overcount): share 0.38 / 1.38
	std::vector<McqRun> runs;
	for (const double b : {1e5, 2e5, 4e5, 8e5})
		runs.push_back({b * 1.38, b});
	const CalibratedValue v = fit_overcount(runs);
	CHECK(v.value == Approx(0.38 / 1.38).epsilon(1e-9));
	CHECK(v.runs == 4);
	CHECK(v.erratum == "AMUPMU-X2-MCQ");
	// the fitted factor recovers the true stalls
	for (const McqRun& r : runs)
		CHECK(compensate_overcount(r.measured, 1e12, v.value) == Approx(r.baseline));
	// a baseline above the measurement clamps to 0, not negative
	const McqRun low[] = {{100, 200}};
	CHECK(fit_overcount(low).value == 0);
	const McqRun empty[] = {{0, 0}};
	CHECK_THROWS_AS(fit_overcount(empty), InvalidArgument);
}

TEST_CASE("calibration file: round trip, checks, parameter choice", "[host][errata][calibration]")
{
	Calibration c;
	c.midr = midr_x2(2, 1);
	c.values = {{"AMUPMU-X2-EXC_UNDEF", 1.19, 5, 0.004}, {"AMUPMU-X2-MCQ", 0.31, 4, 0.01}};
	const std::string text = format_calibration(c);
	CHECK_THAT(text, Contains("midr = 0x412fd481"));
	CHECK_THAT(text, Contains("AMUPMU-X2-EXC_UNDEF.factor = 1.19"));
	CHECK_THAT(text, Contains("AMUPMU-X2-MCQ.mem_bound_factor = 0.31"));
	CHECK(parse_calibration(text) == c);

	CHECK_THROWS_AS(parse_calibration("AMUPMU-X2-MCQ.mem_bound_factor = 0.3\n"), InvalidArgument);
	CHECK_THROWS_WITH(parse_calibration("midr = 0x1\nAMUPMU-X2-MCQ.mem_bound_factor = 1.5\n"),
			  Contains("line 2"));
	CHECK_THROWS_AS(parse_calibration("midr = 0x1\nAMUPMU-X2-EXC_UNDEF.factor = 0.5\n"), InvalidArgument);
	CHECK_THROWS_AS(parse_calibration("midr = 0x1\nbogus.factor = 1\n"), InvalidArgument);
	CHECK_THROWS_AS(parse_calibration("midr = 0x1\njunk\n"), InvalidArgument);

	// the calibrated value only for the MIDR it was measured on
	CHECK(parameter_for(undef_erratum(), c.midr, &c).value == Approx(1.19));
	CHECK(parameter_for(undef_erratum(), c.midr, &c).calibrated);
	CHECK(parameter_for(undef_erratum(), midr_x2(2, 0), &c).value == Approx(1.21));
	CHECK_FALSE(parameter_for(undef_erratum(), midr_x2(2, 0), &c).calibrated);
	CHECK(parameter_for(undef_erratum(), c.midr, nullptr).value == Approx(1.21));

	// save + load through a file
	char dir[] = "/tmp/amupmu-cal-XXXXXX";
	REQUIRE(mkdtemp(dir));
	const std::string path = std::string{dir} + "/sub/calibration";
	CHECK_FALSE(load_calibration(path));
	save_calibration(c, path);
	const auto loaded = load_calibration(path);
	REQUIRE(loaded);
	CHECK(*loaded == c);
	std::remove(path.c_str());

	// a directory where the file should be: read(2)'s errno, not a parse of nothing
	REQUIRE(mkdir(path.c_str(), 0755) == 0);
	CHECK_THROWS_MATCHES(load_calibration(path), Error,
			     Catch::Predicate<Error>([](const Error& e) { return e.errnum() == EISDIR; },
						     "errnum EISDIR"));
	rmdir(path.c_str());

	// a value that is not a number: said so, with the file, and the errno text once
	{
		std::FILE* f = std::fopen(path.c_str(), "w");
		REQUIRE(f);
		std::fputs("midr = 0x412fd481\nAMUPMU-X2-EXC_UNDEF.factor = many\n", f);
		std::fclose(f);
	}
	CHECK_THROWS_MATCHES(load_calibration(path), InvalidArgument,
			     Catch::Predicate<InvalidArgument>(
				     [&](const InvalidArgument& e) {
					     const std::string w = e.what();
					     return w.starts_with(path + ": ") && w.find("'many' is not a number") != w.npos &&
						    w.find("(EINVAL)") == w.rfind("(EINVAL)");
				     },
				     "path, 'is not a number', one errno text"));
	std::remove(path.c_str());
	rmdir((std::string{dir} + "/sub").c_str());
	rmdir(dir);

	setenv("AMUPMU_CALIBRATION", "/x/y", 1);
	CHECK(default_calibration_path() == "/x/y");
	unsetenv("AMUPMU_CALIBRATION");
	CHECK(default_calibration_path() == "/var/lib/amupmu/calibration");
}

TEST_CASE("save_calibration: a temporary file of its own, renamed; failures named", "[host][errata][calibration]")
{
	const test::TempDir dir{"amupmu-cal"};
	const Calibration c{.midr = midr_x2(2, 1), .values = {{"AMUPMU-X2-EXC_UNDEF", 1.19, 5, 0.004}}};
	const std::string path = (dir.path() / "calibration").string();

	SECTION("a stale or foreign calibration.tmp is left alone")
	{
		// what a fixed temporary name would collide with: a directory
		std::filesystem::create_directory(path + ".tmp");
		save_calibration(c, path);
		CHECK(load_calibration(path) == c);
		CHECK(std::filesystem::is_directory(path + ".tmp"));
		// and no temporary file of its own left behind
		std::vector<std::string> names;
		for (const auto& e : std::filesystem::directory_iterator{dir.path()})
			names.push_back(e.path().filename().string());
		std::ranges::sort(names);
		CHECK(names == std::vector<std::string>{"calibration", "calibration.tmp"});
		// replaced whole
		save_calibration({.midr = 1, .values = {}}, path);
		const auto again = load_calibration(path);
		REQUIRE(again);
		CHECK(again->midr == 1);
		CHECK((std::filesystem::status(path).permissions() & std::filesystem::perms::others_read) !=
		      std::filesystem::perms::none);
	}
	SECTION("a directory that cannot be created is the error, with its errno")
	{
		test::put(dir.path() / "file", "not a directory\n");
		const std::string under_file = (dir.path() / "file" / "sub" / "calibration").string();
		CHECK_THROWS_WITH(save_calibration(c, under_file),
				  Contains("create directories " + (dir.path() / "file" / "sub").string() + ": "));
		CHECK_THROWS_MATCHES(save_calibration(c, under_file), Error,
				     Catch::Predicate<Error>([](const Error& e) { return e.errnum() == ENOTDIR ||
											e.errnum() == EEXIST; },
							     "errnum ENOTDIR or EEXIST"));
	}
	SECTION("a file that cannot be written: the errno of the call that failed")
	{
		// the target is a directory: rename(2) says so
		std::filesystem::create_directory(path);
		std::filesystem::create_directory(dir.path() / "calibration" / "inside");
		CHECK_THROWS_MATCHES(save_calibration(c, path), Error,
				     Catch::Predicate<Error>([](const Error& e) { return e.errnum() == EISDIR ||
											e.errnum() == ENOTEMPTY ||
											e.errnum() == EEXIST; },
							     "errnum EISDIR, ENOTEMPTY or EEXIST"));
		// the temporary file is removed
		std::size_t n = 0;
		for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator{dir.path()})
			++n;
		CHECK(n == 1);
	}
}

TEST_CASE("compensate: compensated beside raw, with the erratum and its parameter; can be turned off",
	  "[host][errata][compensation]")
{
	const EventCount counts[] = {{.number = 0x81, .value = 830},   {.number = 0x09, .value = 5000},
				     {.number = 0x0A, .value = 5000},  {.number = 0x160, .value = 1380},
				     {.number = 0x4005, .value = 800}, {.number = 0x08, .value = 1e6}};
	const auto undef = compensate(counts, 0, midr_x2(2, 1));
	REQUIRE(undef);
	REQUIRE(undef->value);
	CHECK(undef->status == CompensationStatus::compensated);
	CHECK(*undef->value == Approx(830 * 1.21));
	CHECK(undef->raw == 830);	// raw kept
	CHECK(undef->erratum == &undef_erratum());
	CHECK(undef->applicability == Applicability::yes);
	CHECK(undef->parameter.value == Approx(1.21));
	CHECK_FALSE(undef->parameter.calibrated);
	CHECK_FALSE(undef->exc_undef_ec0);
	REQUIRE(undef->cross_check);
	CHECK(undef->cross_check->consistent);
	const auto mcq = compensate(counts, 3, midr_x2(2, 1));
	REQUIRE(mcq);
	REQUIRE(mcq->value);
	CHECK(*mcq->value == Approx(1380 - 1380 * 0.30));
	CHECK(mcq->erratum == &mcq_erratum());
	CHECK(mcq->companion == 800);
	CHECK_FALSE(mcq->cross_check);
	CHECK_FALSE(compensate(counts, 5, midr_x2(2, 1)));
	CHECK_THROWS_AS((void)compensate(counts, 6, midr_x2(2, 1)), InvalidArgument);

	const auto off = compensate(counts, 0, midr_x2(2, 1), {.enabled = false});
	REQUIRE(off);
	CHECK(off->status == CompensationStatus::disabled);
	CHECK_FALSE(off->value);
	CHECK(off->erratum == &undef_erratum());

	const auto later = compensate(counts, 0, midr_x2(3, 0));
	REQUIRE(later);
	CHECK(later->status == CompensationStatus::verify);
	CHECK(later->applicability == Applicability::verify);
	CHECK_FALSE(later->value);

	for (std::size_t i = 0; i < std::size(counts); ++i)
		CHECK_FALSE(compensate(counts, i, 0x000f0510));

	// the ground truth and the board's calibration (same MIDR only)
	const auto ec0 = compensate(counts, 0, midr_x2(2, 1), {.exc_undef_ec0 = 100});
	REQUIRE(ec0);
	REQUIRE(ec0->value);
	CHECK(*ec0->value == Approx(830 + 100 * (1 - 1 / 1.21)));
	CHECK(ec0->exc_undef_ec0 == 100);
	const Calibration cal{.midr = midr_x2(2, 1), .values = {{.erratum = "AMUPMU-X2-EXC_UNDEF", .value = 1.5}}};
	const auto calibrated = compensate(counts, 0, midr_x2(2, 1), {.calibration = cal});
	REQUIRE(calibrated);
	REQUIRE(calibrated->value);
	CHECK(*calibrated->value == Approx(830 * 1.5));
	CHECK(calibrated->parameter.calibrated);
	CHECK(calibrated->parameter.value == 1.5);
	const auto other_board = compensate(counts, 0, midr_x2(2, 0), {.calibration = cal});
	REQUIRE(other_board);
	CHECK_FALSE(other_board->parameter.calibrated);
	CHECK(*other_board->value == Approx(830 * 1.21));

	CHECK(to_string(CompensationStatus::compensated) == "compensated");
	CHECK(to_string(CompensationStatus::needs_companion) == "needs companion");

	// the companions a model needs are added
	const std::vector<EventSpec> asked = parse_event_list("r160,exc_undef", midr_x2(2, 1));
	const auto numbers = [](const std::vector<EventSpec>& specs) {
		std::vector<std::uint16_t> n(specs.size());
		std::ranges::transform(specs, n.begin(), &EventSpec::number);
		return n;
	};
	CHECK(numbers(errata_companions(asked, midr_x2(2, 1))) == std::vector<std::uint16_t>{0x09, 0x0A, 0x4005});
	CHECK(errata_companions(asked, 0x000f0510).empty());
}

TEST_CASE("compensate: each count with the companions of its own levels", "[host][errata][compensation]")
{
	const std::uint64_t midr = midr_x2(2, 1);
	// exc_undef at EL0 and at EL1: each needs exc_taken/exc_return counted
	// at its own levels, r160 at EL0 stall_backend_mem:u
	const std::vector<EventSpec> asked = parse_event_list("exc_undef:u,exc_undef:k,r160:u", midr);
	const std::vector<EventSpec> add = errata_companions(asked, midr);
	std::vector<std::string> names(add.size());
	std::ranges::transform(add, names.begin(), &EventSpec::name);
	CHECK(names == std::vector<std::string>{"exc_taken:u", "exc_return:u", "exc_taken:k", "exc_return:k",
						"stall_backend_mem:u"});
	for (const EventSpec& e : add)
		CHECK((e.flags & evflag::exclusions) != 0);
	// nothing added twice when the companions were asked for
	std::vector<EventSpec> all = asked;
	all.insert(all.end(), add.begin(), add.end());
	CHECK(errata_companions(all, midr).empty());

	const double values[] = {100, 1000, 1380, 20000, 20000, 30000, 30000, 500};
	REQUIRE(all.size() == std::size(values));
	std::vector<EventCount> counts;
	for (std::size_t i = 0; i < all.size(); ++i)
		counts.push_back({.number = all[i].number, .flags = all[i].flags, .value = values[i]});
	const auto u = compensate(counts, 0, midr), k = compensate(counts, 1, midr), mcq = compensate(counts, 2, midr);
	REQUIRE(u);
	REQUIRE(k);
	REQUIRE(mcq);
	// both compensated (x 1.21), each cross-checked against its own level:
	// 121 <= 20000 at EL0, 1210 <= 30000 at EL1
	REQUIRE(u->value);
	REQUIRE(k->value);
	CHECK(*u->value == Approx(121));
	CHECK(*k->value == Approx(1210));
	REQUIRE(u->cross_check);
	REQUIRE(k->cross_check);
	CHECK(u->cross_check->consistent);
	CHECK(k->cross_check->consistent);
	// r160:u minus min(1380 * 0.30, stall_backend_mem:u = 500): 1380 - 414
	REQUIRE(mcq->value);
	CHECK(*mcq->value == Approx(1380 - 414));
	CHECK(mcq->companion == 500);

	// a companion counted at other levels is not used: r160:u with only
	// stall_backend_mem:k
	const EventCount other[] = {{.number = 0x160, .flags = asked[2].flags, .value = 1380},
				    {.number = 0x4005, .flags = parse_event("stall_backend_mem:k", midr).flags,
				     .value = 500}};
	const auto alone = compensate(other, 0, midr);
	REQUIRE(alone);
	CHECK(alone->status == CompensationStatus::needs_companion);
	CHECK_FALSE(alone->value);
	CHECK(alone->erratum == &mcq_erratum());
}
