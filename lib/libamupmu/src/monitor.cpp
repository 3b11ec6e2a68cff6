// SPDX-License-Identifier: LGPL-2.1-or-later
//
// amupmu::Monitor over libnl-3 (libnl-genl-3). Two sockets: the events
// socket subscribes and receives the kernel's unicast events (read here
// with recv(MSG_DONTWAIT), so that ENOBUFS is seen as itself, and parsed
// with libnl's message helpers); the requests socket, opened on the first
// dump, runs STATUS_GET / CPU_GET / SESSION_GET through nl_recvmsgs() with
// callbacks, so that no reply ever lands among the events.
#include <amupmu/error.hpp>
#include <amupmu/monitor.hpp>

#include <linux/amupmu.h>
#include <linux/amupmu_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/family.h>
#include <netlink/genl/genl.h>
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <array>
#include <cerrno>
#include <cstring>
#include <deque>
#include <exception>
#include <utility>
#include <variant>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

namespace amupmu {

// The public enums are the UAPI's numbers.
static_assert(static_cast<unsigned>(MonitorGroup::cpu) == AMUPMU_NL_GROUP_CPU);
static_assert(static_cast<unsigned>(MonitorGroup::session) == AMUPMU_NL_GROUP_SESSION);
static_assert(static_cast<unsigned>(MonitorGroup::buffer) == AMUPMU_NL_GROUP_BUFFER);
static_assert(monitor_group_count == __AMUPMU_NL_GROUP_MAX);
static_assert(monitor_groups_all == AMUPMU_NL_GROUPS_ALL);
static_assert(static_cast<unsigned>(SessionKind::pmu) == AMUPMU_NL_SESSION_PMU);
static_assert(static_cast<unsigned>(SessionKind::spe) == AMUPMU_NL_SESSION_SPE);
static_assert(static_cast<unsigned>(MonitorUnit::pmu) == AMUPMU_NL_UNIT_PMU);
static_assert(static_cast<unsigned>(MonitorUnit::spe) == AMUPMU_NL_UNIT_SPE);
static_assert(static_cast<unsigned>(SpeBufferEventKind::full) == AMUPMU_NL_SPE_FULL);
static_assert(static_cast<unsigned>(SpeBufferEventKind::fault) == AMUPMU_NL_SPE_FAULT);
static_assert(static_cast<unsigned>(SpeBufferEventKind::collision) == AMUPMU_NL_SPE_COLLISION);

// ---------------------------------------------------------------- names

std::string to_string(MonitorGroup g)
{
	switch (g) {
	case MonitorGroup::cpu:
		return "cpu";
	case MonitorGroup::session:
		return "session";
	case MonitorGroup::buffer:
		return "buffer";
	}
	return "group" + std::to_string(static_cast<std::uint32_t>(g));
}

std::optional<MonitorGroup> monitor_group_from_name(std::string_view name) noexcept
{
	for (const MonitorGroup g : {MonitorGroup::cpu, MonitorGroup::session, MonitorGroup::buffer})
		if (name == (g == MonitorGroup::cpu ? "cpu" : g == MonitorGroup::session ? "session" : "buffer"))
			return g;
	return std::nullopt;
}

std::string to_string(SessionKind k)
{
	switch (k) {
	case SessionKind::pmu:
		return "pmu";
	case SessionKind::spe:
		return "spe";
	}
	return "kind" + std::to_string(static_cast<std::uint32_t>(k));
}

std::string to_string(SpeBufferEventKind k)
{
	switch (k) {
	case SpeBufferEventKind::full:
		return "full";
	case SpeBufferEventKind::fault:
		return "fault";
	case SpeBufferEventKind::collision:
		return "collision";
	}
	return "event" + std::to_string(static_cast<std::uint32_t>(k));
}

namespace {

// std::visit may throw (a valueless variant): get_if does not
template <std::size_t I = 0>
MonitorGroup group_of(const MonitorEvent& ev) noexcept
{
	if constexpr (I < std::variant_size_v<MonitorEvent>) {
		if (std::get_if<I>(&ev))
			return std::variant_alternative_t<I, MonitorEvent>::group;
		return group_of<I + 1>(ev);
	} else {
		return MonitorGroup::cpu;
	}
}

template <std::size_t I = 0>
std::uint64_t seq_of(const MonitorEvent& ev) noexcept
{
	if constexpr (I < std::variant_size_v<MonitorEvent>) {
		if (const auto* e = std::get_if<I>(&ev))
			return e->seq;
		return seq_of<I + 1>(ev);
	} else {
		return 0;
	}
}

} // namespace

MonitorGroup event_group(const MonitorEvent& ev) noexcept
{
	return group_of(ev);
}

std::uint64_t event_seq(const MonitorEvent& ev) noexcept
{
	return seq_of(ev);
}

MonitorRecord to_record(MonitorEvent ev)
{
	return std::visit([](auto&& e) { return MonitorRecord{std::forward<decltype(e)>(e)}; }, std::move(ev));
}

std::optional<Gap> SeqTracker::track(MonitorGroup g, std::uint64_t seq) noexcept
{
	const auto i = static_cast<std::size_t>(g);
	if (i >= monitor_group_count)
		return std::nullopt;
	Slot& s = slots_[i];
	std::optional<Gap> gap;
	if (s.seen && seq > s.next)
		gap = Gap{g, s.next, seq};
	// seq < next: the module was loaded again, its numbers start afresh
	s.seen = true;
	s.next = seq + 1;
	return gap;
}

void SeqTracker::reset() noexcept
{
	for (Slot& s : slots_)
		s = Slot{};
}

void SeqTracker::reset(MonitorGroup g) noexcept
{
	const auto i = static_cast<std::size_t>(g);
	if (i < monitor_group_count)
		slots_[i] = Slot{};
}

// ---------------------------------------------------------------- Info

Info info_from_monitor(const MonitorStatus& status, std::span<const MonitorCpu> cpus)
{
	Info info;
	info.features = status.features;
	info.pmu_owner = status.pmu_owner;
	info.spe_owner = status.spe_owner;
	std::uint32_t n = status.nr_cpus;
	for (const MonitorCpu& c : cpus)
		n = std::max(n, c.cpu + 1);
	info.cpus.resize(n);
	for (std::uint32_t i = 0; i < n; ++i)
		info.cpus[i].cpu = i;
	for (const MonitorCpu& c : cpus) {
		CpuInfo& ci = info.cpus[c.cpu];
		ci.flags = c.flags;
		ci.midr = c.midr;
		ci.revidr = c.revidr;
		ci.pmu_version = c.pmu_version;
		ci.pmu_num_counters = c.pmu_counters;
		ci.pmu_counters_free = c.pmu_counters_free;
		ci.amu_version = c.amu_version;
		ci.spe_version = c.spe_version;
		ci.pmsidr = c.pmsidr;
		ci.amcfgr = c.amcfgr;
	}
	return info;
}

// ---------------------------------------------------------------- parsing

namespace {

constexpr std::array<const char*, __AMUPMU_NL_A_MAX> attr_names = {
	"UNSPEC", "PAD", "SEQ", "TIME", "CPU", "CPU_FLAGS", "MIDR", "REVIDR", "PMU_VERSION",
	"PMU_COUNTERS", "PMU_COUNTERS_FREE", "AMU_VERSION", "SPE_VERSION", "PMSIDR", "AMCFGR",
	"PMU_OWNER", "SPE_OWNER", "PMU_SESSIONS", "SPE_SESSIONS", "FEATURES", "NR_CPUS", "GENERATION",
	"EVENTS_DROPPED", "EVENTS_UNDELIVERED", "SUBSCRIBERS", "GROUPS", "SESSION_ID", "SESSION_KIND",
	"PID", "CPUS", "EVENT", "UNIT", "OWNER", "KNOB", "OLD", "NEW", "LOST", "SPE_EVENT", "PMBSR",
	"PMSFCR", "PMSIRR", "THROTTLED", "LOST_TOTAL", "THROTTLED_TOTAL",
};
static_assert(attr_names[AMUPMU_NL_A_THROTTLED_TOTAL] == std::string_view{"THROTTLED_TOTAL"});
static_assert(attr_names.back() != nullptr, "every attribute has its name");

constexpr std::array<const char*, __AMUPMU_NL_CMD_MAX> cmd_names = {
	"UNSPEC", "STATUS_GET", "CPU_GET", "SESSION_GET", "SUBSCRIBE", "CPU_ONLINE", "CPU_OFFLINE",
	"OWNER_CHANGE", "SESSION_START", "SESSION_END", "KNOB_CHANGE", "RING_LOST", "SPE_BUFFER", "THROTTLE",
};
static_assert(cmd_names[AMUPMU_NL_CMD_THROTTLE] == std::string_view{"THROTTLE"});
static_assert(cmd_names.back() != nullptr, "every command has its name");

std::string attr_name(int type)
{
	const auto i = static_cast<std::size_t>(type);
	return (i < attr_names.size() ? std::string{attr_names[i]} : "attribute") + " (" + std::to_string(type) +
	       ")";
}

std::string cmd_name(unsigned cmd)
{
	return cmd < cmd_names.size() ? std::string{cmd_names[cmd]} : "command " + std::to_string(cmd);
}

// The payload size an attribute must have (0: any; -1: a NUL-terminated
// string; -2: a nest; -3: __u64 words).
constexpr int size_string = -1;
constexpr int size_nest = -2;
constexpr int size_words = -3;

constexpr int attr_size(int type)
{
	switch (type) {
	case AMUPMU_NL_A_SEQ:
	case AMUPMU_NL_A_TIME:
	case AMUPMU_NL_A_MIDR:
	case AMUPMU_NL_A_REVIDR:
	case AMUPMU_NL_A_PMSIDR:
	case AMUPMU_NL_A_AMCFGR:
	case AMUPMU_NL_A_FEATURES:
	case AMUPMU_NL_A_EVENTS_DROPPED:
	case AMUPMU_NL_A_EVENTS_UNDELIVERED:
	case AMUPMU_NL_A_SESSION_ID:
	case AMUPMU_NL_A_OLD:
	case AMUPMU_NL_A_NEW:
	case AMUPMU_NL_A_LOST:
	case AMUPMU_NL_A_PMBSR:
	case AMUPMU_NL_A_PMSFCR:
	case AMUPMU_NL_A_PMSIRR:
	case AMUPMU_NL_A_THROTTLED:
	case AMUPMU_NL_A_LOST_TOTAL:
	case AMUPMU_NL_A_THROTTLED_TOTAL:
		return 8;
	case AMUPMU_NL_A_KNOB:
		return size_string;
	case AMUPMU_NL_A_EVENT:
		return size_nest;
	case AMUPMU_NL_A_CPUS:
		return size_words;
	case AMUPMU_NL_A_UNSPEC:
	case AMUPMU_NL_A_PAD:
		return 0;
	default:
		return 4;	// every other attribute is a u32
	}
}

// the knob names' longest (AMUPMU_NL_KNOB_LEN, 24) with room to grow
constexpr int knob_max = 64;

// libnl's policy of the same sizes (genlmsg_parse() checks it).
std::array<nla_policy, AMUPMU_NL_A_MAX + 1> make_policy()
{
	std::array<nla_policy, AMUPMU_NL_A_MAX + 1> p{};
	for (int t = 0; t <= AMUPMU_NL_A_MAX; ++t) {
		auto& e = p[static_cast<std::size_t>(t)];
		switch (attr_size(t)) {
		case 8:
			e.type = NLA_U64;
			e.minlen = e.maxlen = 8;
			break;
		case 4:
			e.type = NLA_U32;
			e.minlen = e.maxlen = 4;
			break;
		case size_string:
			e.type = NLA_STRING;
			e.minlen = 1;
			e.maxlen = knob_max;
			break;
		case size_nest:
			e.type = NLA_NESTED;
			break;
		default:
			e.type = NLA_UNSPEC;
			break;
		}
	}
	return p;
}

const std::array<nla_policy, AMUPMU_NL_A_MAX + 1> policy = make_policy();

std::array<nla_policy, AMUPMU_NL_EVENT_A_MAX + 1> make_event_policy()
{
	std::array<nla_policy, AMUPMU_NL_EVENT_A_MAX + 1> p{};
	p[AMUPMU_NL_EVENT_A_TYPE].type = NLA_U32;
	p[AMUPMU_NL_EVENT_A_TYPE].minlen = p[AMUPMU_NL_EVENT_A_TYPE].maxlen = 4;
	p[AMUPMU_NL_EVENT_A_PERIOD].type = NLA_U64;
	p[AMUPMU_NL_EVENT_A_PERIOD].minlen = p[AMUPMU_NL_EVENT_A_PERIOD].maxlen = 8;
	return p;
}

const std::array<nla_policy, AMUPMU_NL_EVENT_A_MAX + 1> event_policy = make_event_policy();

[[noreturn]] void bad_message(const std::string& what, const std::string& why)
{
	throw Error{"netlink " + what + ": " + why, EBADMSG};
}

// One message copied to aligned storage, its header checked, its
// attributes parsed and checked against the policy.
class Parsed {
public:
	explicit Parsed(std::span<const std::byte> message, std::string_view suffix = {})
	{
		if (message.size() < NLMSG_HDRLEN + GENL_HDRLEN)
			bad_message("message", std::to_string(message.size()) +
						       " bytes, shorter than the netlink and generic netlink headers");
		buf_.resize((message.size() + 3) / 4);
		std::memcpy(buf_.data(), message.data(), message.size());
		nlh_ = reinterpret_cast<nlmsghdr*>(buf_.data());
		if (nlh_->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN || nlh_->nlmsg_len > message.size())
			bad_message("message", "length " + std::to_string(nlh_->nlmsg_len) + " in its header, " +
						       std::to_string(message.size()) + " bytes received");
		cmd_ = static_cast<genlmsghdr*>(nlmsg_data(nlh_))->cmd;
		what_ = cmd_name(cmd_) + std::string{suffix};
		if (suffix == " event" && (cmd_ < AMUPMU_NL_CMD_CPU_ONLINE || cmd_ > AMUPMU_NL_CMD_MAX))
			bad_message(what_, "not an event");
		check_attrs();
		const int err = genlmsg_parse(nlh_, 0, tb_.data(), AMUPMU_NL_A_MAX,
					      const_cast<nla_policy*>(policy.data()));
		if (err < 0)
			bad_message(what_, std::string{"attributes refused by their policy: "} + nl_geterror(err));
	}

