// SPDX-License-Identifier: LGPL-2.1-or-later
//
// amupmu::Session: a PMU counting (and sampling) session, one open file of
// /dev/amupmu with one group of events counted on a set of CPUs
// (AMUPMU_PMU_CONFIG / AMUPMU_PMU_CTL / AMUPMU_PMU_READ).
#ifndef AMUPMU_SESSION_HPP
#define AMUPMU_SESSION_HPP

#include <amupmu/device.hpp>
#include <amupmu/events.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace amupmu {

/// AMUPMU_PMU_MAX_EVENTS: 31 event counters + the cycle counter.
inline constexpr std::size_t max_group_events = 32;

/// The counter index of the cycle counter (Session::counters()).
inline constexpr std::uint8_t cycle_counter_index = 31;
/// AMUPMU_COUNTER_PERF: Session::counters() of a shared-mode group, where
/// perf core places each event (and may move it): no index.
inline constexpr std::uint8_t counter_perf = 0xff;

/// How a group's events hold counters (Session::open(), Counters::set_multiplex()).
enum class Scheduling : std::uint8_t {
	/// Each event holds a counter all the time (the default): exact
	/// counts; a group that does not fit is refused (Busy).
	pinned,
	/// Shared mode only (AMUPMU_PMU_CONFIG_MULTIPLEX): the events
	/// are perf's flexible events, which perf core rotates over the
	/// counters it has, so nothing is refused for want of counters. Each
	/// event has its own time enabled and time running, read with it
	/// (AMUPMU_PMU_READ_TIMES), and its count is estimated as perf's
	/// (scale_count()).
	multiplex,
};

/// One event of a group as the driver takes it.
struct GroupEvent {
	std::uint16_t number = 0;
	std::uint32_t flags = 0;	///< evflag::* (perf's exclusions, raw)
	std::uint64_t sample_period = 0;	///< 0: count only
};

/// What AMUPMU_PMU_CONFIG gets.
struct GroupConfig {
	std::vector<GroupEvent> events{};
	std::vector<unsigned> cpus{};	///< ascending CPU numbers
	std::uint32_t ring_pages = 0;	///< power of two when an event samples
};

/// GroupEvents of parsed events (no sampling).
[[nodiscard]] std::vector<GroupEvent> group_events(std::span<const EventSpec> events);

/// One event's total on one CPU (struct amupmu_pmu_value).
struct CounterValue {
	std::uint64_t value = 0;
	/// the counter's overflows (exclusive mode); in shared mode those of a
	/// sampling counter only (its samples' periods)
	std::uint64_t overflows = 0;
};

/// One event's times on one CPU (struct amupmu_pmu_value_times of an
/// AMUPMU_PMU_READ_TIMES). A group that does not multiplex gives
/// every event the group's time enabled and the CPU's time running.
struct EventTimes {
	std::uint64_t enabled = 0;	///< ns the event was enabled since configuration or the last reset
	std::uint64_t running = 0;	///< ns it was on a counter in that time
};

/// Each event's times on one CPU, beside that CPU's CpuReading: events[i]
/// belongs to values[i]. Fixed-size.
struct CpuTimes {
	std::array<EventTimes, max_group_events> events{};
};

/// A count as perf reports it (perf_counts_values__scale()): what the
/// counter counted, in how much of the time it was enabled, and the
/// estimate of the full count when it ran part of that time.
struct ScaledCount {
	/// The count reported: raw when the event counted all the time it
	/// was enabled (or its group does not multiplex), else the estimate
	/// raw * time_enabled / time_running (rounded down); 0 when not counted.
	std::uint64_t value = 0;
	std::uint64_t raw = 0;		///< what the counter counted
	std::uint64_t time_enabled = 0;	///< ns enabled
	std::uint64_t time_running = 0;	///< ns on a counter (or counting) in that time
	/// value is an estimate: the event ran only part of the time (a
	/// multiplexed group's, 0 < time_running < time_enabled)
	bool scaled = false;
	/// false: the event was never on a counter (time_running 0 in a
	/// multiplexed group), perf's "<not counted>"; value is 0 then
	bool counted = true;

	/// time_running / time_enabled, from 0 to 1 (1 when time_enabled is 0
	/// or not above time_running): perf stat's running share.
	[[nodiscard]] double running_fraction() const noexcept
	{
		if (time_enabled == 0 || time_running >= time_enabled)
			return 1.0;
		return static_cast<double>(time_running) / static_cast<double>(time_enabled);
	}
};

