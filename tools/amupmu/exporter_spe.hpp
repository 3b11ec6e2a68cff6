// SPDX-License-Identifier: GPL-2.0
//
// amupmu exporter's SPE latency histograms (spe = on): a low-rate SPE
// session of the exporter's on every online CPU with SPE, its records
// decoded as they come (a thread woken at each buffer's watermark, and
// every scrape, which stops profiling for a moment so that the driver
// publishes the last records) and counted per CPU and operation type by
// total latency
// (the Counter packet's cycles from dispatch to completion). The counts
// are the exporter's own, kept across the sessions it opens (again after a
// fault, or for a CPU that came online), so they only reset when the
// exporter starts.
//
// Documentation/admin-guide/amupmu-exporter.rst, "SPE latency histograms".
#ifndef AMUPMU_TOOL_EXPORTER_SPE_HPP
#define AMUPMU_TOOL_EXPORTER_SPE_HPP

#include <amupmu/spe.hpp>
#include <amupmu/spe_session.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace amupmu::cli {

/// Upper bounds of the latency buckets, in cycles: 4 to 16384 by powers
/// of 2 (and +Inf; SPE's counters saturate at 65535 or below).
inline constexpr std::array<std::uint32_t, 13> spe_latency_bounds = {
	4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};

/// The operation types of the histograms (the "op" label): loads and
/// stores (atomics by their own load or store record), branches, and the
/// rest (other operations, records without an Operation Type packet).
enum class SpeOpKind : unsigned { load, store, branch, other };
inline constexpr std::array<std::string_view, 4> spe_op_kinds = {"load", "store", "branch", "other"};

/// One histogram: the counts per bucket (not cumulative; the last is
/// above every bound), their number and the latencies' sum.
struct SpeLatencyHistogram {
	std::array<std::uint64_t, spe_latency_bounds.size() + 1> buckets{};
	std::uint64_t count = 0;
	std::uint64_t sum = 0;	///< cycles

	void add(std::uint32_t cycles) noexcept;
	friend bool operator==(const SpeLatencyHistogram&, const SpeLatencyHistogram&) = default;
};

/// One CPU's counts over every session the exporter opened.
struct SpeCpuTotals {
	std::array<SpeLatencyHistogram, spe_op_kinds.size()> ops{};	///< by SpeOpKind
	std::uint64_t records = 0;		///< records decoded
	std::uint64_t without_latency = 0;	///< ... of which without a total latency
	/// the driver's count of the sessions (SpeCpuStatus::lost_bytes):
	/// bytes written into the discard area (a buffer full: records lost)
	std::uint64_t lost_bytes = 0;

	friend bool operator==(const SpeCpuTotals&, const SpeCpuTotals&) = default;
};

/// Everything the SPE histograms show.
struct SpeTotals {
	std::map<unsigned, SpeCpuTotals> cpus{};
	std::uint32_t interval = 0;	///< operations between samples (PMSIRR_EL1.INTERVAL)
	bool kernel = false;		///< the kernel's operations profiled too
	/// bytes the decoder skipped (unknown packets): 0 unless the buffer is
	/// not what the driver says
	std::uint64_t skipped_bytes = 0;

	friend bool operator==(const SpeTotals&, const SpeTotals&) = default;
};

/// The kind a record counts under.
[[nodiscard]] SpeOpKind spe_op_kind(const std::optional<spe::OpType>& op) noexcept;

/// Decodes bytes (whole records, as SpeBuffer::consume() hands them) of
/// cpu's buffer into t.
void add_spe_records(SpeTotals& t, unsigned cpu, std::span<const std::byte> bytes);

/// The exporter's SPE session: configured and enabled on its CPUs, their
/// buffers mapped, a thread draining them into the totals it was given
/// (under their mutex) whenever one holds its watermark. Destruction stops
/// the thread, drains the rest and closes the session.
///
/// Locking: mutex_ guards totals_, the buffers' consumption, last_ and
/// failed_; the thread takes it after poll() returns, scrapes in
/// flush_locked(). No other lock is taken under it; the ioctls under it
/// (SPE_CTL, SPE_READ) take only the driver's own locks.
class SpeSampler {
public:
	/// Throws what SpeSession::open() throws.
	SpeSampler(const SpeConfig& config, std::string_view device, SpeTotals& totals, std::mutex& mutex);
	~SpeSampler();
	SpeSampler(const SpeSampler&) = delete;
	SpeSampler& operator=(const SpeSampler&) = delete;
	SpeSampler(SpeSampler&&) = delete;
	SpeSampler& operator=(SpeSampler&&) = delete;

	/// Stops profiling (which publishes every CPU's last records), drains
	/// every buffer, adds the driver's counts and starts it again; the
	/// caller holds the totals' mutex. Empty, or why the session must be
	/// configured again (a fault stopped profiling on a CPU, the device
	/// is gone, the drain thread failed), profiling then left stopped.
	[[nodiscard]] std::string flush_locked();
	/// The CPU set, ascending.
	[[nodiscard]] std::span<const unsigned> cpus() const noexcept { return session_.cpus(); }

private:
	void run(const std::stop_token& stop);
	void drain_buffers_locked();
	/// Adds what the driver's counts grew by; why profiling stopped, if it did.
	std::string add_status_locked();

	SpeSession session_;
	std::vector<SpeBuffer> buffers_{};
	/// the driver's counts of this session as last added, by CPU (none
	/// yet: a new session's counts start at 0)
	std::map<unsigned, SpeCpuStatus> last_{};
	SpeTotals& totals_;
	std::mutex& mutex_;
	std::string failed_{};			///< under mutex_
	std::jthread thread_{};			///< last: started when the rest is made
};

} // namespace amupmu::cli

#endif
