// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The result of a counting run (what `amupmu stat` prints): raw totals,
// erratum-compensated values beside them, derived metrics; rendered as a
// perf-stat-like table, JSON, or separated values.
#ifndef AMUPMU_STAT_HPP
#define AMUPMU_STAT_HPP

#include <amupmu/amu.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/events.hpp>
#include <amupmu/metrics.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

struct StatRow {
	std::string name{};		///< "inst_retired:u"
	std::uint16_t number = 0;
	std::uint32_t flags = 0;	///< evflag::*
	std::string modifiers{};	///< perf's modifiers, canonical ("u"; "" none)
	double value = 0;		///< raw total over the CPUs
	std::uint64_t time_enabled = 0;	///< ns, largest over the CPUs
	std::uint64_t time_running = 0;	///< ns, smallest over the CPUs
	bool added = false;		///< added for an erratum model, not asked for

	/// The erratum compensation, when one applies.
	std::optional<double> compensated{};
	std::string erratum{};		///< id of the erratum that applies or must be verified
	std::string note{};		///< parameters / "verify" / cross-check
};

struct StatReport {
	std::vector<std::string> command{};
	std::string cpus{};		///< "0-1"
	std::string cpu_description{};	///< "Arm Cortex-X2 r2p1"
	double seconds = 0;		///< wall time of the run (or interval)
	std::optional<double> interval_end{};	///< -I: seconds since start
	std::optional<int> exit_status{};
	std::vector<StatRow> rows{};
	std::vector<Metric> metrics{};
	std::vector<std::string> notes{};	///< errata not applied, warnings
	/// amupmu stat --amu: the AMU over the same interval. Text: its table
	/// after the counts; JSON: an "amu" member (format_amu_json's object);
	/// separated values: "amu" lines, one per CPU ("all" last) and figure,
	/// in the same columns: amu,value,unit,figure,cpu,,erratum,status,
	/// with figure frequency (MHz), ipc, mem_stall (%), active (%).
	std::optional<AmuReport> amu{};
};

struct CompensationOptions {
	bool enabled = true;
	/// software ground truth of EC=0x00 exceptions for the EXC_UNDEF model
	std::optional<double> exc_undef_ec0{};
	const Calibration* calibration = nullptr;
};

/// Fills compensated/erratum/note of the rows the errata of midr touch and
/// the report's notes. Disabled: rows stay raw, and a note says which
/// errata were not compensated.
void apply_errata(StatReport& report, std::uint64_t midr, const CompensationOptions& options);

/// Events an erratum model needs besides the ones asked for (the companion
/// STALL_BACKEND_MEM, EXC_TAKEN/EXC_RETURN for the cross-check), for each
/// row of an affected event with that row's modifiers: "exc_undef:u" needs
/// "exc_taken:u", a second row "exc_undef:k" "exc_taken:k".
[[nodiscard]] std::vector<EventSpec> errata_companions(std::span<const EventSpec> events, std::uint64_t midr);

/// Recomputes report.metrics from the rows.
void derive_report_metrics(StatReport& report);

/// "12,345,678"
[[nodiscard]] std::string group_digits(double value);

/// perf-stat-like text table.
[[nodiscard]] std::string format_stat_text(const StatReport& report);
/// One JSON object (indent 0: one line, for -I streams). Each event has
/// "modifiers" (perf's letters) and "exclude" (perf_event_attr's words:
/// "user", "kernel", "hv", "host", "guest").
[[nodiscard]] std::string format_stat_json(const StatReport& report, unsigned indent = 2);
/// Separated values, one line per row, in these stable columns:
///   [interval,] kind, value, unit, event, code, running_pct, erratum, note,
///   modifiers
/// kind is "count", "compensated" or "metric" (metric lines leave code,
/// running_pct and modifiers empty); modifiers are perf's ("u", "kh", ""
/// for none). Separators inside fields are replaced by spaces.
[[nodiscard]] std::string format_stat_csv(const StatReport& report, std::string_view sep);

} // namespace amupmu

#endif
