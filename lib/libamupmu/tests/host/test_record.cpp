// SPDX-License-Identifier: GPL-2.0
//
// ELF symbols, /proc/PID/maps, recordings and the report [host]: this
// test binary's own symbols and mappings (qemu-user emulates
// /proc/self/maps for the aarch64 run).
#include <amupmu/bits.hpp>
#include <amupmu/elf.hpp>
#include <amupmu/error.hpp>
#include <amupmu/report/record.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <sstream>

#include <unistd.h>

using namespace amupmu;
using namespace amupmu::report;
using Catch::Matchers::Contains;

// gnu::used keeps them (and their symbols) without a call
extern "C" [[gnu::noinline, gnu::used]] int amupmu_test_marker_function(int x)
{
	return x * 3 + 1;
}
extern "C" [[gnu::noinline, gnu::used]] int amupmu_test_other_function(int x)
{
	return x * 7 + 2;
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
	const Resolved r = sym.resolve(static_cast<std::uint32_t>(::getpid()), pc, SampleMode::user);
	CHECK(r.symbol == "amupmu_test_marker_function+0x4");
	CHECK(r.dso != "[unknown]");
	CHECK(sym.resolve(1, pc, SampleMode::user).dso == "[unknown]");	// another pid
	CHECK(sym.resolve(0, 0xffff800008000000, SampleMode::kernel).dso == "[kernel]");
	CHECK(sym.resolve(0, 0x1000, SampleMode::hv).dso == "[hypervisor]");
	CHECK(sym.resolve(0, 0x1000, static_cast<SampleMode>(9)).dso == "[unknown]");
	// its neighbour's PC is not its: the symbol ends where the ELF says
	const auto other = reinterpret_cast<std::uint64_t>(&amupmu_test_other_function);
	CHECK(sym.resolve(static_cast<std::uint32_t>(::getpid()), other, SampleMode::user).symbol ==
	      "amupmu_test_other_function+0x0");
}

TEST_CASE("recording file round trip", "[host][record]")
{
	Recording r;
	r.command = {"/bin/amupmu-workload", "loop", "arg with space"};
	r.event = "inst_retired:u";
	r.number = 0x08;
	r.period = 100000;
	r.cpus = "0-1";
	r.modifiers = "u";
	r.timer_freq = 62500000;
	r.time = {.clock = Clock::cntvct, .time_shift = 24, .time_mult = 16u << 24, .time_zero = 1000,
		  .time_zero_ns = 5000000000};
	r.lost = 3;
	r.skid = 2;
	r.maps = {{7, 0x400000, 0x452000, 0, "/bin/amupmu-workload"}};
	r.samples = {{0, 7, 7, SampleMode::user, 123, 0x400100},
		     {1, 7, 8, SampleMode::kernel, 456, 0xffff800008001234},
		     {1, 0, 0, SampleMode::hv, 789, 0x1000},
		     {0, 7, 7, static_cast<SampleMode>(7), 790, 0x400104}};	// a mode from a newer driver
	std::stringstream ss;
	write_recording(ss, r);
	const std::string text = ss.str();
	CHECK_THAT(text, Contains("amupmu-record 2\n"));
	CHECK_THAT(text, Contains("\nmodifiers u\n"));
	CHECK_THAT(text, Contains("\nclock CNTVCT_EL0 24 268435456 1000 5000000000\n"));
	CHECK_THAT(text, Contains("\nskid 2\n"));
	CHECK_THAT(text, Contains("\ns 0 7 7 user 123 0x400100\n"));
	CHECK_THAT(text, Contains("\ns 1 7 8 kernel 456 "));
	CHECK_THAT(text, Contains("\ns 1 0 0 hv 789 "));
	CHECK_THAT(text, Contains("\ns 0 7 7 7 790 "));
	const Recording back = read_recording(ss);
	CHECK(back == r);

	// no modifiers, no time conversion
	r.modifiers.clear();
	r.time = {};
	std::stringstream plain;
	write_recording(plain, r);
	CHECK_THAT(plain.str(), !Contains("clock "));
	CHECK(read_recording(plain) == r);

	std::stringstream junk{"hello\n"};
	CHECK_THROWS_AS(read_recording(junk), InvalidArgument);
	std::stringstream bad{"amupmu-record 2\ns 0 1 2 bogus 5 0x10\n"};
	CHECK_THROWS_WITH(read_recording(bad), Contains("line 2"));
	std::stringstream bad_mods{"amupmu-record 2\nmodifiers up\n"};
	CHECK_THROWS_WITH(read_recording(bad_mods), Contains("line 2: modifier 'p'"));
	std::stringstream bad_clock{"amupmu-record 2\nclock CNTVCT_EL0 24 0 1 2\n"};	// mult 0
	CHECK_THROWS_WITH(read_recording(bad_clock), Contains("line 2"));
}

