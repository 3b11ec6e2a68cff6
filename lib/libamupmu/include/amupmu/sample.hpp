// SPDX-License-Identifier: LGPL-2.1-or-later
//
// amupmu::SampleReader: the consumer side of a session's sample ring (the
// mmap of struct amupmu_ring_header followed by the data area).
#ifndef AMUPMU_SAMPLE_HPP
#define AMUPMU_SAMPLE_HPP

#include <amupmu/info.hpp>
#include <amupmu/mmap_region.hpp>
#include <amupmu/ring_cursor.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace amupmu {

/// What a sample interrupted, in perf's terms (enum amupmu_sample_mode). A
/// newer driver may report a value not listed here.
enum class SampleMode : std::uint8_t {
	user = 0,	///< user space (EL0)
	kernel = 1,	///< the kernel, at EL1 or, on a VHE host, at EL2
	hv = 2,		///< a hypervisor below an EL1 kernel
};

/// "user", "kernel", "hv" (perf's exclude_user/kernel/hv words), or
/// "unknown".
[[nodiscard]] std::string_view to_string(SampleMode mode) noexcept;
/// The inverse of to_string(); nullopt for anything else.
[[nodiscard]] std::optional<SampleMode> parse_sample_mode(std::string_view name) noexcept;
/// perf report's level mark: '.' user, 'k' kernel, 'H' hypervisor, '?'.
[[nodiscard]] char perf_level(SampleMode mode) noexcept;

/// One record (struct amupmu_sample); values point into the ring or into
/// the reader's scratch buffer: valid only inside the consume() callback.
struct Sample {
	std::uint32_t size = 0;
	std::uint16_t type = 0;		///< 1: PMU overflow
	SampleMode mode = SampleMode::user;
	std::uint8_t event = 0;		///< index in the group
	std::uint32_t cpu = 0;
	std::uint32_t pid = 0;
	std::uint32_t tid = 0;
	std::uint64_t time = 0;		///< generic-timer count (SampleReader::clock()); see sample_time_ns()
	std::uint64_t pc = 0;
	std::span<const std::uint64_t> values;
};

inline constexpr std::uint16_t sample_pmu_overflow = 1;
/// sizeof(struct amupmu_sample) without values.
inline constexpr std::size_t sample_header_size = 40;
/// Largest record: the header and 32 values.
inline constexpr std::size_t sample_max_size = sample_header_size + std::size_t{32} * 8;
/// sizeof(struct amupmu_ring_header) of ABI 2 (ring version 1).
inline constexpr std::size_t ring_header_size = 96;
/// header_size from which the ring header carries the time conversion.
inline constexpr std::size_t ring_header_time_size = 96;

/// The conversion of a sample's time to CLOCK_MONOTONIC_RAW nanoseconds
/// that the ring header publishes (clock, time_shift, time_mult, time_zero,
/// time_zero_ns of struct amupmu_ring_header), as perf's mmap page does.
struct TimeConversion {
	Clock clock = Clock::unknown;
	std::uint32_t time_shift = 0;
	std::uint64_t time_mult = 0;
	std::uint64_t time_zero = 0;	///< a counter value ...
	std::uint64_t time_zero_ns = 0;	///< ... and CLOCK_MONOTONIC_RAW ns at the same instant

	/// The driver published one (a ring header without it has mult 0).
	[[nodiscard]] constexpr bool valid() const noexcept { return time_mult != 0 && time_shift < 64; }
	friend constexpr bool operator==(const TimeConversion&, const TimeConversion&) = default;
};

/// CLOCK_MONOTONIC_RAW ns of the counter value time, by the header's formula
///   d  = time - time_zero                       (signed: may be negative)
///   ns = time_zero_ns + (d >> time_shift) * time_mult
///        + (((d & ((1 << time_shift) - 1)) * time_mult) >> time_shift)
/// i.e. time_zero_ns + floor(d * time_mult / 2^time_shift) without the
/// overflow of d * time_mult. Arithmetic is modulo 2^64, as in C with u64.
/// 0 when !c.valid().
[[nodiscard]] constexpr std::uint64_t sample_time_ns(std::uint64_t time, const TimeConversion& c) noexcept
{
	if (!c.valid())
		return 0;
	const std::uint64_t d = time - c.time_zero;	// the signed delta, two's complement
	const unsigned shift = c.time_shift;
	// arithmetic shift (C++20): floor(d / 2^shift), also for a negative d
	const auto quot = static_cast<std::uint64_t>(static_cast<std::int64_t>(d) >> shift);
	const std::uint64_t rem = d & ((std::uint64_t{1} << shift) - 1);	// in [0, 2^shift)
	return c.time_zero_ns + quot * c.time_mult + ((rem * c.time_mult) >> shift);
}

