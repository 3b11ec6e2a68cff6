// SPDX-License-Identifier: GPL-2.0
//
// amupmu calibrate: measure this board's erratum parameters with the
// seeds' microbenchmarks and store them for the library.
#include "cli.hpp"
#include "kernels.hpp"

#include <amupmu/cpu.hpp>
#include <amupmu/device.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/events.hpp>
#include <amupmu/session.hpp>

#include <amupmu/text/columns.hpp>
#include <amupmu/text/numtext.hpp>

#include <cerrno>
#include <charconv>
#include <iostream>

#include <sched.h>

namespace amupmu::cli {

namespace {

using text::fixed;
using text::general;
using text::pad_left;

constexpr std::string_view usage = R"(Usage: amupmu calibrate [-C CPU] [-o FILE] [--dry-run] [--device PATH]

Measure the parameters of the PMU errata that apply to this CPU and store
them in the calibration file that 'amupmu stat' and the library load:
  AMUPMU-X2-EXC_UNDEF  known numbers of undefined instructions (UDF #0,
                       EC=0x00) caught by a SIGILL handler; factor =
                       least-squares injected / counted EXC_UNDEF
  AMUPMU-X2-MCQ        STREAM triad and memset memory-pressure kernels
                       against a compute-only baseline; mem_bound_factor
                       = mean (MCQ - baseline MCQ) / MCQ
On a CPU none of them applies to it says so and stores nothing.

Options:
  -C CPU          the CPU to measure on (default: the first online)
  -o FILE         calibration file (default $AMUPMU_CALIBRATION or
                  /var/lib/amupmu/calibration)
  --dry-run       measure and print, store nothing
  --device PATH   device node (default /dev/amupmu)
  -h, --help      show this help
)";

/// Counts the events on cpu (pinned there) around f().
template <typename F>
std::vector<double> measure(const std::string& device, unsigned cpu, std::span<const GroupEvent> events, F&& f)
{
	const Session s = Session::open(GroupConfig{.events = {events.begin(), events.end()}, .cpus = {cpu}}, device);
	s.reset();
	s.enable();
	f();
	s.disable();
	CpuReading r;
	s.read(cpu, r);
	std::vector<double> out;
	for (const CounterValue& v : r.counters())
		out.push_back(static_cast<double>(v.value));
	return out;
}

CalibratedValue calibrate_undef(const std::string& device, unsigned cpu)
{
	const GroupEvent ev[] = {{.number = ev::exc_undef, .flags = evflag::raw}};
	const double base = measure(device, cpu, ev, [] { (void)workloads::undefined_instructions(0); })[0];
	std::vector<UndefRun> runs;
	for (const std::uint64_t n : {1000u, 2000u, 5000u, 10000u, 20000u}) {
		std::uint64_t caught = 0;
		const double counted =
			measure(device, cpu, ev, [&] { caught = workloads::undefined_instructions(n); })[0] - base;
		std::cout << "  undef " << pad_left(std::to_string(n), 6) << " injected, " << pad_left(std::to_string(caught), 6)
			  << " SIGILL, EXC_UNDEF " << fixed(counted, 0) << "\n";
		runs.push_back({static_cast<double>(caught), counted});
	}
	return fit_undercount(runs);
}

CalibratedValue calibrate_mcq(const std::string& device, unsigned cpu)
{
	const GroupEvent ev[] = {{.number = ev::imp_stall_backend_mcq, .flags = evflag::raw},
				 {.number = ev::cpu_cycles, .flags = 0}};
	const auto b = measure(device, cpu, ev, [] { workloads::insn_loop(20000000); });
	const double rate = b[1] > 0 ? b[0] / b[1] : 0;
	std::cout << "  baseline: MCQ " << fixed(b[0], 0) << " in " << fixed(b[1], 0) << " cycles\n";
	std::vector<McqRun> runs;
	for (const std::size_t mib : {16u, 32u, 64u}) {
		const auto t = measure(device, cpu, ev, [&] { (void)workloads::stream_triad(mib * 1024 * 1024 / 24, 3); });
		std::cout << "  triad " << pad_left(std::to_string(mib), 3) << " MiB: MCQ " << fixed(t[0], 0) << " in "
			  << fixed(t[1], 0) << " cycles\n";
		runs.push_back({t[0], rate * t[1]});
		const auto m = measure(device, cpu, ev, [&] { workloads::memset_pressure(mib * 1024 * 1024, 3); });
		std::cout << "  memset " << pad_left(std::to_string(mib), 3) << " MiB: MCQ " << fixed(m[0], 0) << " in "
			  << fixed(m[1], 0) << " cycles\n";
		runs.push_back({m[0], rate * m[1]});
	}
	return fit_overcount(runs);
}

struct Options {
	std::string device{default_device_path};
	std::string output = default_calibration_path();
	std::optional<unsigned> cpu;	///< -C (default: the first online)
	bool dry = false;
};

Options parse(Args args)
{
	Options o;
	for (std::size_t i = 0; i < args.size(); ++i) {
		if (auto v = option_value(args, i, "-C"))
			o.cpu = number_arg<unsigned>("-C", *v);
		else if (auto v = option_value(args, i, "-o"))
			o.output = std::string{*v};
		else if (args[i] == "--dry-run")
			o.dry = true;
		else if (auto v = option_value(args, i, "--device"))
			o.device = std::string{*v};
		else
			throw UsageError{"unknown argument '" + std::string{args[i]} + "'"};
	}
	return o;
}

int run(const Options& o)
{
	const std::string& device = o.device;
	std::optional<unsigned> cpu = o.cpu;
	const Info info = Device::open(device).info();
	if (!cpu)
		for (const CpuInfo& c : info.cpus)
			if (c.online()) {
				cpu = c.cpu;
				break;
			}
	if (!cpu || *cpu >= info.cpus.size() || !info.cpus[*cpu].online())
		throw UsageError{"no such online CPU"};
	const std::uint64_t midr = info.cpus[*cpu].midr;
	std::cout << "CPU " << *cpu << ": " << describe_midr(midr) << "\n";

	std::vector<const Erratum*> todo;
	for (const ErratumMatch& m : errata_for(midr, ErratumUnit::pmu)) {
		if (m.applicability == Applicability::yes)
			todo.push_back(m.erratum);
		else
			std::cout << m.erratum->id << ": " << revision_string(decode_midr(midr))
				  << " is after the affected " << affected_range(*m.erratum)
				  << ": not applied, verify on this silicon; not calibrated\n";
	}
	if (todo.empty()) {
		std::cout << "no erratum of the catalogue applies to this CPU (";
		bool first = true;
		for (const Erratum& e : errata())
			if (e.unit == ErratumUnit::pmu) {
				std::cout << (first ? "" : ", ") << e.id << ": " << e.core << " " << affected_range(e);
				first = false;
			}
		std::cout << "): nothing to calibrate, nothing stored\n";
		return exit_ok;
	}

	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(*cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		throw_error("sched_setaffinity", errno);

	Calibration cal{.midr = midr, .values = {}};
	for (const Erratum* e : todo) {
		std::cout << e->id << " (" << e->summary << "):\n";
		CalibratedValue v = e->model == ErratumModel::undercount_ec0 ? calibrate_undef(device, *cpu)
									   : calibrate_mcq(device, *cpu);
		std::cout << "  " << e->parameter << " = " << general(v.value, 4) << " (default "
			  << general(e->default_value, 4) << "), " << std::to_string(v.runs) << " runs, residual "
			  << general(v.residual, 3) << "\n";
		if (v.value < e->min_value || v.value > e->max_value) {
			std::cout << "  outside [" << general(e->min_value, 6) << ", " << general(e->max_value, 6)
				  << "]: not stored\n";
			continue;
		}
		cal.values.push_back(std::move(v));
	}
	if (o.dry || cal.values.empty()) {
		std::cout << "nothing stored" << (o.dry ? " (--dry-run)" : "") << "\n";
		return exit_ok;
	}
	save_calibration(cal, o.output);
	std::cout << "stored " << o.output << "\n";
	return exit_ok;
}

} // namespace

const Command calibrate_command{
	.name = "calibrate",
	.summary = "measure this board's erratum parameters and store them",
	.usage = usage,
	.run = parse_then_run<parse, run>,
};

} // namespace amupmu::cli