	[[nodiscard]] unsigned cmd() const noexcept { return cmd_; }
	[[nodiscard]] const std::string& what() const noexcept { return what_; }
	[[nodiscard]] const nlmsghdr* header() const noexcept { return nlh_; }

	[[nodiscard]] nlattr* find(int type) const { return tb_[static_cast<std::size_t>(type)]; }
	[[nodiscard]] nlattr* need(int type) const
	{
		nlattr* a = find(type);
		if (!a)
			bad_message(what_, "attribute " + attr_name(type) + " missing");
		return a;
	}
	[[nodiscard]] std::uint32_t u32(int type) const { return nla_get_u32(need(type)); }
	[[nodiscard]] std::uint64_t u64(int type) const { return nla_get_u64(need(type)); }
	[[nodiscard]] std::uint32_t u32_or(int type, std::uint32_t def) const
	{
		const nlattr* a = find(type);
		return a ? nla_get_u32(a) : def;
	}
	[[nodiscard]] std::uint64_t u64_or(int type, std::uint64_t def) const
	{
		const nlattr* a = find(type);
		return a ? nla_get_u64(a) : def;
	}
	[[nodiscard]] std::optional<std::uint64_t> u64_opt(int type) const
	{
		const nlattr* a = find(type);
		return a ? std::optional<std::uint64_t>{nla_get_u64(a)} : std::nullopt;
	}

