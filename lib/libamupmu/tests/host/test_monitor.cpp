// SPDX-License-Identifier: GPL-2.0
//
// amupmu::Monitor's parsing on the host, without a socket: the netlink
// messages are built here with libnl (nlmsg_alloc, genlmsg_put, nla_put)
// the way kernel/amu_pmu_drv/amupmu_netlink.c fills them, with the UAPI's
// numbers; then malformed ones (attributes missing, of the wrong size, cut
// short) and the sequence gap tracking. The socket side runs on the boards
// (tools/board/tool.sh, monitor_*).
#include <amupmu/error.hpp>
#include <amupmu/monitor.hpp>
#include <amupmu/report/monitor_format.hpp>

#include <linux/amupmu.h>
#include <linux/amupmu_netlink.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace amupmu;

namespace {

void say_host()
{
	static bool said = false;
	if (!said) {
		WARN("[monitor] backend: host (netlink messages built in the test with libnl, no socket)");
		said = true;
	}
}

struct MsgFree {
	void operator()(nl_msg* m) const noexcept { nlmsg_free(m); }
};

// A generic netlink message of the family (any id: the parsers do not
// look at it), built attribute by attribute.
class Builder {
public:
	explicit Builder(unsigned cmd) : msg_{nlmsg_alloc()}
	{
		REQUIRE(msg_);
		REQUIRE(genlmsg_put(msg_.get(), 0, 0, 0x20, 0, 0, static_cast<std::uint8_t>(cmd),
				    AMUPMU_NL_FAMILY_VERSION));
	}
	Builder& u32(int type, std::uint32_t v)
	{
		REQUIRE(nla_put_u32(msg_.get(), type, v) == 0);
		return *this;
	}
	Builder& u64(int type, std::uint64_t v)
	{
		REQUIRE(nla_put_u64(msg_.get(), type, v) == 0);
		return *this;
	}
	Builder& str(int type, const char* s)
	{
		REQUIRE(nla_put_string(msg_.get(), type, s) == 0);
		return *this;
	}
	Builder& raw(int type, const void* data, int len)
	{
		REQUIRE(nla_put(msg_.get(), type, len, data) == 0);
		return *this;
	}
	Builder& event(std::uint32_t type, std::uint64_t period, bool short_period = false)
	{
		nlattr* nest = nla_nest_start(msg_.get(), AMUPMU_NL_A_EVENT);
		REQUIRE(nest);
		u32(AMUPMU_NL_EVENT_A_TYPE, type);
		if (short_period)
			u32(AMUPMU_NL_EVENT_A_PERIOD, static_cast<std::uint32_t>(period));
		else
			u64(AMUPMU_NL_EVENT_A_PERIOD, period);
		nla_nest_end(msg_.get(), nest);
		return *this;
	}
	// the message's bytes, nlmsg_len of them
	[[nodiscard]] std::vector<std::byte> bytes() const
	{
		const nlmsghdr* h = nlmsg_hdr(msg_.get());
		const auto* p = reinterpret_cast<const std::byte*>(h);
		return {p, p + h->nlmsg_len};
	}

private:
	std::unique_ptr<nl_msg, MsgFree> msg_;
};

Builder header(unsigned cmd, std::uint64_t seq, std::uint64_t time = 1000)
{
	Builder b{cmd};
	b.u64(AMUPMU_NL_A_SEQ, seq).u64(AMUPMU_NL_A_TIME, time);
	return b;
}

// The message an Error names, for a parse that must fail with EBADMSG.
template <typename F>
std::string bad(F&& parse)
{
	try {
		parse();
	} catch (const Error& e) {
		CHECK(e.errnum() == EBADMSG);
		return e.what();
	}
	FAIL("parsed without an error");
	return {};
}

// A CPU_GET reply as the kernel builds it (an online Neoverse N1 with 6
// counters, amupmu's PMU), the totals last when they are there (a
// CAP_PERFMON caller of an ABI 2.5 module)
Builder cpu_reply(std::uint32_t cpu, std::uint32_t pmu_sessions, std::uint32_t counters_free,
		  std::optional<std::uint64_t> lost = std::nullopt,
		  std::optional<std::uint64_t> throttled = std::nullopt)
{
	Builder c{AMUPMU_NL_CMD_CPU_GET};
	c.u32(AMUPMU_NL_A_CPU, cpu)
		.u32(AMUPMU_NL_A_CPU_FLAGS, AMUPMU_CPU_POSSIBLE | AMUPMU_CPU_ONLINE | AMUPMU_CPU_DISCOVERED | AMUPMU_CPU_PMU)
		.u64(AMUPMU_NL_A_MIDR, 0x410FD083)
		.u64(AMUPMU_NL_A_REVIDR, 0)
		.u32(AMUPMU_NL_A_PMU_VERSION, 6)
		.u32(AMUPMU_NL_A_PMU_COUNTERS, 6)
		.u32(AMUPMU_NL_A_PMU_COUNTERS_FREE, counters_free)
		.u32(AMUPMU_NL_A_AMU_VERSION, 0)
		.u32(AMUPMU_NL_A_SPE_VERSION, 0)
		.u64(AMUPMU_NL_A_PMSIDR, 0)
		.u64(AMUPMU_NL_A_AMCFGR, 0)
		.u32(AMUPMU_NL_A_PMU_OWNER, AMUPMU_PMU_OWNER_AMUPMU)
		.u32(AMUPMU_NL_A_SPE_OWNER, 0)
		.u32(AMUPMU_NL_A_PMU_SESSIONS, pmu_sessions)
		.u32(AMUPMU_NL_A_SPE_SESSIONS, 0);
	if (lost)
		c.u64(AMUPMU_NL_A_LOST_TOTAL, *lost);
	if (throttled)
		c.u64(AMUPMU_NL_A_THROTTLED_TOTAL, *throttled);
	return c;
}

} // namespace

