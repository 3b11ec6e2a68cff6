// SPDX-License-Identifier: GPL-2.0
//
// spe_claim()/spe_release() on a fake sysfs tree [host]: the files the
// functions read and write, laid out as Linux 6.1 and 6.12 show a platform
// device (bus/platform/devices/DEV with of_node/compatible, driver_override
// and a driver link; bus/platform/drivers/DRV with bind and unbind).
#include <amupmu/spe_device.hpp>

#include "tempdir.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <unistd.h>

using namespace amupmu;
using namespace std::string_view_literals;
namespace fs = std::filesystem;

namespace {

using amupmu::test::put;
using amupmu::test::slurp;

/// A temporary /sys with the platform bus, removed at the end.
class FakeSysfs {
public:
	FakeSysfs()
	{
		fs::create_directories(devices());
		fs::create_directories(root() / "bus/platform/drivers");
	}

	[[nodiscard]] const fs::path& root() const { return dir_.path(); }
	[[nodiscard]] fs::path devices() const { return root() / "bus/platform/devices"; }
	[[nodiscard]] fs::path driver(std::string_view name) const
	{
		return root() / "bus/platform/drivers" / std::string{name};
	}

	/// A platform device; compatible "" for none (an ACPI or plain device).
	void add_device(const std::string& name, std::string_view compatible, std::string_view bound_to = {})
	{
		const fs::path d = devices() / name;
		fs::create_directories(d);
		if (!compatible.empty())
			put(d / "of_node/compatible", compatible);
		put(d / "driver_override", "(null)\n");
		if (!bound_to.empty())
			fs::create_directory_symlink("../../../bus/platform/drivers/" + std::string{bound_to}, d / "driver");
	}
	/// The amupmu-spe driver directory (the module is loaded).
	void add_amupmu_driver() const
	{
		put(driver(spe_driver_name) / "bind", "");
		put(driver(spe_driver_name) / "unbind", "");
	}

private:
	test::TempDir dir_{"amupmu-sysfs"};
};

constexpr std::string_view spe_compat{"arm,statistical-profiling-extension-v1\0", 39};

} // namespace

TEST_CASE("spe_devices finds devicetree and ACPI SPE devices", "[host][spe_device]")
{
	FakeSysfs sys;
	sys.add_device("spe", spe_compat);
	sys.add_device("arm,spe-v1", {}, "arm_spe_pmu");
	sys.add_device("9000000.pl011", "arm,pl011\0arm,primecell\0"sv);
	sys.add_device("pmu", "arm,armv8-pmuv3\0"sv, "armv8-pmu");
	// a compatible list with the SPE string second
	sys.add_device("spe-b", "vendor,spe\0arm,statistical-profiling-extension-v1\0"sv);
	// a prefix of the compatible string is not it
	sys.add_device("spe-x", "arm,statistical-profiling-extension\0"sv);

	const auto devs = spe_devices(sys.root());
	REQUIRE(devs.size() == 3);
	CHECK(devs[0].name == "arm,spe-v1");
	CHECK(devs[0].acpi);
	CHECK(devs[0].driver == "arm_spe_pmu");
	CHECK_FALSE(devs[0].claimed());
	CHECK(devs[1].name == "spe");
	CHECK_FALSE(devs[1].acpi);
	CHECK(devs[1].driver.empty());
	CHECK(devs[1].driver_override.empty());
	CHECK(devs[2].name == "spe-b");

	CHECK(spe_devices(sys.root() / "nonexistent").empty());
}

TEST_CASE("spe_claim writes driver_override, then bind; spe_release undoes it", "[host][spe_device]")
{
	FakeSysfs sys;
	sys.add_device("spe", spe_compat);
	sys.add_amupmu_driver();
	const fs::path dev = sys.devices() / "spe";
	const fs::path drv = sys.driver(spe_driver_name);

	CHECK(spe_claim({}, sys.root()).outcome == SpeClaim::claimed);
	CHECK(slurp(dev / "driver_override") == "amupmu-spe");
	CHECK(slurp(drv / "bind") == "spe");

	// the kernel binds: the link appears
	fs::create_directory_symlink("../../../bus/platform/drivers/amupmu-spe", dev / "driver");
	put(dev / "driver_override", "amupmu-spe\n");
	put(drv / "bind", "");
	SECTION("claim twice: nothing written")
	{
		CHECK(spe_claim("spe", sys.root()).outcome == SpeClaim::already_claimed);
		CHECK(slurp(drv / "bind").empty());
	}
	SECTION("release: unbind, then driver_override cleared")
	{
		CHECK(spe_release({}, sys.root()).outcome == SpeRelease::released);
		CHECK(slurp(drv / "unbind") == "spe");
		CHECK(slurp(dev / "driver_override") == "\n");
	}
}

TEST_CASE("spe_release of a device amupmu does not hold", "[host][spe_device]")
{
	FakeSysfs sys;
	sys.add_device("spe", spe_compat);
	sys.add_amupmu_driver();
	const fs::path dev = sys.devices() / "spe";

	CHECK(spe_release({}, sys.root()).outcome == SpeRelease::not_claimed);
	CHECK(slurp(dev / "driver_override") == "(null)\n");
	CHECK(slurp(sys.driver(spe_driver_name) / "unbind").empty());

	// a stale driver_override (a bind that failed by hand) is cleared
	put(dev / "driver_override", "amupmu-spe\n");
	CHECK(spe_release({}, sys.root()).outcome == SpeRelease::not_claimed);
	CHECK(slurp(dev / "driver_override") == "\n");
}

