// SPDX-License-Identifier: GPL-2.0
//
// amupmu doctor's checks. See doctor.hpp.
#include "doctor.hpp"

#include <amupmu/affinity.hpp>
#include <amupmu/bits.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/error.hpp>
#include <amupmu/spe_device.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string_view>
#include <system_error>

#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace amupmu::cli {

namespace fs = std::filesystem;

using report::DoctorCheck;
using report::DoctorStatus;

namespace {

// capability numbers (linux/capability.h; CAP_PERFMON is not in older headers)
constexpr unsigned cap_sys_admin = 21;
constexpr unsigned cap_perfmon = 38;

// the architected group 0 activity monitors: CPU_CYCLES, CNT_CYCLES,
// INST_RETIRED, STALL_BACKEND_MEM
constexpr unsigned amu_group0_architected = 4;

// perf-security.rst's recipe: the capability for the members of one group
// only, not for every local user
constexpr std::string_view setcap_fix =
	"run it as root, or give the capability to one group's members (perf-security.rst): sudo groupadd -f "
	"perf_users && sudo usermod -aG perf_users $USER && sudo chgrp perf_users $(command -v amupmu) && sudo "
	"chmod 0750 $(command -v amupmu) && sudo setcap cap_perfmon+ep $(command -v amupmu) (then log in again; "
	"a package upgrade replaces the file and drops the capability: run the last three again)";

// udev applies 60-amupmu.rules (mode, group) to the node again
constexpr std::string_view udev_trigger = "sudo udevadm trigger --action=add --subsystem-match=misc "
					  "--sysname-match=amupmu";

// a boolean as the kernel's kstrtobool() reads one ("1", "y", "on", "0",
// "n", "off", ...: the first letters); nullopt for anything else
std::optional<bool> kernel_bool(std::string_view s)
{
	const auto lower = [&](std::size_t i) {
		const char c = i < s.size() ? s[i] : '\0';
		return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
	};
	switch (lower(0)) {
	case 'y':
	case 't':
	case '1':
		return true;
	case 'n':
	case 'f':
	case '0':
		return false;
	case 'o':
		if (lower(1) == 'n')
			return true;
		if (lower(1) == 'f')
			return false;
		break;
	default:
		break;
	}
	return std::nullopt;
}

// The first line of a file without trailing white space; nullopt when it
// cannot be read.
std::optional<std::string> read_line(const fs::path& path)
{
	std::ifstream in{path};
	std::string line;
	if (!in || !std::getline(in, line))
		return std::nullopt;
	while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
		line.pop_back();
	return line;
}

// A number as sysfs writes one: "0x..." hexadecimal, else decimal (a
// leading '-' allowed).
template <typename T>
std::optional<T> parse_number(std::string_view s)
{
	int base = 10;
	if (s.starts_with("0x")) {
		s.remove_prefix(2);
		base = 16;
	}
	T out{};
	const auto r = std::from_chars(s.data(), s.data() + s.size(), out, base);
	if (r.ec != std::errc{} || r.ptr != s.data() + s.size() || s.empty())
		return std::nullopt;
	return out;
}

template <typename T>
std::optional<T> read_number(const fs::path& path)
{
	const std::optional<std::string> line = read_line(path);
	return line ? parse_number<T>(*line) : std::nullopt;
}

bool path_exists(const fs::path& path)
{
	std::error_code ec;
	return fs::exists(path, ec);
}

// the entries of a directory, sorted by name; none when it cannot be read
std::vector<std::string> entries(const fs::path& dir)
{
	std::vector<std::string> out;
	std::error_code ec;
	for (fs::directory_iterator it{dir, ec}, end; !ec && it != end; it.increment(ec))
		out.push_back(it->path().filename().string());
	std::ranges::sort(out);
	return out;
}

// "cpu<N>" -> N
std::optional<unsigned> cpu_number(std::string_view name)
{
	if (!name.starts_with("cpu"))
		return std::nullopt;
	return parse_number<unsigned>(name.substr(3));
}

// "2.4" -> {2, 4}
std::optional<std::pair<std::uint32_t, std::uint32_t>> parse_abi(std::string_view s)
{
	const std::size_t dot = s.find('.');
	if (dot == std::string_view::npos)
		return std::nullopt;
	const auto major = parse_number<std::uint32_t>(s.substr(0, dot));
	const auto minor = parse_number<std::uint32_t>(s.substr(dot + 1));
	if (!major || !minor)
		return std::nullopt;
	return std::pair{*major, *minor};
}

std::vector<std::string> words(std::string_view s)
{
	std::istringstream in{std::string{s}};
	std::vector<std::string> out;
	for (std::string w; in >> w;)
		out.push_back(w);
	return out;
}

void read_cpu(const fs::path& dir, CpuInfo& c)
{
	const auto flag = [&](std::string_view file, CpuFlag f) {
		if (read_line(dir / file) == "1")
			c.flags |= static_cast<std::uint32_t>(f);
	};
	const auto present = [&](std::string_view file, CpuFlag f) {
		if (path_exists(dir / file))
			c.flags |= static_cast<std::uint32_t>(f);
	};
	c.flags |= static_cast<std::uint32_t>(CpuFlag::possible);
	flag("online", CpuFlag::online);
	flag("discovered", CpuFlag::discovered);
	flag("amu_off", CpuFlag::amu_off);
	flag("amu_zero", CpuFlag::amu_zero);
	present("pmu_counters", CpuFlag::pmu);
	present("amu_version", CpuFlag::amu);
	present("spe_version", CpuFlag::spe);
	const auto reg = [&](std::string_view file, auto& field) {
		using T = std::remove_reference_t<decltype(field)>;
		field = read_number<T>(dir / file).value_or(T{});
	};
	reg("midr_el1", c.midr);
	reg("id_aa64dfr0_el1", c.id_aa64dfr0);
	reg("id_aa64pfr0_el1", c.id_aa64pfr0);
	reg("pmu_version", c.pmu_version);
	reg("pmu_counters", c.pmu_num_counters);
	reg("amu_version", c.amu_version);
	reg("amcgcr_el0", c.amcgcr);
	reg("amcntenset0_el0", c.amcntenset0);
	reg("amcntenset1_el0", c.amcntenset1);
	reg("spe_version", c.spe_version);
	// the events the CPU implements (amupmu list, stat's checks)
	reg("pmceid0_el0", c.pmceid0);
	reg("pmceid1_el0", c.pmceid1);
	reg("pmmir_el1", c.pmmir);
	if (c.has_pmu() && c.pmu_version >= pmuver_v3p1)
		c.flags |= static_cast<std::uint32_t>(CpuFlag::pmceid_ext);
	present("pmmir_el1", CpuFlag::pmmir);
}

// The distinct core types (implementer and part of MIDR_EL1) and their CPUs.
std::map<std::pair<unsigned, unsigned>, std::pair<std::uint64_t, std::vector<unsigned>>>
core_types(const std::map<unsigned, std::uint64_t>& midrs)
{
	std::map<std::pair<unsigned, unsigned>, std::pair<std::uint64_t, std::vector<unsigned>>> out;
	for (const auto& [cpu, midr] : midrs) {
		const Midr m = decode_midr(midr);
		auto& [first, cpus] = out[{m.implementer, m.part}];
		if (cpus.empty())
			first = midr;
		cpus.push_back(cpu);
	}
	return out;
}

// What perf lets a user without CAP_PERFMON do at a perf_event_paranoid level.
std::string_view paranoid_meaning(int level)
{
	if (level <= -1)
		return "perf lets every user count and sample anything";
	if (level == 0)
		return "perf lets users without CAP_PERFMON count and sample whole CPUs";
	if (level == 1)
		return "perf lets users without CAP_PERFMON count their own tasks, kernel included, not whole CPUs";
	if (level == 2)
		return "perf lets users without CAP_PERFMON count their own tasks in user space only";
	return "Debian's kernels refuse every perf_event_open() without CAP_PERFMON (a Debian patch; upstream "
	       "kernels treat it as 2: own tasks in user space only)";
}

class Doctor {
public:
	explicit Doctor(const DoctorInput& in)
		: in_{in}, release_{doctor_kernel_release(in.root)},
		  node_{in.device_path.empty() ? (in.root / "dev/amupmu").string() : in.device_path}
	{
	}

