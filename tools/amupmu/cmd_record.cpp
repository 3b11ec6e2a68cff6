// SPDX-License-Identifier: GPL-2.0
//
// amupmu record: overflow sampling while a command runs, to a file;
// amupmu report: the hottest PCs and symbols of a recording.
#include "child.hpp"
#include "cli.hpp"
#include "drain_pacer.hpp"
#include "file.hpp"
#include "signal_wait.hpp"

#include <amupmu/affinity.hpp>
#include <amupmu/device.hpp>
#include <amupmu/elf.hpp>
#include <amupmu/error.hpp>
#include <amupmu/events.hpp>
#include <amupmu/sample.hpp>
#include <amupmu/session.hpp>
#include <amupmu/report/record.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <sstream>

#include <sched.h>
#include <unistd.h>

namespace amupmu::cli {

using namespace amupmu::report;

namespace {

constexpr std::string_view record_usage = R"(Usage: amupmu record [-e EVENTS] [-c PERIOD | -F HZ] [-C CPUS | -a] [-o FILE]
                     [--pages N] [--device PATH] [--] COMMAND [ARGS...]
       amupmu record -a [-e EVENTS] [-c PERIOD | -F HZ] [-o FILE]

Run COMMAND and sample: every PERIOD occurrences of an event of EVENTS
on a CPU of CPUS the counter overflows and the driver records the
interrupted PC, PID, TID, mode (user, kernel or hv, as perf names them),
time and which event it was. The sampling is of whole CPUs, as perf
record -a's: every process that runs there is sampled. The samples, the
executable mappings and names of the command and of every process it
forks (traced for that: their /proc/PID/maps read at their start, execs
and exits, with the shared libraries) and the kernel functions hit (when
/proc/kallsyms shows them) go to FILE for 'amupmu report' and 'amupmu
script'. Exits with the command's status.

Options:
  -e EVENTS       sampled events, comma-separated (default cpu_cycles);
                  names and perf's modifiers (:u :k :h :G :H) as in stat
  -c PERIOD       events per sample (default 100000)
  -F HZ           about HZ samples per second of a busy CPU: each event's
                  period from its rate over 100 ms of amupmu busy on the
                  first CPU, fixed for the recording (perf -F re-adjusts
                  it at every tick; the driver's period is fixed)
  -C CPUS         CPU list (default: all online)
  -a              all online CPUs; without COMMAND until Ctrl-C (SIGINT,
                  SIGTERM or SIGHUP)
  -o FILE         output (default amupmu.rec)
  --pages N       data pages of the ring, a power of two (default 16)
  --device PATH   device node (default /dev/amupmu)
  -h, --help      show this help
)";

constexpr std::string_view report_usage = R"(Usage: amupmu report [-i FILE] [--top N] [--sort KEYS] [--percent-limit P]

Summarise a recording of 'amupmu record': samples per mode (and per event
of several) and the time span (CLOCK_MONOTONIC_RAW), then samples per
command and symbol and per PC, hottest first, with perf's marks [.] user,
[k] kernel, [H] hypervisor, symbolised from the ELF symbol tables of the
recorded mappings (and their DWARF where amupmu has libdw: source lines,
debug files under /usr/lib/debug) and, for the kernel, from the kallsyms
lines of the recording ("[kernel]" without).

Options:
  -i FILE              recording (default amupmu.rec)
  --top N              lines per table (default 10)
  --sort KEYS          the symbol table's columns, comma-separated, from
                       sym, dso, comm, pid, srcline (default comm,sym,dso,
                       as perf report's)
  --percent-limit P    leave out lines below P % of the samples
  -h, --help           show this help
)";

// the thread's name (/proc/PID/task/TID/comm, without its newline): perf's
// comm is the thread's, which prctl(PR_SET_NAME) may have changed; the
// process's main thread has tid == pid
std::optional<std::string> comm_of(pid_t pid, pid_t tid)
{
	std::ifstream in{"/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm"};
	std::string name;
	if (!std::getline(in, name))
		return std::nullopt;
	return name;
}

// the executable a process runs (/proc/PID/exe's target; empty when gone
// or unreadable): an exec changes it
std::string exe_of(pid_t pid)
{
	std::error_code ec;
	return std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec).string();
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
		if (s.pid != 0 && !rec.comms.contains(s.tid))
			if (auto name = comm_of(static_cast<pid_t>(s.pid), static_cast<pid_t>(s.tid)))
				rec.comms[s.tid] = std::move(*name);
	}
	if (!kernel_pcs.empty())
		rec.kernel_symbols = symbols_hit(read_kallsyms(), kernel_pcs);
}

