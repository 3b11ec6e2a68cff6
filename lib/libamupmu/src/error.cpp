// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/error.hpp>
#include <amupmu/info.hpp>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <memory>
#include <utility>

namespace amupmu {

std::string errno_name(int err)
{
	// glibc's table (2.32+): every errno the C library knows, the
	// aliases (EWOULDBLOCK, ENOTSUP, EDEADLOCK) under their first name
	const char* name = ::strerrorname_np(err);
	return name ? std::string{name} : "errno " + std::to_string(err);
}

std::string errno_text(int err)
{
	// std::generic_category().message() is strerror without its
	// thread-safety problem.
	return std::generic_category().message(err) + " (" + errno_name(err) + ")";
}

std::shared_ptr<const Error::Text> Error::text_of(std::string operation, int err)
{
	std::string what = operation + ": " + errno_text(err);
	return std::make_shared<const Text>(Text{std::move(operation), std::move(what)});
}

Error::Error(std::string operation, int err) : Error{text_of(std::move(operation), err), err}
{
}

Error::Error(std::string operation, int err, const std::string& what)
	: Error{std::make_shared<const Text>(Text{std::move(operation), what}), err}
{
}

// std::system_error's own what() is unspecified text ("<what>: <message>"
// in libstdc++); what() returns the library's message as it always was,
// which tests and tools match. The base keeps the same text for a caller
// who slices the exception into a std::system_error.
Error::Error(std::shared_ptr<const Text> text, int err)
	: std::system_error{std::error_code{err, std::generic_category()}, text->what}, text_{std::move(text)}
{
}

AbiMismatch::AbiMismatch(const std::string& operation, std::uint32_t driver_major,
			 std::uint32_t driver_minor)
	: Error{operation, EPROTO,
		operation + ": driver ABI " + std::to_string(driver_major) + "." +
			std::to_string(driver_minor) + " is incompatible with libamupmu's ABI " +
			std::to_string(abi_major) + "." + std::to_string(abi_minor) + " (" +
			errno_name(EPROTO) + ")"},
	  driver_major_{driver_major}, driver_minor_{driver_minor}
{
}

OwnedByKernel::OwnedByKernel(const std::string& operation, int err)
	: OwnedByKernel{operation, err,
			"PMU owned by the kernel and shared mode is off (module parameter pmu_shared=N, or no "
			"arm_pmu registered with perf core)"}
{
}

OwnedByKernel::OwnedByKernel(const std::string& operation, int err, const std::string& owner_text)
	: Error{operation, err, operation + ": " + owner_text + " (" + errno_name(err) + ")"}
{
}

void throw_error(std::string operation, int err, ErrorContext context)
{
	switch (err) {
	case ENOENT:
		if (context == ErrorContext::open)
			throw DeviceMissing{std::move(operation), err};
		break;
	case ENODEV:
		if (context == ErrorContext::open)
			throw DeviceMissing{std::move(operation), err};
		throw Unavailable{std::move(operation), err};
	case EACCES:
	case EPERM:
		throw PermissionDenied{std::move(operation), err};
	case ENXIO:
		// open(2) of a character device whose driver is gone
		if (context == ErrorContext::open)
			throw DeviceMissing{std::move(operation), err};
		throw OwnedByKernel{operation, err};
	case EOPNOTSUPP:
		throw Unsupported{std::move(operation), err};
	case EBUSY:
		throw Busy{std::move(operation), err};
	case EINVAL:
		throw InvalidArgument{std::move(operation), err};
	default:
		break;
	}
	throw Error{std::move(operation), err};
}

} // namespace amupmu