	/// Every attribute of the message, in order (the multi-attribute EVENT).
	template <typename F>
	void each_attr(F&& f) const
	{
		nlattr* pos = nullptr;
		int rem = 0;
		nla_for_each_attr(pos, genlmsg_attrdata(static_cast<genlmsghdr*>(nlmsg_data(nlh_)), 0),
				  genlmsg_attrlen(static_cast<genlmsghdr*>(nlmsg_data(nlh_)), 0), rem)
			f(pos);
	}

private:
	// What the policy refuses, named: libnl's error does not say which
	// attribute, and it ignores bytes after the last attribute.
	void check_attrs() const
	{
		nlattr* pos = nullptr;
		int rem = 0;
		nla_for_each_attr(pos, genlmsg_attrdata(static_cast<genlmsghdr*>(nlmsg_data(nlh_)), 0),
				  genlmsg_attrlen(static_cast<genlmsghdr*>(nlmsg_data(nlh_)), 0), rem)
		{
			const int type = nla_type(pos);
			if (type > AMUPMU_NL_A_MAX)
				continue;	// a newer driver's
			const int len = nla_len(pos);
			const int size = attr_size(type);
			if (size > 0 && len != size)
				bad_message(what_, "attribute " + attr_name(type) + " has " + std::to_string(len) +
							   " bytes, not " + std::to_string(size));
			if (size == size_string) {
				const auto* s = static_cast<const char*>(nla_data(pos));
				if (len < 1 || s[len - 1] != '\0')
					bad_message(what_, "attribute " + attr_name(type) +
								   " is not a NUL-terminated string");
				if (len > knob_max)
					bad_message(what_, "attribute " + attr_name(type) + " has " +
								   std::to_string(len) + " bytes, more than " +
								   std::to_string(knob_max));
			}
			if (size == size_words && len % 8 != 0)
				bad_message(what_, "attribute " + attr_name(type) + " has " + std::to_string(len) +
							   " bytes, not a multiple of 8");
		}
		if (rem != 0)
			bad_message(what_, std::to_string(rem) + " bytes after the last attribute");
	}