/// Move-only. Owns the mapping when made by Session::sample_reader() or
/// map(); view() wraps memory the caller owns (tests, other producers).
///
/// Thread safety: one reader per ring, used by one thread at a time (it
/// stores the ring's tail and reassembles wrapped records in its own
/// buffer); distinct readers may be used concurrently. The const members
/// only read the header and may run while another thread consumes.
class [[nodiscard]] SampleReader {
public:
	/// mmap()s fd's ring of ring_pages data pages. Throws Error("mmap").
	[[nodiscard]] static SampleReader map(int fd, std::uint32_t ring_pages);
	/// A reader of a ring laid out at base (header, then data at
	/// data_offset) that it does not own. Throws InvalidArgument when the
	/// header does not describe a ring inside len bytes, or when its data
	/// area is smaller than the largest record (sample_max_size): the
	/// driver never makes one, and a record could not wrap inside it.
	[[nodiscard]] static SampleReader view(void* base, std::size_t len);

	SampleReader(const SampleReader&) = delete;
	SampleReader& operator=(const SampleReader&) = delete;
	SampleReader(SampleReader&& other) noexcept = default;
	SampleReader& operator=(SampleReader&& other) noexcept = default;
	~SampleReader() = default;

	/// Calls f(const Sample&) for every record between data_tail and
	/// data_head (head read with acquire), then publishes the new tail
	/// (release). Records that wrap around the end of the data area are
	/// reassembled in a fixed scratch buffer: no allocation. Returns the
	/// number of records.
	///
	/// A record f was called with is consumed, whatever f does: the tail
	/// is never stored before it again. So
	///  - head - tail above data_size (a corrupt header, or a head behind
	///    the tail): Error (EBADMSG) before any record; the tail and the
	///    ring are left as they are;
	///  - a malformed record: Error (EBADMSG) naming its offset, after the
	///    records before it were delivered; the tail is stored before it,
	///    where the next consume() stops again: resync() drops it and the
	///    rest of the ring;
	///  - f throws: the tail is stored past that record (it was delivered,
	///    like the ones before it) and the exception propagates; the next
	///    consume() starts at the record after it.
	template <typename F>
	std::size_t consume(F&& f)
	{
		const std::uint64_t head = ring_.head();
		std::uint64_t tail = ring_.tail();
		if (ring_.overrun(head, tail))
			overrun(head, tail);
		std::size_t n = 0;
		try {
			while (tail != head) {
				Sample s;
				tail += decode(tail, head, s);
				++n;
				f(static_cast<const Sample&>(s));
			}
		} catch (...) {
			ring_.release(tail);
			throw;
		}
		ring_.release(tail);
		return n;
	}

	/// Drops what is unread: stores the tail at the head it reads now and
	/// returns the bytes dropped (at most data_size: a head behind the
	/// tail or more than data_size ahead of it counts as one data area).
	/// The way on after consume() threw EBADMSG. The bytes add to
	/// dropped_bytes(), not to lost() (which counts samples the driver
	/// could not write).
	std::uint64_t resync() noexcept { return ring_.resync(); }
	/// Bytes resync() dropped in this reader's life.
	[[nodiscard]] std::uint64_t dropped_bytes() const noexcept { return ring_.dropped_bytes(); }

	/// Bytes between tail and head.
	[[nodiscard]] std::uint64_t available() const noexcept { return ring_.available(); }
	/// Records ever written (the header's counter).
	[[nodiscard]] std::uint64_t samples() const noexcept;
	/// Samples dropped because the ring was full (the header's counter).
	[[nodiscard]] std::uint64_t lost() const noexcept;
	/// CNTFRQ_EL0 (Hz of Sample::time).
	[[nodiscard]] std::uint64_t timer_freq() const noexcept;
	/// The counter Sample::time reads (Clock::unknown before ABI 2).
	[[nodiscard]] Clock clock() const noexcept;
	/// The header's conversion of Sample::time to CLOCK_MONOTONIC_RAW ns
	/// (not valid() when the driver's header lacks it).
	[[nodiscard]] TimeConversion time_conversion() const noexcept;
	/// The ring's data area, in bytes.
	[[nodiscard]] std::uint64_t data_size() const noexcept { return ring_.size(); }

	/// poll() on fd for a record, up to timeout_ms (-1: forever). True when
	/// a record is there; false on timeout. Throws Error on poll failure.
	static bool wait(int fd, int timeout_ms);

private:
	explicit SampleReader(MmapRegion region);
	/// Throws Error (EBADMSG): more than data_size unread.
	[[noreturn]] void overrun(std::uint64_t head, std::uint64_t tail) const;
	/// Decodes the record at offset tail into s; returns its size. Throws
	/// Error (EBADMSG) when it is malformed; stores nothing.
	std::size_t decode(std::uint64_t tail, std::uint64_t head, Sample& s);

	MmapRegion region_;
	unsigned char* data_ = nullptr;
	detail::RingCursor ring_{};
	alignas(8) std::array<unsigned char, sample_max_size> scratch_{};
};

} // namespace amupmu

#endif
