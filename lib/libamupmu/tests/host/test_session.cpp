// SPDX-License-Identifier: GPL-2.0
//
// Session without the driver [host]: typed errors from a missing node and
// from a file that is not /dev/amupmu; the handle is move-only; the
// AMUPMU_PMU_READ_ALL buffer as the UAPI header lays it out, with and
// without AMUPMU_PMU_READ_TIMES (a multiplexed group's), and perf's scaling
// of a multiplexed count.
#include "fixtures.hpp"

#include <amupmu/error.hpp>
#include <amupmu/session.hpp>

#include <linux/amupmu.h>

#include <catch2/catch.hpp>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <typeindex>
#include <utility>
#include <vector>

using namespace amupmu;
using Catch::Matchers::Contains;

TEST_CASE("Session is a move-only handle; readings are fixed-size", "[host][session]")
{
	STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<Session>);
	STATIC_REQUIRE_FALSE(std::is_copy_assignable_v<Session>);
	STATIC_REQUIRE(std::is_nothrow_move_constructible_v<Session>);
	STATIC_REQUIRE(std::is_trivially_copyable_v<CpuReading>);
	// ABI 2.4: throttled at the end of the READ, the one-CPU entry header unchanged
	STATIC_REQUIRE(sizeof(amupmu_pmu_read) == AMUPMU_PMU_READ_SIZE_VER3);
	STATIC_REQUIRE(offsetof(amupmu_pmu_read, throttled) == AMUPMU_PMU_READ_SIZE_VER2);
	STATIC_REQUIRE(sizeof(amupmu_pmu_read_cpu) == 40);
}

TEST_CASE("Session::open errors", "[host][session]")
{
	const GroupConfig cfg{.events = {{.number = 0x11}}, .cpus = {0}};
	CHECK_THROWS_AS(Session::open(cfg, "/nonexistent/amupmu"), DeviceMissing);
	try {
		(void)Session::open(cfg, "/dev/null");
		FAIL("no exception");
	} catch (const Error& e) {
		// ENOTTY from Linux; ENOSYS from qemu-user, which does not forward unknown ioctls
		CHECK((e.errnum() == ENOTTY || e.errnum() == ENOSYS));
		CHECK_THAT(std::string{e.what()}, Contains("AMUPMU_PMU_CONFIG"));
	}
	CHECK_THROWS_AS(Session::open(GroupConfig{.events = {}, .cpus = {0}}, "/dev/null"), InvalidArgument);
	CHECK_THROWS_AS(Session::open(GroupConfig{.events = {{.number = 8}}, .cpus = {}}, "/dev/null"),
			InvalidArgument);
	GroupConfig many{.cpus = {0}};
	many.events.resize(33);
	CHECK_THROWS_AS(Session::open(many, "/dev/null"), InvalidArgument);
}

namespace {

// An AMUPMU_PMU_READ_ALL buffer written as the driver would: for each CPU
// a struct amupmu_pmu_read_cpu followed by room struct amupmu_pmu_value,
// the group's nr_values first.
struct ReadAllBuffer {
	ReadAllBuffer(std::size_t nr_cpus, std::uint32_t room_)
		: room{room_}, bytes(nr_cpus * (sizeof(amupmu_pmu_read_cpu) + room_ * sizeof(amupmu_pmu_value)))
	{
	}
	void put(std::size_t i, const amupmu_pmu_read_cpu& head, std::initializer_list<amupmu_pmu_value> values)
	{
		const std::size_t stride = sizeof(amupmu_pmu_read_cpu) + room * sizeof(amupmu_pmu_value);
		std::byte* entry = bytes.data() + i * stride;
		std::memcpy(entry, &head, sizeof(head));
		std::size_t n = 0;
		for (const amupmu_pmu_value& v : values)
			std::memcpy(entry + sizeof(head) + n++ * sizeof(v), &v, sizeof(v));
	}
	std::uint32_t room;
	std::vector<std::byte> bytes;
};

} // namespace

