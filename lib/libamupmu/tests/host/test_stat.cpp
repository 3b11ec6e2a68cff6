// SPDX-License-Identifier: GPL-2.0
//
// Derived metrics and the stat output formats [host]: synthetic counts.
#include "json_check.hpp"

#include <amupmu/compensation.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/events.hpp>
#include <amupmu/metrics.hpp>
#include <amupmu/report/stat.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace amupmu;
using namespace amupmu::report;
using Catch::Matchers::Contains;

namespace {

constexpr std::uint64_t midr_x2(unsigned variant, unsigned revision)
{
	return 0x410F0000u | (0xD48u << 4) | (variant << 20) | revision;
}

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

TEST_CASE("stat text: perf stat's table, metrics after '#' on the event's line", "[host][stat][format]")
{
	const std::string t = format_stat_text(sample_report());
	INFO(t);
	// perf's header for -a, the counts in "%18s %-4s %-32s"
	CHECK_THAT(t, Contains("\n Performance counter stats for 'system wide':\n\n"));
	CHECK_THAT(t, Contains("\n             4,000      cpu_cycles\n"));
	// a named metric as perf prints one ("%8.2f name", "%8.1f %  name"),
	// on its numerator's line; the running share after it
	CHECK_THAT(t, Contains("\n             2,000      inst_retired                     #     0.50 ipc"
			       "                         (50.00%)\n"));
	CHECK_THAT(t, Contains("\n                40      br_mis_pred:u                    #     90.0 %  "
			       "branch_pred_accuracy\n"));
	CHECK_THAT(t, Contains("\n                83      exc_undef                        #      100 compensated "
			       "(AMUPMU-X2-EXC_UNDEF)\n"));
	CHECK_THAT(t, Contains("\n       1.250000000 seconds time elapsed\n\n"));
	// amupmu's own information in comments
	CHECK_THAT(t, Contains("\n# counted on CPUs 0-1 (Arm Cortex-X2 r2p1): everything that runs there"));
	CHECK_THAT(t, Contains("\n# command 'workload loop 1000'\n"));
	CHECK_THAT(t, Contains("\n# AMUPMU-X2-EXC_UNDEF: exc_undef: factor 1.21 (default)"));
	CHECK_THAT(t, Contains("\n# note: AMUPMU-X2-EXC_UNDEF"));
	// every line is perf's: blank, a header, a count, the elapsed time or a comment
	for (const std::string& l : split(t, '\n')) {
		INFO(l);
		CHECK((l.empty() || l.starts_with(" Performance counter stats for ") || l.starts_with("# ") ||
		       l.ends_with(" seconds time elapsed") || l.substr(0, 18).find_first_not_of(" 0123456789,") ==
								    std::string::npos));
	}

	// -C: perf's 'CPU(s) LIST'
	StatReport c = sample_report();
	c.system_wide = false;
	CHECK_THAT(format_stat_text(c), Contains(" Performance counter stats for 'CPU(s) 0-1':\n"));
	// -I: the interval's end first ("%6lu.%09lu "), the column header once
	StatReport iv = sample_report();
	iv.interval_end = 1.5;
	iv.interval_header = true;
	const std::string it = format_stat_text(iv);
	CHECK(it.starts_with("#           time             counts unit events\n"
			     "     1.500000000              4,000      cpu_cycles\n"));
	CHECK(it.find("Performance counter stats") == std::string::npos);
}

TEST_CASE("stat JSON: perf's objects, one per counter and line", "[host][stat][format][json]")
{
	StatReport r = sample_report();
	const std::string j = format_stat_json(r);
	const auto lines = split(j, '\n');
	// 8 counters, a last empty
	REQUIRE(lines.size() == 9);
	for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
		INFO(lines[i]);
		CHECK(test::JsonChecker{lines[i]}.error().empty());
	}
	CHECK(lines[0] == R"({"counter-value" : "4000.000000", "unit" : "", "event" : "cpu_cycles", )"
			  R"("event-runtime" : 100, "pcnt-running" : 100.00})");
	CHECK(lines[1] == R"({"counter-value" : "2000.000000", "unit" : "", "event" : "inst_retired", )"
			  R"("event-runtime" : 50, "pcnt-running" : 50.00, "metric-value" : "0.500000", "metric-unit" : "ipc"})");
	CHECK(lines[5] == R"({"counter-value" : "40.000000", "unit" : "", "event" : "br_mis_pred:u", )"
			  R"("event-runtime" : 0, "pcnt-running" : 100.00, "metric-value" : "90.000000", )"
			  R"("metric-unit" : "%  branch_pred_accuracy"})");
	CHECK_THAT(lines[7], Contains(R"j("metric-value" : "100.430000", "metric-unit" : "compensated (AMUPMU-X2-EXC_UNDEF)"})j"));
	// -I: "interval" first
	r.interval_end = 0.5;
	CHECK(format_stat_json(r).starts_with(R"({"interval" : 0.500000000, "counter-value" : "4000.000000", )"));
}