	std::vector<DoctorCheck> run()
	{
		module();
		device();
		privileges();
		pmu();
		amu();
		spe();
		return std::move(out_);
	}

private:
	fs::path at(std::string_view rel) const { return in_.root / rel; }

	// a path under the root as the running system names it
	std::string shown(const fs::path& path) const
	{
		return "/" + path.lexically_relative(in_.root).string();
	}

	std::string release_or_uname() const { return release_.empty() ? "$(uname -r)" : release_; }

	void add(std::string_view unit, std::string_view name, DoctorStatus status, std::string why,
		 std::string fix = {}, std::optional<unsigned> cpu = std::nullopt)
	{
		out_.push_back({std::string{unit}, std::string{name}, cpu, status, std::move(why), std::move(fix), {}});
	}

	std::optional<std::string> param(std::string_view module, std::string_view name) const
	{
		return read_line(at("sys/module") / module / "parameters" / name);
	}

	// ---------------------------------------------------------------- module

	std::optional<fs::path> built_module() const
	{
		std::error_code ec;
		const fs::path dir = at("lib/modules") / release_;
		if (release_.empty() || !fs::is_directory(dir, ec))
			return std::nullopt;
		for (fs::recursive_directory_iterator it{dir, fs::directory_options::skip_permission_denied, ec}, end;
		     !ec && it != end; it.increment(ec)) {
			const std::string name = it->path().filename().string();
			if (name == "amupmu.ko" || name.starts_with("amupmu.ko."))
				return it->path();
		}
		return std::nullopt;
	}

	bool dkms_source() const
	{
		return std::ranges::any_of(entries(at("usr/src")),
					   [](const std::string& name) { return name.starts_with("amupmu-"); });
	}

	// the kernel loads only modules signed by a key it trusts: lockdown
	// (Secure Boot) in integrity or confidentiality mode, or
	// module.sig_enforce
	bool signatures_enforced() const
	{
		const std::string lockdown = read_line(at("sys/kernel/security/lockdown")).value_or("");
		return lockdown.find("[integrity]") != std::string::npos ||
		       lockdown.find("[confidentiality]") != std::string::npos || param("module", "sig_enforce") == "Y";
	}

