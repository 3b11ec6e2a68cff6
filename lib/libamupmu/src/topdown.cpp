// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/error.hpp>
#include <amupmu/topdown.hpp>
#include <amupmu/cpu.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace amupmu {

namespace {

// ---------------------------------------------------------------- the sets

// Level 1 of Arm's top-down methodology for every core with the
// STALL_SLOT events (Armv8.4 PMU; Arm's Server Base System Architecture,
// DEN0029, requires them of server cores so that this level is computable
// everywhere), as Linux perf states it in
// tools/perf/pmu-events/arch/arm64/sbsa.json (Linux 6.2 and later; read
// at torvalds/linux blob 602bf183): the slots of every cycle are frontend
// stalled, backend stalled, or used; the used ones retire (OP_RETIRED) or
// are thrown away (OP_SPEC - OP_RETIRED). perf writes the event names in
// lower case; they are the same events.
constexpr MetricFormula sbsa_metrics[] = {
	{"frontend_bound", "TopdownL1", 1, "STALL_SLOT_FRONTEND / (#slots * CPU_CYCLES)", "%",
	 "slots the frontend delivered no operation in", ""},
	{"backend_bound", "TopdownL1", 1, "STALL_SLOT_BACKEND / (#slots * CPU_CYCLES)", "%",
	 "slots the backend could take no operation in", ""},
	{"bad_speculation", "TopdownL1", 1, "(1 - OP_RETIRED / OP_SPEC) * (1 - STALL_SLOT / (#slots * CPU_CYCLES))",
	 "%", "slots used by operations that did not retire (mispredicted paths)", ""},
	{"retiring", "TopdownL1", 1, "(OP_RETIRED / OP_SPEC) * (1 - STALL_SLOT / (#slots * CPU_CYCLES))", "%",
	 "slots used by operations that retired", ""},
};

// The Neoverse cores: Arm's telemetry specifications (Telemetry
// Specification, PMU events, metrics and methodology, one JSON per core:
// data/pmu/cpu/neoverse/<core>.json of Arm's telemetry-solution, Apache-2.0,
// their "topdown_methodology"; read at the repository's commit 917257c7,
// document sha1 6687b727 of 8 Aug 2025); compared with perf's
// neoverse-v1 (918e37d5) and neoverse-n2-v2 (0df82189) metrics.
// Stage 1 is Topdown_L1 (perf's TopdownL1): level 1 with the cost of a
// branch misprediction moved to bad speculation (4 slots per BR_MIS_PRED
// cycle), taken from the frontend and backend stall slots in a share that
// depends on the core. Stage 2 starts with Cycle_Accounting, the two
// stall-cycle shares: amupmu's TopdownL2 (the specification's other stage-2
// groups are ratios and MPKIs, not shares of the cycles). The
// specifications write the slots as the core's number (5: N2, 8: V1, V2);
// amupmu writes #slots, PMMIR_EL1.SLOTS, which is that number on these
// cores, and computes nothing where it reads 0. The level-2 metric is a
// share of the cycles, not of the slots: it divides its level-1 metric
// (parent) by meaning, the specification lists it beside the tree.

// Neoverse N2 r0p0-r0p2 (neoverse-n2.json, r0p2; its r0p0 and r0p1 files
// are the same; perf's neoverse-n2r0p0): STALL_SLOT and
// STALL_SLOT_FRONTEND count one slot more each cycle, which the formulas
// take off (CPU_CYCLES).
constexpr MetricFormula n2_r0p0_metrics[] = {
	{"frontend_bound", "TopdownL1", 1,
	 "(STALL_SLOT_FRONTEND - CPU_CYCLES) / (#slots * CPU_CYCLES) - BR_MIS_PRED / CPU_CYCLES", "%",
	 "slots the frontend delivered no operation in, less those of branch mispredictions", ""},
	{"backend_bound", "TopdownL1", 1, "STALL_SLOT_BACKEND / (CPU_CYCLES * #slots) - BR_MIS_PRED * 3 / CPU_CYCLES",
	 "%", "slots the backend could take no operation in, less those of branch mispredictions", ""},
	{"bad_speculation", "TopdownL1", 1,
	 "(1 - OP_RETIRED / OP_SPEC) * (1 - (STALL_SLOT - CPU_CYCLES) / (CPU_CYCLES * #slots)) + "
	 "BR_MIS_PRED * 4 / CPU_CYCLES",
	 "%", "slots of operations that did not retire and of the recovery from branch mispredictions", ""},
	{"retiring", "TopdownL1", 1, "OP_RETIRED / OP_SPEC * (1 - (STALL_SLOT - CPU_CYCLES) / (CPU_CYCLES * #slots))",
	 "%", "slots used by operations that retired", ""},
	{"frontend_stalled_cycles", "TopdownL2", 2, "STALL_FRONTEND / CPU_CYCLES", "%",
	 "cycles with no operation issued because the frontend delivered none", "frontend_bound"},
	{"backend_stalled_cycles", "TopdownL2", 2, "STALL_BACKEND / CPU_CYCLES", "%",
	 "cycles with no operation issued because the backend could take none", "backend_bound"},
};

// Neoverse N2 r0p3 and later (neoverse-n2-r0p3.json) and Neoverse V2
// (neoverse-v2.json): a misprediction's 4 slots come 1 from the frontend
// stall slots, 3 from the backend's.
constexpr MetricFormula n2_v2_metrics[] = {
	{"frontend_bound", "TopdownL1", 1, "STALL_SLOT_FRONTEND / (CPU_CYCLES * #slots) - BR_MIS_PRED / CPU_CYCLES",
	 "%", "slots the frontend delivered no operation in, less those of branch mispredictions", ""},
	{"backend_bound", "TopdownL1", 1, "STALL_SLOT_BACKEND / (CPU_CYCLES * #slots) - BR_MIS_PRED * 3 / CPU_CYCLES",
	 "%", "slots the backend could take no operation in, less those of branch mispredictions", ""},
	{"bad_speculation", "TopdownL1", 1,
	 "(1 - OP_RETIRED / OP_SPEC) * (1 - STALL_SLOT / (CPU_CYCLES * #slots)) + BR_MIS_PRED * 4 / CPU_CYCLES", "%",
	 "slots of operations that did not retire and of the recovery from branch mispredictions", ""},
	{"retiring", "TopdownL1", 1, "OP_RETIRED / OP_SPEC * (1 - STALL_SLOT / (CPU_CYCLES * #slots))", "%",
	 "slots used by operations that retired", ""},
	{"frontend_stalled_cycles", "TopdownL2", 2, "STALL_FRONTEND / CPU_CYCLES", "%",
	 "cycles with no operation issued because the frontend delivered none", "frontend_bound"},
	{"backend_stalled_cycles", "TopdownL2", 2, "STALL_BACKEND / CPU_CYCLES", "%",
	 "cycles with no operation issued because the backend could take none", "backend_bound"},
};

// Neoverse V1 (neoverse-v1.json, r1p2; perf's neoverse-v1 overrides
// frontend_bound and bad_speculation alike and keeps sbsa.json's
// backend_bound and retiring): all 4 slots of a misprediction come from
// the frontend stall slots.
constexpr MetricFormula v1_metrics[] = {
	{"frontend_bound", "TopdownL1", 1, "STALL_SLOT_FRONTEND / (CPU_CYCLES * #slots) - BR_MIS_PRED * 4 / CPU_CYCLES",
	 "%", "slots the frontend delivered no operation in, less those of branch mispredictions", ""},
	{"backend_bound", "TopdownL1", 1, "STALL_SLOT_BACKEND / (#slots * CPU_CYCLES)", "%",
	 "slots the backend could take no operation in", ""},
	{"bad_speculation", "TopdownL1", 1,
	 "(1 - OP_RETIRED / OP_SPEC) * (1 - STALL_SLOT / (CPU_CYCLES * #slots)) + BR_MIS_PRED * 4 / CPU_CYCLES", "%",
	 "slots of operations that did not retire and of the recovery from branch mispredictions", ""},
	{"retiring", "TopdownL1", 1, "(1 - STALL_SLOT / (CPU_CYCLES * #slots)) * (OP_RETIRED / OP_SPEC)", "%",
	 "slots used by operations that retired", ""},
	{"frontend_stalled_cycles", "TopdownL2", 2, "STALL_FRONTEND / CPU_CYCLES", "%",
	 "cycles with no operation issued because the frontend delivered none", "frontend_bound"},
	{"backend_stalled_cycles", "TopdownL2", 2, "STALL_BACKEND / CPU_CYCLES", "%",
	 "cycles with no operation issued because the backend could take none", "backend_bound"},
};

constexpr std::uint8_t arm = 0x41;
constexpr std::uint16_t n2_parts[] = {0xD49};
constexpr std::uint16_t v1_parts[] = {0xD40};
constexpr std::uint16_t v2_parts[] = {0xD4F};

constexpr std::string_view sbsa_source =
	"Arm top-down methodology level 1 for PMUs with the STALL_SLOT events (Arm SBSA, DEN0029): "
	"Linux perf's tools/perf/pmu-events/arch/arm64/sbsa.json (Linux 6.2+)";
#define AMUPMU_NEOVERSE_SOURCE(core, file)                                                                 \
	"Arm Neoverse " core " Telemetry Specification, topdown_methodology (telemetry-solution "          \
	"data/pmu/cpu/neoverse/" file ", 917257c7): Topdown_L1, and Cycle_Accounting as level 2, "          \
	"with #slots for the core's slot count"

constexpr MetricSet sets[] = {
	{"sbsa", "Arm top-down level 1 (SBSA)", sbsa_source, 0, {}, 0x00, 0xff, sbsa_metrics, 1},
	{"neoverse-n2-r0p0", "Arm Neoverse N2 r0p0-r0p2 top-down", AMUPMU_NEOVERSE_SOURCE("N2 r0p2", "neoverse-n2.json"),
	 arm, n2_parts, 0x00, 0x02, n2_r0p0_metrics, 2},
	{"neoverse-n2", "Arm Neoverse N2 top-down", AMUPMU_NEOVERSE_SOURCE("N2 r0p3", "neoverse-n2-r0p3.json"), arm,
	 n2_parts, 0x03, 0xff, n2_v2_metrics, 2},
	{"neoverse-v1", "Arm Neoverse V1 top-down", AMUPMU_NEOVERSE_SOURCE("V1", "neoverse-v1.json"), arm, v1_parts,
	 0x00, 0xff, v1_metrics, 2},
	{"neoverse-v2", "Arm Neoverse V2 top-down", AMUPMU_NEOVERSE_SOURCE("V2", "neoverse-v2.json"), arm, v2_parts,
	 0x00, 0xff, n2_v2_metrics, 2},
};
#undef AMUPMU_NEOVERSE_SOURCE

char upper(char c) noexcept
{
	return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
}

bool iequal(std::string_view a, std::string_view b) noexcept
{
	return std::ranges::equal(a, b, [](char x, char y) { return upper(x) == upper(y); });
}

std::string uppercase(std::string_view s)
{
	std::string out{s};
	std::ranges::transform(out, out.begin(), upper);
	return out;
}

const MetricFormula* find_in(const MetricSet& set, std::string_view name) noexcept
{
	for (const MetricFormula& m : set.metrics)
		if (iequal(m.name, name))
			return &m;
	return nullptr;
}

// ---------------------------------------------------------------- the expressions

// A recursive-descent parser of perf's arithmetic; with value set it
// evaluates, otherwise it only collects the identifiers.
class Parser {
public:
	Parser(std::string_view expr, const std::function<std::optional<double>(std::string_view)>* value,
	       std::vector<std::string>* names)
		: s_{expr}, value_{value}, names_{names}
	{
	}

