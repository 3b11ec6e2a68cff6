// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/error.hpp>
#include <amupmu/topdown.hpp>
#include <amupmu/cpu.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>

namespace amupmu {

namespace {

// ---------------------------------------------------------------- the sets

// Level 1 of Arm's top-down methodology for every core with the
// STALL_SLOT events (Armv8.4 PMU, FEAT_PMUv3_TH; Arm's Server Base System
// Architecture, DEN0029, requires them of server cores so that this level
// is computable everywhere), as Linux perf states it in
// tools/perf/pmu-events/arch/arm64/sbsa.json (Linux 6.2 and later): the
// slots of every cycle are frontend stalled, backend stalled, or used; the
// used ones retire (OP_RETIRED) or are thrown away (OP_SPEC - OP_RETIRED).
constexpr MetricFormula sbsa_metrics[] = {
	{"frontend_bound", "TopdownL1", 1, "STALL_SLOT_FRONTEND / (#slots * CPU_CYCLES)", "%",
	 "slots the frontend delivered no operation in", ""},
	{"backend_bound", "TopdownL1", 1, "STALL_SLOT_BACKEND / (#slots * CPU_CYCLES)", "%",
	 "slots the backend could take no operation in", ""},
	{"bad_speculation", "TopdownL1", 1, "(1 - OP_RETIRED / OP_SPEC) * (1 - STALL_SLOT / (#slots * CPU_CYCLES))",
	 "%", "slots used by operations that did not retire (mispredicted paths)", ""},
	{"retiring", "TopdownL1", 1, "OP_RETIRED / OP_SPEC * (1 - STALL_SLOT / (#slots * CPU_CYCLES))", "%",
	 "slots used by operations that retired", ""},
};

// The Neoverse N2, V1 and V2 telemetry specifications (Arm's "Neoverse
// N2/V1/V2 Telemetry Specification" and PMU guides, the formulas Arm's
// topdown-tool and perf's neoverse-n2-v2 / neoverse-v1 metrics.json of
// Linux 6.3 and later carry): level 1 with the cost of a branch
// misprediction moved from the frontend (1 slot-cycle) and backend (3)
// stall slots to bad speculation (4), and level 2, their cycle accounting.
constexpr MetricFormula neoverse_metrics[] = {
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
	{"backend_memory_stalled_cycles", "TopdownL2", 2, "STALL_BACKEND_MEM / CPU_CYCLES", "%",
	 "cycles with no operation issued because the backend waited for the memory system", "backend_bound"},
};

constexpr std::uint8_t arm = 0x41;
constexpr std::uint16_t n2_parts[] = {0xD49};
constexpr std::uint16_t v1_parts[] = {0xD40};
constexpr std::uint16_t v2_parts[] = {0xD4F};

constexpr std::string_view sbsa_source =
	"Arm top-down methodology level 1 for PMUs with the STALL_SLOT events (Arm SBSA, DEN0029); "
	"the formulas of Linux perf's tools/perf/pmu-events/arch/arm64/sbsa.json (Linux 6.2+)";
// one source per core: the specification of that core
#define AMUPMU_NEOVERSE_SOURCE(core)                                                                        \
	"Arm Neoverse " core " Telemetry Specification (level 1 with the branch-misprediction correction, "  \
	"level 2 cycle accounting); the formulas of Arm's topdown-tool and of Linux perf's metrics.json for " \
	"the core (Linux 6.3+)"

constexpr MetricSet sets[] = {
	{"sbsa", "Arm top-down level 1 (SBSA)", sbsa_source, 0, {}, sbsa_metrics, 1},
	{"neoverse-n2", "Arm Neoverse N2 top-down", AMUPMU_NEOVERSE_SOURCE("N2"), arm, n2_parts, neoverse_metrics, 2},
	{"neoverse-v1", "Arm Neoverse V1 top-down", AMUPMU_NEOVERSE_SOURCE("V1"), arm, v1_parts, neoverse_metrics, 2},
	{"neoverse-v2", "Arm Neoverse V2 top-down", AMUPMU_NEOVERSE_SOURCE("V2"), arm, v2_parts, neoverse_metrics, 2},
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
	for (const MetricSet& s : sets)
		if (s.implementer == m.implementer && std::ranges::find(s.parts, m.part) != s.parts.end())
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
		if (v.missing.empty())
			v.value = metric_value(set, *m, count, slots, 0);
		out.push_back(std::move(v));
	}
	return out;
}

} // namespace amupmu
