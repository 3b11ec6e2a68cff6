// SPDX-License-Identifier: LGPL-2.1-or-later
//
// amupmu::Monitor: the driver's generic netlink family "amupmu"
// (include/uapi/linux/amupmu_netlink.h,
// Documentation/userspace-api/amupmu-netlink.rst) through libnl-3: events
// as they happen (CPU hotplug, ownership changes, sessions, SPE knobs, lost
// samples, SPE buffer events) and the state dumps (status, per-CPU,
// sessions) without opening /dev/amupmu.
//
// Events are not netlink multicast: the Monitor's socket subscribes to
// groups (MonitorGroup) and the kernel unicasts each event of them to it.
// Every event carries its group's sequence number; the Monitor reports a
// Gap when one moves by more than 1 (events lost to a full receive buffer
// or to the kernel's own queue) and an Overrun when the socket read
// ENOBUFS. Neither ends the Monitor.
//
// libnl is an implementation detail: no libnl type appears here.
#ifndef AMUPMU_MONITOR_HPP
#define AMUPMU_MONITOR_HPP

#include <amupmu/info.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace amupmu {

/// Event groups (enum amupmu_nl_group). session and buffer need CAP_PERFMON.
enum class MonitorGroup : std::uint32_t {
	cpu = 0,	///< CPU online/offline, PMU/SPE ownership changes
	session = 1,	///< sessions start and end, SPE debugfs knob changes
	buffer = 2,	///< a sample ring losing records, SPE buffer events
};
inline constexpr std::size_t monitor_group_count = 3;

/// A set of groups: bit n is MonitorGroup n (AMUPMU_NL_A_GROUPS).
using MonitorGroups = std::uint32_t;
[[nodiscard]] constexpr MonitorGroups group_bit(MonitorGroup g) noexcept
{
	return MonitorGroups{1} << static_cast<std::uint32_t>(g);
}
inline constexpr MonitorGroups monitor_groups_all = (MonitorGroups{1} << monitor_group_count) - 1;

/// "cpu" | "session" | "buffer"; "group<n>" otherwise.
[[nodiscard]] std::string to_string(MonitorGroup g);
/// The group a name ("cpu", "session", "buffer") stands for.
[[nodiscard]] std::optional<MonitorGroup> monitor_group_from_name(std::string_view name) noexcept;

/// Kind of a session (enum amupmu_nl_session_kind); a newer driver may
/// send another value.
enum class SessionKind : std::uint32_t {
	pmu = 1,	///< a PMU counting/sampling group (AMUPMU_PMU_CONFIG)
	spe = 2,	///< an SPE configuration (AMUPMU_SPE_CONFIG)
};
/// "pmu" | "spe" | "kind<n>".
[[nodiscard]] std::string to_string(SessionKind k);

/// What changed hands (enum amupmu_nl_unit).
enum class MonitorUnit : std::uint32_t {
	pmu = 1,	///< owner is a PmuOwner
	spe = 2,	///< owner is an SpeOwner
};

/// SPE buffer management events (enum amupmu_nl_spe_event).
enum class SpeBufferEventKind : std::uint32_t {
	full = 1,	///< the profiling buffer filled
	fault = 2,	///< a fault stopped profiling on the CPU (PMBSR_EL1 says why)
	collision = 3,	///< records were lost to a collision
};
/// "full" | "fault" | "collision" | "event<n>".
[[nodiscard]] std::string to_string(SpeBufferEventKind k);

// ---------------------------------------------------------------- events
// Each event has its group's sequence number (seq) and time_ns, the
// CLOCK_MONOTONIC time when it happened.

/// CPU_ONLINE / CPU_OFFLINE (group cpu). The versions, MIDR_EL1 and the
/// counter count come with online only (0 for offline).
struct CpuEvent {
	static constexpr MonitorGroup group = MonitorGroup::cpu;
	std::uint64_t seq = 0;
	std::uint64_t time_ns = 0;
	bool online = false;
	std::uint32_t cpu = 0;
	std::uint32_t flags = 0;	///< CpuFlag bits
	std::uint64_t midr = 0;
	std::uint32_t pmu_version = 0;
	std::uint32_t pmu_counters = 0;
	std::uint32_t amu_version = 0;
	std::uint32_t spe_version = 0;
	friend bool operator==(const CpuEvent&, const CpuEvent&) = default;
};

