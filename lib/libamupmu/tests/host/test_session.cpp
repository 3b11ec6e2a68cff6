// SPDX-License-Identifier: GPL-2.0
//
// Session without the driver [host]: typed errors from a missing node and
// from a file that is not /dev/amupmu; the handle is move-only; the
// AMUPMU_PMU_READ_ALL buffer as the UAPI header lays it out.
#include <amupmu/error.hpp>
#include <amupmu/session.hpp>

#include <linux/amupmu.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <type_traits>
#include <vector>

using namespace amupmu;
using Catch::Matchers::Contains;

TEST_CASE("Session is a move-only handle; readings are fixed-size", "[host][session]")
{
	STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<Session>);
	STATIC_REQUIRE_FALSE(std::is_copy_assignable_v<Session>);
	STATIC_REQUIRE(std::is_nothrow_move_constructible_v<Session>);
	STATIC_REQUIRE(std::is_trivially_copyable_v<CpuReading>);
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
