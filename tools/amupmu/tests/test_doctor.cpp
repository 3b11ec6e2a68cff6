// SPDX-License-Identifier: GPL-2.0
//
// amupmu doctor's checks (doctor.hpp) on fake sysfs and procfs trees, for
// what the emulated boards cannot show: KPTI on (or maybe on for KASLR), an
// AMU firmware left disabled, heterogeneous cores, an offline or absent CPU,
// no module (Secure Boot), no arm_pmu (ACPI), SPE held by arm_spe_pmu,
// perf_event_paranoid 2 without CAP_PERFMON, a capability in a child user
// namespace. Backend: host, a fake tree under /tmp (no device, no driver).
#include "doctor.hpp"

#include "json_check.hpp"
#include "tempdir.hpp"

#include <amupmu/report/doctor_format.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

using namespace amupmu;
using namespace amupmu::cli;
using amupmu::report::DoctorCheck;
using amupmu::report::DoctorStatus;
using amupmu::test::put;
namespace fs = std::filesystem;

namespace {

constexpr const char* release = "6.1.0-28-arm64";
constexpr const char* all_caps = "000001ffffffffff";
constexpr const char* cortex_a57 = "0x00000000411fd070";

/// A two-CPU board as the running system shows it: amupmu loaded in shared
/// mode on arm_pmu's armv8_pmuv3_0, root with every capability,
/// perf_event_paranoid 2, KPTI off; no AMU, no SPE.
class FakeBoard {
public:
	FakeBoard()
	{
		put(at("proc/sys/kernel/osrelease"), std::string{release} + "\n");
		caps(all_caps);
		put(at("proc/sys/kernel/perf_event_paranoid"), "2\n");
		put(at("proc/cmdline"), "console=ttyAMA0 root=/dev/vda1\n");
		put(at("sys/module/amupmu/version"), "0.1.0\n");
		put(at("sys/module/amupmu/parameters/pmu_shared"), "Y\n");
		put(at("sys/module/amupmu/parameters/amu"), "Y\n");
		put(drv("abi_version"), "2.5\n");
		put(drv("features"), "pmu pmu_shared\n");
		put(drv("pmu_owner"), "kernel\n");
		put(drv("backend"), "hardware\n");
		put(at("sys/devices/system/cpu/possible"), "0-1\n");
		put(at("sys/devices/system/cpu/vulnerabilities/meltdown"), "Not affected\n");
		for (unsigned cpu = 0; cpu < 2; ++cpu) {
			cpu_file(cpu, "online", "1");
			cpu_file(cpu, "discovered", "1");
			cpu_file(cpu, "midr_el1", cortex_a57);
			cpu_file(cpu, "pmu_version", "4");
			cpu_file(cpu, "pmu_counters", "6");
			cpu_file(cpu, "amu_off", "0");
			cpu_file(cpu, "amu_zero", "0");
			put(at("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online"), "1\n");
		}
		arm_pmu("armv8_pmuv3_0", "0-1");
		put(at("dev/amupmu"), "");
	}

	[[nodiscard]] fs::path at(const std::string& rel) const { return dir_.path() / rel; }
	[[nodiscard]] fs::path drv(const std::string& rel) const { return at("sys/class/misc/amupmu/" + rel); }

	void caps(const std::string& cap_eff) const
	{
		put(at("proc/self/status"), "Name:\tamupmu\nCapInh:\t0000000000000000\nCapPrm:\t" + cap_eff +
						    "\nCapEff:\t" + cap_eff + "\n");
	}
	void cpu_file(unsigned cpu, const std::string& name, const std::string& value) const
	{
		put(drv("cpu" + std::to_string(cpu) + "/" + name), value + "\n");
	}
	void arm_pmu(const std::string& name, const std::string& cpus) const
	{
		put(at("sys/bus/event_source/devices/" + name + "/cpus"), cpus + "\n");
		put(at("sys/bus/event_source/devices/" + name + "/type"), "8\n");
	}
	/// Both CPUs with an AMUv1, 4 group 0 and cg1 (0-9) group 1 counters, all enabled.
	void amu(unsigned cg1 = 0) const
	{
		for (unsigned cpu = 0; cpu < 2; ++cpu) {
			cpu_file(cpu, "amu_version", "1");
			cpu_file(cpu, "amcgcr_el0", "0x0000000000000" + std::to_string(cg1) + "04");
			cpu_file(cpu, "amcntenset0_el0", "0x0000000f");
		}
	}
	/// Both CPUs with SPEv1p1.
	void spe() const
	{
		for (unsigned cpu = 0; cpu < 2; ++cpu)
			cpu_file(cpu, "spe_version", "2");
	}
	/// A devicetree SPE platform device bound to driver ("" for none).
	void spe_device(const std::string& driver, const std::string& name = "spe") const
	{
		const fs::path d = at("sys/bus/platform/devices/" + name);
		put(d / "of_node/compatible", std::string{"arm,statistical-profiling-extension-v1"} + '\0');
		put(d / "driver_override", "(null)\n");
		if (!driver.empty()) {
			fs::create_directories(at("sys/bus/platform/drivers/" + driver));
			fs::create_directory_symlink("../../../bus/platform/drivers/" + driver, d / "driver");
		}
	}

