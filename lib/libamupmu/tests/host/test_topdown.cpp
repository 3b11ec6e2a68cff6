// SPDX-License-Identifier: GPL-2.0
//
// Top-down metrics as data (topdown.hpp): the expression evaluator, the
// sets by MIDR, golden inputs with the values worked out by hand, missing
// inputs; and amupmu stat's use of them (derive_topdown(), the AMU rows).
#include <catch2/catch.hpp>

#include <amupmu/report/stat.hpp>
#include <amupmu/topdown.hpp>

#include <cmath>
#include <map>
#include <string>

using namespace amupmu;
using namespace amupmu::report;

namespace {

using Counts = std::map<std::string, double>;

auto lookup(const Counts& c)
{
	return [&c](std::string_view name) -> std::optional<double> {
		const auto it = c.find(std::string{name});
		return it == c.end() ? std::nullopt : std::optional<double>{it->second};
	};
}

// golden inputs: 5 slots per cycle, 1000 cycles; the stall slots split
// 1000 frontend, 1500 backend; 2800 operations speculated, 2100 retired
const Counts golden{
	{"CPU_CYCLES", 1000},	   {"STALL_SLOT_FRONTEND", 1000}, {"STALL_SLOT_BACKEND", 1500},
	{"STALL_SLOT", 2500},	   {"OP_SPEC", 2800},		  {"OP_RETIRED", 2100},
	{"BR_MIS_PRED", 10},	   {"STALL_FRONTEND", 300},	  {"STALL_BACKEND", 450},
	{"STALL_BACKEND_MEM", 200},
};

std::map<std::string, double> values(const std::vector<MetricValue>& v)
{
	std::map<std::string, double> out;
	for (const MetricValue& m : v)
		if (m.value)
			out[std::string{m.metric->name}] = *m.value;
	return out;
}

} // namespace

TEST_CASE("expressions: perf's arithmetic, identifiers, errors", "[topdown]")
{
	const Counts c{{"A", 6}, {"B", 3}, {"#slots", 5}};
	CHECK(evaluate_expr("A / B", lookup(c)) == 2);
	CHECK(evaluate_expr("1 - A / (B * 4)", lookup(c)) == Approx(0.5));
	CHECK(evaluate_expr("A - B - 1", lookup(c)) == 2);	// left to right
	CHECK(evaluate_expr("A / B / 2", lookup(c)) == 1);
	CHECK(evaluate_expr("-A + 2 * B", lookup(c)) == 0);
	CHECK(evaluate_expr("#slots * 2", lookup(c)) == 10);
	CHECK(evaluate_expr("  1.5e1 ", lookup(c)) == 15);
	CHECK(std::isinf(evaluate_expr("A / 0", lookup(c))));
	CHECK(expr_identifiers("STALL_SLOT / (#slots * CPU_CYCLES) - STALL_SLOT") ==
	      std::vector<std::string>{"STALL_SLOT", "#slots", "CPU_CYCLES"});
	CHECK_THROWS_AS(evaluate_expr("A +", lookup(c)), InvalidArgument);
	CHECK_THROWS_AS(evaluate_expr("(A", lookup(c)), InvalidArgument);
	CHECK_THROWS_AS(evaluate_expr("A B", lookup(c)), InvalidArgument);
	CHECK_THROWS_AS(evaluate_expr("# + 1", lookup(c)), InvalidArgument);
	// perf's PMU-qualified terms are not amupmu's syntax: refused, not misread
	CHECK_THROWS_AS(evaluate_expr("armv8_pmuv3_0@event\\=0x201d@ / A", lookup(c)), InvalidArgument);
	try {
		(void)evaluate_expr("A / C", lookup(c));
		FAIL("an identifier without a value was evaluated");
	} catch (const InvalidArgument& e) {
		CHECK(std::string{e.what()}.find("no value for 'C'") != std::string::npos);
	}
}

TEST_CASE("the metric set follows the core: Neoverse N2, V1, V2 their own, every other core SBSA's",
	  "[topdown]")
{
	CHECK(metric_set_for(0x410fd490).id == "neoverse-n2");
	CHECK(metric_set_for(0x411fd401).id == "neoverse-v1");
	CHECK(metric_set_for(0x410fd4f0).id == "neoverse-v2");
	CHECK(metric_set_for(0x414fd0c1).id == "sbsa");	// N1
	CHECK(metric_set_for(0x414fd0b1).id == "sbsa");	// A76
	CHECK(metric_set_for(0x000f0510).id == "sbsa");	// QEMU max
	REQUIRE(find_metric_set("sbsa") != nullptr);
	CHECK(find_metric_set("sbsa")->max_level == 1);
	CHECK(find_metric_set("neoverse-n2")->max_level == 2);
	CHECK(find_metric_set("bogus") == nullptr);
	for (const MetricSet& s : metric_sets()) {
		INFO(s.id);
		CHECK_FALSE(s.source.empty());
		for (const MetricFormula& m : s.metrics) {
			INFO(m.name);
			CHECK_NOTHROW(expr_identifiers(m.expr));
			CHECK(m.group == (m.level == 1 ? "TopdownL1" : "TopdownL2"));
		}
	}
	CHECK(topdown_group_level("TopdownL1") == 1);
	CHECK(topdown_group_level("TopDownL2") == 2);
	CHECK(topdown_group_level("topdownl1") == 1);
	CHECK(topdown_group_level("TopdownL3") == std::nullopt);
	CHECK(topdown_metrics(*find_metric_set("neoverse-n2"), 1).size() == 4);
	CHECK(topdown_metrics(*find_metric_set("neoverse-n2"), 2).size() == 7);
	CHECK(pmmir_slots(0x0000000000000508) == 8);
}