TEST_CASE("READ_ALL buffer layout decodes into per-CPU readings", "[host][session]")
{
	STATIC_REQUIRE(sizeof(amupmu_pmu_read_cpu) == 40);
	STATIC_REQUIRE(read_all_entry_size(0) == sizeof(amupmu_pmu_read_cpu));
	STATIC_REQUIRE(read_all_entry_size(7) == sizeof(amupmu_pmu_read_cpu) + 7 * sizeof(amupmu_pmu_value));

	// CPUs 1 and 4 of a set, a group of 2 events read with room for 3
	ReadAllBuffer buf{2, 3};
	buf.put(0, {.cpu = 1, .state = AMUPMU_READ_ENABLED, .time_running = 900, .samples = 5, .lost = 1, .skid = 2},
		{{.value = 1000, .overflows = 0}, {.value = 2000, .overflows = 1}, {.value = 0xdead, .overflows = 0}});
	buf.put(1, {.cpu = 4, .state = AMUPMU_READ_ENABLED | AMUPMU_READ_OFFLINE, .time_running = 400,
		    .samples = 0, .lost = 0, .skid = 0},
		{{.value = 3000, .overflows = 2}, {.value = 4000, .overflows = 3}});
	std::array<CpuReading, 4> out{};
	decode_read_all(buf.bytes, 2, 3, 2, 1000, out);
	CHECK(out[0].cpu == 1);
	CHECK(out[0].nr_values == 2);
	CHECK(out[0].counters().size() == 2);
	CHECK(out[0].values[0].value == 1000);
	CHECK(out[0].values[1].value == 2000);
	CHECK(out[0].values[1].overflows == 1);
	CHECK(out[0].values[2].value == 0);	// beyond the group: not copied
	CHECK(out[0].time_enabled == 1000);
	CHECK(out[0].time_running == 900);
	CHECK(out[0].state == read_state::enabled);
	CHECK(out[0].samples == 5);
	CHECK(out[0].lost == 1);
	CHECK(out[0].skid == 2);
	CHECK(out[1].cpu == 4);	// at the stride of room, not of nr_values
	CHECK(out[1].values[0].value == 3000);
	CHECK(out[1].values[1].value == 4000);
	CHECK(out[1].values[1].overflows == 3);
	CHECK(out[1].state == (read_state::enabled | read_state::offline));
	CHECK(out[1].time_enabled == 1000);
	CHECK(out[1].time_running == 400);
	CHECK(out[2].cpu == 0);	// untouched

	// fewer entries than room: only those
	std::array<CpuReading, 1> one{};
	decode_read_all(buf.bytes, 1, 3, 2, 7, one);
	CHECK(one[0].cpu == 1);

	// malformed: a typed error, nothing read past the buffer
	const auto bad = [&](std::span<const std::byte> raw, std::uint32_t n, std::uint32_t room, std::uint32_t values,
			     std::span<CpuReading> into) {
		try {
			decode_read_all(raw, n, room, values, 0, into);
			return 0;
		} catch (const Error& e) {
			return e.errnum();
		}
	};
	CHECK(bad(buf.bytes, 3, 3, 2, out) == EBADMSG);			// 3 entries in 2
	CHECK(bad(std::span{buf.bytes}.first(100), 2, 3, 2, out) == EBADMSG);	// truncated
	CHECK(bad(buf.bytes, 2, 3, 4, out) == EBADMSG);			// more values than room
	CHECK(bad(buf.bytes, 2, 3, 2, one) == EBADMSG);			// out too small
	std::vector<std::byte> huge(read_all_entry_size(40));
	CHECK(bad(huge, 1, 40, 33, out) == EBADMSG);			// more than a group holds
	CHECK(bad({}, 0, 3, 2, out) == 0);					// nothing to read
}

