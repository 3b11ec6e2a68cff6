// SPDX-License-Identifier: GPL-2.0
//
// Numbers whatever the locale says [host]: an application that calls
// setlocale(LC_ALL, "") or std::locale::global() under a German locale
// (decimal comma, digits grouped with '.') gets the same stat, AMU and
// report text, CSV and JSON as under "C", recordings and calibration files
// that read back, and error messages with '.' decimals.
#include "locale_guard.hpp"
#include "tempdir.hpp"

#include <amupmu/amu.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/error.hpp>
#include <amupmu/events.hpp>
#include <amupmu/report/amu_format.hpp>
#include <amupmu/report/record.hpp>
#include <amupmu/report/stat.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

using namespace amupmu;
using namespace amupmu::report;
using Catch::Matchers::Contains;

namespace {

StatReport stat_report()
{
	StatReport r;
	r.command = {"workload"};
	r.cpus = "0";
	r.seconds = 1.25;
	r.interval_end = 0.5;
	r.rows = {{.name = "cpu_cycles", .number = 0x11, .value = 4000000, .time_enabled = 100, .time_running = 100},
		  {.name = "inst_retired", .number = 0x08, .value = 2000000, .time_enabled = 100, .time_running = 50},
		  {.name = "exc_undef", .number = 0x81, .value = 830}};
	apply_errata(r, 0x412FD481, {});
	derive_report_metrics(r);
	AmuReport amu;
	amu.cpus = "0";
	AmuCpuDelta d;
	d.cpu = 0;
	d.frequency = {.value = 1.5e9, .why = AmuWhy::ok, .cpus = 1};
	d.ipc = {.value = 1.25, .why = AmuWhy::ok, .cpus = 1};
	d.mem_stall = {.value = 0.3, .why = AmuWhy::ok, .cpus = 1};
	d.active = {.value = 0.5, .why = AmuWhy::ok, .cpus = 1};
	amu.per_cpu = {d};
	amu.total = d;
	amu.timer_freq = 62500000;
	r.amu = amu;
	return r;
}

Recording recording()
{
	Recording r;
	r.command = {"workload", "loop"};
	r.event = "inst_retired:u";
	r.number = 0x08;
	r.period = 100000;
	r.modifiers = "u";
	r.cpus = "0";
	r.timer_freq = 62500000;
	r.time = {.clock = Clock::cntvct, .time_shift = 24, .time_mult = 16u << 24, .time_zero = 1000,
		  .time_zero_ns = 5000000000};
	r.lost = 1234;
	for (std::uint64_t i = 0; i < 3; ++i)
		r.samples.push_back({0, 4242, 4242, SampleMode::user, 62500000 + i * 1000000, 0x400100 + i * 4});
	r.samples.push_back({0, 0, 0, SampleMode::kernel, 70000000, 0xffff800008001000});
	return r;
}

Calibration calibration()
{
	return {.midr = 0x412FD481,
		.values = {{"AMUPMU-X2-EXC_UNDEF", 1.19, 5, 0.004}, {"AMUPMU-X2-MCQ", 0.31, 4, 0.0125}}};
}

struct Texts {
	std::string stat_text, stat_csv, stat_json, amu_text, amu_csv, amu_json;
	std::string recording, report, calibration, calibration_error;
};

// everything that writes numbers, under the locale in effect
Texts texts()
{
	Texts t;
	const StatReport s = stat_report();
	t.stat_text = format_stat_text(s);
	t.stat_csv = format_stat_csv(s, ",");
	t.stat_json = format_stat_json(s);
	const AmuRun amu{.amu = *s.amu, .seconds = 1.25};
	t.amu_text = format_amu_text(amu);
	t.amu_csv = format_amu_csv(amu, ",");
	t.amu_json = format_amu_json(amu, 0);
	std::stringstream rec;	// a stream of the global locale, as an application's is
	write_recording(rec, recording());
	t.recording = rec.str();
	t.report = format_report(recording());
	t.calibration = format_calibration(calibration());
	try {
		(void)parse_calibration("midr = 0x1\nAMUPMU-X2-MCQ.mem_bound_factor = 1.5\n");
	} catch (const InvalidArgument& e) {
		t.calibration_error = e.operation();	// strerror() follows LC_MESSAGES
	}
	return t;
}

} // namespace

TEST_CASE("numbers: the same text under a German locale as under C", "[host][locale]")
{
	const Texts c = texts();
	// what the C locale writes, checked by hand
	CHECK_THAT(c.stat_csv, Contains("0.500000000,2000000,,inst_retired,50,50.00,0.50,ipc\n"));
	CHECK_THAT(c.stat_json, Contains(R"("counter-value" : "2000000.000000")"));
	CHECK_THAT(c.amu_csv, Contains("0,1500.000,1.2500,30.000,50.000,"));
	CHECK_THAT(c.stat_text, Contains("     0.500000000          2,000,000      inst_retired                     #     0.50 ipc"));
	CHECK_THAT(c.recording, Contains("\nevent inst_retired:u 0x0008 100000\n"));
	CHECK_THAT(c.recording, Contains("\nlost 1234\n"));
	CHECK_THAT(c.report, Contains(" 75.00%  3  "));
	CHECK_THAT(c.calibration, Contains("AMUPMU-X2-MCQ.residual = 0.0125\n"));
	CHECK_THAT(c.calibration_error, Contains("outside [0, 1]"));

	Texts de;
	{
		const test::GermanLocale german;
		de = texts();
	}
	CHECK(de.stat_text == c.stat_text);
	CHECK(de.stat_csv == c.stat_csv);
	CHECK(de.stat_json == c.stat_json);
	CHECK(de.amu_text == c.amu_text);
	CHECK(de.amu_csv == c.amu_csv);
	CHECK(de.amu_json == c.amu_json);
	CHECK(de.recording == c.recording);
	CHECK(de.report == c.report);
	CHECK(de.calibration == c.calibration);
	CHECK(de.calibration_error == c.calibration_error);
}

TEST_CASE("numbers: recordings and calibration files read back under a German locale", "[host][locale]")
{
	const test::TempDir dir{"amupmu-locale"};
	const test::GermanLocale german;
	// the CSV keeps its columns: no decimal comma splits a field
	const std::string csv = format_stat_csv(stat_report(), ",");
	for (std::size_t pos = 0, nl; (nl = csv.find('\n', pos)) != std::string::npos; pos = nl + 1) {
		const std::string line = csv.substr(pos, nl - pos);
		INFO(line);
		CHECK(std::ranges::count(line, ',') == 7);	// the interval's time and perf's seven columns
	}

	std::stringstream rec;
	write_recording(rec, recording());
	CHECK(read_recording(rec) == recording());

	const std::string path = (dir.path() / "calibration").string();
	save_calibration(calibration(), path);
	const auto loaded = load_calibration(path);
	REQUIRE(loaded);
	CHECK(*loaded == calibration());
	// a file written under "C" (or by an older amupmu) reads too
	test::put(dir.path() / "c", "midr = 0x412fd481\nAMUPMU-X2-EXC_UNDEF.factor = 1.19\n");
	const auto c = load_calibration((dir.path() / "c").string());
	REQUIRE(c);
	CHECK(c->value("AMUPMU-X2-EXC_UNDEF") == 1.19);
}
