// SPDX-License-Identifier: LGPL-2.1-or-later
//
// amupmu::MmapRegion: the memory a reader of a session's mapped buffer
// reads (SampleReader's sample ring, SpeBuffer's SPE buffers): a shared
// mapping of the session's file that it owns, or memory the caller owns
// (tests, copies).
#ifndef AMUPMU_MMAP_REGION_HPP
#define AMUPMU_MMAP_REGION_HPP

#include <cstddef>
#include <cstdint>
#include <string>

namespace amupmu {

/// Move-only; unmaps what it mapped when destroyed.
class MmapRegion {
public:
	MmapRegion() = default;
	/// mmap()s len bytes of fd at offset, read-write and shared. Throws the
	/// errno's Error named what.
	[[nodiscard]] static MmapRegion map(int fd, std::size_t len, std::uint64_t offset, const std::string& what);
	/// Memory the caller owns; never unmapped here.
	[[nodiscard]] static MmapRegion view(void* base, std::size_t len) noexcept;

	MmapRegion(const MmapRegion&) = delete;
	MmapRegion& operator=(const MmapRegion&) = delete;
	MmapRegion(MmapRegion&& other) noexcept;
	MmapRegion& operator=(MmapRegion&& other) noexcept;
	~MmapRegion();

	[[nodiscard]] unsigned char* data() const noexcept { return base_; }
	[[nodiscard]] std::size_t size() const noexcept { return len_; }

private:
	MmapRegion(void* base, std::size_t len, bool owned) noexcept;

	unsigned char* base_ = nullptr;
	std::size_t len_ = 0;
	bool owned_ = false;
};

} // namespace amupmu

#endif