	std::vector<std::uint32_t> buf_;
	nlmsghdr* nlh_ = nullptr;
	unsigned cmd_ = 0;
	std::string what_;
	std::array<nlattr*, AMUPMU_NL_A_MAX + 1> tb_{};
};

} // namespace

MonitorEvent parse_monitor_event(std::span<const std::byte> message)
{
	Parsed p{message, " event"};
	const std::uint64_t seq = p.u64(AMUPMU_NL_A_SEQ);
	const std::uint64_t time = p.u64(AMUPMU_NL_A_TIME);
	switch (p.cmd()) {
	case AMUPMU_NL_CMD_CPU_ONLINE:
	case AMUPMU_NL_CMD_CPU_OFFLINE: {
		CpuEvent e{.seq = seq, .time_ns = time};
		e.online = p.cmd() == AMUPMU_NL_CMD_CPU_ONLINE;
		e.cpu = p.u32(AMUPMU_NL_A_CPU);
		e.flags = p.u32(AMUPMU_NL_A_CPU_FLAGS);
		if (e.online) {
			e.midr = p.u64(AMUPMU_NL_A_MIDR);
			e.pmu_version = p.u32(AMUPMU_NL_A_PMU_VERSION);
			e.pmu_counters = p.u32(AMUPMU_NL_A_PMU_COUNTERS);
			e.amu_version = p.u32(AMUPMU_NL_A_AMU_VERSION);
			e.spe_version = p.u32(AMUPMU_NL_A_SPE_VERSION);
		}
		return e;
	}
	case AMUPMU_NL_CMD_OWNER_CHANGE:
		return OwnerEvent{.seq = seq,
				  .time_ns = time,
				  .unit = static_cast<MonitorUnit>(p.u32(AMUPMU_NL_A_UNIT)),
				  .owner = p.u32(AMUPMU_NL_A_OWNER)};
	case AMUPMU_NL_CMD_SESSION_START:
	case AMUPMU_NL_CMD_SESSION_END:
		return SessionEvent{.seq = seq,
				    .time_ns = time,
				    .start = p.cmd() == AMUPMU_NL_CMD_SESSION_START,
				    .session_id = p.u64(AMUPMU_NL_A_SESSION_ID),
				    .kind = static_cast<SessionKind>(p.u32(AMUPMU_NL_A_SESSION_KIND)),
				    .pid = p.u32(AMUPMU_NL_A_PID)};
	case AMUPMU_NL_CMD_KNOB_CHANGE:
		return KnobEvent{.seq = seq,
				 .time_ns = time,
				 .knob = nla_get_string(p.need(AMUPMU_NL_A_KNOB)),
				 .old_value = p.u64(AMUPMU_NL_A_OLD),
				 .new_value = p.u64(AMUPMU_NL_A_NEW),
				 .pid = p.u32(AMUPMU_NL_A_PID)};
	case AMUPMU_NL_CMD_RING_LOST:
		return RingLostEvent{.seq = seq,
				     .time_ns = time,
				     .session_id = p.u64(AMUPMU_NL_A_SESSION_ID),
				     .cpu = p.u32(AMUPMU_NL_A_CPU),
				     .lost = p.u64(AMUPMU_NL_A_LOST)};
	case AMUPMU_NL_CMD_SPE_BUFFER:
		return SpeBufferEvent{.seq = seq,
				      .time_ns = time,
				      .session_id = p.u64(AMUPMU_NL_A_SESSION_ID),
				      .cpu = p.u32(AMUPMU_NL_A_CPU),
				      .what = static_cast<SpeBufferEventKind>(p.u32(AMUPMU_NL_A_SPE_EVENT)),
				      .pmbsr = p.u64(AMUPMU_NL_A_PMBSR)};
	default:
		bad_message(p.what(), "not an event");
	}
}

namespace {

void expect_cmd(const Parsed& p, unsigned cmd)
{
	if (p.cmd() != cmd)
		bad_message(p.what(), "not a " + cmd_name(cmd) + " reply");
}

} // namespace

ThrottleEvent parse_monitor_throttle(std::span<const std::byte> message)
{
	Parsed p{message, " event"};
	if (p.cmd() != AMUPMU_NL_CMD_THROTTLE)
		bad_message(p.what(), "not a THROTTLE event");
	return ThrottleEvent{.seq = p.u64(AMUPMU_NL_A_SEQ),
			     .time_ns = p.u64(AMUPMU_NL_A_TIME),
			     .session_id = p.u64(AMUPMU_NL_A_SESSION_ID),
			     .cpu = p.u32(AMUPMU_NL_A_CPU),
			     .throttled = p.u64(AMUPMU_NL_A_THROTTLED)};
}

MonitorStatus parse_monitor_status(std::span<const std::byte> message)
{
	Parsed p{message};
	expect_cmd(p, AMUPMU_NL_CMD_STATUS_GET);
	return MonitorStatus{
		.features = p.u64(AMUPMU_NL_A_FEATURES),
		.nr_cpus = p.u32(AMUPMU_NL_A_NR_CPUS),
		.pmu_owner = static_cast<PmuOwner>(p.u32(AMUPMU_NL_A_PMU_OWNER)),
		.spe_owner = static_cast<SpeOwner>(p.u32(AMUPMU_NL_A_SPE_OWNER)),
		.generation = p.u32(AMUPMU_NL_A_GENERATION),
		.events_dropped = p.u64(AMUPMU_NL_A_EVENTS_DROPPED),
		.events_undelivered = p.u64(AMUPMU_NL_A_EVENTS_UNDELIVERED),
		.subscribers = p.u32(AMUPMU_NL_A_SUBSCRIBERS),
	};
}

namespace {

MonitorCpu cpu_of(const Parsed& p)
{
	return MonitorCpu{
		.cpu = p.u32(AMUPMU_NL_A_CPU),
		.flags = p.u32(AMUPMU_NL_A_CPU_FLAGS),
		.midr = p.u64(AMUPMU_NL_A_MIDR),
		.revidr = p.u64_or(AMUPMU_NL_A_REVIDR, 0),
		.pmu_version = p.u32(AMUPMU_NL_A_PMU_VERSION),
		.pmu_counters = p.u32(AMUPMU_NL_A_PMU_COUNTERS),
		.pmu_counters_free = p.u32_or(AMUPMU_NL_A_PMU_COUNTERS_FREE, 0),
		.amu_version = p.u32(AMUPMU_NL_A_AMU_VERSION),
		.spe_version = p.u32(AMUPMU_NL_A_SPE_VERSION),
		.pmsidr = p.u64_or(AMUPMU_NL_A_PMSIDR, 0),
		.amcfgr = p.u64_or(AMUPMU_NL_A_AMCFGR, 0),
		.pmu_owner = static_cast<PmuOwner>(p.u32(AMUPMU_NL_A_PMU_OWNER)),
		.spe_owner = static_cast<SpeOwner>(p.u32(AMUPMU_NL_A_SPE_OWNER)),
		.pmu_sessions = p.u32(AMUPMU_NL_A_PMU_SESSIONS),
		.spe_sessions = p.u32(AMUPMU_NL_A_SPE_SESSIONS),
	};
}

} // namespace

MonitorCpu parse_monitor_cpu(std::span<const std::byte> message)
{
	Parsed p{message};
	expect_cmd(p, AMUPMU_NL_CMD_CPU_GET);
	return cpu_of(p);
}

MonitorCpuTotals parse_monitor_cpu_totals(std::span<const std::byte> message)
{
	Parsed p{message};
	expect_cmd(p, AMUPMU_NL_CMD_CPU_GET);
	return MonitorCpuTotals{
		.info = cpu_of(p),
		.lost_total = p.u64_opt(AMUPMU_NL_A_LOST_TOTAL),
		.throttled_total = p.u64_opt(AMUPMU_NL_A_THROTTLED_TOTAL),
	};
}

MonitorSession parse_monitor_session(std::span<const std::byte> message)
{
	Parsed p{message};
	expect_cmd(p, AMUPMU_NL_CMD_SESSION_GET);
	MonitorSession s;
	s.id = p.u64(AMUPMU_NL_A_SESSION_ID);
	s.kind = static_cast<SessionKind>(p.u32(AMUPMU_NL_A_SESSION_KIND));
	s.pid = p.u32(AMUPMU_NL_A_PID);
	const nlattr* cpus = p.need(AMUPMU_NL_A_CPUS);
	const auto nwords = static_cast<std::size_t>(nla_len(cpus)) / 8;
	for (std::size_t w = 0; w < nwords; ++w) {
		std::uint64_t word = 0;
		std::memcpy(&word, static_cast<const std::byte*>(nla_data(cpus)) + w * 8, 8);
		for (unsigned b = 0; b < 64; ++b)
			if ((word >> b) & 1)
				s.cpus.push_back(static_cast<std::uint32_t>(w * 64 + b));
	}
	if (s.kind == SessionKind::spe) {
		s.pmsfcr = p.u64(AMUPMU_NL_A_PMSFCR);
		s.pmsirr = p.u64(AMUPMU_NL_A_PMSIRR);
	}
	p.each_attr([&](nlattr* a) {
		if (nla_type(a) != AMUPMU_NL_A_EVENT)
			return;
		std::array<nlattr*, AMUPMU_NL_EVENT_A_MAX + 1> tb{};
		const int err = nla_parse_nested(tb.data(), AMUPMU_NL_EVENT_A_MAX, a,
						 const_cast<nla_policy*>(event_policy.data()));
		if (err < 0)
			bad_message(p.what(), "an EVENT nest refused by its policy (TYPE u32, PERIOD u64): " +
						      std::string{nl_geterror(err)});
		if (!tb[AMUPMU_NL_EVENT_A_TYPE] || !tb[AMUPMU_NL_EVENT_A_PERIOD])
			bad_message(p.what(), "an EVENT nest without TYPE or PERIOD");
		s.counters.push_back({nla_get_u32(tb[AMUPMU_NL_EVENT_A_TYPE]),
				      nla_get_u64(tb[AMUPMU_NL_EVENT_A_PERIOD])});
	});
	return s;
}

// ---------------------------------------------------------------- Monitor

namespace {

struct SockDeleter {
	void operator()(nl_sock* s) const noexcept { nl_socket_free(s); }
};
using Sock = std::unique_ptr<nl_sock, SockDeleter>;

struct MsgDeleter {
	void operator()(nl_msg* m) const noexcept { nlmsg_free(m); }
};
using Msg = std::unique_ptr<nl_msg, MsgDeleter>;

// libnl's error numbers as errno values, for what did not come from the
// kernel's own NLMSG_ERROR (whose errno is taken as it is).
int nl_errno(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_NOMEM:
		return ENOMEM;
	case NLE_PERM:
		return EPERM;
	case NLE_NOACCESS:
		return EACCES;
	case NLE_AGAIN:
		return EAGAIN;
	case NLE_BUSY:
		return EBUSY;
	case NLE_INVAL:
		return EINVAL;
	case NLE_OBJ_NOTFOUND:
		return ENOENT;
	case NLE_OPNOTSUPP:
		return EOPNOTSUPP;
	case NLE_NODEV:
		return ENODEV;
	case NLE_AF_NOSUPPORT:
		return EAFNOSUPPORT;
	case NLE_PROTO_MISMATCH:
		return EPROTONOSUPPORT;
	case NLE_MSG_TRUNC:
		return EMSGSIZE;
	case NLE_SEQ_MISMATCH:
	case NLE_MSG_TOOSHORT:
	case NLE_PARSE_ERR:
		return EBADMSG;
	case NLE_DUMP_INTR:
		return EINTR;
	default:
		return EIO;
	}
}

[[noreturn]] void throw_nl(const std::string& what, int nlerr)
{
	throw_error(what + " (libnl: " + nl_geterror(nlerr) + ")", nl_errno(nlerr));
}

// The extended ACK's message of an NLMSG_ERROR, "" without one.
std::string extack_message(const nlmsghdr* h)
{
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS) || h->nlmsg_len < NLMSG_HDRLEN + sizeof(nlmsgerr))
		return {};
	const auto* e = static_cast<const nlmsgerr*>(nlmsg_data(h));
	std::size_t off = NLMSG_HDRLEN + sizeof(nlmsgerr);
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	if (off > h->nlmsg_len)
		return {};
	const auto* base = reinterpret_cast<const std::byte*>(h);
	nlattr* pos = nullptr;
	int rem = 0;
	nla_for_each_attr(pos, reinterpret_cast<nlattr*>(const_cast<std::byte*>(base + off)),
			  static_cast<int>(h->nlmsg_len - off), rem)
	{
		if (nla_type(pos) == NLMSGERR_ATTR_MSG && nla_len(pos) > 0) {
			const auto* s = static_cast<const char*>(nla_data(pos));
			return std::string{s, strnlen(s, static_cast<std::size_t>(nla_len(pos)))};
		}
	}
	return {};
}

