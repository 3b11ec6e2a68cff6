// SPDX-License-Identifier: GPL-2.0
//
// The AMU figures without the driver [host]: AMUPMU_AMU_READ entries as the
// UAPI header lays them out, decoded, and pairs of recorded reads turned
// into frequency, IPC, memory-stall and active shares per CPU and summed,
// with the not-counted, offline, restarted and erratum cases. Backend:
// none (synthetic reads of a mock Cortex-X2 model, fixtures.hpp).
#include "fixtures.hpp"
#include "json_check.hpp"

#include <amupmu/amu.hpp>
#include <amupmu/error.hpp>
#include <amupmu/events.hpp>
#include <amupmu/report/amu_format.hpp>

#include <linux/amupmu.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <type_traits>
#include <vector>

using namespace amupmu;
using namespace amupmu::report;
using Catch::Matchers::Contains;

namespace {

constexpr std::uint64_t timer_hz = 62'500'000;	// QEMU virt's CNTFRQ_EL0

// What a CPU did over the interval.
struct Activity {
	double seconds = 1.0;
	double active = 0.8;	// not in WFI
	double hz = 1.5e9;
	double ipc = 1.25;
	double stall = 0.3;
};

// A read of one CPU at time t0 + (seconds of a), counters in AMEVTYPER0
// order {CPU_CYCLES, CNT_CYCLES, INST_RETIRED, STALL_BACKEND_MEM} unless
// order says where each goes.
AmuCpuReading reading(unsigned cpu, std::uint64_t t0, const Activity& a, bool after,
		      std::array<unsigned, 4> order = {0, 1, 2, 3})
{
	AmuCpuReading r;
	r.cpu = cpu;
	r.nr_group0 = 4;
	r.nr_group1 = 3;
	r.enabled0 = 0xF;
	r.enabled1 = 0x7;
	// large starting values: deltas, not totals, make the figures
	std::array<std::uint64_t, 4> base{1'000'000'007, 500'000'003, 2'000'000'011, 300'000'001};
	r.time = t0;
	if (after) {
		const double ticks = a.seconds * static_cast<double>(timer_hz);
		const double cnt = ticks * a.active;
		const double cycles = a.hz * a.seconds * a.active;
		r.time += static_cast<std::uint64_t>(ticks);
		base[0] += static_cast<std::uint64_t>(cycles);
		base[1] += static_cast<std::uint64_t>(cnt);
		base[2] += static_cast<std::uint64_t>(cycles * a.ipc);
		base[3] += static_cast<std::uint64_t>(cycles * a.stall);
	}
	for (unsigned i = 0; i < 4; ++i)
		r.group0[order[i]] = base[i];
	r.group1 = {10, 20, 30};
	if (after)
		r.group1 = {110, 220, 330};
	return r;
}

struct Pair {
	AmuReading before, after;
};

Pair pair_of(std::initializer_list<std::pair<unsigned, Activity>> cpus)
{
	Pair p;
	p.before.timer_freq = p.after.timer_freq = timer_hz;
	for (const auto& [cpu, a] : cpus) {
		p.before.cpus.push_back(reading(cpu, 1'000'000, a, false));
		p.after.cpus.push_back(reading(cpu, 1'000'000, a, true));
	}
	return p;
}

Info mock_board(unsigned n = 2)
{
	Info info = test::mock_info();
	info.cpus.clear();
	for (unsigned c = 0; c < n; ++c)
		info.cpus.push_back(test::mock_x2_cpu(c));
	return info;
}

} // namespace

TEST_CASE("AMUPMU_AMU_READ layout", "[host][amu]")
{
	STATIC_REQUIRE(sizeof(amupmu_amu_cpu) == amu_cpu_entry_size);
	STATIC_REQUIRE(offsetof(amupmu_amu_cpu, group0) == 40);
	STATIC_REQUIRE(offsetof(amupmu_amu_cpu, group1) == 40 + 16 * 8);
	STATIC_REQUIRE(std::is_trivially_copyable_v<AmuCpuReading>);
	STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<Amu>);
	STATIC_REQUIRE(std::is_nothrow_move_constructible_v<Amu>);
}

