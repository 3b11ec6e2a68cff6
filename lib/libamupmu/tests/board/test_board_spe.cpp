// SPDX-License-Identifier: GPL-2.0
//
// amupmu::SpeSession and SpeBuffer against the real driver [board][spe].
// Backends:
//  - mock (a CONFIG_AMUPMU_MOCK=y build): the mock SPE model writes the
//    records. A session on CPU 0, then on CPUs 0-1, profiles a busy loop
//    pinned on each CPU while the buffers are drained (poll on the session
//    fd); after DISABLE and the last drain: records on every CPU, every
//    record decoded by spe::RecordReader complete, the bytes consumed equal
//    the driver's `bytes`, the records decoded equal its `records` (and the
//    buffer header's), no fault, nothing lost (unless the drain loop was
//    kept away half the time a buffer lasts: a host's preemption without
//    -icount). The operation stream is slowed through
//    /sys/kernel/debug/amupmu/spe_stream (ops_per_us=50) and restored. A
//    second session on a CPU the first profiles: Busy.
//  - no SPE (QEMU hides it; a production build): SpeSession is refused
//    with Unsupported, EOPNOTSUPP, as the UAPI says.
//  - hardware SPE: the same checks as the mock, without the model's knob.
// Every test prints the backend it ran on.
#include <amupmu/amupmu.hpp>

#include "board_util.hpp"
#include "kernels.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

using namespace amupmu;
using amupmu::board::live_info;
using amupmu::board::online;

