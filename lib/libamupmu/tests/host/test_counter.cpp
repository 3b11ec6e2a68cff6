// SPDX-License-Identifier: GPL-2.0
//
// The module's counter arithmetic and PMEVTYPER encoding
// (kernel/amu_pmu_drv/amupmu_counter.h, the code the module runs), on the
// host: golden tables from the Arm ARM, and a model of a 32-bit counter
// whose overflow interrupts come late, to show that the re-arm every 2^31
// events keeps exact 64-bit totals and that folding only at the overflow
// (what the module did before) loses wraps.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>

#include <linux/amupmu.h>

namespace {
using u32 = std::uint32_t;
using u64 = std::uint64_t;
#include "amupmu_counter.h"

constexpr u64 mask32 = 0xffffffffULL;
constexpr u64 mask64 = ~0ULL;
} // namespace

TEST_CASE("PMEVTYPER encoding: perf's exclusions, golden table (Arm ARM P[31] U[30] NSH[27])",
	  "[host][counter]")
{
	constexpr u32 U = AMUPMU_EV_EXCL_USER, K = AMUPMU_EV_EXCL_KERNEL, HV = AMUPMU_EV_EXCL_HV;
	constexpr u32 HOST = AMUPMU_EV_EXCL_HOST, GUEST = AMUPMU_EV_EXCL_GUEST;
	struct Golden {
		u32 flags;
		bool vhe;
		bool has_el2;
		u32 event;
		u32 type;
		bool counts;
		bool kernel;
	};
	// armv8pmu_set_event_filter(): VHE host (kernel at EL2), EL1 kernel
	// with and without EL2 (plain virt)
	constexpr Golden golden[] = {
		// kernel at EL1, no EL2 (QEMU -M virt)
		{0, false, false, 0x08, 0x00000008, true, true},		// EL0+EL1
		{K | HV, false, false, 0x08, 0x80000008, true, false},		// :u
		{U | HV, false, false, 0x11, 0x40000011, true, true},		// :k
		{U | K, false, false, 0x11, 0xc0000011, false, false},		// :h, no EL2
		{GUEST, false, false, 0x11, 0x00000011, true, true},		// nothing
		// kernel at EL1 with EL2 (nVHE: KVM's hyp at EL2)
		{0, false, true, 0x08, 0x08000008, true, true},			// + hyp
		{U | K, false, true, 0x08, 0xc8000008, true, false},		// :h
		{HOST, false, true, 0x08, 0x00000008, true, true},		// no NSH
		{K | HV, false, true, 0x0160, 0x80000160, true, false},		// IMP DEF :u
		// VHE host: the kernel is EL2
		{0, true, true, 0x08, 0x08000008, true, true},			// EL0+EL1+EL2
		{K | HV, true, true, 0x08, 0x80000008, true, false},		// :u
		{U | HV, true, true, 0x11, 0x48000011, true, true},		// :k = EL2 (+ guest EL1)
		{U | K, true, true, 0x11, 0xc0000011, false, false},		// :h ignored
		{GUEST, true, true, 0x11, 0x88000011, true, true},		// no guest kernel
		{HOST, true, true, 0x11, 0x40000011, true, false},		// guest EL1 only
		{U, true, true, 0xffff, 0x4800ffff, true, true},		// evtCount[15:0] whole
	};
	for (const Golden& g : golden) {
		CAPTURE(g.flags, g.vhe, g.has_el2, g.event);
		const u32 type = amupmu_evtyper(g.flags, g.event, g.vhe, g.has_el2);
		CHECK(type == g.type);
		CHECK(amupmu_evtyper_counts(type, g.has_el2) == g.counts);
		CHECK(amupmu_evtyper_counts_kernel(type, g.vhe) == g.kernel);
	}
	// AMUPMU_EV_RAW only lifts the PMCEID check: no bit in the register
	CHECK(amupmu_evtyper(AMUPMU_EV_RAW, 0x0160, false, false) == 0x0160);
}

