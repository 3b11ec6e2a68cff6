// SPDX-License-Identifier: GPL-2.0
//
// Top-down metrics as data (topdown.hpp): the expression evaluator, the
// sets by MIDR and revision, golden inputs with the values worked out by
// hand from each set's source, missing inputs, the groups a level is split
// into and their evaluation (enabled/running, a group that never ran); and
// amupmu stat's use of them (derive_topdown(), derive_topdown_groups(),
// the AMU rows).
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

// The one fixture: counts of 1000 cycles at 5 slots a cycle (5000 slots);
// the stall slots split 1000 frontend, 1500 backend; 2800 operations
// speculated, 2100 retired; 10 mispredicted branches; 300 frontend and
// 450 backend stall cycles. changes replaces or adds counts, drop takes
// counts away (a PMU without the event).
Counts golden(const Counts& changes = {}, std::initializer_list<std::string_view> drop = {})
{
	Counts c{
		{"CPU_CYCLES", 1000},	   {"STALL_SLOT_FRONTEND", 1000}, {"STALL_SLOT_BACKEND", 1500},
		{"STALL_SLOT", 2500},	   {"OP_SPEC", 2800},		  {"OP_RETIRED", 2100},
		{"BR_MIS_PRED", 10},	   {"STALL_FRONTEND", 300},	  {"STALL_BACKEND", 450},
	};
	for (const auto& [name, value] : changes)
		c[name] = value;
	for (const std::string_view name : drop)
		c.erase(std::string{name});
	return c;
}

// The values of a set's metrics up to level from counts at slots, by name;
// a metric without a value is absent.
std::map<std::string, double> values(const MetricSet& set, unsigned level, const Counts& counts, unsigned slots = 5)
{
	std::map<std::string, double> out;
	for (const MetricValue& m : evaluate_topdown(set, level, lookup(counts), slots))
		if (m.value)
			out[std::string{m.metric->name}] = *m.value;
	return out;
}

const MetricSet& set(std::string_view id)
{
	const MetricSet* s = find_metric_set(id);
	REQUIRE(s != nullptr);
	return *s;
}