TEST_CASE("AMUPMU_AMU_READ entries decode at the entry size the kernel used", "[host][amu]")
{
	for (const std::size_t stride : {amu_cpu_entry_size, amu_cpu_entry_size + 8, std::size_t{512}}) {
		INFO("entry size " << stride);
		std::vector<std::byte> raw(2 * stride, std::byte{0xAA});	// garbage beyond each entry
		amupmu_amu_cpu e0{};
		e0.cpu = 1;
		e0.state = 0;
		e0.time = 12345;
		e0.nr_group0 = 4;
		e0.nr_group1 = 2;
		e0.enabled0 = 0xB;
		e0.enabled1 = 0x1;
		e0.restarts = 3;
		e0.group0[0] = 100;
		e0.group0[3] = 400;
		e0.group1[1] = 77;
		amupmu_amu_cpu e1{};
		e1.cpu = 5;
		e1.state = AMUPMU_AMU_OFFLINE;
		std::memcpy(raw.data(), &e0, sizeof(e0));
		std::memcpy(raw.data() + stride, &e1, sizeof(e1));
		std::array<AmuCpuReading, 3> out{};
		decode_amu_read(raw, 2, stride, out);
		CHECK(out[0].cpu == 1);
		CHECK(out[0].time == 12345);
		CHECK(out[0].nr_group0 == 4);
		CHECK(out[0].nr_group1 == 2);
		CHECK(out[0].enabled0 == 0xB);
		CHECK(out[0].enabled1 == 0x1);
		CHECK(out[0].restarts == 3);
		CHECK(out[0].group0[0] == 100);
		CHECK(out[0].group0[3] == 400);
		CHECK(out[0].group1[1] == 77);
		CHECK(out[1].cpu == 5);
		CHECK(out[1].state == amu_state::offline);
		CHECK(out[2].cpu == 0);	// untouched
	}
	const auto err = [](std::span<const std::byte> raw, std::uint32_t n, std::size_t stride,
			    std::span<AmuCpuReading> out) {
		try {
			decode_amu_read(raw, n, stride, out);
			return 0;
		} catch (const Error& e) {
			return e.errnum();
		}
	};
	std::vector<std::byte> raw(2 * amu_cpu_entry_size);
	std::array<AmuCpuReading, 2> out{};
	CHECK(err(raw, 3, amu_cpu_entry_size, out) == EBADMSG);		// 3 entries in 2
	CHECK(err(raw, 2, amu_cpu_entry_size - 8, out) == EBADMSG);		// below VER0
	CHECK(err(raw, 2, amu_cpu_entry_size, std::span{out}.first(1)) == EBADMSG);
	amupmu_amu_cpu bad{};
	bad.nr_group0 = 17;
	std::memcpy(raw.data(), &bad, sizeof(bad));
	CHECK(err(raw, 1, amu_cpu_entry_size, out) == EBADMSG);		// more than 16 counters
	CHECK(err({}, 0, amu_cpu_entry_size, out) == 0);
}