TEST_CASE("monitor: CPU online and offline events", "[host][monitor]")
{
	say_host();
	const auto online = header(AMUPMU_NL_CMD_CPU_ONLINE, 7, 123456789)
				    .u64(AMUPMU_NL_A_MIDR, 0x410FD083)
				    .u32(AMUPMU_NL_A_PMU_VERSION, 6)
				    .u32(AMUPMU_NL_A_PMU_COUNTERS, 6)
				    .u32(AMUPMU_NL_A_AMU_VERSION, 1)
				    .u32(AMUPMU_NL_A_SPE_VERSION, 3)
				    .u32(AMUPMU_NL_A_CPU, 1)
				    .u32(AMUPMU_NL_A_CPU_FLAGS, AMUPMU_CPU_POSSIBLE | AMUPMU_CPU_ONLINE)
				    .bytes();
	const MonitorEvent ev = parse_monitor_event(online);
	REQUIRE(std::holds_alternative<CpuEvent>(ev));
	const auto& c = std::get<CpuEvent>(ev);
	CHECK(c.online);
	CHECK(c.seq == 7);
	CHECK(c.time_ns == 123456789);
	CHECK(c.cpu == 1);
	CHECK(c.flags == (AMUPMU_CPU_POSSIBLE | AMUPMU_CPU_ONLINE));
	CHECK(c.midr == 0x410FD083);
	CHECK(c.pmu_version == 6);
	CHECK(c.pmu_counters == 6);
	CHECK(c.amu_version == 1);
	CHECK(c.spe_version == 3);
	CHECK(event_group(ev) == MonitorGroup::cpu);
	CHECK(event_seq(ev) == 7);

	// offline carries the CPU and its flags only
	const auto offline =
		header(AMUPMU_NL_CMD_CPU_OFFLINE, 8).u32(AMUPMU_NL_A_CPU, 1).u32(AMUPMU_NL_A_CPU_FLAGS, 1).bytes();
	const auto off = std::get<CpuEvent>(parse_monitor_event(offline));
	CHECK_FALSE(off.online);
	CHECK(off.cpu == 1);
	CHECK(off.flags == 1);
	CHECK(off.midr == 0);
	CHECK(off.seq == 8);
	// ... and an online event without its MIDR is refused, naming it
	const auto no_midr = header(AMUPMU_NL_CMD_CPU_ONLINE, 9).u32(AMUPMU_NL_A_CPU, 1).u32(AMUPMU_NL_A_CPU_FLAGS, 3).bytes();
	CHECK_THAT(bad([&] { (void)parse_monitor_event(no_midr); }),
		   Catch::Contains("CPU_ONLINE event: attribute MIDR (6) missing"));
}

