// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/affinity.hpp>
#include <amupmu/bits.hpp>
#include <amupmu/core_events.hpp>
#include <amupmu/cpu.hpp>

#include <perfmon/pfmlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

namespace amupmu {

namespace {

// libpfm4 4.13's arm64 core tables and the MIDR_EL1 implementer and part
// its pmu_detect functions accept (lib/pfmlib_arm_armv8.c,
// lib/pfmlib_arm_armv9.c). Its uncore tables (ThunderX2 DMC/LLC/CCPI,
// Kunpeng DDRC/HHA/L3C) are not per-CPU events: not listed.
struct PfmEntry {
	PfmCore core;
	pfm_pmu_t id = PFM_PMU_NONE;
};
constexpr PfmEntry pfm_entries[] = {
	{{0x41, 0xD03, "arm_ac53", "Arm Cortex-A53"}, PFM_PMU_ARM_CORTEX_A53},
	{{0x41, 0xD07, "arm_ac57", "Arm Cortex-A57"}, PFM_PMU_ARM_CORTEX_A57},
	{{0x41, 0xD0C, "arm_n1", "Arm Neoverse N1"}, PFM_PMU_ARM_N1},
	{{0x41, 0xD40, "arm_v1", "Arm Neoverse V1"}, PFM_PMU_ARM_V1},
	{{0x41, 0xD49, "arm_n2", "Arm Neoverse N2"}, PFM_PMU_ARM_N2},
	{{0x41, 0xD4F, "arm_v2", "Arm Neoverse V2"}, PFM_PMU_ARM_V2},
	{{0x42, 0x516, "arm_thunderx2", "Broadcom Vulcan / ThunderX2"}, PFM_PMU_ARM_THUNDERX2},
	{{0x43, 0x0AF, "arm_thunderx2", "Cavium ThunderX2"}, PFM_PMU_ARM_THUNDERX2},
	{{0x46, 0x001, "arm_a64fx", "Fujitsu A64FX"}, PFM_PMU_ARM_A64FX},
	{{0x48, 0xD01, "arm_kunpeng", "HiSilicon Kunpeng 920 (TSV110)"}, PFM_PMU_ARM_KUNPENG},
	{{0x50, 0x000, "arm_xgene", "Applied Micro X-Gene"}, PFM_PMU_ARM_XGENE},
};

const PfmEntry* pfm_entry(std::uint64_t midr) noexcept
{
	const Midr m = decode_midr(midr);
	for (const PfmEntry& e : pfm_entries)
		if (e.core.implementer == m.implementer && e.core.part == m.part)
			return &e;
	return nullptr;
}

char lower(char c) noexcept
{
	return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

std::string lowercase(std::string_view s)
{
	std::string out{s};
	std::ranges::transform(out, out.begin(), lower);
	return out;
}

bool iequal(std::string_view a, std::string_view b) noexcept
{
	return std::ranges::equal(a, b, [](char x, char y) { return lower(x) == lower(y); });
}

// One event of a libpfm4 table, as pfm_get_event_info() gives it.
struct PfmEvent {
	std::string name;	// libpfm4's spelling (upper case)
	std::uint64_t code;
	std::string description;
};

// The events of a libpfm4 PMU table, in libpfm4's order; empty when the
// library has no such table. pfm_get_pmu_info() and pfm_get_event_info()
// answer for every table compiled in, detected on this machine or not
// (libpfm4 registers them all; only encoding needs a detected PMU), so
// no LIBPFM_ENCODE_INACTIVE is needed.
std::vector<PfmEvent> pfm_events(pfm_pmu_t id)
{
	std::vector<PfmEvent> out;
	if (!pfm_library().initialized)
		return out;
	pfm_pmu_info_t pinfo;
	std::memset(&pinfo, 0, sizeof(pinfo));
	pinfo.size = sizeof(pinfo);
	if (pfm_get_pmu_info(id, &pinfo) != PFM_SUCCESS)
		return out;
	for (int i = pinfo.first_event; i != -1; i = pfm_get_event_next(i)) {
		pfm_event_info_t info;
		std::memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_event_info(i, PFM_OS_NONE, &info) != PFM_SUCCESS || !info.name)
			continue;
		out.push_back({info.name, info.code, info.desc ? info.desc : ""});
	}
	return out;
}

// The events of every libpfm4 arm64 core table, once (for descriptions).
const std::vector<std::vector<PfmEvent>>& all_pfm_events()
{
	static const std::vector<std::vector<PfmEvent>> all = [] {
		std::vector<std::vector<PfmEvent>> v;
		for (const PfmEntry& e : pfm_entries)
			v.push_back(pfm_events(e.id));
		return v;
	}();
	return all;
}

const std::vector<PfmEvent>& pfm_events_of(const PfmEntry& e)
{
	const auto i = static_cast<std::size_t>(&e - pfm_entries);
	return all_pfm_events()[i];
}

std::optional<std::uint16_t> architected_number(std::string_view name)
{
	for (const NamedEvent& e : common_events_named())
		if (iequal(e.name, name))
			return e.number;
	return std::nullopt;
}

CoreEventTable build_table(std::uint64_t midr)
{
	CoreEventTable t;
	t.midr = midr;
	t.core = describe_midr(midr);
	const PfmLibrary& lib = pfm_library();
	// the library's own table first (Cortex-X2's erratum event)
	if (const CoreTable* own = core_table(midr)) {
		t.source = "amupmu built-in table (" + std::string{own->core} + ")";
		for (const CoreEvent& e : own->events)
			t.events.push_back({std::string{e.name}, e.number,
					    std::string{e.description} + " [" + std::string{e.provenance} + "]",
					    EventGroup::core, "amupmu built-in"});
	}
	const PfmEntry* entry = pfm_entry(midr);
	const std::string own_too = t.events.empty() ? "" : " and the built-in table's";
	if (!entry) {
		t.fallback = "libpfm4 has no event table for " + t.core + ": architected events" + own_too +
			     " and raw codes (r<hex>) only";
	} else if (!lib.arm64_tables) {
		t.fallback = "the libpfm4 linked in has no arm64 tables (" + lib.note + "), so none for " +
			     t.core + ": architected events" + own_too + " and raw codes (r<hex>) only";
	} else {
		const std::string table = "libpfm4 " + std::string{entry->core.pmu};
		t.source += (t.source.empty() ? "" : ", ") + table + " (" + std::string{entry->core.core} + ")";
		for (const PfmEvent& e : pfm_events_of(*entry)) {
			if (e.code > 0xFFFF)
				continue;
			if (const std::optional<std::uint16_t> arch = architected_number(e.name)) {
				if (*arch != e.code)
					t.notes.push_back(table + " names " + hex(e.code, 2) + " " + e.name +
							  ", the Arm ARM's " + e.name + " is " + hex(*arch, 2) +
							  ": '" + lowercase(e.name) + "' counts the architected event, r" +
							  hex(e.code, 2).substr(2) + " the core's");
				continue;
			}
			const std::string name = lowercase(e.name);
			if (std::ranges::any_of(t.events, [&](const CatalogEvent& c) { return c.name == name; }))
				continue;	// the built-in table's name stays
			t.events.push_back({name, static_cast<std::uint16_t>(e.code), e.description, EventGroup::core,
					    table});
		}
	}
	std::ranges::stable_sort(t.events, {}, &CatalogEvent::number);
	return t;
}

} // namespace

std::span<const PfmCore> pfm_cores() noexcept
{
	static constexpr auto cores = [] {
		std::array<PfmCore, std::size(pfm_entries)> a{};
		for (std::size_t i = 0; i < a.size(); ++i)
			a[i] = pfm_entries[i].core;
		return a;
	}();
	return cores;
}

const PfmCore* pfm_core(std::uint64_t midr) noexcept
{
	const PfmEntry* e = pfm_entry(midr);
	return e ? &e->core : nullptr;
}

const PfmLibrary& pfm_library()
{
	static const PfmLibrary lib = [] {
		PfmLibrary l;
		const int ret = pfm_initialize();
		l.version = pfm_get_version();
		if (ret != PFM_SUCCESS) {
			l.note = std::string{"pfm_initialize: "} + pfm_strerror(ret);
			return l;
		}
		l.initialized = true;
		pfm_pmu_info_t pinfo;
		std::memset(&pinfo, 0, sizeof(pinfo));
		pinfo.size = sizeof(pinfo);
		l.arm64_tables = pfm_get_pmu_info(PFM_PMU_ARM_N1, &pinfo) == PFM_SUCCESS;
		if (!l.arm64_tables)
			l.note = "libpfm4 compiles its arm64 tables into arm64 builds only";
		return l;
	}();
	return lib;
}

const CoreEventTable& core_event_table(std::uint64_t midr)
{
	// one table per implementer and part: variant and revision do not
	// change the event names
	static std::mutex lock;
	static std::map<std::uint32_t, std::unique_ptr<const CoreEventTable>> tables;
	const Midr m = decode_midr(midr);
	const std::uint32_t key = (std::uint32_t{m.implementer} << 16) | m.part;
	const std::scoped_lock guard{lock};
	auto it = tables.find(key);
	if (it == tables.end())
		it = tables.emplace(key, std::make_unique<const CoreEventTable>(build_table(midr))).first;
	return *it->second;
}

std::vector<CatalogEvent> architected_catalog(std::uint64_t midr)
{
	const PfmEntry* own = pfm_library().arm64_tables ? pfm_entry(midr) : nullptr;
	const auto describe = [&](const NamedEvent& ev) -> std::string {
		if (own)
			for (const PfmEvent& p : pfm_events_of(*own))
				if (p.code == ev.number && iequal(p.name, ev.name))
					return p.description;
		for (const std::vector<PfmEvent>& table : all_pfm_events())
			for (const PfmEvent& p : table)
				if (p.code == ev.number && iequal(p.name, ev.name))
					return p.description;
		return {};
	};
	std::vector<CatalogEvent> out;
	for (const NamedEvent& e : common_events_named())
		out.push_back({lowercase(e.name), e.number, describe(e), EventGroup::architected, "architected"});
	return out;
}

std::vector<CatalogEvent> cpu_event_catalog(std::uint64_t midr)
{
	std::vector<CatalogEvent> out = architected_catalog(midr);
	const CoreEventTable& t = core_event_table(midr);
	out.insert(out.end(), t.events.begin(), t.events.end());
	return out;
}

std::optional<std::uint16_t> event_number(std::string_view name, std::uint64_t midr)
{
	if (auto e = find_event(name, midr))
		return e->number;
	return std::nullopt;
}

std::vector<EventOnCpu> resolve_on_cpus(std::string_view name, const Info& info, std::span<const unsigned> cpus)
{
	std::vector<EventOnCpu> out;
	for (const unsigned cpu : cpus) {
		const std::uint64_t midr = cpu < info.cpus.size() ? info.cpus[cpu].midr : 0;
		out.push_back({cpu, midr, event_number(name, midr)});
	}
	return out;
}

void require_same_events(std::span<const EventSpec> events, const Info& info, std::span<const unsigned> cpus)
{
	for (const EventSpec& e : events) {
		if (e.source == EventSource::raw)
			continue;
		// the name without perf's modifiers
		const std::string_view base = std::string_view{e.name}.substr(0, e.name.find(':'));
		const std::vector<EventOnCpu> on = resolve_on_cpus(base, info, cpus);
		std::vector<unsigned> same, other;
		std::map<std::uint64_t, std::vector<unsigned>> other_types;
		for (const EventOnCpu& c : on) {
			(c.number == e.number ? same : other).push_back(c.cpu);
			if (c.number != e.number) {
				const Midr m = decode_midr(c.midr);
				other_types[(std::uint64_t{m.implementer} << 16) | m.part].push_back(c.cpu);
			}
		}
		if (other.empty())
			continue;
		const auto cpus_text = [](const std::vector<unsigned>& v) {
			return std::string{v.size() > 1 ? "CPUs " : "CPU "} + format_cpu_list(v);
		};
		std::string text = "event '" + std::string{base} + "' (" + hex(e.number, 4) + ")";
		if (!same.empty())
			text += " is an event of " + cpus_text(same) + " (" +
				describe_midr(info.cpus[same.front()].midr) + ")";
		std::string why;
		for (const auto& [key, list] : other_types) {
			const EventOnCpu& first = *std::ranges::find(on, list.front(), &EventOnCpu::cpu);
			why += (why.empty() ? "" : "; ") + cpus_text(list) + " (" + describe_midr(first.midr) + ")" +
			       (first.number ? " number it " + hex(*first.number, 4) : " have no event of that name");
		}
		text += ", but " + why + " (count the core types apart with -C, or give the number: r<hex>)";
		throw InvalidArgument{text, EINVAL};
	}
}

} // namespace amupmu
