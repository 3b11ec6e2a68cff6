// SPDX-License-Identifier: GPL-2.0
//
// Derived metrics and the stat output formats [host]: synthetic counts.
#include "json_check.hpp"

#include <amupmu/events.hpp>
#include <amupmu/metrics.hpp>
#include <amupmu/stat.hpp>

#include <catch2/catch.hpp>

#include <sstream>

using namespace amupmu;
using Catch::Matchers::Contains;

namespace {

std::vector<std::string> split(const std::string& s, char sep)
{
	std::vector<std::string> out;
	std::string item;
	std::istringstream in{s};
	while (std::getline(in, item, sep))
		out.push_back(item);
	if (!s.empty() && s.back() == sep)
		out.emplace_back();
	return out;
}

StatReport sample_report()
{
	StatReport r;
	r.command = {"workload", "loop", "1000"};
	r.cpus = "0-1";
	r.cpu_description = "Arm Cortex-X2 r2p1";
	r.seconds = 1.25;
	r.exit_status = 0;
	r.rows = {{.name = "cpu_cycles", .number = 0x11, .value = 4000, .time_enabled = 100, .time_running = 100},
		  {.name = "inst_retired", .number = 0x08, .value = 2000, .time_enabled = 100, .time_running = 50},
		  {.name = "l1d_cache", .number = 0x04, .value = 1000},
		  {.name = "l1d_cache_refill", .number = 0x03, .value = 50},
		  {.name = "br_pred:u", .number = 0x12, .flags = parse_modifiers("u"), .modifiers = "u", .value = 400},
		  {.name = "br_mis_pred:u", .number = 0x10, .flags = parse_modifiers("u"), .modifiers = "u", .value = 40},
		  {.name = "stall_backend", .number = 0x24, .value = 1000},
		  {.name = "exc_undef", .number = 0x81, .value = 83}};
	apply_errata(r, 0x412FD481, {});
	derive_report_metrics(r);
	return r;
}

} // namespace

TEST_CASE("derived metrics and their formulas", "[host][metrics]")
{
	const EventCount counts[] = {{0x11, 0, 4000}, {0x08, 0, 2000}, {0x04, 0, 1000}, {0x03, 0, 50},
				     {0x12, 0, 400},  {0x10, 0, 40},   {0x24, 0, 1000}};
	const auto m = derive_metrics(counts);
	REQUIRE(m.size() == 4);
	CHECK(m[0].name == "ipc");
	CHECK(m[0].value == Approx(0.5));
	CHECK(m[1].name == "l1d_hit_rate");
	CHECK(m[1].value == Approx(95.0));
	CHECK(m[2].name == "branch_pred_accuracy");
	CHECK(m[2].value == Approx(90.0));
	CHECK(m[3].name == "backend_stall_share");
	CHECK(m[3].value == Approx(25.0));
	CHECK(m[1].formula == "1 - l1d_cache_refill / l1d_cache");

	// zero denominator, missing events: no metric
	const EventCount zero[] = {{0x11, 0, 0}, {0x08, 0, 10}, {0x03, 0, 5}};
	CHECK(derive_metrics(zero).empty());
	// the exclusions must agree: inst_retired:u with cpu_cycles (everything) is no IPC
	const std::uint32_t u = parse_modifiers("u");
	const EventCount mixed[] = {{0x11, 0, 100}, {0x08, u, 10}};
	CHECK(derive_metrics(mixed).empty());
	const EventCount same[] = {{0x11, u, 100}, {0x08, u | evflag::raw, 10}};	// raw is no filter
	REQUIRE(derive_metrics(same).size() == 1);
	CHECK(derive_metrics(same)[0].value == Approx(0.1));
	const EventCount k_and_u[] = {{0x11, parse_modifiers("k"), 100}, {0x08, u, 10}};
	CHECK(derive_metrics(k_and_u).empty());
}

TEST_CASE("group_digits", "[host][stat]")
{
	CHECK(group_digits(0) == "0");
	CHECK(group_digits(999) == "999");
	CHECK(group_digits(1000) == "1,000");
	CHECK(group_digits(20000123) == "20,000,123");
	CHECK(group_digits(-1234.4) == "-1,234");
}

TEST_CASE("stat text: the perf-stat-like table", "[host][stat][format]")
{
	const std::string t = format_stat_text(sample_report());
	CHECK_THAT(t, Contains("Performance counter stats for 'workload loop 1000' (CPUs 0-1, Arm Cortex-X2 r2p1)"));
	CHECK_THAT(t, Contains("               4,000      cpu_cycles"));
	CHECK_THAT(t, Contains("(50.00 %)"));
	CHECK_THAT(t, Contains("exc_undef (compensated)"));
	CHECK_THAT(t, Contains("AMUPMU-X2-EXC_UNDEF: factor 1.21 (default)"));
	CHECK_THAT(t, Contains("ipc"));
	CHECK_THAT(t, Contains("90.00 %      branch_pred_accuracy"));
	CHECK_THAT(t, Contains("1.250000 seconds time elapsed"));
	CHECK_THAT(t, Contains("note: AMUPMU-X2-EXC_UNDEF"));
}

