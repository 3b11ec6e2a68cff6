// SPDX-License-Identifier: GPL-2.0
//
// libamupmu against the real driver: needs /dev/amupmu (run on the board).
// Without the device every test FAILS, unless AMUPMU_ALLOW_NO_DEVICE=1, in
// which case each test returns early with a warning (Catch2 2.x has no skip).
//
// What AMUPMU_INFO reports is compared with what the kernel publishes
// independently (/sys/devices/system/cpu) and with the driver's own sysfs
// (/sys/class/misc/amupmu).
#include "json_check.hpp"

#include <amupmu/amupmu.hpp>
#include <amupmu/report/info_format.hpp>
#include <linux/amupmu.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

using namespace amupmu;
using namespace amupmu::report;

namespace {

const std::string cpu_sysfs = "/sys/devices/system/cpu";
const std::string amupmu_sysfs = "/sys/class/misc/amupmu";

bool allow_no_device()
{
	const char* v = std::getenv("AMUPMU_ALLOW_NO_DEVICE");
	return v && std::string_view{v} == "1";
}

/// The opened device; nullopt (after a WARN) only when it is absent and
/// AMUPMU_ALLOW_NO_DEVICE=1. Any other failure fails the calling test.
std::optional<Device> board_device()
{
	int err = 0;
	if (auto dev = Device::try_open(default_device_path, &err))
		return dev;
	if ((err == ENOENT || err == ENODEV) && allow_no_device()) {
		WARN("SKIP: " << default_device_path << ": " << errno_text(err)
			      << " and AMUPMU_ALLOW_NO_DEVICE=1");
		return std::nullopt;
	}
	FAIL(default_device_path << ": " << errno_text(err)
				 << " -- load amupmu.ko (or set AMUPMU_ALLOW_NO_DEVICE=1 to skip)");
	return std::nullopt;
}

/// A sysfs file without its trailing newline; nullopt if it cannot be read.
std::optional<std::string> read_sysfs(const std::string& path)
{
	std::ifstream in{path};
	if (!in)
		return std::nullopt;
	std::ostringstream s;
	s << in.rdbuf();
	std::string text = s.str();
	while (!text.empty() && text.back() == '\n')
		text.pop_back();
	return text;
}

/// A sysfs file that must exist: REQUIREs it.
std::string must_read(const std::string& path)
{
	std::optional<std::string> text = read_sysfs(path);
	INFO("reading " << path);
	REQUIRE(text.has_value());
	return *text;
}

std::uint64_t parse_u64(const std::string& text, int base)
{
	std::string_view s{text};
	if (base == 16 && (s.starts_with("0x") || s.starts_with("0X")))
		s.remove_prefix(2);
	std::uint64_t v = 0;
	const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
	INFO("parsing '" << text << "'");
	REQUIRE((ec == std::errc{} && end == s.data() + s.size() && !s.empty()));
	return v;
}

std::vector<unsigned> cpu_list(const std::string& name)
{
	const std::string text = must_read(cpu_sysfs + "/" + name);
	std::optional<std::vector<unsigned>> cpus = parse_cpu_list(text);
	INFO(name << " = '" << text << "'");
	REQUIRE(cpus.has_value());
	return *cpus;
}

bool contains(const std::vector<unsigned>& cpus, unsigned cpu)
{
	return std::ranges::binary_search(cpus, cpu);
}

// Printed once per run, as a TAP comment, so every log says what it ran on.
void report_backend(const Info& info)
{
	static bool done = false;
	if (std::exchange(done, true))
		return;
	std::cout << "# backend: " << backend_description(info) << " (" << backend_name(info)
		  << "), pmu owner " << to_string(info.pmu_owner) << ", pmu mode " << pmu_mode_text(info)
		  << ", driver ABI "
		  << info.abi_major << "." << info.abi_minor << std::endl;
}

/// AMUPMU_INFO of the opened device, its backend reported once; nullopt as
/// board_device().
std::optional<Info> board_info()
{
	auto dev = board_device();
	if (!dev)
		return std::nullopt;
	Info info = dev->info();
	report_backend(info);
	return info;
}

} // namespace

TEST_CASE("board: open /dev/amupmu and handshake", "[board]")
{
	const auto live = board_info();
	if (!live)
		return;
	const Info& info = *live;
	INFO("backend: " << backend_description(info));

	CHECK(info.abi_major == AMUPMU_ABI_MAJOR);
	CHECK(info.supports(Ioctl::info));
	CHECK_FALSE(info.cpus.empty());
	// The PMU owner follows from the features.
	if (!info.has_pmu())
		CHECK(info.pmu_owner == PmuOwner::none);
	else if (info.pmu_exclusive())
		CHECK(info.pmu_owner == PmuOwner::amupmu);
	else
		CHECK(info.pmu_owner == PmuOwner::kernel);
	// shared mode (ABI 2.3) only where the kernel owns the PMU
	if (info.pmu_shared()) {
		CHECK(info.pmu_owner == PmuOwner::kernel);
		CHECK_FALSE(info.pmu_exclusive());
		CHECK(info.pmu_mode() == PmuMode::shared);
	}
	if (info.pmu_owner == PmuOwner::kernel)
		CHECK((info.pmu_mode() == PmuMode::shared || info.pmu_mode() == PmuMode::refused));
}

