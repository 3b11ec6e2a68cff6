// SPDX-License-Identifier: GPL-2.0
//
// amupmu spe record: SPE profiling while a command runs, every CPU's
// buffer drained into a recording (libamupmu SpeSession, SpeBuffer,
// spe_recording.hpp); amupmu spe dump: every packet of a recording.
#include "child.hpp"
#include "file.hpp"
#include "spe_cmds.hpp"

#include <amupmu/affinity.hpp>
#include <amupmu/bits.hpp>
#include <amupmu/device.hpp>
#include <amupmu/elf.hpp>
#include <amupmu/error.hpp>
#include <amupmu/spe.hpp>
#include <amupmu/spe_knobs.hpp>
#include <amupmu/spe_session.hpp>
#include <amupmu/report/spe_recording.hpp>

#include <iostream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace amupmu::cli {

using namespace amupmu::report;

namespace {

constexpr std::string_view record_usage = R"usage(Usage: amupmu spe record [-C CPUS] [--type LIST] [--min-latency N] [--events LIST]
                         [--exclude-events LIST] [--interval N] [--jitter] [--pa]
                         [--ts] [--kernel] [--cx] [--defaults] [--pages N]
                         [-o FILE] [--device PATH] -- COMMAND [ARGS...]

Run COMMAND with SPE profiling on CPUS: every INTERVAL operations a CPU
samples one, and a sample that passes the filters becomes a record in that
CPU's profiling buffer. The buffers are drained while COMMAND runs (woken
by poll() at half a buffer) and once more when it ends; the records, each
CPU's counters (AMUPMU_SPE_READ), its MIDR_EL1 and the command's executable
mappings go to FILE for 'amupmu spe report' and 'amupmu spe dump'.
SPE profiles the CPUs, not the command: records of everything that runs
on CPUS (user space only, unless --kernel) are in the file.
Exits with the command's status.

Options:
  -C CPUS                CPU list (default: all online)
  --type LIST            operation types: ld, st, br, fp, simd (fp and simd
                         need FEAT_SPE_EFT); a record of any of them passes;
                         +TYPE: it must be that type, -TYPE: it must not
                         (both FEAT_SPE_EFT), e.g. --type=ld,+fp,-simd
  --min-latency N        total latency of at least N cycles (1-65535)
  --events LIST          events a record must all have: retired,
                         l1d-access, l1d-refill, tlb-access, tlb-walk
                         (tlb-refill), not-taken, mispred, llc-access,
                         llc-miss (llc-refill), remote-access, ... as
                         'amupmu spe dump' names them
  --exclude-events LIST  events a record must not have (FEAT_SPE_FnE)
  --interval N           operations between samples, a multiple of 256 at
                         least the CPUs' minimum (default 4096)
  --jitter               randomise the low 8 bits of each interval
  --pa                   physical data addresses (CAP_PERFMON)
  --ts                   TIMESTAMP packets (the virtual count)
  --kernel               profile the kernel too (CAP_PERFMON)
  --cx                   CONTEXT packets: CONTEXTIDR, the pid (CAP_PERFMON)
  --defaults             the filter, interval and jitter of the arm_spe
                         knobs ('amupmu spe knobs') instead of the options
                         (the recording has their values, from arm_spe/config)
  --pages N              data pages of each CPU's buffer, a power of two
                         from 2 to 1024 (default 64)
  -o FILE                output (default amupmu-spe.data)
  --device PATH          device node (default /dev/amupmu)
  -h, --help             show this help

The summary on stderr names the SPE backend ("SPE backend: mock model (test
build)" on a test build, whose records are invented by the mock model) and
per CPU the records, bytes, bytes lost while its buffer was full,
truncated records, collisions and buffer faults.
Exit status: the command's; 127 when it cannot be run; 1 on an error
before it runs (nothing recorded), 2 when the device is missing.
)usage";

constexpr std::string_view dump_usage = R"(Usage: amupmu spe dump [-i FILE | FILE]

Print every packet of an 'amupmu spe record' recording (default
amupmu-spe.data), one per line: offset in the chunk, the packet's bytes in
hex, its meaning; a blank line after each record (END or TIMESTAMP); a run
of PAD bytes as one line. Each drain of a CPU's buffer is a chunk, headed
"# cpu N, chunk K, B bytes". A packet the architecture does not define is
shown as UNKNOWN with its offset and the dump goes on with the next byte;
a packet cut by the end of its chunk as TRUNCATED. Counts at the end; a
record cut by the end of its chunk counts, as in 'amupmu spe report'.