TEST_CASE("recording parser: the library's error naming the line, for every bad number", "[host][record]")
{
	const auto read = [](const std::string& body) {
		std::stringstream in{"amupmu-record 2\ncommand true\n" + body};
		return read_recording(in);
	};
	const auto fails = [&](const std::string& body, const std::string& message) {
		INFO(body);
		// InvalidArgument, never std::invalid_argument or std::out_of_range
		CHECK_THROWS_AS(read(body), InvalidArgument);
		CHECK_THROWS_WITH(read(body), Contains(message));
	};
	// event codes are 16 bits: not cut to 0x2345
	fails("event raw 0x12345 100\n", "recording line 3: event code 0x12345 does not fit in 16 bits");
	CHECK(read("event raw 0xffff 100\n").number == 0xffff);
	fails("event raw 0x 100\n", "line 3: malformed 'event' line: event code '0x'");
	fails("event raw 0xzz 100\n", "line 3: malformed 'event' line: event code '0xzz'");
	fails("event raw 17 100\n", "line 3: malformed 'event' line: event code '17' is not 0x<hex>");
	fails("event raw 0x11 -5\n", "line 3: malformed 'event' line: period '-5'");
	fails("event raw 0x11\n", "line 3: malformed 'event' line");
	// what std::stoull threw on
	fails("cpus 0\nmap 1 zz 0x2000 0x0 /bin/x\n", "recording line 4: malformed 'map' line: start 'zz'");
	fails("map 1 0x10000000000000000 0x2000 0x0 /bin/x\n", "line 3: start 0x10000000000000000 does not fit in 64 bits");
	fails("map 1 0x1000 0x2000 0xq /bin/x\n", "line 3: malformed 'map' line: offset '0xq'");
	fails("s 0 1 2 user 5 0xg\n", "line 3: malformed 's' line: pc '0xg'");
	fails("s 0 1 2 user 5 10\n", "line 3: malformed 's' line: pc '10' is not 0x<hex>");
	// what istream >> quietly wrapped or cut
	fails("s 4294967296 1 2 user 5 0x10\n", "line 3: cpu 4294967296 does not fit in 32 bits");
	fails("s -1 1 2 user 5 0x10\n", "line 3: malformed 's' line: cpu '-1'");
	fails("lost 1.5\n", "line 3: malformed 'lost' line: lost '1.5'");
	fails("clock CNTVCT_EL0 24 268435456 1,000 2\n", "line 3: malformed 'clock' line: time_zero '1,000'");
	fails("skid\n", "line 3: malformed 'skid' line");
	fails("cpus 0%zz\n", "recording line 3: bad %-escape in '0%zz'");
	// the line number counts every line
	fails("\ncpus 0\ntimer_freq x\n", "recording line 5: malformed 'timer_freq' line");
}

