// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/error.hpp>
#include <amupmu/mmap_region.hpp>

#include <cerrno>
#include <utility>

#include <sys/mman.h>

namespace amupmu {

MmapRegion::MmapRegion(void* base, std::size_t len, bool owned) noexcept
	: base_{static_cast<unsigned char*>(base)}, len_{len}, owned_{owned}
{
}

MmapRegion MmapRegion::map(int fd, std::size_t len, std::uint64_t offset, const std::string& what)
{
	void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
	if (p == MAP_FAILED)
		throw_error(what, errno);
	return MmapRegion{p, len, true};
}

MmapRegion MmapRegion::view(void* base, std::size_t len) noexcept
{
	return MmapRegion{base, len, false};
}

MmapRegion::MmapRegion(MmapRegion&& other) noexcept
	: base_{std::exchange(other.base_, nullptr)}, len_{std::exchange(other.len_, 0)},
	  owned_{std::exchange(other.owned_, false)}
{
}

MmapRegion& MmapRegion::operator=(MmapRegion&& other) noexcept
{
	if (this != &other) {
		if (owned_ && base_)
			::munmap(base_, len_);
		base_ = std::exchange(other.base_, nullptr);
		len_ = std::exchange(other.len_, 0);
		owned_ = std::exchange(other.owned_, false);
	}
	return *this;
}

MmapRegion::~MmapRegion()
{
	if (owned_ && base_)
		::munmap(base_, len_);
}

} // namespace amupmu
