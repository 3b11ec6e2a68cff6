// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Every core's events by name, per CPU: the architected common events (the
// library's own table, events.hpp) and each core's IMPLEMENTATION DEFINED
// events from libpfm4's table for the CPU's MIDR_EL1 (Debian's libpfm4,
// MIT licensed, the library PAPI builds on). A heterogeneous system
// (big.LITTLE) has a table per core type; a name that only some of its
// CPUs know says which.
//
// Where libpfm4 has no table for a core (libpfm4 4.13 has arm_ac53,
// arm_ac57, arm_n1, arm_n2, arm_v1, arm_v2, arm_a64fx, arm_thunderx2,
// arm_xgene and arm_kunpeng; it lacks Cortex-A72, A76, A55, X2, ...), or
// the libpfm4 linked in has no arm64 tables at all (libpfm4 builds them
// only for arm64: an x86-64 host's has none), the core's table says so
// (CoreEventTable::fallback) and only the architected names and raw codes
// resolve: never silently. Functions not marked noexcept throw only
// std::bad_alloc, and what their comment says.
#ifndef AMUPMU_CORE_EVENTS_HPP
#define AMUPMU_CORE_EVENTS_HPP

#include <amupmu/events.hpp>
#include <amupmu/info.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

/// A libpfm4 core PMU table and the MIDR_EL1 implementer and part it
/// describes (libpfm4 4.13's pmu_detect functions, lib/pfmlib_arm_armv8.c
/// and lib/pfmlib_arm_armv9.c).
struct PfmCore {
	std::uint8_t implementer;
	std::uint16_t part;
	std::string_view pmu;	///< libpfm4's PMU name: "arm_n1"
	std::string_view core;	///< "Arm Neoverse N1"
};

/// Every core the library takes from libpfm4, by MIDR.
[[nodiscard]] std::span<const PfmCore> pfm_cores() noexcept;
/// The libpfm4 table of the core with that MIDR_EL1, or nullptr.
[[nodiscard]] const PfmCore* pfm_core(std::uint64_t midr) noexcept;

/// The libpfm4 linked in.
struct PfmLibrary {
	bool initialized = false;	///< pfm_initialize() succeeded
	bool arm64_tables = false;	///< it has the arm64 core tables
	int version = 0;		///< pfm_get_version(): major << 16 | minor
	std::string note{};		///< why there are no tables, when there are none
};
/// libpfm4's state, initialized on first use (thread-safe).
[[nodiscard]] const PfmLibrary& pfm_library();

/// The group of `amupmu list` an event belongs to.
enum class EventGroup {
	architected,	///< the Arm ARM's common events (the library's table)
	core,		///< a core's IMPLEMENTATION DEFINED events (libpfm4, built-in)
};

/// One event of a CPU's catalogue.
struct CatalogEvent {
	std::string name{};		///< perf's spelling, lower case: "l2d_cache_lmiss_rd"
	std::uint16_t number = 0;
	std::string description{};	///< "" when no table describes it
	EventGroup group = EventGroup::architected;
	/// Where the name comes from: "architected", "libpfm4 arm_n1",
	/// "amupmu built-in"
	std::string table{};

	friend bool operator==(const CatalogEvent&, const CatalogEvent&) = default;
};

/// What the library knows of one core type's own events.
struct CoreEventTable {
	std::uint64_t midr = 0;
	std::string core{};		///< describe_midr(midr)
	/// Where the core's own names come from: "libpfm4 arm_n1 (ARM Neoverse
	/// N1)", "amupmu built-in table (Cortex-X2)"; "" when none.
	std::string source{};
	/// "" when libpfm4 describes the core; otherwise why not, one
	/// sentence that ends by what remains ("... architected events and raw
	/// codes (r<hex>) only").
	std::string fallback{};
	/// Its events that are not architected (by name), ascending by number.
	std::vector<CatalogEvent> events{};
	/// Where its table and the architected one disagree: an event the
	/// table gives an architected name with another number (libpfm4's
	/// arm_thunderx2 OP_RETIRED 0xe8, the Arm ARM's 0x3a). The name means
	/// the architected event; the table's number stays countable as
	/// r<hex>.
	std::vector<std::string> notes{};
};

/// The table of the core with that MIDR (built once per implementer and
/// part; thread-safe). The reference stays valid for the process.
[[nodiscard]] const CoreEventTable& core_event_table(std::uint64_t midr);

/// The architected common events, in events.hpp's order, with the
/// description of the CPU's libpfm4 table (or any libpfm4 arm64 table that
/// gives the event that name) where there is one.
[[nodiscard]] std::vector<CatalogEvent> architected_catalog(std::uint64_t midr);

/// Every event a CPU of midr names: architected_catalog(), then its core
/// table's events.
[[nodiscard]] std::vector<CatalogEvent> cpu_event_catalog(std::uint64_t midr);

/// The number a name has on a CPU of midr, as find_event() resolves it
/// (architected names, perf's aliases, the core's table), case-insensitive;
/// nullopt when the CPU has no event of that name.
[[nodiscard]] std::optional<std::uint16_t> event_number(std::string_view name, std::uint64_t midr);

/// How one name resolves on one CPU.
struct EventOnCpu {
	unsigned cpu = 0;
	std::uint64_t midr = 0;
	std::optional<std::uint16_t> number{};	///< nullopt: no such event there

	friend bool operator==(const EventOnCpu&, const EventOnCpu&) = default;
};

/// name resolved on each CPU of cpus by its own MIDR (info.cpus[cpu].midr;
/// a CPU not in info resolves with MIDR 0).
[[nodiscard]] std::vector<EventOnCpu> resolve_on_cpus(std::string_view name, const Info& info,
						      std::span<const unsigned> cpus);

/// Checks that every named event of events (EventSource::common and core)
/// means the same number on every CPU of cpus, as resolved by each CPU's
/// MIDR. Throws InvalidArgument naming the CPUs whose core has no event of
/// that name ("event 'l2d_cache_lmiss_rd' exists on CPUs 0-3 (Arm Neoverse
/// N1 r4p1) but not on CPUs 4-7 (Arm Cortex-A55 r2p0)") or gives it another
/// number. Raw events are numbers: never refused here.
void require_same_events(std::span<const EventSpec> events, const Info& info, std::span<const unsigned> cpus);

} // namespace amupmu

#endif