TEST_CASE("stat -x: perf's columns", "[host][stat][format]")
{
	const StatReport r = sample_report();
	const std::string csv = format_stat_csv(r, ",");
	INFO(csv);
	const auto lines = split(csv, '\n');
	std::vector<std::string> counts, notes;
	for (const std::string& l : lines) {
		if (l.starts_with("#"))
			notes.push_back(l);
		else
			counts.push_back(l);
	}
	// 8 counters (and the last empty), comments after them
	REQUIRE(counts.size() == 9);
	CHECK(lines[8].starts_with("# "));
	for (std::size_t i = 0; i + 1 < counts.size(); ++i) {
		INFO(counts[i]);
		// value, unit, event, run time, running %, metric value, metric unit
		CHECK(split(counts[i], ',').size() == 7);
	}
	CHECK(counts[0] == "4000,,cpu_cycles,100,100.00,,");
	CHECK(counts[1] == "2000,,inst_retired,50,50.00,0.50,ipc");
	CHECK(counts[3] == "50,,l1d_cache_refill,0,100.00,95.0,%  l1d_hit_rate");
	CHECK(counts[4] == "400,,br_pred:u,0,100.00,,");
	CHECK(counts[7] == "83,,exc_undef,0,100.00,100,compensated (AMUPMU-X2-EXC_UNDEF)");
	CHECK_THAT(csv, Contains("\n# AMUPMU-X2-EXC_UNDEF: exc_undef: factor 1.21 (default)"));

	// another separator; a separator inside a field does not add columns
	const std::string semi = format_stat_csv(r, ";");
	for (const std::string& l : split(semi, '\n'))
		if (!l.empty() && !l.starts_with("#"))
			CHECK(split(l, ';').size() == 7);
	// intervals prepend perf's time column, the totals after them "summary"
	StatReport iv = r;
	iv.interval_end = 1.0;
	CHECK(format_stat_csv(iv, ",").starts_with("1.000000000,4000,,cpu_cycles,100,100.00,,\n"));
	CHECK(format_stat_csv(iv, ",").find('#') == std::string::npos);
	StatReport sum = r;
	sum.summary = true;
	CHECK(format_stat_csv(sum, ",").starts_with("summary,4000,,cpu_cycles,100,100.00,,\n"));
}

TEST_CASE("stat: a second metric of a row goes on a line of its own", "[host][stat][format]")
{
	StatReport r;
	r.cpus = "0";
	r.rows = {{.name = "inst_retired", .number = 0x08, .value = 100, .time_enabled = 10, .time_running = 10,
		   .compensated = 120.0, .erratum = "X"},
		  {.name = "cpu_cycles", .number = 0x11, .value = 200, .time_enabled = 10, .time_running = 10}};
	derive_report_metrics(r);
	const auto csv = split(format_stat_csv(r, ","), '\n');
	CHECK(csv[0] == "100,,inst_retired,10,100.00,0.50,ipc");
	CHECK(csv[1] == ",,,,,120,compensated (X)");
	const auto json = split(format_stat_json(r), '\n');
	CHECK(json[1] == R"j({"metric-value" : "120.000000", "metric-unit" : "compensated (X)"})j");
	const auto text = split(format_stat_text(r), '\n');
	CHECK(text[3] == "               100      inst_retired                     #     0.50 ipc");
	// the 49 blanks of perf's do_new_line_std()
	CHECK(text[4] == "                                                  #      120 compensated (X)");
}