/// OWNER_CHANGE (group cpu): the PMU or SPE has a new owner (PmuOwner or
/// SpeOwner by unit).
struct OwnerEvent {
	static constexpr MonitorGroup group = MonitorGroup::cpu;
	std::uint64_t seq = 0;
	std::uint64_t time_ns = 0;
	MonitorUnit unit = MonitorUnit::pmu;
	std::uint32_t owner = 0;
	friend bool operator==(const OwnerEvent&, const OwnerEvent&) = default;
};

/// SESSION_START / SESSION_END (group session).
struct SessionEvent {
	static constexpr MonitorGroup group = MonitorGroup::session;
	std::uint64_t seq = 0;
	std::uint64_t time_ns = 0;
	bool start = false;
	std::uint64_t session_id = 0;
	SessionKind kind = SessionKind::pmu;
	std::uint32_t pid = 0;	///< in the subscriber's pid namespace; 0: not visible there
	friend bool operator==(const SessionEvent&, const SessionEvent&) = default;
};

/// KNOB_CHANGE (group session): arm_spe/<knob> was written.
struct KnobEvent {
	static constexpr MonitorGroup group = MonitorGroup::session;
	std::uint64_t seq = 0;
	std::uint64_t time_ns = 0;
	std::string knob;
	std::uint64_t old_value = 0;
	std::uint64_t new_value = 0;
	std::uint32_t pid = 0;	///< the writer
	friend bool operator==(const KnobEvent&, const KnobEvent&) = default;
};

/// RING_LOST (group buffer): a CPU's part of a session's sample ring has
/// lost `lost` records so far (sent at 1, 2, 4, 8, ...).
struct RingLostEvent {
	static constexpr MonitorGroup group = MonitorGroup::buffer;
	std::uint64_t seq = 0;
	std::uint64_t time_ns = 0;
	std::uint64_t session_id = 0;
	std::uint32_t cpu = 0;
	std::uint64_t lost = 0;
	friend bool operator==(const RingLostEvent&, const RingLostEvent&) = default;
};

/// SPE_BUFFER (group buffer): the SPE buffer of a CPU filled, faulted or
/// saw a collision; pmbsr is PMBSR_EL1.
struct SpeBufferEvent {
	static constexpr MonitorGroup group = MonitorGroup::buffer;
	std::uint64_t seq = 0;
	std::uint64_t time_ns = 0;
	std::uint64_t session_id = 0;
	std::uint32_t cpu = 0;
	SpeBufferEventKind what = SpeBufferEventKind::full;
	std::uint64_t pmbsr = 0;
	friend bool operator==(const SpeBufferEvent&, const SpeBufferEvent&) = default;
};

/// THROTTLE (group buffer): a session's sample interrupts on a CPU were
/// throttled until the next tick, `throttled` times so far (sent at 1, 2,
/// 4, 8, ...). Not a MonitorEvent alternative (the variant's alternatives
/// are part of libamupmu.so.2's ABI): Monitor hands it to the handler of
/// Monitor::on_throttle().
struct ThrottleEvent {
	static constexpr MonitorGroup group = MonitorGroup::buffer;
	std::uint64_t seq = 0;
	std::uint64_t time_ns = 0;
	std::uint64_t session_id = 0;
	std::uint32_t cpu = 0;
	std::uint64_t throttled = 0;
	friend bool operator==(const ThrottleEvent&, const ThrottleEvent&) = default;
};

/// An event as the kernel sent it.
using MonitorEvent = std::variant<CpuEvent, OwnerEvent, SessionEvent, KnobEvent, RingLostEvent, SpeBufferEvent>;

/// The group's sequence number moved from expected to got > expected:
/// got - expected events of the group were lost. Reported before the
/// event numbered got.
struct Gap {
	MonitorGroup group = MonitorGroup::cpu;
	std::uint64_t expected = 0;
	std::uint64_t got = 0;
	[[nodiscard]] constexpr std::uint64_t missed() const noexcept { return got - expected; }
	friend bool operator==(const Gap&, const Gap&) = default;
};

