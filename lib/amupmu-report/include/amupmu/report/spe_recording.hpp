// SPDX-License-Identifier: LGPL-2.1-or-later
//
// An SPE recording (`amupmu spe record -o FILE`): the session's
// configuration, each CPU's buffer counters, the mappings of the recorded
// processes and the raw profiling data per CPU, as the buffers held it
// (records never split: each chunk is whole records and padding).
//
// File format "amupmu-spe-record 1": text lines as `amupmu record`'s
// (arguments and paths %XX-escaped), then each CPU's data as a line
// "data CPU BYTES" followed by exactly BYTES raw bytes and a newline; the
// file ends with a line "end". A CPU may have several data chunks (one per
// drain of its buffer), in the order they were read.
#ifndef AMUPMU_REPORT_SPE_RECORDING_HPP
#define AMUPMU_REPORT_SPE_RECORDING_HPP

#include <amupmu/elf.hpp>
#include <amupmu/spe_session.hpp>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu::report {

/// One CPU's counters at the end of the recording (AMUPMU_SPE_READ).
struct SpeRecordedCpu {
	std::uint32_t cpu = 0;
	std::uint32_t state = 0;	///< AMUPMU_SPE_* state bits
	std::uint64_t bytes = 0;
	std::uint64_t records = 0;
	std::uint64_t lost_bytes = 0;
	std::uint64_t truncations = 0;
	std::uint64_t collisions = 0;
	std::uint64_t faults = 0;
	std::uint64_t last_pmbsr = 0;
	std::uint64_t events = 0;
	std::uint64_t midr = 0;		///< MIDR_EL1 (INFO): the Data Source packet's meaning depends on it

	friend bool operator==(const SpeRecordedCpu&, const SpeRecordedCpu&) = default;
};

/// One drain of one CPU's buffer: whole records and padding.
struct SpeChunk {
	std::uint32_t cpu = 0;
	std::vector<std::byte> data{};

	friend bool operator==(const SpeChunk&, const SpeChunk&) = default;
};

struct SpeRecording {
	std::vector<std::string> command{};
	std::string cpus{};		///< the CPU list as given ("0-3")
	std::string backend{};		///< "hardware" or "mock" (INFO's AMUPMU_FEAT_MOCK)
	std::uint64_t timer_freq = 0;	///< Hz of the TIMESTAMP packets' count
	std::uint32_t pid = 0;		///< the command's pid (0: none, system-wide)
	SpeRecordedConfig config{};
	std::vector<SpeRecordedCpu> cpu_stats{};
	std::vector<Mapping> maps{};
	std::vector<SpeChunk> chunks{};

	friend bool operator==(const SpeRecording&, const SpeRecording&) = default;
};

/// Writes the recording in the format above.
void write_spe_recording(std::ostream& out, const SpeRecording& r);
/// Reads it back. Throws InvalidArgument naming the line (or the data
/// chunk) when the file is malformed or truncated.
[[nodiscard]] SpeRecording read_spe_recording(std::istream& in);

/// What `amupmu spe record` says of a recording written to output: the
/// backend ("mock model (test build)" for the mock's), a table of each
/// CPU's counters and state (with the bytes read, drained[i] for
/// cpu_stats[i], where they differ from the driver's count) and the
/// totals.
[[nodiscard]] std::string format_spe_record_summary(const SpeRecording& r, std::span<const std::uint64_t> drained,
						    std::string_view output);

/// Every packet of the recording, as `amupmu spe dump` prints it: a header
/// naming the file (name), the configuration and each CPU's counters; per
/// chunk "# cpu N, chunk K, B bytes" and one packet a line (offset, bytes,
/// meaning), a blank line after each record, a run of PAD bytes as one
/// line; the counts last.
[[nodiscard]] std::string format_spe_dump(const SpeRecording& r, std::string_view name);

} // namespace amupmu::report

#endif
