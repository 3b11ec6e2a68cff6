// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Sets of CPUs: Linux CPU lists ("0-3,6"), the calling thread's affinity,
// and ThreadPin, which pins the thread to one CPU for a scope.
// Counters::measure_this_thread() counts "this code" with it.
#ifndef AMUPMU_AFFINITY_HPP
#define AMUPMU_AFFINITY_HPP

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

/// Parses a Linux CPU list ("0-3,6", "0", "": none; a trailing newline
/// allowed) into ascending, distinct CPU numbers; nullopt when malformed.
[[nodiscard]] std::optional<std::vector<unsigned>> parse_cpu_list(std::string_view list);

/// Writes ascending CPU numbers as a Linux CPU list: {0,1,2,3,6} is "0-3,6".
[[nodiscard]] std::string format_cpu_list(std::span<const unsigned> cpus);

/// The CPU the calling thread runs on now (sched_getcpu(); it may run on
/// another the moment after, unless pinned). Throws Error with its errno.
[[nodiscard]] unsigned current_cpu();

/// The CPUs the calling thread may run on (sched_getaffinity()),
/// ascending. Throws Error with its errno.
[[nodiscard]] std::vector<unsigned> thread_affinity();

/// Sets the CPUs the calling thread may run on (sched_setaffinity()); the
/// thread is on one of them when it returns. Throws InvalidArgument
/// (EINVAL) for an empty set or one that holds no CPU the thread may use
/// (its cpuset), Error with the errno otherwise.
void set_thread_affinity(const std::vector<unsigned>& cpus);

/// Pins the calling thread to one CPU; the destructor restores the
/// affinity the thread had (errors there are ignored: a destructor does
/// not throw). It belongs to the thread that made it: not copyable, not
/// movable, to be destroyed on that thread.
class [[nodiscard]] ThreadPin {
public:
	/// Pins to the CPU the thread runs on now (current_cpu()). Throws as
	/// thread_affinity(), current_cpu() and set_thread_affinity().
	ThreadPin();
	/// Pins to cpu. Throws as thread_affinity() and set_thread_affinity()
	/// (InvalidArgument: a CPU the thread may not use); nothing changed then.
	explicit ThreadPin(unsigned cpu);
	ThreadPin(const ThreadPin&) = delete;
	ThreadPin& operator=(const ThreadPin&) = delete;
	~ThreadPin();

	/// The CPU the thread is pinned to.
	[[nodiscard]] unsigned cpu() const noexcept { return cpu_; }
	/// The affinity the destructor restores.
	[[nodiscard]] const std::vector<unsigned>& previous() const noexcept { return previous_; }

private:
	std::vector<unsigned> previous_;
	unsigned cpu_ = 0;
};

} // namespace amupmu

#endif
