// SPDX-License-Identifier: GPL-2.0
#include <amupmu/error.hpp>
#include <amupmu/events.hpp>
#include <amupmu/report/json.hpp>
#include <amupmu/spe_device.hpp>
#include <amupmu/spe_knobs.hpp>
#include <amupmu/spe_session.hpp>

#include <catch2/catch.hpp>

#include <cerrno>
#include <functional>
#include <optional>
#include <string>
#include <system_error>
#include <type_traits>
#include <typeinfo>

using namespace amupmu;
using namespace amupmu::report;

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
	      "AMUPMU_INFO: driver ABI 1.1 is incompatible with libamupmu's ABI 2.5 (EPROTO)");
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
		// ENXIO means shared mode is off (ABI 2.3: module parameter pmu_shared)
		CHECK(std::string_view{e.what()} == "AMUPMU_PMU_CONFIG: PMU owned by the kernel and shared mode is "
						    "off (module parameter pmu_shared=N, or no arm_pmu registered "
						    "with perf core) (ENXIO)");
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

// ---------------------------------------------------------------- std::system_error (issue 14)

TEST_CASE("Error is a std::system_error with the errno in the generic category", "[host][error]")
{
	STATIC_REQUIRE(std::is_base_of_v<std::system_error, Error>);
	STATIC_REQUIRE(std::is_base_of_v<std::system_error, UnknownEvent>);
	STATIC_REQUIRE(std::is_base_of_v<std::system_error, AbiMismatch>);
	// an exception's copy must not throw (it is copied while unwinding)
	STATIC_REQUIRE(std::is_nothrow_copy_constructible_v<Error>);
	STATIC_REQUIRE(std::is_nothrow_copy_constructible_v<InvalidArgument>);

	const Error e{"AMUPMU_INFO", EINVAL};
	CHECK(e.code() == std::error_code{EINVAL, std::generic_category()});
	CHECK(e.code() == std::errc::invalid_argument);
	CHECK(e.errnum() == EINVAL);
	// the library's wording, not system_error's: tools and tests match it
	const std::system_error& sys = e;
	CHECK(std::string_view{sys.what()} == "AMUPMU_INFO: Invalid argument (EINVAL)");
	const std::exception& any = e;
	CHECK(std::string_view{any.what()} == "AMUPMU_INFO: Invalid argument (EINVAL)");

	const AbiMismatch abi{"AMUPMU_INFO", 1, 1};
	CHECK(abi.code() == std::errc::protocol_error);
	CHECK(std::string_view{abi.what()} ==
	      "AMUPMU_INFO: driver ABI 1.1 is incompatible with libamupmu's ABI 2.5 (EPROTO)");
	const OwnedByKernel owned{"AMUPMU_SPE_CONFIG", ENXIO, "SPE owned by the kernel's arm_spe_pmu"};
	CHECK(owned.code() == std::errc::no_such_device_or_address);
	CHECK(std::string_view{owned.what()} == "AMUPMU_SPE_CONFIG: SPE owned by the kernel's arm_spe_pmu (ENXIO)");

	// a copy keeps the text after the original is gone
	std::optional<Error> copy;
	{
		const Busy busy{"AMUPMU_PMU_CONFIG", EBUSY};
		copy.emplace(busy);
	}
	CHECK(std::string_view{copy->what()} == "AMUPMU_PMU_CONFIG: Device or resource busy (EBUSY)");
	CHECK(copy->operation() == "AMUPMU_PMU_CONFIG");
	CHECK(copy->code() == std::errc::device_or_resource_busy);
}

TEST_CASE("throw_error: every type caught as std::system_error, code() the errno", "[host][error]")
{
	for (const int err : {ENOENT, ENODEV, EACCES, EPERM, ENXIO, EOPNOTSUPP, EBUSY, EINVAL, EIO, EBADMSG}) {
		for (const ErrorContext ctx : {ErrorContext::open, ErrorContext::command}) {
			CAPTURE(err, static_cast<int>(ctx));
			try {
				throw_error("op", err, ctx);
			} catch (const std::system_error& e) {
				CHECK(e.code().value() == err);
				CHECK(e.code().category() == std::generic_category());
				CHECK_THAT(e.what(), Catch::StartsWith("op: "));
				continue;
			}
			FAIL("not a std::system_error");
		}
	}
}

TEST_CASE("No standard exception escapes: misuse and bad input are typed errors", "[host][error]")
{
	// JsonWriter's misuse was std::logic_error
	JsonWriter w;
	CHECK_THROWS_MATCHES(w.str(), InvalidArgument,
			     Catch::Matchers::Message("JsonWriter: document incomplete: Invalid argument (EINVAL)"));
	w.begin_object();
	CHECK_THROWS_AS(w.value(1), InvalidArgument);
	CHECK_THROWS_AS(w.end_array(), std::system_error);

	// the parsers: numbers out of range, bad text
	CHECK_THROWS_AS(parse_event("r12345", 0), InvalidArgument);
	CHECK_THROWS_AS(parse_event("r", 0), UnknownEvent);
	CHECK_THROWS_AS(parse_event("cycles:z", 0), InvalidArgument);
	CHECK_THROWS_AS(parse_event(":u", 0), InvalidArgument);
	CHECK_THROWS_AS(parse_event_list("cycles,", 0), InvalidArgument);
	CHECK_THROWS_AS(parse_modifiers(""), InvalidArgument);
	SpeConfig c;
	CHECK_THROWS_AS(parse_spe_types("ld,zz", c), InvalidArgument);
	CHECK_THROWS_AS(parse_spe_events("retired,,"), InvalidArgument);
	c.interval = 100;
	CHECK_THROWS_AS((void)spe_driver_config(c), InvalidArgument);

	// sysfs and debugfs paths that the filesystem library would throw on
	// (a name too long for stat): the library's errors
	const std::string long_dir = "/" + std::string(5000, 'x');
	CHECK_THROWS_AS((void)read_spe_knob(long_dir, "pmsfcr_type"), Error);
	CHECK_NOTHROW((void)spe_devices(long_dir));
}