TEST_CASE("stat --amu: the AMU figures as counter lines, the backend in a comment", "[host][stat][format][amu]")
{
	StatReport r;
	r.command = {"true"};
	r.cpus = "0";
	r.seconds = 0.5;	// the AMU lines' run time
	r.rows.push_back({.name = "cpu_cycles", .number = 0x11, .value = 1000, .time_enabled = 10, .time_running = 10});
	AmuReport amu;
	amu.cpus = "0";
	amu.mock = true;
	AmuCpuDelta d;
	d.cpu = 0;
	d.frequency = {.value = 1.5e9, .why = AmuWhy::ok, .cpus = 1};
	d.ipc = {.value = 1.25, .why = AmuWhy::ok, .cpus = 1};
	d.mem_stall = {.value = 0, .why = AmuWhy::not_counted, .cpus = 0};
	d.active = {.value = 0.5, .why = AmuWhy::ok, .cpus = 1};
	amu.per_cpu = {d};
	amu.total = d;
	r.amu = amu;

	const std::string text = format_stat_text(r);
	INFO(text);
	CHECK_THAT(text, Contains("\n          1,500.00 MHz  amu/frequency/\n"));
	CHECK_THAT(text, Contains("\n     <not counted> %    amu/mem_stall/\n"));
	CHECK_THAT(text, Contains("\n# amu: MOCK AMU MODEL"));
	const std::string json = format_stat_json(r);
	CHECK_THAT(json, Contains(R"({"counter-value" : "1500.000000", "unit" : "MHz", "event" : "amu/frequency/", )"
				  R"("event-runtime" : 500000000, "pcnt-running" : 100.00})"));
	const std::string csv = format_stat_csv(r, ",");
	CHECK_THAT(csv, Contains("\n1500.00,MHz,amu/frequency/,500000000,100.00,,\n"));
	CHECK_THAT(csv, Contains("\n<not counted>,%,amu/mem_stall/,500000000,100.00,,\n"));
	CHECK_THAT(csv, Contains("\n50.00,%,amu/active/,"));
}

TEST_CASE("RunStats: perf's mean and standard deviation of the mean", "[host][stat]")
{
	RunStats s;
	CHECK(s.stddev_mean() == 0);
	CHECK(s.rel_stddev_pct() == 0);
	s.add(10);
	CHECK(s.mean() == 10);
	CHECK(s.stddev_mean() == 0);	// one run: no deviation
	s.add(12);
	s.add(14);
	CHECK(s.count() == 3);
	CHECK(s.mean() == Approx(12));
	// M2 = 8, variance 8 / 2 = 4, of the mean 4 / 3
	CHECK(s.stddev_mean() == Approx(std::sqrt(4.0 / 3)));
	CHECK(s.rel_stddev_pct() == Approx(100 * std::sqrt(4.0 / 3) / 12));
}

namespace {

// two CPUs' rows, event by event, as amupmu stat -A reads them
StatReport per_cpu_report()
{
	StatReport r;
	r.cpus = "0-1";
	for (const int cpu : {0, 1}) {
		r.rows.push_back({.name = "cpu_cycles", .number = 0x11, .value = 1000.0 * (cpu + 1),
				  .time_enabled = 10, .time_running = 10, .cpu = cpu});
	}
	for (const int cpu : {0, 1}) {
		r.rows.push_back({.name = "inst_retired", .number = 0x08, .value = 500.0 * (cpu + 1) + 500 * cpu,
				  .time_enabled = 10, .time_running = 10, .cpu = cpu});
	}
	derive_report_metrics(r);
	return r;
}

} // namespace

TEST_CASE("stat -A: each CPU's lines, the metrics of each CPU's counts", "[host][stat][format]")
{
	const StatReport r = per_cpu_report();
	// ipc of CPU 0 = 500 / 1000, of CPU 1 = 1500 / 2000
	REQUIRE(r.metrics.size() == 2);
	CHECK(r.metrics[0].value == Approx(0.5));
	CHECK(r.metrics[0].source == 2);
	CHECK(r.metrics[1].value == Approx(0.75));
	CHECK(r.metrics[1].source == 3);

	const auto csv = split(format_stat_csv(r, ","), '\n');
	CHECK(csv[0] == "CPU0,1000,,cpu_cycles,10,100.00,,");
	CHECK(csv[1] == "CPU1,2000,,cpu_cycles,10,100.00,,");
	CHECK(csv[2] == "CPU0,500,,inst_retired,10,100.00,0.50,ipc");
	CHECK(csv[3] == "CPU1,1500,,inst_retired,10,100.00,0.75,ipc");
	const auto json = split(format_stat_json(r), '\n');
	CHECK(json[3] == R"({"cpu" : "1", "counter-value" : "1500.000000", "unit" : "", "event" : "inst_retired", )"
			 R"("event-runtime" : 10, "pcnt-running" : 100.00, "metric-value" : "0.750000", "metric-unit" : "ipc"})");
	const std::string text = format_stat_text(r);
	INFO(text);
	// "CPU%-3d " then perf's columns
	CHECK_THAT(text, Contains("\nCPU0                1,000      cpu_cycles\n"));
	CHECK_THAT(text, Contains("\nCPU1                1,500      inst_retired                     #     0.75 ipc\n"));
	// rows given CPU by CPU are printed event by event
	StatReport mixed = r;
	std::swap(mixed.rows[1], mixed.rows[2]);	// cycles 0, inst 0, cycles 1, inst 1
	derive_report_metrics(mixed);
	const auto m = split(format_stat_csv(mixed, ","), '\n');
	CHECK(m[0].starts_with("CPU0,1000,,cpu_cycles,"));
	CHECK(m[1].starts_with("CPU1,2000,,cpu_cycles,"));
	CHECK(m[2].starts_with("CPU0,500,,inst_retired,"));
}