/// perf's scaling of a multiplexed event's count (perf_counts_values__scale()
/// with perf stat's default scaling): raw counted in running of enabled ns.
/// running 0: not counted, value 0; running below enabled: scaled, value
/// raw * enabled / running (exact integer arithmetic, rounded down,
/// saturated at UINT64_MAX); otherwise value raw.
[[nodiscard]] ScaledCount scale_count(std::uint64_t raw, std::uint64_t enabled, std::uint64_t running) noexcept;

/// CpuReading::state bits (enum amupmu_read_flags).
namespace read_state {
inline constexpr std::uint32_t enabled = 1u << 0;
inline constexpr std::uint32_t offline = 1u << 1;
/// the group counts through the kernel's perf core (shared mode)
inline constexpr std::uint32_t shared = 1u << 2;
/// shared mode: perf core took a pinned counter of this CPU away
/// (or could not create it again when the CPU came online): the totals
/// there are short of what ran since; the next enable() or reset() puts
/// it back when it fits
inline constexpr std::uint32_t evicted = 1u << 3;
} // namespace read_state

/// One CPU's totals (AMUPMU_PMU_READ, or its entry of an
/// AMUPMU_PMU_READ_ALL). Fixed-size: reading allocates nothing.
/// values[0 .. nr_values).
struct CpuReading {
	unsigned cpu = 0;
	std::uint32_t nr_values = 0;
	std::array<CounterValue, max_group_events> values{};
	std::uint64_t time_enabled = 0;	///< ns the group has been enabled
	std::uint64_t time_running = 0;	///< ns it has counted on this CPU
	std::uint32_t state = 0;	///< read_state::*
	std::uint64_t samples = 0;	///< records this CPU wrote into the ring
	std::uint64_t lost = 0;		///< samples dropped: the ring was full
	/// samples dropped because the interrupt came in the kernel while the
	/// counter excludes the kernel (as perf drops skid samples)
	std::uint64_t skid = 0;

	/// The values read, one an event.
	[[nodiscard]] std::span<const CounterValue> counters() const noexcept
	{
		return {values.data(), nr_values};
	}

	/// The group was counting on this CPU at the read.
	[[nodiscard]] constexpr bool enabled() const noexcept { return (state & read_state::enabled) != 0; }
	/// The CPU was offline: the values are those it had when it went down.
	[[nodiscard]] constexpr bool offline() const noexcept { return (state & read_state::offline) != 0; }
	/// Counted through perf core (shared mode).
	[[nodiscard]] constexpr bool shared() const noexcept { return (state & read_state::shared) != 0; }
	/// Perf core took a counter away: the counts of this CPU are short.
	[[nodiscard]] constexpr bool evicted() const noexcept { return (state & read_state::evicted) != 0; }
};

/// Bytes of one AMUPMU_PMU_READ_ALL entry with room for `room` values:
/// struct amupmu_pmu_read_cpu (40 bytes) and its struct amupmu_pmu_value
/// array (16 bytes each).
[[nodiscard]] constexpr std::size_t read_all_entry_size(std::uint32_t room) noexcept
{
	return 40 + std::size_t{16} * room;
}

/// Decodes an AMUPMU_PMU_READ_ALL buffer: nr_entries entries of
/// read_all_entry_size(room) bytes, each a struct amupmu_pmu_read_cpu
/// whose first nr_values values are the group's, into out[0, nr_entries);
/// time_enabled (the command's, common to all CPUs) is copied into each.
/// Allocates nothing. Throws Error (EBADMSG) when raw is shorter than the
/// entries, nr_values exceeds room or max_group_events, or out is too
/// small.
void decode_read_all(std::span<const std::byte> raw, std::uint32_t nr_entries, std::uint32_t room,
		     std::uint32_t nr_values, std::uint64_t time_enabled, std::span<CpuReading> out);

/// Bytes of one AMUPMU_PMU_READ_ALL entry read with AMUPMU_PMU_READ_TIMES
/// with room for `room` values: struct amupmu_pmu_read_cpu (40
/// bytes) and its struct amupmu_pmu_value_times array (32 bytes each).
[[nodiscard]] constexpr std::size_t read_all_times_entry_size(std::uint32_t room) noexcept
{
	return 40 + std::size_t{32} * room;
}

/// decode_read_all() of an AMUPMU_PMU_READ_ALL with AMUPMU_PMU_READ_TIMES:
/// nr_entries entries of read_all_times_entry_size(room) bytes, whose
/// values are struct amupmu_pmu_value_times; out[i] gets entry i's header
/// and values (value and overflows), times[i] its events' times (times
/// empty: the times are not kept). Allocates nothing. Throws Error
/// (EBADMSG) as decode_read_all(), and when times is neither empty nor
/// room for nr_entries.
void decode_read_all_times(std::span<const std::byte> raw, std::uint32_t nr_entries, std::uint32_t room,
			   std::uint32_t nr_values, std::uint64_t time_enabled, std::span<CpuReading> out,
			   std::span<CpuTimes> times);

