// SPDX-License-Identifier: GPL-2.0
//
// amupmu amu: the Activity Monitors per CPU, turbostat-like: frequency,
// IPC, memory-stall and active shares over a command or every interval.
#include "amu_common.hpp"
#include "child.hpp"
#include "cli.hpp"
#include "count_options.hpp"
#include "signal_wait.hpp"

#include <amupmu/amu.hpp>
#include <amupmu/device.hpp>
#include <amupmu/error.hpp>
#include <amupmu/report/amu_format.hpp>

#include <chrono>
#include <csignal>
#include <iostream>
#include <optional>

namespace amupmu::cli {

using namespace amupmu::report;

namespace {

constexpr std::string_view usage = R"(Usage: amupmu amu [-C CPUS] [-I MS] [--json | -x SEP] [-o FILE]
                  [--device PATH] [-- COMMAND [ARGS...]]

Read the Activity Monitors (AMU) of the CPUs of CPUS (default: all online)
before and after COMMAND, or every MS milliseconds with -I until COMMAND
ends (without a command: until Ctrl-C), and print per CPU and summed:

  MHz        dCPU_CYCLES / dCNT_CYCLES x the system counter frequency
             (the average frequency while the core was not in WFI/WFE)
  IPC        dINST_RETIRED / dCPU_CYCLES
  MemStall%  dSTALL_BACKEND_MEM / dCPU_CYCLES
  Active%    dCNT_CYCLES / dtime (share of wall time not in WFI/WFE)
  aux:EVT    the deltas of the group 1 (auxiliary) counters

A figure whose counter is not enabled, whose CPU was offline at a read, or
whose core has an AMU erratum on CNT_CYCLES (Cortex-A510 2457168,
Cortex-A725 3821522) is not printed; the header and the flags say why.
The AMU counters are system-wide: CAP_PERFMON is needed. Exits with the
command's status (128 + signal when it was killed).

Options:
  -C CPUS           CPU list, e.g. 0 or 0-3,6
  -I MS             print every MS milliseconds (at least 10)
  --json            one JSON document (with -I: one JSON object per line)
  -x SEP            separated values: cpu,mhz,ipc,mem_stall_pct,active_pct,
                    seconds,cpu_cycles,cnt_cycles,inst_retired,
                    stall_backend_mem,flags (with -I an interval column first)
  -o FILE           write to FILE instead of stderr
  --device PATH     device node (default /dev/amupmu)
  -h, --help        show this help
)";

using Options = CountOptions;

Options parse(Args args)
{
	Options o;
	std::size_t i = 0;
	bool ended = false;
	for (; i < args.size(); ++i) {
		if (end_of_options(args, i)) {
			ended = true;
			break;
		}
		if (!count_option(args, i, o))
			throw UsageError{"unknown argument '" + std::string{args[i]} + "'"};
	}
	end_count_options(args, i, ended, o);
	return o;
}

std::string render(const Options& o, const AmuRun& r)
{
	// with -I every report is one line, the last (the whole run) too
	if (o.json)
		return format_amu_json(r, o.interval_ms > 0 ? 0 : 2);
	if (o.sep)
		return format_amu_csv(r, *o.sep);
	return format_amu_text(r);
}

int run(const Options& o)
{
	Device dev = Device::open(o.device);
	const Info info = dev.info();
	std::vector<unsigned> cpus = cpu_set(info, o.cpus);
	if (cpus.empty())
		throw UsageError{"no online CPU to read"};
	Amu amu = open_amu(std::move(dev), cpus);

	ReportOutput output{o.output};
	std::ostream& out = output.stream();

	std::optional<Child> child;
	std::optional<SignalWait> ctrl_c;
	if (!o.command.empty())
		child.emplace(o.command);	// SIGINT/SIGQUIT go to it, not to us (child.hpp)
	else
		ctrl_c.emplace(std::initializer_list<int>{SIGINT});	// Ctrl-C ends the reading

	AmuReading first, last, now;
	read_amu(amu, first);
	last = first;
	const auto t0 = std::chrono::steady_clock::now();
	const auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
	if (child) {
		try {
			child->start();
		} catch (const Error& e) {
			std::cerr << "amupmu amu: " << e.what() << "\n";
			return 127;
		}
	}
	const auto interval_report = [&] {
		read_amu(amu, now);
		const AmuRun r{.amu = amu_interval(amu.info(), last, now),
			       .seconds = o.interval_ms / 1000.0,
			       .interval_end = since()};
		out << render(o, r) << std::flush;
		std::swap(last, now);
	};
	// asleep in poll() until the command's exit or Ctrl-C, waking only for
	// the reports (at t0 + n intervals however long a report takes)
	auto next = t0;
	for (;;) {
		int timeout = -1;
		if (o.interval_ms > 0)
			timeout = ms_until(next += std::chrono::milliseconds(o.interval_ms));
		if (child ? child->wait(timeout) : ctrl_c->wait(timeout) != 0)
			break;
		interval_report();
	}
	read_amu(amu, now);
	AmuRun r{.amu = amu_interval(amu.info(), first, now), .command = o.command, .seconds = since()};
	if (child)
		r.exit_status = child->status();
	out << render(o, r) << std::flush;
	output.close();
	return child ? child->status() : exit_ok;
}

} // namespace

const Command amu_command{
	.name = "amu",
	.summary = "AMU per CPU over a command or every interval: MHz, IPC, memory stall, active %",
	.usage = usage,
	.run = parse_then_run<parse, run>,
};

} // namespace amupmu::cli