	void module()
	{
		const fs::path mod = at("sys/module/amupmu");
		std::error_code ec;
		loaded_ = fs::is_directory(mod, ec);
		if (loaded_) {
			const std::optional<std::string> version = read_line(mod / "version");
			add("module", "loaded", DoctorStatus::ok,
			    "amupmu is loaded" + (version ? " (version " + *version + ")" : std::string{}));
			return;
		}
		const std::string rel = release_or_uname();
		if (const std::optional<fs::path> ko = built_module()) {
			const std::string why = "amupmu is not loaded; " + shown(*ko) + " is built for kernel " + rel;
			if (signatures_enforced())
				add("module", "loaded", DoctorStatus::fail,
				    why + ", but the kernel loads only signed modules (Secure Boot lockdown or "
					  "module.sig_enforce): a DKMS module is refused unless its key is enrolled",
				    "sudo mokutil --import /var/lib/dkms/mok.pub, reboot and enroll the key in MokManager, "
				    "then sudo modprobe amupmu");
			else
				add("module", "loaded", DoctorStatus::fail, why, "sudo modprobe amupmu");
		} else if (!dkms_source()) {
			add("module", "loaded", DoctorStatus::fail,
			    "amupmu is not loaded and no amupmu.ko is built for kernel " + rel + " (no amupmu-dkms)",
			    "sudo apt install amupmu-dkms linux-headers-" + rel);
		} else if (path_exists(at("lib/modules") / release_ / "build")) {
			add("module", "loaded", DoctorStatus::fail,
			    "amupmu is not loaded and DKMS has not built it for kernel " + rel,
			    "sudo dkms autoinstall -k " + rel + " && sudo modprobe amupmu");
		} else {
			add("module", "loaded", DoctorStatus::fail,
			    "amupmu is not loaded and no amupmu.ko is built for kernel " + rel +
				    ": its headers are not installed (DKMS builds the module with them)",
			    "sudo apt install linux-headers-" + rel);
		}
	}

	// ---------------------------------------------------------------- device

	// the name of group gid in ROOT/etc/group (read here, not through NSS,
	// which a static binary cannot load); its number when not there
	std::string group_name(unsigned gid) const
	{
		std::ifstream in{at("etc/group")};
		for (std::string line; std::getline(in, line);) {
			// name:password:gid:members
			const std::size_t a = line.find(':');
			const std::size_t b = a == std::string::npos ? a : line.find(':', a + 1);
			const std::size_t c = b == std::string::npos ? b : line.find(':', b + 1);
			if (c != std::string::npos && parse_number<unsigned>(line.substr(b + 1, c - b - 1)) == gid)
				return line.substr(0, a);
		}
		return std::to_string(gid);
	}

	// the node's stat(); nullopt when it cannot be stat()ed
	std::optional<struct stat> node_stat() const
	{
		struct stat st {};
		if (::stat(node_.c_str(), &st) != 0)
			return std::nullopt;
		return st;
	}

	// "mode 0666, group root" of the node; "" when it cannot be stat()ed
	std::string node_mode() const
	{
		const std::optional<struct stat> st = node_stat();
		if (!st)
			return {};
		std::ostringstream s;
		s << "mode 0" << std::oct << (st->st_mode & 0777) << std::dec << ", group " << group_name(st->st_gid);
		return s.str();
	}

	void device()
	{
		if (!loaded_ && !in_.info) {
			add("device", "node", DoctorStatus::skip, "the module is not loaded");
			add("device", "abi", DoctorStatus::skip, "the module is not loaded");
			return;
		}
		const std::string mode = node_mode();
		const std::string with_mode = mode.empty() ? "" : " (" + mode + ")";
		const int err = in_.device_errno;
		if (in_.info) {
			add("device", "node", DoctorStatus::ok, node_ + with_mode + " opened, AMUPMU_INFO answered");
		} else if (err == ENOENT || err == ENODEV || err == ENXIO) {
			add("device", "node", DoctorStatus::fail,
			    "the module is loaded but " + node_ +
				    " is missing: devtmpfs creates it when the module loads, so it was removed, or this "
				    "/dev is not the host's (a container started without the device)",
			    "in a container, pass the device in (docker run --device /dev/amupmu); on the host, sudo "
			    "modprobe -r amupmu && sudo modprobe amupmu && " +
				    std::string{udev_trigger});
		} else if (err == EACCES || err == EPERM) {
			const std::optional<struct stat> st = node_stat();
			// joining the group helps only where the group may read and write
			const bool group_rw = st && st->st_gid != 0 && (st->st_mode & 0060) == 0060;
			add("device", "node", DoctorStatus::fail, "this user may not open " + node_ + with_mode,
			    group_rw ? "sudo usermod -aG " + group_name(st->st_gid) + " $USER (then log in again)"
				     : "a udev rule that opens it: cp /usr/lib/udev/rules.d/60-amupmu.rules "
				       "/etc/udev/rules.d/60-amupmu.rules, set MODE=\"0666\" (or MODE=\"0660\", "
				       "GROUP=\"yourgroup\") there, then " +
					       std::string{udev_trigger});
		} else {
			add("device", "node", DoctorStatus::fail,
			    in_.device_error.empty() ? node_ + ": " + std::error_code{err, std::generic_category()}.message()
						     : in_.device_error);
		}
		abi();
		info_ = in_.info ? in_.info : info_from_sysfs(in_.root);
	}