Options:
  -i FILE     recording (default amupmu-spe.data)
  -h, --help  show this help
)";

constexpr std::string_view default_output = "amupmu-spe.data";

struct RecordOptions {
	SpeConfig config;
	std::string cpus;
	std::string output{default_output};
	std::string device{default_device_path};
	std::vector<std::string> command;
};

RecordOptions parse_record(Args args)
{
	RecordOptions o;
	SpeConfig& c = o.config;
	bool filtered = false;
	std::size_t i = 0;
	try {
		for (; i < args.size(); ++i) {
			const std::string_view a = args[i];
			if (end_of_options(args, i))
				break;
			if (auto v = option_value(args, i, "-C")) {
				o.cpus = std::string{*v};
			} else if (auto v = option_value(args, i, "--type")) {
				parse_spe_types(*v, c);
				filtered = true;
			} else if (auto v = option_value(args, i, "--min-latency")) {
				c.min_latency = number_arg<std::uint32_t>("--min-latency", *v);
				if (c.min_latency == 0)
					throw UsageError{"--min-latency needs at least 1 cycle"};
				filtered = true;
			} else if (auto v = option_value(args, i, "--events")) {
				c.events = parse_spe_events(*v);
				filtered = true;
			} else if (auto v = option_value(args, i, "--exclude-events")) {
				c.excluded_events = parse_spe_events(*v);
				filtered = true;
			} else if (auto v = option_value(args, i, "--interval")) {
				c.interval = number_arg<std::uint32_t>("--interval", *v);
				filtered = true;
			} else if (auto v = option_value(args, i, "--pages")) {
				c.buf_pages = number_arg<std::uint32_t>("--pages", *v);
			} else if (auto v = option_value(args, i, "-o")) {
				o.output = std::string{*v};
			} else if (auto v = option_value(args, i, "--device")) {
				o.device = std::string{*v};
			} else if (a == "--jitter") {
				c.jitter = filtered = true;
			} else if (a == "--pa") {
				c.physical_address = true;
			} else if (a == "--ts") {
				c.timestamps = true;
			} else if (a == "--kernel") {
				c.kernel = true;
			} else if (a == "--cx") {
				c.context = true;
			} else if (a == "--defaults") {
				c.use_defaults = true;
			} else {
				throw UsageError{"unknown argument '" + std::string{a} + "'"};
			}
		}
		if (c.use_defaults && filtered)
			throw UsageError{"--defaults takes the filter, interval and jitter from the arm_spe knobs: "
					 "--type, --min-latency, --events, --exclude-events, --interval and --jitter "
					 "go without it"};
		// what can be checked without the driver, before anything runs
		(void)spe_driver_config(c);
	} catch (const InvalidArgument& e) {
		throw UsageError{e.what()};
	}
	if (o.output.empty())
		throw UsageError{"-o needs a file name"};
	o.command = command_of(args, i);
	return o;
}

std::string hint_for(const Error& e, const Info& info)
{
	if (dynamic_cast<const OwnedByKernel*>(&e))
		return "rmmod arm_spe_pmu, then 'amupmu spe claim' (perf's arm_spe_0 events go with it)";
	if (dynamic_cast<const Busy*>(&e))
		return "another SPE session profiles a CPU of the set now";
	if (dynamic_cast<const Unsupported*>(&e))
		return std::string{"SPE owner: "} + std::string{describe(info.spe_owner)} +
		       "; a filter may need FEAT_SPE_EFT or FnE ('amupmu info')";
	if (dynamic_cast<const PermissionDenied*>(&e))
		return "--kernel, --pa, --cx need CAP_PERFMON";
	return {};
}

// The session of config; what the driver refuses that the user can change
// a Failure with its hint.
SpeSession open_session(Device dev, const Info& info, const SpeConfig& config)
{
	try {
		return SpeSession::create(std::move(dev), config);
	} catch (const Error& e) {
		const std::string hint = hint_for(e, info);
		if (hint.empty())
			throw;
		throw Failure{e, hint};
	}
}

