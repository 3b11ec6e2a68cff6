// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A recording (`amupmu record`): the sampled event, the mappings of the
// recorded processes and the samples; a line-based text file, and the
// report of the hottest PCs and symbols.
#ifndef AMUPMU_REPORT_RECORD_HPP
#define AMUPMU_REPORT_RECORD_HPP

#include <amupmu/elf.hpp>
#include <amupmu/sample.hpp>

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string_view>
#include <string>
#include <vector>

namespace amupmu::report {

struct RecordedSample {
	std::uint32_t cpu = 0;
	std::uint32_t pid = 0;
	std::uint32_t tid = 0;
	SampleMode mode = SampleMode::user;
	std::uint64_t time = 0;		///< the generic-timer count (Recording::time converts it)
	std::uint64_t pc = 0;
	std::uint8_t event = 0;		///< index of the sampled event: 0 the first, i Recording::more_events[i - 1]

	friend bool operator==(const RecordedSample&, const RecordedSample&) = default;
};

/// A sampled event after the first (Recording's event, number, period,
/// modifiers).
struct RecordedEvent {
	std::string event{};
	std::uint16_t number = 0;
	std::uint64_t period = 0;
	std::string modifiers{};

	friend bool operator==(const RecordedEvent&, const RecordedEvent&) = default;
};

struct Recording {
	std::vector<std::string> command{};
	std::string event{};		///< as given: "inst_retired:u"
	std::uint16_t number = 0;
	std::uint64_t period = 0;
	std::string modifiers{};	///< perf's modifiers of the event, "ukhGH" order ("" none)
	std::string cpus{};
	std::uint64_t timer_freq = 0;
	TimeConversion time{};		///< not valid() when the driver gave none
	std::uint64_t lost = 0;
	std::uint64_t skid = 0;		///< samples the driver dropped as kernel skid
	std::vector<RecordedEvent> more_events{};	///< events 1, 2, ... of a group
	std::uint64_t frequency = 0;	///< the -F HZ the period was chosen for (0: -c)
	/// Thread names (perf's comm) by thread id; a process's main thread
	/// has its pid as id, so older recordings' names by pid read the same.
	std::map<std::uint32_t, std::string> comms{};
	std::vector<ElfSymbol> kernel_symbols{};	///< the kernel's, from kallsyms: those samples hit
	std::vector<Mapping> maps{};
	std::vector<RecordedSample> samples{};

	/// Every sampled event, the first one first.
	[[nodiscard]] std::vector<RecordedEvent> events() const;
	/// The name of a thread: its comm, else its process's (the main
	/// thread's), "swapper" for pid 0, else ":TID" (perf's words for a
	/// thread it has no comm of).
	[[nodiscard]] std::string comm(std::uint32_t pid, std::uint32_t tid) const;

	friend bool operator==(const Recording&, const Recording&) = default;
};

[[nodiscard]] RecordedSample to_recorded(const Sample& s) noexcept;

/// File format version 3 (first line "amupmu-record 3"): one "event" line
/// per event, each followed by its "modifiers"; "clock" (the time
/// conversion), "skid", "frequency" (when not 0), "comm TID NAME" (a
/// thread's name; TID = PID for a process's main thread), "ksym ADDRESS
/// SIZE NAME", and samples with the mode as a word ("user", "kernel",
/// "hv") and the event's index last. A recording of one event and
/// none of the version 3 lines is written as version 2, which older tools
/// read.
void write_recording(std::ostream& out, const Recording& r);
/// Reads versions 3, 2 (one event, no event index) and 1 (whose samples
/// carry an exception level: EL0 is user, EL1 and EL2 kernel). Throws InvalidArgument naming the line when
/// malformed: a line with other than its number of fields, a number that
/// is not one (decimal, or 0x<hex> where the file writes hex) or does not
/// fit its field (an event code above 0xffff), a bad %-escape. Numbers are
/// written and read without the locale (std::to_chars, std::from_chars).
[[nodiscard]] Recording read_recording(std::istream& in);

/// What `amupmu record` says when it has written r to output: the samples
/// of its events, the first one's period, the samples per mode, the lost
/// ones and those dropped as kernel skid, the mappings.
[[nodiscard]] std::string format_record_summary(const Recording& r, std::string_view output);

struct ReportOptions {
	std::size_t top = 10;
	/// The symbol table's keys, in order, of "sym", "dso", "comm", "pid",
	/// "srcline" (perf report's --sort); empty: comm, sym, dso.
	std::vector<std::string> sort{};
	/// Lines below this share of the samples (percent) left out.
	double percent_limit = 0;
};

/// Checks a --sort list ("sym,dso,comm,pid,srcline" words, each once); throws
/// InvalidArgument naming the bad key.
[[nodiscard]] std::vector<std::string> parse_sort_keys(std::string_view list);

/// The report: samples per mode, the time span (CLOCK_MONOTONIC_RAW, when
/// the recording has the conversion), samples per symbol and per PC with
/// perf's level marks ([.] user, [k] kernel, [H] hypervisor), hottest
/// first; the PCs with their srcline() when any has one (Symbolizer).
[[nodiscard]] std::string format_report(const Recording& r, const ReportOptions& options = {});

} // namespace amupmu::report

#endif