	void abi()
	{
		std::optional<std::pair<std::uint32_t, std::uint32_t>> driver;
		if (in_.info)
			driver = std::pair{in_.info->abi_major, in_.info->abi_minor};
		else if (const auto line = read_line(at("sys/class/misc/amupmu/abi_version")))
			driver = parse_abi(*line);
		if (!driver) {
			add("device", "abi", DoctorStatus::skip, "the driver's ABI version is unknown");
			return;
		}
		const auto [major, minor] = *driver;
		const std::string both = "driver ABI " + std::to_string(major) + "." + std::to_string(minor) +
					 ", this amupmu's " + std::to_string(abi_major) + "." + std::to_string(abi_minor);
		if (major != abi_major)
			add("device", "abi", DoctorStatus::fail, both + ": the major versions differ, every command is refused",
			    "install the amupmu tool and module of one release (packages amupmu and amupmu-dkms)");
		else if (minor < abi_minor)
			add("device", "abi", DoctorStatus::warn,
			    both + ": the driver is older, what later minor versions added is missing",
			    "update amupmu-dkms, then sudo modprobe -r amupmu && sudo modprobe amupmu");
		else
			add("device", "abi", DoctorStatus::ok, both);
	}

	// ---------------------------------------------------------------- privileges

	std::optional<std::uint64_t> cap_effective() const
	{
		std::ifstream in{at("proc/self/status")};
		for (std::string line; std::getline(in, line);) {
			if (!line.starts_with("CapEff:"))
				continue;
			std::string_view v = line;
			v.remove_prefix(std::min(v.find_first_not_of(" \t", 7), v.size()));
			std::uint64_t caps = 0;
			const auto r = std::from_chars(v.data(), v.data() + v.size(), caps, 16);
			if (r.ec == std::errc{} && r.ptr == v.data() + v.size())
				return caps;
		}
		return std::nullopt;
	}

	// Whether this process is in a child user namespace (a rootless
	// container, unshare -r): its uid_map is not the initial namespace's
	// identity map, or its namespace is not init's. Unknown counts as the
	// initial one.
	bool child_user_namespace() const
	{
		if (const std::optional<std::string> map = read_line(at("proc/self/uid_map")))
			if (words(*map) != std::vector<std::string>{"0", "0", "4294967295"})
				return true;
		std::error_code self_ec;
		std::error_code init_ec;
		const fs::path self = fs::read_symlink(at("proc/self/ns/user"), self_ec);
		const fs::path init = fs::read_symlink(at("proc/1/ns/user"), init_ec);
		return !self_ec && !init_ec && self != init;
	}

	void privileges()
	{
		const std::optional<std::uint64_t> caps = cap_effective();
		std::string_view held;
		if (caps && bit<cap_perfmon>(*caps))
			held = "CAP_PERFMON";
		else if (caps && bit<cap_sys_admin>(*caps))
			held = "CAP_SYS_ADMIN";
		if (!caps) {
			add("privileges", "capability", DoctorStatus::skip, "the capabilities are unknown (no CapEff in " +
										    shown(at("proc/self/status")) + ")");
		} else if (!held.empty() && child_user_namespace()) {
			add("privileges", "capability", DoctorStatus::fail,
			    std::string{held} +
				    " is held in a child user namespace (a rootless container, unshare -r), where it does "
				    "not count: the kernel checks the initial namespace's (perfmon_capable())",
			    "run amupmu on the host, or in a container that shares the host's user namespace, as root or "
			    "with the capability");
		} else if (!held.empty()) {
			capability_ = held;
			add("privileges", "capability", DoctorStatus::ok,
			    std::string{held} + ": counting, sampling, SPE and the AMU on every CPU, the kernel included");
		} else {
			add("privileges", "capability", DoctorStatus::fail,
			    "no CAP_PERFMON (nor CAP_SYS_ADMIN): amupmu's sessions are CPU-wide and refused without it "
			    "(EACCES); amupmu info works",
			    std::string{setcap_fix});
		}
		const std::optional<int> level = read_number<int>(at("proc/sys/kernel/perf_event_paranoid"));
		if (!level) {
			add("privileges", "perf_event_paranoid", DoctorStatus::skip, "perf_event_paranoid is unknown");
			return;
		}
		add("privileges", "perf_event_paranoid", capability_.empty() ? DoctorStatus::warn : DoctorStatus::ok,
		    std::to_string(*level) + ": " + std::string{paranoid_meaning(*level)} +
			    "; amupmu needs CAP_PERFMON at every level (lowering it does not help)");
	}

	// ---------------------------------------------------------------- pmu

	// arm_pmu's perf PMUs: "armv8_pmuv3_0 (CPUs 0-1)" each
	std::vector<std::string> arm_pmus() const
	{
		std::vector<std::string> out;
		const fs::path dir = at("sys/bus/event_source/devices");
		for (const std::string& name : entries(dir)) {
			if (!name.starts_with("armv8_") && !name.starts_with("armv9_"))
				continue;
			const std::optional<std::string> cpus = read_line(dir / name / "cpus");
			out.push_back(name + (cpus ? " (CPUs " + *cpus + ")" : std::string{}));
		}
		return out;
	}

