// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The report of an SPE recording (`amupmu spe report`): every chunk of
// raw profiling data decoded with spe::RecordReader (zero-copy; the only
// allocations are the aggregation maps' nodes; a second pass over the data
// takes the distributions of the top data addresses and lines only), then
//  - totals: records, complete or not (by how each ended), unknown
//    packets, skipped bytes, and the buffer's losses from the recording's
//    per-CPU counters, overall and per CPU;
//  - the operation-type mix (every class and subclass the decoder knows);
//  - exact latency distributions (total, issue, translation): a count per
//    value, log2 buckets and nearest-rank percentiles taken from the
//    whole distribution;
//  - the data-source breakdown: raw codes, named where the encoding is
//    known for the CPU's MIDR_EL1 (the library's spe_data_source_encoding());
//  - the hottest PCs and symbols, data addresses and 64-byte cache lines;
//  - how many records had each event bit.
// Rendered as text (perf-like), JSON, or an SVG of the latency histograms.
// Numbers are written without the C or C++ locale (std::to_chars).
#ifndef AMUPMU_REPORT_SPE_REPORT_HPP
#define AMUPMU_REPORT_SPE_REPORT_HPP

#include <amupmu/elf.hpp>
#include <amupmu/sample.hpp>
#include <amupmu/spe_data_source.hpp>
#include <amupmu/report/spe_recording.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu::report {

// ---------------------------------------------------------------- distributions

/// The exact distribution of a 16-bit latency counter: how many records
/// had each value.
class LatencyDistribution {
public:
	/// log2 buckets: 0 holds the value 0, k (1-16) holds [2^(k-1), 2^k - 1].
	static constexpr std::size_t buckets = 17;

	void add(std::uint16_t value, std::uint64_t n = 1);
	void merge(const LatencyDistribution& other);

	[[nodiscard]] std::uint64_t count() const noexcept { return count_; }
	[[nodiscard]] std::uint64_t sum() const noexcept { return sum_; }
	[[nodiscard]] bool empty() const noexcept { return count_ == 0; }
	/// sum / count; 0 when empty.
	[[nodiscard]] double mean() const noexcept;
	[[nodiscard]] std::uint16_t min() const noexcept;	///< 0 when empty
	[[nodiscard]] std::uint16_t max() const noexcept;	///< 0 when empty
	/// Nearest rank: the smallest value v such that at least
	/// ceil(count * num / den) records have a value <= v (at least one
	/// record). num <= den, den > 0; 0 when empty.
	[[nodiscard]] std::uint16_t quantile(std::uint64_t num, std::uint64_t den) const noexcept;
	[[nodiscard]] std::uint16_t p50() const noexcept { return quantile(50, 100); }
	[[nodiscard]] std::uint16_t p90() const noexcept { return quantile(90, 100); }
	[[nodiscard]] std::uint16_t p99() const noexcept { return quantile(99, 100); }
	[[nodiscard]] std::uint16_t p999() const noexcept { return quantile(999, 1000); }
	/// Records per log2 bucket.
	[[nodiscard]] std::array<std::uint64_t, buckets> log2_buckets() const noexcept;
	/// The lowest and highest value of bucket k.
	[[nodiscard]] static std::uint32_t bucket_low(std::size_t k) noexcept;
	[[nodiscard]] static std::uint32_t bucket_high(std::size_t k) noexcept;
	[[nodiscard]] static std::size_t bucket_of(std::uint16_t value) noexcept;
	/// value -> records, ascending.
	[[nodiscard]] const std::map<std::uint16_t, std::uint64_t>& values() const noexcept { return values_; }

	friend bool operator==(const LatencyDistribution&, const LatencyDistribution&) = default;

private:
	std::map<std::uint16_t, std::uint64_t> values_{};
	std::uint64_t count_ = 0;
	std::uint64_t sum_ = 0;
};

// ---------------------------------------------------------------- data source

// ---------------------------------------------------------------- the report

/// How records ended and what the recording lost.
struct SpeTotals {
	std::uint64_t bytes = 0;		///< raw data decoded
	std::uint64_t records = 0;
	std::uint64_t complete = 0;		///< ended by End or Timestamp, no unknown packet
	std::uint64_t by_end = 0;		///< RecordEnd::end
	std::uint64_t by_timestamp = 0;		///< RecordEnd::timestamp
	std::uint64_t buffer_end = 0;		///< RecordEnd::buffer_end
	std::uint64_t truncated = 0;		///< RecordEnd::truncated
	std::uint64_t resync = 0;		///< RecordEnd::resync
	std::uint64_t unknown_packets = 0;
	std::uint64_t skipped_bytes = 0;
	std::uint64_t padding_bytes = 0;
	// the recording's per-CPU counters (SpeRecordedCpu)
	std::uint64_t lost_bytes = 0;
	std::uint64_t truncations = 0;
	std::uint64_t collisions = 0;
	std::uint64_t faults = 0;

	[[nodiscard]] std::uint64_t incomplete() const noexcept { return records - complete; }
	friend bool operator==(const SpeTotals&, const SpeTotals&) = default;
};

/// The three latency counters of a record.
enum class SpeLatency : std::uint8_t { total = 0, issue = 1, translation = 2 };
inline constexpr std::array<SpeLatency, 3> spe_latencies{SpeLatency::total, SpeLatency::issue,
							  SpeLatency::translation};
/// "total", "issue", "translation".
[[nodiscard]] std::string_view to_string(SpeLatency l) noexcept;

