// SPDX-License-Identifier: GPL-2.0
//
// DrainPacer [host]: how long record leaves the sample ring out of poll()
// after a drain -- half the ring at the drains' rate, at most 100 ms.
#include "drain_pacer.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>

using amupmu::cli::DrainPacer;
using namespace std::chrono_literals;

TEST_CASE("DrainPacer: half the ring at the observed rate, capped, none while unknown", "[host][record]")
{
	WARN("host test: DrainPacer (the tool's logic, no ring)");
	const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
	DrainPacer p{std::uint64_t{64} * 1024};
	CHECK(p.drained(100, t0) == 0);			// the first drain: no rate yet
	// 3,200 bytes in 10 ms: 320 bytes/ms; half the ring (32 KiB) in 102 ms
	CHECK(p.drained(3200, t0 + 10ms) == 100);	// capped
	// 32,768 bytes in 100 ms: half the ring in 100 ms; then 4x faster
	CHECK(p.drained(32768, t0 + 110ms) == 100);
	CHECK(p.drained(32768, t0 + 135ms) == 25);
	// a ring filling at 1 MiB/ms: drained again at once
	CHECK(p.drained(1 << 20, t0 + 136ms) == 0);
	// nothing came: poll until something does
	CHECK(p.drained(0, t0 + 300ms) == 0);
	// a drain at the same instant (no time passed): no estimate
	CHECK(p.drained(500, t0 + 300ms) == 0);
}