// -F HZ: the period of each event from its rate over 100 ms of the tool
// busy on the set's first CPU (a counting session of the same events):
// events per second / HZ, at least the driver's smallest period
std::vector<std::uint64_t> periods_for(const std::string& device, std::span<const EventSpec> specs, unsigned cpu,
				       std::uint64_t hz)
{
	cpu_set_t old, one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (::sched_getaffinity(0, sizeof(old), &old) != 0)
		throw_error("sched_getaffinity", errno);
	if (::sched_setaffinity(0, sizeof(one), &one) != 0)
		throw_error("sched_setaffinity", errno);
	GroupConfig cfg{.events = group_events(specs), .cpus = {cpu}};
	Session counting = Session::create(Device::open(device), cfg);
	counting.reset();
	counting.enable();
	const auto t0 = std::chrono::steady_clock::now();
	volatile std::uint64_t spin = 0;
	while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(100))
		spin = spin + 1;
	counting.disable();
	const GroupReading reading = counting.read_all();
	::sched_setaffinity(0, sizeof(old), &old);
	const CpuReading& r = reading.cpus().front();
	const double seconds = static_cast<double>(std::max<std::uint64_t>(r.time_running, 1)) / 1e9;
	std::uint64_t min = 10000;	// the driver's default sample_period_min
	std::ifstream param{"/sys/module/amupmu/parameters/sample_period_min"};
	param >> min;
	std::vector<std::uint64_t> out;
	for (std::size_t e = 0; e < specs.size(); ++e) {
		const double rate = static_cast<double>(r.counters()[e].value) / seconds;
		const auto period = static_cast<std::uint64_t>(rate / static_cast<double>(hz));
		std::cerr << "amupmu record: -F " << hz << ": " << specs[e].name << " at "
			  << static_cast<std::uint64_t>(rate) << "/s on CPU " << cpu << " (100 ms busy): period "
			  << std::max(period, min) << (period < min ? " (the driver's smallest)" : "") << "\n";
		out.push_back(std::max(period, min));
	}
	return out;
}

struct RecordOptions {
	std::string event = "cpu_cycles";	///< -e
	std::string cpus;			///< -C
	std::string output = "amupmu.rec";
	std::string device{default_device_path};
	std::uint64_t period = 100000;		///< -c
	std::uint64_t hz = 0;			///< -F (0: -c)
	std::uint32_t pages = 16;
	bool all = false;			///< -a
	std::vector<std::string> command;	///< empty: -a until a signal
};

RecordOptions parse_record(Args args)
{
	RecordOptions o;
	bool have_period = false;
	std::size_t i = 0;
	for (; i < args.size(); ++i) {
		const std::string_view a = args[i];
		if (end_of_options(args, i))
			break;
		if (auto v = option_value(args, i, "-e")) {
			o.event = std::string{*v};
		} else if (auto v = option_value(args, i, "-c")) {
			o.period = number_arg<std::uint64_t>("-c", *v);
			have_period = true;
		} else if (auto v = option_value(args, i, "-F")) {
			o.hz = number_arg<std::uint64_t>("-F", *v);
			if (o.hz == 0)
				throw UsageError{"-F needs a frequency above 0"};
		} else if (a == "-a" || a == "--all-cpus") {
			o.all = true;
		} else if (auto v = option_value(args, i, "-C")) {
			o.cpus = std::string{*v};
		} else if (auto v = option_value(args, i, "-o")) {
			o.output = std::string{*v};
		} else if (auto v = option_value(args, i, "--pages")) {
			o.pages = number_arg<std::uint32_t>("--pages", *v);
		} else if (auto v = option_value(args, i, "--device")) {
			o.device = std::string{*v};
		} else {
			throw UsageError{"unknown argument '" + std::string{a} + "'"};
		}
	}
	if (o.period == 0)
		throw UsageError{"-c needs a period above 0"};
	if (o.hz && have_period)
		throw UsageError{"-c and -F exclude each other"};
	if (o.pages == 0 || (o.pages & (o.pages - 1)) != 0)
		throw UsageError{"--pages needs a power of two"};
	if (o.all && !o.cpus.empty())
		throw UsageError{"-a and -C exclude each other"};
	// -a without a command: until Ctrl-C (the sampling is of whole CPUs anyway)
	if (!o.all || i < args.size())
		o.command = command_of(args, i);
	return o;
}

