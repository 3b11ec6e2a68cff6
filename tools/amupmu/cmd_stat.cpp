// SPDX-License-Identifier: GPL-2.0
//
// amupmu stat: count events while a command runs; perf-stat-like output.
#include "amu_common.hpp"
#include "child.hpp"
#include "cli.hpp"
#include "file.hpp"
#include "signal_wait.hpp"

#include <amupmu/cpu.hpp>
#include <amupmu/decode.hpp>
#include <amupmu/device.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/events.hpp>
#include <amupmu/session.hpp>
#include <amupmu/stat.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <csignal>
#include <iostream>
#include <optional>

namespace amupmu::cli {

namespace {

constexpr std::string_view usage = R"(Usage: amupmu stat [-a] [-e EVENTS] [-C CPUS] [-I MS] [--json | -x SEP] [-o FILE]
                   [--amu] [--no-compensate] [--ec0-count N] [--calibration FILE]
                   [--device PATH] [--] [COMMAND [ARGS...]]

Count PMU events on whole CPUs, as perf stat -a does: every online CPU, or
those of CPUS (the counters are per CPU, so everything running there is
counted), while COMMAND runs, or without a command until Ctrl-C (SIGINT
or SIGTERM). Then print the totals, derived metrics (IPC, L1D hit rate,
branch prediction accuracy, backend-stall share) and erratum
annotations, in perf stat's formats. Exits with the command's status
(128 + signal when it was killed); without a command amupmu ends by the
signal that stopped it, as perf stat does, after the report.

Options:
  -a, --all-cpus    count every online CPU: what amupmu always does without
                    -C (accepted as perf's; the header says 'system wide')
  -e EVENTS         comma-separated events, repeatable: perf names
                    (cpu_cycles, inst_retired, l1d_cache_refill, exc_undef,
                    imp_stall_backend_mcq on Cortex-X2, ...), perf's generic
                    names as Linux maps them on PMUv3 (cycles, instructions,
                    branches, branch-misses, cache-references, cache-misses,
                    stalled-cycles-frontend/-backend, bus-cycles,
                    L1-dcache-loads, ...), raw r<hex> or amupmu/event=0x11/;
                    perf's modifiers :u (user) :k (kernel) :h (hypervisor)
                    :G (guest) :H (host), combinable (:uk); perf's groups
                    {a,b}:u (amupmu counts every event together anyway: a
                    group changes nothing but its modifiers). Default:
                    cpu_cycles,inst_retired,br_retired,br_pred,br_mis_pred,
                    l1d_cache,l1d_cache_refill,stall_backend (those the
                    CPU implements)
  -C CPUS           CPU list, e.g. 0 or 0-3,6
  -I MS             also print the counts of every MS milliseconds
  --json            perf stat's JSON: one object per counter and line
  -x SEP            perf stat's separated values: value, unit, event, run
                    time (ns), running %, metric value, metric unit;
                    amupmu's notes in lines starting with '#')
  -o FILE           write the counts to FILE instead of stderr
  --amu             also read the Activity Monitors of the same CPUs over
                    the same run (and each -I interval): MHz, IPC, memory
                    stall and active share per CPU (see 'amupmu amu')
  --no-compensate   report raw values only (errata are still named)
  --ec0-count N     software count of EC=0x00 exceptions in the run, for
                    the EXC_UNDEF model (default: every counted one)
  --calibration F   calibration file (default $AMUPMU_CALIBRATION or
                    /var/lib/amupmu/calibration)
  --device PATH     device node (default /dev/amupmu)
  -h, --help        show this help
)";

constexpr std::string_view default_events =
	"cpu_cycles,inst_retired,br_retired,br_pred,br_mis_pred,l1d_cache,l1d_cache_refill,stall_backend";

struct Options {
	std::vector<std::string> events;
	std::string cpus;
	int interval_ms = 0;
	bool json = false;
	std::optional<std::string> sep;
	std::optional<std::string> output;
	bool compensate = true;
	bool amu = false;
	std::optional<double> ec0;
	std::optional<std::string> calibration;
	std::string device{default_device_path};
	std::vector<std::string> command;
};

Options parse(Args args)
{
	Options o;
	std::size_t i = 0;
	bool ended = false;
	for (; i < args.size(); ++i) {
		const std::string_view a = args[i];
		if (end_of_options(args, i)) {
			ended = true;
			break;
		}
		if (a == "-a" || a == "--all-cpus")
			continue;	// what amupmu always counts (perf stat -a)
		if (auto v = option_value(args, i, "-e"))
			o.events.emplace_back(*v);
		else if (auto v = option_value(args, i, "--event"))
			o.events.emplace_back(*v);
		else if (auto v = option_value(args, i, "-C"))
			o.cpus = std::string{*v};
		else if (auto v = option_value(args, i, "--cpu"))
			o.cpus = std::string{*v};
		else if (auto v = option_value(args, i, "-I")) {
			o.interval_ms = number_arg<int>("-I", *v);
			if (o.interval_ms < 10)
				throw UsageError{"-I needs at least 10 ms"};
		} else if (a == "--json")
			o.json = true;
		else if (auto v = option_value(args, i, "-x"))
			o.sep = std::string{*v};
		else if (auto v = option_value(args, i, "-o"))
			o.output = std::string{*v};
		else if (a == "--no-compensate")
			o.compensate = false;
		else if (a == "--amu")
			o.amu = true;
		else if (auto v = option_value(args, i, "--ec0-count"))
			o.ec0 = static_cast<double>(number_arg<unsigned long long>("--ec0-count", *v));
		else if (auto v = option_value(args, i, "--calibration"))
			o.calibration = std::string{*v};
		else if (auto v = option_value(args, i, "--device"))
			o.device = std::string{*v};
		else
			throw UsageError{"unknown argument '" + std::string{a} + "'"};
	}
	if (o.json && o.sep)
		throw UsageError{"--json and -x exclude each other"};
	if (o.sep && o.sep->empty())
		throw UsageError{"-x needs a separator"};
	// no command: until Ctrl-C
	if (ended && i < args.size())
		o.command = command_of(args, i);
	return o;
}

struct Plan {
	std::vector<EventSpec> events;
	std::vector<bool> added;
	std::vector<unsigned> cpus;
	bool system_wide = true;	///< no -C: every online CPU
	std::uint64_t midr = 0;
	std::vector<std::string> notes;
};

Plan plan(const Options& o, const Info& info)
{
	Plan p;
	p.cpus = cpu_set(info, o.cpus);
	p.system_wide = o.cpus.empty();
	if (p.cpus.empty())
		throw UsageError{"no online CPU to count on"};
	p.midr = info.cpus[p.cpus.front()].midr;
	for (const unsigned c : p.cpus)
		if (info.cpus[c].discovered() && info.cpus[c].midr != p.midr)
			p.notes.push_back("CPUs of different types (" + describe_midr(info.cpus[c].midr) +
					  "): names and errata follow CPU " + std::to_string(p.cpus.front()));
	if (o.events.empty()) {
		for (const EventSpec& e : parse_event_list(default_events, p.midr)) {
			const EventSpec one[] = {e};
			if (missing_events(one, info, p.cpus).empty())
				p.events.push_back(e);
			else
				p.notes.push_back(e.name + " left out of the default set: not implemented here");
		}
	} else {
		for (const std::string& list : o.events)
			for (EventSpec& e : parse_event_list(list, p.midr))
				p.events.push_back(std::move(e));
	}
	p.added.assign(p.events.size(), false);
	// events an erratum model needs, unless compensation is off
	if (o.compensate) {
		for (EventSpec& e : errata_companions(p.events, p.midr)) {
			p.events.push_back(std::move(e));
			p.added.push_back(true);
		}
	}
	if (p.events.size() > max_group_events)
		throw UsageError{std::to_string(p.events.size()) + " events: a group has at most " +
				 std::to_string(max_group_events)};
	// before anything is programmed
	require_events(p.events, info, p.cpus);
	require_countable(p.events, info, p.cpus);
	return p;
}

class Reader {
public:
	Reader(const Session& s, const Plan& p) : session_{s}, plan_{p}, last_(p.events.size(), 0.0) {}

