// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/error.hpp>
#include <amupmu/info.hpp>

#include <cerrno>
#include <system_error>
#include <utility>

namespace amupmu {

namespace {

// Linux aliases (EWOULDBLOCK, ENOTSUP, EDEADLOCK) share a value with the
// name listed here, so they need no entry of their own.
std::string_view known_errno_name(int err) noexcept
{
#define AMUPMU_ERRNO(e) \
	case e:         \
		return #e
	switch (err) {
		AMUPMU_ERRNO(EPERM);
		AMUPMU_ERRNO(ENOENT);
		AMUPMU_ERRNO(ESRCH);
		AMUPMU_ERRNO(EINTR);
		AMUPMU_ERRNO(EIO);
		AMUPMU_ERRNO(ENXIO);
		AMUPMU_ERRNO(E2BIG);
		AMUPMU_ERRNO(ENOEXEC);
		AMUPMU_ERRNO(EBADF);
		AMUPMU_ERRNO(ECHILD);
		AMUPMU_ERRNO(EAGAIN);
		AMUPMU_ERRNO(ENOMEM);
		AMUPMU_ERRNO(EACCES);
		AMUPMU_ERRNO(EFAULT);
		AMUPMU_ERRNO(EBUSY);
		AMUPMU_ERRNO(EEXIST);
		AMUPMU_ERRNO(EXDEV);
		AMUPMU_ERRNO(ENODEV);
		AMUPMU_ERRNO(ENOTDIR);
		AMUPMU_ERRNO(EISDIR);
		AMUPMU_ERRNO(EINVAL);
		AMUPMU_ERRNO(ENFILE);
		AMUPMU_ERRNO(EMFILE);
		AMUPMU_ERRNO(ENOTTY);
		AMUPMU_ERRNO(ETXTBSY);
		AMUPMU_ERRNO(EFBIG);
		AMUPMU_ERRNO(ENOSPC);
		AMUPMU_ERRNO(ESPIPE);
		AMUPMU_ERRNO(EROFS);
		AMUPMU_ERRNO(EMLINK);
		AMUPMU_ERRNO(EPIPE);
		AMUPMU_ERRNO(EDOM);
		AMUPMU_ERRNO(ERANGE);
		AMUPMU_ERRNO(EDEADLK);
		AMUPMU_ERRNO(ENAMETOOLONG);
		AMUPMU_ERRNO(ENOSYS);
		AMUPMU_ERRNO(ENOTEMPTY);
		AMUPMU_ERRNO(ELOOP);
		AMUPMU_ERRNO(ENODATA);
		AMUPMU_ERRNO(ETIME);
		AMUPMU_ERRNO(EPROTO);
		AMUPMU_ERRNO(EOVERFLOW);
		AMUPMU_ERRNO(EOPNOTSUPP);
		AMUPMU_ERRNO(ETIMEDOUT);
		AMUPMU_ERRNO(ECANCELED);
		AMUPMU_ERRNO(EPROTONOSUPPORT);
	default:
		return {};
	}
#undef AMUPMU_ERRNO
}

} // namespace

std::string errno_name(int err)
{
	const std::string_view name = known_errno_name(err);
	return name.empty() ? "errno " + std::to_string(err) : std::string{name};
}

std::string errno_text(int err)
{
	// std::generic_category().message() is strerror without its
	// thread-safety problem.
	return std::generic_category().message(err) + " (" + errno_name(err) + ")";
}

Error::Error(std::string operation, int err)
	// The base is initialised first, before operation_ takes the string.
	: std::runtime_error{operation + ": " + errno_text(err)},
	  operation_{std::move(operation)}, errnum_{err}
{
}

Error::Error(std::string operation, int err, const std::string& what)
	: std::runtime_error{what}, operation_{std::move(operation)}, errnum_{err}
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
	: OwnedByKernel{operation, err, "PMU owned by the kernel's arm_pmu"}
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