TEST_CASE("monitor: owner, session, knob, ring and SPE buffer events", "[host][monitor]")
{
	say_host();
	const auto owner = std::get<OwnerEvent>(parse_monitor_event(
		header(AMUPMU_NL_CMD_OWNER_CHANGE, 3).u32(AMUPMU_NL_A_UNIT, AMUPMU_NL_UNIT_SPE).u32(AMUPMU_NL_A_OWNER, 2).bytes()));
	CHECK(owner.unit == MonitorUnit::spe);
	CHECK(owner.owner == 2);
	CHECK(owner.seq == 3);
	CHECK(OwnerEvent::group == MonitorGroup::cpu);

	for (const unsigned cmd : {AMUPMU_NL_CMD_SESSION_START, AMUPMU_NL_CMD_SESSION_END}) {
		const auto s = std::get<SessionEvent>(parse_monitor_event(header(cmd, 11)
										  .u64(AMUPMU_NL_A_SESSION_ID, 42)
										  .u32(AMUPMU_NL_A_SESSION_KIND, AMUPMU_NL_SESSION_SPE)
										  .u32(AMUPMU_NL_A_PID, 1234)
										  .bytes()));
		CHECK(s.start == (cmd == AMUPMU_NL_CMD_SESSION_START));
		CHECK(s.session_id == 42);
		CHECK(s.kind == SessionKind::spe);
		CHECK(s.pid == 1234);
	}

	const MonitorEvent knob = parse_monitor_event(header(AMUPMU_NL_CMD_KNOB_CHANGE, 12)
							      .str(AMUPMU_NL_A_KNOB, "pmsfcr_ft")
							      .u64(AMUPMU_NL_A_OLD, 0)
							      .u64(AMUPMU_NL_A_NEW, 1)
							      .u32(AMUPMU_NL_A_PID, 77)
							      .bytes());
	CHECK(knob == MonitorEvent{KnobEvent{.seq = 12, .time_ns = 1000, .knob = "pmsfcr_ft", .old_value = 0, .new_value = 1, .pid = 77}});
	CHECK(event_group(knob) == MonitorGroup::session);

	const MonitorEvent lost = parse_monitor_event(header(AMUPMU_NL_CMD_RING_LOST, 0)
							      .u64(AMUPMU_NL_A_SESSION_ID, 5)
							      .u32(AMUPMU_NL_A_CPU, 2)
							      .u64(AMUPMU_NL_A_LOST, 16)
							      .bytes());
	CHECK(lost == MonitorEvent{RingLostEvent{.seq = 0, .time_ns = 1000, .session_id = 5, .cpu = 2, .lost = 16}});
	CHECK(event_group(lost) == MonitorGroup::buffer);

	const MonitorEvent spe = parse_monitor_event(header(AMUPMU_NL_CMD_SPE_BUFFER, 1)
							     .u64(AMUPMU_NL_A_SESSION_ID, 6)
							     .u32(AMUPMU_NL_A_CPU, 3)
							     .u32(AMUPMU_NL_A_SPE_EVENT, AMUPMU_NL_SPE_FAULT)
							     .u64(AMUPMU_NL_A_PMBSR, 0x4000000)
							     .bytes());
	CHECK(spe == MonitorEvent{SpeBufferEvent{.seq = 1, .time_ns = 1000, .session_id = 6, .cpu = 3,
						 .what = SpeBufferEventKind::fault, .pmbsr = 0x4000000}});
	CHECK(to_string(SpeBufferEventKind::fault) == "fault");
	CHECK(to_string(static_cast<SpeBufferEventKind>(9)) == "event9");
	// the record is the same alternative
	CHECK(std::get<SpeBufferEvent>(to_record(spe)).pmbsr == 0x4000000);
}

