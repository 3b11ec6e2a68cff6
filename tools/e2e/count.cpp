// SPDX-License-Identifier: GPL-2.0
//
// The end-to-end test's user program (tools/deb-e2e.sh): built in the test
// system against the installed libamupmu-dev, as a user builds one,
//   g++ -std=c++20 count.cpp $(pkg-config --cflags --libs amupmu)
// and run on the booted system: counts this thread's CPU cycles around a
// loop and prints them (cycles only: QEMU's PMU has no INST_RETIRED in its
// PMCEID0_EL0). Exits 0 when it counted.
#include <amupmu/counters.hpp>

#include <cstdio>
#include <exception>

int main()
{
	try {
		amupmu::Counters c;
		c.add({"cycles"});
		volatile unsigned long sink = 0;
		const amupmu::CounterResult& r = c.measure_this_thread([&sink] {
			for (unsigned long i = 0; i < 1000000; i++)
				sink = sink + i;
		});
		const unsigned long long cycles = r["cycles"];
		std::printf("cycles %llu\n", cycles);
		return cycles >= 1000000 ? 0 : 1;
	} catch (const std::exception& e) {
		std::fprintf(stderr, "e2e-count: %s\n", e.what());
		return 1;
	}
}
