// SPDX-License-Identifier: LGPL-2.1-or-later
//
// PinThread: keep the calling thread on one CPU for a scope, then give it
// back the CPUs it was allowed before. amupmu counts per CPU, never per
// thread: to measure "this code", run it on one CPU and count that CPU
// (count_region.cpp, hot_pcs.cpp).
#ifndef AMUPMU_EXAMPLES_PIN_THREAD_HPP
#define AMUPMU_EXAMPLES_PIN_THREAD_HPP

#include <amupmu/error.hpp>

#include <cerrno>
#include <sched.h>

class PinThread {
public:
	/// Pins the calling thread to cpu. Throws amupmu::Error naming
	/// sched_setaffinity (EINVAL: the CPU is offline or not allowed).
	explicit PinThread(unsigned cpu) : cpu_{cpu}
	{
		if (::sched_getaffinity(0, sizeof(old_), &old_) != 0)
			amupmu::throw_error("sched_getaffinity", errno);
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (::sched_setaffinity(0, sizeof(one), &one) != 0)
			amupmu::throw_error("sched_setaffinity", errno);
	}
	/// The CPUs allowed before, again.
	~PinThread() { ::sched_setaffinity(0, sizeof(old_), &old_); }
	PinThread(const PinThread&) = delete;
	PinThread& operator=(const PinThread&) = delete;

	[[nodiscard]] unsigned cpu() const noexcept { return cpu_; }

	/// The CPU the calling thread runs on now (sched_getcpu()).
	[[nodiscard]] static unsigned current_cpu()
	{
		const int cpu = ::sched_getcpu();
		if (cpu < 0)
			amupmu::throw_error("sched_getcpu", errno);
		return static_cast<unsigned>(cpu);
	}

private:
	unsigned cpu_;
	cpu_set_t old_{};
};

#endif