TEST_CASE("stat -r: the means, ( +- x% ) as perf prints the noise", "[host][stat][format]")
{
	StatReport r;
	r.cpus = "0";
	r.runs = 3;
	r.seconds = 0.5;
	r.seconds_stddev = 0.01;
	r.rows = {{.name = "cpu_cycles", .number = 0x11, .value = 1000, .time_enabled = 10, .time_running = 10,
		   .noise_pct = 1.5},
		  {.name = "inst_retired", .number = 0x08, .value = 500, .time_enabled = 10, .time_running = 10,
		   .noise_pct = 0.25}};
	derive_report_metrics(r);
	const std::string text = format_stat_text(r);
	INFO(text);
	CHECK_THAT(text, Contains(" Performance counter stats for 'system wide' (3 runs):\n"));
	CHECK_THAT(text, Contains("\n             1,000      cpu_cycles" + std::string(38 + 32 - 10, ' ') +
				  "  ( +-  1.50% )\n"));
	CHECK_THAT(text, Contains("#     0.50 ipc                         ( +-  0.25% )\n"));
	// print_footer(): 2 digits more than the deviation's first
	CHECK_THAT(text, Contains("\n            0.5000 +- 0.0100 seconds time elapsed  ( +-  2.00% )\n"));
	const auto csv = split(format_stat_csv(r, ","), '\n');
	// the noise after the event, as perf's print_noise() before print_running()
	CHECK(csv[0] == "1000,,cpu_cycles,1.50%,10,100.00,,");
	CHECK(csv[1] == "500,,inst_retired,0.25%,10,100.00,0.50,ipc");
	const auto json = split(format_stat_json(r), '\n');
	CHECK(json[0] == R"({"counter-value" : "1000.000000", "unit" : "", "event" : "cpu_cycles", "variance" : 1.50, )"
			 R"("event-runtime" : 10, "pcnt-running" : 100.00})");
}

TEST_CASE("stat -M and --metric-only", "[host][stat][format][metrics]")
{
	StatReport r = sample_report();
	const std::string only[] = {"ipc", "branch_pred_accuracy"};
	derive_report_metrics(r, only);
	REQUIRE(r.metrics.size() == 2);
	CHECK(r.metrics[0].name == "ipc");
	CHECK(r.metrics[1].name == "branch_pred_accuracy");
	const std::string bogus[] = {"ipc", "bogus"};
	CHECK_THROWS_WITH(derive_report_metrics(r, bogus), Contains("metric 'bogus' (amupmu has ipc, l1d_hit_rate"));

	const StatFormat mo{.metric_only = true};
	// metrics only: the compensated count is exc_undef's metric too
	const auto csv = split(format_stat_csv(r, ",", mo), '\n');
	CHECK(csv[0] == "ipc,%  branch_pred_accuracy,compensated (AMUPMU-X2-EXC_UNDEF),");
	CHECK(csv[1] == "0.50,90.0,100,");
	CHECK(csv[2].starts_with("# "));
	const auto json = split(format_stat_json(r, mo), '\n');
	CHECK(json[0] == R"({"ipc" : "0.50", "%  branch_pred_accuracy" : "90.0", )"
			 R"j("compensated (AMUPMU-X2-EXC_UNDEF)" : "100"})j");
	CHECK(json.size() == 2);
	const auto text = split(format_stat_text(r, mo), '\n');
	CHECK(text[1] == " Performance counter stats for 'system wide':");
	CHECK(text[3] == "                  ipc  %  branch_pred_accuracy  compensated (AMUPMU-X2-EXC_UNDEF)");
	CHECK(text[4] == "                 0.50                     90.0                                100");
	// per CPU: a line each, the CPU first
	StatReport pc = per_cpu_report();
	const auto pcsv = split(format_stat_csv(pc, ",", mo), '\n');
	CHECK(pcsv[0] == "cpu,ipc,");
	CHECK(pcsv[1] == "CPU0,0.50,");
	CHECK(pcsv[2] == "CPU1,0.75,");
	// -I: the time first, the header on the first interval
	pc.interval_end = 1.0;
	pc.interval_header = true;
	const auto iv = split(format_stat_csv(pc, ",", mo), '\n');
	CHECK(iv[0] == "time,cpu,ipc,");
	CHECK(iv[1] == "1.000000000,CPU0,0.50,");
	pc.interval_header = false;
	CHECK(split(format_stat_csv(pc, ",", mo), '\n')[0] == "1.000000000,CPU0,0.50,");
	CHECK(format_stat_json(pc, mo).starts_with(R"({"interval" : 1.000000000, "cpu" : "0", "ipc" : "0.50"})"));
}