TEST_CASE("monitor: throttle events", "[host][monitor]")
{
	say_host();
	const auto m = header(AMUPMU_NL_CMD_THROTTLE, 7)
			       .u64(AMUPMU_NL_A_SESSION_ID, 9)
			       .u32(AMUPMU_NL_A_CPU, 1)
			       .u64(AMUPMU_NL_A_THROTTLED, 1ULL << 40)
			       .bytes();
	CHECK(parse_monitor_throttle(m) ==
	      ThrottleEvent{.seq = 7, .time_ns = 1000, .session_id = 9, .cpu = 1, .throttled = 1ULL << 40});
	CHECK(ThrottleEvent::group == MonitorGroup::buffer);
	// not a MonitorEvent: parse_monitor_event() refuses it by its name
	CHECK_THAT(bad([&] { (void)parse_monitor_event(m); }), Catch::Contains("THROTTLE event: not an event"));
	const auto lost = header(AMUPMU_NL_CMD_RING_LOST, 0)
				  .u64(AMUPMU_NL_A_SESSION_ID, 5)
				  .u32(AMUPMU_NL_A_CPU, 2)
				  .u64(AMUPMU_NL_A_LOST, 16)
				  .bytes();
	CHECK_THAT(bad([&] { (void)parse_monitor_throttle(lost); }),
		   Catch::Contains("RING_LOST event: not a THROTTLE event"));
	// THROTTLED is a u64
	const auto narrow = header(AMUPMU_NL_CMD_THROTTLE, 7)
				    .u64(AMUPMU_NL_A_SESSION_ID, 9)
				    .u32(AMUPMU_NL_A_CPU, 1)
				    .u32(AMUPMU_NL_A_THROTTLED, 1)
				    .bytes();
	CHECK_THAT(bad([&] { (void)parse_monitor_throttle(narrow); }), Catch::Contains("THROTTLE event: "));
}

TEST_CASE("monitor: throttle events as amupmu monitor prints them", "[host][monitor]")
{
	say_host();
	const ThrottleEvent t{.seq = 7, .time_ns = 1500000000, .session_id = 9, .cpu = 1, .throttled = 4};
	CHECK(report::format_monitor_text(t) == "1.500000000 buffer#7 throttle session=9 cpu=1 throttled=4");
	CHECK(report::format_monitor_json(t) == R"({"event":"throttle","group":"buffer","seq":7,"time_ns":1500000000,)"
						R"("session":9,"cpu":1,"throttled":4})");
}

TEST_CASE("monitor: a newer driver's attributes are ignored", "[host][monitor]")
{
	say_host();
	const std::uint32_t blob[3] = {1, 2, 3};
	const auto ev = std::get<CpuEvent>(parse_monitor_event(header(AMUPMU_NL_CMD_CPU_OFFLINE, 4)
									 .u32(AMUPMU_NL_A_CPU, 3)
									 .raw(AMUPMU_NL_A_MAX + 7, blob, sizeof(blob))
									 .u32(AMUPMU_NL_A_CPU_FLAGS, 1)
									 .bytes()));
	CHECK(ev.cpu == 3);
	CHECK(ev.flags == 1);
}