namespace {

const std::string spe_stream = "/sys/kernel/debug/amupmu/spe_stream";

std::string spe_backend(const Info& info)
{
	if (!info.has_spe())
		return "no SPE (" + std::string{describe(info.spe_owner)} + ")";
	return info.mock() ? "mock SPE model (test build)" : "hardware SPE";
}

void say_backend(const Info& info, std::string_view what)
{
	std::cout << "# backend: " << spe_backend(info) << "; " << backend_description(info) << ": " << what
		  << std::endl;
}

bool set_stream(unsigned cpu, const std::string& knobs)
{
	std::ofstream f{spe_stream};
	f << cpu << " " << knobs << "\n";
	f.flush();
	return static_cast<bool>(f);
}

// The mock's operation stream slowed on cpus (every operation then costs
// little under TCG), back to the default at the end.
struct SlowStream {
	std::vector<unsigned> cpus;
	SlowStream(const Info& info, std::vector<unsigned> set) : cpus{std::move(set)}
	{
		if (!info.mock())
			cpus.clear();
		for (const unsigned c : cpus)
			REQUIRE(set_stream(c, "ops_per_us=50"));
	}
	~SlowStream()
	{
		for (const unsigned c : cpus)
			set_stream(c, "ops_per_us=1000");
	}
	SlowStream(const SlowStream&) = delete;
	SlowStream& operator=(const SlowStream&) = delete;
};

// A user-space loop pinned on each CPU for about ms milliseconds, counted
// from when it runs there (a loaded host without -icount can take longer
// than that to start a thread and move it), and at least one round
std::vector<std::thread> busy_on(const std::vector<unsigned>& cpus, unsigned ms, std::atomic<unsigned>& running)
{
	std::vector<std::thread> threads;
	for (const unsigned c : cpus) {
		++running;
		threads.emplace_back([c, ms, &running] {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(c, &set);
			(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
			const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
			do
				workloads::insn_loop(100000);
			while (std::chrono::steady_clock::now() < end);
			--running;
		});
	}
	return threads;
}

struct Drained {
	std::uint64_t bytes = 0;
	std::uint64_t records = 0;
	std::uint64_t incomplete = 0;
	std::uint64_t truncated = 0;
	std::uint64_t spans = 0;
};

void drain(SpeBuffer& b, Drained& d)
{
	d.bytes += b.consume([&](std::span<const std::byte> s) {
		++d.spans;
		spe::RecordReader reader{s};
		for (const spe::Record& r : reader) {
			++d.records;
			if (!r.complete())
				++d.incomplete;
		}
		d.truncated += reader.stats().truncated;
	});
}

void profile_and_check(const Info& info, const std::vector<unsigned>& cpus)
{
	SlowStream slow{info, cpus};
	SpeConfig c;
	c.cpus = cpus;
	c.interval = 4096;	// about 12 records per ms per CPU at 50 operations per us
	c.buf_pages = 16;	// 64 KiB each: drained several times in 300 ms
	SpeSession s = SpeSession::open(c);
	REQUIRE(s.cpus().size() == cpus.size());
	std::vector<SpeBuffer> bufs;
	for (const unsigned cpu : s.cpus())
		bufs.push_back(s.map(cpu));
	std::vector<Drained> got(bufs.size());
	const auto drain_all = [&] {
		for (std::size_t i = 0; i < bufs.size(); ++i)
			drain(bufs[i], got[i]);
	};

	s.enable();
	std::atomic<unsigned> running{0};
	std::vector<std::thread> threads = busy_on(cpus, 300, running);
	unsigned wakeups = 0;
	// the longest the buffers went undrained while the CPUs were profiled
	auto drained_at = std::chrono::steady_clock::now();
	std::chrono::steady_clock::duration longest{};
	while (running.load() != 0) {
		if (SpeBuffer::wait(s.fd(), 20))
			++wakeups;
		drain_all();
		const auto now = std::chrono::steady_clock::now();
		longest = std::max(longest, now - drained_at);
		drained_at = now;
	}
	for (std::thread& t : threads)
		t.join();
	s.disable();
	drain_all();

	// A buffer holds 84 ms of records (64 KiB, about 12 records of 64 bytes
	// per ms), drained every 20 ms or so. Without -icount the host may keep
	// the drain loop's vCPU off its CPU longer while the other vCPU goes on
	// profiling: lost bytes are allowed only after a drain loop away for
	// half that (the host's doing, measured), never otherwise
	const auto longest_ms = std::chrono::duration_cast<std::chrono::milliseconds>(longest).count();
	const bool drained_late = longest_ms >= 42;
	std::cout << "# longest time between drains " << longest_ms << " ms"
		  << (drained_late ? ": lost bytes allowed" : "") << std::endl;
	const std::vector<SpeCpuStatus> st = s.read();
	REQUIRE(st.size() == cpus.size());
	for (std::size_t i = 0; i < st.size(); ++i) {
		const SpeCpuStatus& e = st[i];
		std::cout << "# cpu " << e.cpu << ": " << e.records << " records, " << e.bytes << " bytes, "
			  << e.lost_bytes << " lost, " << e.collisions << " collisions, " << e.faults
			  << " faults, state " << format_spe_state(e.state) << "; read " << got[i].bytes << " bytes in "
			  << got[i].spans << " spans, " << got[i].records << " records decoded; " << wakeups
			  << " poll wake-ups" << std::endl;
		INFO("cpu " << e.cpu);
		CHECK(e.cpu == cpus[i]);
		CHECK(e.records > 0);
		CHECK(got[i].bytes == e.bytes);
		CHECK(got[i].records == e.records);
		CHECK(bufs[i].records() == e.records);
		CHECK(bufs[i].available() == 0);
		CHECK(got[i].incomplete == 0);
		CHECK(got[i].truncated == 0);
		CHECK(e.faults == 0);
		CHECK((e.lost_bytes == 0 || drained_late));
		CHECK((e.state & spe_state::enabled) == 0);
		CHECK(bufs[i].cpu() == cpus[i]);
		CHECK(bufs[i].timer_freq() > 0);
	}
	s.release();
	CHECK_THROWS_AS(s.enable(), Unavailable);
}

} // namespace

TEST_CASE("board: SpeSession records on the mock model, every byte accounted for, or is unsupported",
	  "[board][spe]")
{
	const Info info = live_info();
	const std::vector<unsigned> cpus = online(info);
	REQUIRE_FALSE(cpus.empty());
	CHECK(info.supports(Ioctl::spe_config));

	if (!info.has_spe()) {
		say_backend(info, "expecting EOPNOTSUPP from AMUPMU_SPE_CONFIG");
		CHECK_FALSE(info.mock());
		SpeConfig c;
		c.cpus = {cpus.front()};
		try {
			SpeSession s = SpeSession::open(c);
			FAIL("AMUPMU_SPE_CONFIG succeeded without SPE");
		} catch (const Unsupported& e) {
			CHECK(e.errnum() == EOPNOTSUPP);
			std::cout << "# " << e.what() << std::endl;
		}
		return;
	}
	say_backend(info, "a session on CPU 0, then on CPUs 0-1");
	SECTION("CPU 0")
	{
		profile_and_check(info, {cpus.front()});
	}
	SECTION("CPUs 0-1")
	{
		if (cpus.size() < 2) {
			WARN("SKIP: one online CPU");
			return;
		}
		profile_and_check(info, {cpus[0], cpus[1]});
	}
	SECTION("a second session on a profiled CPU is Busy; the first goes on")
	{
		SpeConfig c;
		c.cpus = {cpus.front()};
		SpeSession first = SpeSession::open(c);
		try {
			SpeSession second = SpeSession::open(c);
			FAIL("two SPE sessions on CPU " << cpus.front());
		} catch (const Busy& e) {
			CHECK(e.errnum() == EBUSY);
			CHECK_THAT(e.what(), Catch::Contains("another session profiles a CPU of the set"));
		}
		CHECK_NOTHROW(first.enable());
		CHECK_NOTHROW(first.disable());
	}
}