TEST_CASE("derived metrics: one per count of the numerator, with its own exclusions", "[host][metrics]")
{
	const std::uint32_t u = parse_modifiers("u"), k = parse_modifiers("k");
	const EventCount counts[] = {{0x11, u, 100}, {0x08, u, 50}, {0x11, k, 200}, {0x08, k, 20}};
	const auto m = derive_metrics(counts);
	REQUIRE(m.size() == 2);
	CHECK(m[0].value == Approx(0.5));
	CHECK(m[0].source == 1);
	CHECK(m[1].value == Approx(0.1));
	CHECK(m[1].source == 3);
	CHECK(find_metric_def("ipc")->numerator == 0x08);
	CHECK(find_metric_def("nope") == nullptr);
}

TEST_CASE("stat rows from a Counters result: summed, per CPU (-A), added, offline", "[host][stat]")
{
	// what Counters::read()/result() give: CPU 0 and CPU 1, which went
	// offline before the read
	std::vector<CpuReading> cpus(2);
	cpus[0].cpu = 0;
	cpus[0].nr_values = 2;
	cpus[0].values[0].value = 100;
	cpus[0].values[1].value = (std::uint64_t{1} << 53) + 1;	// not a double; sums exactly
	cpus[0].time_running = 900;
	cpus[1].cpu = 1;
	cpus[1].nr_values = 2;
	cpus[1].values[0].value = 50;
	cpus[1].values[1].value = 1;
	cpus[1].time_running = 400;
	cpus[1].state = read_state::offline;
	const CounterResult counts{{parse_event("cycles:u", 0), parse_event("exc_taken:u", 0)}, cpus, 1000};

	StatReport sum;
	add_counter_rows(sum, counts, false, {false, true});
	REQUIRE(sum.rows.size() == 2);
	CHECK(sum.rows[0].name == "cycles:u");
	CHECK(sum.rows[0].modifiers == "u");
	CHECK(sum.rows[0].value == 150);
	CHECK(sum.rows[0].cpu == -1);
	CHECK(sum.rows[0].time_enabled == 1000);
	CHECK(sum.rows[0].time_running == 400);
	CHECK_FALSE(sum.rows[0].added);
	CHECK(sum.rows[1].added);
	CHECK(sum.rows[1].value == static_cast<double>(counts.total(1)));
	REQUIRE(sum.notes.size() == 1);
	CHECK(sum.notes[0] == "CPU 1 was offline: its totals stopped then");

	StatReport per;
	add_counter_rows(per, counts, true);
	REQUIRE(per.rows.size() == 4);	// event by event, each CPU
	CHECK(per.rows[0].cpu == 0);
	CHECK(per.rows[0].value == 100);
	CHECK(per.rows[0].time_running == 900);
	CHECK(per.rows[1].cpu == 1);
	CHECK(per.rows[1].value == 50);
	CHECK(per.rows[1].time_running == 400);
	CHECK(per.rows[2].name == "exc_taken:u");
	CHECK(per.rows[3].value == 1);
	CHECK_FALSE(per.rows[3].added);	// no added list: none added
}

TEST_CASE("stat in shared mode: a comment line, a warning for evicted CPUs", "[host][stat][format]")
{
	std::vector<CpuReading> cpus(3);
	for (unsigned i = 0; i < 3; ++i) {
		cpus[i].cpu = i;
		cpus[i].state = read_state::enabled | read_state::shared;
	}
	StatReport r = sample_report();
	add_pmu_state(r, PmuMode::shared, cpus);
	CHECK(r.pmu_mode == PmuMode::shared);
	CHECK(r.evicted_cpus.empty());
	std::string t = format_stat_text(r);
	INFO(t);
	CHECK_THAT(t, Contains("\n# pmu: shared mode: arm_pmu owns the PMU, counted through perf core (pinned "
			       "counters)\n"));
	CHECK_THAT(t, !Contains("evicted"));

	cpus[2].state |= read_state::evicted;
	cpus[0].state |= read_state::evicted;
	StatReport e = sample_report();
	add_pmu_state(e, PmuMode::shared, cpus);
	add_pmu_state(e, PmuMode::shared, cpus);	// a CPU is named once
	CHECK(e.evicted_cpus == std::vector<unsigned>{0, 2});
	t = format_stat_text(e);
	CHECK_THAT(t, Contains("\n# warning: perf core took counters away on CPUs 0,2 (evicted): counts short\n"));
	cpus[0].state &= ~read_state::evicted;
	StatReport one = sample_report();
	add_pmu_state(one, PmuMode::shared, cpus);
	CHECK_THAT(format_stat_csv(one, ","),
		   Contains("\n# warning: perf core took counters away on CPU 2 (evicted): counts short\n"));
	// perf's JSON has no comments: nothing added there
	CHECK_THAT(format_stat_json(one), !Contains("evicted"));

	// exclusive mode: no line about the mode
	StatReport x = sample_report();
	cpus[2].state = read_state::enabled;
	add_pmu_state(x, PmuMode::exclusive, cpus);
	CHECK_THAT(format_stat_text(x), !Contains("# pmu:"));
}

