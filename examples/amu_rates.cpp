// SPDX-License-Identifier: MIT-0
//
// amu_rates: every CPU's frequency and IPC from its Activity Monitors, once
// a second.
//
// The AMU counts all the time, for nobody in particular: reading it needs no
// session and takes no counter from anyone. Two reads of every CPU's
// counters make an interval; amu_interval() turns them into figures:
// frequency = ΔCPU_CYCLES / ΔCNT_CYCLES x the system counter's rate (while
// the CPU was not idle), IPC = ΔINST_RETIRED / ΔCPU_CYCLES. A figure that
// cannot be had says why (the CPU was offline, idle the whole second, ...).
//
// The driver's test build takes the AMU registers from a mock model (QEMU
// has no AMU): every line says "mock" then.
//
//   amupmu-example-amu_rates [--count N]   N lines per CPU (default: until killed)
#include <amupmu/amu.hpp>
#include <amupmu/error.hpp>
#include <amupmu/info.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <utility>

namespace {

// "2400.0 MHz", or why there is no figure ("offline", "no cycles", ...)
std::string text(const amupmu::AmuFigure& f, double scale, const char* format)
{
	if (!f.ok())
		return std::string{amupmu::to_string(f.why)};
	char buf[32];
	std::snprintf(buf, sizeof(buf), format, f.value * scale);
	return buf;
}

} // namespace

int main(int argc, char** argv)
try {
	unsigned long count = 0;	// 0: forever
	if (argc == 3 && std::strcmp(argv[1], "--count") == 0) {
		count = std::strtoul(argv[2], nullptr, 0);
	} else if (argc != 1) {
		std::fprintf(stderr, "usage: %s [--count N]\n", argv[0]);
		return 2;
	}

	amupmu::Amu amu = amupmu::Amu::open();	// every CPU
	const char* label = amu.info().mock() ? "  mock" : "";
	std::printf("AMU of %zu CPUs, registers: %s\n", amu.cpus().size(),
		    std::string{amupmu::backend_name(amu.info())}.c_str());

	amupmu::AmuReading before, after;
	amu.read(before);
	for (unsigned long second = 1; count == 0 || second <= count; ++second) {
		std::this_thread::sleep_for(std::chrono::seconds(1));
		amu.read(after);
		const amupmu::AmuReport interval = amupmu::amu_interval(amu.info(), before, after);
		for (const amupmu::AmuCpuDelta& cpu : interval.per_cpu)
			std::printf("%4lu s  cpu%-3u %14s  IPC %-10s%s\n", second, cpu.cpu,
				    text(cpu.frequency, 1e-6, "%.1f MHz").c_str(), text(cpu.ipc, 1, "%.2f").c_str(),
				    label);
		std::fflush(stdout);
		std::swap(before, after);
	}
	return 0;
} catch (const amupmu::Error& e) {
	std::fprintf(stderr, "amu_rates: %s\n", e.what());
	return 1;
} catch (const std::exception& e) {	// what else may escape: std::bad_alloc, ...
	std::fprintf(stderr, "amu_rates: %s\n", e.what());
	return 1;
}