TEST_CASE("recordings of format 1 still read: EL0 is user, EL1 and EL2 kernel", "[host][record]")
{
	std::stringstream v1{"amupmu-record 1\n"
			     "command a\n"
			     "event cpu_cycles:u 0x0011 1000\n"
			     "cpus 0\n"
			     "timer_freq 62500000\n"
			     "lost 1\n"
			     "s 0 1 2 0 5 0x10\n"
			     "s 0 1 2 1 6 0x20\n"
			     "s 0 1 2 2 7 0x30\n"};
	const Recording r = read_recording(v1);
	REQUIRE(r.samples.size() == 3);
	CHECK(r.samples[0].mode == SampleMode::user);
	CHECK(r.samples[1].mode == SampleMode::kernel);
	CHECK(r.samples[2].mode == SampleMode::kernel);
	CHECK(r.event == "cpu_cycles:u");
	CHECK(r.lost == 1);
	CHECK_FALSE(r.time.valid());
	std::stringstream bad{"amupmu-record 1\ns 0 1 2 user 5 0x10\n"};	// words are format 2's
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
		r.samples.push_back({0, pid, pid, SampleMode::user, static_cast<std::uint64_t>(i), hot + 4});
	for (int i = 0; i < 10; ++i)
		r.samples.push_back({0, pid, pid, SampleMode::kernel, static_cast<std::uint64_t>(i), 0xffff800008000000});
	SECTION("without a time conversion")
	{
		const std::string rep = format_report(r, {.top = 5});
		INFO(rep);
		CHECK_THAT(rep, Contains("40 samples of cpu_cycles (0x0011) every 1000 events, CPUs 0, 0 lost, "
					 "0 dropped as kernel skid\n"));
		CHECK_THAT(rep, Contains("\n# modes: user 30, kernel 10\n"));
		CHECK_THAT(rep, !Contains("# time"));
		CHECK_THAT(rep, !Contains("# modifiers"));
		// perf report's default columns: command, symbol, file
		CHECK_THAT(rep, Contains("#  overhead  samples  command  symbol  dso\n"));
		CHECK_THAT(rep, Contains(" 75.00%  30  :" + std::to_string(pid) + "  [.] amupmu_test_marker_function  "));
		CHECK_THAT(rep, Contains(" 25.00%  10  :" + std::to_string(pid) + "  [k] [unknown]  [kernel]"));
		CHECK_THAT(rep, Contains("  [.] amupmu_test_marker_function+0x4  "));
		CHECK_THAT(rep, Contains(" 25.00%  10  -  [k] [unknown]  [kernel]"));
	}
	SECTION("--sort, --percent-limit, kernel symbols, several events")
	{
		r.comms = {{pid, "self"}};
		r.kernel_symbols = {{0xffff800007ff0000, 0x10000, "before"}, {0xffff800008000000, 0x40, "el0_svc"}};
		r.more_events = {{.event = "inst_retired", .number = 0x08, .period = 5000}};
		r.samples.push_back({.cpu = 0, .pid = 9, .tid = 9, .mode = SampleMode::user, .time = 50, .pc = 0x10,
				     .event = 1});
		const std::string rep = format_report(r, {.top = 5, .sort = {"pid", "comm", "dso"}, .percent_limit = 10});
		INFO(rep);
		CHECK_THAT(rep, Contains("41 samples of cpu_cycles (0x0011) every 1000 events, inst_retired (0x0008) every "
					 "5000 events, CPUs 0"));
		CHECK_THAT(rep, Contains("\n# samples per event: cpu_cycles 40, inst_retired 1\n"));
		CHECK_THAT(rep, Contains("\n# lines below 10.00% left out\n"));
		CHECK_THAT(rep, Contains("#  overhead  samples  pid  command  dso\n"));
		CHECK_THAT(rep, Contains(" 24.39%  10  " + std::to_string(pid) + "  self  [kernel]\n"));
		CHECK_THAT(rep, !Contains(":9"));	// 1 of 41 samples: below the limit
		// the kernel's PC named from the recording's kallsyms lines
		CHECK_THAT(rep, Contains("  10  0xffff800008000000  [k] el0_svc+0x0  [kernel]\n"));
		CHECK(parse_sort_keys("sym,dso,comm,pid") == std::vector<std::string>{"sym", "dso", "comm", "pid"});
		CHECK(parse_sort_keys("symbol") == std::vector<std::string>{"sym"});
		CHECK_THROWS_WITH(parse_sort_keys("sym,cpu"), Contains("unknown key 'cpu'"));
		CHECK_THROWS_WITH(parse_sort_keys("dso,dso"), Contains("'dso' listed twice"));
		CHECK_THROWS_AS(parse_sort_keys(""), InvalidArgument);
	}
	SECTION("times in CLOCK_MONOTONIC_RAW, modifiers named")
	{
		r.event = "cpu_cycles:k";
		r.modifiers = "k";
		r.skid = 4;
		// 62.5 MHz: 16 ns per count, time 0 is 1 s
		r.time = {.clock = Clock::cntpct, .time_shift = 24, .time_mult = 16u << 24, .time_zero = 0,
			  .time_zero_ns = 1000000000};
		r.samples.push_back({1, 0, 0, SampleMode::hv, 62500029, 0x1000});
		const std::string rep = format_report(r, {.top = 5});
		INFO(rep);
		CHECK_THAT(rep, Contains("41 samples of cpu_cycles:k (0x0011) every 1000 events, CPUs 0, 0 lost, "
					 "4 dropped as kernel skid\n"));
		CHECK_THAT(rep, Contains("\n# modifiers: k (exclude user, hv)\n"));
		CHECK_THAT(rep, Contains("\n# modes: user 30, kernel 10, hv 1\n"));
		CHECK_THAT(rep, Contains("\n# time: 1.000000000 s to 2.000000464 s CLOCK_MONOTONIC_RAW "
					 "(1.000000464 s, CNTPCT_EL0)\n"));
		CHECK_THAT(rep, Contains("  [H] [unknown]  [hypervisor]\n"));
	}
}

