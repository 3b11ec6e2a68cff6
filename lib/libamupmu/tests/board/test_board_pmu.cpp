// SPDX-License-Identifier: GPL-2.0
//
// Sessions, the event catalogue and sampling against the real driver
// [board]: backend QEMU TCG PMUv3 (amupmu devicetree: amupmu owns the
// PMU; stock devicetree: the kernel's arm_pmu does and every session is
// refused with OwnedByKernel, ENXIO). The [unloaded] tests run after rmmod.
#include <amupmu/amupmu.hpp>

#include "board_util.hpp"

#include "kernels.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <fstream>
#include <string>
#include <iostream>
#include <thread>
#include <vector>

#include <sched.h>

using namespace amupmu;
using amupmu::board::live_info;
using amupmu::board::online;
using Catch::Matchers::Contains;

namespace {

std::uint64_t monotonic_raw_ns()
{
	timespec ts{};
	REQUIRE(::clock_gettime(CLOCK_MONOTONIC_RAW, &ts) == 0);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

void pin(unsigned cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	REQUIRE(sched_setaffinity(0, sizeof(set), &set) == 0);
}

} // namespace

TEST_CASE("board: a Session counts, or the kernel's PMU refuses it with OwnedByKernel", "[board][session]")
{
	const Info info = live_info();
	const std::vector<unsigned> cpus = online(info);
	REQUIRE_FALSE(cpus.empty());
	std::cout << "# kernel " << kernel_el_name(info.kernel_el) << ", sample clock " << to_string(info.clock)
		  << ", " << to_string(read_gic_version()) << std::endl;
	CHECK((info.kernel_el == 1 || info.kernel_el == 2));
	CHECK((info.clock == Clock::cntvct || info.clock == Clock::cntpct));
	CHECK((info.clock == Clock::cntpct) == info.vhe());	// a VHE host kernel uses the EL2 physical timer
	const GroupConfig cfg{.events = {{.number = ev::cpu_cycles}, {.number = 0x00 /* SW_INCR */}}, .cpus = cpus};
	if (info.pmu_owner != PmuOwner::amupmu) {
		std::cout << "# pmu owner " << to_string(info.pmu_owner) << ": expecting OwnedByKernel (ENXIO)"
			  << std::endl;
		try {
			(void)Session::open(cfg);
			FAIL("AMUPMU_PMU_CONFIG accepted while the PMU is not amupmu's");
		} catch (const Busy& e) {
			FAIL("EBUSY for the kernel's PMU, not ENXIO: " << e.what());
		} catch (const OwnedByKernel& e) {
			CHECK(e.errnum() == ENXIO);
			CHECK_THAT(std::string{e.what()}, Contains("AMUPMU_PMU_CONFIG: PMU owned by the kernel's arm_pmu"));
		}
		// the kernel's counters are not amupmu's to call free
		for (const unsigned c : cpus)
			CHECK(info.cpus[c].pmu_counters_free == 0);
		return;
	}
	Session s = Session::open(cfg);
	CHECK(s.size() == 2);
	CHECK(s.counters()[0] == 31);	// cycles on the cycle counter
	pin(cpus.front());
	s.enable();
	workloads::insn_loop(1000000);
	s.disable();
	CpuReading r;
	s.read(cpus.front(), r);
	CHECK(r.nr_values == 2);
	CHECK(r.values[0].value > 1000000);	// at least one cycle per iteration
	CHECK(r.values[1].value == 0);		// nobody wrote PMSWINC
	CHECK(r.time_running > 0);
	CHECK(r.time_running <= r.time_enabled + 1000000);
	// moved: the new owner reads, the old one is empty
	Session moved = std::move(s);
	CpuReading again;
	moved.read(cpus.front(), again);
	CHECK(again.values[0].value == r.values[0].value);	// disabled: unchanged
	moved.reset();
	moved.read(cpus.front(), again);
	CHECK(again.values[0].value == 0);
}

TEST_CASE("board: exhausted counters are a Busy error naming the counters free", "[board][session]")
{
	const Info info = live_info();
	if (info.pmu_owner != PmuOwner::amupmu) {
		WARN("SKIP: the kernel owns the PMU");
		return;
	}
	const std::vector<unsigned> cpus = online(info);
	// nothing else runs: every counter is free, the cycle counter included
	for (const unsigned c : cpus) {
		INFO("cpu" << c);
		CHECK(info.cpus[c].counters_free() == info.cpus[c].pmu_num_counters + 1);
		CHECK(info.cpus[c].cycle_counter_free());
	}
	GroupConfig all{.cpus = cpus};
	all.events.push_back({.number = ev::cpu_cycles});
	for (unsigned i = 0; i < info.cpus[cpus.front()].pmu_num_counters; ++i)
		all.events.push_back({.number = 0x00});
	const Session hog = Session::open(all);
	// AMUPMU_INFO shows them taken
	const Info held = live_info();
	for (const unsigned c : cpus) {
		INFO("cpu" << c);
		CHECK(held.cpus[c].pmu_counters_free == 0);
	}
	try {
		(void)Session::open(GroupConfig{.events = {{.number = 0x00}}, .cpus = cpus});
		FAIL("a second session got a counter");
	} catch (const Busy& e) {
		CHECK(e.errnum() == EBUSY);
		CHECK_THAT(std::string{e.what()}, Contains("0 counters free, 1 asked"));
		std::cout << "# " << e.what() << std::endl;
	}
}

TEST_CASE("board: the catalogue against the live CPU", "[board][events]")
{
	const Info info = live_info();
	const std::vector<unsigned> cpus = online(info);
	const std::uint64_t midr = info.cpus[cpus.front()].midr;
	std::cout << "# CPU " << describe_midr(midr) << ", core table "
		  << (core_table(midr) ? core_table(midr)->core : "none") << std::endl;
	try {
		(void)parse_event("inst_retird", midr);
		FAIL("no exception");
	} catch (const UnknownEvent& e) {
		CHECK_THAT(std::string{e.what()}, Contains("did you mean 'inst_retired'"));
	}
	// every event PMCEID marks implemented is accepted by the driver, one
	// it does not is refused by the library first and by the driver too
	std::optional<std::uint16_t> lacking;
	for (std::uint16_t n = 1; n < 0x40 && !lacking; ++n)
		if (cpu_implements(info.cpus[cpus.front()], n) == false)
			lacking = n;
	if (!lacking) {
		WARN("SKIP: this CPU implements every common event");
		return;
	}
	const EventSpec spec = parse_event(event_display_name(*lacking, midr), midr);
	const EventSpec one[] = {spec};
	CHECK_THROWS_AS(require_events(one, info, cpus), Unsupported);
	if (info.pmu_owner == PmuOwner::amupmu)
		CHECK_THROWS_AS(Session::open(GroupConfig{.events = group_events(one), .cpus = cpus}), Unsupported);
}

TEST_CASE("board: overflow samples through the mmap ring", "[board][sample]")
{
	const Info info = live_info();
	if (info.pmu_owner != PmuOwner::amupmu) {
		WARN("SKIP: the kernel owns the PMU");
		return;
	}
	const std::vector<unsigned> cpus = online(info);
	// ":u": what perf's parse-events sets for it
	const std::uint32_t user_only = parse_modifiers("u");
	CHECK(user_only == (evflag::excl_kernel | evflag::excl_hv));
	const GroupConfig cfg{.events = {{.number = ev::cpu_cycles, .flags = user_only, .sample_period = 100000}},
			      .cpus = cpus,
			      .ring_pages = 4};
	Session s = Session::open(cfg);
	SampleReader ring = s.sample_reader();
	CHECK(ring.data_size() == std::uint64_t{4} * 4096);
	CHECK(ring.timer_freq() > 0);
	CHECK(ring.clock() == info.clock);
	const TimeConversion conv = ring.time_conversion();
	REQUIRE(conv.valid());
	pin(cpus.front());
	// every sample is taken while the group is enabled, between these two
	const std::uint64_t before = monotonic_raw_ns();
	s.enable();
	std::uint64_t n = 0, ours = 0, user = 0;
	std::uint64_t earliest = UINT64_MAX, latest = 0;
	const auto check = [&](const Sample& smp) {
		CHECK(smp.type == sample_pmu_overflow);
		CHECK(smp.event == 0);
		CHECK(smp.values.size() == 1);
		user += smp.mode == SampleMode::user;
		if (smp.pid == static_cast<std::uint32_t>(::getpid()))
			++ours;
		const std::uint64_t t = sample_time_ns(smp.time, conv);
		earliest = std::min(earliest, t);
		latest = std::max(latest, t);
		++n;
	};
	for (int round = 0; round < 20; ++round) {
		workloads::insn_loop(2000000);
		ring.consume(check);
	}
	s.disable();
	const std::uint64_t after = monotonic_raw_ns();
	ring.consume(check);
	// 1 us for the rounding of the conversion against the vDSO's
	constexpr std::uint64_t slack = 1000;
	const auto signed_ns = [](std::uint64_t a, std::uint64_t b) {
		return static_cast<std::int64_t>(a - b);
	};
	std::cout << "# " << n << " samples, " << ours << " of this process, " << user << " user, " << ring.lost()
		  << " lost; sample times from " << signed_ns(earliest, before) << " ns after the start to "
		  << signed_ns(after, latest) << " ns before the end of a " << (after - before)
		  << " ns CLOCK_MONOTONIC_RAW window (" << to_string(conv.clock) << ", mult " << conv.time_mult
		  << ", shift " << conv.time_shift << ")" << std::endl;
	CHECK(n > 100);
	CHECK(ours > n / 2);
	// the kernel is not counted, and the driver drops an interrupt that
	// lands there (skid) as perf does: every sample is user space
	CHECK(user == n);
	CHECK(earliest + slack >= before);
	CHECK(latest <= after + slack);
	CpuReading r;
	s.read(cpus.front(), r);
	CHECK(r.samples > 0);
	std::cout << "# CPU " << cpus.front() << ": " << r.samples << " samples, " << r.lost << " lost, " << r.skid
		  << " dropped as kernel skid" << std::endl;
}

TEST_CASE("board: one READ_ALL agrees with the per-CPU reads", "[board][session]")
{
	const Info info = live_info();
	if (info.pmu_owner != PmuOwner::amupmu) {
		WARN("SKIP: the kernel owns the PMU");
		return;
	}
	const std::vector<unsigned> cpus = online(info);
	// CPU_CYCLES on the cycle counter and on an event counter: QEMU has
	// INST_RETIRED only under -icount, and this test runs without it too
	const GroupConfig cfg{.events = {{.number = ev::cpu_cycles}, {.number = ev::cpu_cycles}}, .cpus = cpus};
	Session s = Session::open(cfg);
	REQUIRE(std::ranges::equal(s.cpus(), cpus));
	pin(cpus.front());
	s.enable();
	workloads::insn_loop(1000000);

	// counting: READ_ALL, then each CPU alone, then READ_ALL again; every
	// value and time only grows, and not by more than the time between
	// the two READ_ALLs allows
	const std::uint64_t t0 = monotonic_raw_ns();
	GroupReading first = s.read_all();
	std::vector<CpuReading> single(cpus.size());
	for (std::size_t i = 0; i < cpus.size(); ++i)
		s.read(cpus[i], single[i]);
	GroupReading second = s.read_all();
	const std::uint64_t elapsed = monotonic_raw_ns() - t0;
	// the second read reused the first's buffers
	const CpuReading* const storage = second.cpus().data();
	s.read_all(second);
	CHECK(second.cpus().data() == storage);

	REQUIRE(first.cpus().size() == cpus.size());
	REQUIRE(second.cpus().size() == cpus.size());
	CHECK(first.enabled());
	CHECK(first.time_enabled() <= second.time_enabled());
	// cycles (and instructions) in elapsed ns: at most 10 per ns, plus 10 ms worth
	const std::uint64_t bound = elapsed * 10 + 100000000;
	for (std::size_t i = 0; i < cpus.size(); ++i) {
		const CpuReading& a = first.cpus()[i];
		const CpuReading& b = single[i];
		const CpuReading& c = *second.find(cpus[i]);
		INFO("cpu" << cpus[i]);
		CHECK(a.cpu == cpus[i]);
		CHECK(first.find(cpus[i]) == &a);
		REQUIRE(a.nr_values == 2);
		REQUIRE(b.nr_values == 2);
		CHECK(a.time_running <= b.time_running);
		CHECK(b.time_running <= c.time_running);
		for (std::size_t e = 0; e < 2; ++e) {
			INFO("event " << e << ": " << a.values[e].value << " " << b.values[e].value << " "
				      << c.values[e].value);
			CHECK(a.values[e].value <= b.values[e].value);
			CHECK(b.values[e].value <= c.values[e].value);
			CHECK(c.values[e].value - a.values[e].value <= bound);
		}
	}
	CHECK(first.find(99999) == nullptr);

	// stopped: both reads give the same totals exactly
	s.disable();
	s.read_all(second);
	CHECK_FALSE(second.enabled());
	for (std::size_t i = 0; i < cpus.size(); ++i) {
		CpuReading one;
		s.read(cpus[i], one);
		const CpuReading& all = second.cpus()[i];
		INFO("cpu" << cpus[i]);
		CHECK(all.cpu == one.cpu);
		CHECK(all.values[0].value == one.values[0].value);
		CHECK(all.values[1].value == one.values[1].value);
		CHECK(all.time_running == one.time_running);
		CHECK(all.time_enabled == one.time_enabled);
		CHECK(all.samples == one.samples);
		CHECK(all.lost == one.lost);
		CHECK(all.skid == one.skid);
		CHECK((all.state & read_state::offline) == (one.state & read_state::offline));
	}
	std::cout << "# READ_ALL of " << cpus.size() << " CPUs: CPU " << cpus.front() << " counted "
		  << second.cpus()[0].values[0].value << " cycles" << std::endl;
}

TEST_CASE("board: Counters agrees with a Session", "[board][counters]")
{
	const Info info = live_info();
	if (info.pmu_owner != PmuOwner::amupmu) {
		std::cout << "# pmu owner " << to_string(info.pmu_owner) << ": Counters refused as a Session is"
			  << std::endl;
		Counters c;
		c.add("cycles");
		CHECK_THROWS_AS(c.start(), OwnedByKernel);
		CHECK_FALSE(c.running());
		return;
	}
	// -icount makes INST_RETIRED exact (run.sh -i puts icount1 in amupmu_board=)
	std::string cmdline;
	{
		std::ifstream f{"/proc/cmdline"};
		std::getline(f, cmdline);
	}
	const bool icount = cmdline.find("/icount1") != std::string::npos;
	const std::vector<unsigned> cpus = online(info);
	const unsigned cpu = cpus.front();
	pin(cpu);
	constexpr std::uint64_t n = 1000000;
	// QEMU's PMCEID has INST_RETIRED only under -icount: without it,
	// Counters refuses the event before the driver is asked
	const bool insns = missing_events(std::vector{parse_event("instructions:u", info.cpus[cpu].midr)}, info, cpus)
				   .empty();
	if (!insns) {
		Counters u;
		u.add("instructions:u");
		CHECK_THROWS_AS(u.start(), Unsupported);
	}

	std::uint64_t counters_cycles = 0, counters_insns = 0;
	std::vector<EventSpec> events;
	{
		Counters c;
		c.add("cycles");
		if (insns)
			c.add("instructions:u");
		REQUIRE(std::ranges::equal(c.cpus(), cpus));
		events.assign(c.events().begin(), c.events().end());
		const CounterResult& r = c.measure([] { workloads::insn_loop(n); });
		CHECK_FALSE(c.running());
		std::uint64_t sum = 0;
		for (const unsigned k : cpus)
			sum += r.per_cpu("cycles", k);
		CHECK(r["cycles"] == sum);
		counters_cycles = r.per_cpu("cycles", cpu);
		counters_insns = r.find("instructions:u").value_or(0);
		CHECK(r.time_enabled() > 0);
		// a scope counts too, and its result replaces the last one
		{
			const Counters::Scope scope = c.measure();
			workloads::insn_loop(n / 10);
		}
		CHECK(c.result().per_cpu("cycles", cpu) < counters_cycles);
	}	// closed: the counters are free for the session

	const GroupConfig cfg{.events = group_events(events), .cpus = cpus};
	Session s = Session::open(cfg);
	s.reset();
	s.enable();
	workloads::insn_loop(n);
	s.disable();
	CpuReading direct;
	s.read(cpu, direct);
	std::cout << "# CPU " << cpu << ", loop of " << n << (icount ? " (-icount)" : "") << ": Counters "
		  << counters_cycles << " cycles " << counters_insns << " instructions:u, Session "
		  << direct.values[0].value << " cycles " << (insns ? direct.values[1].value : 0)
		  << " instructions:u" << std::endl;
	CHECK(counters_cycles >= n);
	CHECK(direct.values[0].value >= n);
	// TCG's cycles follow the host: the same loop within a factor of 4
	CHECK(counters_cycles <= 4 * direct.values[0].value);
	CHECK(direct.values[0].value <= 4 * counters_cycles);
	if (insns && icount) {
		// exact: the loop's instructions plus the few of the library
		// around it, the same number of them both ways within 1 %
		const std::uint64_t loop = workloads::insn_loop_instructions(n);
		CHECK(counters_insns >= loop);
		CHECK(direct.values[1].value >= loop);
		CHECK(counters_insns <= loop + loop / 100);
		CHECK(direct.values[1].value <= loop + loop / 100);
	}
}

TEST_CASE("board: without the module the library gives DeviceMissing", "[.unloaded]")
{
	CHECK_THROWS_AS(Device::open(), DeviceMissing);
	try {
		(void)Session::open(GroupConfig{.events = {{.number = ev::cpu_cycles}}, .cpus = {0}});
		FAIL("no exception");
	} catch (const DeviceMissing& e) {
		CHECK(e.errnum() == ENOENT);
		CHECK_THAT(std::string{e.what()}, Contains("/dev/amupmu: No such file or directory (ENOENT)"));
	}
}