namespace {

// A multiplexed group on CPUs 0 and 1 (Counters with set_multiplex()):
// cycles ran 2/3 of the time on both, instructions all the time, br_pred
// never.
CounterResult multiplexed_result(std::uint64_t scale = 1)
{
	std::vector<CpuReading> cpus(2);
	std::vector<CpuTimes> times(2);
	const std::uint64_t raw[2][3] = {{1000, 3000, 0}, {1000, 1000, 0}};
	for (unsigned k = 0; k < 2; ++k) {
		cpus[k].cpu = k;
		cpus[k].nr_values = 3;
		cpus[k].state = read_state::enabled | read_state::shared;
		cpus[k].time_running = 3000 * scale;
		for (unsigned e = 0; e < 3; ++e)
			cpus[k].values[e].value = raw[k][e] * scale;
		times[k].events[0] = {.enabled = 3000 * scale, .running = 2000 * scale};
		times[k].events[1] = {.enabled = 3000 * scale, .running = 3000 * scale};
		times[k].events[2] = {.enabled = 3000 * scale, .running = 0};
	}
	return CounterResult{{parse_event("cycles", 0), parse_event("instructions", 0), parse_event("br_pred", 0)},
			     cpus, times, 3000 * scale};
}

StatReport multiplexed_report(const CounterResult& counts, bool per_cpu)
{
	StatReport r;
	r.cpus = "0-1";
	r.seconds = 0.5;
	add_counter_rows(r, counts, per_cpu);
	std::vector<CpuReading> readings(2);
	readings[0].state = readings[1].state = read_state::shared;
	add_pmu_state(r, PmuMode::shared, readings);
	derive_report_metrics(r);
	return r;
}

} // namespace