TEST_CASE("board: one entry per possible CPU, online CPUs discovered", "[board]")
{
	const auto live = board_info();
	if (!live)
		return;
	const Info& info = *live;
	INFO("backend: " << backend_description(info));

	const std::vector<unsigned> possible = cpu_list("possible");
	const std::vector<unsigned> online = cpu_list("online");
	REQUIRE_FALSE(possible.empty());
	// nr_cpu_ids: one past the highest possible CPU number.
	CHECK(info.cpus.size() == std::size_t{possible.back()} + 1);

	for (unsigned n = 0; n < info.cpus.size(); ++n) {
		const CpuInfo& c = info.cpus[n];
		INFO("cpu" << n);
		CHECK(c.cpu == n);
		CHECK(c.possible() == contains(possible, n));
		CHECK(c.online() == contains(online, n));
		if (!c.online())
			continue;
		CHECK(c.discovered());
		const std::string midr = must_read(cpu_sysfs + "/cpu" + std::to_string(n) +
						   "/regs/identification/midr_el1");
		CHECK(c.midr == parse_u64(midr, 16));
	}
}

TEST_CASE("board: capabilities agree with the ID registers", "[board]")
{
	const auto live = board_info();
	if (!live)
		return;
	const Info& info = *live;

	bool any_pmu = false;
	for (const CpuInfo& c : info.cpus) {
		if (!c.discovered())
			continue;
		INFO("cpu" << c.cpu << " " << describe_midr(c.midr));
		const unsigned pmuver = dfr0_pmuver(c.id_aa64dfr0);
		CHECK(c.pmu_version == pmuver);
		CHECK(c.has_pmu() == pmuver_is_pmuv3(pmuver));
		any_pmu = any_pmu || c.has_pmu();
		if (c.has_pmu()) {
			CHECK(c.pmu_num_counters == decode_pmcr(c.pmcr).n);
			CHECK(c.pmceid_ext() == (pmuver >= pmuver_v3p1));
			CHECK(c.has_pmmir() == (pmuver >= pmuver_v3p4));
			const std::vector<std::uint16_t> events = implemented_events(c);
			// CPU_CYCLES is mandatory in PMUv3.
			CHECK(std::ranges::binary_search(events, std::uint16_t{0x11}));
		}
		if (c.mock()) {
			CHECK(info.mock());
			continue;	// AMU/SPE registers are the model's, not the ID registers'
		}
		CHECK(c.has_amu() == (pfr0_amu(c.id_aa64pfr0) != 0));
		CHECK(c.amu_version == pfr0_amu(c.id_aa64pfr0));
		CHECK(c.has_spe() == (dfr0_pmsver(c.id_aa64dfr0) != 0));
		CHECK(c.spe_version == dfr0_pmsver(c.id_aa64dfr0));
	}
	CHECK(info.has_pmu() == any_pmu);
}

TEST_CASE("board: the driver's sysfs mirrors AMUPMU_INFO", "[board]")
{
	const auto live = board_info();
	if (!live)
		return;
	const Info& info = *live;

	CHECK(must_read(amupmu_sysfs + "/pmu_owner") == to_string(info.pmu_owner));
	CHECK(must_read(amupmu_sysfs + "/abi_version") ==
	      std::to_string(info.abi_major) + "." + std::to_string(info.abi_minor));
	// every bit by its name: shared mode's too ("pmu_shared", ABI 2.3)
	CHECK(must_read(amupmu_sysfs + "/features") == feature_string(info.features));
	CHECK(must_read(amupmu_sysfs + "/backend") == backend_name(info));

	for (const CpuInfo& c : info.cpus) {
		if (!c.possible())
			continue;
		const std::string dir = amupmu_sysfs + "/cpu" + std::to_string(c.cpu);
		INFO(dir);
		CHECK(parse_u64(must_read(dir + "/online"), 10) == (c.online() ? 1u : 0u));
		CHECK(parse_u64(must_read(dir + "/discovered"), 10) == (c.discovered() ? 1u : 0u));
		if (!c.discovered())
			continue;
		CHECK(parse_u64(must_read(dir + "/midr_el1"), 16) == c.midr);
		CHECK(parse_u64(must_read(dir + "/id_aa64dfr0_el1"), 16) == c.id_aa64dfr0);
		if (c.has_pmu()) {
			CHECK(parse_u64(must_read(dir + "/pmu_version"), 10) == c.pmu_version);
			CHECK(parse_u64(must_read(dir + "/pmu_counters"), 10) == c.pmu_num_counters);
		}
	}
}

TEST_CASE("board: amupmu info renders the live report", "[board]")
{
	const auto live = board_info();
	if (!live)
		return;
	const Info& info = *live;

	const std::string json = format_info_json(info);
	INFO(json);
	CHECK(test::json_error(json).empty());
	const std::string text = format_info_text(info, {.verbose = true});
	CHECK(text.find("cpu0: ") != std::string::npos);
	const auto again = board_info();
	REQUIRE(again);
	CHECK(*again == info);	// nothing changes between two queries
}