// The session that samples the events of -e on the CPUs, with each
// event's period (-c, or -F's from its rate).
struct Sampling {
	std::vector<EventSpec> specs;
	std::vector<std::uint64_t> periods;
	std::vector<unsigned> cpus;
	Session session;
};

Sampling open_sampling(const RecordOptions& o)
{
	Device dev = Device::open(o.device);
	const Info info = dev.info();
	std::vector<unsigned> set = cpu_set(info, o.cpus);
	const std::uint64_t midr = info.cpus[set.front()].midr;
	std::vector<EventSpec> specs = parse_event_list(o.event, midr);
	if (specs.empty())
		throw UsageError{"-e needs an event"};
	require_events(specs, info, set);
	require_countable(specs, info, set);
	std::vector<std::uint64_t> periods(specs.size(), o.period);
	if (o.hz)
		periods = periods_for(o.device, specs, set.front(), o.hz);

	GroupConfig cfg{.cpus = set, .ring_pages = o.pages};
	for (std::size_t e = 0; e < specs.size(); ++e)
		cfg.events.push_back({.number = specs[e].number, .flags = specs[e].flags, .sample_period = periods[e]});
	try {
		Session session = Session::create(std::move(dev), cfg);
		return {std::move(specs), std::move(periods), std::move(set), std::move(session)};
	} catch (const InvalidArgument&) {
		std::cerr << "amupmu record: the driver refused sample_period " << periods.front() << " with " << o.pages
			  << " ring pages (a driver without overflow sampling refuses any)\n";
		throw;
	}
}

// A recording's header: the command, the events with their periods, the
// CPUs and the ring's clock.
Recording recording_of(const RecordOptions& o, const Sampling& s, const SampleReader& ring)
{
	Recording rec;
	rec.command = o.command;
	rec.event = s.specs.front().name;
	rec.number = s.specs.front().number;
	rec.period = s.periods.front();
	rec.modifiers = s.specs.front().modifiers;
	for (std::size_t e = 1; e < s.specs.size(); ++e)
		rec.more_events.push_back({.event = s.specs[e].name,
					   .number = s.specs[e].number,
					   .period = s.periods[e],
					   .modifiers = s.specs[e].modifiers});
	rec.frequency = o.hz;
	rec.cpus = format_cpu_list(s.cpus);
	rec.timer_freq = ring.timer_freq();
	rec.time = ring.time_conversion();
	return rec;
}

// The ring drained into a recording: the samples, and the names and
// mappings of the processes they came from while those (likely) still
// run. The processes whose mappings were read, when, and from which
// executable (the tool's at the start; the command's at its stops,
// through maps()): the others' at the first drain that sees them; again
// when their executable changed (the drain that first saw them came
// between a fork and its exec: the old mappings can cover the new PCs, a
// static busybox and a static program both at 0x400000), and when one of
// their user PCs falls outside them (a library dlopen()ed since), at most
// once a second each.
class RingDrain {
public:
	RingDrain(Recording& rec, SampleReader& ring) : rec_{rec}, ring_{ring}, pacer_{ring.data_size()}
	{
		const auto self = static_cast<std::uint32_t>(::getpid());
		mapped_.try_emplace(self, Mapped{Clock::now(), exe_of(::getpid()), true});
		// the tool's own samples (it runs on the same CPUs) get names too
		rec_.maps = read_proc_maps(self);
	}

