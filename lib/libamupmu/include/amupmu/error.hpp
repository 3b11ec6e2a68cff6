// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Exceptions thrown by libamupmu: one type per failure mode of the driver's
// errno contract (include/uapi/linux/amupmu.h), each carrying the errno and
// the operation that failed. Every one derives from std::system_error,
// with code() the errno in std::generic_category(): callers may catch
// amupmu::Error, std::system_error or std::exception.
//
// The library throws nothing else of its own: what the standard library
// would throw inside it (std::filesystem errors, bad input to a parser) is
// prevented or turned into an Error. Left to propagate are std::bad_alloc
// and what a caller's own callback throws.
#ifndef AMUPMU_ERROR_HPP
#define AMUPMU_ERROR_HPP

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

namespace amupmu {

/// An errno value's symbolic name ("EINVAL"), or "errno <n>" when unknown.
[[nodiscard]] std::string errno_name(int err);

/// An errno value in words: "Invalid argument (EINVAL)".
[[nodiscard]] std::string errno_text(int err);

/// Base of every libamupmu exception. what() is "<operation>: <errno_text>",
/// e.g. "AMUPMU_INFO: Invalid argument (EINVAL)" (the library's own
/// wording, not std::system_error's); code() is
/// std::error_code(errnum(), std::generic_category()), so
/// e.code() == std::errc::invalid_argument works. Copies share the
/// message and never throw. Immutable: may be read from any thread.
class Error : public std::system_error {
public:
	Error(std::string operation, int err);
	/// The errno value.
	[[nodiscard]] int errnum() const noexcept { return code().value(); }
	/// What failed, e.g. "AMUPMU_INFO".
	[[nodiscard]] const std::string& operation() const noexcept { return text_->operation; }
	[[nodiscard]] const char* what() const noexcept override { return text_->what.c_str(); }

protected:
	/// For subclasses that word their own message.
	Error(std::string operation, int err, const std::string& what);

private:
	struct Text {
		std::string operation;
		std::string what;
	};
	Error(std::shared_ptr<const Text> text, int err);
	static std::shared_ptr<const Text> text_of(std::string operation, int err);

	std::shared_ptr<const Text> text_;
};

/// ENOENT / ENODEV when opening: the device node (the module) is not there.
class DeviceMissing : public Error { using Error::Error; };
/// EACCES / EPERM: the caller lacks the privilege (CAP_PERFMON) or file access.
class PermissionDenied : public Error { using Error::Error; };
/// EOPNOTSUPP: the hardware lacks the unit or feature asked for.
class Unsupported : public Error { using Error::Error; };
/// EBUSY: in use now (too few free counters on a CPU of the set, or the
/// session already holds a group); it may succeed later.
class Busy : public Error { using Error::Error; };
/// ENXIO on a command: the kernel owns the unit. For the PMU: arm_pmu owns
/// it and shared mode is off (PmuMode::refused); a devicetree that hands
/// the PMU to amupmu, or pmu_shared=Y, changes that. what() is
/// "<operation>: <owner_text> (ENXIO)"; without owner_text, "PMU owned by
/// the kernel and shared mode is off (...)".
class OwnedByKernel : public Error {
public:
	OwnedByKernel(const std::string& operation, int err);
	OwnedByKernel(const std::string& operation, int err, const std::string& owner_text);
};
/// EINVAL: bad size, flags or values.
class InvalidArgument : public Error { using Error::Error; };
/// ENODEV on a command: the CPU is offline / not possible, or the unit is absent.
class Unavailable : public Error { using Error::Error; };

/// The driver's ABI major differs from the one this library was built for.
/// errnum() is EPROTO.
class AbiMismatch : public Error {
public:
	AbiMismatch(const std::string& operation, std::uint32_t driver_major, std::uint32_t driver_minor);
	[[nodiscard]] std::uint32_t driver_major() const noexcept { return driver_major_; }
	[[nodiscard]] std::uint32_t driver_minor() const noexcept { return driver_minor_; }

private:
	std::uint32_t driver_major_;
	std::uint32_t driver_minor_;
};

/// Where an errno came from: on open(2), ENODEV and ENXIO mean no driver
/// behind the node; on an ioctl, a CPU offline and a unit the kernel owns.
enum class ErrorContext { open, command };

/// Throws the Error subclass that matches err in that context, with
/// operation in its what().
[[noreturn]] void throw_error(std::string operation, int err,
			      ErrorContext context = ErrorContext::command);

} // namespace amupmu

#endif
