// SPDX-License-Identifier: LGPL-2.1-or-later
//
// An AmuReport (amu_interval()) as `amupmu amu` and `amupmu stat --amu`
// print it: a table, JSON, separated values.
#ifndef AMUPMU_REPORT_AMU_FORMAT_HPP
#define AMUPMU_REPORT_AMU_FORMAT_HPP

#include <amupmu/amu.hpp>

#include <string>
#include <string_view>

namespace amupmu::report {

class JsonWriter;

/// A turbostat-like table: one row per CPU, then the summed row, the
/// header naming what was measured, the backend ("mock AMU model" in
/// capitals when mock) and the flags. Text ends with a newline.
[[nodiscard]] std::string format_amu_text(const AmuReport& report);
/// The report as one JSON object written into w (format_amu_json's body).
void write_amu_json(JsonWriter& w, const AmuReport& report);
/// One JSON object (indent 0: one line, for -I streams).
[[nodiscard]] std::string format_amu_json(const AmuReport& report, unsigned indent = 2);
/// Separated values, one line per CPU and one "all" line, stable columns:
///   [interval,] cpu, mhz, ipc, mem_stall_pct, active_pct, seconds,
///   cpu_cycles, cnt_cycles, inst_retired, stall_backend_mem, flags
/// An empty field is a figure without value; flags names why
/// ("not counted", "erratum ARM-A510-2457168", "offline", "restarted").
[[nodiscard]] std::string format_amu_csv(const AmuReport& report, std::string_view sep);

} // namespace amupmu::report

#endif