/// The values of a single-CPU AMUPMU_PMU_READ with AMUPMU_PMU_READ_TIMES:
/// nr_values struct amupmu_pmu_value_times, into out.values (and
/// out.nr_values) and times. Allocates nothing. Throws Error (EBADMSG)
/// when raw holds fewer or nr_values exceeds max_group_events.
void decode_read_times(std::span<const std::byte> raw, std::uint32_t nr_values, CpuReading& out, CpuTimes& times);

/// Every CPU's totals from one AMUPMU_PMU_READ_ALL (Session::read_all()),
/// with each event's times when the group multiplexes (has_times()).
/// The first read into it sizes its buffers for the session; later reads
/// of the same session allocate nothing.
class GroupReading {
public:
	/// One entry per CPU of the session's set, ascending.
	[[nodiscard]] std::span<const CpuReading> cpus() const noexcept { return {cpus_.data(), nr_cpus_}; }
	/// The entry of cpu, or nullptr when cpu is not in the set.
	[[nodiscard]] const CpuReading* find(unsigned cpu) const noexcept;
	/// ns the group has been enabled.
	[[nodiscard]] std::uint64_t time_enabled() const noexcept { return time_enabled_; }
	/// The group is enabled (read_state::enabled of the command).
	[[nodiscard]] bool enabled() const noexcept { return (state_ & read_state::enabled) != 0; }
	/// The read carried each event's times (AMUPMU_PMU_READ_TIMES: the
	/// group multiplexes, Session::multiplexed()).
	[[nodiscard]] bool has_times() const noexcept { return has_times_; }
	/// The times of cpus()[cpu_index]'s events, decoded from the read's
	/// buffer (no allocation). Throws InvalidArgument without has_times()
	/// or for an index out of range.
	[[nodiscard]] CpuTimes times(std::size_t cpu_index) const;

private:
	friend class Session;

	std::vector<std::byte> raw_{};		///< the entries as the driver writes them
	std::vector<CpuReading> cpus_{};	///< decoded
	std::size_t nr_cpus_ = 0;
	std::uint64_t time_enabled_ = 0;
	std::uint32_t state_ = 0;
	/// raw_ holds READ_TIMES entries; every read_all() sets it
	bool has_times_ = false;
};

class SampleReader;

/// Throws the error an errno of AMUPMU_PMU_CONFIG means for a group of
/// nr_events events on cpus: EBUSY Busy, ENXIO OwnedByKernel, others as
/// throw_error(). info (AMUPMU_INFO read after the failure, or nullptr)
/// lets the message say why: the fewest counters free on a CPU of the set,
/// shared mode's perf core, a driver without shared mode.
[[noreturn]] void throw_pmu_config_error(int err, std::size_t nr_events, std::span<const unsigned> cpus,
					 const Info* info);

/// Checks that the driver info describes can multiplex a group
/// (Scheduling::multiplex). Throws Unsupported (EOPNOTSUPP) for a driver
/// before ABI 2.3 or in exclusive mode; passes in shared mode, and in the
/// modes where no group counts (refused, none: AMUPMU_PMU_CONFIG says why).
void require_multiplex(const Info& info);

/// Move-only owner of a configured session. Closing it (destruction) frees
/// the counters in the driver.
///
/// Thread safety: one object per thread; distinct objects may be used
/// concurrently. The const members may also be called from several
/// threads at once (each is one ioctl on the file, which the driver
/// serializes, and writes only the caller's own output); moving or
/// destroying the object needs it to itself.
class [[nodiscard]] Session {
public:
	/// Opens path and configures the group. Throws DeviceMissing when the
	/// node is absent, OwnedByKernel (ENXIO: the kernel's arm_pmu owns the
	/// PMU and shared mode is off, or in shared mode no perf PMU serves a
	/// CPU of the set; the message says which), Busy (EBUSY: too few free
	/// counters now; the fewest free on a CPU of the set, from AMUPMU_INFO,
	/// is in the message; in shared mode perf core could not schedule the
	/// pinned counters), InvalidArgument, Unsupported, PermissionDenied,
	/// Unavailable.
	[[nodiscard]] static Session open(const GroupConfig& config,
					  std::string_view path = default_device_path);
	/// Configures the group on an open device (which the session then owns).
	[[nodiscard]] static Session create(Device device, const GroupConfig& config);
	/// open() and create() with the group's scheduling: with
	/// Scheduling::multiplex, AMUPMU_INFO first (require_multiplex():
	/// Unsupported from a driver before ABI 2.3 or in exclusive mode), then
	/// AMUPMU_PMU_CONFIG with AMUPMU_PMU_CONFIG_MULTIPLEX. Scheduling::pinned
	/// is what open() and create() do.
	[[nodiscard]] static Session open(const GroupConfig& config, Scheduling scheduling,
					  std::string_view path = default_device_path);
	[[nodiscard]] static Session create(Device device, const GroupConfig& config, Scheduling scheduling);

