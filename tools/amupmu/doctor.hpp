// SPDX-License-Identifier: GPL-2.0
//
// amupmu doctor's checks: why amupmu counts nothing, or why SPE or the AMU
// is missing, from what the running system publishes under a root
// directory ("/"; a fake sysfs and procfs tree in the tests) and from
// AMUPMU_INFO where the device node answered. Walked in the order of
// report::doctor_units, per unit and per CPU; each says ok, warn, fail or
// skip, why, and the command that fixes it where one exists.
//
// What is read under the root: proc/sys/kernel/osrelease, proc/self/status
// (CapEff), proc/self/uid_map and proc/{self,1}/ns/user (a child user
// namespace), proc/sys/kernel/perf_event_paranoid, proc/cmdline (kpti=,
// nokaslr); sys/module/{amupmu,arm_spe_pmu},
// sys/module/module/parameters/sig_enforce, sys/kernel/security/lockdown,
// lib/modules/RELEASE/ (an amupmu.ko, build/), usr/src/amupmu-*/ (the DKMS
// source); dev/amupmu's mode and its group's name (etc/group);
// sys/class/misc/amupmu/ (the driver's sysfs, when AMUPMU_INFO did not
// answer); sys/bus/event_source/devices/ (arm_pmu), sys/devices/system/cpu/
// (possible, present, cpuN/online, cpuN/regs/identification/midr_el1,
// vulnerabilities/meltdown);
// sys/bus/platform/devices/ (the SPE device, spe_devices());
// sys/firmware/devicetree/base/*/compatible (an amupmu,pmuv3 node),
// sys/firmware/acpi (ACPI firmware).
#ifndef AMUPMU_TOOL_DOCTOR_HPP
#define AMUPMU_TOOL_DOCTOR_HPP

#include <amupmu/info.hpp>
#include <amupmu/report/doctor_format.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace amupmu::cli {

/// The environment variable that moves doctor's root ("/" without it), for
/// tests: a fake sysfs and procfs tree.
inline constexpr const char* doctor_root_variable = "AMUPMU_DOCTOR_ROOT";

/// What the checks look at.
struct DoctorInput {
	std::filesystem::path root = "/";
	/// The device node as given (--device; "" is ROOT/dev/amupmu).
	std::string device_path;
	/// AMUPMU_INFO, when the node opened and answered.
	std::optional<Info> info;
	/// Otherwise the errno of the open or of AMUPMU_INFO, and its message.
	int device_errno = 0;
	std::string device_error;
};

/// The checks, in the order of report::doctor_units.
[[nodiscard]] std::vector<report::DoctorCheck> doctor_checks(const DoctorInput& input);

/// Why PATH is not opened as ROOT's amupmu device: 0 when it may be; else
/// an errno for DoctorInput::device_errno, with *why set where the errno
/// alone does not say it. Only the character device whose number
/// ROOT/sys/class/misc/amupmu/dev gives is opened: --device naming a file,
/// or another driver's node (whose open() may act, as /dev/watchdog's arms
/// it), is refused (ENOTTY).
[[nodiscard]] int doctor_device_refused(const std::filesystem::path& root, const std::string& path, std::string* why);

/// The running kernel's release under root (proc/sys/kernel/osrelease); ""
/// when it cannot be read.
[[nodiscard]] std::string doctor_kernel_release(const std::filesystem::path& root);

/// What the driver's sysfs directory (ROOT/sys/class/misc/amupmu) says, as
/// the Info AMUPMU_INFO would give: ABI, features, PMU owner and per CPU
/// its flags, MIDR, versions, counters and AMU registers; nullopt without
/// the directory. The ioctls, kernel EL, clock and SPE owner are unknown.
[[nodiscard]] std::optional<Info> info_from_sysfs(const std::filesystem::path& root);

/// MIDR_EL1 of every possible CPU the kernel describes under root
/// (sys/devices/system/cpu/possible, cpuN/regs/identification/midr_el1),
/// by CPU number; without the driver. Empty when the kernel does not
/// publish them.
[[nodiscard]] std::map<unsigned, std::uint64_t> kernel_midrs(const std::filesystem::path& root);

} // namespace amupmu::cli

#endif