	double parse()
	{
		const double v = sum();
		skip();
		if (pos_ != s_.size())
			fail("unexpected '" + std::string{s_.substr(pos_, 1)} + "'");
		return v;
	}

private:
	[[noreturn]] void fail(const std::string& why) const
	{
		throw InvalidArgument{"metric expression '" + std::string{s_} + "' at " + std::to_string(pos_) + ": " +
					      why,
				      EINVAL};
	}

	void skip()
	{
		while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])))
			++pos_;
	}

	bool eat(char c)
	{
		skip();
		if (pos_ < s_.size() && s_[pos_] == c) {
			++pos_;
			return true;
		}
		return false;
	}

	double sum()
	{
		double v = product();
		for (;;) {
			if (eat('+'))
				v += product();
			else if (eat('-'))
				v -= product();
			else
				return v;
		}
	}

	double product()
	{
		double v = unary();
		for (;;) {
			if (eat('*'))
				v *= unary();
			else if (eat('/'))
				v /= unary();
			else
				return v;
		}
	}

	double unary()
	{
		if (eat('-'))
			return -unary();
		return primary();
	}

	static bool ident_char(char c) noexcept
	{
		return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
	}

	double primary()
	{
		skip();
		if (pos_ >= s_.size())
			fail("operand expected");
		if (eat('(')) {
			const double v = sum();
			if (!eat(')'))
				fail("')' expected");
			return v;
		}
		const char c = s_[pos_];
		if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
			const std::size_t start = pos_;
			while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.'))
				++pos_;
			if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
				++pos_;
				if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-'))
					++pos_;
				while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])))
					++pos_;
			}
			const std::string number{s_.substr(start, pos_ - start)};
			char* end = nullptr;
			const double v = std::strtod(number.c_str(), &end);
			if (end != number.c_str() + number.size())
				fail("bad number '" + number + "'");
			return v;
		}
		if (c == '#' || std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
			const std::size_t start = pos_++;
			while (pos_ < s_.size() && ident_char(s_[pos_]))
				++pos_;
			const std::string_view name = s_.substr(start, pos_ - start);
			if (name == "#")
				fail("identifier expected after '#'");
			if (names_ && std::ranges::find(*names_, name) == names_->end())
				names_->emplace_back(name);
			if (!value_)
				return 0;
			const std::optional<double> v = (*value_)(name);
			if (!v)
				fail("no value for '" + std::string{name} + "'");
			return *v;
		}
		fail("unexpected '" + std::string(1, c) + "'");
	}

	std::string_view s_;
	std::size_t pos_ = 0;
	const std::function<std::optional<double>(std::string_view)>* value_;
	std::vector<std::string>* names_;
};