	/// The checks, AMUPMU_INFO as the driver's sysfs says (the device answered).
	[[nodiscard]] std::vector<DoctorCheck> checks() const
	{
		DoctorInput in;
		in.root = dir_.path();
		in.info = info_from_sysfs(dir_.path());
		return doctor_checks(in);
	}
	/// The checks when the device node did not open (errno err).
	[[nodiscard]] std::vector<DoctorCheck> checks_without_device(int err) const
	{
		DoctorInput in;
		in.root = dir_.path();
		in.device_errno = err;
		return doctor_checks(in);
	}

	[[nodiscard]] const fs::path& root() const { return dir_.path(); }

private:
	amupmu::test::TempDir dir_{"amupmu-doctor"};
};

// the one check of that unit and name (and CPU)
const DoctorCheck& find(const std::vector<DoctorCheck>& checks, const std::string& unit, const std::string& name,
			std::optional<unsigned> cpu = std::nullopt)
{
	const auto it = std::ranges::find_if(checks, [&](const DoctorCheck& c) {
		return c.unit == unit && c.name == name && c.cpu == cpu;
	});
	INFO(unit << " " << name);
	REQUIRE(it != checks.end());
	return *it;
}

bool has(const std::string& text, const std::string& part)
{
	return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("doctor: a working board: counting works, every unit in order", "[doctor][host]")
{
	WARN("host test: fake sysfs");
	const FakeBoard b;
	const auto checks = b.checks();
	CHECK(report::doctor_counting_works(checks));
	CHECK(find(checks, "module", "loaded").status == DoctorStatus::ok);
	CHECK(has(find(checks, "module", "loaded").why, "version 0.1.0"));
	CHECK(find(checks, "device", "node").status == DoctorStatus::ok);
	CHECK(find(checks, "device", "abi").status == DoctorStatus::ok);
	CHECK(find(checks, "privileges", "capability").status == DoctorStatus::ok);
	CHECK(find(checks, "pmu", "mode").status == DoctorStatus::ok);
	CHECK(has(find(checks, "pmu", "mode").why, "shared"));
	CHECK(has(find(checks, "pmu", "arm_pmu").why, "armv8_pmuv3_0 (CPUs 0-1)"));
	CHECK(find(checks, "pmu", "core_types").status == DoctorStatus::ok);
	CHECK(find(checks, "pmu", "cpu", 1).status == DoctorStatus::ok);
	CHECK(has(find(checks, "pmu", "cpu", 1).why, "6 event counters"));
	CHECK(find(checks, "amu", "present").status == DoctorStatus::skip);
	CHECK(find(checks, "spe", "present").status == DoctorStatus::skip);
	// the units in doctor_units' order
	std::vector<std::string> units;
	for (const DoctorCheck& c : checks)
		if (units.empty() || units.back() != c.unit)
			units.push_back(c.unit);
	CHECK(units == std::vector<std::string>{"module", "device", "privileges", "pmu", "amu", "spe"});
	CHECK(std::ranges::none_of(checks, [](const DoctorCheck& c) { return c.status == DoctorStatus::fail; }));
}

TEST_CASE("doctor: no module: whether a module is built, DKMS, headers", "[doctor][host]")
{
	WARN("host test: fake sysfs");
	const FakeBoard b;
	fs::remove_all(b.at("sys/module/amupmu"));
	fs::remove_all(b.at("sys/class/misc/amupmu"));
	const std::string rel = release;

	SECTION("nothing built, no amupmu-dkms")
	{
		const auto checks = b.checks_without_device(ENOENT);
		const DoctorCheck& m = find(checks, "module", "loaded");
		CHECK(m.status == DoctorStatus::fail);
		CHECK(m.fix == "sudo apt install amupmu-dkms linux-headers-" + rel);
		CHECK(find(checks, "device", "node").status == DoctorStatus::skip);
		CHECK(find(checks, "pmu", "mode").status == DoctorStatus::skip);
		CHECK_FALSE(report::doctor_counting_works(checks));
	}
	SECTION("built for the running kernel by DKMS")
	{
		put(b.at("lib/modules/" + rel + "/updates/dkms/amupmu.ko.xz"), "");
		const DoctorCheck m = find(b.checks_without_device(ENOENT), "module", "loaded");
		CHECK(m.status == DoctorStatus::fail);
		CHECK(has(m.why, "/lib/modules/" + rel + "/updates/dkms/amupmu.ko.xz is built for kernel " + rel));
		CHECK(m.fix == "sudo modprobe amupmu");
	}
	SECTION("built, but Secure Boot refuses an unsigned module")
	{
		put(b.at("lib/modules/" + rel + "/updates/dkms/amupmu.ko.xz"), "");
		const std::string mok = "sudo mokutil --import /var/lib/dkms/mok.pub, reboot and enroll the key in "
					"MokManager, then sudo modprobe amupmu";
		put(b.at("sys/kernel/security/lockdown"), "[none] integrity confidentiality\n");
		put(b.at("sys/module/module/parameters/sig_enforce"), "N\n");
		CHECK(find(b.checks_without_device(ENOENT), "module", "loaded").fix == "sudo modprobe amupmu");
		put(b.at("sys/kernel/security/lockdown"), "none [integrity] confidentiality\n");
		const DoctorCheck m = find(b.checks_without_device(ENOENT), "module", "loaded");
		CHECK(m.fix == mok);
		CHECK(has(m.why, "a DKMS module is refused unless its key is enrolled"));
		put(b.at("sys/kernel/security/lockdown"), "none integrity [confidentiality]\n");
		CHECK(find(b.checks_without_device(ENOENT), "module", "loaded").fix == mok);
		put(b.at("sys/kernel/security/lockdown"), "[none] integrity confidentiality\n");
		put(b.at("sys/module/module/parameters/sig_enforce"), "Y\n");
		CHECK(find(b.checks_without_device(ENOENT), "module", "loaded").fix == mok);
	}
	SECTION("DKMS source and headers, not built for this kernel")
	{
		put(b.at("usr/src/amupmu-0.1.0/dkms.conf"), "");
		fs::create_directories(b.at("lib/modules/" + rel + "/build"));
		CHECK(find(b.checks_without_device(ENOENT), "module", "loaded").fix ==
		      "sudo dkms autoinstall -k " + rel + " && sudo modprobe amupmu");
	}
	SECTION("DKMS source without headers")
	{
		put(b.at("usr/src/amupmu-0.1.0/dkms.conf"), "");
		CHECK(find(b.checks_without_device(ENOENT), "module", "loaded").fix ==
		      "sudo apt install linux-headers-" + rel);
	}
}

TEST_CASE("doctor: the device node missing or not for this user; another ABI", "[doctor][host]")
{
	WARN("host test: fake sysfs");
	const FakeBoard b;
	SECTION("missing: removed, or a container's /dev")
	{
		const auto checks = b.checks_without_device(ENOENT);
		const DoctorCheck& n = find(checks, "device", "node");
		CHECK(n.status == DoctorStatus::fail);
		CHECK(has(n.why, "devtmpfs creates it"));
		CHECK(has(n.why, "a container started without the device"));
		CHECK(has(n.fix, "docker run --device /dev/amupmu"));
		CHECK(n.fix.ends_with("sudo udevadm trigger --action=add --subsystem-match=misc --sysname-match=amupmu"));
		// the rest from the driver's sysfs
		CHECK(find(checks, "pmu", "mode").status == DoctorStatus::ok);
		CHECK_FALSE(report::doctor_counting_works(checks));
	}
	SECTION("EACCES: the group when it may read and write, else the udev rule")
	{
		// a group this process may give the node: its own, or any as root
		const gid_t gid = ::getgid() != 0 ? ::getgid() : 4242;
		put(b.at("etc/group"), "root:x:0:\nperf:x:" + std::to_string(gid) + ":\n");
		const std::string node = b.at("dev/amupmu").string();
		REQUIRE(::chown(node.c_str(), static_cast<uid_t>(-1), gid) == 0);
		const std::string rule =
			"a udev rule that opens it: cp /usr/lib/udev/rules.d/60-amupmu.rules /etc/udev/rules.d/60-amupmu.rules, "
			"set MODE=\"0666\" (or MODE=\"0660\", GROUP=\"yourgroup\") there, then sudo udevadm trigger "
			"--action=add --subsystem-match=misc --sysname-match=amupmu";

		REQUIRE(::chmod(node.c_str(), 0660) == 0);
		DoctorCheck n = find(b.checks_without_device(EACCES), "device", "node");
		CHECK(n.status == DoctorStatus::fail);
		CHECK(n.why == "this user may not open " + node + " (mode 0660, group perf)");
		CHECK(n.fix == "sudo usermod -aG perf $USER (then log in again)");

		REQUIRE(::chmod(node.c_str(), 0640) == 0);	// the group may not write
		n = find(b.checks_without_device(EACCES), "device", "node");
		CHECK(n.why == "this user may not open " + node + " (mode 0640, group perf)");
		CHECK(n.fix == rule);

		REQUIRE(::chmod(node.c_str(), 0600) == 0);
		CHECK(find(b.checks_without_device(EACCES), "device", "node").fix == rule);
	}
	SECTION("a driver of another major")
	{
		put(b.drv("abi_version"), "3.0\n");
		const auto checks = b.checks_without_device(EPROTO);
		CHECK(find(checks, "device", "abi").status == DoctorStatus::fail);
		CHECK(has(find(checks, "device", "abi").why, "driver ABI 3.0"));
	}
	SECTION("an older driver")
	{
		put(b.drv("abi_version"), "2.1\n");
		CHECK(find(b.checks(), "device", "abi").status == DoctorStatus::warn);
	}
}

TEST_CASE("doctor: only amupmu's character device is opened", "[doctor][host]")
{
	WARN("host test: fake sysfs, the host's /dev/null");
	const FakeBoard b;
	std::string why;
	// /dev/null is 1:3 on Linux
	SECTION("the driver's node")
	{
		put(b.drv("dev"), "1:3\n");
		CHECK(doctor_device_refused(b.root(), "/dev/null", &why) == 0);
		CHECK(why.empty());
	}
	SECTION("another driver's node (its open() may act)")
	{
		put(b.drv("dev"), "10:123\n");
		CHECK(doctor_device_refused(b.root(), "/dev/null", &why) == ENOTTY);
		CHECK(why == "/dev/null is device 1:3, not amupmu's (10:123)");
		DoctorInput in;
		in.root = b.root();
		in.device_errno = ENOTTY;
		in.device_error = why;
		const std::vector<DoctorCheck> checks = doctor_checks(in);
		const DoctorCheck& n = find(checks, "device", "node");
		CHECK(n.status == DoctorStatus::fail);
		CHECK(n.why == why);
	}
	SECTION("a regular file")
	{
		put(b.drv("dev"), "10:123\n");
		const std::string file = b.at("dev/amupmu").string();
		CHECK(doctor_device_refused(b.root(), file, &why) == ENOTTY);
		CHECK(why == file + " is not a character device");
	}
	SECTION("missing")
	{
		CHECK(doctor_device_refused(b.root(), b.at("dev/none").string(), &why) == ENOENT);
		CHECK(why.empty());
	}
	SECTION("no driver: no dev file")
	{
		fs::remove(b.drv("dev"));
		CHECK(doctor_device_refused(b.root(), "/dev/null", &why) == ENODEV);
	}
}

TEST_CASE("doctor: perf_event_paranoid 2 without CAP_PERFMON", "[doctor][host]")
{
	WARN("host test: fake sysfs");
	const FakeBoard b;
	b.spe();
	b.spe_device("amupmu-spe");
	SECTION("no capability")
	{
		b.caps("0000000000000000");
		const auto checks = b.checks();
		const DoctorCheck& cap = find(checks, "privileges", "capability");
		CHECK(cap.status == DoctorStatus::fail);
		// perf-security.rst's recipe: one group's members, not every user
		CHECK(has(cap.fix, "sudo groupadd -f perf_users && sudo usermod -aG perf_users $USER && sudo chgrp "
				   "perf_users $(command -v amupmu) && sudo chmod 0750 $(command -v amupmu) && sudo "
				   "setcap cap_perfmon+ep $(command -v amupmu)"));
		CHECK(has(cap.fix, "a package upgrade replaces the file and drops the capability"));
		const DoctorCheck& par = find(checks, "privileges", "perf_event_paranoid");
		CHECK(par.status == DoctorStatus::warn);
		CHECK(has(par.why, "2: perf lets users without CAP_PERFMON count their own tasks in user space only"));
		CHECK(find(checks, "spe", "privilege").status == DoctorStatus::fail);
		CHECK_FALSE(report::doctor_counting_works(checks));
	}
	SECTION("CAP_PERFMON alone (bit 38)")
	{
		b.caps("0000004000000000");
		const auto checks = b.checks();
		CHECK(find(checks, "privileges", "capability").status == DoctorStatus::ok);
		CHECK(find(checks, "privileges", "capability").why.starts_with("CAP_PERFMON: "));
		CHECK(find(checks, "spe", "privilege").status == DoctorStatus::ok);
		CHECK(report::doctor_counting_works(checks));
	}
	SECTION("CAP_SYS_ADMIN alone (bit 21)")
	{
		b.caps("0000000000200000");
		const auto checks = b.checks();
		const DoctorCheck& c = find(checks, "privileges", "capability");
		CHECK(c.status == DoctorStatus::ok);
		CHECK(c.why.starts_with("CAP_SYS_ADMIN: "));
		// the SPE line names the capability held too
		CHECK(find(checks, "spe", "privilege").why.starts_with("CAP_SYS_ADMIN: "));
	}
	SECTION("level 3 is Debian's")
	{
		b.caps("0000000000000000");
		put(b.at("proc/sys/kernel/perf_event_paranoid"), "3\n");
		const DoctorCheck par = find(b.checks(), "privileges", "perf_event_paranoid");
		CHECK(has(par.why, "3: Debian's kernels refuse every perf_event_open() without CAP_PERFMON (a Debian "
				   "patch; upstream kernels treat it as 2"));
	}
}

TEST_CASE("doctor: a capability in a child user namespace does not count", "[doctor][host]")
{
	WARN("host test: fake sysfs");
	const FakeBoard b;
	put(b.at("proc/self/uid_map"), "         0          0 4294967295\n");
	fs::create_directories(b.at("proc/self/ns"));
	fs::create_directories(b.at("proc/1/ns"));
	fs::create_symlink("user:[4026531837]", b.at("proc/self/ns/user"));
	fs::create_symlink("user:[4026531837]", b.at("proc/1/ns/user"));
	CHECK(find(b.checks(), "privileges", "capability").status == DoctorStatus::ok);
	SECTION("unshare -r: root mapped to a user")
	{
		put(b.at("proc/self/uid_map"), "         0       1000          1\n");
	}
	SECTION("another user namespace than init's, an identity map")
	{
		fs::remove(b.at("proc/self/ns/user"));
		fs::create_symlink("user:[4026532577]", b.at("proc/self/ns/user"));
	}
	const auto checks = b.checks();
	const DoctorCheck& cap = find(checks, "privileges", "capability");
	CHECK(cap.status == DoctorStatus::fail);
	CHECK(has(cap.why, "CAP_PERFMON is held in a child user namespace"));
	CHECK(has(cap.why, "perfmon_capable()"));
	CHECK(find(checks, "privileges", "perf_event_paranoid").status == DoctorStatus::warn);
	CHECK_FALSE(report::doctor_counting_works(checks));
}

TEST_CASE("doctor: PMU: no arm_pmu, a VM without a PMU, shared mode off", "[doctor][host]")
{
	WARN("host test: fake sysfs");
	const FakeBoard b;
	SECTION("no arm_pmu: refused, the devicetree is the way")
	{
		fs::remove_all(b.at("sys/bus/event_source/devices/armv8_pmuv3_0"));
		put(b.drv("features"), "pmu\n");
		const auto checks = b.checks();
		CHECK(find(checks, "pmu", "arm_pmu").status == DoctorStatus::warn);
		CHECK(find(checks, "pmu", "mode").status == DoctorStatus::fail);
		CHECK(has(find(checks, "pmu", "mode").fix, "devicetree"));
		CHECK_FALSE(report::doctor_counting_works(checks));
	}
	SECTION("arm_pmu there, pmu_shared=N")
	{
		put(b.drv("features"), "pmu\n");
		put(b.at("sys/module/amupmu/parameters/pmu_shared"), "N\n");
		CHECK(find(b.checks(), "pmu", "mode").fix ==
		      "echo Y | sudo tee /sys/module/amupmu/parameters/pmu_shared; across reboots too: echo 'options "
		      "amupmu pmu_shared=Y' | sudo tee /etc/modprobe.d/amupmu-pmu-shared.conf");
	}
	SECTION("no arm_pmu on ACPI: no devicetree to suggest")
	{
		fs::remove_all(b.at("sys/bus/event_source/devices/armv8_pmuv3_0"));
		put(b.drv("features"), "pmu\n");
		fs::create_directories(b.at("sys/firmware/acpi/tables"));
		const DoctorCheck m = find(b.checks(), "pmu", "mode");
		CHECK(m.status == DoctorStatus::fail);
		CHECK_FALSE(has(m.fix, "devicetree"));
		CHECK(has(m.fix, "ACPI MADT"));
		// ACPI tables beside a devicetree the kernel booted with: the devicetree
		fs::create_directories(b.at("sys/firmware/devicetree/base"));
		CHECK(has(find(b.checks(), "pmu", "mode").fix, "devicetree"));
	}
	SECTION("exclusive mode: no arm_pmu is right")
	{
		fs::remove_all(b.at("sys/bus/event_source/devices/armv8_pmuv3_0"));
		put(b.drv("features"), "pmu pmu_exclusive\n");
		put(b.drv("pmu_owner"), "amupmu\n");
		const auto checks = b.checks();
		CHECK(find(checks, "pmu", "arm_pmu").status == DoctorStatus::ok);
		CHECK(has(find(checks, "pmu", "mode").why, "exclusive"));
		CHECK(report::doctor_counting_works(checks));
	}
	SECTION("no module, no arm_pmu: the amupmu devicetree, or no PMU")
	{
		fs::remove_all(b.at("sys/bus/event_source/devices/armv8_pmuv3_0"));
		fs::remove_all(b.at("sys/module/amupmu"));
		fs::remove_all(b.at("sys/class/misc/amupmu"));
		CHECK(find(b.checks_without_device(ENOENT), "pmu", "arm_pmu").status == DoctorStatus::warn);
		put(b.at("sys/firmware/devicetree/base/pmu/compatible"), std::string{"amupmu,pmuv3"} + '\0');
		const DoctorCheck a = find(b.checks_without_device(ENOENT), "pmu", "arm_pmu");
		CHECK(a.status == DoctorStatus::ok);
		CHECK(has(a.why, "the devicetree gives the PMU to amupmu"));
	}
	SECTION("a VM without a PMU")
	{
		fs::remove_all(b.at("sys/bus/event_source/devices/armv8_pmuv3_0"));
		put(b.drv("features"), "\n");
		put(b.drv("pmu_owner"), "none\n");
		for (unsigned cpu = 0; cpu < 2; ++cpu)
			fs::remove(b.drv("cpu" + std::to_string(cpu) + "/pmu_counters"));
		const auto checks = b.checks();
		CHECK(find(checks, "pmu", "mode").status == DoctorStatus::fail);
		CHECK(has(find(checks, "pmu", "mode").why, "no CPU implements PMUv3"));
		CHECK(has(find(checks, "pmu", "mode").fix, "pmu=on"));
		CHECK(find(checks, "pmu", "cpu", 0).status == DoctorStatus::fail);
	}
}

TEST_CASE("doctor: big.LITTLE: two MIDRs, two arm_pmus", "[doctor][host]")
{
	WARN("host test: fake sysfs");
	const FakeBoard b;
	b.cpu_file(0, "midr_el1", "0x00000000412fd050");	// Cortex-A55 r2p0
	b.cpu_file(1, "midr_el1", "0x00000000411fd410");	// Cortex-A78 r1p0
	fs::remove_all(b.at("sys/bus/event_source/devices/armv8_pmuv3_0"));
	b.arm_pmu("armv8_cortex_a55", "0");
	b.arm_pmu("armv8_cortex_a78", "1");
	const auto checks = b.checks();
	const DoctorCheck& t = find(checks, "pmu", "core_types");
	CHECK(t.status == DoctorStatus::warn);
	CHECK(has(t.why, "2 core types (big.LITTLE)"));
	CHECK(has(t.why, "Cortex-A55 r2p0 (CPUs 0)"));
	CHECK(has(t.why, "Cortex-A78 r1p0 (CPUs 1)"));
	CHECK(has(find(checks, "pmu", "arm_pmu").why, "armv8_cortex_a55 (CPUs 0), armv8_cortex_a78 (CPUs 1)"));
	// same part, another revision: one type
	b.cpu_file(1, "midr_el1", "0x00000000410fd050");
	CHECK(find(b.checks(), "pmu", "core_types").status == DoctorStatus::ok);
}

TEST_CASE("doctor: a CPU offline", "[doctor][host]")
{
	WARN("host test: fake sysfs");
	const FakeBoard b;
	put(b.at("sys/devices/system/cpu/cpu1/online"), "0\n");
	b.cpu_file(1, "online", "0");
	const auto checks = b.checks();
	const DoctorCheck& c1 = find(checks, "pmu", "cpu", 1);
	CHECK(c1.status == DoctorStatus::warn);
	CHECK(has(c1.why, "offline"));
	CHECK(c1.fix == "echo 1 | sudo tee /sys/devices/system/cpu/cpu1/online");
	CHECK(find(checks, "pmu", "cpu", 0).status == DoctorStatus::ok);
	CHECK(report::doctor_counting_works(checks));
}

TEST_CASE("doctor: a CPU possible but not present", "[doctor][host]")
{
	WARN("host test: fake sysfs");
	const FakeBoard b;
	// the firmware brought up CPU 0 only: no cpu1/online to write
	put(b.at("sys/devices/system/cpu/present"), "0\n");
	fs::remove_all(b.at("sys/devices/system/cpu/cpu1"));
	b.cpu_file(1, "online", "0");
	b.cpu_file(1, "discovered", "0");
	b.amu();
	const auto checks = b.checks();
	const DoctorCheck& c1 = find(checks, "pmu", "cpu", 1);
	CHECK(c1.status == DoctorStatus::skip);
	CHECK(c1.why == "possible but not present (firmware did not bring it up)");
	CHECK(c1.fix.empty());
	CHECK(find(checks, "amu", "cpu", 1).why == "not read by amupmu (not present)");
	CHECK(find(checks, "pmu", "cpu", 0).status == DoctorStatus::ok);
	CHECK(report::doctor_counting_works(checks));
}

TEST_CASE("doctor: AMU: firmware left it disabled, amu=N, mock", "[doctor][host]")
{
	WARN("host test: fake sysfs");
	const FakeBoard b;
	b.amu(2);
	SECTION("enabled and counting")
	{
		const auto checks = b.checks();
		CHECK(find(checks, "amu", "present").status == DoctorStatus::ok);
		CHECK(find(checks, "amu", "cpu", 0).why == "AMUv1, 4 + 2 counters");
	}
	SECTION("cycle counters read zero, counters disabled")
	{
		b.cpu_file(0, "amu_zero", "1");
		b.cpu_file(1, "amcntenset0_el0", "0x00000003");
		const auto checks = b.checks();
		const DoctorCheck& c0 = find(checks, "amu", "cpu", 0);
		CHECK(c0.status == DoctorStatus::fail);
		CHECK(has(c0.why, "firmware left the AMU disabled"));
		CHECK(has(c0.fix, "ENABLE_FEAT_AMU=1"));
		const DoctorCheck& c1 = find(checks, "amu", "cpu", 1);
		CHECK(c1.status == DoctorStatus::fail);
		CHECK(has(c1.why, "AMCNTENSET0_EL0 0x3"));
		// counting (the PMU) still works
		CHECK(report::doctor_counting_works(checks));
	}
	SECTION("module parameter amu=N")
	{
		put(b.at("sys/module/amupmu/parameters/amu"), "N\n");
		b.cpu_file(0, "amu_off", "1");
		const DoctorCheck c0 = find(b.checks(), "amu", "cpu", 0);
		CHECK(c0.status == DoctorStatus::warn);
		CHECK(c0.fix == "sudo modprobe -r amupmu && sudo modprobe amupmu amu=1");
	}
	SECTION("the mock model says so")
	{
		put(b.drv("features"), "pmu amu spe mock pmu_shared\n");
		put(b.drv("backend"), "mock\n");
		const DoctorCheck p = find(b.checks(), "amu", "present");
		CHECK(p.status == DoctorStatus::warn);
		CHECK(p.why.starts_with("mock: "));
	}
}

TEST_CASE("doctor: SPE: held by arm_spe_pmu, unclaimed, KPTI", "[doctor][host]")
{
	WARN("host test: fake sysfs");
	const FakeBoard b;
	b.spe();
	// the KPTI verdict with these arguments on the kernel command line
	const auto kpti_with = [&](const std::string& args) {
		INFO(args);
		put(b.at("proc/cmdline"), "console=ttyAMA0 " + args + "\n");
		return find(b.checks(), "spe", "kpti").status;
	};
	SECTION("held by arm_spe_pmu, a module")
	{
		b.spe_device("arm_spe_pmu");
		put(b.at("sys/module/arm_spe_pmu/refcnt"), "0\n");
		const auto checks = b.checks();
		const DoctorCheck& d = find(checks, "spe", "device");
		CHECK(d.status == DoctorStatus::fail);
		CHECK(has(d.why, "spe is held by arm_spe_pmu"));
		CHECK(d.fix == "sudo rmmod arm_spe_pmu && sudo amupmu spe claim spe; across reboots too: echo 'blacklist "
			       "arm_spe_pmu' | sudo tee /etc/modprobe.d/arm_spe_pmu-blacklist.conf");
		CHECK(report::doctor_counting_works(checks));
	}
	SECTION("held by a built-in arm_spe_pmu")
	{
		b.spe_device("arm_spe_pmu");
		CHECK(find(b.checks(), "spe", "device").fix ==
		      "echo spe | sudo tee /sys/bus/platform/drivers/arm_spe_pmu/unbind && sudo amupmu spe claim spe");
	}
	SECTION("unclaimed, then amupmu's")
	{
		b.spe_device("");
		CHECK(find(b.checks(), "spe", "device").fix == "sudo amupmu spe claim spe");
		fs::create_directories(b.at("sys/bus/platform/drivers/amupmu-spe"));
		fs::create_directory_symlink("../../../bus/platform/drivers/amupmu-spe",
					     b.at("sys/bus/platform/devices/spe/driver"));
		CHECK(find(b.checks(), "spe", "device").status == DoctorStatus::ok);
	}
	SECTION("no SPE device although the CPUs have SPE")
	{
		CHECK(find(b.checks(), "spe", "device").status == DoctorStatus::fail);
	}
	SECTION("KPTI on")
	{
		b.spe_device("amupmu-spe");
		put(b.at("sys/devices/system/cpu/vulnerabilities/meltdown"), "Mitigation: PTI\n");
		const DoctorCheck k = find(b.checks(), "spe", "kpti");
		CHECK(k.status == DoctorStatus::fail);
		CHECK(has(k.why, "SPE is refused (EOPNOTSUPP)"));
		CHECK(has(k.fix, "kpti=0"));
		CHECK(kpti_with("kpti=0") == DoctorStatus::ok);
		put(b.at("sys/devices/system/cpu/vulnerabilities/meltdown"), "Not affected\n");
		CHECK(kpti_with("kpti=1") == DoctorStatus::fail);
		// every spelling kstrtobool() reads; the last valid one counts
		for (const char* on : {"kpti=on", "kpti=y", "kpti=Yes", "kpti=true", "kpti=0 kpti=1", "kpti=1 kpti=x"})
			CHECK(kpti_with(on) == DoctorStatus::fail);
		for (const char* off : {"kpti=off", "kpti=n", "kpti=no", "kpti=N", "kpti=false", "kpti=OFF", "kpti=1 kpti=0"})
			CHECK(kpti_with(off) == DoctorStatus::ok);
	}
	SECTION("KPTI maybe on for KASLR: meltdown says Not affected")
	{
		b.spe_device("amupmu-spe");
		const DoctorCheck k = find(b.checks(), "spe", "kpti");
		CHECK(k.status == DoctorStatus::warn);
		CHECK(has(k.why, "with KASLR the kernel turns KPTI on for cores without E0PD"));
		CHECK(has(k.fix, "kpti=0"));
		CHECK(kpti_with("nokaslr") == DoctorStatus::ok);
		CHECK(kpti_with("kpti=off") == DoctorStatus::ok);
		// Vulnerable: KPTI off on an affected core
		put(b.at("sys/devices/system/cpu/vulnerabilities/meltdown"), "Vulnerable\n");
		CHECK(kpti_with("") == DoctorStatus::ok);
	}
	SECTION("no module, no SPE device: KPTI not asked about")
	{
		put(b.at("sys/devices/system/cpu/vulnerabilities/meltdown"), "Mitigation: PTI\n");
		CHECK(find(b.checks_without_device(ENOENT), "spe", "kpti").status == DoctorStatus::fail);
		fs::remove_all(b.at("sys/module/amupmu"));
		fs::remove_all(b.at("sys/class/misc/amupmu"));
		CHECK(find(b.checks_without_device(ENOENT), "spe", "kpti").status == DoctorStatus::skip);
		b.spe_device("arm_spe_pmu");
		CHECK(find(b.checks_without_device(ENOENT), "spe", "kpti").status == DoctorStatus::fail);
	}
	SECTION("no SPE on the CPUs: the rest skipped")
	{
		for (unsigned cpu = 0; cpu < 2; ++cpu)
			fs::remove(b.drv("cpu" + std::to_string(cpu) + "/spe_version"));
		const auto checks = b.checks();
		CHECK(find(checks, "spe", "present").status == DoctorStatus::skip);
		CHECK(find(checks, "spe", "kpti").status == DoctorStatus::skip);
	}
}

TEST_CASE("doctor: text and JSON", "[doctor][host]")
{
	WARN("host test: fake sysfs");
	const FakeBoard b;
	put(b.at("sys/devices/system/cpu/cpu1/online"), "0\n");
	b.caps("0000000000000000");
	const auto checks = b.checks();
	const report::DoctorContext context{"/", release};
	const std::string text = report::format_doctor_text(checks, context);
	CHECK(text.starts_with("amupmu doctor: kernel 6.1.0-28-arm64\nmodule\n  ok    loaded: amupmu is loaded"));
	CHECK(has(text, "\nprivileges\n  fail  capability: no CAP_PERFMON"));
	CHECK(has(text, "\n        fix: run it as root, or give the capability to one group's members"));
	CHECK(has(text, "\n  warn  cpu1: offline: not counted\n        fix: echo 1 | sudo tee"));
	CHECK(has(text, "\ncounting does not work ("));
	const std::string json = report::format_doctor_json(checks, context);
	INFO(json);
	CHECK(amupmu::test::JsonChecker{json}.error().empty());
	CHECK(has(json, "\"counting\": false"));
	CHECK(has(json, "\"unit\": \"pmu\",\n      \"check\": \"cpu\",\n      \"cpu\": 1,\n      \"status\": \"warn\""));
	CHECK(has(json, "\"check\": \"loaded\",\n      \"cpu\": null,\n      \"status\": \"ok\""));
	CHECK(has(json, "\"fix\": null"));
	CHECK_FALSE(has(json, "\"device\": "));	// no check about one device
}

TEST_CASE("doctor: JSON: two SPE devices, each named", "[doctor][host]")
{
	WARN("host test: fake sysfs");
	const FakeBoard b;
	b.spe();
	b.spe_device("amupmu-spe", "spe0");
	b.spe_device("", "spe1");
	const auto checks = b.checks();
	const std::string json = report::format_doctor_json(checks, {"/", release});
	INFO(json);
	CHECK(amupmu::test::JsonChecker{json}.error().empty());
	CHECK(has(json, "\"check\": \"device\",\n      \"cpu\": null,\n      \"device\": \"spe0\",\n      "
			"\"status\": \"ok\""));
	CHECK(has(json, "\"check\": \"device\",\n      \"cpu\": null,\n      \"device\": \"spe1\",\n      "
			"\"status\": \"warn\""));
}

TEST_CASE("doctor: JSON escapes quotes, backslashes and control bytes", "[doctor][host]")
{
	const std::vector<DoctorCheck> checks{{"device", "node", std::nullopt, DoctorStatus::fail,
					       "\"/dev/am\\upmu\"\x01: no", "echo \"a\\b\"\t\x1f", "spe\"0"}};
	const std::string json = report::format_doctor_json(checks, {"/tmp/r\"o\\ot", "6.1\n"});
	INFO(json);
	CHECK(amupmu::test::JsonChecker{json}.error().empty());
	CHECK(has(json, R"("why": "\"/dev/am\\upmu\"\u0001: no")"));
	CHECK(has(json, R"("fix": "echo \"a\\b\"\t\u001f")"));
	CHECK(has(json, R"("device": "spe\"0")"));
	CHECK(has(json, R"("root": "/tmp/r\"o\\ot")"));
	CHECK(has(json, R"("kernel": "6.1\n")"));
}