/// Records of one operation type (Operation Type packet class and payload).
struct SpeOpRow {
	std::uint8_t cls = 0;
	std::uint8_t payload = 0;
	std::string label{};		///< as `amupmu spe dump` describes it: "LD GP-REG"
	std::uint64_t records = 0;
	LatencyDistribution total{};	///< total latency of those records
};

/// The operation mix in groups (a record counts in every group it is in).
struct SpeOpSummary {
	std::uint64_t loads = 0, stores = 0;
	std::uint64_t gp = 0, simd_fp = 0, sve_sme = 0;	///< loads/stores by register class
	std::uint64_t atomics = 0, exclusives = 0, acquire_release = 0;
	std::uint64_t sve_sme_other = 0;		///< SVE-OTHER and SME-OTHER operations
	std::uint64_t branches = 0, conditional = 0, indirect = 0, calls = 0, returns = 0, mispredicted = 0;
	std::uint64_t other = 0;			///< class Other
	std::uint64_t no_op_type = 0;			///< records without an Operation Type packet

	friend bool operator==(const SpeOpSummary&, const SpeOpSummary&) = default;
};

struct SpeDataSourceRow {
	SpeDataSource source{};
	std::uint64_t records = 0;
	LatencyDistribution total{};
};

/// A sampled PC: user PCs by (pid, pc), kernel and hypervisor ones too (they
/// are not symbolised, but their PCs say where).
struct SpeHotPc {
	SampleMode mode = SampleMode::user;	///< from the PC packet's EL
	std::uint8_t el = 0;
	std::uint32_t pid = 0;
	std::uint64_t pc = 0;			///< the 64-bit virtual address
	Resolved where{};
	std::uint64_t records = 0;
	LatencyDistribution total{};
};

struct SpeHotSymbol {
	char level = '.';			///< perf's mark: '.', 'k', 'H', '?'
	std::string symbol{};			///< without its offset; "[unknown]"
	std::string dso{};
	std::uint64_t lowest_pc = 0;		///< orders ties
	std::uint64_t records = 0;
	LatencyDistribution total{};
};

/// A data virtual address or a 64-byte cache line.
struct SpeHotAddress {
	std::uint64_t address = 0;
	std::uint64_t records = 0;
	LatencyDistribution total{};
	std::optional<SpeDataSource> dominant{};	///< the most frequent data source (lowest on a tie)
	std::uint64_t dominant_records = 0;
};

/// One CPU's part.
struct SpeCpuReport {
	std::uint32_t cpu = 0;
	std::uint64_t midr = 0;			///< 0: the recording has no counters of this CPU
	SpeDataSourceEncoding encoding = SpeDataSourceEncoding::unknown;
	SpeTotals totals{};
	LatencyDistribution total{};		///< total latency
};

enum class SpeSort : std::uint8_t {
	count,		///< most records first
	latency,	///< highest mean total latency first
};

struct SpeReportOptions {
	std::size_t top = 10;		///< entries per "hottest" table
	SpeSort sort = SpeSort::count;
	bool per_cpu = false;		///< a whole report per CPU too (SpeReport::per_cpu)
	bool ascii = false;		///< text: '#' bars instead of Unicode blocks
};

struct SpeReport {
	// from the recording
	std::vector<std::string> command{};
	std::string cpus{};
	std::string backend{};
	std::uint32_t pid = 0;
	std::uint64_t timer_freq = 0;
	std::optional<std::uint32_t> only_cpu{};	///< a per-CPU report's CPU

	SpeTotals totals{};
	std::vector<SpeCpuReport> cpu{};		///< ascending CPU
	std::array<LatencyDistribution, 3> latency{};	///< by SpeLatency
	SpeOpSummary op_summary{};
	std::vector<SpeOpRow> ops{};			///< every type seen, most records first
	std::vector<SpeDataSourceRow> data_sources{};	///< most records first
	std::uint64_t records_with_events = 0;
	std::array<std::uint64_t, 64> events{};		///< records with each event bit
	std::uint64_t records_with_data_va = 0;

	// the hottest, options.top of each, in options.sort order; and how many
	// distinct ones there were
	std::vector<SpeHotSymbol> symbols{};
	std::vector<SpeHotPc> pcs{};
	std::vector<SpeHotAddress> addresses{};
	std::vector<SpeHotAddress> lines{};
	std::size_t distinct_symbols = 0, distinct_pcs = 0, distinct_addresses = 0, distinct_lines = 0;

	std::vector<SpeReport> per_cpu{};		///< with options.per_cpu: one per CPU with data
};

/// Decodes every chunk of the recording and aggregates it. Never throws
/// for damaged data (it is counted); std::bad_alloc aside.
[[nodiscard]] SpeReport build_spe_report(const SpeRecording& recording, const SpeReportOptions& options = {});

/// "mock SPE model (test build)", "hardware SPE", or "unknown backend 'x'".
[[nodiscard]] std::string spe_backend_description(std::string_view backend);

/// Text for a terminal, ending in a newline.
[[nodiscard]] std::string format_spe_report_text(const SpeReport& report, const SpeReportOptions& options = {});
/// One JSON document (an object), ending in a newline.
[[nodiscard]] std::string format_spe_report_json(const SpeReport& report);
/// A self-contained SVG document: the three latency histograms (log2
/// buckets) with axes, the percentiles marked, the backend in the title.
[[nodiscard]] std::string format_spe_report_svg(const SpeReport& report);

} // namespace amupmu::report

#endif
