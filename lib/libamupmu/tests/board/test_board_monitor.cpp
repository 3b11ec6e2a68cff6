// SPDX-License-Identifier: GPL-2.0
//
// amupmu::Monitor against the loaded driver [board][monitor]: the netlink
// dumps against AMUPMU_INFO, a session's dump and its events, and a
// listener whose receive buffer overflows (Overrun, then Gaps that account
// for every event). Backend: QEMU TCG PMUv3 (the family reports the same
// on every backend; the session rows need the amupmu devicetree, where
// amupmu owns the PMU).
#include <amupmu/amupmu.hpp>

#include "board_util.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <sys/socket.h>
#include <unistd.h>

using namespace amupmu;
using namespace std::chrono_literals;
using amupmu::board::live_info;
using amupmu::board::online;
using Catch::Matchers::Contains;

namespace {

const char* const cpu1_online = "/sys/devices/system/cpu/cpu1/online";

bool cpu1_hotpluggable()
{
	std::ifstream f{cpu1_online};
	int v = 0;
	return f && (f >> v) && v == 1;
}

void set_cpu1(bool on)
{
	std::ofstream f{cpu1_online};
	f << (on ? "1" : "0") << std::flush;
	REQUIRE(f.good());
}

} // namespace

TEST_CASE("board: Monitor's status and CPU dumps agree with AMUPMU_INFO", "[board][monitor]")
{
	const Info info = live_info();
	Monitor m;
	std::cout << "# netlink family amupmu version " << m.family_version() << ", id " << m.family_id()
		  << ", pmu owner " << to_string(info.pmu_owner) << std::endl;
	const MonitorStatus st = m.status();
	CHECK(st.features == info.features);
	CHECK(st.pmu_owner == info.pmu_owner);
	CHECK(st.spe_owner == info.spe_owner);
	CHECK(st.nr_cpus == info.cpus.size());
	CHECK(st.generation != 0);

	const std::vector<MonitorCpu> cpus = m.cpus();
	std::size_t possible = 0;
	for (const CpuInfo& c : info.cpus)
		possible += c.possible();
	REQUIRE(cpus.size() == possible);
	for (const MonitorCpu& c : cpus) {
		INFO("cpu " << c.cpu);
		REQUIRE(c.cpu < info.cpus.size());
		const CpuInfo& ci = info.cpus[c.cpu];
		CHECK(c.flags == ci.flags);
		CHECK(c.midr == ci.midr);
		CHECK(c.revidr == ci.revidr);
		CHECK(c.pmu_version == ci.pmu_version);
		CHECK(c.pmu_counters == ci.pmu_num_counters);
		CHECK(c.pmu_counters_free == ci.pmu_counters_free);
		CHECK(c.amu_version == ci.amu_version);
		CHECK(c.spe_version == ci.spe_version);
		CHECK(c.pmsidr == ci.pmsidr);
		CHECK(c.amcfgr == ci.amcfgr);
		CHECK(c.pmu_owner == info.pmu_owner);
		// one CPU alone (a do, not a dump) is the same
		CHECK(m.cpu(c.cpu) == c);
	}
	const Info nl = info_from_monitor(st, cpus);
	REQUIRE(nl.cpus.size() == info.cpus.size());
	for (std::size_t i = 0; i < nl.cpus.size(); ++i)
		CHECK(nl.cpus[i].midr == info.cpus[i].midr);

	// a CPU that is not possible: ENODEV with the kernel's extended ACK
	try {
		(void)m.cpu(4096);
		FAIL("CPU_GET of CPU 4096 answered");
	} catch (const Unavailable& e) {
		CHECK(e.errnum() == ENODEV);
		CHECK_THAT(std::string{e.what()}, Contains("AMUPMU_NL_CMD_CPU_GET (no such CPU (not possible))"));
	}
	// and the Monitor goes on
	CHECK(m.status().features == info.features);
}

