// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/report/json.hpp>
#include <amupmu/report/list.hpp>

#include <amupmu/affinity.hpp>
#include <amupmu/amu.hpp>
#include <amupmu/bits.hpp>
#include <amupmu/core_events.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/events.hpp>
#include <amupmu/metrics.hpp>
#include <amupmu/spe.hpp>
#include <amupmu/topdown.hpp>

#include <amupmu/text/columns.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fnmatch.h>

namespace amupmu::report {

namespace {

std::string lowercase(std::string_view s)
{
	std::string out{s};
	std::ranges::transform(out, out.begin(), [](char c) {
		return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
	});
	return out;
}

bool matches(std::string_view name, std::string_view pattern)
{
	if (pattern.empty())
		return true;
	const std::string n = lowercase(name), p = lowercase(pattern);
	if (p.find_first_of("*?[") != std::string::npos)
		return fnmatch(p.c_str(), n.c_str(), 0) == 0;
	return n.find(p) != std::string::npos;
}

std::string cpus_text(const std::vector<unsigned>& cpus)
{
	return std::string{cpus.size() == 1 ? "CPU " : "CPUs "} + format_cpu_list(cpus);
}

// one key per core type: implementer and part
std::uint32_t type_key(std::uint64_t midr)
{
	const Midr m = decode_midr(midr);
	return (std::uint32_t{m.implementer} << 16) | m.part;
}

// the CPUs of cpus whose PMCEID says number is not implemented
std::vector<unsigned> not_implemented(const Info& info, const std::vector<unsigned>& cpus, std::uint16_t number)
{
	std::vector<unsigned> out;
	for (const unsigned c : cpus)
		if (c < info.cpus.size() && cpu_implements(info.cpus[c], number) == false)
			out.push_back(c);
	return out;
}

void add_events(EventListing& l, const Info& info, const std::vector<unsigned>& all)
{
	// architected: every CPU knows the names
	const std::uint64_t first_midr = l.types.front().midr;
	for (const CatalogEvent& e : architected_catalog(first_midr)) {
		ListEntry entry{.name = e.name,
				.group = ListGroup::architected,
				.encoding = "event=" + hex(e.number, 2),
				.number = e.number,
				.description = e.description,
				.cpus = all};
		if (l.pmceid_known)
			entry.not_implemented = not_implemented(info, all, e.number);
		l.entries.push_back(std::move(entry));
	}
	// each type's own, one entry per name and number with every CPU that
	// resolves the name to that number
	std::set<std::pair<std::string, std::uint16_t>> seen;
	for (const ListCoreType& t : l.types) {
		for (const CatalogEvent& e : core_event_table(t.midr).events) {
			if (!seen.insert({e.name, e.number}).second)
				continue;
			ListEntry entry{.name = e.name,
					.group = ListGroup::core,
					.encoding = "event=" + hex(e.number, 2),
					.number = e.number,
					.description = e.description};
			for (const ListCoreType& u : l.types)
				if (event_number(e.name, u.midr) == e.number)
					entry.cpus.insert(entry.cpus.end(), u.cpus.begin(), u.cpus.end());
			std::ranges::sort(entry.cpus);
			if (l.pmceid_known)
				entry.not_implemented = not_implemented(info, entry.cpus, e.number);
			l.entries.push_back(std::move(entry));
		}
	}
}

void add_amu(EventListing& l, const Info& info, const std::vector<unsigned>& all)
{
	// the architected group 0 events; group 1's auxiliary ones by their
	// AMEVTYPER1 number, with the CPUs that count each
	std::map<std::pair<int, std::uint16_t>, std::vector<unsigned>> counted;
	bool any = false;
	for (const unsigned c : all) {
		const CpuInfo& ci = info.cpus[c];
		if (!ci.amu_usable())
			continue;
		any = true;
		const unsigned n0 = static_cast<unsigned>(field<7, 0>(ci.amcgcr));
		const unsigned n1 = static_cast<unsigned>(field<15, 8>(ci.amcgcr));
		for (unsigned i = 0; i < std::min<unsigned>(n0, amu_max_counters); ++i)
			counted[{0, ci.amevtyper0[i]}].push_back(c);
		for (unsigned i = 0; i < std::min<unsigned>(n1, amu_max_counters); ++i)
			counted[{1, ci.amevtyper1[i]}].push_back(c);
	}
	for (const std::uint16_t ev : {amu_ev::cpu_cycles, amu_ev::cnt_cycles, amu_ev::inst_retired,
				       amu_ev::stall_backend_mem}) {
		const auto it = counted.find({0, ev});
		ListEntry entry{.name = "amu/" + lowercase(amu_event_name(ev)) + "/",
				.group = ListGroup::amu,
				.encoding = "AMEVTYPER0 " + hex(ev, 4),
				.number = ev,
				.description = "Activity Monitors group 0: counts on every CPU that implements the AMU, "
					       "at every exception level, beside the PMU's counters"};
		if (it != counted.end())
			entry.cpus = it->second;
		l.entries.push_back(std::move(entry));
	}
	for (const auto& [key, cpus] : counted) {
		if (key.first != 1)
			continue;
		l.entries.push_back({.name = "amu/aux:" + hex(key.second, 4).substr(2) + "/",
				     .group = ListGroup::amu,
				     .encoding = "AMEVTYPER1 " + hex(key.second, 4),
				     .number = key.second,
				     .description = "Activity Monitors group 1 (auxiliary, IMPLEMENTATION DEFINED)",
				     .cpus = cpus});
	}
	if (!any)
		l.notes.push_back(l.pmceid_known ? "AMU: no CPU has a usable AMU (QEMU hides it; amu=0?): the AMU events "
						   "count nowhere here"
						 : "AMU: which CPUs implement it is not known without amupmu");
}

void add_spe(EventListing& l, const Info& info, const std::vector<unsigned>& all)
{
	std::vector<unsigned> spe;
	for (const unsigned c : all)
		if (info.cpus[c].has_spe())
			spe.push_back(c);
	for (unsigned bit = 0; bit < 64; ++bit) {
		const std::string_view name = spe::event_name(bit);
		if (name.empty() || lowercase(name).starts_with("impdef"))
			continue;
		l.entries.push_back({.name = "spe/" + lowercase(name) + "/",
				     .group = ListGroup::spe,
				     .encoding = "Events packet bit " + std::to_string(bit),
				     .description = "SPE record event: amupmu spe record --events " + lowercase(name),
				     .cpus = spe});
	}
	if (spe.empty())
		l.notes.push_back(l.pmceid_known ? "SPE: no CPU has SPE here (QEMU hides it)"
						 : "SPE: which CPUs implement it is not known without amupmu");
}

// a metric's missing inputs on the CPUs of a type: PMCEID and SLOTS
std::string missing_of(const Info& info, const ListCoreType& t, const MetricSet& set, const MetricFormula& m)
{
	std::string out;
	const CpuInfo& ci = info.cpus[t.cpus.front()];
	for (const std::string& name : metric_events(set, m)) {
		const std::optional<std::uint16_t> n = event_number(name, t.midr);
		if (!n || cpu_implements(ci, *n) == false)
			out += (out.empty() ? "" : ", ") + name + (n ? " (" + hex(*n, 2) + ")" : std::string{" (unknown)"});
	}
	if (std::string{m.expr}.find(slots_name) != std::string::npos && t.slots == 0)
		out += (out.empty() ? "" : ", ") +
		       std::string{ci.has_pmmir() ? "#slots (PMMIR_EL1.SLOTS is 0)" : "#slots (no PMMIR_EL1: before PMUv3p4)"};
	return out;
}

void add_metrics(EventListing& l, const Info& info, const std::vector<unsigned>& all)
{
	for (const MetricDef& d : metric_defs())
		l.entries.push_back({.name = std::string{d.name},
				     .group = ListGroup::metric,
				     .encoding = std::string{d.formula},
				     .description = "amupmu stat -M " + std::string{d.name},
				     .cpus = all});
	std::set<std::string_view> sets;
	for (const ListCoreType& t : l.types) {
		const MetricSet& set = metric_set_for(t.midr);
		if (!sets.insert(set.id).second)
			continue;
		std::vector<unsigned> cpus;
		for (const ListCoreType& u : l.types)
			if (metric_set_for(u.midr).id == set.id)
				cpus.insert(cpus.end(), u.cpus.begin(), u.cpus.end());
		std::ranges::sort(cpus);
		for (const MetricFormula& m : set.metrics) {
			ListEntry entry{.name = std::string{m.group} + "/" + std::string{m.name},
					.group = ListGroup::metric,
					.encoding = std::string{m.expr},
					.description = std::string{m.description} + "; " + std::string{set.id} + ": " +
						       std::string{set.source},
					.cpus = cpus};
			if (l.pmceid_known)
				for (const ListCoreType& u : l.types) {
					if (metric_set_for(u.midr).id != set.id)
						continue;
					const std::string miss = missing_of(info, u, set, m);
					if (miss.empty())
						continue;
					entry.not_implemented.insert(entry.not_implemented.end(), u.cpus.begin(),
								     u.cpus.end());
					entry.missing = miss;
				}
			l.entries.push_back(std::move(entry));
		}
	}
}

} // namespace

std::string_view to_string(ListGroup g) noexcept
{
	switch (g) {
	case ListGroup::architected: return "architected";
	case ListGroup::core: return "core";
	case ListGroup::amu: return "amu";
	case ListGroup::spe: return "spe";
	case ListGroup::metric: return "metric";
	}
	return "unknown";
}

EventListing build_event_listing(const Info& info, bool pmceid_known, std::string cpu_source,
				 std::string_view pattern)
{
	EventListing l;
	l.cpu_source = std::move(cpu_source);
	l.pmceid_known = pmceid_known;
	const PfmLibrary& pfm = pfm_library();
	l.libpfm = std::string{"libpfm4"} +
		   (pfm.arm64_tables ? std::string{" (arm64 core tables)"} : " (no arm64 core tables: " + pfm.note + ")");
	std::vector<unsigned> all;
	const bool any_discovered =
		std::ranges::any_of(info.cpus, [](const CpuInfo& c) { return c.discovered(); });
	std::map<std::uint32_t, std::size_t> index;
	for (const CpuInfo& c : info.cpus) {
		if (any_discovered ? !c.discovered() : !c.possible())
			continue;
		all.push_back(c.cpu);
		const auto [it, added] = index.try_emplace(type_key(c.midr), l.types.size());
		if (added) {
			const CoreEventTable& t = core_event_table(c.midr);
			l.types.push_back({.midr = c.midr,
					   .core = t.core,
					   .source = t.source,
					   .fallback = t.fallback,
					   .metric_set = std::string{metric_set_for(c.midr).id},
					   .slots = c.has_pmmir() ? pmmir_slots(c.pmmir) : 0});
			for (const std::string& n : t.notes)
				l.notes.push_back(t.core + ": " + n);
		}
		l.types[it->second].cpus.push_back(c.cpu);
	}
	if (l.types.empty())
		return l;
	add_events(l, info, all);
	add_amu(l, info, all);
	add_spe(l, info, all);
	add_metrics(l, info, all);
	std::erase_if(l.entries, [&](const ListEntry& e) { return !matches(e.name, pattern); });
	return l;
}

namespace {

constexpr std::string_view group_titles[] = {
	"Architected events (Arm ARM common events: every core names them alike)",
	"Core-specific events",
	"AMU events (amupmu amu, amupmu stat --amu)",
	"SPE events (amupmu spe record --events)",
	"Metrics (amupmu stat -M NAME, -M TopdownL1, --topdown)",
};

} // namespace

std::string format_list_text(const EventListing& l)
{
	std::string out;
	out += "# CPUs from " + l.cpu_source + "; event names of " + l.libpfm + "\n";
	for (const ListCoreType& t : l.types) {
		out += "# " + cpus_text(t.cpus) + ": " + t.core + ": ";
		out += t.fallback.empty() ? "its own events from " + t.source : t.fallback;
		out += "; top-down: " + t.metric_set + "\n";
	}
	if (!l.pmceid_known)
		out += "# which events each CPU implements is not known (no PMCEID without amupmu's driver)\n";
	const std::size_t all = [&] {
		std::set<unsigned> s;
		for (const ListCoreType& t : l.types)
			s.insert(t.cpus.begin(), t.cpus.end());
		return s.size();
	}();
	for (const ListGroup g : {ListGroup::architected, ListGroup::core, ListGroup::amu, ListGroup::spe,
				  ListGroup::metric}) {
		bool header = false;
		for (const ListEntry& e : l.entries) {
			if (e.group != g)
				continue;
			if (!header) {
				out += "\n" + std::string{group_titles[static_cast<std::size_t>(g)]} + ":\n";
				header = true;
			}
			std::string line = "  " + text::pad_right(e.name, 40) + " [" + e.encoding + "]";
			if (e.group != ListGroup::metric && e.cpus.size() != all)
				line += e.cpus.empty() ? " (no CPU here)" : " (only " + cpus_text(e.cpus) + ")";
			if (!e.not_implemented.empty())
				line += e.group == ListGroup::metric
						? " (not computable on " + cpus_text(e.not_implemented) + ": missing " +
							  e.missing + ")"
						: " (not implemented on " + cpus_text(e.not_implemented) + ": PMCEID)";
			out += line + "\n";
			if (!e.description.empty())
				out += "       [" + e.description + "]\n";
		}
	}
	if (!l.notes.empty())
		out += "\n";
	for (const std::string& n : l.notes)
		out += "# " + n + "\n";
	return out;
}

std::string format_list_json(const EventListing& l)
{
	JsonWriter w{0};
	w.begin_object();
	w.member("cpu_source", l.cpu_source).member("libpfm", l.libpfm).member("pmceid_known", l.pmceid_known);
	w.key("cpus").begin_array();
	for (const ListCoreType& t : l.types) {
		w.begin_object();
		w.member("cpus", format_cpu_list(t.cpus)).member("midr", hex(t.midr, 8)).member("core", t.core);
		w.member("table", t.source).member("fallback", t.fallback).member("topdown", t.metric_set);
		w.member("slots", t.slots);
		w.end_object();
	}
	w.end_array();
	w.key("events").begin_array();
	for (const ListEntry& e : l.entries) {
		w.begin_object();
		w.member("name", e.name).member("group", to_string(e.group)).member("encoding", e.encoding);
		if (e.number)
			w.member("event", hex(*e.number, 4));
		w.member("description", e.description).member("cpus", format_cpu_list(e.cpus));
		w.member("not_implemented", format_cpu_list(e.not_implemented));
		if (e.group == ListGroup::metric)
			w.member("missing", e.missing);
		w.end_object();
	}
	w.end_array();
	w.key("notes").begin_array();
	for (const std::string& n : l.notes)
		w.value(n);
	w.end_array();
	w.end_object();
	return w.str() + "\n";
}

} // namespace amupmu::report