void collect_events(const MetricSet& set, const MetricFormula& m, std::vector<std::string>& out, int depth)
{
	if (depth > 8)
		throw InvalidArgument{"metric '" + std::string{m.name} + "' refers to itself", ELOOP};
	for (const std::string& id : expr_identifiers(m.expr)) {
		if (id == slots_name)
			continue;
		if (const MetricFormula* ref = find_in(set, id)) {
			collect_events(set, *ref, out, depth + 1);
			continue;
		}
		std::string name = uppercase(id);
		if (std::ranges::find(out, name) == out.end())
			out.push_back(std::move(name));
	}
}

bool needs_slots(const MetricSet& set, const MetricFormula& m, int depth)
{
	if (depth > 8)
		return false;
	for (const std::string& id : expr_identifiers(m.expr)) {
		if (id == slots_name)
			return true;
		if (const MetricFormula* ref = find_in(set, id); ref && needs_slots(set, *ref, depth + 1))
			return true;
	}
	return false;
}

std::optional<double> metric_value(const MetricSet& set, const MetricFormula& m,
				   const std::function<std::optional<double>(std::string_view)>& count, unsigned slots,
				   int depth)
{
	const std::function<std::optional<double>(std::string_view)> lookup =
		[&](std::string_view id) -> std::optional<double> {
		if (id == slots_name)
			return slots ? std::optional<double>{slots} : std::nullopt;
		if (const MetricFormula* ref = find_in(set, id)) {
			if (depth > 8)
				return std::nullopt;
			return metric_value(set, *ref, count, slots, depth + 1);
		}
		return count(uppercase(id));
	};
	return evaluate_expr(m.expr, lookup);
}

} // namespace

