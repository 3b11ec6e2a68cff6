// SPDX-License-Identifier: MIT-0
//
// count_region: count the instructions and cycles of a region of code with
// amupmu::Counters, and its IPC.
//
// amupmu counts per CPU, never per thread: a counter counts everything that
// runs on its CPU (other tasks, interrupts, the kernel) while it is enabled.
// So one CPU is counted and Counters::measure_this_thread() pins the thread
// to it for the measurement (amupmu::ThreadPin; the thread's affinity
// again afterwards); what else runs there shows up in the counts.
//
// The region is a loop of two instructions (subtract, branch) on arm64, so
// its truth is known: 2 x ITERATIONS instructions, plus the timer ticks and
// whatever else the CPU ran meanwhile.
//
//   amupmu-example-count_region [ITERATIONS [CPU]]
//     default: 10000000 iterations, on the CPU the program starts on
#include <amupmu/affinity.hpp>
#include <amupmu/counters.hpp>
#include <amupmu/error.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>

namespace {

// The code measured: ITERATIONS times subtract and branch.
void region(std::uint64_t iterations)
{
#if defined(__aarch64__)
	asm volatile("1:	subs	%0, %0, #1\n"
		     "	b.ne	1b\n"
		     : "+r"(iterations)
		     :
		     : "cc");
#else
	volatile std::uint64_t i = iterations;	// elsewhere: a loop the compiler keeps
	while (i != 0)
		i = i - 1;
#endif
}

} // namespace

int main(int argc, char** argv)
try {
	const std::uint64_t iterations = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 10000000;
	if (iterations == 0) {
		std::fprintf(stderr, "usage: %s [ITERATIONS [CPU]] (ITERATIONS above 0)\n", argv[0]);
		return 2;
	}
	amupmu::Counters counters;	// opens /dev/amupmu
	const unsigned cpu = argc > 2 ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 0)) : amupmu::current_cpu();
	counters.set_cpus({cpu}).add({"instructions", "cycles"});
	// the driver's refusals (Unsupported: an event the CPU cannot count,
	// Busy: too few free counters) now, before the region runs
	counters.configure();
	// the thread pinned to the group's CPU, start(), the region, stop(),
	// the thread's affinity back: the counts are the result
	const amupmu::CounterResult& r = counters.measure_this_thread([&] { region(iterations); });

	const std::uint64_t instructions = r["instructions"];
	const std::uint64_t cycles = r["cycles"];
	std::printf("region: %llu iterations on CPU %u in %.3f ms\n", static_cast<unsigned long long>(iterations),
		    cpu, static_cast<double>(r.time_enabled()) / 1e6);
	std::printf("instructions %llu\n", static_cast<unsigned long long>(instructions));
	std::printf("cycles       %llu\n", static_cast<unsigned long long>(cycles));
	std::printf("IPC          %.2f\n", cycles ? static_cast<double>(instructions) / static_cast<double>(cycles) : 0.0);
	return 0;
} catch (const amupmu::Error& e) {
	// e.what(): the operation and the errno, e.g.
	// "AMUPMU_PMU_CONFIG: Device or resource busy (EBUSY) ..."
	std::fprintf(stderr, "count_region: %s\n", e.what());
	return 1;
} catch (const std::exception& e) {	// what else may escape: std::bad_alloc, ...
	std::fprintf(stderr, "count_region: %s\n", e.what());
	return 1;
}
