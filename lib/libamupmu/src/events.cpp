// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/affinity.hpp>
#include <amupmu/bits.hpp>
#include <amupmu/core_events.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/events.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <iterator>
#include <numeric>
#include <tuple>
#include <utility>

namespace amupmu {

namespace {

constexpr std::uint8_t implementer_arm = 0x41;

// Cortex-X2 (MIDR part 0xD48). IMP_STALL_BACKEND_MCQ is the event of seed
// 003 §1.2; its number and meaning are field notes, not from Arm's TRM.
constexpr CoreEvent cortex_x2_events[] = {
	{ev::imp_stall_backend_mcq, "imp_stall_backend_mcq",
	 "backend stall: main commit queue (MCQ) or miscellaneous state queue full",
	 "seed 003 §1.2 (field notes, not Arm-published)"},
};

constexpr CoreTable tables[] = {
	{implementer_arm, 0xD48, "Cortex-X2", cortex_x2_events},
};

struct Alias {
	std::string_view alias;
	std::uint16_t number;
};
// perf's generic hardware and cache event names, as Linux's PMUv3 driver
// maps them (drivers/perf/arm_pmuv3.c, formerly arch/arm64/kernel/
// perf_event.c: armv8_pmuv3_perf_map and armv8_pmuv3_perf_cache_map)
constexpr Alias aliases[] = {
	{"cycles", ev::cpu_cycles},
	{"cpu-cycles", ev::cpu_cycles},
	{"instructions", ev::inst_retired},
	{"cache-references", ev::l1d_cache},
	{"cache-misses", ev::l1d_cache_refill},
	// BR_RETIRED as current Linux maps it; older kernels counted
	// PC_WRITE_RETIRED (0x0C, taken branches only) when implemented
	{"branches", ev::br_retired},
	{"branch-instructions", ev::br_retired},
	{"branch-misses", ev::br_mis_pred},
	{"bus-cycles", ev::bus_cycles},
	{"stalled-cycles-frontend", ev::stall_frontend},
	{"idle-cycles-frontend", ev::stall_frontend},
	{"stalled-cycles-backend", ev::stall_backend},
	{"idle-cycles-backend", ev::stall_backend},
	{"L1-dcache-loads", ev::l1d_cache},
	{"L1-dcache-load-misses", ev::l1d_cache_refill},
	{"L1-icache-loads", ev::l1i_cache},
	{"L1-icache-load-misses", ev::l1i_cache_refill},
	{"dTLB-loads", ev::l1d_tlb},
	{"dTLB-load-misses", ev::l1d_tlb_refill},
	{"iTLB-loads", ev::l1i_tlb},
	{"iTLB-load-misses", ev::l1i_tlb_refill},
	{"LLC-loads", ev::ll_cache_rd},
	{"LLC-load-misses", ev::ll_cache_miss_rd},
	{"branch-loads", ev::br_pred},
	{"branch-load-misses", ev::br_mis_pred},
};

char lower(char c) noexcept
{
	return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool iequal(std::string_view a, std::string_view b) noexcept
{
	return std::ranges::equal(a, b, [](char x, char y) { return lower(x) == lower(y); });
}

std::string lowercase(std::string_view s)
{
	std::string out{s};
	std::ranges::transform(out, out.begin(), lower);
	return out;
}

std::string raw_name(std::uint16_t number)
{
	char buf[8];
	const auto r = std::to_chars(buf, buf + sizeof(buf), number, 16);
	return "r" + std::string(buf, r.ptr);
}

// Every name the catalogue offers for midr (for suggestions).
std::vector<std::string> all_names(std::uint64_t midr)
{
	std::vector<std::string> names;
	for (const NamedEvent& e : common_events_named())
		names.push_back(lowercase(e.name));
	for (const CatalogEvent& e : core_event_table(midr).events)
		names.push_back(e.name);
	for (const Alias& a : aliases)
		names.emplace_back(a.alias);
	return names;
}

std::string suggestion_text(const std::string& name, const std::vector<std::string>& suggestions)
{
	std::string text = "unknown event '" + name + "'";
	if (!suggestions.empty()) {
		text += "; did you mean ";
		for (std::size_t i = 0; i < suggestions.size(); ++i) {
			if (i)
				text += i + 1 == suggestions.size() ? " or " : ", ";
			text += "'" + suggestions[i] + "'";
		}
		text += "?";
	}
	text += " (raw events: r<hex>, e.g. r8)";
	return text;
}

} // namespace

UnknownEvent::UnknownEvent(std::string name, std::vector<std::string> suggestions)
	: Error("event lookup", EINVAL, suggestion_text(name, suggestions)), name_{std::move(name)},
	  suggestions_{std::move(suggestions)}
{
}

std::span<const CoreTable> core_tables() noexcept
{
	return tables;
}

const CoreTable* core_table(std::uint64_t midr) noexcept
{
	const Midr m = decode_midr(midr);
	for (const CoreTable& t : tables)
		if (t.implementer == m.implementer && t.part == m.part)
			return &t;
	return nullptr;
}

std::size_t edit_distance(std::string_view a, std::string_view b)
{
	std::vector<std::size_t> row(b.size() + 1);
	std::iota(row.begin(), row.end(), std::size_t{0});
	for (std::size_t i = 1; i <= a.size(); ++i) {
		std::size_t diag = row[0];
		row[0] = i;
		for (std::size_t j = 1; j <= b.size(); ++j) {
			const std::size_t up = row[j];
			const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
			row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
			diag = up;
		}
	}
	return row[b.size()];
}

std::vector<std::string> closest_event_names(std::string_view name, std::uint64_t midr, std::size_t max)
{
	std::vector<std::string> names = all_names(midr);
	std::vector<std::pair<std::size_t, std::string>> scored;
	scored.reserve(names.size());
	for (std::string& n : names)
		scored.emplace_back(edit_distance(name, n), std::move(n));
	std::ranges::stable_sort(scored, {}, &std::pair<std::size_t, std::string>::first);
	// only names within half the length of what was typed (plus 2)
	const std::size_t limit = name.size() / 2 + 2;
	std::vector<std::string> out;
	for (auto& [d, n] : scored) {
		if (out.size() >= max || d > limit)
			break;
		out.push_back(std::move(n));
	}
	return out;
}

std::optional<EventSpec> find_event(std::string_view name, std::uint64_t midr)
{
	for (const Alias& a : aliases)
		if (iequal(a.alias, name))
			return EventSpec{.name = std::string{a.alias}, .number = a.number};
	for (const NamedEvent& e : common_events_named())
		if (iequal(e.name, name))
			return EventSpec{.name = lowercase(e.name), .number = e.number};
	// the core's own: the built-in table's, then libpfm4's for its MIDR
	for (const CatalogEvent& e : core_event_table(midr).events)
		if (iequal(e.name, name))
			return EventSpec{.name = e.name, .number = e.number, .source = EventSource::core};
	return std::nullopt;
}

std::uint32_t parse_modifiers(std::string_view modifiers)
{
	if (modifiers.empty())
		throw InvalidArgument{"empty modifier", EINVAL};
	bool user = false, kernel = false, hv = false, guest = false, host = false;
	for (const char c : modifiers) {
		switch (c) {
		case 'u': user = true; break;
		case 'k': kernel = true; break;
		case 'h': hv = true; break;
		case 'G': guest = true; break;
		case 'H': host = true; break;
		default:
			throw InvalidArgument{"modifier '" + std::string(1, c) + "' (amupmu takes u, k, h, G, H)",
					      EINVAL};
		}
	}
	// perf: the first of u/k/h excludes all three, then each one given
	// includes its level again; likewise G/H for guest and host.
	std::uint32_t flags = 0;
	if (user || kernel || hv) {
		if (!user)
			flags |= evflag::excl_user;
		if (!kernel)
			flags |= evflag::excl_kernel;
		if (!hv)
			flags |= evflag::excl_hv;
	}
	if (guest || host) {
		if (!guest)
			flags |= evflag::excl_guest;
		if (!host)
			flags |= evflag::excl_host;
	}
	return flags;
}

std::string canonical_modifiers(std::string_view modifiers)
{
	(void)parse_modifiers(modifiers);
	std::string out;
	for (const char c : std::string_view{"ukhGH"})
		if (modifiers.find(c) != std::string_view::npos)
			out += c;
	return out;
}

std::vector<std::string_view> exclusion_names(std::uint32_t flags)
{
	constexpr std::pair<std::uint32_t, std::string_view> names[] = {
		{evflag::excl_user, "user"}, {evflag::excl_kernel, "kernel"}, {evflag::excl_hv, "hv"},
		{evflag::excl_host, "host"}, {evflag::excl_guest, "guest"},
	};
	std::vector<std::string_view> out;
	for (const auto& [bit, name] : names)
		if (flags & bit)
			out.push_back(name);
	return out;
}

CountedLevels counted_levels(std::uint32_t flags, std::uint32_t kernel_el, bool has_el2) noexcept
{
	const bool user = flags & evflag::excl_user, kernel = flags & evflag::excl_kernel;
	const bool hv = flags & evflag::excl_hv, host = flags & evflag::excl_host;
	const bool guest = flags & evflag::excl_guest;
	if (kernel_el == 2)	// VHE: EL1 runs only guest kernels, EL0 host and guest user space
		return {.el0 = !(user || host), .el1 = !(kernel || guest), .el2 = !(kernel || host)};
	return {.el0 = !user, .el1 = !kernel, .el2 = has_el2 && !(hv || host)};
}

namespace {

// "0x11", "17": a term's number
std::optional<unsigned long long> term_number(std::string_view v)
{
	int base = 10;
	if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
		v.remove_prefix(2);
		base = 16;
	}
	unsigned long long out = 0;
	const auto r = std::from_chars(v.data(), v.data() + v.size(), out, base);
	if (v.empty() || r.ec != std::errc{} || r.ptr != v.data() + v.size())
		return std::nullopt;
	return out;
}

// perf's PMU syntax, "amupmu/event=0x11/" with its modifiers after the
// last '/' ("u", ":u"); returns the spec without modifiers and them
std::pair<EventSpec, std::string_view> parse_pmu_event(std::string_view text)
{
	const auto bad = [&](const std::string& why) {
		return InvalidArgument{"event '" + std::string{text} + "': " + why, EINVAL};
	};
	const std::size_t slash = text.find('/');
	const std::size_t last = text.rfind('/');
	const std::string_view pmu = text.substr(0, slash);
	if (pmu != "amupmu")
		throw bad("PMU '" + std::string{pmu} + "' (amupmu's is 'amupmu': amupmu/event=0x11/)");
	if (last == slash)
		throw bad("no closing '/'");
	std::string_view terms = text.substr(slash + 1, last - slash - 1);
	std::string_view mods = text.substr(last + 1);
	if (mods.starts_with(':'))
		mods.remove_prefix(1);
	std::optional<unsigned long long> number;
	while (!terms.empty()) {
		const std::size_t comma = terms.find(',');
		const std::string_view term = terms.substr(0, comma);
		const std::size_t eq = term.find('=');
		const std::string_view key = term.substr(0, eq);
		if (key != "event" && key != "config")
			throw bad("term '" + std::string{term} + "' (amupmu takes event=N or config=N)");
		if (number)
			throw bad("the event number given twice");
		number = eq == std::string_view::npos ? std::nullopt : term_number(term.substr(eq + 1));
		if (!number || *number > 0xFFFF)
			throw bad("'" + std::string{term} + "' (a number of 16 bits at most, config:0-15 as for armv8_pmuv3)");
		terms.remove_prefix(comma == std::string_view::npos ? terms.size() : comma + 1);
	}
	if (!number)
		throw bad("no event=N term");
	EventSpec spec{.name = std::string{text.substr(0, last + 1)},
		       .number = static_cast<std::uint16_t>(*number),
		       .source = EventSource::raw};
	return {std::move(spec), mods};
}

} // namespace

EventSpec parse_event(std::string_view text, std::uint64_t midr)
{
	EventSpec spec;
	std::string_view mods;
	bool has_mods = false;
	if (text.find('/') != std::string_view::npos) {
		std::tie(spec, mods) = parse_pmu_event(text);
		has_mods = !mods.empty();
	} else {
		const std::size_t colon = text.find(':');
		const std::string_view base = text.substr(0, colon);
		mods = colon == std::string_view::npos ? "" : text.substr(colon + 1);
		has_mods = colon != std::string_view::npos;
		if (base.empty())
			throw InvalidArgument{"event '" + std::string{text} + "'", EINVAL};
		if (base.size() > 1 && (base[0] == 'r' || base[0] == 'R') &&
		    std::ranges::all_of(base.substr(1),
					[](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }) &&
		    !find_event(base, midr)) {
			unsigned value = 0;
			const auto r = std::from_chars(base.data() + 1, base.data() + base.size(), value, 16);
			if (r.ec != std::errc{} || r.ptr != base.data() + base.size() || value > 0xFFFF)
				throw InvalidArgument{"raw event '" + std::string{base} + "' (16 bits at most)", EINVAL};
			spec = EventSpec{.name = lowercase(base), .number = static_cast<std::uint16_t>(value),
					 .source = EventSource::raw};
		} else if (auto found = find_event(base, midr)) {
			spec = std::move(*found);
		} else {
			throw UnknownEvent{std::string{base}, closest_event_names(base, midr)};
		}
	}

	if (has_mods) {
		try {
			spec.flags |= parse_modifiers(mods);
			spec.modifiers = canonical_modifiers(mods);
		} catch (const InvalidArgument& e) {
			throw InvalidArgument{"event '" + std::string{text} + "': " + e.operation(), EINVAL};
		}
		// perf's spelling: "name:u", "amupmu/event=0x11/u"
		spec.name += (spec.name.ends_with('/') ? "" : ":") + std::string{mods};
	}
	if (!pmceid_describes(spec.number))
		spec.flags |= evflag::raw;
	return spec;
}

namespace {

// The items of a list at its top level: commas inside {...} and inside a
// PMU event's /.../ do not split.
std::vector<std::string_view> split_items(std::string_view list)
{
	std::vector<std::string_view> out;
	int depth = 0;
	bool in_pmu = false;
	std::size_t start = 0;
	for (std::size_t i = 0; i < list.size(); ++i) {
		const char c = list[i];
		if (c == '{')
			++depth;
		else if (c == '}')
			--depth;
		else if (c == '/')
			in_pmu = !in_pmu;
		else if (c == ',' && depth == 0 && !in_pmu) {
			out.push_back(list.substr(start, i - start));
			start = i + 1;
		}
		if (depth < 0 || depth > 1)
			throw InvalidArgument{"event list '" + std::string{list} + "': " +
						      (depth < 0 ? "'}' without '{'" : "groups do not nest"),
					      EINVAL};
	}
	if (depth != 0)
		throw InvalidArgument{"event list '" + std::string{list} + "': '{' without '}'", EINVAL};
	out.push_back(list.substr(start));
	return out;
}

} // namespace

std::vector<EventSpec> parse_event_list(std::string_view list, std::uint64_t midr)
{
	std::vector<EventSpec> out;
	for (const std::string_view item : split_items(list)) {
		if (!item.starts_with('{')) {
			out.push_back(parse_event(item, midr));
			continue;
		}
		// perf's group "{a,b}:mods": amupmu counts every event of a
		// session together anyway; the group's modifiers join each
		// member's
		const std::size_t close = item.find('}');
		const std::string_view members = item.substr(1, close - 1);
		std::string_view mods = item.substr(close + 1);
		if (!mods.empty() && !mods.starts_with(':'))
			throw InvalidArgument{"group '" + std::string{item} + "': ':' expected after '}'", EINVAL};
		if (!mods.empty())
			mods.remove_prefix(1);
		if (members.empty())
			throw InvalidArgument{"group '" + std::string{item} + "' is empty", EINVAL};
		if (!mods.empty())
			(void)parse_modifiers(mods);	// the group's own, checked once
		for (const std::string_view m : split_items(members)) {
			if (mods.empty()) {
				out.push_back(parse_event(m, midr));
				continue;
			}
			// "cycles" + ":k", "cycles:u" + "k", "amupmu/event=0x11/" + "k"
			const bool pmu = m.find('/') != std::string_view::npos;
			const bool colon = !pmu && m.find(':') == std::string_view::npos;
			out.push_back(parse_event(std::string{m} + (colon ? ":" : "") + std::string{mods}, midr));
		}
	}
	return out;
}

std::string event_display_name(std::uint16_t number, std::uint64_t midr)
{
	if (const CoreTable* t = core_table(midr))
		for (const CoreEvent& e : t->events)
			if (e.number == number)
				return std::string{e.name};
	if (const std::string_view n = event_name(number); !n.empty())
		return lowercase(n);
	for (const CatalogEvent& e : core_event_table(midr).events)
		if (e.number == number)
			return e.name;
	return raw_name(number);
}

std::vector<MissingEvent> missing_events(std::span<const EventSpec> events, const Info& info,
					 std::span<const unsigned> cpus)
{
	std::vector<MissingEvent> missing;
	for (const unsigned cpu : cpus) {
		const CpuInfo* ci = cpu < info.cpus.size() ? &info.cpus[cpu] : nullptr;
		for (const EventSpec& e : events) {
			std::string reason;
			if (!ci || !ci->discovered())
				reason = "never online (not discovered)";
			else if (!ci->has_pmu())
				reason = "no PMUv3";
			else if (cpu_implements(*ci, e.number) == false) {
				if (e.number >= ext_event_base && !ci->pmceid_ext())
					reason = "no extended PMCEID (before PMUv3p1)";
				else
					reason = std::string{"not implemented (PMCEID"} +
						 ((e.number & 0xFF) < 0x20 ? "0" : "1") + "_EL0)";
			}
			if (!reason.empty())
				missing.push_back({e.name, e.number, cpu, std::move(reason)});
		}
	}
	return missing;
}

void require_events(std::span<const EventSpec> events, const Info& info, std::span<const unsigned> cpus)
{
	const std::vector<MissingEvent> missing = missing_events(events, info, cpus);
	if (missing.empty())
		return;
	// one clause per event and reason, with the CPUs it holds for
	std::vector<std::pair<std::string, std::vector<unsigned>>> clauses;
	for (const MissingEvent& m : missing) {
		const std::string key = m.name + " (" + hex(m.number, 4) + "): " + m.reason;
		auto it = std::ranges::find(clauses, key, &std::pair<std::string, std::vector<unsigned>>::first);
		if (it == clauses.end())
			clauses.push_back({key, {m.cpu}});
		else
			it->second.push_back(m.cpu);
	}
	std::string text;
	for (auto& [key, on] : clauses) {
		std::ranges::sort(on);
		text += (text.empty() ? "" : "; ") + key + " on CPU" + (on.size() > 1 ? "s " : " ") +
			format_cpu_list(on);
	}
	throw Unsupported{"event check: " + text, EOPNOTSUPP};
}

void require_countable(std::span<const EventSpec> events, const Info& info, std::span<const unsigned> cpus)
{
	if (info.kernel_el == 0)
		return;
	for (const unsigned cpu : cpus) {
		if (cpu >= info.cpus.size() || !info.cpus[cpu].discovered())
			continue;
		const bool el2 = pfr0_el2(info.cpus[cpu].id_aa64pfr0) != 0;
		for (const EventSpec& e : events) {
			if (counted_levels(e.flags, info.kernel_el, el2).any())
				continue;
			std::string why = "the kernel runs at " + std::string{kernel_el_name(info.kernel_el)};
			if (info.kernel_el == 2)
				why += ", where it is the hypervisor: ':h' counts nothing there (use ':k')";
			else if (!el2)
				why += " and CPU " + std::to_string(cpu) + " has no EL2";
			throw InvalidArgument{"event '" + e.name + "' counts at no exception level: " + why, EINVAL};
		}
	}
}

} // namespace amupmu
