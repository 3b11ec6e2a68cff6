// SPDX-License-Identifier: GPL-2.0
//
// When to drain the sample ring again. The driver wakes a poll()ing
// reader at every record it writes, so a tool that drains whenever the
// ring is readable wakes at every sample and ends up sampling itself
// (record -a once showed 28 % of its samples in amupmu, 12 % at poll's
// return). perf's ring wakes its reader at half the buffer instead; this
// gives the same rhythm from the reader's side: after a drain the ring's
// fd stays out of poll() for the time half the ring takes to fill at the
// rate the drains saw, at most max_hold_ms (names of short-lived
// processes are read at the drains), none while the rate is unknown.
#ifndef AMUPMU_CLI_DRAIN_PACER_HPP
#define AMUPMU_CLI_DRAIN_PACER_HPP

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

namespace amupmu::cli {

class DrainPacer {
public:
	static constexpr int max_hold_ms = 100;

	explicit DrainPacer(std::uint64_t ring_bytes) : half_{ring_bytes / 2} {}

	/// After a drain that took bytes out of the ring at time now; returns
	/// the ms to keep the ring out of poll() (0: poll it at once).
	int drained(std::uint64_t bytes, std::chrono::steady_clock::time_point now)
	{
		using namespace std::chrono;
		const bool first = !last_;
		const double seconds = first ? 0 : duration<double>(now - *last_).count();
		last_ = now;
		if (first || seconds <= 0)
			return 0;
		if (bytes == 0)
			return 0;	// nothing came: poll() until something does
		// bytes per ms over the last interval; half the ring at that rate
		const double per_ms = static_cast<double>(bytes) / (seconds * 1000.0);
		const double ms = static_cast<double>(half_) / per_ms;
		return static_cast<int>(std::clamp(ms, 0.0, static_cast<double>(max_hold_ms)));
	}

private:
	std::uint64_t half_;
	std::optional<std::chrono::steady_clock::time_point> last_{};
};

} // namespace amupmu::cli

#endif
