// SPDX-License-Identifier: MIT-0
//
// netlink_events: watch the driver's events as they happen, through its
// generic netlink family (amupmu::Monitor; no need to open /dev/amupmu):
// CPUs going offline and online, ownership changes (group cpu), sessions
// starting and ending (group session), rings losing samples (group buffer).
// The session and buffer groups need CAP_PERFMON: without it, only cpu.
//
//   amupmu-example-netlink_events [--count N] [--timeout SECONDS]
//     ends after N events (default 10) or SECONDS (default 60)
#include <amupmu/error.hpp>
#include <amupmu/monitor.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <variant>

namespace {

using ull = unsigned long long;

// One line per record: std::visit calls the overload of its alternative.
struct Print {
	void operator()(const amupmu::CpuEvent& e) const
	{
		std::printf("cpu#%llu cpu-%s cpu=%u", ull{e.seq}, e.online ? "online" : "offline", e.cpu);
		if (e.online)	// the CPU's MIDR_EL1 comes with online only
			std::printf(" midr=0x%08llx", ull{e.midr});
		std::printf("\n");
	}
	void operator()(const amupmu::SessionEvent& e) const
	{
		std::printf("session#%llu session-%s id=%llu pid=%u\n", ull{e.seq}, e.start ? "start" : "end",
			    ull{e.session_id}, e.pid);
	}
	void operator()(const amupmu::Gap& g) const { std::printf("gap: %llu events lost\n", ull{g.missed()}); }
	void operator()(const amupmu::Overrun&) const { std::printf("overrun: the socket's buffer overflowed\n"); }
	template <typename Event>	// owner changes, SPE knobs, lost samples, SPE buffer events
	void operator()(const Event& e) const
	{
		std::printf("%s#%llu (amupmu monitor prints its fields)\n", amupmu::to_string(Event::group).c_str(),
			    ull{e.seq});
	}
};

} // namespace

int main(int argc, char** argv)
try {
	unsigned long count = 10, timeout = 60;
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 < argc && std::strcmp(argv[i], "--count") == 0) {
			count = std::strtoul(argv[i + 1], nullptr, 0);
		} else if (i + 1 < argc && std::strcmp(argv[i], "--timeout") == 0) {
			timeout = std::strtoul(argv[i + 1], nullptr, 0);
		} else {
			std::fprintf(stderr, "usage: %s [--count N] [--timeout SECONDS]\n", argv[0]);
			return 2;
		}
	}

	amupmu::Monitor monitor;	// DeviceMissing: the module is not loaded
	try {
		monitor.subscribe(amupmu::monitor_groups_all);
	} catch (const amupmu::PermissionDenied&) {
		monitor.subscribe(amupmu::group_bit(amupmu::MonitorGroup::cpu));
	}
	// flushed: a script may wait for this line before it makes events
	std::printf("subscribed to %s (family version %u): %lu events or %lu s\n",
		    monitor.subscription() == amupmu::monitor_groups_all ? "cpu,session,buffer" : "cpu",
		    monitor.family_version(), count, timeout);
	std::fflush(stdout);

	const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
	unsigned long events = 0;
	while (events < count && std::chrono::steady_clock::now() < end) {
		// the time left (not negative: that would wait forever)
		const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
		const auto record = monitor.next_event(std::max(left, std::chrono::milliseconds{0}));
		if (!record)
			continue;
		std::visit(Print{}, *record);
		std::fflush(stdout);
		if (!std::holds_alternative<amupmu::Gap>(*record) && !std::holds_alternative<amupmu::Overrun>(*record))
			++events;
	}
	std::printf("%lu events\n", events);
	return 0;
} catch (const amupmu::Error& e) {
	std::fprintf(stderr, "netlink_events: %s\n", e.what());
	return 1;
} catch (const std::exception& e) {	// what else may escape: std::bad_alloc, ...
	std::fprintf(stderr, "netlink_events: %s\n", e.what());
	return 1;
}
