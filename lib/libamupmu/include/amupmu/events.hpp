// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The event catalogue: PMUv3 events by perf-compatible name ("cpu_cycles",
// "inst_retired", "l1d_cache_refill", "exc_undef"), raw "r<hex>" events,
// perf's modifiers (":u", ":k", ":h", ":G", ":H") and per-core
// IMPLEMENTATION DEFINED tables selected by MIDR_EL1.
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

/// Well-known event numbers (Arm ARM / include/linux/perf/arm_pmuv3.h).
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
inline constexpr std::uint16_t stall_backend_mem = 0x4005;
/// Cortex-X2 IMPLEMENTATION DEFINED (seed 003 §1.2)
inline constexpr std::uint16_t imp_stall_backend_mcq = 0x0160;
} // namespace ev

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

/// The event flags of amupmu_pmu_event (enum amupmu_event_flags): perf's
/// perf_event_attr exclusions, translated into the PMU's EL filters by the
/// driver as the kernel's arm_pmu does.
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

/// The exclusions perf's parse-events sets for an event modifier string
/// ("u", "kh", "G", ... ; Linux tools/perf/util/parse-events.c,
/// parse_events__modifier_list(), as perf stat and perf record run it):
///   u  exclude kernel and hv      k  exclude user and hv
///   h  exclude user and kernel    (several of u/k/h: the union of levels)
///   G  exclude host               H  exclude guest   (both: neither)
/// The order of the letters does not matter; repeating one changes
/// nothing. No default exclude_guest (perf kvm's exclude_GH_default).
/// Throws InvalidArgument for an empty string or another letter (perf's
/// p, P, S, D, I, W, e, b, R have no meaning for amupmu).
[[nodiscard]] std::uint32_t parse_modifiers(std::string_view modifiers);

/// The letters of modifiers in canonical order "ukhGH", each once
/// (validated as parse_modifiers() does).
[[nodiscard]] std::string canonical_modifiers(std::string_view modifiers);

/// perf_event_attr's words for the exclusions in flags, in bit order:
/// "user", "kernel", "hv", "host", "guest" (exclude_<word>).
[[nodiscard]] std::vector<std::string_view> exclusion_names(std::uint32_t flags);

/// The exception levels an event with these flags counts at, as the
/// driver translates them (include/uapi/linux/amupmu.h, enum
/// amupmu_event_flags): kernel_el 2 (VHE) or 1; has_el2 whether the CPU
/// implements EL2 (ID_AA64PFR0_EL1.EL2).
struct CountedLevels {
	bool el0 = false;
	bool el1 = false;
	bool el2 = false;

	[[nodiscard]] constexpr bool any() const noexcept { return el0 || el1 || el2; }
	friend constexpr bool operator==(const CountedLevels&, const CountedLevels&) = default;
};
[[nodiscard]] CountedLevels counted_levels(std::uint32_t flags, std::uint32_t kernel_el, bool has_el2) noexcept;

/// An event name the catalogue does not know. what() lists the closest
/// names; errnum() is EINVAL.
class UnknownEvent : public Error {
public:
	UnknownEvent(std::string name, std::vector<std::string> suggestions);
	[[nodiscard]] const std::string& name() const noexcept { return name_; }
	[[nodiscard]] const std::vector<std::string>& suggestions() const noexcept { return suggestions_; }

private:
	std::string name_{};
	std::vector<std::string> suggestions_{};
};

/// Looks a name up (case-insensitive; perf spelling "l1d_cache_refill",
/// Arm ARM spelling "L1D_CACHE_REFILL", aliases "cycles", "instructions",
/// "branch-misses"), with the core table of midr. nullopt when unknown.
[[nodiscard]] std::optional<EventSpec> find_event(std::string_view name, std::uint64_t midr);

/// Parses "name[:mods]" or "r<hex>[:mods]". Modifiers are perf's (see
/// parse_modifiers()): "inst_retired:u" counts user space only.
/// Throws UnknownEvent (with suggestions) or InvalidArgument.
[[nodiscard]] EventSpec parse_event(std::string_view text, std::uint64_t midr);

/// parse_event() of each comma-separated item.
[[nodiscard]] std::vector<EventSpec> parse_event_list(std::string_view list, std::uint64_t midr);

/// Up to max names of the catalogue (with midr's core table) closest to
/// name by edit distance, closest first.
[[nodiscard]] std::vector<std::string> closest_event_names(std::string_view name, std::uint64_t midr,
							   std::size_t max = 3);

/// Levenshtein distance (case-insensitive).
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

/// The perf name of an event number: "inst_retired", a core table name,
/// or "r<hex>".
[[nodiscard]] std::string event_display_name(std::uint16_t number, std::uint64_t midr);

/// An event a CPU cannot count, found before anything is programmed.
struct MissingEvent {
	std::string name{};
	std::uint16_t number = 0;
	unsigned cpu = 0;
	std::string reason{};
};

/// Checks every event against the PMCEID0/1 bitmaps (extended halves
/// included) of every CPU in cpus. Events PMCEID does not describe
/// (0x40-0xFF common microarchitectural, IMPLEMENTATION DEFINED, raw) are
/// not missing: they get AMUPMU_EV_RAW when programmed. CPUs not
/// discovered, or without a PMU, miss everything.
[[nodiscard]] std::vector<MissingEvent> missing_events(std::span<const EventSpec> events,
						       const Info& info, std::span<const unsigned> cpus);

/// Throws Unsupported (EOPNOTSUPP, operation "event check") naming every
/// missing event when missing_events() is not empty.
void require_events(std::span<const EventSpec> events, const Info& info, std::span<const unsigned> cpus);

/// Throws InvalidArgument naming the first event whose modifiers count at
/// no exception level on a CPU of cpus (counted_levels() with
/// Info::kernel_el and the CPU's EL2), which the driver would refuse with
/// EINVAL: ":h" on a VHE host (the kernel is the hypervisor) or on a CPU
/// without EL2. Does nothing when the driver did not report kernel_el.
void require_countable(std::span<const EventSpec> events, const Info& info, std::span<const unsigned> cpus);

} // namespace amupmu

#endif
