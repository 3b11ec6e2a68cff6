// SPDX-License-Identifier: MIT-0
//
// hot_pcs: sample a function on counter overflow and print its hottest PCs.
//
// A Session whose event has a sample period writes a record into its ring
// at each overflow: the PC it interrupted, the pid, ... Here: user-space
// cycles every PERIOD, on the CPU the thread is pinned to (amupmu::ThreadPin:
// counts and samples are per CPU, never per thread). This process's records
// are counted by PC and named by the library's Symbolizer.
//
//   amupmu-example-hot_pcs [PERIOD [ITERATIONS]]   default 100000, 10000000
#include <amupmu/affinity.hpp>
#include <amupmu/elf.hpp>
#include <amupmu/error.hpp>
#include <amupmu/events.hpp>
#include <amupmu/sample.hpp>
#include <amupmu/session.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

namespace example {

// The function sampled (out of line, so that its PCs have their own symbol).
[[gnu::noinline]] std::uint64_t hot_function(std::uint64_t iterations)
{
	std::uint64_t x = 88172645463325252ULL;
	for (std::uint64_t i = 0; i < iterations; ++i) {	// xorshift64
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

} // namespace example

int main(int argc, char** argv)
try {
	const std::uint64_t period = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 100000;
	const std::uint64_t iterations = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 10000000;
	// the thread stays on the CPU it runs on until pin goes out of scope
	const amupmu::ThreadPin pin;

	amupmu::Device device = amupmu::Device::open();
	const amupmu::EventSpec cycles = amupmu::parse_event("cpu_cycles:u", device.info().cpus.at(pin.cpu()).midr);
	// one event that samples, on this CPU; a ring of 64 pages (a power of two)
	amupmu::GroupConfig config{.cpus = {pin.cpu()}, .ring_pages = 64};
	config.events.push_back({.number = cycles.number, .flags = cycles.flags, .sample_period = period});
	const amupmu::Session session = amupmu::Session::create(std::move(device), config);
	amupmu::SampleReader ring = session.sample_reader();

	session.reset();
	session.enable();
	[[maybe_unused]] volatile std::uint64_t result = example::hot_function(iterations);
	session.disable();

	const auto pid = static_cast<std::uint32_t>(::getpid());
	std::map<std::uint64_t, unsigned> by_pc;	// this process's samples
	ring.consume([&](const amupmu::Sample& s) {
		if (s.type == amupmu::sample_pmu_overflow && s.pid == pid && s.mode == amupmu::SampleMode::user)
			++by_pc[s.pc];
	});
	std::vector<std::pair<std::uint64_t, unsigned>> hottest{by_pc.begin(), by_pc.end()};
	std::sort(hottest.begin(), hottest.end(), [](const auto& a, const auto& b) { return a.second > b.second; });

	amupmu::Symbolizer symbols;
	for (const amupmu::Mapping& m : amupmu::read_proc_maps(pid))
		symbols.add(m);
	// the function's name: its first instruction's symbol without "+0x0"
	const auto entry = reinterpret_cast<std::uintptr_t>(&example::hot_function);
	std::string name = symbols.resolve(pid, entry, amupmu::SampleMode::user).symbol;
	name.resize(std::min(name.size(), name.rfind('+')));

	unsigned samples = 0, inside = 0, shown = 0;	// inside: at a PC "name+0x..."
	for (const auto& [pc, n] : hottest) {
		const std::string symbol = symbols.resolve(pid, pc, amupmu::SampleMode::user).symbol;
		samples += n;
		if (symbol.starts_with(name + "+"))
			inside += n;
		if (shown++ < 5)	// the five hottest PCs
			std::printf("%5u  0x%llx  %s\n", n, static_cast<unsigned long long>(pc), symbol.c_str());
	}
	std::printf("%u samples of cpu_cycles:u every %llu on CPU %u (%llu lost), %u in %s at 0x%llx\n", samples,
		    static_cast<unsigned long long>(period), pin.cpu(), static_cast<unsigned long long>(ring.lost()),
		    inside, name.c_str(), static_cast<unsigned long long>(entry));
	return 0;
} catch (const amupmu::Error& e) {
	std::fprintf(stderr, "hot_pcs: %s\n", e.what());
	return 1;
} catch (const std::exception& e) {	// what else may escape: std::bad_alloc, ...
	std::fprintf(stderr, "hot_pcs: %s\n", e.what());
	return 1;
}