// Each CPU's counters at the end, with its MIDR_EL1 (what its data source
// codes mean).
std::vector<SpeRecordedCpu> cpu_stats_of(const std::vector<SpeCpuStatus>& status, const Info& info)
{
	std::vector<SpeRecordedCpu> out;
	for (const SpeCpuStatus& s : status) {
		const std::uint64_t midr = s.cpu < info.cpus.size() ? info.cpus[s.cpu].midr : 0;
		out.push_back({.cpu = s.cpu, .state = s.state, .bytes = s.bytes, .records = s.records,
			       .lost_bytes = s.lost_bytes, .truncations = s.truncations, .collisions = s.collisions,
			       .faults = s.faults, .last_pmbsr = s.last_pmbsr, .events = s.events, .midr = midr});
	}
	return out;
}

int record(const RecordOptions& o)
{
	const std::vector<std::string>& command = o.command;

	Device dev = Device::open(o.device);
	const Info info = dev.info();
	SpeConfig config = o.config;
	config.cpus = cpu_set(info, o.cpus);

	SpeRecording rec;
	rec.command = command;
	rec.cpus = format_cpu_list(config.cpus);
	rec.backend = std::string{backend_name(info)};
	// what the driver takes with --defaults: the knobs as they are now
	SpeRecordedConfig resolved = spe_driver_config(config);
	try {
		resolved = resolve_spe_defaults(std::string{spe_knobs_dir}, resolved);
	} catch (const Error& e) {
		std::cerr << "amupmu spe record: " << e.what()
			  << " -- the recording says 'the arm_spe defaults' without their values\n";
	}
	SpeSession session = open_session(std::move(dev), info, config);
	rec.config = resolved;
	std::vector<SpeBuffer> buffers;
	for (const unsigned cpu : session.cpus())
		buffers.push_back(session.map(cpu));
	rec.timer_freq = buffers.front().timer_freq();
	std::vector<std::uint64_t> drained(buffers.size());
	const auto drain = [&] {
		for (std::size_t i = 0; i < buffers.size(); ++i) {
			SpeChunk chunk{.cpu = session.cpus()[i]};
			drained[i] += buffers[i].consume([&](std::span<const std::byte> s) {
				chunk.data.insert(chunk.data.end(), s.begin(), s.end());
			});
			if (!chunk.data.empty())
				rec.chunks.push_back(std::move(chunk));
		}
	};

	Child child{command, true};	// SIGINT/SIGQUIT go to the command (child.hpp)
	session.enable();
	if (!child.start_traced("spe record", [&] { session.disable(); }))
		return 127;
	const auto child_pid = static_cast<std::uint32_t>(child.pid());
	rec.pid = child_pid;
	rec.maps = read_proc_maps(static_cast<std::uint32_t>(::getpid()));
	const auto read_child_maps = [&](pid_t pid, MapsEvent why) { update_maps(rec.maps, pid, why); };
	read_child_maps(child.pid(), MapsEvent::exec);
	child.follow_execs();
	// asleep until the buffers reach their watermark or the child stops or ends
	// (the driver wakes at the watermark already: no pacing)
	child.wait_with(
		session.fd(), "the SPE session",
		[&] {
			drain();
			return 0;
		},
		read_child_maps);
	session.disable();
	drain();

	rec.cpu_stats = cpu_stats_of(session.read(), info);
	std::ostringstream text;
	write_spe_recording(text, rec);
	write_file(o.output, text.str());
	std::cerr << format_spe_record_summary(rec, drained, o.output);
	return child.status();
}

// -i FILE or FILE: the recording
std::string parse_dump(Args args)
{
	std::string input{default_output};
	bool named = false;
	for (std::size_t i = 0; i < args.size(); ++i) {
		std::string_view file;
		if (auto v = option_value(args, i, "-i"))
			file = *v;
		else if (args[i].starts_with("-"))
			throw UsageError{"unknown argument '" + std::string{args[i]} + "'"};
		else
			file = args[i];
		if (named)
			throw UsageError{"one recording at a time ('" + std::string{file} + "')"};
		input = std::string{file};
		named = true;
	}
	return input;
}

int dump(const std::string& input)
{
	std::istringstream in{read_file(input)};
	std::cout << format_spe_dump(read_spe_recording(in), input);
	return exit_ok;
}

} // namespace

const Command spe_record_command{
	.name = "record",
	.summary = "run a command with SPE profiling, every CPU's records to a file",
	.usage = record_usage,
	.run = parse_then_run<parse_record, record>,
};

const Command spe_dump_command{
	.name = "dump",
	.summary = "every packet of an SPE recording, one per line",
	.usage = dump_usage,
	.run = parse_then_run<parse_dump, dump>,
};

} // namespace amupmu::cli
