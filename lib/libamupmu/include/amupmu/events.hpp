// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Events: their numbers (ev::) and Arm ARM names, which ones a CPU
// implements (PMCEID0/1), and the catalogue that parses what a user writes:
// perf-compatible names ("inst_retired", "l1d_cache_refill"), raw "r<hex>"
// events, perf's modifiers (":u", ":k", ":h", ":G", ":H") and per-core
// IMPLEMENTATION DEFINED tables selected by MIDR_EL1. Functions not marked
// noexcept throw std::bad_alloc, and what their comment says.
#ifndef AMUPMU_EVENTS_HPP
#define AMUPMU_EVENTS_HPP

#include <amupmu/error.hpp>
#include <amupmu/info.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

/// Common event numbers (Arm ARM; include/linux/perf/arm_pmuv3.h).
namespace ev {
inline constexpr std::uint16_t l1i_cache_refill = 0x01;
inline constexpr std::uint16_t l1i_tlb_refill = 0x02;
inline constexpr std::uint16_t l1d_cache_refill = 0x03;
inline constexpr std::uint16_t l1d_cache = 0x04;
inline constexpr std::uint16_t l1d_tlb_refill = 0x05;
inline constexpr std::uint16_t inst_retired = 0x08;
inline constexpr std::uint16_t exc_taken = 0x09;
inline constexpr std::uint16_t exc_return = 0x0A;
inline constexpr std::uint16_t br_mis_pred = 0x10;
inline constexpr std::uint16_t cpu_cycles = 0x11;
inline constexpr std::uint16_t br_pred = 0x12;
inline constexpr std::uint16_t l1i_cache = 0x14;
inline constexpr std::uint16_t bus_cycles = 0x1D;
inline constexpr std::uint16_t br_retired = 0x21;
inline constexpr std::uint16_t stall_frontend = 0x23;
inline constexpr std::uint16_t stall_backend = 0x24;
inline constexpr std::uint16_t l1d_tlb = 0x25;
inline constexpr std::uint16_t l1i_tlb = 0x26;
inline constexpr std::uint16_t ll_cache_rd = 0x36;
inline constexpr std::uint16_t ll_cache_miss_rd = 0x37;
inline constexpr std::uint16_t exc_undef = 0x81;
inline constexpr std::uint16_t cnt_cycles = 0x4004;
inline constexpr std::uint16_t stall_backend_mem = 0x4005;
/// Cortex-X2 IMPLEMENTATION DEFINED: IMP_STALL_BACKEND_MCQ
inline constexpr std::uint16_t imp_stall_backend_mcq = 0x0160;
} // namespace ev

/// The AMU's architected events (group 0, AMEVTYPER0<n>_EL0.evtCount): on
/// AMUv1 counters 0-3 count them in this order, but look them up
/// (amu_counter_of()). The same numbers as the PMU's common events.
namespace amu_ev {
using ev::cpu_cycles;		///< core cycles
using ev::cnt_cycles;		///< constant-frequency cycles (system counter rate; not in WFI/WFE)
using ev::inst_retired;		///< instructions retired
using ev::stall_backend_mem;	///< cycles stalled on the memory system
} // namespace amu_ev

// ---------------------------------------------------------------- common event names

/// The first extended common event number (PMCEID<n>_EL0 bits [63:32]).
inline constexpr std::uint16_t ext_event_base = 0x4000;

/// A common event's Arm ARM name ("INST_RETIRED", "EXC_UNDEF"); empty when
/// unknown.
[[nodiscard]] std::string_view event_name(std::uint16_t event) noexcept;

/// A common event number and its Arm ARM name.
struct NamedEvent {
	std::uint16_t number;
	std::string_view name;
};

/// Every named common event, ascending within each range: architectural
/// 0x00-0x3F, common microarchitectural 0x40-0xFF, extended 0x4000-0x403F.
[[nodiscard]] std::span<const NamedEvent> common_events_named();

/// An AMU event's name: "CPU_CYCLES", "CNT_CYCLES", "INST_RETIRED",
/// "STALL_BACKEND_MEM", else event_name().
[[nodiscard]] std::string_view amu_event_name(std::uint16_t event) noexcept;