/// The socket's receive buffer overflowed (recv read ENOBUFS): the kernel
/// dropped events for this subscriber. The next event of each group that
/// lost some shows a Gap. The Monitor goes on.
struct Overrun {
	friend bool operator==(const Overrun&, const Overrun&) = default;
};

/// What Monitor::next_event() and read_events() hand over.
using MonitorRecord =
	std::variant<CpuEvent, OwnerEvent, SessionEvent, KnobEvent, RingLostEvent, SpeBufferEvent, Gap, Overrun>;

/// The event's group (for an event of MonitorEvent).
[[nodiscard]] MonitorGroup event_group(const MonitorEvent& ev) noexcept;
/// The event's sequence number.
[[nodiscard]] std::uint64_t event_seq(const MonitorEvent& ev) noexcept;
/// The record an event is (the same alternative).
[[nodiscard]] MonitorRecord to_record(MonitorEvent ev);

/// Per-group sequence tracking. The first event of a group gives no gap
/// (what came before the subscription is not missed); a number below the
/// expected one (the module was loaded again) starts the group afresh.
class SeqTracker {
public:
	/// The gap before the event numbered seq of group g, if any.
	[[nodiscard]] std::optional<Gap> track(MonitorGroup g, std::uint64_t seq) noexcept;
	/// Forgets every group.
	void reset() noexcept;
	/// Forgets one group (subscribed anew: what it missed while it was not
	/// subscribed is no gap).
	void reset(MonitorGroup g) noexcept;

private:
	struct Slot {
		bool seen = false;
		std::uint64_t next = 0;
	};
	Slot slots_[monitor_group_count]{};
};

// ---------------------------------------------------------------- dumps

/// STATUS_GET: the family's state.
struct MonitorStatus {
	std::uint64_t features = 0;	///< Feature bits, as Info::features
	std::uint32_t nr_cpus = 0;	///< possible CPU numbers (nr_cpu_ids)
	PmuOwner pmu_owner = PmuOwner::none;
	SpeOwner spe_owner = SpeOwner::none;
	std::uint32_t generation = 0;	///< moves with every hotplug, ownership and session change
	std::uint64_t events_dropped = 0;	///< events lost to the kernel's full queue
	std::uint64_t events_undelivered = 0;	///< event messages a subscriber's full buffer refused
	std::uint32_t subscribers = 0;
	friend bool operator==(const MonitorStatus&, const MonitorStatus&) = default;
};

/// CPU_GET: one possible CPU (the fields of its AMUPMU_INFO entry that the
/// family reports, its owners and session counts).
struct MonitorCpu {
	std::uint32_t cpu = 0;
	std::uint32_t flags = 0;	///< CpuFlag bits
	std::uint64_t midr = 0;
	std::uint64_t revidr = 0;
	std::uint32_t pmu_version = 0;
	std::uint32_t pmu_counters = 0;
	std::uint32_t pmu_counters_free = 0;	///< as CpuInfo::pmu_counters_free
	std::uint32_t amu_version = 0;
	std::uint32_t spe_version = 0;
	std::uint64_t pmsidr = 0;
	std::uint64_t amcfgr = 0;
	PmuOwner pmu_owner = PmuOwner::none;
	SpeOwner spe_owner = SpeOwner::none;
	std::uint32_t pmu_sessions = 0;	///< PMU sessions whose CPU set has the CPU
	std::uint32_t spe_sessions = 0;	///< SPE sessions whose CPU set has the CPU
	friend bool operator==(const MonitorCpu&, const MonitorCpu&) = default;
};

