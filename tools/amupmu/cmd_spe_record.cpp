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

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <sstream>
#include <iostream>
#include <optional>
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
a packet cut by the end of its chunk as TRUNCATED. Counts at the end.

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
	std::size_t command = 0;	///< index of the command's first argument
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
	o.command = i;
	return o;
}

// The recording's backend ("mock": INFO's AMUPMU_FEAT_MOCK) for people.
std::string backend_label(std::string_view backend)
{
	return backend == "mock" ? "mock model (test build)" : std::string{backend};
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

std::string padded(std::string s, std::size_t width)
{
	if (s.size() < width)
		s.insert(0, width - s.size(), ' ');
	return s;
}

void print_summary(const SpeRecording& rec, const std::vector<std::uint64_t>& drained, const std::string& output)
{
	std::string s = "amupmu spe record: SPE backend: " + backend_label(rec.backend) + "\n";
	s += "   cpu      records        bytes   lost-bytes  truncations   collisions       faults  state\n";
	std::uint64_t records = 0, bytes = 0, lost = 0;
	for (std::size_t i = 0; i < rec.cpu_stats.size(); ++i) {
		const SpeRecordedCpu& c = rec.cpu_stats[i];
		s += padded(std::to_string(c.cpu), 6) + padded(std::to_string(c.records), 13) +
		     padded(std::to_string(c.bytes), 13) + padded(std::to_string(c.lost_bytes), 13) +
		     padded(std::to_string(c.truncations), 13) + padded(std::to_string(c.collisions), 13) +
		     padded(std::to_string(c.faults), 13) + "  " + format_spe_state(c.state);
		if (c.faults != 0)
			s += " (last PMBSR_EL1 " + hex(c.last_pmbsr) + ")";
		if (drained[i] != c.bytes)
			s += " (" + std::to_string(drained[i]) + " bytes read)";
		s += "\n";
		records += c.records;
		bytes += c.bytes;
		lost += c.lost_bytes;
	}
	s += "amupmu spe record: " + std::to_string(records) + " records, " + std::to_string(bytes) + " bytes in " +
	     std::to_string(rec.chunks.size()) + " chunks";
	if (lost != 0)
		s += ", " + std::to_string(lost) + " bytes lost (buffers full: --pages, --interval)";
	s += ", " + std::to_string(rec.maps.size()) + " mappings -> " + output + "\n";
	std::cerr << s;
}

int record(Args args)
{
	const RecordOptions o = parse_record(args);
	const std::vector<std::string> command = command_of(args, o.command);

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
	std::optional<SpeSession> made;
	try {
		made.emplace(SpeSession::create(std::move(dev), config));
	} catch (const Error& e) {
		const std::string hint = hint_for(e, info);
		if (hint.empty())
			throw;
		std::cerr << "amupmu: " << e.what() << " -- " << hint << "\n";
		return exit_error;
	}
	SpeSession& session = *made;
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

	const std::vector<SpeCpuStatus> status = session.read();
	for (const SpeCpuStatus& s : status) {
		const std::uint64_t midr = s.cpu < info.cpus.size() ? info.cpus[s.cpu].midr : 0;
		rec.cpu_stats.push_back({.cpu = s.cpu, .state = s.state, .bytes = s.bytes, .records = s.records,
					 .lost_bytes = s.lost_bytes, .truncations = s.truncations,
					 .collisions = s.collisions, .faults = s.faults, .last_pmbsr = s.last_pmbsr,
					 .events = s.events, .midr = midr});
	}
	std::ostringstream text;
	write_spe_recording(text, rec);
	write_file(o.output, text.str());
	print_summary(rec, drained, o.output);
	return child.status();
}

// ---------------------------------------------------------------- dump

struct DumpCounts {
	std::uint64_t bytes = 0, records = 0, packets = 0, padding = 0, unknown = 0, truncated = 0;
};

void dump_chunk(std::string& out, std::span<const std::byte> buf, DumpCounts& n)
{
	std::size_t off = 0;
	while (off < buf.size()) {
		const spe::Packet p = spe::decode_packet(buf, off);
		if (p.kind == spe::PacketKind::pad) {
			std::size_t end = off;
			while (end < buf.size() && buf[end] == std::byte{0})
				++end;
			n.padding += end - off;
			if (end - off > 1) {
				// as format_packet() lays a packet out: 10 bytes' room
				std::string bytes = " 00 x" + std::to_string(end - off);
				bytes.resize(std::max<std::size_t>(bytes.size(), 30), ' ');
				out += hex(off, 8).substr(2) + ": " + bytes + "  PAD\n";
				off = end;
				continue;
			}
		} else if (p.kind == spe::PacketKind::alignment) {
			n.padding += p.size();
		} else {
			++n.packets;
		}
		out += spe::format_packet(buf, p) + "\n";
		if (p.kind == spe::PacketKind::unknown)
			++n.unknown;
		if (p.kind == spe::PacketKind::truncated) {
			++n.truncated;
			break;
		}
		if (p.kind == spe::PacketKind::end || p.kind == spe::PacketKind::timestamp) {
			++n.records;
			out += "\n";
		}
		off += p.size() != 0 ? p.size() : 1;	// every packet moves on
	}
}

int dump(Args args)
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
	std::istringstream in{read_file(input)};
	const SpeRecording rec = read_spe_recording(in);

	std::string out = "# " + input + ": SPE backend: " + backend_label(rec.backend) + ", CPUs " + rec.cpus + ", timer " +
			  std::to_string(rec.timer_freq) + " Hz, pid " + std::to_string(rec.pid) + "\n";
	out += "# config: flags " + hex(rec.config.flags, 1) + " enables " + hex(rec.config.enables, 2) + " pct " +
	       std::to_string(rec.config.pct) + " pmsfcr " + hex(rec.config.pmsfcr) + " pmsevfr " +
	       hex(rec.config.pmsevfr) + " pmsnevfr " + hex(rec.config.pmsnevfr) + " min_latency " +
	       std::to_string(rec.config.min_latency) + " interval " + std::to_string(rec.config.interval) +
	       " buf_pages " + std::to_string(rec.config.buf_pages) + "\n";
	for (const SpeRecordedCpu& c : rec.cpu_stats)
		out += "# cpu " + std::to_string(c.cpu) + ": " + std::to_string(c.records) + " records, " +
		       std::to_string(c.bytes) + " bytes, " + std::to_string(c.lost_bytes) + " lost bytes, " +
		       std::to_string(c.truncations) + " truncations, " + std::to_string(c.collisions) +
		       " collisions, " + std::to_string(c.faults) + " faults, state " + format_spe_state(c.state) +
		       ", MIDR_EL1 " + hex(c.midr, 8) + "\n";
	std::cout << out << "\n";
	DumpCounts n;
	for (std::size_t k = 0; k < rec.chunks.size(); ++k) {
		const SpeChunk& c = rec.chunks[k];
		out = "# cpu " + std::to_string(c.cpu) + ", chunk " + std::to_string(k) + ", " +
		      std::to_string(c.data.size()) + " bytes\n";
		dump_chunk(out, c.data, n);
		n.bytes += c.data.size();
		std::cout << out;
	}
	std::cout << "# " << std::to_string(rec.chunks.size()) << " chunks, " << std::to_string(n.bytes)
		  << " bytes: " << std::to_string(n.records) << " records, " << std::to_string(n.packets)
		  << " packets, " << std::to_string(n.padding) << " padding bytes, " << std::to_string(n.unknown)
		  << " unknown, " << std::to_string(n.truncated) << " truncated\n";
	return exit_ok;
}

} // namespace

const SpeSubcommand spe_record_command{
	.name = "record",
	.summary = "run a command with SPE profiling, every CPU's records to a file",
	.usage = record_usage,
	.run = record,
};

const SpeSubcommand spe_dump_command{
	.name = "dump",
	.summary = "every packet of an SPE recording, one per line",
	.usage = dump_usage,
	.run = dump,
};

} // namespace amupmu::cli