// ---------------------------------------------------------------- events a CPU implements

/// Whether PMCEID0/1 describe the event (0x00-0x3F, 0x4000-0x403F); other
/// numbers can only be tried.
[[nodiscard]] bool pmceid_describes(std::uint16_t event) noexcept;

/// The common events PMCEID0/1 mark implemented, ascending: 0x00-0x3F, and
/// 0x4000-0x403F when ext (CpuInfo::pmceid_ext()) is set.
[[nodiscard]] std::vector<std::uint16_t> implemented_events(std::uint64_t pmceid0,
							    std::uint64_t pmceid1, bool ext);
/// implemented_events() of a CPU's report; empty without a PMU.
[[nodiscard]] std::vector<std::uint16_t> implemented_events(const CpuInfo& cpu);

/// Whether the CPU's PMCEID0/1 mark the event implemented; nullopt when
/// PMCEID does not describe it (pmceid_describes()).
[[nodiscard]] std::optional<bool> cpu_implements(const CpuInfo& cpu, std::uint16_t event) noexcept;

// ---------------------------------------------------------------- the catalogue

/// Where an event's name comes from.
enum class EventSource {
	common,		///< architectural / common microarchitectural (Arm ARM)
	core,		///< a core's IMPLEMENTATION DEFINED table (by MIDR)
	raw,		///< "r<hex>": a number, nothing known about it
};

/// One catalogue entry of a core table.
struct CoreEvent {
	std::uint16_t number;
	std::string_view name;		///< perf spelling, lower case
	std::string_view description;
	std::string_view provenance;
};

/// IMPLEMENTATION DEFINED events of one core, chosen by MIDR
/// implementer and part.
struct CoreTable {
	std::uint8_t implementer;
	std::uint16_t part;
	std::string_view core;
	std::span<const CoreEvent> events;
};

/// Every core table the library knows.
[[nodiscard]] std::span<const CoreTable> core_tables() noexcept;
/// The table of the CPU with that MIDR_EL1, or nullptr.
[[nodiscard]] const CoreTable* core_table(std::uint64_t midr) noexcept;

/// A parsed event: what goes into a counter.
struct EventSpec {
	std::string name{};		///< as printed: "inst_retired:u", "r160"
	std::uint16_t number = 0;
	std::uint32_t flags = 0;	///< evflag::* (perf's exclusions, raw)
	EventSource source = EventSource::common;
	std::string modifiers{};	///< perf's modifiers, "ukhGH" order: "u", "" for none

	friend bool operator==(const EventSpec&, const EventSpec&) = default;
};

/// EventSpec::flags (enum amupmu_event_flags): perf_event_attr's
/// exclusions, which the driver turns into the PMU's EL filters.
namespace evflag {
inline constexpr std::uint32_t excl_user = 1u << 0;	///< exclude_user
inline constexpr std::uint32_t excl_kernel = 1u << 1;	///< exclude_kernel
inline constexpr std::uint32_t excl_hv = 1u << 2;	///< exclude_hv
inline constexpr std::uint32_t excl_host = 1u << 3;	///< exclude_host
inline constexpr std::uint32_t excl_guest = 1u << 4;	///< exclude_guest
inline constexpr std::uint32_t raw = 1u << 5;		///< no PMCEID check
/// Every exclusion (what a modifier sets).
inline constexpr std::uint32_t exclusions = excl_user | excl_kernel | excl_hv | excl_host | excl_guest;
} // namespace evflag

/// The evflag:: exclusions of a modifier string, as perf sets them:
///   u  exclude kernel and hv      k  exclude user and hv
///   h  exclude user and kernel    (several of u/k/h: the union of levels)
///   G  exclude host               H  exclude guest   (both: neither)
/// In any order, repeats allowed. Throws InvalidArgument for an empty
/// string or another letter.
[[nodiscard]] std::uint32_t parse_modifiers(std::string_view modifiers);