/// CPU_GET with the CPU's totals over every session (ABI 2.5): samples
/// lost and sample interrupts throttled on the CPU, summed over every
/// session of every user and both PMU modes since the module loaded (a
/// session's RESET or end and CPU hotplug take nothing back). Each
/// session's Counters::lost and ::throttled on the CPU add to them one for
/// one; exact where RingLostEvent and ThrottleEvent (sent at 1, 2, 4, ...)
/// are lower bounds. A type beside MonitorCpu rather than two more
/// members of it: MonitorCpu's layout is part of libamupmu.so.2's ABI.
struct MonitorCpuTotals {
	MonitorCpu info;	///< the reply's MonitorCpu, as cpu() returns it
	/// LOST_TOTAL; nullopt when the reply has none: the caller lacks
	/// CAP_PERFMON (and CAP_SYS_ADMIN), or the module is older than ABI 2.5
	std::optional<std::uint64_t> lost_total;
	/// THROTTLED_TOTAL; nullopt as lost_total
	std::optional<std::uint64_t> throttled_total;
	friend bool operator==(const MonitorCpuTotals&, const MonitorCpuTotals&) = default;
};

/// SESSION_GET: one session.
struct MonitorSession {
	struct Counter {
		std::uint32_t type = 0;	///< the PMEVTYPER<n>_EL0 value programmed
		std::uint64_t period = 0;	///< sample period, 0: counting only
		friend bool operator==(const Counter&, const Counter&) = default;
	};
	std::uint64_t id = 0;
	SessionKind kind = SessionKind::pmu;
	std::uint32_t pid = 0;	///< in the caller's pid namespace; 0: not visible there
	std::vector<std::uint32_t> cpus;	///< the CPU set, ascending
	std::vector<Counter> counters;	///< PMU sessions
	std::uint64_t pmsfcr = 0;	///< SPE sessions: PMSFCR_EL1
	std::uint64_t pmsirr = 0;	///< SPE sessions: PMSIRR_EL1
	friend bool operator==(const MonitorSession&, const MonitorSession&) = default;
};

/// An Info built from the netlink dumps, for when /dev/amupmu cannot be
/// opened: features, owners and one CpuInfo per possible CPU number with
/// what the family reports (flags, MIDR/REVIDR, versions, counters, free
/// counters, PMSIDR, AMCFGR). Not in the family, left 0: the ABI
/// version, the supported ioctls, the kernel's EL, the clock and the other
/// registers.
[[nodiscard]] Info info_from_monitor(const MonitorStatus& status, std::span<const MonitorCpu> cpus);

// ---------------------------------------------------------------- parsing
// One netlink message (nlmsghdr, genlmsghdr, attributes) as the kernel
// sends it, whatever nlmsg_type says (the family's id is the caller's
// business). Malformed input (short, a length past the end, a required
// attribute missing, an attribute of the wrong size, an unknown command)
// throws Error with EBADMSG naming the command and attribute; unknown
// attributes are ignored (a newer driver adds them at the end).

/// Decodes an event message. Throws Error (EBADMSG) when malformed.
[[nodiscard]] MonitorEvent parse_monitor_event(std::span<const std::byte> message);
/// Decodes a THROTTLE event message. Throws Error (EBADMSG) when malformed
/// or another command.
[[nodiscard]] ThrottleEvent parse_monitor_throttle(std::span<const std::byte> message);
/// Decodes a STATUS_GET reply. Throws Error (EBADMSG) when malformed.
[[nodiscard]] MonitorStatus parse_monitor_status(std::span<const std::byte> message);
/// Decodes a CPU_GET reply. Throws Error (EBADMSG) when malformed.
[[nodiscard]] MonitorCpu parse_monitor_cpu(std::span<const std::byte> message);
/// Decodes a CPU_GET reply with its totals (nullopt where it has none).
/// Throws Error (EBADMSG) when malformed.
[[nodiscard]] MonitorCpuTotals parse_monitor_cpu_totals(std::span<const std::byte> message);
/// Decodes a SESSION_GET reply. Throws Error (EBADMSG) when malformed.
[[nodiscard]] MonitorSession parse_monitor_session(std::span<const std::byte> message);

// ---------------------------------------------------------------- Monitor