std::span<const MetricSet> metric_sets() noexcept
{
	return sets;
}

const MetricSet& metric_set_for(std::uint64_t midr) noexcept
{
	const Midr m = decode_midr(midr);
	const unsigned rev = (static_cast<unsigned>(m.variant) << 4) | m.revision;
	for (const MetricSet& s : sets)
		if (s.implementer == m.implementer && std::ranges::find(s.parts, m.part) != s.parts.end() &&
		    rev >= s.revision_min && rev <= s.revision_max)
			return s;
	return sets[0];
}

const MetricSet* find_metric_set(std::string_view id) noexcept
{
	for (const MetricSet& s : sets)
		if (s.id == id)
			return &s;
	return nullptr;
}

std::optional<unsigned> topdown_group_level(std::string_view group) noexcept
{
	if (iequal(group, "TopdownL1"))
		return 1;
	if (iequal(group, "TopdownL2"))
		return 2;
	return std::nullopt;
}

std::vector<const MetricFormula*> topdown_metrics(const MetricSet& set, unsigned level)
{
	std::vector<const MetricFormula*> out;
	for (unsigned l = 1; l <= level; ++l)
		for (const MetricFormula& m : set.metrics)
			if (m.level == l)
				out.push_back(&m);
	return out;
}

std::vector<std::string> expr_identifiers(std::string_view expr)
{
	std::vector<std::string> names;
	Parser{expr, nullptr, &names}.parse();
	return names;
}