TEST_CASE("stat JSON parses and carries raw + compensated", "[host][stat][format][json]")
{
	StatReport r = sample_report();
	for (const unsigned indent : {0u, 2u}) {
		const std::string j = format_stat_json(r, indent);
		INFO(j);
		CHECK(test::JsonChecker{j}.error().empty());
		CHECK_THAT(j, Contains("\"compensated\""));
		CHECK_THAT(j, Contains("\"AMUPMU-X2-EXC_UNDEF\""));
		CHECK_THAT(j, Contains("\"branch_pred_accuracy\""));
	}
	// the modifiers, and perf_event_attr's exclusions they set
	const std::string j = format_stat_json(r, 0);
	CHECK_THAT(j, Contains(R"("name":"br_pred:u","code":"0x0012","modifiers":"u","exclude":["kernel","hv"])"));
	CHECK_THAT(j, Contains(R"("name":"cpu_cycles","code":"0x0011","modifiers":"","exclude":[])"));
	r.interval_end = 0.5;
	r.rows[0].value = 1.0 / 3;
	CHECK(test::JsonChecker{format_stat_json(r, 0)}.error().empty());
	// compact form is one line
	const std::string one = format_stat_json(r, 0);
	CHECK(one.find('\n') == one.size() - 1);
}

TEST_CASE("stat CSV columns are stable", "[host][stat][format]")
{
	const StatReport r = sample_report();
	const std::string csv = format_stat_csv(r, ",");
	const auto lines = split(csv, '\n');
	// 8 counts + 1 compensated + 4 metrics (+ trailing empty)
	REQUIRE(lines.size() == 14);
	for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
		INFO(lines[i]);
		CHECK(split(lines[i], ',').size() == 9);
	}
	CHECK(lines[0] == "count,4000,,cpu_cycles,0x0011,100.00,,,");
	CHECK(lines[1] == "count,2000,,inst_retired,0x0008,50.00,,,");
	// the modifiers last: the columns before them are where they were
	CHECK(lines[4] == "count,400,,br_pred:u,0x0012,100.00,,,u");
	const auto comp = split(lines[8], ',');
	CHECK(comp[0] == "compensated");
	CHECK(comp[1] == "100");	// 83 * 1.21
	CHECK(comp[3] == "exc_undef");
	CHECK(comp[6] == "AMUPMU-X2-EXC_UNDEF");
	const auto metric = split(lines[9], ',');
	CHECK(metric[0] == "metric");
	CHECK(metric[1] == "0.5000");
	CHECK(metric[3] == "ipc");

	// another separator; a separator inside a field does not add columns
	const std::string semi = format_stat_csv(r, ";");
	for (const std::string& l : split(semi, '\n'))
		if (!l.empty())
			CHECK(split(l, ';').size() == 9);
	// intervals prepend a time column
	StatReport iv = r;
	iv.interval_end = 1.0;
	CHECK(format_stat_csv(iv, ",").starts_with("1.000000,count,4000,"));
}

TEST_CASE("stat --amu: the AMU report rides along in text, JSON and CSV", "[host][stat][format][amu]")
{
	StatReport r;
	r.command = {"true"};
	r.cpus = "0";
	r.rows.push_back({.name = "cpu_cycles", .number = 0x11, .value = 1000, .time_enabled = 10, .time_running = 10});
	AmuReport amu;
	amu.cpus = "0";
	amu.mock = true;
	amu.backend = "mock AMU model";
	AmuCpuDelta d;
	d.cpu = 0;
	d.frequency = {.value = 1.5e9, .why = AmuWhy::ok, .cpus = 1};
	d.ipc = {.value = 1.25, .why = AmuWhy::ok, .cpus = 1};
	d.mem_stall = {.value = 0, .why = AmuWhy::not_counted, .cpus = 0};
	d.active = {.value = 0.5, .why = AmuWhy::ok, .cpus = 1};
	amu.per_cpu = {d};
	amu.total = d;
	r.amu = amu;

	CHECK_THAT(format_stat_text(r), Contains("MOCK AMU MODEL"));
	const std::string json = format_stat_json(r);
	INFO(json);
	CHECK(test::json_error(json).empty());
	CHECK_THAT(json, Contains("\"amu\": {"));
	const std::string csv = format_stat_csv(r, ",");
	CHECK_THAT(csv, Contains("amu,1500.0000,MHz,frequency,0,,,ok,\n"));
	CHECK_THAT(csv, Contains("amu,,%,mem_stall,all,,,not counted,\n"));
	for (std::size_t pos = 0, nl; (nl = csv.find('\n', pos)) != std::string::npos; pos = nl + 1) {
		const std::string l = csv.substr(pos, nl - pos);
		INFO(l);
		CHECK(std::ranges::count(l, ',') == 8);	// the same nine columns
	}
}
