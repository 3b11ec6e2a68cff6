// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Claiming the stock SPE platform device for amupmu, and giving it back,
// through sysfs: the steps of Documentation/admin-guide/amupmu.rst,
// "Claiming the SPE device". The SPE device is the platform device of a
// devicetree node compatible with "arm,statistical-profiling-extension-v1"
// or ACPI's "arm,spe-v1" device; amupmu's driver for it is "amupmu-spe",
// which binds only to a device whose driver_override names it.
//
// Every function takes the sysfs root ("/sys" on a running system; a
// directory tree of the same shape in tests) and needs root for its writes.
// None unloads the kernel's arm_spe_pmu: a device that driver holds is
// refused (SpeOwnedByDriver).
#ifndef AMUPMU_SPE_DEVICE_HPP
#define AMUPMU_SPE_DEVICE_HPP

#include <amupmu/error.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

/// amupmu's SPE platform driver.
inline constexpr std::string_view spe_driver_name = "amupmu-spe";
/// The kernel's SPE driver (drivers/perf/arm_spe_pmu.c).
inline constexpr std::string_view spe_kernel_driver_name = "arm_spe_pmu";

/// One SPE platform device as sysfs shows it.
struct SpeDevice {
	std::string name;		///< e.g. "spe", "arm,spe-v1"
	std::string driver;		///< bound driver's name; "" when unbound
	std::string driver_override;	///< "" when none ("(null)" in sysfs)
	bool acpi = false;		///< ACPI's arm,spe-v1 device, not a devicetree node

	[[nodiscard]] bool claimed() const noexcept { return driver == spe_driver_name; }
};

/// The SPE platform devices under sysfs/bus/platform/devices, sorted by name.
[[nodiscard]] std::vector<SpeDevice> spe_devices(const std::filesystem::path& sysfs = "/sys");

/// There is no SPE device (errnum ENODEV), or none of that name.
class SpeDeviceMissing : public Error {
public:
	SpeDeviceMissing(const std::string& operation, const std::string& what);
};

/// Several SPE devices and none named (errnum EINVAL).
class SpeDeviceAmbiguous : public Error {
public:
	SpeDeviceAmbiguous(const std::string& operation, const std::string& what);
};

/// The device is bound to another driver (errnum EBUSY); the kernel's
/// arm_spe_pmu, usually. what() says how to free it; amupmu never does.
class SpeOwnedByDriver : public Error {
public:
	SpeOwnedByDriver(const std::string& device, const std::string& driver);
	[[nodiscard]] const std::string& driver() const noexcept { return driver_; }

private:
	std::string driver_;
};

/// The bind of the device to amupmu-spe failed: errnum() is the bind
/// write's errno, what() "bind DEV: <errno text> -- <what it means>".
/// driver_override was reset before this is thrown.
class SpeBindFailed : public Error {
public:
	SpeBindFailed(const std::string& device, int err);
};

/// What a bind of amupmu-spe's errno means ("" for one it never returns).
[[nodiscard]] std::string_view spe_bind_errno_meaning(int err) noexcept;

enum class SpeClaim {
	claimed,		///< bound to amupmu-spe now
	already_claimed,	///< it was amupmu's already: nothing written
};

enum class SpeRelease {
	released,	///< unbound from amupmu-spe, driver_override cleared
	not_claimed,	///< it was not amupmu's: at most a stale driver_override cleared
};

/// What spe_claim() did, and to which device (as it was before).
struct SpeClaimResult {
	SpeClaim outcome = SpeClaim::claimed;
	SpeDevice device;
};

/// What spe_release() did, and to which device (as it was before).
struct SpeReleaseResult {
	SpeRelease outcome = SpeRelease::released;
	SpeDevice device;
};

/// Claim an SPE device for amupmu: write "amupmu-spe" to its
/// driver_override and its name to drivers/amupmu-spe/bind. device: its
/// name, or "" for the only SPE device there is.
/// Throws DeviceMissing (ENOENT: drivers/amupmu-spe absent, the module is
/// not loaded), SpeDeviceMissing, SpeDeviceAmbiguous, SpeOwnedByDriver,
/// PermissionDenied (EACCES/EPERM on a write: not root), SpeBindFailed, or
/// Error for another failed write.
SpeClaimResult spe_claim(std::string_view device = {}, const std::filesystem::path& sysfs = "/sys");

/// Give a claimed SPE device back: write its name to
/// drivers/amupmu-spe/unbind and clear its driver_override (write "\n").
/// Nothing else binds it then until its driver is registered again (modprobe
/// arm_spe_pmu) or it is written to bus/platform/drivers_probe.
/// Throws as spe_claim() does, bar SpeOwnedByDriver and SpeBindFailed.
SpeReleaseResult spe_release(std::string_view device = {}, const std::filesystem::path& sysfs = "/sys");

} // namespace amupmu

#endif