TEST_CASE("counter span: sampling period, 2^31 for 32-bit counting, none for 64-bit",
	  "[host][counter]")
{
	CHECK(amupmu_counter_span(0, mask32) == 0x80000000ULL);
	CHECK(amupmu_counter_span(0, mask64) == 0);
	CHECK(amupmu_counter_span(100003, mask32) == 100003);
	CHECK(amupmu_counter_span(100003, mask64) == 100003);
	CHECK(amupmu_counter_span(mask32, mask32) == mask32);
}

TEST_CASE("counter delta and re-arm value: golden table", "[host][counter]")
{
	// delta modulo the width, one wrap included
	CHECK(amupmu_counter_delta(0x100, 0xffffff00, mask32) == 0x200);
	CHECK(amupmu_counter_delta(0x1'0000'0100ULL, 0xffffff00, mask32) == 0x200); // upper bits ignored
	CHECK(amupmu_counter_delta(500, 100, mask32) == 400);
	CHECK(amupmu_counter_delta(5, mask64 - 4, mask64) == 10);
	// re-arm: one span after the last overflow, the events since kept
	CHECK(amupmu_counter_next(5, 0x80000000ULL, mask32) == 0x80000005ULL);
	CHECK(amupmu_counter_next(0, 100, mask64) == mask64 - 99);
	CHECK(amupmu_counter_next(30, 100, mask64) == mask64 - 69);
	// more than a span since the overflow: one span from now
	CHECK(amupmu_counter_next(150, 100, mask32) == mask32 - 99);
	CHECK(amupmu_counter_next(100, 100, mask32) == mask32 - 99);
}

namespace {

// A 32-bit event counter, its driver state and an overflow interrupt taken
// up to max_latency events after the wrap. rearm: the module's scheme
// (re-armed every span events); otherwise the interrupt only folds.
struct CounterModel {
	u64 hw = 0, prev = 0, total = 0, span = 0, truth = 0;
	bool pending = false;
	u64 due = 0;

	explicit CounterModel(bool rearm) : span(rearm ? amupmu_counter_span(0, mask32) : 0)
	{
		prev = hw = (0 - span) & mask32;	// amupmu_hw_counter_start()
	}
	void irq()
	{
		u64 now = hw & mask32;

		total += amupmu_counter_delta(now, prev, mask32);
		if (span) {
			prev = amupmu_counter_next(now, span, mask32);
			hw = prev;
		} else {
			prev = now;
		}
		pending = false;
	}
	// the value a READ returns: no state changes
	[[nodiscard]] u64 read() const { return total + amupmu_counter_delta(hw, prev, mask32); }
	void run(std::mt19937_64& rng, u64 events, u64 max_latency)
	{
		while (events) {
			u64 k = 1 + rng() % (1ULL << 29);
			u64 to_wrap = mask32 + 1 - (hw & mask32);

			k = std::min({k, events, to_wrap});
			if (pending)
				k = std::min(k, due - truth);
			hw = (hw + k) & mask32;
			truth += k;
			events -= k;
			if (k == to_wrap && !pending) {
				pending = true;
				due = truth + rng() % max_latency;
			}
			if (pending && truth == due)
				irq();
		}
	}
};

} // namespace

TEST_CASE("32-bit counting: re-armed every 2^31 events, no wrap lost to a late interrupt",
	  "[host][counter]")
{
	std::mt19937_64 rng(20261202);
	const u64 events = 40 * (mask32 + 1);	// 40 wraps of the hardware width

	SECTION("interrupts up to 2^31 - 1 events late, never read in between")
	{
		CounterModel m(true);

		m.run(rng, events, 0x80000000ULL);
		CHECK(m.read() == m.truth);
		CHECK(m.truth == events);
	}
	SECTION("read every few events: a read changes nothing")
	{
		CounterModel m(true);

		for (int i = 0; i < 400; i++) {
			m.run(rng, events / 400, 0x40000000ULL);
			REQUIRE(m.read() == m.truth);
		}
	}
	SECTION("folding only at the overflow loses wraps when the latency varies")
	{
		CounterModel m(false);

		m.run(rng, events, 1ULL << 20);
		// the model can fail: the old scheme's delta between two folds is
		// 2^32 plus the change in latency, which the width mask drops
		CHECK(m.read() < m.truth);
		CHECK((m.truth - m.read()) % (mask32 + 1) == 0);
	}
}