	/// Drains the ring; returns the ms to leave it out of poll() (DrainPacer).
	int operator()()
	{
		const std::uint64_t bytes = ring_.available();
		ring_.consume([&](const Sample& s) {
			if (s.type == sample_pmu_overflow)
				rec_.samples.push_back(to_recorded(s));
		});
		name_new_samples();
		return pacer_.drained(bytes, Clock::now());
	}

	/// Child's maps callback for a process of the command: its mappings
	/// (after each exec, e.g. through taskset, they replace the old ones),
	/// at the start of each process it forks and at each exit stop, with
	/// the shared libraries ld.so and dlopen() mapped after the exec.
	void maps(pid_t pid, MapsEvent why)
	{
		mapped_.insert_or_assign(static_cast<std::uint32_t>(pid), Mapped{Clock::now(), exe_of(pid), true});
		update_maps(rec_.maps, pid, why);
		// a thread's name (prctl PR_SET_NAME) before it is gone;
		// /proc/TID/task/TID is the thread's
		if (auto name = comm_of(pid, pid))
			rec_.comms[static_cast<std::uint32_t>(pid)] = std::move(*name);
	}

private:
	using Clock = std::chrono::steady_clock;
	struct Mapped {
		Clock::time_point when;
		std::string exe;
		bool whole = false;	///< the read found the executable's mappings
	};

	// the names of the processes of the samples since the last drain,
	// the latest one (after an exec) kept, and their mappings
	void name_new_samples()
	{
		std::set<std::pair<std::uint32_t, std::uint32_t>> threads;	// (pid, tid)
		MapsCoverage coverage{rec_.maps};
		for (; named_ < rec_.samples.size(); ++named_) {
			const RecordedSample& s = rec_.samples[named_];
			if (s.pid == 0)
				continue;
			threads.emplace(s.pid, s.tid);
			coverage.see(s.pid, s.mode == SampleMode::user ? std::optional{s.pc} : std::nullopt);
		}
		for (const auto& [pid, tid] : threads)
			if (auto name = comm_of(static_cast<pid_t>(pid), static_cast<pid_t>(tid)))
				rec_.comms[tid] = std::move(*name);
		const Clock::time_point now = Clock::now();
		for (const auto& [pid, uncovered] : coverage.pids()) {
			std::string exe = exe_of(static_cast<pid_t>(pid));
			if (exe.empty())
				continue;	// gone: what was read stays
			const auto [it, first] = mapped_.try_emplace(pid, Mapped{now, exe});
			if (first) {
				update_maps(rec_.maps, static_cast<pid_t>(pid), MapsEvent::fork);
				it->second.whole = maps_executable(pid, it->second.exe);
			} else if (exe != it->second.exe ||
				   (uncovered && (!it->second.whole || now - it->second.when >= std::chrono::seconds{1}))) {
				it->second = {now, std::move(exe)};
				update_maps(rec_.maps, static_cast<pid_t>(pid), MapsEvent::exec);
				it->second.whole = maps_executable(pid, it->second.exe);
			}
		}
	}

	// whether pid's mappings read include its executable: a read inside
	// an exec, after /proc/PID/exe names the new program and before the
	// kernel maps its segments (load_elf_binary()), finds none of them,
	// and is repeated at the next uncovered PC without the once-a-second
	// limit
	bool maps_executable(std::uint32_t pid, const std::string& exe) const
	{
		return std::ranges::any_of(rec_.maps, [&](const Mapping& m) { return m.pid == pid && m.path == exe; });
	}

	Recording& rec_;
	SampleReader& ring_;
	DrainPacer pacer_;
	std::size_t named_ = 0;	///< samples whose process names were looked for
	std::map<std::uint32_t, Mapped> mapped_;
};

