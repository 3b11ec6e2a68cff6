// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Internal to the library's readers (SampleReader, SpeBuffer), in a public
// header only because they hold one: the consumer's side of a ring the
// driver writes and a reader maps, perf's protocol -- the writer
// publishes data_head with a release store after the bytes, the reader
// loads it with acquire, reads, then publishes data_tail with a release
// store so that the writer may reuse what lies before it. Head and tail
// are free-running byte counts; the data area is a power of two.
#ifndef AMUPMU_RING_CURSOR_HPP
#define AMUPMU_RING_CURSOR_HPP

#include <cstdint>
#include <string>

namespace amupmu::detail {

class RingCursor {
public:
	RingCursor() = default;
	/// head and tail: the header's data_head and data_tail (__u64) in the
	/// mapping, which outlives the cursor's use; size: the data area's
	/// bytes, a power of two.
	RingCursor(unsigned long long* head, unsigned long long* tail, std::uint64_t size) noexcept
		: head_{head}, tail_{tail}, size_{size}
	{
	}

	/// data_head, loaded with acquire (the bytes before it are written).
	[[nodiscard]] std::uint64_t head() const noexcept;
	/// data_tail (only this reader stores it).
	[[nodiscard]] std::uint64_t tail() const noexcept;
	/// Publishes tail with release: the bytes before it are read.
	void release(std::uint64_t tail) noexcept;
	/// Bytes between tail and head.
	[[nodiscard]] std::uint64_t available() const noexcept { return head() - tail(); }
	/// The data area's size.
	[[nodiscard]] std::uint64_t size() const noexcept { return size_; }
	/// head - tail exceeds the data area: a corrupt header, or a writer
	/// that overran the reader.
	[[nodiscard]] bool overrun(std::uint64_t head, std::uint64_t tail) const noexcept
	{
		return head - tail > size_;
	}
	/// Throws Error (EBADMSG): "WHAT: head H tail T: more than its N bytes
	/// unread".
	[[noreturn]] void throw_overrun(const std::string& what, std::uint64_t head, std::uint64_t tail) const;
	/// Stores the tail at the head it loads now; returns the bytes
	/// dropped (at most size(): a head behind the tail, or more than
	/// size() ahead of it, counts as one data area), which add to
	/// dropped_bytes().
	std::uint64_t resync() noexcept;
	/// Bytes resync() dropped in this cursor's life.
	[[nodiscard]] std::uint64_t dropped_bytes() const noexcept { return dropped_; }

private:
	unsigned long long* head_ = nullptr;
	unsigned long long* tail_ = nullptr;
	std::uint64_t size_ = 0;
	std::uint64_t dropped_ = 0;
};

} // namespace amupmu::detail

#endif
