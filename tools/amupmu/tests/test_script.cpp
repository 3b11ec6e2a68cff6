// SPDX-License-Identifier: GPL-2.0
//
// amupmu script (amupmu/report/script.hpp): perf script's text, as the
// tools that read it parse it. Backend: host (this test binary's own
// symbols and mappings; on the aarch64 build under qemu-aarch64-static,
// which emulates /proc/self/maps).
#include <amupmu/elf.hpp>
#include <amupmu/report/script.hpp>

#include <catch2/catch.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

using namespace amupmu;
using namespace amupmu::report;

extern "C" [[gnu::noinline, gnu::used]] int amupmu_script_test_marker(int x)
{
	return x * 5 + 3;
}

namespace {

std::vector<std::string> lines_of(const std::string& text)
{
	std::vector<std::string> out;
	std::istringstream in{text};
	for (std::string line; std::getline(in, line);)
		out.push_back(line);
	return out;
}

} // namespace

TEST_CASE("script: each sample as FlameGraph's stackcollapse-perf.pl and perf script's layout have it", "[script][host]")
{
	const auto pid = static_cast<std::uint32_t>(::getpid());
	Recording r;
	r.event = "cpu_cycles:u";
	r.number = 0x11;
	r.period = 100000;
	r.more_events = {{.event = "inst_retired:k", .number = 0x08, .period = 300000, .modifiers = "k"}};
	r.timer_freq = 1000000;	// no clock line: the count over the frequency
	r.comms = {{pid, "amupmu test"}};
	r.kernel_symbols = {{0xffff800008010000, 0x100, "el0_svc"}};
	r.maps = read_proc_maps(pid);
	REQUIRE_FALSE(r.maps.empty());
	const auto pc = reinterpret_cast<std::uint64_t>(&amupmu_script_test_marker) + 4;
	r.samples = {{.cpu = 3, .pid = pid, .tid = pid + 1, .mode = SampleMode::user, .time = 2500000, .pc = pc},
		     {.cpu = 0, .pid = pid, .tid = pid, .mode = SampleMode::kernel, .time = 1000001,
		      .pc = 0xffff800008010010, .event = 1}};
	const std::vector<std::string> lines = lines_of(format_script(r));
	REQUIRE(lines.size() == 6);
	INFO(lines[0] << "\n" << lines[1] << "\n" << lines[3] << "\n" << lines[4]);

	// stackcollapse-perf.pl's event line ("comm pid/tid ...") and stack line
	// ("ip func (dso)"); a blank line ends each stack
	const std::regex header{R"(^(\S+\s*?\S*?)\s+(\d+)\/(\d+))"};
	const std::regex frame{R"(^\s*(\w+)\s*(.+) \((\S*)\))"};
	std::smatch m;
	// in time order: the kernel sample first
	REQUIRE(std::regex_search(lines[0], m, header));
	CHECK(m[1] == "amupmu test");
	CHECK(m[2] == std::to_string(pid));
	CHECK(m[3] == std::to_string(pid));
	CHECK_THAT(lines[0], Catch::Matchers::EndsWith(" [000]     1.000001:     300000 inst_retired:k: "));
	REQUIRE(std::regex_search(lines[1], m, frame));
	CHECK(m[1] == "ffff800008010010");
	CHECK(m[2] == "el0_svc+0x10");
	CHECK(m[3] == "[kernel.kallsyms]");
	CHECK(lines[2].empty());

	REQUIRE(std::regex_search(lines[3], m, header));
	CHECK(m[3] == std::to_string(pid + 1));
	CHECK_THAT(lines[3], Catch::Matchers::EndsWith(" [003]     2.500000:     100000 cpu_cycles:u: "));
	REQUIRE(std::regex_search(lines[4], m, frame));
	char ip[32];
	std::snprintf(ip, sizeof(ip), "%llx", static_cast<unsigned long long>(pc));
	CHECK(m[1] == ip);
	CHECK(m[2] == "amupmu_script_test_marker+0x4");
	CHECK(m[3].str().starts_with("/"));	// this executable's path
	CHECK(lines[5].empty());
}
