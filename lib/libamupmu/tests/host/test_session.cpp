// SPDX-License-Identifier: GPL-2.0
//
// Session without the driver [host]: typed errors from a missing node and
// from a file that is not /dev/amupmu; the handle is move-only.
#include <amupmu/error.hpp>
#include <amupmu/session.hpp>

#include <catch2/catch.hpp>

#include <cerrno>
#include <type_traits>

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