TEST_CASE("READ state bits: shared mode and evicted counters (ABI 2.3)", "[host][session]")
{
	STATIC_REQUIRE(read_state::shared == AMUPMU_READ_SHARED);
	STATIC_REQUIRE(read_state::evicted == AMUPMU_READ_EVICTED);
	STATIC_REQUIRE(counter_perf == AMUPMU_COUNTER_PERF);
	STATIC_REQUIRE(cycle_counter_index == 31);

	// a shared-mode READ_ALL: CPU 0 counting, CPU 2 evicted, CPU 3 offline
	ReadAllBuffer buf{3, 1};
	buf.put(0, {.cpu = 0, .state = AMUPMU_READ_ENABLED | AMUPMU_READ_SHARED, .time_running = 90, .samples = 0, .lost = 0, .skid = 0},
		{{.value = 10, .overflows = 0}});
	buf.put(1, {.cpu = 2, .state = AMUPMU_READ_ENABLED | AMUPMU_READ_SHARED | AMUPMU_READ_EVICTED,
		    .time_running = 50, .samples = 0, .lost = 0, .skid = 0},
		{{.value = 5, .overflows = 0}});
	buf.put(2, {.cpu = 3, .state = AMUPMU_READ_SHARED | AMUPMU_READ_OFFLINE, .time_running = 30, .samples = 0, .lost = 0, .skid = 0},
		{{.value = 7, .overflows = 0}});
	std::vector<CpuReading> out(3);
	decode_read_all(buf.bytes, 3, 1, 1, 100, out);
	CHECK(out[1].cpu == 2);
	CHECK(out[1].values[0].value == 5);
	CHECK(out[2].time_running == 30);
	CHECK(out[0].enabled());
	CHECK(out[0].shared());
	CHECK_FALSE(out[0].evicted());
	CHECK_FALSE(out[0].offline());
	CHECK(out[1].shared());
	CHECK(out[1].evicted());
	CHECK(out[1].enabled());
	CHECK_FALSE(out[1].offline());
	CHECK(out[2].shared());
	CHECK(out[2].offline());
	CHECK_FALSE(out[2].enabled());
	CHECK_FALSE(out[2].evicted());
	// exclusive mode: none of the new bits
	CpuReading excl;
	excl.state = read_state::enabled;
	CHECK_FALSE(excl.shared());
	CHECK_FALSE(excl.evicted());
}

TEST_CASE("AMUPMU_PMU_CONFIG's errno: the reason from AMUPMU_INFO", "[host][session][error]")
{
	const std::vector<unsigned> cpus{0};
	const auto thrown = [&](int err, const Info* info, std::size_t events) -> std::pair<std::type_index, std::string> {
		try {
			throw_pmu_config_error(err, events, cpus, info);
		} catch (const Error& e) {
			CHECK(e.errnum() == err);
			return {typeid(e), e.what()};
		}
		return {typeid(void), ""};
	};
	const Info refused = test::qemu_info();
	const Info shared = test::shared_info();
	Info old = test::qemu_info();
	old.abi_minor = 2;
	Info excl = test::mock_info();	// CPU 0: counters 2-5 and the cycle counter free

	auto [t, what] = thrown(ENXIO, &refused, 1);
	CHECK(t == typeid(OwnedByKernel));
	CHECK(what == "AMUPMU_PMU_CONFIG: PMU owned by the kernel and shared mode is off (module parameter "
		      "pmu_shared=N, or no arm_pmu registered with perf core) (ENXIO)");
	// without AMUPMU_INFO: the same (shared mode off is what ENXIO says most often)
	std::tie(t, what) = thrown(ENXIO, nullptr, 1);
	CHECK(t == typeid(OwnedByKernel));
	CHECK_THAT(what, Contains("shared mode is off (module parameter pmu_shared=N, "));
	std::tie(t, what) = thrown(ENXIO, &old, 1);
	CHECK(t == typeid(OwnedByKernel));
	CHECK(what == "AMUPMU_PMU_CONFIG: PMU owned by the kernel's arm_pmu; arm_pmu owns the PMU and this "
		      "driver (ABI 2.2) has no shared mode (ENXIO)");
	std::tie(t, what) = thrown(ENXIO, &shared, 1);
	CHECK(t == typeid(OwnedByKernel));
	CHECK(what == "AMUPMU_PMU_CONFIG: no perf PMU serves a CPU of the set (shared mode) (ENXIO)");

	std::tie(t, what) = thrown(EBUSY, &excl, 6);
	CHECK(t == typeid(Busy));
	CHECK(what == "AMUPMU_PMU_CONFIG (5 counters free, 6 asked): Device or resource busy (EBUSY)");
	// shared: perf core places the counters, none is "free"
	std::tie(t, what) = thrown(EBUSY, &shared, 8);
	CHECK(t == typeid(Busy));
	CHECK(what == "AMUPMU_PMU_CONFIG (perf core could not schedule 8 pinned counters): Device or resource "
		      "busy (EBUSY)");
	std::tie(t, what) = thrown(EBUSY, nullptr, 8);
	CHECK(what == "AMUPMU_PMU_CONFIG: Device or resource busy (EBUSY)");
	std::tie(t, what) = thrown(EOPNOTSUPP, &shared, 1);
	CHECK(t == typeid(Unsupported));
	std::tie(t, what) = thrown(EINVAL, &shared, 1);
	CHECK(t == typeid(InvalidArgument));
	CHECK(what == "AMUPMU_PMU_CONFIG: Invalid argument (EINVAL)");
}

