// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A recording (`amupmu record`): the sampled event, the mappings of the
// recorded processes and the samples; a line-based text file, and the
// report of the hottest PCs and symbols.
#ifndef AMUPMU_RECORD_HPP
#define AMUPMU_RECORD_HPP

#include <amupmu/elf.hpp>
#include <amupmu/sample.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace amupmu {

struct RecordedSample {
	std::uint32_t cpu = 0;
	std::uint32_t pid = 0;
	std::uint32_t tid = 0;
	std::uint8_t el = 0;
	std::uint64_t time = 0;
	std::uint64_t pc = 0;

	friend bool operator==(const RecordedSample&, const RecordedSample&) = default;
};

struct Recording {
	std::vector<std::string> command{};
	std::string event{};		///< "inst_retired"
	std::uint16_t number = 0;
	std::uint64_t period = 0;
	std::string cpus{};
	std::uint64_t timer_freq = 0;
	std::uint64_t lost = 0;
	std::vector<Mapping> maps{};
	std::vector<RecordedSample> samples{};

	friend bool operator==(const Recording&, const Recording&) = default;
};

[[nodiscard]] RecordedSample to_recorded(const Sample& s) noexcept;

/// File format version 1 (first line "amupmu-record 1").
void write_recording(std::ostream& out, const Recording& r);
/// Throws InvalidArgument naming the line when malformed.
[[nodiscard]] Recording read_recording(std::istream& in);

struct ReportOptions {
	std::size_t top = 10;
};

/// The report: samples per PC and per symbol, hottest first.
[[nodiscard]] std::string format_report(const Recording& r, const ReportOptions& options = {});

} // namespace amupmu

#endif