[[noreturn]] void throw_kernel(unsigned cmd, int err, const std::string& extack)
{
	std::string what = "AMUPMU_NL_CMD_" + cmd_name(cmd);
	if (!extack.empty())
		what += " (" + extack + ")";
	throw_error(std::move(what), err);
}

void set_ext_ack(nl_sock* sk)
{
	const int one = 1;
	// refused by a kernel without extended ACKs (before 4.12): errors then
	// come without their message
	(void)setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
}

Sock connect_socket()
{
	Sock sk{nl_socket_alloc()};
	if (!sk)
		throw Error{"nl_socket_alloc", ENOMEM};
	if (const int err = genl_connect(sk.get()); err < 0)
		throw_nl("generic netlink socket", err);
	set_ext_ack(sk.get());
	return sk;
}

constexpr int subscribe_timeout_ms = 5000;
constexpr int dump_attempts = 8;

} // namespace

struct Monitor::Impl {
	Sock events;
	Sock requests;
	int family = 0;
	std::uint32_t version = 0;
	MonitorGroups groups = 0;
	// records and THROTTLE events in the order they came: a THROTTLE event
	// goes to its handler when the records before it have been handed over
	std::deque<std::variant<MonitorRecord, ThrottleEvent>> pending;
	SeqTracker tracker;
	Stats stats;
	std::function<void(const ThrottleEvent&)> on_throttle;
	std::vector<std::byte> rx = std::vector<std::byte>(65536);