TEST_CASE("golden inputs: SBSA level 1", "[topdown][golden]")
{
	const MetricSet& sbsa = *find_metric_set("sbsa");
	const std::map<std::string, double> v = values(evaluate_topdown(sbsa, 1, lookup(golden), 5));
	REQUIRE(v.size() == 4);
	CHECK(v.at("frontend_bound") == Approx(0.2));
	CHECK(v.at("backend_bound") == Approx(0.3));
	CHECK(v.at("bad_speculation") == Approx(0.125));
	CHECK(v.at("retiring") == Approx(0.375));
	// the slots are accounted for once: the four add up to 1 when
	// STALL_SLOT = STALL_SLOT_FRONTEND + STALL_SLOT_BACKEND
	CHECK(v.at("frontend_bound") + v.at("backend_bound") + v.at("bad_speculation") + v.at("retiring") ==
	      Approx(1.0));
	CHECK(metric_events(sbsa, sbsa.metrics[0]) == std::vector<std::string>{"STALL_SLOT_FRONTEND", "CPU_CYCLES"});
}

TEST_CASE("golden inputs: Neoverse N2 levels 1 and 2", "[topdown][golden]")
{
	const MetricSet& n2 = *find_metric_set("neoverse-n2");
	const std::map<std::string, double> v = values(evaluate_topdown(n2, 2, lookup(golden), 5));
	REQUIRE(v.size() == 7);
	// the misprediction's slots (1 frontend, 3 backend per BR_MIS_PRED
	// cycle) move to bad speculation (4)
	CHECK(v.at("frontend_bound") == Approx(0.19));
	CHECK(v.at("backend_bound") == Approx(0.27));
	CHECK(v.at("bad_speculation") == Approx(0.165));
	CHECK(v.at("retiring") == Approx(0.375));
	CHECK(v.at("frontend_bound") + v.at("backend_bound") + v.at("bad_speculation") + v.at("retiring") ==
	      Approx(1.0));
	CHECK(v.at("frontend_stalled_cycles") == Approx(0.3));
	CHECK(v.at("backend_stalled_cycles") == Approx(0.45));
	CHECK(v.at("backend_memory_stalled_cycles") == Approx(0.2));
}

TEST_CASE("a metric with a missing input names it and has no value", "[topdown]")
{
	const MetricSet& sbsa = *find_metric_set("sbsa");
	Counts qemu = golden;	// QEMU's PMU: no STALL_SLOT events
	qemu.erase("STALL_SLOT_FRONTEND");
	qemu.erase("STALL_SLOT_BACKEND");
	qemu.erase("STALL_SLOT");
	const std::vector<MetricValue> v = evaluate_topdown(sbsa, 1, lookup(qemu), 0);
	REQUIRE(v.size() == 4);
	for (const MetricValue& m : v) {
		INFO(m.metric->name);
		CHECK_FALSE(m.value);
		CHECK(m.missing.back() == "#slots");
	}
	CHECK(v[0].missing == std::vector<std::string>{"STALL_SLOT_FRONTEND", "#slots"});
	CHECK(v[2].missing == std::vector<std::string>{"STALL_SLOT", "#slots"});
	// only what is missing: slots there, STALL_SLOT not
	qemu = golden;
	qemu.erase("STALL_SLOT");
	const std::vector<MetricValue> w = evaluate_topdown(sbsa, 1, lookup(qemu), 5);
	CHECK(w[0].value);
	CHECK(w[1].value);
	CHECK_FALSE(w[2].value);
	CHECK(w[2].missing == std::vector<std::string>{"STALL_SLOT"});
}

TEST_CASE("a metric may refer to another of its set, as perf's do", "[topdown]")
{
	constexpr MetricFormula metrics[] = {
		{"a_share", "TopdownL1", 1, "A / CPU_CYCLES", "%", "", ""},
		{"rest", "TopdownL1", 1, "1 - a_share", "%", "", ""},
	};
	const MetricSet set{"test", "test", "test", 0, {}, metrics, 1};
	const Counts c{{"A", 250}, {"CPU_CYCLES", 1000}};
	const std::map<std::string, double> v = values(evaluate_topdown(set, 1, lookup(c), 0));
	CHECK(v.at("rest") == Approx(0.75));
	CHECK(metric_events(set, metrics[1]) == std::vector<std::string>{"A", "CPU_CYCLES"});
	const Counts none{{"CPU_CYCLES", 1000}};
	const std::vector<MetricValue> w = evaluate_topdown(set, 1, lookup(none), 0);
	CHECK(w[1].missing == std::vector<std::string>{"A"});
}

