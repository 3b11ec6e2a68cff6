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
	std::uint32_t flags = 0;	///< evflag::*
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

/// One CPU's totals (AMUPMU_PMU_READ). Fixed-size: reading allocates
/// nothing. values[0 .. nr_values).
struct CpuReading {
	unsigned cpu = 0;
	std::uint32_t nr_values = 0;
	std::array<CounterValue, max_group_events> values{};
	std::uint64_t time_enabled = 0;	///< ns
	std::uint64_t time_running = 0;	///< ns
	std::uint32_t state = 0;	///< read_state::*
	std::uint64_t samples = 0;
	std::uint64_t lost = 0;

	[[nodiscard]] std::span<const CounterValue> counters() const noexcept
	{
		return {values.data(), nr_values};
	}
};

namespace read_state {
inline constexpr std::uint32_t enabled = 1u << 0;
inline constexpr std::uint32_t offline = 1u << 1;
} // namespace read_state

class SampleReader;

/// Move-only owner of a configured session. Closing it (destruction) frees
/// the counters in the driver.
class [[nodiscard]] Session {
public:
	/// Opens path and configures the group. Throws DeviceMissing when the
	/// node is absent, Busy (counters exhausted / PMU owned by the kernel;
	/// counters_free() of the exception's context is in the message),
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

	[[nodiscard]] std::size_t size() const noexcept { return nr_events_; }
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