	// subscribe's reply, while it waits
	std::uint32_t ack_seq = 0;
	bool ack_wanted = false;
	bool ack_seen = false;
	int ack_err = 0;
	std::string ack_extack;

	void resolve()
	{
		nl_cache* cache = nullptr;
		if (const int err = genl_ctrl_alloc_cache(events.get(), &cache); err < 0)
			throw_nl("CTRL_CMD_GETFAMILY dump", err);
		genl_family* fam = genl_ctrl_search_by_name(cache, AMUPMU_NL_FAMILY_NAME);
		if (!fam) {
			nl_cache_free(cache);
			throw DeviceMissing{"generic netlink family \"" AMUPMU_NL_FAMILY_NAME "\"", ENOENT};
		}
		family = genl_family_get_id(fam);
		version = static_cast<std::uint32_t>(genl_family_get_version(fam));
		genl_family_put(fam);
		nl_cache_free(cache);
		if (version < AMUPMU_NL_FAMILY_VERSION)
			throw Error{"generic netlink family \"" AMUPMU_NL_FAMILY_NAME "\" version " +
					    std::to_string(version) + ", libamupmu needs " +
					    std::to_string(AMUPMU_NL_FAMILY_VERSION),
				    EPROTO};
	}

	Msg request(unsigned cmd, int flags) const
	{
		Msg m{nlmsg_alloc()};
		if (!m)
			throw Error{"nlmsg_alloc", ENOMEM};
		if (!genlmsg_put(m.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, static_cast<std::uint8_t>(cmd),
				 AMUPMU_NL_FAMILY_VERSION))
			throw Error{"genlmsg_put", EMSGSIZE};
		return m;
	}

	// One received message of the events socket.
	void handle(const nlmsghdr* h)
	{
		if (h->nlmsg_type == NLMSG_ERROR) {
			if (h->nlmsg_len < NLMSG_HDRLEN + sizeof(nlmsgerr))
				return;
			const auto* e = static_cast<const nlmsgerr*>(nlmsg_data(h));
			if (ack_wanted && h->nlmsg_seq == ack_seq) {
				ack_seen = true;
				ack_err = -e->error;
				ack_extack = extack_message(h);
			}
			return;
		}
		if (h->nlmsg_type < NLMSG_MIN_TYPE)
			return;	// NOOP, DONE, OVERRUN
		if (h->nlmsg_type != family) {
			++stats.ignored;
			return;
		}
		unsigned cmd = 0;	// a message too short for it: parsing says so
		if (h->nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN) {
			cmd = static_cast<const genlmsghdr*>(nlmsg_data(h))->cmd;
			if (cmd < AMUPMU_NL_CMD_CPU_ONLINE || cmd > AMUPMU_NL_CMD_MAX) {
				++stats.ignored;	// a newer driver's event
				return;
			}
		}
		const std::span<const std::byte> msg{reinterpret_cast<const std::byte*>(h),
						     static_cast<std::size_t>(h->nlmsg_len)};
		if (cmd == AMUPMU_NL_CMD_THROTTLE) {
			// not a MonitorEvent alternative (that variant is part of
			// libamupmu.so.2's ABI): its sequence number counts, its
			// handler has it
			const ThrottleEvent t = parse_monitor_throttle(msg);
			++stats.events;
			if (const auto gap = tracker.track(ThrottleEvent::group, t.seq)) {
				++stats.gaps;
				stats.missed += gap->missed();
				pending.emplace_back(MonitorRecord{*gap});
			}
			pending.emplace_back(t);
			return;
		}
		MonitorEvent ev = parse_monitor_event(msg);
		++stats.events;
		if (const auto gap = tracker.track(event_group(ev), event_seq(ev))) {
			++stats.gaps;
			stats.missed += gap->missed();
			pending.emplace_back(MonitorRecord{*gap});
		}
		pending.emplace_back(to_record(std::move(ev)));
	}