TEST_CASE("board: a session in Monitor's dump and its start and end events", "[board][monitor]")
{
	const Info info = live_info();
	std::cout << "# backend: " << backend_description(info) << ", pmu mode " << pmu_mode_text(info)
		  << std::endl;
	if (info.pmu_mode() != PmuMode::exclusive && info.pmu_mode() != PmuMode::shared) {
		WARN("pmu mode " << to_string(info.pmu_mode()) << ": no PMU session to see");
		return;
	}
	const std::vector<unsigned> cpus = online(info);
	Monitor m;
	m.subscribe(group_bit(MonitorGroup::session));
	CHECK(m.subscription() == group_bit(MonitorGroup::session));
	const GroupConfig cfg{.events = {{.number = ev::cpu_cycles}}, .cpus = cpus};
	std::uint64_t id = 0;
	{
		Session s = Session::open(cfg);
		const std::vector<MonitorSession> ss = m.sessions();
		REQUIRE(ss.size() == 1);
		id = ss[0].id;
		CHECK(ss[0].kind == SessionKind::pmu);
		CHECK(ss[0].pid == static_cast<std::uint32_t>(::getpid()));
		CHECK(ss[0].cpus == std::vector<std::uint32_t>(cpus.begin(), cpus.end()));
		REQUIRE(ss[0].counters.size() == 1);
		CHECK((ss[0].counters[0].type & 0xffff) == ev::cpu_cycles);
		CHECK(ss[0].counters[0].period == 0);
		for (const MonitorCpu& c : m.cpus())
			CHECK(c.pmu_sessions == (std::find(cpus.begin(), cpus.end(), c.cpu) != cpus.end() ? 1u : 0u));
	}
	CHECK(m.sessions().empty());
	// (generous: the kernel's work item sends them, and a loaded host
	// without -icount can keep it off the CPU a long while)
	const auto start = m.next_event(std::chrono::seconds(60));
	const auto end = m.next_event(std::chrono::seconds(60));
	REQUIRE(start);
	REQUIRE(end);
	REQUIRE(std::holds_alternative<SessionEvent>(*start));
	REQUIRE(std::holds_alternative<SessionEvent>(*end));
	const auto& a = std::get<SessionEvent>(*start);
	const auto& b = std::get<SessionEvent>(*end);
	CHECK(a.start);
	CHECK_FALSE(b.start);
	CHECK(a.session_id == id);
	CHECK(b.session_id == id);
	CHECK(a.pid == static_cast<std::uint32_t>(::getpid()));
	CHECK(b.seq == a.seq + 1);
	CHECK(b.time_ns >= a.time_ns);
	CHECK(m.stats().gaps == 0);
}

// A listener that does not read while CPU 1 goes offline and online 20
// times, its receive buffer at the smallest: it reads ENOBUFS (Overrun),
// and the Gaps then account for every event it did not get (the last
// cycle's too: another cycle shows a gap at the end).
TEST_CASE("board: Monitor reports an overrun and the gaps it left", "[board][monitor]")
{
	if (!cpu1_hotpluggable()) {
		WARN("no CPU 1 that can go offline: skipped");
		return;
	}
	Monitor m;
	const std::uint64_t undelivered0 = m.status().events_undelivered;
	m.subscribe(group_bit(MonitorGroup::cpu));
	const int one = 1;	// the kernel makes it its minimum
	REQUIRE(::setsockopt(m.fd(), SOL_SOCKET, SO_RCVBUF, &one, sizeof(one)) == 0);
	constexpr unsigned cycles = 20;
	for (unsigned i = 0; i < cycles; ++i) {
		set_cpu1(false);
		set_cpu1(true);
	}
	std::uint64_t events = 0, missed = 0, overruns = 0;
	const auto count = [&](const MonitorRecord& r) {
		if (std::holds_alternative<Overrun>(r))
			++overruns;
		else if (const auto* g = std::get_if<Gap>(&r))
			missed += g->missed();
		else
			++events;
	};
	// what the socket holds; then one more cycle, whose events show the gap.
	// The kernel's work item sends them: wait until it has found the
	// buffer full at least once (its undelivered count), not a fixed 200
	// ms a loaded host without -icount may keep that work item waiting
	// (a reader that starts first drains them as they come: no overrun)
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
	while (m.status().events_undelivered == undelivered0 && std::chrono::steady_clock::now() < deadline)
		std::this_thread::sleep_for(20ms);
	m.read_events(count);
	// one more cycle, and another while the count is short: the last
	// event may itself have met a full buffer (the work item still
	// sending the first cycles' events), a gap only a later event shows
	unsigned extra = 0;
	// the events of that many offline-online cycles
	const auto want = [&] { return std::uint64_t{2} * (cycles + extra); };
	while (extra < 4 && (extra == 0 || events + missed < want())) {
		++extra;
		set_cpu1(false);
		set_cpu1(true);
		while (events + missed < want()) {
			const auto r = m.next_event(std::chrono::seconds(extra == 1 ? 60 : 20));
			if (!r)
				break;
			count(*r);
		}
	}
	const Monitor::Stats st = m.stats();
	std::cout << "# " << events << " events read, " << missed << " missed in " << st.gaps << " gaps, " << overruns
		  << " overruns, " << extra << " cycles after the first read" << std::endl;
	CHECK(overruns >= 1);
	CHECK(st.overruns == overruns);
	CHECK(events + missed == want());
	CHECK(missed > 0);
	CHECK(m.status().events_undelivered - undelivered0 >= missed);
}