double evaluate_expr(std::string_view expr, const std::function<std::optional<double>(std::string_view)>& value)
{
	return Parser{expr, &value, nullptr}.parse();
}

std::vector<std::string> metric_events(const MetricSet& set, const MetricFormula& metric)
{
	std::vector<std::string> out;
	collect_events(set, metric, out, 0);
	return out;
}

std::vector<MetricValue> evaluate_topdown(const MetricSet& set, unsigned level,
					  const std::function<std::optional<double>(std::string_view)>& count,
					  unsigned slots)
{
	std::vector<MetricValue> out;
	for (const MetricFormula* m : topdown_metrics(set, level)) {
		MetricValue v{.metric = m};
		for (const std::string& e : metric_events(set, *m))
			if (!count(e))
				v.missing.push_back(e);
		if (needs_slots(set, *m, 0) && slots == 0)
			v.missing.emplace_back(slots_name);
		if (v.missing.empty()) {
			v.value = metric_value(set, *m, count, slots, 0);
			if (v.value && !std::isfinite(*v.value)) {
				// a ratio over a count of 0: no share to give
				v.value.reset();
				std::string zero;
				for (const std::string& e : metric_events(set, *m))
					if (count(e) == 0.0)
						zero += (zero.empty() ? "" : ", ") + e;
				v.reason = zero.empty() ? "not finite" : zero + " counted 0";
			}
		}
		out.push_back(std::move(v));
	}
	return out;
}

} // namespace amupmu