/// A generic netlink socket of the family "amupmu" (move-only RAII; a
/// moved-from Monitor may only be destroyed or assigned to). Not
/// thread-safe: one thread at a time.
///
/// Errors are Error subclasses as throw_error() chooses them by errno
/// (PermissionDenied for EACCES, Busy for EBUSY, ...), what() naming the
/// command and, when the kernel sent one, its extended ACK message, e.g.
/// "AMUPMU_NL_CMD_SUBSCRIBE (the session and buffer groups need
/// CAP_PERFMON): Permission denied (EACCES)".
class Monitor {
public:
	/// Opens the socket and resolves the family by name. DeviceMissing
	/// (ENOENT) when it is not registered (the module is not loaded);
	/// Error with EPROTO when its version is older than
	/// AMUPMU_NL_FAMILY_VERSION.
	Monitor();
	~Monitor();
	Monitor(Monitor&& other) noexcept;
	Monitor& operator=(Monitor&& other) noexcept;
	Monitor(const Monitor&) = delete;
	Monitor& operator=(const Monitor&) = delete;

	/// The family's version as the kernel registered it.
	[[nodiscard]] std::uint32_t family_version() const noexcept;
	/// The family's id (nlmsg_type of its messages).
	[[nodiscard]] std::uint16_t family_id() const noexcept;

	/// Replaces the subscription (0 ends it). Events that arrive meanwhile
	/// are kept for next_event(). A group added starts its sequence
	/// tracking afresh. PermissionDenied (EACCES) for session or buffer
	/// without CAP_PERFMON; Busy when too many sockets subscribe.
	void subscribe(MonitorGroups groups);
	/// Where THROTTLE events go (group buffer): handler is called with
	/// each in order with the records, by next_event() or read_events()
	/// once the records that came before it are handed over. Their
	/// sequence numbers are tracked as the other events' (a Gap record
	/// before one whose group skipped) and they count in Stats::events,
	/// with a handler or not. Empty: dropped.
	void on_throttle(std::function<void(const ThrottleEvent&)> handler);
	/// The groups subscribed to.
	[[nodiscard]] MonitorGroups subscription() const noexcept;

	/// The events socket: readable (POLLIN) when events are pending, for an
	/// application's own poll loop; then call read_events() or
	/// next_event(0ms). Records already received are pending too:
	/// pending() says so.
	[[nodiscard]] int fd() const noexcept;
	/// Records (and THROTTLE events) received and not handed over yet.
	[[nodiscard]] std::size_t pending() const noexcept;

	/// The next record, waiting up to timeout (0: not at all, negative:
	/// forever); nullopt on timeout. An EINTR ends the wait early
	/// (nullopt), so that a signal handler's flag can be tested.
	[[nodiscard]] std::optional<MonitorRecord> next_event(std::chrono::milliseconds timeout);
	/// Hands every record that can be read now to callback, without
	/// waiting; returns how many.
	std::size_t read_events(const std::function<void(const MonitorRecord&)>& callback);

	/// Counters of what this Monitor saw.
	struct Stats {
		std::uint64_t events = 0;	///< events received
		std::uint64_t gaps = 0;		///< Gaps reported
		std::uint64_t missed = 0;	///< events the Gaps say were lost
		std::uint64_t overruns = 0;	///< ENOBUFS read
		std::uint64_t ignored = 0;	///< messages of unknown commands
	};
	/// What this Monitor saw so far.
	[[nodiscard]] Stats stats() const noexcept;

	/// STATUS_GET.
	[[nodiscard]] MonitorStatus status();
	/// CPU_GET of one CPU; Unavailable (ENODEV) when it is not possible.
	[[nodiscard]] MonitorCpu cpu(std::uint32_t cpu);
	/// CPU_GET dump: every possible CPU, ascending. Dumped again (up to 8
	/// times) while the kernel marks it interrupted (NLM_F_DUMP_INTR, a
	/// hotplug or session change under it); Error with EAGAIN after that.
	[[nodiscard]] std::vector<MonitorCpu> cpus();
	/// CPU_GET of one CPU with its totals (MonitorCpuTotals); as cpu().
	[[nodiscard]] MonitorCpuTotals cpu_totals(std::uint32_t cpu);
	/// CPU_GET dump with each CPU's totals; as cpus(). One dump: the
	/// totals of every possible CPU, ascending.
	[[nodiscard]] std::vector<MonitorCpuTotals> cpus_totals();
	/// SESSION_GET dump, ascending ids; retried as cpus() is.
	[[nodiscard]] std::vector<MonitorSession> sessions();

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace amupmu

#endif