	// Hands the THROTTLE events at the front of the queue to their
	// handler. True when a record is next.
	bool record_next()
	{
		while (!pending.empty()) {
			const auto* t = std::get_if<ThrottleEvent>(&pending.front());
			if (!t)
				return true;
			const ThrottleEvent ev = *t;
			pending.pop_front();
			if (on_throttle)
				on_throttle(ev);
		}
		return false;
	}

	MonitorRecord pop_record()
	{
		MonitorRecord r = std::move(std::get<MonitorRecord>(pending.front()));
		pending.pop_front();
		return r;
	}

	// Reads what the events socket has now. False when nothing was there.
	bool receive()
	{
		const int fd = nl_socket_get_fd(events.get());
		const ssize_t n = ::recv(fd, rx.data(), rx.size(), MSG_DONTWAIT);
		if (n < 0) {
			const int err = errno;
			if (err == EAGAIN || err == EINTR)
				return false;
			if (err == ENOBUFS) {
				++stats.overruns;
				pending.emplace_back(MonitorRecord{Overrun{}});
				return true;
			}
			throw_error("recv of the netlink events socket", err);
		}
		auto* h = reinterpret_cast<nlmsghdr*>(rx.data());
		int len = static_cast<int>(n);
		// a malformed message throws after the ones before it are kept
		for (; nlmsg_ok(h, len); h = nlmsg_next(h, &len))
			handle(h);
		return true;
	}

	bool wait_readable(int timeout_ms) const
	{
		pollfd p{nl_socket_get_fd(events.get()), POLLIN, 0};
		const int r = ::poll(&p, 1, timeout_ms);
		if (r < 0) {
			if (errno == EINTR)
				return false;
			throw_error("poll of the netlink events socket", errno);
		}
		return r > 0;
	}

	nl_sock* req()
	{
		if (!requests) {
			requests = connect_socket();
			nl_socket_enable_msg_peek(requests.get());
		}
		return requests.get();
	}

	// A request on the requests socket; every valid reply message goes to
	// on_reply. True when a dump was marked interrupted.
	bool transact(unsigned cmd, int flags, const std::function<void(nl_msg*)>& on_reply,
		      const std::function<void(nl_msg*)>& fill = {})
	{
		nl_sock* sk = req();
		struct State {
			const std::function<void(nl_msg*)>* on_reply = nullptr;
			bool done = false;
			bool interrupted = false;
			int err = 0;
			std::string extack;
			std::exception_ptr thrown;
		} st;
		st.on_reply = &on_reply;

		const auto valid = [](nl_msg* msg, void* arg) -> int {
			auto* s = static_cast<State*>(arg);
			if (nlmsg_hdr(msg)->nlmsg_flags & NLM_F_DUMP_INTR)
				s->interrupted = true;
			try {
				(*s->on_reply)(msg);
			} catch (...) {
				s->thrown = std::current_exception();
				s->done = true;
				return NL_STOP;
			}
			return NL_OK;
		};
		const auto finish = [](nl_msg* msg, void* arg) -> int {
			auto* s = static_cast<State*>(arg);
			if (nlmsg_hdr(msg)->nlmsg_flags & NLM_F_DUMP_INTR)
				s->interrupted = true;
			s->done = true;
			return NL_STOP;
		};
		const auto intr = [](nl_msg*, void* arg) -> int {
			static_cast<State*>(arg)->interrupted = true;
			return NL_OK;
		};
		const auto error = [](sockaddr_nl*, nlmsgerr* e, void* arg) -> int {
			auto* s = static_cast<State*>(arg);
			s->err = -e->error;
			s->extack = extack_message(reinterpret_cast<const nlmsghdr*>(
				reinterpret_cast<const std::byte*>(e) - NLMSG_HDRLEN));
			s->done = true;
			return NL_STOP;
		};
		nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, valid, &st);
		nl_socket_modify_cb(sk, NL_CB_FINISH, NL_CB_CUSTOM, finish, &st);
		nl_socket_modify_cb(sk, NL_CB_ACK, NL_CB_CUSTOM, finish, &st);
		nl_socket_modify_cb(sk, NL_CB_DUMP_INTR, NL_CB_CUSTOM, intr, &st);
		nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, error, &st);

		try {
			Msg m = request(cmd, flags);
			if (fill)
				fill(m.get());
			if (const int r = nl_send_auto(sk, m.get()); r < 0)
				throw_nl("send AMUPMU_NL_CMD_" + cmd_name(cmd), r);
			while (!st.done) {
				const int r = nl_recvmsgs_default(sk);
				if (st.thrown)
					std::rethrow_exception(st.thrown);
				if (st.err)
					throw_kernel(cmd, st.err, st.extack);
				if (r < 0 && r != -NLE_DUMP_INTR)
					throw_nl("receive AMUPMU_NL_CMD_" + cmd_name(cmd), r);
			}
		} catch (...) {
			// what is left of the answer stays behind: the next request
			// starts on a new socket
			requests.reset();
			throw;
		}
		return st.interrupted;
	}

	template <typename T, typename Parse>
	std::vector<T> dump(unsigned cmd, Parse parse)
	{
		for (int attempt = 0; attempt < dump_attempts; ++attempt) {
			std::vector<T> out;
			const bool interrupted = transact(cmd, NLM_F_DUMP, [&](nl_msg* msg) {
				const nlmsghdr* h = nlmsg_hdr(msg);
				out.push_back(parse(std::span{reinterpret_cast<const std::byte*>(h),
							      static_cast<std::size_t>(h->nlmsg_len)}));
			});
			if (!interrupted)
				return out;
		}
		throw Error{"AMUPMU_NL_CMD_" + cmd_name(cmd) + " dump interrupted " + std::to_string(dump_attempts) +
				    " times in a row (CPU hotplug or sessions changing)",
			    EAGAIN};
	}
};

