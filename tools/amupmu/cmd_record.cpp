// SPDX-License-Identifier: GPL-2.0
//
// amupmu record: overflow sampling while a command runs, to a file;
// amupmu report: the hottest PCs and symbols of a recording.
#include "child.hpp"
#include "cli.hpp"
#include "file.hpp"

#include <amupmu/cpu.hpp>
#include <amupmu/device.hpp>
#include <amupmu/elf.hpp>
#include <amupmu/events.hpp>
#include <amupmu/record.hpp>
#include <amupmu/sample.hpp>
#include <amupmu/session.hpp>

#include <charconv>
#include <fstream>
#include <optional>
#include <csignal>
#include <sstream>
#include <iostream>

#include <unistd.h>

namespace amupmu::cli {

namespace {

constexpr std::string_view record_usage = R"(Usage: amupmu record [-e EVENT] [-c PERIOD] [-C CPUS] [-o FILE] [--pages N]
                     [--device PATH] [--] COMMAND [ARGS...]

Run COMMAND and sample: every PERIOD occurrences of EVENT on a CPU of
CPUS the counter overflows and the driver records the interrupted PC,
PID, TID, mode (user, kernel or hv, as perf names them) and time. The
samples, the executable mappings and names of the command and of every
process it forks (traced for that: their /proc/PID/maps read at their
start, execs and exits, with the shared libraries) and the kernel
functions hit (when /proc/kallsyms shows them) go to FILE for 'amupmu
report' and 'amupmu script'.
Exits with the command's status.

Options:
  -e EVENT        sampled event (default cpu_cycles); names and perf's
                  modifiers (:u :k :h :G :H) as in stat
  -c PERIOD       events per sample (default 100000)
  -C CPUS         CPU list (default: all online)
  -o FILE         output (default amupmu.rec)
  --pages N       data pages of the ring, a power of two (default 16)
  --device PATH   device node (default /dev/amupmu)
  -h, --help      show this help
)";

constexpr std::string_view report_usage = R"(Usage: amupmu report [-i FILE] [--top N]

Summarise a recording of 'amupmu record': samples per mode and the time
span (CLOCK_MONOTONIC_RAW), then samples per symbol and per PC, hottest
first, with perf's marks [.] user, [k] kernel, [H] hypervisor, symbolised
from the ELF symbol tables of the recorded mappings (kernel samples are
"[kernel]").

Options:
  -i FILE     recording (default amupmu.rec)
  --top N     lines per table (default 10)
  -h, --help  show this help
)";

// /proc/pid/comm, without its newline
std::optional<std::string> comm_of(pid_t pid)
{
	std::ifstream in{"/proc/" + std::to_string(pid) + "/comm"};
	std::string name;
	if (!std::getline(in, name))
		return std::nullopt;
	return name;
}

// The names of processes sampled but not followed (the tool itself, other
// processes on the CPUs) while they still run, and of the kernel's
// functions the samples hit when /proc/kallsyms shows their addresses.
void add_names(Recording& rec)
{
	std::vector<std::uint64_t> kernel_pcs;
	for (const RecordedSample& s : rec.samples) {
		if (s.mode == SampleMode::kernel)
			kernel_pcs.push_back(s.pc);
		if (s.pid != 0 && !rec.comms.contains(s.pid))
			if (auto name = comm_of(static_cast<pid_t>(s.pid)))
				rec.comms[s.pid] = std::move(*name);
	}
	if (!kernel_pcs.empty())
		rec.kernel_symbols = symbols_hit(read_kallsyms(), kernel_pcs);
}

