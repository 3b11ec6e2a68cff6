// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/error.hpp>
#include <amupmu/ring_cursor.hpp>

#include <linux/types.h>

#include <atomic>
#include <cerrno>
#include <type_traits>

namespace amupmu::detail {

static_assert(std::is_same_v<__u64, unsigned long long>, "the headers' data_head/data_tail are __u64");

std::uint64_t RingCursor::head() const noexcept
{
	// pairs with the driver's release store after writing the bytes
	return std::atomic_ref<unsigned long long>{*head_}.load(std::memory_order_acquire);
}

std::uint64_t RingCursor::tail() const noexcept
{
	return std::atomic_ref<unsigned long long>{*tail_}.load(std::memory_order_relaxed);
}

void RingCursor::release(std::uint64_t tail) noexcept
{
	// the bytes before tail are read: the driver may write over them
	std::atomic_ref<unsigned long long>{*tail_}.store(tail, std::memory_order_release);
}

void RingCursor::throw_overrun(const std::string& what, std::uint64_t head, std::uint64_t tail) const
{
	throw Error{what + ": head " + std::to_string(head) + " tail " + std::to_string(tail) + ": more than its " +
			    std::to_string(size_) + " bytes unread",
		    EBADMSG};
}

std::uint64_t RingCursor::resync() noexcept
{
	const std::uint64_t h = head();
	const std::uint64_t unread = h - tail();
	const std::uint64_t dropped = unread > size_ ? size_ : unread;
	release(h);
	dropped_ += dropped;
	return dropped;
}

} // namespace amupmu::detail