namespace amupmu {

std::vector<TopdownGroup> plan_topdown_groups(const MetricSet& set, unsigned level, std::size_t counters,
					      std::span<const std::string> outside)
{
	if (counters == 0)
		throw InvalidArgument{"top-down groups: no counter to count on", EINVAL};
	// CPU_CYCLES has the PMU's cycle counter, beside the event counters
	const auto on_event_counter = [](const std::string& e) { return e != "CPU_CYCLES"; };
	std::vector<TopdownGroup> groups;
	for (const MetricFormula* m : topdown_metrics(set, level)) {
		std::vector<std::string> need;
		for (std::string& e : metric_events(set, *m))
			if (std::ranges::find(outside, e) == outside.end())
				need.push_back(std::move(e));
		const auto load = [&](std::span<const std::string> events) {
			return static_cast<std::size_t>(std::ranges::count_if(events, on_event_counter));
		};
		if (load(need) > counters)
			throw InvalidArgument{"top-down metric '" + std::string{m->name} + "' needs " +
						      std::to_string(load(need)) +
						      " events counted together beside the cycles, more than " +
						      std::to_string(counters) + " event counters",
					      E2BIG};
		// the first group that holds its events already, or has room
		const auto missing_from = [&](const TopdownGroup& g) {
			return static_cast<std::size_t>(std::ranges::count_if(need, [&](const std::string& e) {
				return on_event_counter(e) && std::ranges::find(g.events, e) == g.events.end();
			}));
		};
		const auto holds = [&](const TopdownGroup& g) {
			return std::ranges::all_of(
				need, [&](const std::string& e) { return std::ranges::find(g.events, e) != g.events.end(); });
		};
		auto it = std::ranges::find_if(groups, holds);
		if (it == groups.end())
			it = std::ranges::find_if(
				groups, [&](const TopdownGroup& g) { return load(g.events) + missing_from(g) <= counters; });
		if (it == groups.end())
			it = groups.insert(groups.end(), TopdownGroup{});
		for (std::string& e : need)
			if (std::ranges::find(it->events, e) == it->events.end())
				it->events.push_back(std::move(e));
		it->metrics.push_back(m);
	}
	return groups;
}

std::vector<MetricValue> evaluate_topdown_groups(const MetricSet& set, std::span<const TopdownGroup> groups,
						 std::span<const TopdownGroupCounts> counts, unsigned slots)
{
	std::vector<MetricValue> out;
	for (const MetricFormula& m : set.metrics) {
		const auto g = std::ranges::find_if(
			groups, [&](const TopdownGroup& x) { return std::ranges::find(x.metrics, &m) != x.metrics.end(); });
		if (g == groups.end())
			continue;
		const std::size_t gi = static_cast<std::size_t>(g - groups.begin());
		const TopdownGroupCounts* c = gi < counts.size() ? &counts[gi] : nullptr;
		if (!c || !c->count || c->time_running == 0) {
			MetricValue v{.metric = &m, .group = gi};
			v.reason = "run " + std::to_string(gi + 1) + " never ran (time running 0 of " +
				   std::to_string(c ? c->time_enabled : 0) + " ns)";
			out.push_back(std::move(v));
			continue;
		}
		// perf's estimate of a multiplexed count: raw * enabled / running
		const double scale = c->time_enabled > c->time_running ? static_cast<double>(c->time_enabled) /
										static_cast<double>(c->time_running)
								       : 1.0;
		// only the group's own (PMU) counts: an outside count (the AMU's
		// CPU_CYCLES) ran over the whole run already
		const std::function<std::optional<double>(std::string_view)> scaled =
			[&](std::string_view name) -> std::optional<double> {
			const std::optional<double> v = c->count(name);
			if (!v)
				return std::nullopt;
			return std::ranges::find(g->events, name) != g->events.end() ? *v * scale : *v;
		};
		for (MetricValue& v : evaluate_topdown(set, m.level, scaled, slots))
			if (v.metric == &m) {
				v.group = gi;
				out.push_back(std::move(v));
			}
	}
	return out;
}

} // namespace amupmu
