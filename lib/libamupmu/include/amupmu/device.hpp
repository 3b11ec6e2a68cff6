// SPDX-License-Identifier: LGPL-2.1-or-later
//
// amupmu::Device: the open /dev/amupmu file descriptor.
#ifndef AMUPMU_DEVICE_HPP
#define AMUPMU_DEVICE_HPP

#include <amupmu/info.hpp>

#include <optional>
#include <string_view>

namespace amupmu {

/// Move-only owner of a /dev/amupmu file descriptor; closes it on
/// destruction. A moved-from Device is invalid (fd() == -1).
///
/// Thread safety: one object per thread; distinct objects may be used
/// concurrently. The const members may also be called from several
/// threads at once (each is one ioctl on the file, which the driver
/// serializes, and writes only the caller's own output); moving or
/// destroying the object needs it to itself.
class [[nodiscard]] Device {
public:
	/// Opens path. Throws DeviceMissing (ENOENT/ENODEV/ENXIO: module not loaded),
	/// PermissionDenied (EACCES/EPERM) or Error.
	[[nodiscard]] static Device open(std::string_view path = default_device_path);

	/// Like open() but returns nullopt on failure and stores errno in *err
	/// (when err is not null): for callers to whom a missing device is normal.
	[[nodiscard]] static std::optional<Device> try_open(std::string_view path = default_device_path,
							    int* err = nullptr);

	/// Takes ownership of an already open descriptor.
	[[nodiscard]] static Device adopt(int fd) noexcept { return Device{fd}; }

	Device(const Device&) = delete;
	Device& operator=(const Device&) = delete;
	Device(Device&& other) noexcept;
	Device& operator=(Device&& other) noexcept;
	~Device();

	[[nodiscard]] int fd() const noexcept { return fd_; }
	[[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
	explicit operator bool() const noexcept { return valid(); }

	/// Gives up ownership: returns the descriptor, leaves *this invalid.
	[[nodiscard]] int release() noexcept;
	/// Closes the descriptor now (no-op when invalid).
	void close() noexcept;

	/// AMUPMU_INFO: the driver's ABI version, features, PMU owner, the
	/// kernel's exception level, the sample clock and one CpuInfo per
	/// possible CPU number (with its free counters). Asks twice: first for the number of
	/// CPUs, then for the entries. Throws AbiMismatch when the driver's
	/// major differs from abi_major, another Error when the ioctl fails.
	[[nodiscard]] Info info() const;

private:
	explicit Device(int fd) noexcept : fd_{fd} {}

	int fd_ = -1;
};

} // namespace amupmu

#endif