TEST_CASE("monitor: status, CPU and session replies", "[host][monitor]")
{
	say_host();
	Builder st{AMUPMU_NL_CMD_STATUS_GET};
	st.u64(AMUPMU_NL_A_FEATURES, AMUPMU_FEAT_PMU | AMUPMU_FEAT_PMU_EXCLUSIVE)
		.u32(AMUPMU_NL_A_NR_CPUS, 2)
		.u32(AMUPMU_NL_A_PMU_OWNER, AMUPMU_PMU_OWNER_AMUPMU)
		.u32(AMUPMU_NL_A_SPE_OWNER, 0)
		.u32(AMUPMU_NL_A_GENERATION, 17)
		.u64(AMUPMU_NL_A_EVENTS_DROPPED, 3)
		.u64(AMUPMU_NL_A_EVENTS_UNDELIVERED, 4)
		.u32(AMUPMU_NL_A_SUBSCRIBERS, 1);
	const MonitorStatus status = parse_monitor_status(st.bytes());
	CHECK(status == MonitorStatus{.features = AMUPMU_FEAT_PMU | AMUPMU_FEAT_PMU_EXCLUSIVE,
				      .nr_cpus = 2,
				      .pmu_owner = PmuOwner::amupmu,
				      .spe_owner = SpeOwner::none,
				      .generation = 17,
				      .events_dropped = 3,
				      .events_undelivered = 4,
				      .subscribers = 1});

	std::vector<MonitorCpu> cpus;
	for (std::uint32_t n = 0; n < 2; ++n)
		cpus.push_back(parse_monitor_cpu(cpu_reply(n, n, 0x8000003f).bytes()));
	CHECK(cpus[1].cpu == 1);
	CHECK(cpus[1].pmu_sessions == 1);
	CHECK(cpus[0].pmu_counters_free == 0x8000003f);
	CHECK(cpus[0].pmu_owner == PmuOwner::amupmu);

	// amupmu info's fallback: an Info of what the family reports
	const Info info = info_from_monitor(status, cpus);
	CHECK(info.features == status.features);
	CHECK(info.pmu_owner == PmuOwner::amupmu);
	REQUIRE(info.cpus.size() == 2);
	CHECK(info.cpus[1].cpu == 1);
	CHECK(info.cpus[1].online());
	CHECK(info.cpus[1].has_pmu());
	CHECK(info.cpus[1].pmu_num_counters == 6);
	CHECK(info.cpus[1].counters_free() == 7);
	CHECK(info.cpus[1].midr == 0x410FD083);
	CHECK(info.abi_major == 0);	// not in the family

	// a PMU session on CPUs 0 and 65 (two __u64 words) with two events
	const std::uint64_t words[2] = {1, 2};
	Builder ses{AMUPMU_NL_CMD_SESSION_GET};
	ses.u64(AMUPMU_NL_A_SESSION_ID, 9)
		.u32(AMUPMU_NL_A_SESSION_KIND, AMUPMU_NL_SESSION_PMU)
		.u32(AMUPMU_NL_A_PID, 321)
		.raw(AMUPMU_NL_A_CPUS, words, sizeof(words))
		.event(0x11, 0)
		.event(0x08, 100000);
	const MonitorSession s = parse_monitor_session(ses.bytes());
	CHECK(s.id == 9);
	CHECK(s.kind == SessionKind::pmu);
	CHECK(s.pid == 321);
	CHECK(s.cpus == std::vector<std::uint32_t>{0, 65});
	REQUIRE(s.counters.size() == 2);
	CHECK(s.counters[0] == MonitorSession::Counter{0x11, 0});
	CHECK(s.counters[1] == MonitorSession::Counter{0x08, 100000});

	Builder spe{AMUPMU_NL_CMD_SESSION_GET};
	spe.u64(AMUPMU_NL_A_SESSION_ID, 10)
		.u32(AMUPMU_NL_A_SESSION_KIND, AMUPMU_NL_SESSION_SPE)
		.u32(AMUPMU_NL_A_PID, 0)
		.raw(AMUPMU_NL_A_CPUS, words, 8)
		.u64(AMUPMU_NL_A_PMSFCR, 0x10001)
		.u64(AMUPMU_NL_A_PMSIRR, 0x1000);
	const MonitorSession sp = parse_monitor_session(spe.bytes());
	CHECK(sp.kind == SessionKind::spe);
	CHECK(sp.cpus == std::vector<std::uint32_t>{0});
	CHECK(sp.pmsfcr == 0x10001);
	CHECK(sp.pmsirr == 0x1000);
	CHECK(sp.counters.empty());
}

