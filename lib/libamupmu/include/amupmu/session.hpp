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
#include <span>
#include <string_view>
#include <vector>

namespace amupmu {

/// AMUPMU_PMU_MAX_EVENTS: 31 event counters + the cycle counter.
inline constexpr std::size_t max_group_events = 32;

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
	std::uint64_t overflows = 0;
};

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

	[[nodiscard]] std::span<const CounterValue> counters() const noexcept
	{
		return {values.data(), nr_values};
	}
};

namespace read_state {
inline constexpr std::uint32_t enabled = 1u << 0;
inline constexpr std::uint32_t offline = 1u << 1;
} // namespace read_state

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

/// Every CPU's totals from one AMUPMU_PMU_READ_ALL (Session::read_all()).
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

private:
	friend class Session;

	std::vector<std::byte> raw_{};		///< the entries as the driver writes them
	std::vector<CpuReading> cpus_{};	///< decoded
	std::size_t nr_cpus_ = 0;
	std::uint64_t time_enabled_ = 0;
	std::uint32_t state_ = 0;
};

class SampleReader;

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
	/// PMU), Busy (EBUSY: too few free counters now; the fewest free on a
	/// CPU of the set, from AMUPMU_INFO, is in the message),
	/// InvalidArgument, Unsupported, PermissionDenied, Unavailable.
	[[nodiscard]] static Session open(const GroupConfig& config,
					  std::string_view path = default_device_path);
	/// Configures the group on an open device (which the session then owns).
	[[nodiscard]] static Session create(Device device, const GroupConfig& config);

	Session(const Session&) = delete;
	Session& operator=(const Session&) = delete;
	Session(Session&&) noexcept = default;
	Session& operator=(Session&&) noexcept = default;
	~Session() = default;

	void enable() const;
	void disable() const;
	void reset() const;

	/// AMUPMU_PMU_READ of one CPU of the set into out; no allocation.
	void read(unsigned cpu, CpuReading& out) const;

	/// One AMUPMU_PMU_READ_ALL: every CPU of the set into out. Allocates
	/// only the first time out is used for this session.
	void read_all(GroupReading& out) const;
	/// read_all() into a new GroupReading (which later read_all(out) calls
	/// reuse).
	[[nodiscard]] GroupReading read_all() const;

	[[nodiscard]] std::size_t size() const noexcept { return nr_events_; }
	/// The CPU set, ascending, without duplicates.
	[[nodiscard]] std::span<const unsigned> cpus() const noexcept { return cpus_; }
	/// Counter index of each event on the first CPU (31: cycle counter).
	[[nodiscard]] std::span<const std::uint8_t> counters() const noexcept
	{
		return {counters_.data(), nr_events_};
	}
	[[nodiscard]] std::uint32_t ring_pages() const noexcept { return ring_pages_; }
	[[nodiscard]] int fd() const noexcept { return device_.fd(); }

	/// Maps the session's sample ring (1 + ring_pages pages). Throws
	/// InvalidArgument when the group has no sampling event.
	[[nodiscard]] SampleReader sample_reader() const;

private:
	Session(Device device, const GroupConfig& config);
	void ctl(std::uint32_t op, std::string_view name) const;

	Device device_;
	std::vector<unsigned> cpus_{};
	std::array<std::uint8_t, max_group_events> counters_{};
	std::size_t nr_events_ = 0;
	std::uint32_t ring_pages_ = 0;
};

} // namespace amupmu

#endif