/// The letters of modifiers in the order "ukhGH", each once. Throws as
/// parse_modifiers().
[[nodiscard]] std::string canonical_modifiers(std::string_view modifiers);

/// The exclusions in flags as perf_event_attr's words, in bit order:
/// "user", "kernel", "hv", "host", "guest".
[[nodiscard]] std::vector<std::string_view> exclusion_names(std::uint32_t flags);

/// The exception levels an event counts at.
struct CountedLevels {
	bool el0 = false;
	bool el1 = false;
	bool el2 = false;

	/// The event counts at some level.
	[[nodiscard]] constexpr bool any() const noexcept { return el0 || el1 || el2; }
	friend constexpr bool operator==(const CountedLevels&, const CountedLevels&) = default;
};
/// The exception levels an event with these evflag:: flags counts at, as
/// the driver translates them: kernel_el 2 (VHE) or 1 (Info::kernel_el),
/// has_el2 whether the CPU implements EL2 (pfr0_el2()).
[[nodiscard]] CountedLevels counted_levels(std::uint32_t flags, std::uint32_t kernel_el, bool has_el2) noexcept;

/// The error of an event name the catalogue does not know: what() lists
/// the closest names; errnum() is EINVAL.
class UnknownEvent : public Error {
public:
	UnknownEvent(std::string name, std::vector<std::string> suggestions);
	/// The name asked for.
	[[nodiscard]] const std::string& name() const noexcept { return name_; }
	/// The closest known names, closest first.
	[[nodiscard]] const std::vector<std::string>& suggestions() const noexcept { return suggestions_; }

private:
	std::string name_{};
	std::vector<std::string> suggestions_{};
};

/// Looks an event name up, with midr's core table; nullopt when unknown.
/// Case-insensitive: "l1d_cache_refill", "L1D_CACHE_REFILL", perf's
/// aliases "cycles", "instructions", "branch-misses".
[[nodiscard]] std::optional<EventSpec> find_event(std::string_view name, std::uint64_t midr);

/// Parses "name[:mods]" or "r<hex>[:mods]" ("inst_retired:u": user space
/// only; parse_modifiers()). Throws UnknownEvent or InvalidArgument.
[[nodiscard]] EventSpec parse_event(std::string_view text, std::uint64_t midr);

/// Parses a comma-separated list of events. Throws as parse_event().
[[nodiscard]] std::vector<EventSpec> parse_event_list(std::string_view list, std::uint64_t midr);

/// The catalogue's names (with midr's core table) closest to name by edit
/// distance, at most max, closest first.
[[nodiscard]] std::vector<std::string> closest_event_names(std::string_view name, std::uint64_t midr,
							   std::size_t max = 3);

/// The Levenshtein distance of two names, case-insensitive.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

/// An event number's perf name: "inst_retired", a core table's name, or
/// "r<hex>".
[[nodiscard]] std::string event_display_name(std::uint16_t number, std::uint64_t midr);

/// An event a CPU cannot count, found before anything is programmed.
struct MissingEvent {
	std::string name{};
	std::uint16_t number = 0;
	unsigned cpu = 0;
	std::string reason{};
};

/// The events some CPU of cpus cannot count, by its PMCEID0/1. Events
/// PMCEID does not describe (pmceid_describes()) are never missing; a CPU
/// not discovered or without a PMU misses every event.
[[nodiscard]] std::vector<MissingEvent> missing_events(std::span<const EventSpec> events,
						       const Info& info, std::span<const unsigned> cpus);

/// Checks that every CPU of cpus implements every event. Throws
/// Unsupported (EOPNOTSUPP) naming each missing_events() entry.
void require_events(std::span<const EventSpec> events, const Info& info, std::span<const unsigned> cpus);

/// Checks that every event counts at some exception level on every CPU of
/// cpus (counted_levels()). Throws InvalidArgument naming the first that
/// does not, which the driver would refuse: ":h" on a VHE host or on a CPU
/// without EL2. Checks nothing when Info::kernel_el is 0.
void require_countable(std::span<const EventSpec> events, const Info& info, std::span<const unsigned> cpus);

} // namespace amupmu

#endif