TEST_CASE("stat --multiplex: perf's scaled counts with their running share, <not counted>", "[host][stat][format][multiplex]")
{
	const StatReport r = multiplexed_report(multiplexed_result(), false);
	CHECK(r.multiplexed);
	REQUIRE(r.rows.size() == 3);
	// perf stat's aggregate: raw 2000 in 4000 of 6000 ns -> 3000
	CHECK(r.rows[0].value == 3000);
	CHECK(r.rows[0].raw == 2000);
	CHECK(r.rows[0].time_enabled == 6000);
	CHECK(r.rows[0].time_running == 4000);
	CHECK(r.rows[0].multiplexed);
	CHECK(r.rows[1].value == 4000);
	CHECK(r.rows[1].time_running == 6000);
	CHECK_FALSE(r.rows[2].counted);
	CHECK(r.rows[2].time_running == 0);
	// the metric of the estimates: ipc 4000 / 3000; none of a count not counted
	REQUIRE(r.metrics.size() == 1);
	CHECK(r.metrics[0].value == Approx(4000.0 / 3000));

	const std::string t = format_stat_text(r);
	INFO(t);
	CHECK_THAT(t, Contains("\n             3,000      cycles                              "
			       "                                    (66.67%)\n"));
	CHECK_THAT(t, Contains("\n             4,000      instructions                     #     1.33 ipc\n"));
	CHECK_THAT(t, Contains("\n     <not counted>      br_pred                             "
			       "                                    (0.00%)\n"));
	CHECK_THAT(t, Contains("\n# pmu: shared mode: arm_pmu owns the PMU, counted through perf core (multiplexed: a "
			       "count that ran part of the time is perf's estimate, count x time enabled / time "
			       "running, with its running share)\n"));
	CHECK_THAT(t, Contains("\n# note: br_pred was never on a counter (multiplexed): not counted\n"));

	// -x: perf's run time (ns) and running % columns
	const std::string csv = format_stat_csv(r, ",");
	INFO(csv);
	CHECK(csv.starts_with("3000,,cycles,4000,66.67,,\n"
			      "4000,,instructions,6000,100.00,1.33,ipc\n"
			      "<not counted>,,br_pred,0,0.00,,\n"));
	// --json: perf's "event-runtime" and "pcnt-running"
	const std::string j = format_stat_json(r);
	INFO(j);
	const auto lines = split(j, '\n');
	REQUIRE(lines.size() == 4);
	for (std::size_t i = 0; i < 3; ++i)
		CHECK(test::JsonChecker{lines[i]}.error().empty());
	CHECK(lines[0] == R"({"counter-value" : "3000.000000", "unit" : "", "event" : "cycles", )"
			  R"("event-runtime" : 4000, "pcnt-running" : 66.67})");
	CHECK(lines[2] == R"({"counter-value" : "<not counted>", "unit" : "", "event" : "br_pred", )"
			  R"("event-runtime" : 0, "pcnt-running" : 0.00})");

	// -A: each CPU's count scaled by its own times
	const StatReport per = multiplexed_report(multiplexed_result(), true);
	REQUIRE(per.rows.size() == 6);
	CHECK(per.rows[0].cpu == 0);
	CHECK(per.rows[0].value == 1500);
	CHECK(per.rows[0].time_enabled == 3000);
	CHECK(per.rows[0].time_running == 2000);
	CHECK(per.rows[3].cpu == 1);
	CHECK(per.rows[3].value == 1000);
	CHECK_FALSE(per.rows[5].counted);
	CHECK_THAT(format_stat_csv(per, ","), Contains("CPU1,1500,,cycles,2000,66.67,,\n"));

	// pinned shared mode keeps its comment
	StatReport pinned;
	pinned.pmu_mode = PmuMode::shared;
	CHECK_THAT(format_stat_text(pinned), Contains("(pinned counters)"));
}

TEST_CASE("stat -I --multiplex: an interval's count scaled from the deltas, as perf's", "[host][stat][multiplex]")
{
	// the totals at the first and the second interval: the second interval
	// adds what the first counted again (the same raw counts and times)
	const StatReport first = multiplexed_report(multiplexed_result(1), false);
	StatReport second = multiplexed_report(multiplexed_result(2), false);
	subtract_previous(second, first.rows);
	CHECK(second.rows[0].raw == 2000);
	CHECK(second.rows[0].time_enabled == 6000);
	CHECK(second.rows[0].time_running == 4000);
	CHECK(second.rows[0].value == 3000);
	CHECK(second.rows[1].value == 4000);
	CHECK_FALSE(second.rows[2].counted);

	// pinned rows: the values' differences (the times as they were)
	StatReport a, b;
	a.rows = {{.name = "cycles", .value = 100, .time_enabled = 10, .time_running = 10}};
	b.rows = {{.name = "cycles", .value = 250, .time_enabled = 20, .time_running = 20},
		  {.name = "extra", .value = 7}};
	subtract_previous(b, a.rows);
	CHECK(b.rows[0].value == 150);
	CHECK(b.rows[0].time_enabled == 20);
	CHECK(b.rows[1].value == 7);	// beyond the previous rows: as it was
}

