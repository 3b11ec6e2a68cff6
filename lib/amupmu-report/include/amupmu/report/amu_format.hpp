// SPDX-License-Identifier: LGPL-2.1-or-later
//
// An AmuReport (amu_interval()) as `amupmu amu` and `amupmu stat --amu`
// print it: a table, JSON, separated values; its flags and notes in words.
#ifndef AMUPMU_REPORT_AMU_FORMAT_HPP
#define AMUPMU_REPORT_AMU_FORMAT_HPP

#include <amupmu/amu.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu::report {

class JsonWriter;

/// What `amupmu amu` prints of a run or of one -I interval: the library's
/// figures (amu_interval()) and what the tool knows of the run.
struct AmuRun {
	AmuReport amu{};
	std::vector<std::string> command{};
	double seconds = 0;			///< wall time of the run or interval
	std::optional<double> interval_end{};	///< -I: seconds since start
	std::optional<int> exit_status{};
};

/// "mock AMU model" or "hardware AMU".
[[nodiscard]] std::string_view amu_backend(const AmuReport& report) noexcept;
/// What limits the figures, one line each, in this order: the errata
/// ("erratum ID on CPUs 0-1 (CORE RANGE): SUMMARY [PROVENANCE]"), the
/// counters not counted ("not counted: CPU 0 STALL_BACKEND_MEM: counter 3
/// not enabled (AMCNTENSET0_EL0 bit 3 clear)", one line per counter and
/// reason), "offline: ...", "restarted: ...", "no AMU: ...".
[[nodiscard]] std::vector<std::string> amu_flags(const AmuReport& report);
/// What does not limit them but is worth saying: the CPUs whose cycle
/// counters read zero at discovery.
[[nodiscard]] std::vector<std::string> amu_notes(const AmuReport& report);

/// A turbostat-like table: one row per CPU, then the summed row, the
/// header naming what was measured, the backend ("mock AMU model" in
/// capitals when mock) and the flags. Text ends with a newline.
[[nodiscard]] std::string format_amu_text(const AmuRun& run);
/// The run as one JSON object written into w (format_amu_json's body).
void write_amu_json(JsonWriter& w, const AmuRun& run);
/// One JSON object (indent 0: one line, for -I streams).
[[nodiscard]] std::string format_amu_json(const AmuRun& run, unsigned indent = 2);
/// Separated values, one line per CPU and one "all" line, stable columns:
///   [interval,] cpu, mhz, ipc, mem_stall_pct, active_pct, seconds,
///   cpu_cycles, cnt_cycles, inst_retired, stall_backend_mem, flags
/// An empty field is a figure without value; flags names why
/// ("not counted", "erratum ARM-A510-2457168", "offline", "restarted").
[[nodiscard]] std::string format_amu_csv(const AmuRun& run, std::string_view sep);

} // namespace amupmu::report

#endif