double level1_sum(const std::map<std::string, double>& v)
{
	return v.at("frontend_bound") + v.at("backend_bound") + v.at("bad_speculation") + v.at("retiring");
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

TEST_CASE("the metric set follows the core and its revision; every other core SBSA's", "[topdown]")
{
	CHECK(metric_set_for(0x410fd490).id == "neoverse-n2-r0p0");
	CHECK(metric_set_for(0x410fd492).id == "neoverse-n2-r0p0");	// r0p2: the same specification
	CHECK(metric_set_for(0x410fd493).id == "neoverse-n2");	// r0p3: STALL_SLOT fixed
	CHECK(metric_set_for(0x411fd401).id == "neoverse-v1");
	CHECK(metric_set_for(0x410fd4f0).id == "neoverse-v2");
	CHECK(metric_set_for(0x414fd0c1).id == "sbsa");	// N1: no STALL_SLOT events, sbsa says so
	CHECK(metric_set_for(0x414fd0b1).id == "sbsa");	// A76
	CHECK(metric_set_for(0x000f0510).id == "sbsa");	// QEMU max
	CHECK(set("sbsa").max_level == 1);
	CHECK(set("neoverse-n2").max_level == 2);
	CHECK(find_metric_set("bogus") == nullptr);
	for (const MetricSet& s : metric_sets()) {
		INFO(s.id);
		CHECK_FALSE(s.source.empty());
		CHECK(s.revision_min <= s.revision_max);
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
	CHECK(topdown_metrics(set("neoverse-n2"), 1).size() == 4);
	CHECK(topdown_metrics(set("neoverse-n2"), 2).size() == 6);
	CHECK(pmmir_slots(0x0000000000000508) == 8);
}

// The golden figures below are the sources' formulas worked out by hand
// on golden(): slots 5000, stall slots 2500 of them, so 2500 used;
// OP_RETIRED / OP_SPEC = 0.75; BR_MIS_PRED / CPU_CYCLES = 0.01.
TEST_CASE("golden inputs: SBSA level 1 (perf's sbsa.json)", "[topdown][golden]")
{
	const std::map<std::string, double> v = values(set("sbsa"), 1, golden());
	REQUIRE(v.size() == 4);
	CHECK(v.at("frontend_bound") == Approx(0.2));	// 1000 / 5000
	CHECK(v.at("backend_bound") == Approx(0.3));	// 1500 / 5000
	CHECK(v.at("bad_speculation") == Approx(0.125));	// (1 - 0.75) * (1 - 0.5)
	CHECK(v.at("retiring") == Approx(0.375));	// 0.75 * (1 - 0.5)
	// the slots are accounted for once: the four add up to 1 when
	// STALL_SLOT = STALL_SLOT_FRONTEND + STALL_SLOT_BACKEND
	CHECK(level1_sum(v) == Approx(1.0));
	CHECK(metric_events(set("sbsa"), set("sbsa").metrics[0]) ==
	      std::vector<std::string>{"STALL_SLOT_FRONTEND", "CPU_CYCLES"});
}

TEST_CASE("golden inputs: Neoverse N2 r0p3 and V2 (telemetry specification), levels 1 and 2",
	  "[topdown][golden]")
{
	for (const std::string_view id : {"neoverse-n2", "neoverse-v2"}) {
		INFO(id);
		const std::map<std::string, double> v = values(set(id), 2, golden());
		REQUIRE(v.size() == 6);
		// a misprediction's 4 slots: 1 from the frontend, 3 from the backend
		CHECK(v.at("frontend_bound") == Approx(0.19));	// 0.2 - 0.01
		CHECK(v.at("backend_bound") == Approx(0.27));	// 0.3 - 3 * 0.01
		CHECK(v.at("bad_speculation") == Approx(0.165));	// 0.125 + 4 * 0.01
		CHECK(v.at("retiring") == Approx(0.375));
		CHECK(level1_sum(v) == Approx(1.0));
		CHECK(v.at("frontend_stalled_cycles") == Approx(0.3));	// 300 / 1000
		CHECK(v.at("backend_stalled_cycles") == Approx(0.45));	// 450 / 1000
	}
}

TEST_CASE("golden inputs: Neoverse N2 r0p0-r0p2 take the extra stall slot of each cycle off", "[topdown][golden]")
{
	// the same pipeline as golden(), counted by an r0p2: STALL_SLOT and
	// STALL_SLOT_FRONTEND one slot a cycle more
	const std::map<std::string, double> v =
		values(set("neoverse-n2-r0p0"), 2, golden({{"STALL_SLOT_FRONTEND", 2000}, {"STALL_SLOT", 3500}}));
	REQUIRE(v.size() == 6);
	CHECK(v.at("frontend_bound") == Approx(0.19));	// (2000 - 1000) / 5000 - 0.01
	CHECK(v.at("backend_bound") == Approx(0.27));
	CHECK(v.at("bad_speculation") == Approx(0.165));	// 0.25 * (1 - 2500 / 5000) + 0.04
	CHECK(v.at("retiring") == Approx(0.375));
	// r0p3's formulas on those counts would count the extra slots as stalls
	const std::map<std::string, double> w =
		values(set("neoverse-n2"), 1, golden({{"STALL_SLOT_FRONTEND", 2000}, {"STALL_SLOT", 3500}}));
	CHECK(w.at("frontend_bound") == Approx(0.39));
}

TEST_CASE("golden inputs: Neoverse V1 moves all 4 slots of a misprediction from the frontend",
	  "[topdown][golden]")
{
	const std::map<std::string, double> v = values(set("neoverse-v1"), 2, golden({}), 8);
	REQUIRE(v.size() == 6);
	// 8 slots: 8000 of them, 2500 stalled
	CHECK(v.at("frontend_bound") == Approx(0.085));	// 1000 / 8000 - 4 * 0.01
	CHECK(v.at("backend_bound") == Approx(0.1875));	// 1500 / 8000
	CHECK(v.at("bad_speculation") == Approx(0.211875));	// 0.25 * (1 - 0.3125) + 0.04
	CHECK(v.at("retiring") == Approx(0.515625));	// 0.75 * 0.6875
	CHECK(level1_sum(v) == Approx(1.0));
}

TEST_CASE("a metric with a missing input names it and has no value", "[topdown]")
{
	const MetricSet& sbsa = set("sbsa");
	// QEMU's PMU: no STALL_SLOT events, PMMIR_EL1.SLOTS 0
	const Counts qemu = golden({}, {"STALL_SLOT_FRONTEND", "STALL_SLOT_BACKEND", "STALL_SLOT"});
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
	const std::vector<MetricValue> w = evaluate_topdown(sbsa, 1, lookup(golden({}, {"STALL_SLOT"})), 5);
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
	const MetricSet test{"test", "test", "test", 0, {}, 0x00, 0xff, metrics, 1};
	const std::map<std::string, double> v = values(test, 1, {{"A", 250}, {"CPU_CYCLES", 1000}}, 0);
	CHECK(v.at("rest") == Approx(0.75));
	CHECK(metric_events(test, metrics[1]) == std::vector<std::string>{"A", "CPU_CYCLES"});
	const Counts none{{"CPU_CYCLES", 1000}};
	const std::vector<MetricValue> w = evaluate_topdown(test, 1, lookup(none), 0);
	CHECK(w[1].missing == std::vector<std::string>{"A"});
}

TEST_CASE("groups: each metric's events in one group of at most the counters there are", "[topdown][groups]")
{
	using Names = std::vector<std::string>;
	const MetricSet& v2 = set("neoverse-v2");
	const auto names = [](const TopdownGroup& g) {
		std::vector<std::string_view> out;
		for (const MetricFormula* m : g.metrics)
			out.push_back(m->name);
		return out;
	};
	// level 1 alone fits 6 counters with the cycles from the AMU: one group
	const Names amu{"CPU_CYCLES"};
	const std::vector<TopdownGroup> l1 = plan_topdown_groups(v2, 1, 6, amu);
	REQUIRE(l1.size() == 1);
	CHECK(l1[0].events == Names{"STALL_SLOT_FRONTEND", "BR_MIS_PRED", "STALL_SLOT_BACKEND", "OP_RETIRED", "OP_SPEC",
				    "STALL_SLOT"});
	// level 2 with the AMU: 8 PMU events; the stall cycles a second group
	const std::vector<TopdownGroup> l2 = plan_topdown_groups(v2, 2, 6, amu);
	REQUIRE(l2.size() == 2);
	CHECK(l2[0].events.size() == 6);
	CHECK(l2[1].events == Names{"STALL_FRONTEND", "STALL_BACKEND"});
	CHECK(names(l2[1]) == std::vector<std::string_view>{"frontend_stalled_cycles", "backend_stalled_cycles"});
	// without the AMU, 9 events, CPU_CYCLES on the cycle counter: level 1's
	// 6 others fit the 6 event counters, one group; the stall cycles of
	// level 2 a second one, with CPU_CYCLES again
	const std::vector<TopdownGroup> pmu1 = plan_topdown_groups(v2, 1, 6);
	REQUIRE(pmu1.size() == 1);
	CHECK(pmu1[0].events == Names{"STALL_SLOT_FRONTEND", "CPU_CYCLES", "BR_MIS_PRED", "STALL_SLOT_BACKEND",
				      "OP_RETIRED", "OP_SPEC", "STALL_SLOT"});
	const std::vector<TopdownGroup> pmu = plan_topdown_groups(v2, 2, 6);
	REQUIRE(pmu.size() == 2);
	CHECK(pmu[0].events == pmu1[0].events);
	CHECK(names(pmu[0]) == std::vector<std::string_view>{"frontend_bound", "backend_bound", "bad_speculation",
							      "retiring"});
	CHECK(pmu[1].events == Names{"STALL_FRONTEND", "CPU_CYCLES", "STALL_BACKEND"});
	CHECK(names(pmu[1]) == std::vector<std::string_view>{"frontend_stalled_cycles", "backend_stalled_cycles"});
	for (const std::vector<TopdownGroup>* plan : {&l1, &l2, &pmu1, &pmu})
		for (const TopdownGroup& g : *plan)
			CHECK(std::ranges::count_if(g.events, [](const std::string& e) { return e != "CPU_CYCLES"; }) <= 6);
	// enough counters: one group
	CHECK(plan_topdown_groups(v2, 2, 9).size() == 1);
	// a metric that needs more than there are is refused, by name
	try {
		(void)plan_topdown_groups(v2, 1, 3);
		FAIL("bad_speculation's 4 events and the cycles were planned on 3 event counters");
	} catch (const InvalidArgument& e) {
		CHECK(std::string{e.what()}.find("'bad_speculation' needs 4 events") != std::string::npos);
	}
	CHECK_THROWS_AS(plan_topdown_groups(v2, 1, 0), InvalidArgument);
}

TEST_CASE("groups: each metric from its own group's counts, scaled by enabled/running; a group that never ran "
	  "gives no value",
	  "[topdown][groups][golden]")
{
	const MetricSet& v2 = set("neoverse-v2");
	const std::vector<TopdownGroup> plan = plan_topdown_groups(v2, 2, 6);
	REQUIRE(plan.size() == 2);
	// group 0 held the counters a quarter of the time: its metrics are
	// ratios of its own counts, which one scale does not change
	const Counts quarter = golden();
	// group 1 counted other windows, with other cycles: its CPU_CYCLES is
	// its own, never group 0's
	const Counts other = golden({{"CPU_CYCLES", 2000}});
	std::vector<TopdownGroupCounts> counts{{lookup(quarter), 4000000, 1000000}, {lookup(other), 4000000, 3000000}};
	std::map<std::string, double> v;
	for (const MetricValue& m : evaluate_topdown_groups(v2, plan, counts, 5)) {
		INFO(m.metric->name);
		REQUIRE(m.value);
		CHECK(m.group == (m.metric->level == 2 ? 1u : 0u));
		v[std::string{m.metric->name}] = *m.value;
	}
	REQUIRE(v.size() == 6);
	CHECK(v.at("frontend_bound") == Approx(0.19));	// group 0: as golden()
	CHECK(v.at("retiring") == Approx(0.375));
	// group 1: its own 2000 cycles, never group 0's 1000
	CHECK(v.at("frontend_stalled_cycles") == Approx(0.15));
	CHECK(v.at("backend_stalled_cycles") == Approx(0.225));

	// a count is scaled by its group's enabled / running, as perf's
	constexpr MetricFormula absolute[] = {{"a_count", "TopdownL1", 1, "A", "", "", ""}};
	const MetricSet test{"test", "test", "test", 0, {}, 0x00, 0xff, absolute, 1};
	const Counts a{{"A", 250}};
	const std::vector<TopdownGroup> one = plan_topdown_groups(test, 1, 6);
	const std::vector<TopdownGroupCounts> scaled{{lookup(a), 4000, 1000}};
	CHECK(evaluate_topdown_groups(test, one, scaled, 0).at(0).value.value_or(0) == Approx(1000.0));
	const std::vector<TopdownGroupCounts> full{{lookup(a), 4000, 4000}};
	CHECK(evaluate_topdown_groups(test, one, full, 0).at(0).value.value_or(0) == Approx(250.0));

	// group 1 never ran: its metrics have no value and say why, group 0's do
	counts[1].time_running = 0;
	const std::vector<MetricValue> w = evaluate_topdown_groups(v2, plan, counts, 5);
	REQUIRE(w.size() == 6);
	for (const MetricValue& m : w) {
		INFO(m.metric->name);
		if (m.group == 1u) {
			CHECK_FALSE(m.value);
			CHECK(m.reason == "run 2 never ran (time running 0 of 4000000 ns)");
		} else {
			CHECK(m.value);
			CHECK(m.reason.empty());
		}
	}
	// no counts for a group at all: the same
	counts.pop_back();
	CHECK_FALSE(evaluate_topdown_groups(v2, plan, counts, 5).at(4).value);
	// a group's missing event is named as evaluate_topdown() names it
	const Counts no_stall = golden({}, {"STALL_BACKEND"});
	const std::vector<TopdownGroupCounts> one_group{{lookup(no_stall), 1000, 1000}};
	const std::vector<TopdownGroup> single = plan_topdown_groups(v2, 2, 9);
	const std::vector<MetricValue> m = evaluate_topdown_groups(v2, single, one_group, 5);
	CHECK(m.back().missing == std::vector<std::string>{"STALL_BACKEND"});
}

TEST_CASE("groups: an outside count (the AMU's cycles) is never scaled by a group's enabled/running",
	  "[topdown][groups][golden]")
{
	const MetricSet& v2 = set("neoverse-v2");
	const std::vector<std::string> amu{"CPU_CYCLES"};
	const std::vector<TopdownGroup> plan = plan_topdown_groups(v2, 2, 6, amu);
	REQUIRE(plan.size() == 2);
	REQUIRE(plan[1].events == std::vector<std::string>{"STALL_FRONTEND", "STALL_BACKEND"});
	// run 2 held the counters 3500 of 7000 ns: its STALL_FRONTEND, raw
	// 300, estimates 600 over the run's 2000 AMU cycles, which the AMU
	// counted all the time: 30 % (15 % if the cycles were scaled too)
	const Counts first = golden();
	const Counts second{{"STALL_FRONTEND", 300}, {"STALL_BACKEND", 450}, {"CPU_CYCLES", 2000}};
	const std::vector<TopdownGroupCounts> counts{{lookup(first), 7000, 7000}, {lookup(second), 7000, 3500}};
	std::map<std::string, double> v;
	for (const MetricValue& m : evaluate_topdown_groups(v2, plan, counts, 5))
		if (m.value)
			v[std::string{m.metric->name}] = *m.value;
	REQUIRE(v.size() == 6);
	CHECK(v.at("frontend_stalled_cycles") == Approx(0.30));
	CHECK(v.at("backend_stalled_cycles") == Approx(0.45));
}

TEST_CASE("a result that is not finite (a count of 0 to divide by) has no value and says why", "[topdown]")
{
	for (const MetricValue& m : evaluate_topdown(set("sbsa"), 1, lookup(golden({{"CPU_CYCLES", 0}})), 5)) {
		// every level 1 formula divides by the cycles
		INFO(m.metric->name);
		CHECK_FALSE(m.value);
		CHECK(m.missing.empty());
		CHECK(m.reason == "CPU_CYCLES counted 0");
	}
	const std::vector<MetricValue> spec = evaluate_topdown(set("sbsa"), 1, lookup(golden({{"OP_SPEC", 0}})), 5);
	REQUIRE(spec.size() == 4);
	CHECK(spec[0].value);	// frontend_bound does not need OP_SPEC
	CHECK_FALSE(spec[3].value);	// retiring divides by it
	CHECK(spec[3].reason == "OP_SPEC counted 0");
	// stat prints a note, never a nan
	StatReport r;
	r.rows.push_back({.name = "stall_slot_frontend", .number = 0x3E, .value = 1000});
	r.rows.push_back({.name = "stall_slot_backend", .number = 0x3D, .value = 1500});
	r.rows.push_back({.name = "cpu_cycles", .number = 0x11, .value = 0});
	derive_topdown(r, TopdownRequest{.set = find_metric_set("sbsa"), .level = 1, .slots = 5, .midr = 0x414fd0c1});
	CHECK(r.metrics.empty());
	REQUIRE_FALSE(r.notes.empty());
	CHECK(r.notes[0] == "topdown: frontend_bound not computed: CPU_CYCLES counted 0");
	CHECK(format_stat_text(r).find("nan") == std::string::npos);
	CHECK(format_stat_json(r).find("nan") == std::string::npos);
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

TEST_CASE("stat: derive_topdown_groups computes each metric from its own run's rows only",
	  "[topdown][stat][groups]")
{
	const MetricSet& v2 = set("neoverse-v2");
	const std::vector<std::string> amu{"CPU_CYCLES"};
	const std::vector<TopdownGroup> groups = plan_topdown_groups(v2, 2, 6, amu);
	REQUIRE(groups.size() == 2);
	// run 0 counted level 1's events over 1000 cycles, run 1 the stall
	// cycles over 2000 cycles of its own (the AMU's, read around each run)
	StatReport r;
	const auto row = [&](std::string name, std::uint16_t n, double v, std::uint64_t ns) {
		r.rows.push_back({.name = std::move(name), .number = n, .value = v, .time_enabled = ns, .time_running = ns});
	};
	row("stall_slot_frontend", 0x3E, 1000, 5000);
	row("br_mis_pred", 0x10, 10, 5000);
	row("stall_slot_backend", 0x3D, 1500, 5000);
	row("op_retired", 0x3A, 2100, 5000);
	row("op_spec", 0x3B, 2800, 5000);
	row("stall_slot", 0x3F, 2500, 5000);
	row("amu/cpu_cycles/", 0x11, 1000, 0);
	row("stall_frontend", 0x23, 600, 7000);
	row("stall_backend", 0x24, 900, 7000);
	row("amu/cpu_cycles/", 0x11, 2000, 0);
	const std::vector<std::size_t> begin{0, 7, 10};
	const TopdownRequest req{.set = &v2, .level = 2, .slots = 5, .midr = 0x410fd4f0};
	StatReport all = r;
	derive_topdown_groups(all, req, groups, begin);
	REQUIRE(all.metrics.size() == 6);
	std::map<std::string, std::pair<double, std::size_t>> v;
	for (const Metric& m : all.metrics)
		v[std::string{m.name}] = {m.value, m.source};
	CHECK(v.at("frontend_bound").first == Approx(19.0));
	CHECK(v.at("frontend_bound").second == 0);
	CHECK(v.at("retiring").first == Approx(37.5));
	// run 1's own cycles: 600 / 2000, not 600 / 1000 of run 0's
	CHECK(v.at("frontend_stalled_cycles").first == Approx(30.0));
	CHECK(v.at("frontend_stalled_cycles").second == 7);
	CHECK(v.at("backend_stalled_cycles").first == Approx(45.0));
	CHECK(all.notes.empty());

	// one CPU of several offline all run 1: the summed rows' time running
	// (the smallest over the CPUs) is 0, but the others counted; the sums
	// are counts of a group that fits its counters, not estimates
	StatReport offline = r;
	offline.rows[7].time_running = 0;
	offline.rows[8].time_running = 0;
	derive_topdown_groups(offline, req, groups, begin);
	CHECK(offline.notes.empty());
	REQUIRE(offline.metrics.size() == 6);
	CHECK(offline.metrics[4].name == "frontend_stalled_cycles");
	CHECK(offline.metrics[4].value == Approx(30.0));

	// run 1 (the second) never held its counters (multiplexed, never on
	// a counter): its metrics say so, the first run's stand
	StatReport none = r;
	for (const std::size_t i : {7, 8}) {
		none.rows[i].multiplexed = true;
		none.rows[i].counted = false;
		none.rows[i].time_running = 0;
	}
	derive_topdown_groups(none, req, groups, begin);
	CHECK(none.metrics.size() == 4);
	REQUIRE(none.notes.size() == 2);
	CHECK(none.notes[0] == "topdown: frontend_stalled_cycles not computed: run 2 never ran (time running 0 of 7000 ns)");

	// an event run 1 did not count is named, never taken from run 0
	StatReport lack = r;
	lack.rows.erase(lack.rows.begin() + 9);	// run 1 without its AMU cycles
	derive_topdown_groups(lack, req, groups, std::vector<std::size_t>{0, 7, 9});
	CHECK(lack.metrics.size() == 4);
	REQUIRE_FALSE(lack.notes.empty());
	CHECK(lack.notes[0] == "topdown: frontend_stalled_cycles not computed: missing CPU_CYCLES");

	// -A: each CPU from its own rows and times; CPU 1 offline all run 1
	StatReport per_cpu;
	for (const int cpu : {0, 1})
		for (std::size_t i = 0; i < r.rows.size(); ++i) {
			StatRow x = r.rows[i];
			x.cpu = cpu;
			if (cpu == 1 && (i == 7 || i == 8)) {
				x.time_running = 0;
				x.value = 0;
			}
			per_cpu.rows.push_back(x);
		}
	// rows of run g on both CPUs: begin doubles
	std::vector<StatRow> ordered;
	for (std::size_t g = 0; g + 1 < begin.size(); ++g)
		for (const int cpu : {0, 1})
			for (std::size_t i = begin[g]; i < begin[g + 1]; ++i)
				ordered.push_back(per_cpu.rows[static_cast<std::size_t>(cpu) * r.rows.size() + i]);
	per_cpu.rows = ordered;
	derive_topdown_groups(per_cpu, req, groups, std::vector<std::size_t>{0, 14, 20});
	CHECK(per_cpu.metrics.size() == 6 + 4);	// CPU 1 without level 2
	REQUIRE(per_cpu.notes.size() == 2);
	CHECK(per_cpu.notes[0] == "topdown: frontend_stalled_cycles not computed: run 2 never ran (time running 0 of "
				  "7000 ns)");
	CHECK_THROWS_AS(derive_topdown_groups(per_cpu, req, groups, std::vector<std::size_t>{0, 14}), InvalidArgument);
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
