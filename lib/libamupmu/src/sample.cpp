// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/error.hpp>
#include <amupmu/sample.hpp>

#include "poll.hpp"

#include <linux/amupmu.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

#include <poll.h>
#include <unistd.h>

namespace amupmu {

static_assert(offsetof(amupmu_ring_header, data_head) == 24);
static_assert(offsetof(amupmu_ring_header, data_tail) == 32);
static_assert(offsetof(amupmu_ring_header, time_zero_ns) + 8 == ring_header_time_size);
static_assert(static_cast<std::uint8_t>(SampleMode::user) == AMUPMU_MODE_USER);
static_assert(static_cast<std::uint8_t>(SampleMode::kernel) == AMUPMU_MODE_KERNEL);
static_assert(static_cast<std::uint8_t>(SampleMode::hv) == AMUPMU_MODE_HV);

namespace {

amupmu_ring_header* header_of(unsigned char* base)
{
	return reinterpret_cast<amupmu_ring_header*>(base);
}

template <typename T>
T load_relaxed(T& field)
{
	return std::atomic_ref<T>{field}.load(std::memory_order_relaxed);
}

} // namespace

std::string_view to_string(SampleMode mode) noexcept
{
	switch (mode) {
	case SampleMode::user: return "user";
	case SampleMode::kernel: return "kernel";
	case SampleMode::hv: return "hv";
	}
	return "unknown";
}

std::optional<SampleMode> parse_sample_mode(std::string_view name) noexcept
{
	for (const SampleMode m : {SampleMode::user, SampleMode::kernel, SampleMode::hv})
		if (name == to_string(m))
			return m;
	return std::nullopt;
}

char perf_level(SampleMode mode) noexcept
{
	switch (mode) {
	case SampleMode::user: return '.';
	case SampleMode::kernel: return 'k';
	case SampleMode::hv: return 'H';
	}
	return '?';
}

SampleReader SampleReader::map(int fd, std::uint32_t ring_pages)
{
	const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
	return SampleReader{MmapRegion::map(fd, (std::size_t{1} + ring_pages) * page, 0, "mmap of the sample ring")};
}

SampleReader SampleReader::view(void* base, std::size_t len)
{
	return SampleReader{MmapRegion::view(base, len)};
}

SampleReader::SampleReader(MmapRegion region) : region_{std::move(region)}
{
	const std::size_t len = region_.size();
	if (len < ring_header_size)
		throw InvalidArgument{"sample ring: mapping smaller than its header", EINVAL};
	amupmu_ring_header* h = header_of(region_.data());
	const std::uint64_t off = load_relaxed(h->data_offset);
	const std::uint64_t size = load_relaxed(h->data_size);
	if (h->version != AMUPMU_RING_VERSION || off < ring_header_size || size == 0 ||
	    (size & (size - 1)) != 0 || off > len || size > len - off || off % 8 != 0)
		throw InvalidArgument{"sample ring: header (version " + std::to_string(h->version) +
				      ", data at " + std::to_string(off) + " size " + std::to_string(size) +
				      ") does not fit the mapping", EINVAL};
	// A record of sample_max_size bytes must fit, or its wrap would copy
	// past the data area.
	if (size < sample_max_size)
		throw InvalidArgument{"sample ring: data size " + std::to_string(size) +
					      " smaller than the largest record (" + std::to_string(sample_max_size) +
					      " bytes)",
				      EINVAL};
	data_ = region_.data() + off;
	ring_ = detail::RingCursor{&h->data_head, &h->data_tail, size};
}

void SampleReader::overrun(std::uint64_t head, std::uint64_t tail) const
{
	ring_.throw_overrun("sample ring", head, tail);
}

std::uint64_t SampleReader::samples() const noexcept
{
	return load_relaxed(header_of(region_.data())->samples);
}

std::uint64_t SampleReader::lost() const noexcept
{
	return load_relaxed(header_of(region_.data())->lost);
}

std::uint64_t SampleReader::timer_freq() const noexcept
{
	return load_relaxed(header_of(region_.data())->timer_freq);
}

Clock SampleReader::clock() const noexcept
{
	amupmu_ring_header* h = header_of(region_.data());
	if (load_relaxed(h->header_size) < ring_header_time_size)
		return Clock::unknown;
	return static_cast<Clock>(load_relaxed(h->clock));
}

TimeConversion SampleReader::time_conversion() const noexcept
{
	amupmu_ring_header* h = header_of(region_.data());
	if (load_relaxed(h->header_size) < ring_header_time_size)
		return {};
	return TimeConversion{
		.clock = static_cast<Clock>(load_relaxed(h->clock)),
		.time_shift = load_relaxed(h->time_shift),
		.time_mult = load_relaxed(h->time_mult),
		.time_zero = load_relaxed(h->time_zero),
		.time_zero_ns = load_relaxed(h->time_zero_ns),
	};
}

std::size_t SampleReader::decode(std::uint64_t tail, std::uint64_t head, Sample& s)
{
	const std::uint64_t mask = ring_.size() - 1;
	const std::size_t off = static_cast<std::size_t>(tail & mask);
	// consume() stores the tail before this record
	const auto bad = [&](const std::string& why) {
		throw Error{"sample ring: record at " + std::to_string(tail) + ": " + why, EBADMSG};
	};
	if (head - tail < sample_header_size || tail % 8 != 0)
		bad("truncated header");
	std::uint32_t size = 0;
	std::memcpy(&size, data_ + off, sizeof(size));	// size is the first field, 8-aligned
	// size <= head - tail <= data_size: the wrap below stays inside the data area
	if (size < sample_header_size || size % 8 != 0 || size > sample_max_size || size > head - tail)
		bad("size " + std::to_string(size));

	const unsigned char* rec = data_ + off;
	if (off + size > ring_.size()) {
		// wraps: reassemble in the scratch buffer
		const std::size_t first = ring_.size() - off;
		std::memcpy(scratch_.data(), data_ + off, first);
		std::memcpy(scratch_.data() + first, data_, size - first);
		rec = scratch_.data();
	}
	amupmu_sample h{};
	std::memcpy(&h, rec, sizeof(h));
	if (sample_header_size + std::size_t{h.nr_values} * 8 > size)
		bad(std::to_string(h.nr_values) + " values in " + std::to_string(size) + " bytes");
	s.size = h.size;
	s.type = h.type;
	s.mode = static_cast<SampleMode>(h.mode);
	s.event = h.event;
	s.cpu = h.cpu;
	s.pid = h.pid;
	s.tid = h.tid;
	s.time = h.time;
	s.pc = h.pc;
	s.values = {reinterpret_cast<const std::uint64_t*>(rec + sample_header_size), h.nr_values};
	return size;
}

bool SampleReader::wait(int fd, int timeout_ms)
{
	return detail::poll_in(fd, timeout_ms, "poll of the sample ring");
}

namespace detail {

bool poll_in(int fd, int timeout_ms, const std::string& what)
{
	pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
	while (true) {
		const int r = ::poll(&p, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			throw_error(what, errno);
		if (r > 0 && (p.revents & (POLLERR | POLLNVAL)))
			throw Error{what, (p.revents & POLLNVAL) ? EBADF : EINVAL};
		return r > 0;
	}
}

} // namespace detail

} // namespace amupmu