namespace amupmu_test_ns {
[[gnu::noinline, gnu::used]] int cxx_marker(int x)
{
	return x + 2;
}
struct Functor {
	[[gnu::noinline]] int operator()(int x) const;
};
[[gnu::noinline, gnu::used]] int Functor::operator()(int x) const
{
	return x * 5;
}
} // namespace amupmu_test_ns

namespace {
// Functor::operator()'s code address (the ABI's member pointer holds it
// for a non-virtual member function)
const void* const functor_call = [] {
	int (amupmu_test_ns::Functor::*m)(int) const = &amupmu_test_ns::Functor::operator();
	const void* p = nullptr;
	static_assert(sizeof(m) >= sizeof(p));
	std::memcpy(&p, &m, sizeof(p));
	return p;
}();
} // namespace

TEST_CASE("report: a thread's own name in the command column, its PCs with its process's", "[host][record]")
{
	const auto pid = static_cast<std::uint32_t>(::getpid());
	Recording r;
	r.command = {"self"};
	r.event = "cpu_cycles";
	r.number = 0x11;
	r.period = 1000;
	r.cpus = "0";
	r.maps = read_proc_maps(pid);
	r.comms = {{pid, "self"}, {pid + 1, "worker"}};	// the second thread renamed itself
	const auto hot = reinterpret_cast<std::uint64_t>(&amupmu_test_marker_function);
	for (int i = 0; i < 6; ++i)
		r.samples.push_back({0, pid, pid, SampleMode::user, static_cast<std::uint64_t>(i), hot + 4});
	for (int i = 0; i < 2; ++i)
		r.samples.push_back({0, pid, pid + 1, SampleMode::user, static_cast<std::uint64_t>(i), hot + 4});
	for (int i = 0; i < 2; ++i)	// a third thread without a name of its own
		r.samples.push_back({0, pid, pid + 2, SampleMode::user, static_cast<std::uint64_t>(i), hot + 4});
	const std::string rep = format_report(r, {.top = 5, .sort = {"comm", "sym"}});
	INFO(rep);
	CHECK_THAT(rep, Contains(" 80.00%  8  self  [.] amupmu_test_marker_function\n"));
	CHECK_THAT(rep, Contains(" 20.00%  2  worker  [.] amupmu_test_marker_function\n"));
	// one PC line for the process, every thread's samples in it
	CHECK_THAT(rep, Contains("100.00%  10  " + hex(hot + 4, 1) + "  [.] amupmu_test_marker_function+0x4  "));
}

TEST_CASE("C++ symbols are demangled", "[host][record][elf]")
{
	Symbolizer sym;
	const auto pid = static_cast<std::uint32_t>(::getpid());
	for (const Mapping& m : read_proc_maps(pid))
		sym.add(m);
	const auto pc = reinterpret_cast<std::uint64_t>(&amupmu_test_ns::cxx_marker);
	CHECK(sym.resolve(pid, pc, SampleMode::user).symbol == "amupmu_test_ns::cxx_marker+0x0");
	// a member function, through its pointer: demangled with its class
	const auto call = reinterpret_cast<std::uint64_t>(functor_call);
	CHECK(sym.resolve(pid, call, SampleMode::user).symbol == "amupmu_test_ns::Functor::operator()+0x0");
	// only the parameter list goes, not an operator's own parens
	CHECK(demangle_symbol("_ZN6amupmu9workloads9insn_loopEm") == "amupmu::workloads::insn_loop");
	CHECK(demangle_symbol("_ZNK14amupmu_test_ns7FunctorclEi") == "amupmu_test_ns::Functor::operator()");
	CHECK(demangle_symbol("_ZN1AclEv") == "A::operator()");
	CHECK(demangle_symbol("_ZNR1A1fEv") == "A::f");
	CHECK(demangle_symbol("main") == "main");
	CHECK(demangle_symbol("_Zbogus") == "_Zbogus");
}