TEST_CASE("apply_errata: compensated beside raw, with the erratum id; can be turned off", "[host][stat][errata]")
{
	const auto report_of = [](std::uint64_t midr, const CompensationOptions& o) {
		StatReport r;
		r.rows = {{.name = "exc_undef", .number = 0x81, .value = 830},
			  {.name = "exc_taken", .number = 0x09, .value = 5000},
			  {.name = "exc_return", .number = 0x0A, .value = 5000},
			  {.name = "imp_stall_backend_mcq", .number = 0x160, .value = 1380},
			  {.name = "stall_backend_mem", .number = 0x4005, .value = 800},
			  {.name = "inst_retired", .number = 0x08, .value = 1e6}};
		apply_errata(r, midr, o);
		return r;
	};
	const StatReport on = report_of(midr_x2(2, 1), {});
	REQUIRE(on.rows[0].compensated);
	CHECK(*on.rows[0].compensated == Approx(830 * 1.21));
	CHECK(on.rows[0].value == 830);	// raw kept
	CHECK(on.rows[0].erratum == "AMUPMU-X2-EXC_UNDEF");
	CHECK_THAT(on.rows[0].note, Contains("cross-check ok"));
	REQUIRE(on.rows[3].compensated);
	CHECK(*on.rows[3].compensated == Approx(1380 - 1380 * 0.30));
	CHECK(on.rows[3].erratum == "AMUPMU-X2-MCQ");
	CHECK_FALSE(on.rows[5].compensated);
	CHECK(on.notes.size() == 2);
	// the erratum's provenance and the parameter's source
	CHECK_THAT(on.notes[0], Contains("AMUPMU-X2-EXC_UNDEF: ") && Contains("seed 003"));
	CHECK_THAT(on.rows[0].note, Contains("factor 1.21 (default)"));
	const Calibration cal{.midr = midr_x2(2, 1), .values = {{.erratum = "AMUPMU-X2-MCQ", .value = 0.25}}};
	const StatReport calibrated = report_of(midr_x2(2, 1), {.calibration = cal});
	CHECK_THAT(calibrated.rows[3].note, Contains("mem_bound_factor 0.25 (calibrated)"));
	REQUIRE(calibrated.rows[3].compensated);
	CHECK(*calibrated.rows[3].compensated == Approx(1380 - 1380 * 0.25));

	const StatReport off = report_of(midr_x2(2, 1), {.enabled = false});
	CHECK_FALSE(off.rows[0].compensated);
	CHECK(off.rows[0].erratum == "AMUPMU-X2-EXC_UNDEF");
	CHECK_THAT(off.rows[0].note, Contains("compensation off"));

	const StatReport later = report_of(midr_x2(3, 0), {});
	CHECK_FALSE(later.rows[0].compensated);
	CHECK_THAT(later.rows[0].note, Contains("verify"));

	const StatReport qemu = report_of(0x000f0510, {});
	CHECK_FALSE(qemu.rows[0].compensated);
	CHECK(qemu.rows[0].erratum.empty());
	CHECK(qemu.notes.empty());
}

TEST_CASE("apply_errata: each row of an event with its own modifiers and companions", "[host][stat][errata]")
{
	const std::uint64_t midr = midr_x2(2, 1);
	// exc_undef at EL0 and at EL1: each needs exc_taken/exc_return counted
	// at its own levels, r160 at EL0 stall_backend_mem:u
	const std::vector<EventSpec> asked = parse_event_list("exc_undef:u,exc_undef:k,r160:u", midr);
	const std::vector<EventSpec> add = errata_companions(asked, midr);
	std::vector<EventSpec> all = asked;
	all.insert(all.end(), add.begin(), add.end());

	StatReport r;
	const double values[] = {100, 1000, 1380, 20000, 20000, 30000, 30000, 500};
	const auto by_name = [&](std::string_view n) {
		return std::ranges::find_if(r.rows, [&](const StatRow& row) { return row.name == n; });
	};
	REQUIRE(all.size() == std::size(values));
	std::size_t i = 0;
	for (const EventSpec& e : all)
		r.rows.push_back({.name = e.name, .number = e.number, .flags = e.flags, .modifiers = e.modifiers,
				  .value = values[i++]});
	apply_errata(r, midr, {});
	const auto u = by_name("exc_undef:u"), k = by_name("exc_undef:k"), mcq = by_name("r160:u");
	REQUIRE(u != r.rows.end());
	REQUIRE(k != r.rows.end());
	REQUIRE(mcq != r.rows.end());
	// both compensated (x 1.21), each cross-checked against its own level:
	// 121 <= 20000 at EL0, 1210 <= 30000 at EL1
	REQUIRE(u->compensated);
	REQUIRE(k->compensated);
	CHECK(*u->compensated == Approx(121));
	CHECK(*k->compensated == Approx(1210));
	CHECK_THAT(u->note, Contains("cross-check ok"));
	CHECK_THAT(k->note, Contains("cross-check ok"));
	// r160:u minus min(1380 * 0.30, stall_backend_mem:u = 500): 1380 - 414
	REQUIRE(mcq->compensated);
	CHECK(*mcq->compensated == Approx(1380 - 414));
	CHECK_THAT(mcq->note, Contains("stall_backend_mem:u"));
	// one note per erratum, not per row
	CHECK(r.notes.size() == 2);

	// a companion counted at other levels is not used: r160:u with only
	// stall_backend_mem:k
	StatReport other;
	other.rows = {{.name = "r160:u", .number = 0x160, .flags = asked[2].flags, .modifiers = "u", .value = 1380},
		      {.name = "stall_backend_mem:k",
		       .number = 0x4005,
		       .flags = parse_event("stall_backend_mem:k", midr).flags,
		       .modifiers = "k",
		       .value = 500}};
	apply_errata(other, midr, {});
	CHECK_FALSE(other.rows[0].compensated);
	CHECK_THAT(other.rows[0].note, Contains("needs stall_backend_mem:u"));
}