	// a devicetree node that gives amupmu the PMU ("amupmu,pmuv3", a node
	// of the root: dts/amupmu-virt.dtso's /pmu)
	bool amupmu_pmu_node() const
	{
		const fs::path base = at("sys/firmware/devicetree/base");
		return std::ranges::any_of(entries(base), [&](const std::string& node) {
			std::ifstream in{base / node / "compatible", std::ios::binary};
			const std::string list{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
			return list.find("amupmu,pmuv3") != std::string::npos;
		});
	}

	// every possible CPU: the driver's, else sysfs's possible list
	std::vector<unsigned> possible_cpus() const
	{
		std::vector<unsigned> out;
		if (info_) {
			for (const CpuInfo& c : info_->cpus)
				if (c.possible())
					out.push_back(c.cpu);
			return out;
		}
		const std::optional<std::string> list = read_line(at("sys/devices/system/cpu/possible"));
		return list ? parse_cpu_list(*list).value_or(out) : out;
	}

	// the kernel's present list (a possible CPU that firmware did not bring
	// up has no cpuN/online to write); without the list, every CPU
	bool present(unsigned cpu) const
	{
		const std::optional<std::string> list = read_line(at("sys/devices/system/cpu/present"));
		const std::optional<std::vector<unsigned>> cpus = list ? parse_cpu_list(*list) : std::nullopt;
		return !cpus || std::ranges::find(*cpus, cpu) != cpus->end();
	}

	// the kernel's view (cpuN/online; a CPU without the file, often cpu0,
	// cannot go offline), else the driver's
	bool online(unsigned cpu) const
	{
		if (const auto v = read_line(at("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online")))
			return *v != "0";
		return !info_ || cpu >= info_->cpus.size() || info_->cpus[cpu].online();
	}

	// MIDR_EL1 per CPU: the driver's, else the kernel's regs/identification
	std::map<unsigned, std::uint64_t> midrs() const
	{
		std::map<unsigned, std::uint64_t> out;
		if (info_) {
			for (const CpuInfo& c : info_->cpus)
				if (c.discovered())
					out[c.cpu] = c.midr;
			return out;
		}
		for (const unsigned cpu : possible_cpus()) {
			const fs::path file = at("sys/devices/system/cpu/cpu" + std::to_string(cpu) +
						 "/regs/identification/midr_el1");
			if (const auto midr = read_number<std::uint64_t>(file))
				out[cpu] = *midr;
		}
		return out;
	}

	// ACPI firmware, no devicetree for the kernel
	bool acpi() const
	{
		return path_exists(at("sys/firmware/acpi")) && !path_exists(at("sys/firmware/devicetree"));
	}

	std::string refused_fix(bool have_arm_pmu) const
	{
		if (have_arm_pmu && param("amupmu", "pmu_shared") == "N")
			return "echo Y | sudo tee /sys/module/amupmu/parameters/pmu_shared; across reboots too: echo "
			       "'options amupmu pmu_shared=Y' | sudo tee /etc/modprobe.d/amupmu-pmu-shared.conf";
		if (acpi())
			return "a firmware setting: give each CPU its PMU interrupt in the ACPI MADT (GICC entries) so the "
			       "kernel's arm_pmu registers (CONFIG_ARM_PMU_ACPI), then amupmu counts through it";
		return "boot with a devicetree that gives amupmu the PMU (dts/amupmu-virt.dtso)";
	}

	void pmu_mode(bool have_arm_pmu)
	{
		if (!info_) {
			add("pmu", "mode", DoctorStatus::skip, "unknown without the module");
			return;
		}
		switch (info_->pmu_mode()) {
		case PmuMode::exclusive:
		case PmuMode::shared:
			add("pmu", "mode", DoctorStatus::ok, pmu_mode_text(*info_));
			break;
		case PmuMode::refused:
			add("pmu", "mode", DoctorStatus::fail, pmu_mode_text(*info_), refused_fix(have_arm_pmu));
			break;
		case PmuMode::none:
			add("pmu", "mode", DoctorStatus::fail,
			    "no CPU implements PMUv3 (ID_AA64DFR0_EL1.PMUVer): a virtual machine without a PMU?",
			    "give the VM a PMU (QEMU: -cpu ...,pmu=on; KVM: the vCPU feature PMU_V3)");
			break;
		}
	}

	void pmu()
	{
		const std::vector<std::string> pmus = arm_pmus();
		pmu_mode(!pmus.empty());
		if (!pmus.empty()) {
			std::string list;
			for (const std::string& p : pmus)
				list += (list.empty() ? "" : ", ") + p;
			add("pmu", "arm_pmu", DoctorStatus::ok, "registered with perf core: " + list);
		} else if (info_ && info_->pmu_mode() == PmuMode::exclusive) {
			add("pmu", "arm_pmu", DoctorStatus::ok, "none registered: amupmu owns the PMU (exclusive mode)");
		} else if (!info_ && amupmu_pmu_node()) {
			add("pmu", "arm_pmu", DoctorStatus::ok,
			    "none registered: the devicetree gives the PMU to amupmu (amupmu,pmuv3), whose module counts "
			    "with it");
		} else {
			add("pmu", "arm_pmu", DoctorStatus::warn,
			    "none registered with perf core: the kernel found no PMU (no pmu node in the devicetree or "
			    "ACPI, a virtual machine without a PMU, or CONFIG_ARM_PMU off)");
		}
		const auto types = core_types(midrs());
		if (types.empty()) {
			add("pmu", "core_types", DoctorStatus::skip, "no CPU's MIDR_EL1 is known");
		} else {
			std::string list;
			for (const auto& [key, value] : types)
				list += (list.empty() ? "" : ", ") + describe_midr(value.first) + " (CPUs " +
					format_cpu_list(value.second) + ")";
			if (types.size() == 1)
				add("pmu", "core_types", DoctorStatus::ok, "one core type: " + list);
			else
				add("pmu", "core_types", DoctorStatus::warn,
				    std::to_string(types.size()) + " core types (big.LITTLE): " + list +
					    "; events and counters differ per type, count one type at a time (-C)");
		}
		for (const unsigned cpu : possible_cpus())
			pmu_cpu(cpu);
	}

	void pmu_cpu(unsigned cpu)
	{
		const std::string name = "cpu" + std::to_string(cpu);
		if (!present(cpu)) {
			add("pmu", "cpu", DoctorStatus::skip, "possible but not present (firmware did not bring it up)",
			    {}, cpu);
			return;
		}
		if (!online(cpu)) {
			add("pmu", "cpu", DoctorStatus::warn, "offline: not counted",
			    "echo 1 | sudo tee /sys/devices/system/cpu/" + name + "/online", cpu);
			return;
		}
		if (!info_ || cpu >= info_->cpus.size()) {
			add("pmu", "cpu", DoctorStatus::skip, "online; its PMU is unknown without the module", {}, cpu);
			return;
		}
		const CpuInfo& c = info_->cpus[cpu];
		if (!c.discovered()) {
			add("pmu", "cpu", DoctorStatus::warn, "online but not read by amupmu yet", {}, cpu);
		} else if (!c.has_pmu()) {
			add("pmu", "cpu", DoctorStatus::fail,
			    "no PMUv3 (ID_AA64DFR0_EL1.PMUVer " + std::string{pmu_version_name(c.pmu_version)} + ")", {},
			    cpu);
		} else {
			std::string why = std::string{pmu_version_name(c.pmu_version)} + ", " +
					  std::to_string(c.pmu_num_counters) + " event counters + cycle counter";
			if (info_->pmu_mode() == PmuMode::exclusive && !from_sysfs())
				why += ", " + std::to_string(c.counters_free()) + " free";
			add("pmu", "cpu", DoctorStatus::ok, why, {}, cpu);
		}
	}

	bool from_sysfs() const { return !in_.info; }

	// ---------------------------------------------------------------- amu

	void amu()
	{
		if (!info_) {
			add("amu", "present", DoctorStatus::skip, "unknown without the module");
			return;
		}
		if (std::ranges::none_of(info_->cpus, &CpuInfo::has_amu)) {
			add("amu", "present", DoctorStatus::skip, "no CPU implements the AMU (ID_AA64PFR0_EL1.AMU is 0)");
			return;
		}
		if (info_->mock())
			add("amu", "present", DoctorStatus::warn,
			    "mock: the AMU is the test build's register model (CONFIG_AMUPMU_MOCK), not the CPUs'",
			    "install the production module (amupmu-dkms)");
		else
			add("amu", "present", DoctorStatus::ok, "the CPUs' Activity Monitors");
		for (const CpuInfo& c : info_->cpus)
			if (c.possible())
				amu_cpu(c);
	}

	void amu_cpu(const CpuInfo& c)
	{
		const unsigned cg0nc = static_cast<unsigned>(field<7, 0>(c.amcgcr));
		const unsigned cg1nc = static_cast<unsigned>(field<15, 8>(c.amcgcr));
		const std::uint32_t architected = (1U << std::min(cg0nc, amu_group0_architected)) - 1;
		constexpr std::string_view firmware_fix =
			"a firmware setting: enable the AMU at EL3 (TF-A: ENABLE_FEAT_AMU=1); ask the board's vendor";
		if (!c.discovered()) {
			add("amu", "cpu", DoctorStatus::skip,
			    present(c.cpu) ? "not read by amupmu (offline)" : "not read by amupmu (not present)", {}, c.cpu);
		} else if (!c.has_amu()) {
			add("amu", "cpu", DoctorStatus::warn, "no AMU on this CPU (others have one): AMU reads leave it out",
			    {}, c.cpu);
		} else if (c.amu_off()) {
			const bool by_param = param("amupmu", "amu") == "N";
			add("amu", "cpu", DoctorStatus::warn,
			    std::string{"implemented but not used: "} +
				    (by_param ? "module parameter amu=N" : "a kernel without CONFIG_ARM64_AMU_EXTN"),
			    by_param ? "sudo modprobe -r amupmu && sudo modprobe amupmu amu=1" : "", c.cpu);
		} else if (c.amu_zero()) {
			add("amu", "cpu", DoctorStatus::fail,
			    "the core and constant cycle counters read zero: firmware left the AMU disabled",
			    std::string{firmware_fix}, c.cpu);
		} else if (c.amcgcr != 0 && (c.amcntenset0 & architected) != architected) {
			std::ostringstream s;
			s << "firmware left group 0 counters disabled (AMCNTENSET0_EL0 0x" << std::hex << c.amcntenset0
			  << std::dec << ", architected 0x" << std::hex << architected << ")";
			add("amu", "cpu", DoctorStatus::fail, s.str(), std::string{firmware_fix}, c.cpu);
		} else {
			add("amu", "cpu", DoctorStatus::ok,
			    std::string{amu_version_name(c.amu_version)} + ", " + std::to_string(cg0nc) + " + " +
				    std::to_string(cg1nc) + " counters" + (info_->mock() ? " (mock model)" : ""),
			    {}, c.cpu);
		}
	}

	// ---------------------------------------------------------------- spe

	// SPE on the CPUs: true or false from the driver, nullopt without it
	std::optional<bool> spe_cpus()
	{
		if (!info_) {
			add("spe", "present", DoctorStatus::skip, "unknown without the module");
			return std::nullopt;
		}
		std::vector<unsigned> cpus;
		unsigned version = 0;
		for (const CpuInfo& c : info_->cpus) {
			if (c.has_spe()) {
				cpus.push_back(c.cpu);
				version = c.spe_version;
			}
		}
		if (cpus.empty()) {
			add("spe", "present", DoctorStatus::skip, "no CPU implements SPE (ID_AA64DFR0_EL1.PMSVer is 0)");
			return false;
		}
		const std::string where = std::string{spe_version_name(version)} + " on CPUs " + format_cpu_list(cpus);
		if (info_->mock())
			add("spe", "present", DoctorStatus::warn,
			    "mock: " + where + " is the test build's model (CONFIG_AMUPMU_MOCK), not the CPUs'",
			    "install the production module (amupmu-dkms)");
		else
			add("spe", "present", DoctorStatus::ok, where);
		return true;
	}

	// whether there is an SPE device (the mock model counts as one)
	bool spe_device(std::optional<bool> present)
	{
		if (info_ && info_->mock() && present == true) {
			add("spe", "device", DoctorStatus::ok, "the mock model is amupmu's SPE (no platform device needed)");
			return true;
		}
		std::vector<SpeDevice> devices;
		try {
			devices = spe_devices(at("sys"));
		} catch (const Error&) {
		}
		if (devices.empty()) {
			if (present == true)
				add("spe", "device", DoctorStatus::fail,
				    "no SPE platform device: firmware describes no SPE (devicetree "
				    "arm,statistical-profiling-extension-v1, ACPI arm,spe-v1)",
				    "a firmware setting: describe SPE and its interrupt to the kernel");
			else
				add("spe", "device", DoctorStatus::skip, "no SPE platform device");
			return false;
		}
		const bool loadable = path_exists(at("sys/module") / spe_kernel_driver_name / "refcnt");
		for (const SpeDevice& d : devices) {
			const std::string claim = "sudo amupmu spe claim " + d.name;
			if (d.claimed())
				add("spe", "device", DoctorStatus::ok, d.name + " is amupmu's (" + d.driver + ")");
			else if (d.driver.empty())
				add("spe", "device", DoctorStatus::warn, d.name + " has no driver: amupmu has not claimed it",
				    loaded_ ? claim : "sudo modprobe amupmu && " + claim);
			else if (d.driver == spe_kernel_driver_name)
				add("spe", "device", DoctorStatus::fail,
				    d.name + " is held by arm_spe_pmu (perf's arm_spe): amupmu cannot profile",
				    loadable ? "sudo rmmod arm_spe_pmu && " + claim +
						       "; across reboots too: echo 'blacklist arm_spe_pmu' | sudo tee "
						       "/etc/modprobe.d/arm_spe_pmu-blacklist.conf"
					     : "echo " + d.name + " | sudo tee /sys/bus/platform/drivers/arm_spe_pmu/unbind && " +
						       claim);
			else
				add("spe", "device", DoctorStatus::fail, d.name + " is held by " + d.driver,
				    "echo " + d.name + " | sudo tee /sys/bus/platform/drivers/" + d.driver + "/unbind && " +
					    claim);
			out_.back().device = d.name;
		}
		return true;
	}

	// KPTI as the driver sees it (arm64_kernel_unmapped_at_el0(), which it
	// does not publish): kpti= on the command line (kstrtobool), else
	// vulnerabilities/meltdown, which does not show KPTI the kernel turns on
	// for KASLR on a core without E0PD (arm64's kaslr_requires_kpti())
	void kpti()
	{
		const std::optional<std::string> cmdline = read_line(at("proc/cmdline"));
		std::optional<bool> forced;
		bool nokaslr = false;
		for (const std::string& arg : words(cmdline.value_or(""))) {
			const std::optional<bool> v =
				arg.starts_with("kpti=") ? kernel_bool(std::string_view{arg}.substr(5)) : std::nullopt;
			if (v)
				forced = v;	// the last valid one counts, as in the kernel's parse_kpti()
			nokaslr = nokaslr || arg == "nokaslr";
		}
		const std::string fix = "boot with kpti=0 on the kernel command line (the CPU then has no Meltdown "
					"mitigation: only where it is not affected)";
		if (forced == false) {
			add("spe", "kpti", DoctorStatus::ok, "off (kpti=0 on the kernel command line)");
			return;
		}
		if (forced == true) {
			add("spe", "kpti", DoctorStatus::fail,
			    "on (kpti=1 on the kernel command line): SPE is refused (EOPNOTSUPP)", fix);
			return;
		}
		const std::optional<std::string> meltdown = read_line(at("sys/devices/system/cpu/vulnerabilities/meltdown"));
		if (!meltdown)
			add("spe", "kpti", DoctorStatus::skip, "unknown (no vulnerabilities/meltdown)");
		else if (meltdown->starts_with("Mitigation: PTI"))
			add("spe", "kpti", DoctorStatus::fail,
			    "on (meltdown: " + *meltdown +
				    "): the kernel is unmapped at EL0, SPE is refused (EOPNOTSUPP) and arm_spe_pmu does not probe",
			    fix);
		else if (*meltdown == "Not affected" && !nokaslr)
			add("spe", "kpti", DoctorStatus::warn,
			    "maybe on (meltdown: Not affected): with KASLR the kernel turns KPTI on for cores without "
			    "E0PD (Neoverse N1, Cortex-A76, ...) without saying so there; SPE needs it off (EOPNOTSUPP "
			    "otherwise)",
			    fix);
		else
			add("spe", "kpti", DoctorStatus::ok, "off (meltdown: " + *meltdown + ")");
	}

	void spe()
	{
		const std::optional<bool> present = spe_cpus();
		const bool device = spe_device(present);
		// without the module, an SPE device says the CPUs have SPE
		if (!present.value_or(device)) {
			add("spe", "kpti", DoctorStatus::skip, "no SPE");
			add("spe", "privilege", DoctorStatus::skip, "no SPE");
			return;
		}
		kpti();
		if (!capability_.empty())
			add("spe", "privilege", DoctorStatus::ok,
			    std::string{capability_} + ": kernel, physical addresses and timestamps included");
		else
			add("spe", "privilege", DoctorStatus::fail,
			    "SPE needs CAP_PERFMON for every configuration, user space only too (EACCES), at every "
			    "perf_event_paranoid level",
			    std::string{setcap_fix});
	}

	const DoctorInput& in_;
	std::string release_;
	std::string node_;
	bool loaded_ = false;
	std::string_view capability_;	///< the one that counts: "CAP_PERFMON", "CAP_SYS_ADMIN"; "" none
	std::optional<Info> info_;	///< AMUPMU_INFO, else the driver's sysfs
	std::vector<DoctorCheck> out_;
};

} // namespace

std::string doctor_kernel_release(const fs::path& root)
{
	return read_line(root / "proc/sys/kernel/osrelease").value_or("");
}

int doctor_device_refused(const fs::path& root, const std::string& path, std::string* why)
{
	struct stat st {};
	if (::stat(path.c_str(), &st) != 0)
		return errno;
	if (!S_ISCHR(st.st_mode)) {
		*why = path + " is not a character device";
		return ENOTTY;
	}
	const std::optional<std::string> dev = read_line(root / "sys/class/misc/amupmu/dev");
	if (!dev)
		return ENODEV;	// no driver, no node of it
	const std::string node = std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
	if (node != *dev) {
		*why = path + " is device " + node + ", not amupmu's (" + *dev + ")";
		return ENOTTY;
	}
	return 0;
}

std::optional<Info> info_from_sysfs(const fs::path& root)
{
	const fs::path dir = root / "sys/class/misc/amupmu";
	std::error_code ec;
	if (!fs::is_directory(dir, ec))
		return std::nullopt;
	Info info;
	if (const auto line = read_line(dir / "abi_version"))
		if (const auto abi = parse_abi(*line))
			std::tie(info.abi_major, info.abi_minor) = *abi;
	const std::vector<std::string> features = words(read_line(dir / "features").value_or(""));
	for (unsigned b = 0; b < 64; ++b) {
		const std::uint64_t feature = std::uint64_t{1} << b;
		if (std::ranges::find(features, feature_names(feature).front()) != features.end())
			info.features |= feature;
	}
	const std::string owner = read_line(dir / "pmu_owner").value_or("");
	for (const PmuOwner o : {PmuOwner::kernel, PmuOwner::amupmu})
		if (owner == to_string(o))
			info.pmu_owner = o;
	for (const std::string& name : entries(dir)) {
		const std::optional<unsigned> cpu = cpu_number(name);
		if (!cpu)
			continue;
		if (*cpu >= info.cpus.size())
			info.cpus.resize(*cpu + 1);
		info.cpus[*cpu].cpu = *cpu;
		read_cpu(dir / name, info.cpus[*cpu]);
	}
	for (std::size_t i = 0; i < info.cpus.size(); ++i)
		info.cpus[i].cpu = static_cast<std::uint32_t>(i);
	return info;
}

std::map<unsigned, std::uint64_t> kernel_midrs(const fs::path& root)
{
	std::map<unsigned, std::uint64_t> out;
	const fs::path cpu_dir = root / "sys/devices/system/cpu";
	const std::optional<std::string> list = read_line(cpu_dir / "possible");
	const std::vector<unsigned> cpus = list ? parse_cpu_list(*list).value_or(std::vector<unsigned>{})
						: std::vector<unsigned>{};
	for (const unsigned cpu : cpus)
		if (const auto midr = read_number<std::uint64_t>(cpu_dir / ("cpu" + std::to_string(cpu)) /
								 "regs/identification/midr_el1"))
			out[cpu] = *midr;
	return out;
}

std::vector<DoctorCheck> doctor_checks(const DoctorInput& input)
{
	return Doctor{input}.run();
}

} // namespace amupmu::cli