TEST_CASE("spe_claim refuses a device arm_spe_pmu holds, and never touches it", "[host][spe_device]")
{
	FakeSysfs sys;
	sys.add_device("spe", spe_compat, "arm_spe_pmu");
	sys.add_amupmu_driver();

	try {
		(void)spe_claim({}, sys.root());
		FAIL("claimed a device arm_spe_pmu holds");
	} catch (const SpeOwnedByDriver& e) {
		CHECK(e.errnum() == EBUSY);
		CHECK(e.driver() == "arm_spe_pmu");
		CHECK(std::string{e.what()} ==
		      "spe: owned by the kernel's arm_spe_pmu: rmmod arm_spe_pmu first (amupmu never unloads it)");
	}
	CHECK(slurp(sys.devices() / "spe/driver_override") == "(null)\n");
	CHECK(slurp(sys.driver(spe_driver_name) / "bind").empty());

	FakeSysfs other;
	other.add_device("spe", spe_compat, "vfio-platform");
	other.add_amupmu_driver();
	CHECK_THROWS_WITH(spe_claim({}, other.root()),
			  Catch::Contains("bound to driver vfio-platform: unbind it first"));
	// and release leaves another driver's device alone
	CHECK(spe_release({}, other.root()).outcome == SpeRelease::not_claimed);
}

TEST_CASE("spe_claim/spe_release: which device", "[host][spe_device]")
{
	FakeSysfs sys;
	sys.add_amupmu_driver();
	CHECK_THROWS_AS(spe_claim({}, sys.root()), SpeDeviceMissing);
	CHECK_THROWS_WITH(spe_release({}, sys.root()), Catch::Contains("release: no SPE device in "));

	sys.add_device("spe0", spe_compat);
	sys.add_device("spe1", spe_compat);
	try {
		(void)spe_claim({}, sys.root());
		FAIL("claimed one of two unnamed devices");
	} catch (const SpeDeviceAmbiguous& e) {
		CHECK(e.errnum() == EINVAL);
		CHECK(std::string{e.what()} == "claim: 2 SPE devices (spe0, spe1): name the one to use");
	}
	try {
		(void)spe_claim("nosuch", sys.root());
		FAIL("claimed a device that is not there");
	} catch (const SpeDeviceMissing& e) {
		CHECK(e.errnum() == ENODEV);
		CHECK(std::string{e.what()} == "claim: no SPE device named nosuch (SPE devices: spe0, spe1)");
	}
	const SpeClaimResult r = spe_claim("spe1", sys.root());
	CHECK(r.outcome == SpeClaim::claimed);
	CHECK(r.device.name == "spe1");
	CHECK(slurp(sys.driver(spe_driver_name) / "bind") == "spe1");
	CHECK(slurp(sys.devices() / "spe0/driver_override") == "(null)\n");
}

TEST_CASE("spe_claim without the amupmu module: DeviceMissing, nothing written", "[host][spe_device]")
{
	FakeSysfs sys;
	sys.add_device("spe", spe_compat);
	try {
		(void)spe_claim({}, sys.root());
		FAIL("claimed without amupmu-spe");
	} catch (const DeviceMissing& e) {
		CHECK(e.errnum() == ENOENT);
		CHECK(std::string{e.what()}.ends_with("bus/platform/drivers/amupmu-spe: No such file or directory (ENOENT)"));
	}
	CHECK(slurp(sys.devices() / "spe/driver_override") == "(null)\n");
}

TEST_CASE("spe_claim: a failed bind resets driver_override", "[host][spe_device]")
{
	FakeSysfs sys;
	sys.add_device("spe", spe_compat);
	// bind is a directory: its open(O_WRONLY) fails (EISDIR), as a refused bind would
	fs::create_directories(sys.driver(spe_driver_name) / "bind");
	try {
		(void)spe_claim({}, sys.root());
		FAIL("bind did not fail");
	} catch (const SpeBindFailed& e) {
		CHECK(e.errnum() == EISDIR);
		CHECK(std::string{e.what()}.starts_with("bind spe: "));
		CHECK(std::string{e.what()}.ends_with("-- see the kernel log (dmesg)"));
	}
	CHECK(slurp(sys.devices() / "spe/driver_override") == "\n");
}

TEST_CASE("spe_claim/spe_release: writes refused without root", "[host][spe_device]")
{
	if (::geteuid() == 0) {
		SUCCEED("runs as root: file modes do not refuse writes; the board payload spe-claim.sh tests it");
		return;
	}
	FakeSysfs sys;
	sys.add_device("spe", spe_compat);
	sys.add_amupmu_driver();
	fs::permissions(sys.devices() / "spe/driver_override", fs::perms::owner_read | fs::perms::group_read |
									fs::perms::others_read);
	CHECK_THROWS_AS(spe_claim({}, sys.root()), PermissionDenied);
	CHECK(slurp(sys.driver(spe_driver_name) / "bind").empty());
}

TEST_CASE("what a bind errno of amupmu-spe means", "[host][spe_device]")
{
	CHECK_THAT(std::string{spe_bind_errno_meaning(ENODEV)}, Catch::Contains("none of the CPUs"));
	CHECK_THAT(std::string{spe_bind_errno_meaning(ENXIO)}, Catch::Contains("not a per-CPU PPI"));
	CHECK_THAT(std::string{spe_bind_errno_meaning(EBUSY)}, Catch::Contains("one at a time"));
	CHECK(spe_bind_errno_meaning(EIO).empty());
	const SpeBindFailed e{"spe", ENODEV};
	CHECK(std::string{e.what()} ==
	      "bind spe: No such device (ENODEV) -- none of the CPUs its interrupt serves has SPE usable at EL1 "
	      "(see 'amupmu info'), or the device does not match amupmu-spe (its driver_override)");
}
