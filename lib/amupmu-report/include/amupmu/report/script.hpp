// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A recording of `amupmu record` as perf script's text (`amupmu script`),
// for the tools that read it (FlameGraph's stackcollapse-perf.pl,
// speedscope, Firefox Profiler).
#ifndef AMUPMU_REPORT_SCRIPT_HPP
#define AMUPMU_REPORT_SCRIPT_HPP

#include <amupmu/report/record.hpp>

#include <string>

namespace amupmu::report {

/// The samples in time order, as perf script prints those of a recording
/// with call chains (perf record -g) and the fields comm, pid, tid, cpu,
/// time, period, event, ip, sym, symoff, dso:
///
///   amupmu-workload  4242/4243  [001] 12.345678:     100000 cpu_cycles:u:
///   \t          400abc insn_loop+0x1c (/tests/amupmu-workload)
///   (blank line)
///
/// The chain is the sampled PC alone (the driver records no call chain).
/// Time: CLOCK_MONOTONIC_RAW seconds with microseconds (the generic timer's
/// count over its frequency without the recording's clock line). Unknown
/// symbols and files are "[unknown]", the kernel "[kernel.kallsyms]".
[[nodiscard]] std::string format_script(const Recording& r);

} // namespace amupmu::report

#endif
