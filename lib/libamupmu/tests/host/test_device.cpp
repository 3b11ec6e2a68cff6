// SPDX-License-Identifier: GPL-2.0
//
// Device without the driver: RAII and move semantics on /dev/null, errors of
// open() and of the ioctl on a file that is not /dev/amupmu.
#include <amupmu/device.hpp>
#include <amupmu/error.hpp>

#include <catch2/catch.hpp>

#include <cerrno>
#include <string>
#include <type_traits>

#include <fcntl.h>
#include <linux/amupmu.h>
#include <sys/ioctl.h>
#include <unistd.h>

using namespace amupmu;

namespace {

bool fd_is_open(int fd)
{
	return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

} // namespace

TEST_CASE("Device is a move-only handle", "[host][device]")
{
	STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<Device>);
	STATIC_REQUIRE_FALSE(std::is_copy_assignable_v<Device>);
	STATIC_REQUIRE(std::is_nothrow_move_constructible_v<Device>);
	STATIC_REQUIRE(std::is_nothrow_move_assignable_v<Device>);
	STATIC_REQUIRE(std::is_nothrow_destructible_v<Device>);
}

TEST_CASE("Device owns its descriptor", "[host][device]")
{
	Device a = Device::open("/dev/null");
	REQUIRE(a.valid());
	const int fd = a.fd();
	CHECK(fd_is_open(fd));
	CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);

	SECTION("move construction empties the source")
	{
		Device b{std::move(a)};
		CHECK(b.fd() == fd);
		CHECK_FALSE(a.valid());	// NOLINT(bugprone-use-after-move): the moved-from state is specified
		CHECK(a.fd() == -1);	// NOLINT(bugprone-use-after-move)
	}
	SECTION("move assignment closes the old descriptor")
	{
		Device c = Device::open("/dev/null");
		const int old = c.fd();
		c = std::move(a);
		CHECK(c.fd() == fd);
		CHECK_FALSE(fd_is_open(old));
		CHECK_FALSE(a.valid());	// NOLINT(bugprone-use-after-move)
	}
	SECTION("self-move keeps the descriptor")
	{
		Device& alias = a;
		a = std::move(alias);
		CHECK(a.fd() == fd);
		CHECK(fd_is_open(fd));
	}
	SECTION("destruction closes")
	{
		int gone_fd = -1;
		{
			const Device gone = Device::open("/dev/null");
			gone_fd = gone.fd();
		}
		CHECK_FALSE(fd_is_open(gone_fd));
	}
	SECTION("release hands the descriptor over")
	{
		const int raw = a.release();
		CHECK(raw == fd);
		CHECK_FALSE(a.valid());
		CHECK(fd_is_open(raw));
		CHECK(::close(raw) == 0);
	}
	SECTION("close() is idempotent")
	{
		a.close();
		a.close();
		CHECK_FALSE(a.valid());
		CHECK_FALSE(fd_is_open(fd));
	}
}

TEST_CASE("Device::open of a missing node", "[host][device]")
{
	constexpr std::string_view path = "/nonexistent/amupmu";
	try {
		(void)Device::open(path);
		FAIL("Device::open did not throw");
	} catch (const DeviceMissing& e) {
		CHECK(e.errnum() == ENOENT);
		CHECK(e.operation() == path);
		CHECK(std::string_view{e.what()} == "/nonexistent/amupmu: No such file or directory (ENOENT)");
	}

	int err = 0;
	CHECK_FALSE(Device::try_open(path, &err).has_value());
	CHECK(err == ENOENT);
	CHECK_FALSE(Device::try_open(path).has_value());
}

TEST_CASE("Device::open of something else fails with its errno", "[host][device]")
{
	// A directory cannot be opened O_RDWR: EISDIR is no "device missing".
	try {
		(void)Device::open("/");
		FAIL("Device::open(\"/\") did not throw");
	} catch (const DeviceMissing&) {
		FAIL("EISDIR reported as DeviceMissing");
	} catch (const Error& e) {
		CHECK(e.errnum() == EISDIR);
	}
}

TEST_CASE("Device::info on a file that is not /dev/amupmu", "[host][device]")
{
	const Device dev = Device::open("/dev/null");

	// What the system answers to AMUPMU_INFO on /dev/null: ENOTTY from
	// Linux, ENOSYS from qemu-user, which does not forward unknown ioctls.
	amupmu_info req{};
	req.size = sizeof(req);
	REQUIRE(::ioctl(dev.fd(), AMUPMU_INFO, &req) == -1);
	const int expected = errno;
	CHECK((expected == ENOTTY || expected == ENOSYS));

	try {
		(void)dev.info();
		FAIL("AMUPMU_INFO on /dev/null did not throw");
	} catch (const Error& e) {
		CHECK(e.errnum() == expected);
		CHECK(e.operation() == "AMUPMU_INFO");
		CHECK(std::string{e.what()} == "AMUPMU_INFO: " + errno_text(expected));
	}
}