TEST_CASE("monitor: CPU_GET totals (ABI 2.5)", "[host][monitor]")
{
	say_host();
	SECTION("a CAP_PERFMON caller: both totals, the 64-bit values whole")
	{
		const auto b = cpu_reply(1, 2, 0x8000003e, 0x1'0000'0003ULL, 0xffff'ffff'ffff'fffeULL).bytes();
		const MonitorCpuTotals t = parse_monitor_cpu_totals(b);
		CHECK(t.info == parse_monitor_cpu(b));
		CHECK(t.info.cpu == 1);
		CHECK(t.info.pmu_sessions == 2);
		CHECK(t.info.pmu_counters_free == 0x8000003e);
		REQUIRE(t.lost_total);
		CHECK(*t.lost_total == 0x1'0000'0003ULL);
		REQUIRE(t.throttled_total);
		CHECK(*t.throttled_total == 0xffff'ffff'ffff'fffeULL);
	}
	SECTION("zero is a value, not an absence")
	{
		const MonitorCpuTotals t = parse_monitor_cpu_totals(cpu_reply(1, 2, 0x8000003e, 0, 0).bytes());
		CHECK(t.lost_total == std::optional<std::uint64_t>{0});
		CHECK(t.throttled_total == std::optional<std::uint64_t>{0});
	}
	SECTION("an unprivileged caller or an older module: neither, the rest the same")
	{
		const auto b = cpu_reply(1, 2, 0x8000003e).bytes();
		const MonitorCpuTotals t = parse_monitor_cpu_totals(b);
		CHECK_FALSE(t.lost_total);
		CHECK_FALSE(t.throttled_total);
		CHECK(t.info == parse_monitor_cpu(cpu_reply(1, 2, 0x8000003e, 7, 8).bytes()));
	}
	SECTION("one without the other (a future kernel's choice) is taken as sent")
	{
		const MonitorCpuTotals t = parse_monitor_cpu_totals(cpu_reply(1, 2, 0x8000003e, 5).bytes());
		CHECK(t.lost_total == std::optional<std::uint64_t>{5});
		CHECK_FALSE(t.throttled_total);
	}
	SECTION("a total that is not a u64 is refused, named")
	{
		Builder c = cpu_reply(1, 2, 0x8000003e, std::nullopt, 1);
		c.u32(AMUPMU_NL_A_LOST_TOTAL, 3);
		CHECK_THAT(bad([&] { (void)parse_monitor_cpu_totals(c.bytes()); }),
			   Catch::Contains("LOST_TOTAL (42) has 4 bytes, not 8"));
		// MonitorCpu's parser checks the attributes the same way
		CHECK_THAT(bad([&] { (void)parse_monitor_cpu(c.bytes()); }), Catch::Contains("LOST_TOTAL"));
	}
	SECTION("another reply is not a CPU_GET reply")
	{
		Builder st{AMUPMU_NL_CMD_STATUS_GET};
		st.u32(AMUPMU_NL_A_NR_CPUS, 2);
		CHECK_THAT(bad([&] { (void)parse_monitor_cpu_totals(st.bytes()); }),
			   Catch::Contains("STATUS_GET: not a CPU_GET reply"));
	}
}

TEST_CASE("monitor: malformed messages are refused with a clear error", "[host][monitor]")
{
	say_host();
	SECTION("an attribute missing")
	{
		const auto m = Builder{AMUPMU_NL_CMD_CPU_OFFLINE}.u64(AMUPMU_NL_A_TIME, 1).u32(AMUPMU_NL_A_CPU, 1).bytes();
		CHECK_THAT(bad([&] { (void)parse_monitor_event(m); }),
			   Catch::Equals("netlink CPU_OFFLINE event: attribute SEQ (2) missing: Bad message (EBADMSG)"));
	}
	SECTION("a u32 of 2 bytes")
	{
		const std::uint16_t half = 1;
		const auto m = header(AMUPMU_NL_CMD_CPU_OFFLINE, 1)
				       .raw(AMUPMU_NL_A_CPU, &half, sizeof(half))
				       .u32(AMUPMU_NL_A_CPU_FLAGS, 1)
				       .bytes();
		CHECK_THAT(bad([&] { (void)parse_monitor_event(m); }),
			   Catch::Contains("CPU_OFFLINE event: attribute CPU (4) has 2 bytes, not 4"));
	}
	SECTION("a u64 of 4 bytes")
	{
		const auto m = Builder{AMUPMU_NL_CMD_CPU_OFFLINE}.u32(AMUPMU_NL_A_SEQ, 1).bytes();
		CHECK_THAT(bad([&] { (void)parse_monitor_event(m); }), Catch::Contains("attribute SEQ (2) has 4 bytes, not 8"));
	}
	SECTION("a u32 of 8 bytes")
	{
		const auto m = Builder{AMUPMU_NL_CMD_STATUS_GET}.u64(AMUPMU_NL_A_NR_CPUS, 2).bytes();
		CHECK_THAT(bad([&] { (void)parse_monitor_status(m); }),
			   Catch::Contains("STATUS_GET: attribute NR_CPUS (20) has 8 bytes, not 4"));
	}
	SECTION("a knob name without its NUL")
	{
		const char name[4] = {'a', 'b', 'c', 'd'};
		const auto m = header(AMUPMU_NL_CMD_KNOB_CHANGE, 1).raw(AMUPMU_NL_A_KNOB, name, sizeof(name)).bytes();
		CHECK_THAT(bad([&] { (void)parse_monitor_event(m); }),
			   Catch::Contains("attribute KNOB (33) is not a NUL-terminated string"));
	}
	SECTION("a CPU set that is not __u64 words")
	{
		const std::uint32_t w = 1;
		const auto m = Builder{AMUPMU_NL_CMD_SESSION_GET}.raw(AMUPMU_NL_A_CPUS, &w, sizeof(w)).bytes();
		CHECK_THAT(bad([&] { (void)parse_monitor_session(m); }),
			   Catch::Contains("attribute CPUS (29) has 4 bytes, not a multiple of 8"));
	}
	SECTION("an EVENT nest with a 4-byte period")
	{
		const std::uint64_t w = 1;
		const auto m = Builder{AMUPMU_NL_CMD_SESSION_GET}
				       .u64(AMUPMU_NL_A_SESSION_ID, 1)
				       .u32(AMUPMU_NL_A_SESSION_KIND, AMUPMU_NL_SESSION_PMU)
				       .u32(AMUPMU_NL_A_PID, 1)
				       .raw(AMUPMU_NL_A_CPUS, &w, sizeof(w))
				       .event(0x11, 5, true)
				       .bytes();
		CHECK_THAT(bad([&] { (void)parse_monitor_session(m); }), Catch::Contains("an EVENT nest refused by its policy"));
	}
	SECTION("the wrong command")
	{
		const auto st = Builder{AMUPMU_NL_CMD_STATUS_GET}.bytes();
		CHECK_THAT(bad([&] { (void)parse_monitor_event(st); }), Catch::Contains("STATUS_GET event: not an event"));
		CHECK_THAT(bad([&] { (void)parse_monitor_cpu(st); }), Catch::Contains("STATUS_GET: not a CPU_GET reply"));
		const auto unknown = Builder{200}.bytes();
		CHECK_THAT(bad([&] { (void)parse_monitor_event(unknown); }), Catch::Contains("command 200 event: not an event"));
	}
	SECTION("shorter than the headers")
	{
		const std::vector<std::byte> tiny(12);
		CHECK_THAT(bad([&] { (void)parse_monitor_event(tiny); }),
			   Catch::Contains("12 bytes, shorter than the netlink and generic netlink headers"));
		CHECK_THAT(bad([&] { (void)parse_monitor_event({}); }), Catch::Contains("0 bytes"));
	}
	SECTION("a header length past the end")
	{
		auto m = header(AMUPMU_NL_CMD_CPU_OFFLINE, 1).u32(AMUPMU_NL_A_CPU, 1).u32(AMUPMU_NL_A_CPU_FLAGS, 1).bytes();
		m.resize(m.size() - 8);
		CHECK_THAT(bad([&] { (void)parse_monitor_event(m); }), Catch::Contains("in its header"));
	}
	SECTION("an attribute cut short")
	{
		auto m = header(AMUPMU_NL_CMD_CPU_OFFLINE, 1).u32(AMUPMU_NL_A_CPU, 1).u32(AMUPMU_NL_A_CPU_FLAGS, 1).bytes();
		// nlmsg_len says 6 bytes fewer: the last attribute's header
		// claims more than is left
		m.resize(m.size() - 6);
		auto* h = reinterpret_cast<nlmsghdr*>(m.data());
		h->nlmsg_len = static_cast<std::uint32_t>(m.size());
		CHECK_THAT(bad([&] { (void)parse_monitor_event(m); }), Catch::Contains("2 bytes after the last attribute"));
	}
}

// Every prefix and every single-byte corruption of a valid message parses
// or throws Error: no crash, no other exception (run under ASan in make
// check's sanitizer build).
TEST_CASE("monitor: cut and corrupted messages never crash the parser", "[host][monitor]")
{
	say_host();
	const auto good = header(AMUPMU_NL_CMD_KNOB_CHANGE, 5)
				  .str(AMUPMU_NL_A_KNOB, "pmslatfr_minlat")
				  .u64(AMUPMU_NL_A_OLD, 1)
				  .u64(AMUPMU_NL_A_NEW, 2)
				  .u32(AMUPMU_NL_A_PID, 3)
				  .bytes();
	unsigned parsed = 0, refused = 0;
	const auto attempt = [&](std::span<const std::byte> m) {
		try {
			(void)parse_monitor_event(m);
			++parsed;
		} catch (const Error&) {
			++refused;
		}
	};
	for (std::size_t n = 0; n <= good.size(); ++n)
		attempt(std::span{good}.first(n));
	for (std::size_t i = 0; i < good.size(); ++i)
		for (const std::byte v : {std::byte{0}, std::byte{0xff}, std::byte{0x07}}) {
			auto m = good;
			m[i] = v;
			attempt(m);
		}
	CHECK(parsed >= 1);	// the whole message at least
	CHECK(refused >= good.size());	// every proper prefix at least
}

TEST_CASE("monitor: sequence gaps per group", "[host][monitor]")
{
	say_host();
	SeqTracker t;
	// the first event of a group: nothing missed before the subscription
	CHECK_FALSE(t.track(MonitorGroup::cpu, 40));
	CHECK_FALSE(t.track(MonitorGroup::cpu, 41));
	CHECK_FALSE(t.track(MonitorGroup::session, 0));
	const auto gap = t.track(MonitorGroup::cpu, 45);
	REQUIRE(gap);
	CHECK(*gap == Gap{MonitorGroup::cpu, 42, 45});
	CHECK(gap->missed() == 3);
	// groups are independent
	CHECK_FALSE(t.track(MonitorGroup::session, 1));
	CHECK(t.track(MonitorGroup::session, 3) == Gap{MonitorGroup::session, 2, 3});
	CHECK_FALSE(t.track(MonitorGroup::cpu, 46));
	// the module loaded again: its numbers start afresh, no gap
	CHECK_FALSE(t.track(MonitorGroup::cpu, 0));
	CHECK_FALSE(t.track(MonitorGroup::cpu, 1));
	// one group forgotten (subscribed anew): its next number is no gap,
	// the others' are still tracked
	CHECK_FALSE(t.track(MonitorGroup::session, 4));
	t.reset(MonitorGroup::cpu);
	CHECK_FALSE(t.track(MonitorGroup::cpu, 90));
	CHECK(t.track(MonitorGroup::session, 6) == Gap{MonitorGroup::session, 5, 6});
	t.reset();
	CHECK_FALSE(t.track(MonitorGroup::buffer, 100));
	CHECK_FALSE(t.track(MonitorGroup::cpu, 100));
}

TEST_CASE("monitor: group names", "[host][monitor]")
{
	say_host();
	CHECK(to_string(MonitorGroup::cpu) == "cpu");
	CHECK(to_string(MonitorGroup::buffer) == "buffer");
	CHECK(monitor_group_from_name("session") == MonitorGroup::session);
	CHECK_FALSE(monitor_group_from_name("sessions"));
	CHECK(group_bit(MonitorGroup::buffer) == (1u << AMUPMU_NL_GROUP_BUFFER));
	CHECK(monitor_groups_all == AMUPMU_NL_GROUPS_ALL);
	CHECK(to_string(SessionKind::spe) == "spe");
}

// The host runs a kernel without the module: the family is not there, and
// the Monitor says so as the device's absence is said (exit status 2 of the
// tool), not with libnl's words alone. Under qemu-user there is no generic
// netlink at all.
TEST_CASE("monitor: no family on the host", "[host][monitor]")
{
	say_host();
	try {
		Monitor m;
		SUCCEED("the amupmu family is registered on this host (the module is loaded)");
		CHECK(m.family_version() >= AMUPMU_NL_FAMILY_VERSION);
	} catch (const DeviceMissing& e) {
		CHECK(e.errnum() == ENOENT);
		CHECK_THAT(e.what(), Catch::Equals("generic netlink family \"amupmu\": No such file or directory (ENOENT)"));
	} catch (const Error& e) {
		// qemu-user (the aarch64 build's tests) refuses NETLINK_GENERIC
		// sockets: the socket's own errno, named
		INFO(e.what());
		CHECK(e.errnum() == EPROTONOSUPPORT);
		CHECK_THAT(e.what(), Catch::Contains("generic netlink socket"));
		WARN("no generic netlink here (qemu-user): " << e.what());
	}
}
