// SPDX-License-Identifier: GPL-2.0
//
// Sessions, the event catalogue and sampling against the real driver
// [board]: backend QEMU TCG PMUv3 (amupmu devicetree: amupmu owns the
// PMU; stock devicetree: the kernel's arm_pmu does and every session is
// refused with Busy). The [unloaded] tests run after rmmod.
#include <amupmu/amupmu.hpp>

#include "kernels.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <iostream>
#include <thread>

#include <sched.h>

using namespace amupmu;
using Catch::Matchers::Contains;

namespace {

Info live_info()
{
	int err = 0;
	auto dev = Device::try_open(default_device_path, &err);
	INFO(default_device_path << ": " << errno_text(err) << " -- load amupmu.ko");
	REQUIRE(dev);
	return dev->info();
}

std::vector<unsigned> online(const Info& info)
{
	std::vector<unsigned> cpus;
	for (const CpuInfo& c : info.cpus)
		if (c.online())
			cpus.push_back(c.cpu);
	return cpus;
}

void pin(unsigned cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	REQUIRE(sched_setaffinity(0, sizeof(set), &set) == 0);
}

} // namespace

TEST_CASE("board: a Session counts, or the kernel's PMU refuses it with Busy", "[board][session]")
{
	const Info info = live_info();
	const std::vector<unsigned> cpus = online(info);
	REQUIRE_FALSE(cpus.empty());
	const GroupConfig cfg{.events = {{.number = ev::cpu_cycles}, {.number = 0x00 /* SW_INCR */}}, .cpus = cpus};
	if (info.pmu_owner != PmuOwner::amupmu) {
		std::cout << "# pmu owner " << to_string(info.pmu_owner) << ": expecting Busy" << std::endl;
		try {
			(void)Session::open(cfg);
			FAIL("AMUPMU_PMU_CONFIG accepted while the PMU is not amupmu's");
		} catch (const Busy& e) {
			CHECK(e.errnum() == EBUSY);
			CHECK_THAT(std::string{e.what()}, Contains("AMUPMU_PMU_CONFIG"));
		}
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
	GroupConfig all{.cpus = cpus};
	all.events.push_back({.number = ev::cpu_cycles});
	for (unsigned i = 0; i < info.cpus[cpus.front()].pmu_num_counters; ++i)
		all.events.push_back({.number = 0x00});
	const Session hog = Session::open(all);
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
	const GroupConfig cfg{.events = {{.number = ev::cpu_cycles, .flags = evflag::excl_el1, .sample_period = 100000}},
			      .cpus = cpus,
			      .ring_pages = 4};
	Session s = Session::open(cfg);
	SampleReader ring = s.sample_reader();
	CHECK(ring.data_size() == std::uint64_t{4} * 4096);
	CHECK(ring.timer_freq() > 0);
	pin(cpus.front());
	s.enable();
	std::uint64_t n = 0, ours = 0, el0 = 0;
	for (int round = 0; round < 20; ++round) {
		workloads::insn_loop(2000000);
		n += ring.consume([&](const Sample& smp) {
			CHECK(smp.type == sample_pmu_overflow);
			CHECK(smp.event == 0);
			CHECK(smp.values.size() == 1);
			el0 += smp.el == 0;
			if (smp.pid == static_cast<std::uint32_t>(::getpid()))
				++ours;
		});
	}
	s.disable();
	n += ring.consume([](const Sample&) {});
	std::cout << "# " << n << " samples, " << ours << " of this process, " << el0 << " at EL0, " << ring.lost()
		  << " lost" << std::endl;
	CHECK(n > 100);
	CHECK(ours > n / 2);
	CHECK(el0 > n * 9 / 10);	// EL1 is not counted; a late interrupt may land there
	CpuReading r;
	s.read(cpus.front(), r);
	CHECK(r.samples > 0);
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
