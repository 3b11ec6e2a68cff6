// SPDX-License-Identifier: LGPL-2.1-or-later
//
// What `amupmu list` prints, as `perf list` does: the events of the CPUs
// present, grouped (architected, core-specific, AMU, SPE, metrics), each
// with its encoding and description, the CPUs that know its name, and
// those whose PMCEID0/1 say they do not implement it. One core type per
// MIDR (implementer and part): a heterogeneous system lists each type's own
// events with its CPUs; where libpfm4 has no table for a type the listing
// says so (CoreEventTable::fallback).
#ifndef AMUPMU_REPORT_LIST_HPP
#define AMUPMU_REPORT_LIST_HPP

#include <amupmu/info.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu::report {

/// One core type and its CPUs.
struct ListCoreType {
	std::uint64_t midr = 0;
	std::vector<unsigned> cpus{};
	std::string core{};		///< describe_midr()
	std::string source{};		///< where its own names come from ("" none)
	std::string fallback{};		///< why it has none (CoreEventTable::fallback)
	std::string metric_set{};	///< the top-down set for it (MetricSet::id)
	unsigned slots = 0;		///< PMMIR_EL1.SLOTS of its first CPU (0: none)
};

/// The groups, in listing order.
enum class ListGroup { architected, core, amu, spe, metric };
/// "architected", "core", "amu", "spe", "metric".
[[nodiscard]] std::string_view to_string(ListGroup g) noexcept;

/// One listed event or metric.
struct ListEntry {
	std::string name{};		///< "l1d_cache_refill", "amu/cpu_cycles/", "TopdownL1/frontend_bound"
	ListGroup group = ListGroup::architected;
	std::string encoding{};		///< "event=0x03", "AMEVTYPER0 0x0011", "PMSEVFR_EL1 bit 1", a formula
	std::optional<std::uint16_t> number{};
	std::string description{};
	std::vector<unsigned> cpus{};	///< the CPUs that know the name
	/// CPUs whose PMCEID0/1 say the event is not implemented; a metric:
	/// the CPUs that lack one of its events
	std::vector<unsigned> not_implemented{};
	std::string missing{};		///< a metric: what it lacks ("STALL_SLOT (0x3f), #slots")
};

/// The listing of a system.
struct EventListing {
	std::vector<ListCoreType> types{};
	/// Where the CPUs come from: "AMUPMU_INFO of /dev/amupmu",
	/// "/sys/class/misc/amupmu", "/sys/devices/system/cpu (no amupmu)",
	/// "--midr"
	std::string cpu_source{};
	/// Whether the CPUs' PMCEID0/1 (and PMMIR) are known: from the driver
	bool pmceid_known = false;
	std::string libpfm{};		///< "libpfm4 4.13 (arm64 tables)" or why none
	std::vector<ListEntry> entries{};
	std::vector<std::string> notes{};
};

/// The listing of info's discovered CPUs (all of them when none says it
/// is discovered: MIDRs only), with their PMCEID when pmceid_known. pattern
/// keeps the entries whose name matches it: a glob with * ? [ (fnmatch,
/// case-insensitive), else a substring of the name; "" keeps all.
[[nodiscard]] EventListing build_event_listing(const Info& info, bool pmceid_known, std::string cpu_source,
					       std::string_view pattern = {});

/// perf list's text: a header per group, one line per event ("  name
/// [encoding]" and the CPUs when not all), its description indented below.
[[nodiscard]] std::string format_list_text(const EventListing& listing);
/// One JSON object: "cpus" (the core types), "libpfm", "pmceid_known",
/// "events" (name, group, encoding, event, description, cpus,
/// not_implemented, missing), "notes".
[[nodiscard]] std::string format_list_json(const EventListing& listing);

} // namespace amupmu::report

#endif
