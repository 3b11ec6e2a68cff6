// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A recording as perf script's text. See script.hpp.
#include <amupmu/elf.hpp>
#include <amupmu/report/script.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace amupmu::report {

namespace {

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

} // namespace amupmu::report
