// SPDX-License-Identifier: GPL-2.0
//
// ELF symbols, /proc/PID/maps, recordings and the report [host]: this
// test binary's own symbols and mappings (qemu-user emulates
// /proc/self/maps for the aarch64 run).
#include <amupmu/elf.hpp>
#include <amupmu/error.hpp>
#include <amupmu/record.hpp>

#include <catch2/catch.hpp>

#include <sstream>

#include <unistd.h>

using namespace amupmu;
using Catch::Matchers::Contains;

extern "C" [[gnu::noinline, gnu::used]] int amupmu_test_marker_function(int x)
{
	return x * 3 + 1;
}

TEST_CASE("parse_proc_maps keeps executable file mappings", "[host][record]")
{
	const char* text =
		"00400000-00452000 r-xp 00000000 fe:01 1234     /bin/amupmu-workload\n"
		"00461000-00463000 rw-p 00051000 fe:01 1234     /bin/amupmu-workload\n"
		"7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
		"7fff0000-7fff2000 r-xp 00000000 00:00 0        [vdso]\n"
		"55550000-55560000 r-xp 00002000 08:02 99       /usr/lib/my lib.so\n"
		"garbage\n";
	const auto maps = parse_proc_maps(text, 42);
	REQUIRE(maps.size() == 2);
	CHECK(maps[0] == Mapping{42, 0x400000, 0x452000, 0, "/bin/amupmu-workload"});
	CHECK(maps[1].path == "/usr/lib/my lib.so");
	CHECK(maps[1].offset == 0x2000);
}

TEST_CASE("the symbolizer names a PC of this process", "[host][record][elf]")
{
	const auto self = ElfSymbols::load("/proc/self/exe");
	REQUIRE(self);
	REQUIRE(self->size() > 0);
	CHECK_FALSE(ElfSymbols::load("/nonexistent"));
	CHECK_FALSE(ElfSymbols::parse("not an elf file at all, not at all"));

	Symbolizer sym;
	const auto maps = read_proc_maps(static_cast<std::uint32_t>(::getpid()));
	REQUIRE_FALSE(maps.empty());
	for (const Mapping& m : maps)
		sym.add(m);
	const auto pc = reinterpret_cast<std::uint64_t>(&amupmu_test_marker_function) + 4;
	const Resolved r = sym.resolve(static_cast<std::uint32_t>(::getpid()), pc, 0);
	CHECK(r.symbol == "amupmu_test_marker_function+0x4");
	CHECK(r.dso != "[unknown]");
	CHECK(sym.resolve(1, pc, 0).dso == "[unknown]");	// another pid
	CHECK(sym.resolve(0, 0xffff800008000000, 1).dso == "[kernel]");
	CHECK(amupmu_test_marker_function(1) == 4);
}

TEST_CASE("recording file round trip", "[host][record]")
{
	Recording r;
	r.command = {"/bin/amupmu-workload", "loop", "arg with space"};
	r.event = "inst_retired:u";
	r.number = 0x08;
	r.period = 100000;
	r.cpus = "0-1";
	r.timer_freq = 62500000;
	r.lost = 3;
	r.maps = {{7, 0x400000, 0x452000, 0, "/bin/amupmu-workload"}};
	r.samples = {{0, 7, 7, 0, 123, 0x400100}, {1, 7, 8, 1, 456, 0xffff800008001234}};
	std::stringstream ss;
	write_recording(ss, r);
	CHECK_THAT(ss.str(), Contains("amupmu-record 1\n"));
	const Recording back = read_recording(ss);
	CHECK(back == r);

	std::stringstream junk{"hello\n"};
	CHECK_THROWS_AS(read_recording(junk), InvalidArgument);
	std::stringstream bad{"amupmu-record 1\ns 0 1 2 9 5 0x10\n"};
	CHECK_THROWS_WITH(read_recording(bad), Contains("line 2"));
}

TEST_CASE("report: hottest symbols and PCs", "[host][record]")
{
	const auto pid = static_cast<std::uint32_t>(::getpid());
	Recording r;
	r.command = {"self"};
	r.event = "cpu_cycles";
	r.number = 0x11;
	r.period = 1000;
	r.cpus = "0";
	r.maps = read_proc_maps(pid);
	const auto hot = reinterpret_cast<std::uint64_t>(&amupmu_test_marker_function);
	for (int i = 0; i < 30; ++i)
		r.samples.push_back({0, pid, pid, 0, static_cast<std::uint64_t>(i), hot + 4});
	for (int i = 0; i < 10; ++i)
		r.samples.push_back({0, pid, pid, 1, static_cast<std::uint64_t>(i), 0xffff800008000000});
	const std::string rep = format_report(r, {.top = 5});
	INFO(rep);
	CHECK_THAT(rep, Contains("40 samples of cpu_cycles"));
	CHECK_THAT(rep, Contains(" 75.00%  30  amupmu_test_marker_function  "));
	CHECK_THAT(rep, Contains(" 25.00%  10  [unknown]  [kernel]"));
	CHECK_THAT(rep, Contains("amupmu_test_marker_function+0x4"));
}

namespace amupmu_test_ns {
[[gnu::noinline, gnu::used]] int cxx_marker(int x)
{
	return x + 2;
}
struct Functor {
	[[gnu::noinline]] int operator()(int x) const { return x * 5; }
};
} // namespace amupmu_test_ns

TEST_CASE("C++ symbols are demangled", "[host][record][elf]")
{
	Symbolizer sym;
	const auto pid = static_cast<std::uint32_t>(::getpid());
	for (const Mapping& m : read_proc_maps(pid))
		sym.add(m);
	const auto pc = reinterpret_cast<std::uint64_t>(&amupmu_test_ns::cxx_marker);
	CHECK(sym.resolve(pid, pc, 0).symbol == "amupmu_test_ns::cxx_marker+0x0");
	CHECK(amupmu_test_ns::cxx_marker(1) == 3);
	CHECK(amupmu_test_ns::Functor{}(2) == 10);
	// only the parameter list goes, not an operator's own parens
	CHECK(demangle_symbol("_ZN6amupmu9workloads9insn_loopEm") == "amupmu::workloads::insn_loop");
	CHECK(demangle_symbol("_ZNK14amupmu_test_ns7FunctorclEi") == "amupmu_test_ns::Functor::operator()");
	CHECK(demangle_symbol("_ZN1AclEv") == "A::operator()");
	CHECK(demangle_symbol("_ZNR1A1fEv") == "A::f");
	CHECK(demangle_symbol("main") == "main");
	CHECK(demangle_symbol("_Zbogus") == "_Zbogus");
}
