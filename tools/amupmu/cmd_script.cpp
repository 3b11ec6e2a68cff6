// SPDX-License-Identifier: GPL-2.0
//
// amupmu script: a recording of 'amupmu record' in perf script's text.
#include "cli.hpp"
#include "file.hpp"
#include "script.hpp"

#include <amupmu/elf.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace amupmu::cli {

using namespace amupmu::report;

namespace {

constexpr std::string_view script_usage = R"usage(Usage: amupmu script [-i FILE]

Print the samples of a recording of 'amupmu record' in time order, as
'perf script' prints those of a recording with call chains: a line
"COMM PID/TID [CPU] SECONDS: PERIOD EVENT:", the sampled PC as
"ADDRESS SYMBOL+OFFSET (FILE)" and a blank line, for the tools that read
perf script's text (FlameGraph's stackcollapse-perf.pl, speedscope,
Firefox Profiler). The driver records no call chains: each stack is the
PC alone. Times are CLOCK_MONOTONIC_RAW seconds.

Options:
  -i FILE     recording (default amupmu.rec)
  -h, --help  show this help
)usage";

// printf of one line (the widths are perf script's)
template <typename... T>
void add(std::string& out, const char* format, T... values)
{
	char buf[128];
	const int n = std::snprintf(buf, sizeof(buf), format, values...);
	out.append(buf, static_cast<std::size_t>(std::clamp(n, 0, static_cast<int>(sizeof(buf)) - 1)));
}

std::uint64_t ns_of(const Recording& r, std::uint64_t time)
{
	if (r.time.valid())
		return sample_time_ns(time, r.time);
	if (r.timer_freq)
		return static_cast<std::uint64_t>(static_cast<long double>(time) * 1e9L /
						  static_cast<long double>(r.timer_freq));
	return time;
}

int script(Args args)
{
	std::string input = "amupmu.rec";
	for (std::size_t i = 0; i < args.size(); ++i) {
		if (auto v = option_value(args, i, "-i"))
			input = std::string{*v};
		else
			throw UsageError{"unknown argument '" + std::string{args[i]} + "'"};
	}
	std::istringstream in{read_file(input)};
	std::cout << format_script(read_recording(in));
	return exit_ok;
}

} // namespace

std::string format_script(const Recording& r)
{
	Symbolizer sym;
	for (const Mapping& m : r.maps)
		sym.add(m);
	sym.set_kernel_symbols(r.kernel_symbols);
	const std::vector<RecordedEvent> events = r.events();

	std::vector<const RecordedSample*> order;
	order.reserve(r.samples.size());
	for (const RecordedSample& s : r.samples)
		order.push_back(&s);
	std::ranges::stable_sort(order, {}, &RecordedSample::time);

	std::string out;
	for (const RecordedSample* s : order) {
		const std::uint64_t ns = ns_of(r, s->time);
		const RecordedEvent& e = events[std::min<std::size_t>(s->event, events.size() - 1)];
		out += r.comm(s->pid, s->tid);
		add(out, " %7u/%-7u [%03u] %5" PRIu64 ".%06" PRIu64 ": %10" PRIu64 " ", s->pid, s->tid, s->cpu,
		    ns / 1000000000, ns % 1000000000 / 1000, e.period);
		out += e.event + ": \n";
		const Resolved where = sym.resolve(s->pid, s->pc, s->mode);
		add(out, "\t%16" PRIx64 " ", s->pc);
		out += where.symbol.empty() ? "[unknown]" : where.symbol;
		out += " (" + (where.dso == "[kernel]" ? std::string{"[kernel.kallsyms]"} : where.dso) + ")\n\n";
	}
	return out;
}

const Command script_command{
	.name = "script",
	.summary = "a recording as perf script's text (FlameGraph, speedscope)",
	.usage = script_usage,
	.run = script,
};

} // namespace amupmu::cli
