// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/spe_device.hpp>

#include "attrfile.hpp"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>


namespace amupmu {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view of_compatible = "arm,statistical-profiling-extension-v1";
constexpr std::string_view acpi_name = "arm,spe-v1";

fs::path devices_dir(const fs::path& sysfs)
{
	return sysfs / "bus/platform/devices";
}

fs::path driver_dir(const fs::path& sysfs)
{
	return sysfs / "bus/platform/drivers" / std::string{spe_driver_name};
}

std::string read_file(const fs::path& path)
{
	std::ifstream in{path, std::ios::binary};
	if (!in)
		return {};
	return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

// of_node/compatible: NUL-separated strings
bool has_compatible(const std::string& list, std::string_view want)
{
	std::string_view rest = list;
	while (!rest.empty()) {
		const std::size_t end = std::min(rest.find('\0'), rest.size());
		if (rest.substr(0, end) == want)
			return true;
		rest.remove_prefix(std::min(end + 1, rest.size()));
	}
	return false;
}

bool is_acpi_spe(std::string_view name)
{
	// PLATFORM_DEVID_NONE: "arm,spe-v1"; with an id: "arm,spe-v1.<n>"
	return name == acpi_name || (name.starts_with(acpi_name) && name.substr(acpi_name.size()).starts_with("."));
}

std::string trimmed(std::string s)
{
	while (!s.empty() && (s.back() == '\n' || s.back() == '\0'))
		s.pop_back();
	return s;
}

using detail::write_attr;

[[noreturn]] void throw_write_error(const fs::path& path, int err)
{
	const std::string op = "write " + path.string();
	if (err == EACCES || err == EPERM)
		throw PermissionDenied{op, err};
	throw Error{op, err};
}

void write_or_throw(const fs::path& path, std::string_view value)
{
	if (const int err = write_attr(path, value))
		throw_write_error(path, err);
}

std::string names_of(const std::vector<SpeDevice>& devs)
{
	std::string s;
	for (const SpeDevice& d : devs)
		s += (s.empty() ? "" : ", ") + d.name;
	return s;
}

SpeDevice select_device(std::string_view name, const fs::path& sysfs, const std::string& op)
{
	const std::vector<SpeDevice> devs = spe_devices(sysfs);
	if (!name.empty()) {
		const auto it = std::ranges::find(devs, name, &SpeDevice::name);
		if (it == devs.end())
			throw SpeDeviceMissing{op, "no SPE device named " + std::string{name} +
							   (devs.empty() ? " (there is none)"
									 : " (SPE devices: " + names_of(devs) + ")")};
		return *it;
	}
	if (devs.empty())
		throw SpeDeviceMissing{op, "no SPE device in " + devices_dir(sysfs).string() +
						   " (no devicetree node compatible with " + std::string{of_compatible} +
						   ", no ACPI " + std::string{acpi_name} + " device)"};
	if (devs.size() > 1)
		throw SpeDeviceAmbiguous{op, std::to_string(devs.size()) + " SPE devices (" + names_of(devs) +
						     "): name the one to use"};
	return devs.front();
}

void require_driver(const fs::path& sysfs)
{
	std::error_code ec;
	if (!fs::is_directory(driver_dir(sysfs), ec))
		throw DeviceMissing{driver_dir(sysfs).string(), ENOENT};
}

} // namespace

SpeDeviceMissing::SpeDeviceMissing(const std::string& operation, const std::string& what)
	: Error{operation, ENODEV, operation + ": " + what}
{
}

SpeDeviceAmbiguous::SpeDeviceAmbiguous(const std::string& operation, const std::string& what)
	: Error{operation, EINVAL, operation + ": " + what}
{
}

SpeOwnedByDriver::SpeOwnedByDriver(const std::string& device, const std::string& driver)
	: Error{"claim " + device, EBUSY,
		driver == spe_kernel_driver_name
			? device + ": owned by the kernel's arm_spe_pmu: rmmod arm_spe_pmu first "
				   "(amupmu never unloads it)"
			: device + ": bound to driver " + driver + ": unbind it first (echo " + device +
				  " > /sys/bus/platform/drivers/" + driver + "/unbind)"},
	  driver_{driver}
{
}

std::string_view spe_bind_errno_meaning(int err) noexcept
{
	switch (err) {
	case ENODEV:
		return "none of the CPUs its interrupt serves has SPE usable at EL1 (see 'amupmu info'), "
		       "or the device does not match amupmu-spe (its driver_override)";
	case ENXIO:
		return "its interrupt is not a per-CPU PPI, so it is not an SPE device amupmu can drive";
	case EBUSY:
		return "another SPE device is amupmu's already (one at a time), or a driver bound this one meanwhile";
	default:
		return {};
	}
}

SpeBindFailed::SpeBindFailed(const std::string& device, int err)
	: Error{"bind " + device, err,
		"bind " + device + ": " + errno_text(err) + " -- " +
			(spe_bind_errno_meaning(err).empty() ? std::string{"see the kernel log (dmesg)"}
							      : std::string{spe_bind_errno_meaning(err)})}
{
}

std::vector<SpeDevice> spe_devices(const fs::path& sysfs)
{
	std::vector<SpeDevice> out;
	std::error_code ec;
	for (fs::directory_iterator it{devices_dir(sysfs), ec}, end; !ec && it != end; it.increment(ec)) {
		const fs::path dev = it->path();
		SpeDevice d;
		d.name = dev.filename().string();
		d.acpi = is_acpi_spe(d.name);
		if (!d.acpi && !has_compatible(read_file(dev / "of_node/compatible"), of_compatible))
			continue;
		std::error_code lec;
		const fs::path drv = fs::read_symlink(dev / "driver", lec);
		if (!lec)
			d.driver = drv.filename().string();
		d.driver_override = trimmed(read_file(dev / "driver_override"));
		if (d.driver_override == "(null)")
			d.driver_override.clear();
		out.push_back(std::move(d));
	}
	std::ranges::sort(out, {}, &SpeDevice::name);
	return out;
}

SpeClaimResult spe_claim(std::string_view device, const fs::path& sysfs)
{
	SpeDevice d = select_device(device, sysfs, "claim");
	if (d.claimed())
		return {SpeClaim::already_claimed, std::move(d)};
	if (!d.driver.empty())
		throw SpeOwnedByDriver{d.name, d.driver};
	require_driver(sysfs);
	const fs::path override_path = devices_dir(sysfs) / d.name / "driver_override";
	write_or_throw(override_path, spe_driver_name);
	if (const int err = write_attr(driver_dir(sysfs) / "bind", d.name)) {
		// leave nothing behind: the device stays free for arm_spe_pmu
		(void)write_attr(override_path, "\n");
		if (err == EACCES || err == EPERM)
			throw_write_error(driver_dir(sysfs) / "bind", err);
		throw SpeBindFailed{d.name, err};
	}
	return {SpeClaim::claimed, std::move(d)};
}

SpeReleaseResult spe_release(std::string_view device, const fs::path& sysfs)
{
	SpeDevice d = select_device(device, sysfs, "release");
	const fs::path override_path = devices_dir(sysfs) / d.name / "driver_override";
	if (!d.claimed()) {
		if (d.driver.empty() && d.driver_override == spe_driver_name)
			write_or_throw(override_path, "\n");
		return {SpeRelease::not_claimed, std::move(d)};
	}
	require_driver(sysfs);
	write_or_throw(driver_dir(sysfs) / "unbind", d.name);
	write_or_throw(override_path, "\n");
	return {SpeRelease::released, std::move(d)};
}

} // namespace amupmu