namespace {

// An AMUPMU_PMU_READ_ALL buffer read with AMUPMU_PMU_READ_TIMES: for each
// CPU a struct amupmu_pmu_read_cpu followed by room struct
// amupmu_pmu_value_times (32 bytes each), the group's nr_values first.
struct ReadAllTimesBuffer {
	ReadAllTimesBuffer(std::size_t nr_cpus, std::uint32_t room_)
		: room{room_},
		  bytes(nr_cpus * (sizeof(amupmu_pmu_read_cpu) + room_ * sizeof(amupmu_pmu_value_times)), std::byte{0xaa})
	{
	}
	void put(std::size_t i, const amupmu_pmu_read_cpu& head, std::initializer_list<amupmu_pmu_value_times> values)
	{
		const std::size_t stride = sizeof(amupmu_pmu_read_cpu) + room * sizeof(amupmu_pmu_value_times);
		std::byte* entry = bytes.data() + i * stride;
		std::memcpy(entry, &head, sizeof(head));
		std::size_t n = 0;
		for (const amupmu_pmu_value_times& v : values)
			std::memcpy(entry + sizeof(head) + n++ * sizeof(v), &v, sizeof(v));
	}
	std::uint32_t room;
	std::vector<std::byte> bytes;
};

int decode_errno(const auto& f)
{
	try {
		f();
		return 0;
	} catch (const Error& e) {
		return e.errnum();
	}
}

} // namespace