	/// Totals over the CPUs; with delta, since the previous call.
	StatReport report(bool delta)
	{
		StatReport r;
		r.system_wide = plan_.system_wide;
		r.cpus = format_cpu_list(plan_.cpus);
		r.cpu_description = describe_midr(plan_.midr);
		r.notes = plan_.notes;
		for (std::size_t i = 0; i < plan_.events.size(); ++i)
			r.rows.push_back({.name = plan_.events[i].name,
					  .number = plan_.events[i].number,
					  .flags = plan_.events[i].flags,
					  .modifiers = plan_.events[i].modifiers,
					  .time_enabled = 0,
					  .time_running = UINT64_MAX,
					  .added = plan_.added[i]});
		// every CPU in one AMUPMU_PMU_READ_ALL
		session_.read_all(reading_);
		for (const CpuReading& c : reading_.cpus()) {
			for (std::size_t i = 0; i < r.rows.size() && i < c.nr_values; ++i) {
				r.rows[i].value += static_cast<double>(c.values[i].value);
				r.rows[i].time_enabled = std::max(r.rows[i].time_enabled, c.time_enabled);
				r.rows[i].time_running = std::min(r.rows[i].time_running, c.time_running);
			}
			if (c.state & read_state::offline)
				r.notes.push_back("CPU " + std::to_string(c.cpu) + " was offline: its totals stopped then");
		}
		for (std::size_t i = 0; i < r.rows.size(); ++i) {
			const double total = r.rows[i].value;
			if (delta)
				r.rows[i].value -= last_[i];
			last_[i] = total;
			if (r.rows[i].time_running == UINT64_MAX)
				r.rows[i].time_running = 0;
		}
		return r;
	}

private:
	const Session& session_;
	const Plan& plan_;
	std::vector<double> last_;
	GroupReading reading_;
};

std::string render(const Options& o, const StatReport& r)
{
	if (o.json)
		return format_stat_json(r);
	if (o.sep)
		return format_stat_csv(r, *o.sep);
	return format_stat_text(r);
}

int run(Args args)
{
	const Options o = parse(args);
	Device dev = Device::open(o.device);
	const Info info = dev.info();
	Plan p = plan(o, info);

	std::optional<Calibration> cal;
	const std::string cal_path = o.calibration.value_or(default_calibration_path());
	if (o.compensate && !errata_for(p.midr).empty())
		cal = load_calibration(cal_path);

	// the AMU on its own descriptor: refused before anything is programmed
	std::optional<Amu> amu;
	AmuReading amu_first, amu_last, amu_now;
	if (o.amu)
		amu.emplace(open_amu(Device::open(o.device), p.cpus));

	GroupConfig cfg{.events = group_events(p.events), .cpus = p.cpus};
	const Session session = Session::create(std::move(dev), cfg);

	std::optional<OutputFile> file;
	if (o.output)
		file.emplace(*o.output);
	std::ostream& out = file ? static_cast<std::ostream&>(*file) : std::cerr;

	CompensationOptions comp{.enabled = o.compensate, .exc_undef_ec0 = o.ec0,
				 .calibration = cal ? &*cal : nullptr};
	Reader reader{session, p};

	// the command (SIGINT/SIGQUIT go to it, not to us; child.hpp), or
	// without one whole CPUs until Ctrl-C or SIGTERM (perf stat -a)
	std::optional<Child> child;
	std::optional<SignalWait> stop;
	if (!o.command.empty())
		child.emplace(o.command);
	else
		stop.emplace();
	if (amu) {
		read_amu(*amu, amu_first);
		amu_last = amu_first;
	}
	session.reset();
	session.enable();
	const auto t0 = std::chrono::steady_clock::now();
	const auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
	if (child) {
		try {
			child->start();
		} catch (const Error& e) {
			session.disable();
			std::cerr << "amupmu stat: " << e.what() << "\n";
			return 127;
		}
	}
	// asleep in poll() until the command's exit or the signal, waking only
	// for the -I reports (at t0 + n intervals however long a report takes)
	auto next = t0;
	unsigned n = 0;
	for (;;) {
		int timeout = -1;
		if (o.interval_ms > 0)
			timeout = ms_until(next += std::chrono::milliseconds(o.interval_ms));
		if (child ? child->wait(timeout) : stop->wait(timeout) != 0)
			break;
		StatReport r = reader.report(true);
		r.interval_header = n++ % 25 == 0;	// perf's column header comment
		r.interval_end = since();
		r.seconds = o.interval_ms / 1000.0;
		apply_errata(r, p.midr, comp);
		derive_report_metrics(r);
		if (amu) {
			read_amu(*amu, amu_now);
			r.amu = amu_interval(amu->info(), amu_last, amu_now);
			r.amu->seconds = r.seconds;
			std::swap(amu_last, amu_now);
		}
		out << render(o, r) << std::flush;
	}
	session.disable();
	const double seconds = since();
	if (amu)
		read_amu(*amu, amu_now);

	StatReport r = reader.report(false);
	r.summary = o.interval_ms > 0;
	r.command = o.command;
	r.seconds = seconds;
	if (child)
		r.exit_status = child->status();
	apply_errata(r, p.midr, comp);
	derive_report_metrics(r);
	if (amu) {
		r.amu = amu_interval(amu->info(), amu_first, amu_now);
		r.amu->command = o.command;
		r.amu->seconds = seconds;
		r.amu->exit_status = r.exit_status;
	}
	out << render(o, r) << std::flush;
	if (file)
		file->close();	// a failed write(2) with its errno
	else if (!out)
		throw Error{"write to stderr", EIO};	// the stream keeps no errno
	if (child)
		return child->status();
	// the report is out: end by the signal, as perf stat does
	const int sig = SignalWait::caught();
	stop.reset();
	raise_default(sig);
	return 128 + sig;
}

} // namespace

const Command stat_command{
	.name = "stat",
	.summary = "run a command and count PMU events: totals, metrics, erratum compensation",
	.usage = usage,
	.run = run,
};

} // namespace amupmu::cli