TEST_CASE("stat: derive_topdown computes each CPU's metrics from its rows, on its first event's line",
	  "[topdown][stat]")
{
	StatReport r;
	const auto row = [&](std::string name, std::uint16_t n, double v, int cpu = -1) {
		r.rows.push_back({.name = std::move(name), .number = n, .value = v, .cpu = cpu});
	};
	row("stall_slot_frontend", 0x3E, 1000);
	row("stall_slot_backend", 0x3D, 1500);
	row("stall_slot", 0x3F, 2500);
	row("op_spec", 0x3B, 2800);
	row("op_retired", 0x3A, 2100);
	row("amu/cpu_cycles/", 0x11, 1000);
	const TopdownRequest req{.set = find_metric_set("sbsa"), .level = 1, .slots = 5, .midr = 0x414fd0c1};
	derive_topdown(r, req);
	REQUIRE(r.metrics.size() == 4);
	CHECK(r.metrics[0].name == "frontend_bound");
	CHECK(r.metrics[0].unit == "%");
	CHECK(r.metrics[0].value == Approx(20.0));
	CHECK(r.metrics[0].source == 0);
	CHECK(r.metrics[1].name == "backend_bound");
	CHECK(r.metrics[1].source == 1);
	CHECK(r.metrics[2].name == "bad_speculation");
	CHECK(r.metrics[2].value == Approx(12.5));
	CHECK(r.metrics[2].source == 4);	// OP_RETIRED comes first in its formula
	CHECK(r.notes.empty());
	const std::string text = format_stat_text(r);
	CHECK(text.find("20.0 %  frontend_bound") != std::string::npos);
	CHECK(text.find("37.5 %  retiring") != std::string::npos);

	// a count with modifiers is not an input; a missing one is named once
	StatReport q;
	q.rows.push_back({.name = "stall_slot_frontend:u", .number = 0x3E, .flags = 1, .value = 1000});
	q.rows.push_back({.name = "cpu_cycles", .number = 0x11, .value = 1000});
	derive_topdown(q, req);
	CHECK(q.metrics.empty());
	REQUIRE(q.notes.size() == 4);
	CHECK(q.notes[0] == "topdown: frontend_bound not computed: missing STALL_SLOT_FRONTEND");
	CHECK(q.notes[2] == "topdown: bad_speculation not computed: missing OP_RETIRED, OP_SPEC, STALL_SLOT");
}

TEST_CASE("stat: the AMU's counts as rows of their own", "[topdown][stat][amu]")
{
	Info info;
	info.cpus.resize(2);
	for (unsigned c = 0; c < 2; ++c) {
		CpuInfo& ci = info.cpus[c];
		ci.cpu = c;
		ci.flags = static_cast<std::uint32_t>(CpuFlag::discovered) | static_cast<std::uint32_t>(CpuFlag::amu);
		ci.amcgcr = 4;
		ci.amevtyper0 = {0x11, 0x4004, 0x08, 0x4005};
	}
	AmuReading a, b;
	for (unsigned c = 0; c < 2; ++c) {
		AmuCpuReading x{.cpu = c, .nr_group0 = 4, .enabled0 = 0xF};
		x.group0 = {100, 10, 50, 5};
		AmuCpuReading y = x;
		y.group0 = {1100 + c, 110, 550, 55};
		a.cpus.push_back(x);
		b.cpus.push_back(y);
	}
	const std::vector<unsigned> cpus{0, 1};
	const std::uint16_t events[] = {0x11, 0x08};
	StatReport r;
	add_amu_rows(r, events, a, b, info, cpus, false);
	REQUIRE(r.rows.size() == 2);
	CHECK(r.rows[0].name == "amu/cpu_cycles/");
	CHECK(r.rows[0].number == 0x11);
	CHECK(r.rows[0].value == 2001);
	CHECK(r.rows[0].counted);
	CHECK(r.rows[1].name == "amu/inst_retired/");
	CHECK(r.rows[1].value == 1000);
	StatReport per;
	add_amu_rows(per, events, a, b, info, cpus, true);
	REQUIRE(per.rows.size() == 4);
	CHECK(per.rows[1].cpu == 1);
	CHECK(per.rows[1].value == 1001);
	// a CPU without the counter enabled: not counted
	b.cpus[1].enabled0 = 0xE;
	StatReport off;
	add_amu_rows(off, events, a, b, info, cpus, false);
	CHECK_FALSE(off.rows[0].counted);
	CHECK(off.rows[1].counted);
}