TEST_CASE("READ_TIMES layouts: READ_ALL entries of 40 + 32 * room bytes, a single CPU's value array", "[host][session][multiplex]")
{
	STATIC_REQUIRE(sizeof(amupmu_pmu_value_times) == 32);
	STATIC_REQUIRE(read_all_times_entry_size(0) == sizeof(amupmu_pmu_read_cpu));
	STATIC_REQUIRE(read_all_times_entry_size(9) ==
		       sizeof(amupmu_pmu_read_cpu) + 9 * sizeof(amupmu_pmu_value_times));
	STATIC_REQUIRE(std::is_trivially_copyable_v<CpuTimes>);

	// CPUs 0 and 3 of a multiplexed group of 2 events, read with room for 3
	ReadAllTimesBuffer buf{2, 3};
	buf.put(0, {.cpu = 0, .state = AMUPMU_READ_ENABLED | AMUPMU_READ_SHARED, .time_running = 1000, .samples = 4, .lost = 1, .skid = 2},
		{{.value = 700, .overflows = 1, .time_enabled = 1000, .time_running = 700},
		 {.value = 300, .overflows = 0, .time_enabled = 1000, .time_running = 300},
		 {.value = 0xdead, .overflows = 0xdead, .time_enabled = 0xdead, .time_running = 0xdead}});
	buf.put(1, {.cpu = 3, .state = AMUPMU_READ_SHARED | AMUPMU_READ_OFFLINE, .time_running = 500, .samples = 0, .lost = 0, .skid = 0},
		{{.value = 50, .overflows = 0, .time_enabled = 500, .time_running = 0},
		 {.value = 60, .overflows = 3, .time_enabled = 500, .time_running = 500}});
	std::array<CpuReading, 3> out{};
	std::array<CpuTimes, 3> times{};
	decode_read_all_times(buf.bytes, 2, 3, 2, 1234, out, times);
	CHECK(out[0].cpu == 0);
	CHECK(out[0].nr_values == 2);
	CHECK(out[0].time_enabled == 1234);	// the command's
	CHECK(out[0].time_running == 1000);
	CHECK(out[0].state == (read_state::enabled | read_state::shared));
	CHECK(out[0].samples == 4);
	CHECK(out[0].lost == 1);
	CHECK(out[0].skid == 2);
	CHECK(out[0].values[0].value == 700);
	CHECK(out[0].values[0].overflows == 1);
	CHECK(out[0].values[1].value == 300);
	CHECK(out[0].values[2].value == 0);	// beyond the group: not read
	CHECK(times[0].events[0].enabled == 1000);
	CHECK(times[0].events[0].running == 700);
	CHECK(times[0].events[1].running == 300);
	CHECK(times[0].events[2].enabled == 0);
	CHECK(out[1].cpu == 3);	// at the stride of room with 32-byte values
	CHECK(out[1].offline());
	CHECK(out[1].values[0].value == 50);
	CHECK(out[1].values[1].value == 60);
	CHECK(out[1].values[1].overflows == 3);
	CHECK(times[1].events[0].enabled == 500);
	CHECK(times[1].events[0].running == 0);
	CHECK(times[1].events[1].running == 500);
	CHECK(out[2].cpu == 0);	// untouched
	CHECK(out[2].nr_values == 0);

	// the times may be left out
	std::array<CpuReading, 2> plain{};
	decode_read_all_times(buf.bytes, 2, 3, 2, 1, plain, {});
	CHECK(plain[1].values[1].value == 60);

	// malformed: a typed error, nothing read past the buffer
	const auto bad = [&](std::span<const std::byte> raw, std::uint32_t n, std::uint32_t room, std::uint32_t values,
			     std::span<CpuReading> into, std::span<CpuTimes> t) {
		return decode_errno([&] { decode_read_all_times(raw, n, room, values, 0, into, t); });
	};
	CHECK(bad(buf.bytes, 3, 3, 2, out, times) == EBADMSG);				// 3 entries in 2
	CHECK(bad(std::span{buf.bytes}.first(200), 2, 3, 2, out, times) == EBADMSG);	// truncated
	// the plain layout's size is not the times' (2 entries of 40 + 16 * 3 fit in 176 bytes)
	CHECK(bad(std::span{buf.bytes}.first(2 * read_all_entry_size(3)), 2, 3, 2, out, times) == EBADMSG);
	CHECK(bad(buf.bytes, 2, 3, 4, out, times) == EBADMSG);				// more values than room
	CHECK(bad(buf.bytes, 2, 3, 2, std::span{out}.first(1), times) == EBADMSG);	// out too small
	CHECK(bad(buf.bytes, 2, 3, 2, out, std::span{times}.first(1)) == EBADMSG);	// times too small
	std::vector<std::byte> huge(read_all_times_entry_size(40));
	CHECK(bad(huge, 1, 40, 33, out, times) == EBADMSG);				// more than a group holds
	CHECK(bad({}, 0, 3, 2, out, times) == 0);					// nothing to read

	// a single CPU's READ with times: nr_values struct amupmu_pmu_value_times
	const std::array<amupmu_pmu_value_times, 3> one{{{.value = 9, .overflows = 1, .time_enabled = 90, .time_running = 30},
							 {.value = 8, .overflows = 0, .time_enabled = 90, .time_running = 90},
							 {.value = 7, .overflows = 0, .time_enabled = 90, .time_running = 0}}};
	CpuReading r;
	CpuTimes t;
	decode_read_times(std::as_bytes(std::span{one}), 3, r, t);
	CHECK(r.nr_values == 3);
	CHECK(r.values[0].value == 9);
	CHECK(r.values[0].overflows == 1);
	CHECK(r.values[2].value == 7);
	CHECK(t.events[0].enabled == 90);
	CHECK(t.events[0].running == 30);
	CHECK(t.events[1].running == 90);
	CHECK(t.events[2].running == 0);
	CHECK(decode_errno([&] { decode_read_times(std::as_bytes(std::span{one}).first(64), 3, r, t); }) == EBADMSG);
	std::vector<std::byte> big(33 * sizeof(amupmu_pmu_value_times));
	CHECK(decode_errno([&] { decode_read_times(big, 33, r, t); }) == EBADMSG);
}