int record(Args args)
{
	std::string event = "cpu_cycles", cpus, output = "amupmu.rec";
	std::string device{default_device_path};
	std::uint64_t period = 100000;
	std::uint32_t pages = 16;
	std::size_t i = 0;
	for (; i < args.size(); ++i) {
		const std::string_view a = args[i];
		if (end_of_options(args, i))
			break;
		if (auto v = option_value(args, i, "-e"))
			event = std::string{*v};
		else if (auto v = option_value(args, i, "-c"))
			period = number_arg<std::uint64_t>("-c", *v);
		else if (auto v = option_value(args, i, "-C"))
			cpus = std::string{*v};
		else if (auto v = option_value(args, i, "-o"))
			output = std::string{*v};
		else if (auto v = option_value(args, i, "--pages"))
			pages = number_arg<std::uint32_t>("--pages", *v);
		else if (auto v = option_value(args, i, "--device"))
			device = std::string{*v};
		else
			throw UsageError{"unknown argument '" + std::string{a} + "'"};
	}
	if (period == 0)
		throw UsageError{"-c needs a period above 0"};
	if (pages == 0 || (pages & (pages - 1)) != 0)
		throw UsageError{"--pages needs a power of two"};
	const std::vector<std::string> command = command_of(args, i);

	Device dev = Device::open(device);
	const Info info = dev.info();
	const std::vector<unsigned> set = cpu_set(info, cpus);
	const std::uint64_t midr = info.cpus[set.front()].midr;
	const EventSpec spec = parse_event(event, midr);
	const EventSpec one[] = {spec};
	require_events(one, info, set);
	require_countable(one, info, set);

	GroupConfig cfg{.events = {{.number = spec.number, .flags = spec.flags, .sample_period = period}},
			.cpus = set,
			.ring_pages = pages};
	Session session = [&] {
		try {
			return Session::create(std::move(dev), cfg);
		} catch (const InvalidArgument&) {
			std::cerr << "amupmu record: the driver refused sample_period " << period << " with "
				  << pages << " ring pages (a driver without overflow sampling refuses any)\n";
			throw;
		}
	}();
	SampleReader ring = session.sample_reader();

	Recording rec;
	rec.command = command;
	rec.event = spec.name;
	rec.number = spec.number;
	rec.period = period;
	rec.modifiers = spec.modifiers;
	rec.cpus = format_cpu_list(set);
	rec.timer_freq = ring.timer_freq();
	rec.time = ring.time_conversion();
	const auto drain = [&] {
		ring.consume([&](const Sample& s) {
			if (s.type == sample_pmu_overflow)
				rec.samples.push_back(to_recorded(s));
		});
	};

	Child child{command, true};	// SIGINT/SIGQUIT go to the command (child.hpp)
	session.reset();
	session.enable();
	try {
		child.start();
		child.wait_exec();
	} catch (const Error& e) {
		session.disable();
		std::cerr << "amupmu record: " << e.what() << "\n";
		return 127;
	}
	// the tool's own samples (it runs on the same CPUs) get names too
	rec.maps = read_proc_maps(static_cast<std::uint32_t>(::getpid()));
	// the maps of every process of the command: after each exec (e.g.
	// through taskset: they replace the old ones), at the start of each
	// process it forks and at each exit stop, with the shared libraries
	// ld.so and dlopen() mapped after the exec
	const auto read_child_maps = [&](pid_t pid, MapsEvent why) {
		update_maps(rec.maps, pid, why);
		if (auto name = comm_of(pid))
			rec.comms[static_cast<std::uint32_t>(pid)] = std::move(*name);
	};
	read_child_maps(child.pid(), MapsEvent::exec);
	child.follow_execs();
	// asleep until the ring reaches its watermark or the child stops or ends
	child.wait_with(session.fd(), "the sample ring", drain, read_child_maps);
	session.disable();
	drain();
	add_names(rec);
	rec.lost = ring.lost();
	for (const CpuReading& c : session.read_all().cpus())
		rec.skid += c.skid;

	std::ostringstream text;
	write_recording(text, rec);
	write_file(output, text.str());
	std::uint64_t by_mode[3] = {};
	for (const RecordedSample& s : rec.samples)
		if (static_cast<unsigned>(s.mode) < 3)
			++by_mode[static_cast<unsigned>(s.mode)];
	std::cerr << "amupmu record: " << rec.samples.size() << " samples of " << rec.event << " every " << period
		  << " (user " << by_mode[0] << ", kernel " << by_mode[1] << ", hv " << by_mode[2] << "; " << rec.lost
		  << " lost, " << rec.skid << " dropped as kernel skid), " << rec.maps.size() << " mappings -> "
		  << output << "\n";
	return child.status();
}

int report(Args args)
{
	std::string input = "amupmu.rec";
	ReportOptions opts;
	for (std::size_t i = 0; i < args.size(); ++i) {
		if (auto v = option_value(args, i, "-i"))
			input = std::string{*v};
		else if (auto v = option_value(args, i, "--top"))
			opts.top = number_arg<std::size_t>("--top", *v);
		else
			throw UsageError{"unknown argument '" + std::string{args[i]} + "'"};
	}
	std::istringstream in{read_file(input)};
	std::cout << format_report(read_recording(in), opts);
	return exit_ok;
}

} // namespace

const Command record_command{
	.name = "record",
	.summary = "run a command and sample PCs on counter overflow, to a file",
	.usage = record_usage,
	.run = record,
};

const Command report_command{
	.name = "report",
	.summary = "hottest PCs and symbols of a recording",
	.usage = report_usage,
	.run = report,
};

} // namespace amupmu::cli
