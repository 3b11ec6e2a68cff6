// SPDX-License-Identifier: GPL-2.0
#include <amupmu/error.hpp>

#include <catch2/catch.hpp>

#include <cerrno>
#include <functional>
#include <typeinfo>

using namespace amupmu;

TEST_CASE("errno names", "[host][error]")
{
	CHECK(errno_name(EINVAL) == "EINVAL");
	CHECK(errno_name(ENOENT) == "ENOENT");
	CHECK(errno_name(ENOTTY) == "ENOTTY");
	CHECK(errno_name(E2BIG) == "E2BIG");
	CHECK(errno_name(EOPNOTSUPP) == "EOPNOTSUPP");
	CHECK(errno_name(EBUSY) == "EBUSY");
	CHECK(errno_name(EACCES) == "EACCES");
	CHECK(errno_name(ENODEV) == "ENODEV");
	CHECK(errno_name(EFAULT) == "EFAULT");
	CHECK(errno_name(4095) == "errno 4095");
	CHECK(errno_name(-1) == "errno -1");
	// from glibc's table, not a list of our own: names no hand-written
	// list here had, and the aliases under their first name
	CHECK(errno_name(ECONNRESET) == "ECONNRESET");
	CHECK(errno_name(EHWPOISON) == "EHWPOISON");
	CHECK(errno_name(EWOULDBLOCK) == "EAGAIN");
	CHECK(errno_name(ENOTSUP) == "EOPNOTSUPP");
	CHECK(errno_text(EINVAL) == "Invalid argument (EINVAL)");
}

TEST_CASE("Error::what() names the operation and the errno", "[host][error]")
{
	const Error e{"AMUPMU_INFO", EINVAL};
	CHECK(std::string_view{e.what()} == "AMUPMU_INFO: Invalid argument (EINVAL)");
	CHECK(e.errnum() == EINVAL);
	CHECK(e.operation() == "AMUPMU_INFO");

	const DeviceMissing missing{"/dev/amupmu", ENOENT};
	CHECK(std::string_view{missing.what()} == "/dev/amupmu: No such file or directory (ENOENT)");
}

TEST_CASE("AbiMismatch", "[host][error]")
{
	const AbiMismatch e{"AMUPMU_INFO", 1, 1};
	CHECK(std::string_view{e.what()} ==
	      "AMUPMU_INFO: driver ABI 1.1 is incompatible with libamupmu's ABI 2.2 (EPROTO)");
	CHECK(e.errnum() == EPROTO);
	CHECK(e.driver_major() == 1);
	CHECK(e.driver_minor() == 1);
	const Error& base = e;
	CHECK(base.operation() == "AMUPMU_INFO");
}

TEST_CASE("ENXIO: the kernel owns the PMU, not busy", "[host][error]")
{
	try {
		throw_error("AMUPMU_PMU_CONFIG", ENXIO);
	} catch (const Busy&) {
		FAIL("ENXIO reported as Busy: it is permanent, EBUSY is not");
	} catch (const OwnedByKernel& e) {
		CHECK(std::string_view{e.what()} == "AMUPMU_PMU_CONFIG: PMU owned by the kernel's arm_pmu (ENXIO)");
		CHECK(e.errnum() == ENXIO);
		CHECK(e.operation() == "AMUPMU_PMU_CONFIG");
	}
	CHECK_THROWS_WITH(throw_error("AMUPMU_PMU_CONFIG (0 counters free, 1 asked)", EBUSY),
			  "AMUPMU_PMU_CONFIG (0 counters free, 1 asked): Device or resource busy (EBUSY)");
	CHECK(errno_name(ENXIO) == "ENXIO");
}

namespace {

// The exact dynamic type throw_error() raises, and its errno.
struct Thrown {
	const std::type_info* type = nullptr;
	int err = 0;
};

Thrown thrown_by(int err, ErrorContext context)
{
	try {
		throw_error("op", err, context);
	} catch (const Error& e) {
		return Thrown{&typeid(e), e.errnum()};
	}
	return {};
}

} // namespace

TEST_CASE("throw_error maps errno to the failure-mode type", "[host][error]")
{
	using C = ErrorContext;
	struct Row {
		int err;
		ErrorContext context;
		const std::type_info& type;
	};
	const Row rows[] = {
		{ENOENT, C::open, typeid(DeviceMissing)},
		{ENODEV, C::open, typeid(DeviceMissing)},
		{ENODEV, C::command, typeid(Unavailable)},
		{ENOENT, C::command, typeid(Error)},
		{EACCES, C::open, typeid(PermissionDenied)},
		{EPERM, C::command, typeid(PermissionDenied)},
		{EOPNOTSUPP, C::command, typeid(Unsupported)},
		{EBUSY, C::command, typeid(Busy)},
		{ENXIO, C::command, typeid(OwnedByKernel)},
		{ENXIO, C::open, typeid(DeviceMissing)},	// a device node without its driver
		{EINVAL, C::command, typeid(InvalidArgument)},
		{E2BIG, C::command, typeid(Error)},
		{ENOTTY, C::command, typeid(Error)},
		{EFAULT, C::command, typeid(Error)},
	};
	for (const Row& row : rows) {
		CAPTURE(errno_name(row.err), row.context == C::open);
		const Thrown t = thrown_by(row.err, row.context);
		REQUIRE(t.type != nullptr);
		CHECK(*t.type == row.type);
		CHECK(t.err == row.err);
	}
}