TEST_CASE("scale_count: perf's estimate of a multiplexed count", "[host][session][multiplex]")
{
	// ran a third of the time: three times the count, and says so
	ScaledCount c = scale_count(1000, 3000, 1000);
	CHECK(c.value == 3000);
	CHECK(c.raw == 1000);
	CHECK(c.time_enabled == 3000);
	CHECK(c.time_running == 1000);
	CHECK(c.scaled);
	CHECK(c.counted);
	CHECK(c.running_fraction() == Approx(1.0 / 3));
	// rounded down, as perf's (u64) cast
	CHECK(scale_count(10, 3, 2).value == 15);
	CHECK(scale_count(1, 3, 2).value == 1);
	// ran all the time: the count itself
	c = scale_count(1000, 3000, 3000);
	CHECK(c.value == 1000);
	CHECK_FALSE(c.scaled);
	CHECK(c.counted);
	CHECK(c.running_fraction() == 1.0);
	// never ran: perf's <not counted>, value 0
	c = scale_count(5, 3000, 0);
	CHECK(c.value == 0);
	CHECK(c.raw == 5);
	CHECK_FALSE(c.counted);
	CHECK_FALSE(c.scaled);
	CHECK(c.running_fraction() == 0.0);
	CHECK_FALSE(scale_count(0, 0, 0).counted);	// never enabled either
	CHECK(scale_count(0, 0, 0).running_fraction() == 1.0);
	// running beyond enabled (clocks read apart): not scaled
	c = scale_count(100, 90, 100);
	CHECK(c.value == 100);
	CHECK_FALSE(c.scaled);
	// the product is wider than 64 bits: exact, not through a double
	const std::uint64_t big = (std::uint64_t{1} << 60) + 3;
	CHECK(scale_count(big, 4000000000, 2000000000).value == 2 * big);
	CHECK(scale_count(big, 3, 2).value == big + big / 2);
	// beyond 64 bits: saturated
	CHECK(scale_count(std::numeric_limits<std::uint64_t>::max() / 2, 100, 1).value ==
	      std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE("require_multiplex: shared mode multiplexes, exclusive mode and old drivers say why not", "[host][session][multiplex]")
{
	CHECK_NOTHROW(require_multiplex(test::shared_info()));
	// refused (pmu_shared=N): AMUPMU_PMU_CONFIG's ENXIO says why
	CHECK_NOTHROW(require_multiplex(test::qemu_info()));
	try {
		require_multiplex(test::mock_info());
		FAIL("exclusive mode multiplexes");
	} catch (const Unsupported& e) {
		CHECK(e.errnum() == EOPNOTSUPP);
		CHECK(std::string{e.what()} ==
		      "AMUPMU_PMU_CONFIG_MULTIPLEX: amupmu owns the PMU (exclusive mode): its counters are pinned, "
		      "never multiplexed; shared mode (arm_pmu owns the PMU) multiplexes: Operation not supported "
		      "(EOPNOTSUPP)");
	}
	Info old = test::shared_info();
	old.abi_minor = 2;
	old.features &= ~static_cast<std::uint64_t>(Feature::pmu_shared);
	try {
		require_multiplex(old);
		FAIL("an ABI 2.2 driver multiplexes");
	} catch (const Unsupported& e) {
		CHECK(std::string{e.what()} == "AMUPMU_PMU_CONFIG_MULTIPLEX: this driver (ABI 2.2) cannot multiplex: "
					       "the flag is ABI 2.3's: Operation not supported (EOPNOTSUPP)");
	}
	// an old driver of the exclusive mode: the ABI is the reason
	Info old_excl = test::mock_info();
	old_excl.abi_minor = 2;
	CHECK_THROWS_WITH(require_multiplex(old_excl), Contains("(ABI 2.2) cannot multiplex"));
}

TEST_CASE("Session with Scheduling::multiplex: asks AMUPMU_INFO first; pinned is the default", "[host][session][multiplex]")
{
	const GroupConfig cfg{.events = {{.number = 0x08}}, .cpus = {0}};
	CHECK_THROWS_AS(Session::open(cfg, Scheduling::multiplex, "/nonexistent/amupmu"), DeviceMissing);
	try {
		(void)Session::open(cfg, Scheduling::multiplex, "/dev/null");
		FAIL("no exception");
	} catch (const Error& e) {
		// the driver's ABI and mode come first: AMUPMU_INFO fails on /dev/null
		CHECK((e.errnum() == ENOTTY || e.errnum() == ENOSYS));
		CHECK_THAT(std::string{e.what()}, Contains("AMUPMU_INFO"));
	}
	try {
		(void)Session::open(cfg, Scheduling::pinned, "/dev/null");
		FAIL("no exception");
	} catch (const Error& e) {
		CHECK_THAT(std::string{e.what()}, Contains("AMUPMU_PMU_CONFIG"));
	}
	CHECK_THROWS_AS(Session::open(GroupConfig{.events = {}, .cpus = {0}}, Scheduling::multiplex, "/dev/null"),
			InvalidArgument);
	// the new flags live in the padding: the libamupmu.so.1 layouts
	STATIC_REQUIRE(sizeof(Session) == 80);
	STATIC_REQUIRE(sizeof(GroupReading) == 72);
}