// -a without a command: drains the ring until SIGINT, SIGTERM or SIGHUP
// (stop), woken a few times a second too: the processes sampled are named
// while they run (nothing is followed here).
void sample_until_signal(const SignalWait& stop, Session& session, RingDrain& drain, const std::string& cpus)
{
	session.reset();
	session.enable();
	std::cerr << "amupmu record: sampling CPUs " << cpus << " until Ctrl-C\n";
	std::optional<std::chrono::steady_clock::time_point> hold;
	while (!stop.wait_fd(hold ? -1 : session.fd(), hold ? ms_until(*hold) : 250, "the sample ring")) {
		const int ms = drain();
		hold.reset();
		if (ms > 0)
			hold = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
	}
}

// The command run and followed (its processes' mappings read at their
// stops), the ring drained until it ends: its status; nullopt when it
// could not run.
std::optional<int> sample_command(const std::vector<std::string>& command, Session& session, RingDrain& drain)
{
	Child child{command, true};	// SIGINT/SIGQUIT go to the command (child.hpp)
	session.reset();
	session.enable();
	if (!child.start_traced("record", [&] { session.disable(); }))
		return std::nullopt;
	const MapsCallback maps = [&](pid_t pid, MapsEvent why) { drain.maps(pid, why); };
	maps(child.pid(), MapsEvent::exec);
	child.follow_execs();
	// asleep until the ring reaches its watermark or the child stops or ends
	child.wait_with(session.fd(), "the sample ring", std::ref(drain), maps);
	return child.status();
}

int record(const RecordOptions& o)
{
	std::optional<SignalWait> stop;	// from the start: nothing is interrupted, the recording is written
	if (o.command.empty())
		stop.emplace(std::initializer_list<int>{SIGINT, SIGTERM, SIGHUP});
	Sampling s = open_sampling(o);
	SampleReader ring = s.session.sample_reader();
	Recording rec = recording_of(o, s, ring);
	RingDrain drain{rec, ring};

	std::optional<int> status = exit_ok;
	if (stop) {
		sample_until_signal(*stop, s.session, drain, rec.cpus);
	} else {
		status = sample_command(o.command, s.session, drain);
		if (!status)
			return 127;	// as a shell does for a command it cannot run
	}
	s.session.disable();
	drain();
	add_names(rec);
	rec.lost = ring.lost();
	for (const CpuReading& c : s.session.read_all().cpus())
		rec.skid += c.skid;

	std::ostringstream text;
	write_recording(text, rec);
	write_file(o.output, text.str());
	std::cerr << format_record_summary(rec, o.output);
	return *status;
}

struct ReportArgs {
	std::string input = "amupmu.rec";	///< -i
	ReportOptions opts;
};

ReportArgs parse_report(Args args)
{
	ReportArgs o;
	ReportOptions& opts = o.opts;
	for (std::size_t i = 0; i < args.size(); ++i) {
		if (auto v = option_value(args, i, "-i"))
			o.input = std::string{*v};
		else if (auto v = option_value(args, i, "--top"))
			opts.top = number_arg<std::size_t>("--top", *v);
		else if (auto v = option_value(args, i, "--sort"))
			try {
				opts.sort = parse_sort_keys(*v);
			} catch (const InvalidArgument& e) {
				throw UsageError{e.operation()};
			}
		else if (auto v = option_value(args, i, "--percent-limit")) {
			opts.percent_limit = number_arg<double>("--percent-limit", *v);
			if (!(opts.percent_limit >= 0 && opts.percent_limit <= 100))
				throw UsageError{"--percent-limit needs a percentage from 0 to 100"};
		} else
			throw UsageError{"unknown argument '" + std::string{args[i]} + "'"};
	}
	return o;
}

int report(const ReportArgs& o)
{
	std::istringstream in{read_file(o.input)};
	std::cout << format_report(read_recording(in), o.opts);
	return exit_ok;
}

} // namespace

const Command record_command{
	.name = "record",
	.summary = "run a command and sample PCs on counter overflow, to a file",
	.usage = record_usage,
	.run = parse_then_run<parse_record, record>,
};

const Command report_command{
	.name = "report",
	.summary = "hottest PCs and symbols of a recording",
	.usage = report_usage,
	.run = parse_then_run<parse_report, report>,
};

} // namespace amupmu::cli