Monitor::Monitor() : impl_{std::make_unique<Impl>()}
{
	impl_->events = connect_socket();
	impl_->resolve();
}

Monitor::~Monitor() = default;
Monitor::Monitor(Monitor&& other) noexcept = default;
Monitor& Monitor::operator=(Monitor&& other) noexcept = default;

std::uint32_t Monitor::family_version() const noexcept
{
	return impl_->version;
}

std::uint16_t Monitor::family_id() const noexcept
{
	return static_cast<std::uint16_t>(impl_->family);
}

void Monitor::subscribe(MonitorGroups groups)
{
	Impl& im = *impl_;
	// before the request: its first events may come before its ACK
	for (const MonitorGroup g : {MonitorGroup::cpu, MonitorGroup::session, MonitorGroup::buffer})
		if ((groups & group_bit(g)) && !(im.groups & group_bit(g)))
			im.tracker.reset(g);
	Msg m = im.request(AMUPMU_NL_CMD_SUBSCRIBE, NLM_F_ACK);
	if (nla_put_u32(m.get(), AMUPMU_NL_A_GROUPS, groups) < 0)
		throw Error{"nla_put_u32 GROUPS", EMSGSIZE};
	if (const int r = nl_send_auto(im.events.get(), m.get()); r < 0)
		throw_nl("send AMUPMU_NL_CMD_SUBSCRIBE", r);
	im.ack_seq = nlmsg_hdr(m.get())->nlmsg_seq;
	im.ack_wanted = true;
	im.ack_seen = false;
	im.ack_err = 0;
	im.ack_extack.clear();
	struct Unwant {
		Impl& im;
		~Unwant() { im.ack_wanted = false; }
	} unwant{im};
	// the events that come before the ACK are kept
	int waited = 0;
	while (!im.ack_seen) {
		if (!im.receive()) {
			if (waited >= subscribe_timeout_ms)
				throw Error{"AMUPMU_NL_CMD_SUBSCRIBE: no answer", ETIMEDOUT};
			if (!im.wait_readable(100))
				waited += 100;
		}
	}
	if (im.ack_err)
		throw_kernel(AMUPMU_NL_CMD_SUBSCRIBE, im.ack_err, im.ack_extack);
	im.groups = groups;
}

void Monitor::on_throttle(std::function<void(const ThrottleEvent&)> handler)
{
	impl_->on_throttle = std::move(handler);
}

MonitorGroups Monitor::subscription() const noexcept
{
	return impl_->groups;
}

int Monitor::fd() const noexcept
{
	return nl_socket_get_fd(impl_->events.get());
}

std::size_t Monitor::pending() const noexcept
{
	return impl_->pending.size();
}

std::optional<MonitorRecord> Monitor::next_event(std::chrono::milliseconds timeout)
{
	using clock = std::chrono::steady_clock;
	Impl& im = *impl_;
	const bool forever = timeout.count() < 0;
	const auto deadline = forever ? clock::time_point::max() : clock::now() + timeout;
	while (!im.record_next()) {
		if (im.receive())
			continue;	// an ACK alone gives no record: read on
		int ms = -1;
		if (!forever) {
			const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now()).count();
			if (left <= 0)
				break;
			ms = static_cast<int>(std::min<std::int64_t>(left, INT32_MAX));
		}
		if (!im.wait_readable(ms))
			break;	// timeout, or a signal
	}
	if (!im.record_next())
		return std::nullopt;
	return im.pop_record();
}

std::size_t Monitor::read_events(const std::function<void(const MonitorRecord&)>& callback)
{
	Impl& im = *impl_;
	std::size_t n = 0;
	for (;;) {
		while (im.record_next()) {
			const MonitorRecord r = im.pop_record();
			++n;
			callback(r);
		}
		if (!im.receive())
			return n;
	}
}

Monitor::Stats Monitor::stats() const noexcept
{
	return impl_->stats;
}

MonitorStatus Monitor::status()
{
	std::optional<MonitorStatus> out;
	impl_->transact(AMUPMU_NL_CMD_STATUS_GET, NLM_F_ACK, [&](nl_msg* msg) {
		const nlmsghdr* h = nlmsg_hdr(msg);
		out = parse_monitor_status({reinterpret_cast<const std::byte*>(h), static_cast<std::size_t>(h->nlmsg_len)});
	});
	if (!out)
		throw Error{"AMUPMU_NL_CMD_STATUS_GET: no reply", EBADMSG};
	return *out;
}

MonitorCpu Monitor::cpu(std::uint32_t cpu)
{
	return cpu_totals(cpu).info;
}

std::vector<MonitorCpu> Monitor::cpus()
{
	return impl_->dump<MonitorCpu>(AMUPMU_NL_CMD_CPU_GET, parse_monitor_cpu);
}

MonitorCpuTotals Monitor::cpu_totals(std::uint32_t cpu)
{
	std::optional<MonitorCpuTotals> out;
	impl_->transact(
		AMUPMU_NL_CMD_CPU_GET, NLM_F_ACK,
		[&](nl_msg* msg) {
			const nlmsghdr* h = nlmsg_hdr(msg);
			out = parse_monitor_cpu_totals(
				{reinterpret_cast<const std::byte*>(h), static_cast<std::size_t>(h->nlmsg_len)});
		},
		[&](nl_msg* m) {
			if (nla_put_u32(m, AMUPMU_NL_A_CPU, cpu) < 0)
				throw Error{"nla_put_u32 CPU", EMSGSIZE};
		});
	if (!out)
		throw Error{"AMUPMU_NL_CMD_CPU_GET: no reply", EBADMSG};
	return *out;
}

std::vector<MonitorCpuTotals> Monitor::cpus_totals()
{
	return impl_->dump<MonitorCpuTotals>(AMUPMU_NL_CMD_CPU_GET, parse_monitor_cpu_totals);
}

std::vector<MonitorSession> Monitor::sessions()
{
	return impl_->dump<MonitorSession>(AMUPMU_NL_CMD_SESSION_GET, parse_monitor_session);
}

} // namespace amupmu