TEST_CASE("recording format 3: several events, comms, kernel symbols, the frequency", "[host][record]")
{
	Recording r;
	r.command = {"sh", "-c", "work"};
	r.event = "cpu_cycles:u";
	r.number = 0x11;
	r.period = 100000;
	r.modifiers = "u";
	r.more_events = {{.event = "inst_retired", .number = 0x08, .period = 200000, .modifiers = ""},
			 {.event = "br_mis_pred:k", .number = 0x10, .period = 10000, .modifiers = "k"}};
	r.frequency = 4000;
	r.comms = {{42, "work"}, {43, "V8 Worker"}};
	r.kernel_symbols = {{0xffff800008001000, 4096, "default_idle_call"}};
	r.samples = {{.cpu = 0, .pid = 42, .tid = 42, .mode = SampleMode::user, .time = 5, .pc = 0x400100, .event = 2},
		     {.cpu = 1, .pid = 43, .tid = 44, .mode = SampleMode::kernel, .time = 6, .pc = 0xffff800008001010}};
	std::stringstream ss;
	write_recording(ss, r);
	const std::string text = ss.str();
	INFO(text);
	CHECK_THAT(text, Contains("amupmu-record 3\n"));
	CHECK_THAT(text, Contains("\nevent cpu_cycles:u 0x0011 100000\nmodifiers u\nevent inst_retired 0x0008 200000\n"
				  "modifiers %\nevent br_mis_pred:k 0x0010 10000\nmodifiers k\n"));
	CHECK_THAT(text, Contains("\ncomm 43 V8%20Worker\n"));
	CHECK_THAT(text, Contains("\nksym 0xffff800008001000 4096 default_idle_call\n"));
	CHECK_THAT(text, Contains("\nfrequency 4000\n"));
	CHECK_THAT(text, Contains("\ns 0 42 42 user 5 0x400100 2\n"));
	CHECK(read_recording(ss) == r);
	CHECK(r.events().size() == 3);
	CHECK(r.events()[2].modifiers == "k");
	CHECK(r.comm(43, 43) == "V8 Worker");
	CHECK(r.comm(43, 44) == "V8 Worker");	// a thread without a name of its own: its process's
	CHECK(r.comm(0, 0) == "swapper");
	CHECK(r.comm(7, 8) == ":8");		// perf's ":TID"
	Recording named = r;
	named.comms[44] = "Compositor";		// the thread's own name first
	CHECK(named.comm(43, 44) == "Compositor");
	CHECK(named.comm(43, 43) == "V8 Worker");

	// a version 3 line in a version 2 file, a second event there, a sample
	// of an event the file lacks
	std::stringstream v2_comm{"amupmu-record 2\ncomm 1 init\n"};
	CHECK_THROWS_WITH(read_recording(v2_comm), Contains("line 2: unknown record 'comm'"));
	std::stringstream v2_events{"amupmu-record 2\nevent a 0x0011 1\nevent b 0x0008 1\n"};
	CHECK_THROWS_WITH(read_recording(v2_events), Contains("line 3: a second 'event' line"));
	std::stringstream v3_index{"amupmu-record 3\nevent a 0x0011 1\ns 0 1 1 user 5 0x10 1\n"};
	CHECK_THROWS_WITH(read_recording(v3_index), Contains("line 3: sample of event 1, of 1 events"));
	std::stringstream v3_short{"amupmu-record 3\nevent a 0x0011 1\ns 0 1 1 user 5 0x10\n"};
	CHECK_THROWS_WITH(read_recording(v3_short), Contains("line 3: malformed 's' line (7 fields"));
}

TEST_CASE("kallsyms: the kernel's functions, sized up to the next; none without their addresses", "[host][record][elf]")
{
	const char* text = "ffff800008000000 T _text\n"
			   "ffff800008010000 t el0_svc\tzzz\n"
			   "ffff800008010100 D some_data\n"
			   "ffff800008010200 T do_idle\n"
			   "ffff800009000000 t mod_fn\t[amupmu]\n"
			   "garbage\n";
	const std::vector<ElfSymbol> k = parse_kallsyms(text);
	REQUIRE(k.size() == 4);
	CHECK(k[0] == ElfSymbol{0xffff800008000000, 0x10000, "_text"});
	CHECK(k[1] == ElfSymbol{0xffff800008010000, 0x200, "el0_svc"});	// data is not a function
	CHECK(k[3] == ElfSymbol{0xffff800009000000, 0, "mod_fn"});
	CHECK(parse_kallsyms("0000000000000000 T _text\n0000000000000000 t el0_svc\n").empty());	// kptr_restrict

	const auto hit = symbols_hit(k, {0xffff800008010010, 0xffff800008010020, 0xffff800009000004, 0x1000});
	REQUIRE(hit.size() == 2);
	CHECK(hit[0].name == "el0_svc");
	CHECK(hit[1].name == "mod_fn");

	Symbolizer sym;
	sym.set_kernel_symbols(hit);
	CHECK(sym.resolve(0, 0xffff800008010010, SampleMode::kernel).symbol == "el0_svc+0x10");
	CHECK(sym.resolve(0, 0xffff800008010010, SampleMode::kernel).dso == "[kernel]");
	CHECK(sym.resolve(0, 0xffff800008010300, SampleMode::kernel).symbol.empty());	// past el0_svc's end
	CHECK(sym.resolve(0, 0x1000, SampleMode::kernel).symbol.empty());
}