TEST_CASE("AMU figures: frequency, IPC, memory stall, active share", "[host][amu]")
{
	const Info info = mock_board();
	const Activity a0{.seconds = 1.0, .active = 0.8, .hz = 1.5e9, .ipc = 1.25, .stall = 0.3};
	const Activity a1{.seconds = 1.0, .active = 0.4, .hz = 1.0e9, .ipc = 0.5, .stall = 0.6};
	const Pair p = pair_of({{0, a0}, {1, a1}});
	const AmuReport r = amu_interval(info, p.before, p.after);
	REQUIRE(r.per_cpu.size() == 2);
	CHECK(r.mock);
	CHECK(amu_backend(r) == "mock AMU model");
	CHECK(r.cpus == "0-1");
	const AmuCpuDelta& c0 = r.per_cpu[0];
	CHECK(c0.state == AmuWhy::ok);
	CHECK(c0.seconds == Approx(1.0));
	CHECK(c0.ticks == timer_hz);
	REQUIRE(c0.frequency.ok());
	CHECK(c0.frequency.value == Approx(1.5e9).epsilon(1e-6));
	CHECK(c0.ipc.get().value() == Approx(1.25).epsilon(1e-6));
	CHECK(c0.mem_stall.get().value() == Approx(0.3).epsilon(1e-6));
	CHECK(c0.active.get().value() == Approx(0.8).epsilon(1e-6));
	CHECK(*c0.cnt_cycles == 50'000'000);
	CHECK(*c0.cpu_cycles == 1'200'000'000);
	CHECK_FALSE(c0.restarted);
	CHECK(c0.erratum.empty());
	// group 1: deltas with their event types
	REQUIRE(c0.aux.size() == 3);
	CHECK(c0.aux[0].event == 0x0301);
	CHECK(c0.aux[0].delta == 100u);
	CHECK(c0.aux[2].delta == 300u);
	const AmuCpuDelta& c1 = r.per_cpu[1];
	CHECK(c1.frequency.value == Approx(1.0e9).epsilon(1e-6));
	CHECK(c1.active.value == Approx(0.4).epsilon(1e-6));

	// the summed row: sums over the CPUs, not an average of ratios
	const AmuCpuDelta& t = r.total;
	CHECK(t.frequency.cpus == 2);
	CHECK(t.frequency.value == Approx((1.2e9 + 0.4e9) / (50e6 + 25e6) * 62.5e6).epsilon(1e-6));	// 1.333 GHz
	CHECK(t.ipc.value == Approx((1.5e9 + 0.2e9) / 1.6e9).epsilon(1e-6));
	CHECK(t.mem_stall.value == Approx((0.36e9 + 0.24e9) / 1.6e9).epsilon(1e-6));
	CHECK(t.active.value == Approx(0.6).epsilon(1e-6));
	REQUIRE(t.aux.size() == 3);
	CHECK(t.aux[1].event == 0x0302);
	CHECK(t.aux[1].delta == 400u);	// 200 per CPU
	CHECK(amu_flags(r).empty());
}

TEST_CASE("AMU counters are found by event type, not by position", "[host][amu]")
{
	Info info = mock_board(1);
	// this implementation lists them in another order
	info.cpus[0].amevtyper0 = {0x4005, 0x0008, 0x4004, 0x0011};
	const Activity a{};
	AmuReading before{.timer_freq = timer_hz, .cpus = {reading(0, 0, a, false, {3, 2, 1, 0})}};
	AmuReading after{.timer_freq = timer_hz, .cpus = {reading(0, 0, a, true, {3, 2, 1, 0})}};
	const AmuReport r = amu_interval(info, before, after);
	CHECK(r.per_cpu[0].frequency.value == Approx(1.5e9).epsilon(1e-6));
	CHECK(r.per_cpu[0].ipc.value == Approx(1.25).epsilon(1e-6));
	CHECK(r.per_cpu[0].mem_stall.value == Approx(0.3).epsilon(1e-6));
	CHECK(r.per_cpu[0].active.value == Approx(0.8).epsilon(1e-6));
}

TEST_CASE("AmuCpuReading::counter: one counter by its event type, without its index", "[host][amu]")
{
	Info info = mock_board(1);
	const CpuInfo ci = info.cpus[0];	// a copy: the types change below
	AmuCpuReading r = reading(0, 0, Activity{}, false);
	CHECK(r.counter(amu_ev::cpu_cycles, ci) == std::optional<std::uint64_t>{1'000'000'007});
	CHECK(r.counter(amu_ev::stall_backend_mem, ci) == std::optional<std::uint64_t>{300'000'001});
	// group 1 by its AMEVTYPER1 type
	CHECK(r.counter(0x0302, ci) == std::optional<std::uint64_t>{20});
	CHECK_FALSE(r.counter(0x1234, ci));
	// another order of the types: the same counts by event
	info.cpus[0].amevtyper0 = {0x4005, 0x0008, 0x4004, 0x0011};
	const AmuCpuReading shuffled = reading(0, 0, Activity{}, false, {3, 2, 1, 0});
	CHECK(shuffled.counter(amu_ev::cpu_cycles, info.cpus[0]) == std::optional<std::uint64_t>{1'000'000'007});
	CHECK(shuffled.counter(amu_ev::inst_retired, info.cpus[0]) == std::optional<std::uint64_t>{2'000'000'011});
	// not enabled, not among the counters read, CG1RZ, no AMU: none
	r.enabled0 = 0x7;
	CHECK_FALSE(r.counter(amu_ev::stall_backend_mem, ci));
	CHECK(r.counter(amu_ev::cpu_cycles, ci).has_value());
	r.nr_group0 = 2;
	CHECK_FALSE(r.counter(amu_ev::inst_retired, ci));
	r.enabled1 = 0x5;
	CHECK_FALSE(r.counter(0x0302, ci));
	CHECK(r.counter(0x0303, ci) == std::optional<std::uint64_t>{30});
	CpuInfo cg1rz = ci;
	cg1rz.amcr = 1ull << 17;
	CHECK_FALSE(r.counter(0x0303, cg1rz));
	CHECK(r.counter(amu_ev::cpu_cycles, cg1rz).has_value());
	r.state = amu_state::no_amu;
	CHECK_FALSE(r.counter(amu_ev::cpu_cycles, ci));
	r.state = amu_state::offline;	// the values it had when it went down
	CHECK(r.counter(amu_ev::cpu_cycles, ci) == std::optional<std::uint64_t>{1'000'000'007});
}

TEST_CASE("AMU: a counter not enabled gives 'not counted', never a number", "[host][amu]")
{
	const Info info = mock_board();
	Pair p = pair_of({{0, Activity{}}, {1, Activity{}}});
	SECTION("STALL_BACKEND_MEM disabled by firmware")
	{
		p.after.cpus[0].enabled0 = 0x7;
		const AmuReport r = amu_interval(info, p.before, p.after);
		const AmuCpuDelta& d = r.per_cpu[0];
		CHECK(d.mem_stall.why == AmuWhy::not_counted);
		CHECK_FALSE(d.mem_stall.get().has_value());
		CHECK_FALSE(d.stall_backend_mem.has_value());
		CHECK(d.ipc.ok());
		CHECK(d.frequency.ok());
		// the sum is over the CPU that has it, and says so
		CHECK(r.total.mem_stall.cpus == 1);
		CHECK(r.total.mem_stall.value == Approx(0.3).epsilon(1e-6));
		const std::vector<AmuNotCounted> expect{
			{.why = AmuNotCountedWhy::not_enabled, .event = amu_ev::stall_backend_mem, .counter = 3}};
		CHECK(d.not_counted == expect);
		CHECK(r.per_cpu[1].not_counted.empty());
		REQUIRE(amu_flags(r).size() == 1);
		CHECK_THAT(amu_flags(r)[0], Contains("not counted: CPU 0 STALL_BACKEND_MEM"));
		CHECK_THAT(amu_flags(r)[0], Contains("AMCNTENSET0_EL0 bit 3 clear"));
	}
	SECTION("CNT_CYCLES disabled in the first read only")
	{
		p.before.cpus[1].enabled0 = 0xD;
		const AmuReport r = amu_interval(info, p.before, p.after);
		CHECK(r.per_cpu[1].frequency.why == AmuWhy::not_counted);
		CHECK(r.per_cpu[1].active.why == AmuWhy::not_counted);
		CHECK(r.per_cpu[1].ipc.ok());
		CHECK(r.total.frequency.cpus == 1);
	}
	SECTION("an event type the CPU does not have")
	{
		Info other = info;
		other.cpus[0].amevtyper0[2] = 0x1234;	// no INST_RETIRED
		const AmuReport r = amu_interval(other, p.before, p.after);
		CHECK(r.per_cpu[0].ipc.why == AmuWhy::not_counted);
		const std::vector<AmuNotCounted> expect{{.why = AmuNotCountedWhy::no_counter, .event = amu_ev::inst_retired}};
		CHECK(r.per_cpu[0].not_counted == expect);
		CHECK_THAT(amu_flags(r)[0], Contains("no group 0 counter has this event type"));
	}
	SECTION("nothing counted anywhere: the summed row says why")
	{
		for (AmuCpuReading& c : p.after.cpus)
			c.enabled0 = 0;
		const AmuReport r = amu_interval(info, p.before, p.after);
		// one flag per counter, naming every CPU
		REQUIRE(amu_flags(r).size() == 4);
		CHECK_THAT(amu_flags(r)[0], Contains("not counted: CPUs 0-1 CNT_CYCLES: counter 1 not enabled"));
		CHECK(r.total.frequency.why == AmuWhy::not_counted);
		CHECK(r.total.ipc.cpus == 0);
		CHECK_FALSE(r.total.cpu_cycles.has_value());
	}
}

TEST_CASE("AMU: AMCR_EL0.CG1RZ (AMUv1p1) makes group 1 'not counted', not 0", "[host][amu]")
{
	Info info = mock_board();
	Pair p = pair_of({{0, Activity{}}, {1, Activity{}}});
	constexpr std::uint64_t cg1rz = 1ull << 17;
	SECTION("CG1RZ set on CPU 1 of an AMUv1p1")
	{
		REQUIRE(info.cpus[1].amu_version == 2);
		info.cpus[1].amcr = cg1rz;
		// what such a CPU reads below the highest EL: zeros
		p.before.cpus[1].group1 = {0, 0, 0};
		p.after.cpus[1].group1 = {0, 0, 0};
		const AmuReport r = amu_interval(info, p.before, p.after);
		const AmuCpuDelta& d = r.per_cpu[1];
		REQUIRE(d.aux.size() == 3);
		for (const AmuAuxDelta& x : d.aux)
			CHECK_FALSE(x.delta.has_value());
		// group 0 and its figures are untouched
		CHECK(d.frequency.ok());
		CHECK(d.ipc.ok());
		// CPU 0 still counts; the summed group 1 is not a number
		REQUIRE(r.per_cpu[0].aux.size() == 3);
		CHECK(r.per_cpu[0].aux[0].delta == std::optional<std::uint64_t>{100});
		for (const AmuAuxDelta& x : r.total.aux)
			CHECK_FALSE(x.delta.has_value());
		const std::vector<AmuNotCounted> expect{{.why = AmuNotCountedWhy::group1_reads_zero}};
		CHECK(d.not_counted == expect);
		REQUIRE(amu_flags(r).size() == 1);
		CHECK_THAT(amu_flags(r)[0], Contains("not counted: CPU 1 group 1 counters"));
		CHECK_THAT(amu_flags(r)[0], Contains("AMCR_EL0.CG1RZ"));
		CHECK_FALSE(format_amu_csv(AmuRun{.amu = r}, ",").empty());
		CHECK(test::json_error(format_amu_json(AmuRun{.amu = r}, 0)).empty());
	}
	SECTION("the bit is RES0 in AMUv1: ignored there")
	{
		info.cpus[1].amu_version = 1;
		info.cpus[1].amcr = cg1rz;
		const AmuReport r = amu_interval(info, p.before, p.after);
		REQUIRE(r.per_cpu[1].aux.size() == 3);
		CHECK(r.per_cpu[1].aux[0].delta == std::optional<std::uint64_t>{100});
		CHECK(amu_flags(r).empty());
	}
	SECTION("CG1RZ clear: the deltas")
	{
		const AmuReport r = amu_interval(info, p.before, p.after);
		CHECK(r.per_cpu[1].aux[2].delta == std::optional<std::uint64_t>{300});
		CHECK(amu_flags(r).empty());
	}
}

TEST_CASE("AMU: an offline CPU in either read gives no figure for the interval", "[host][amu]")
{
	const Info info = mock_board();
	for (const bool in_before : {true, false}) {
		INFO("offline in the " << (in_before ? "first" : "second") << " read");
		Pair p = pair_of({{0, Activity{}}, {1, Activity{.hz = 2e9}}});
		(in_before ? p.before : p.after).cpus[1].state = amu_state::offline;
		const AmuReport r = amu_interval(info, p.before, p.after);
		const AmuCpuDelta& d = r.per_cpu[1];
		CHECK(d.state == AmuWhy::offline);
		for (const AmuFigure* f : {&d.frequency, &d.ipc, &d.mem_stall, &d.active})
			CHECK(f->why == AmuWhy::offline);
		// the summed row is CPU 0's alone
		CHECK(r.total.frequency.cpus == 1);
		CHECK(r.total.frequency.value == Approx(1.5e9).epsilon(1e-6));
		REQUIRE(amu_flags(r).size() == 1);
		CHECK_THAT(amu_flags(r)[0], Contains("offline: CPU 1"));
	}
}

TEST_CASE("AMU: restarts changed: the interval spans a power-down, still valid", "[host][amu]")
{
	const Info info = mock_board();
	Pair p = pair_of({{0, Activity{}}, {1, Activity{}}});
	p.after.cpus[0].restarts = 2;
	p.before.cpus[0].restarts = 1;
	const AmuReport r = amu_interval(info, p.before, p.after);
	CHECK(r.per_cpu[0].restarted);
	CHECK(r.per_cpu[0].restarts == 1);
	CHECK(r.per_cpu[0].frequency.value == Approx(1.5e9).epsilon(1e-6));	// still a figure
	CHECK_FALSE(r.per_cpu[1].restarted);
	CHECK(r.total.restarted);
	REQUIRE(amu_flags(r).size() == 1);
	CHECK_THAT(amu_flags(r)[0], Contains("restarted: CPU 0"));
	CHECK_THAT(amu_flags(r)[0], Contains("figures still valid"));
	CHECK_THAT(format_amu_text(AmuRun{.amu = r}), Contains("restarted x1"));
}

TEST_CASE("AMU: CNT_CYCLES erratum flags frequency and active share", "[host][amu][errata]")
{
	Info info = mock_board(3);
	info.cpus[0].midr = 0x411FD460;	// Cortex-A510 r1p0: 2457168
	info.cpus[1].midr = 0x410FD872;	// Cortex-A725 r0p2: 3821522
	info.cpus[2].midr = 0x411FD462;	// Cortex-A510 r1p2: fixed
	const Pair p = pair_of({{0, Activity{}}, {1, Activity{}}, {2, Activity{}}});
	const AmuReport r = amu_interval(info, p.before, p.after);
	for (const unsigned cpu : {0u, 1u}) {
		INFO("cpu " << cpu);
		const AmuCpuDelta& d = r.per_cpu[cpu];
		CHECK(d.frequency.why == AmuWhy::erratum);
		CHECK(d.active.why == AmuWhy::erratum);
		CHECK_FALSE(d.frequency.get().has_value());
		CHECK(d.ipc.ok());		// does not use CNT_CYCLES
		CHECK(d.mem_stall.ok());
	}
	CHECK(r.per_cpu[0].erratum == "ARM-A510-2457168");
	CHECK(r.per_cpu[1].erratum == "ARM-A725-3821522");
	CHECK(r.per_cpu[2].erratum.empty());
	CHECK(r.per_cpu[2].frequency.ok());
	CHECK(r.total.frequency.cpus == 1);
	CHECK(r.total.ipc.cpus == 3);
	CHECK(*r.total.cnt_cycles == *r.per_cpu[2].cnt_cycles);	// the unreliable ones are not summed
	CHECK_THAT(format_amu_text(AmuRun{.amu = r}), Contains("over MHz 1/3, Active 1/3 CPUs"));
	REQUIRE(amu_flags(r).size() == 2);
	CHECK_THAT(amu_flags(r)[0], Contains("erratum ARM-A510-2457168 on CPU 0 (Cortex-A510 r0p0-r1p1)"));
	CHECK_THAT(amu_flags(r)[0], Contains("ARM64_ERRATUM_2457168"));
	CHECK_THAT(amu_flags(r)[1], Contains("ARM-A725-3821522"));
	CHECK(amu_erratum_for(0x410FD480) == nullptr);
	const std::string text = format_amu_text(AmuRun{.amu = r});
	CHECK_THAT(text, Contains("ERRATUM"));
	CHECK_THAT(text, Contains("flags: erratum ARM-A510-2457168, erratum ARM-A725-3821522"));
}

TEST_CASE("AMU: no AMU, undiscovered, idle", "[host][amu]")
{
	Info info = mock_board(3);
	Pair p = pair_of({{0, Activity{}}, {1, Activity{}}, {2, Activity{.active = 0.0}}});
	p.after.cpus[1].state = amu_state::no_amu;
	const AmuReport r = amu_interval(info, p.before, p.after);
	CHECK(r.per_cpu[1].state == AmuWhy::no_amu);
	CHECK(r.per_cpu[1].frequency.why == AmuWhy::no_amu);
	// idle all the interval: no cycles to divide by, but active share is 0 %
	CHECK(r.per_cpu[2].frequency.why == AmuWhy::no_cycles);
	CHECK(r.per_cpu[2].ipc.why == AmuWhy::no_cycles);
	REQUIRE(r.per_cpu[2].active.ok());
	CHECK(r.per_cpu[2].active.value == 0.0);
	CHECK(r.total.frequency.cpus == 1);
	CHECK(r.total.active.cpus == 2);
	CHECK(r.total.active.value == Approx(0.4).epsilon(1e-6));
	CHECK_THAT(amu_flags(r).back(), Contains("no AMU: CPU 1"));
	// a CPU missing from the first read (undiscovered then)
	AmuReading before = p.before;
	before.cpus.erase(before.cpus.begin());
	CHECK(amu_interval(info, before, p.after).per_cpu[0].state == AmuWhy::no_amu);
	CHECK(amu_notes(r).empty());
	// cycle counters that read zero at discovery: a note, the figures stand
	info.cpus[0].flags |= static_cast<std::uint32_t>(CpuFlag::amu_zero);
	const AmuReport zero = amu_interval(info, p.before, p.after);
	CHECK(zero.per_cpu[0].amu_zero);
	CHECK_FALSE(zero.per_cpu[2].amu_zero);
	CHECK(zero.per_cpu[0].frequency.ok());
	REQUIRE(amu_notes(zero).size() == 1);
	CHECK_THAT(amu_notes(zero)[0], Contains("CPU 0: AMU_ZERO"));
	CHECK_THAT(format_amu_text(AmuRun{.amu = zero}), Contains("note: CPU 0: AMU_ZERO"));
	// hardware backend is named as such
	info.features &= ~static_cast<std::uint64_t>(Feature::mock);
	CHECK(amu_backend(amu_interval(info, p.before, p.after)) == "hardware AMU");
}

TEST_CASE("AMU report renders as text, JSON and separated values", "[host][amu]")
{
	Info info = mock_board(2);
	Pair p = pair_of({{0, Activity{}}, {1, Activity{}}});
	p.after.cpus[1].enabled0 = 0x7;
	AmuRun r{.amu = amu_interval(info, p.before, p.after), .command = {"sleep", "1"}, .seconds = 1.0, .exit_status = 0};

	const std::string text = format_amu_text(r);
	CHECK_THAT(text, Contains("AMU activity of CPUs 0-1 for 'sleep 1'"));
	CHECK_THAT(text, Contains("backend: MOCK AMU MODEL"));
	CHECK_THAT(text, Contains("1500.00"));
	CHECK_THAT(text, Contains("n/c"));
	CHECK_THAT(text, Contains("aux:0x0301"));
	CHECK_THAT(text, Contains("  all "));
	CHECK_THAT(text, Contains("flag: not counted: CPU 1 STALL_BACKEND_MEM"));

	const std::string json = format_amu_json(r);
	INFO(json);
	CHECK(test::json_error(json).empty());
	CHECK_THAT(json, Contains("\"mock\": true"));
	CHECK_THAT(json, Contains("\"status\": \"not counted\""));
	r.interval_end = 0.5;
	const std::string line = format_amu_json(r, 0);
	CHECK(test::json_error(line).empty());
	CHECK(line.find('\n') == line.size() - 1);

	r.interval_end.reset();
	const std::string csv = format_amu_csv(r, ",");
	std::size_t lines = 0;
	for (std::size_t pos = 0, nl; (nl = csv.find('\n', pos)) != std::string::npos; pos = nl + 1, ++lines) {
		const std::string l = csv.substr(pos, nl - pos);
		INFO(l);
		CHECK(std::ranges::count(l, ',') == 10);	// 11 stable columns
	}
	CHECK(lines == 3);
	CHECK_THAT(csv, Contains("0,1500.000,1.2500,30.000,80.000,"));
	CHECK_THAT(csv, Contains("1,1500.000,1.2500,,80.000,"));	// not counted: empty
	r.interval_end = 2.0;
	CHECK(format_amu_csv(r, ";").starts_with("2.000000;0;"));
}