	Session(const Session&) = delete;
	Session& operator=(const Session&) = delete;
	Session(Session&&) noexcept = default;
	Session& operator=(Session&&) noexcept = default;
	~Session() = default;

	/// Starts counting (AMUPMU_PMU_CTL ENABLE). Throws as throw_error().
	void enable() const;
	/// Stops counting; the counts stay. Throws as throw_error().
	void disable() const;
	/// Zeroes the counts and times. Throws as throw_error().
	void reset() const;

	/// AMUPMU_PMU_READ of one CPU of the set into out; no allocation.
	/// Throws InvalidArgument for a multiplexed group, whose counts mean
	/// nothing without their times (the other read()).
	void read(unsigned cpu, CpuReading& out) const;
	/// AMUPMU_PMU_READ with AMUPMU_PMU_READ_TIMES (ABI 2.3; EINVAL from a
	/// driver before): also each event's time enabled and time running on
	/// cpu, into times (a group that does not multiplex: the group's time
	/// enabled and the CPU's time running for every event); no allocation.
	void read(unsigned cpu, CpuReading& out, CpuTimes& times) const;

	/// One AMUPMU_PMU_READ_ALL: every CPU of the set into out, with each
	/// event's times when the group multiplexes (AMUPMU_PMU_READ_TIMES:
	/// GroupReading::times()). Allocates only the first time out is used
	/// for this session.
	void read_all(GroupReading& out) const;
	/// read_all() into a new GroupReading (which later read_all(out) calls
	/// reuse).
	[[nodiscard]] GroupReading read_all() const;

	/// The number of events in the group.
	[[nodiscard]] std::size_t size() const noexcept { return nr_events_; }
	/// The CPU set, ascending, without duplicates.
	[[nodiscard]] std::span<const unsigned> cpus() const noexcept { return cpus_; }
	/// Counter index of each event on the first CPU as the driver reports
	/// it (31: cycle counter; counter_perf in shared mode: perf core places
	/// the events). counter() says the same without the raw value.
	[[nodiscard]] std::span<const std::uint8_t> counters() const noexcept
	{
		return {counters_.data(), nr_events_};
	}
	/// The counter index of event (0..30 an event counter, 31 the cycle
	/// counter) on the first CPU, or nullopt when perf core places it
	/// (shared mode). Throws InvalidArgument for event >= size().
	[[nodiscard]] std::optional<unsigned> counter(std::size_t event) const;
	/// The group counts through the kernel's perf core (shared mode): its
	/// events have no counter index of amupmu's.
	[[nodiscard]] bool shared() const noexcept { return nr_events_ != 0 && counters_[0] == counter_perf; }
	/// The group was configured with Scheduling::multiplex: perf core
	/// rotates its events over the counters (shared mode).
	[[nodiscard]] bool multiplexed() const noexcept { return multiplex_; }
	/// The sample ring's data pages (0: the group does not sample).
	[[nodiscard]] std::uint32_t ring_pages() const noexcept { return ring_pages_; }
	/// The session's file, for poll() (POLLIN: samples to read).
	[[nodiscard]] int fd() const noexcept { return device_.fd(); }

	/// Maps the session's sample ring (1 + ring_pages pages). Throws
	/// InvalidArgument when the group has no sampling event.
	[[nodiscard]] SampleReader sample_reader() const;

private:
	Session(Device device, const GroupConfig& config);
	Session(Device device, const GroupConfig& config, Scheduling scheduling);
	void ctl(std::uint32_t op, std::string_view name) const;

	Device device_;
	std::vector<unsigned> cpus_{};
	std::array<std::uint8_t, max_group_events> counters_{};
	std::size_t nr_events_ = 0;
	std::uint32_t ring_pages_ = 0;
	/// Scheduling::multiplex
	bool multiplex_ = false;
};

} // namespace amupmu

#endif
