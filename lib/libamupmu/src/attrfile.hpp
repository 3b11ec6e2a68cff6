// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Internal: sysfs and debugfs attribute files, written as "echo" writes
// them (spe_device.cpp's claim and release, spe_knobs.cpp's knobs).
#ifndef AMUPMU_SRC_ATTRFILE_HPP
#define AMUPMU_SRC_ATTRFILE_HPP

#include <filesystem>
#include <string>
#include <string_view>

namespace amupmu::detail {

/// Writes value in one write(2) with O_TRUNC (which sysfs and the knobs
/// ignore: a fake tree's file then holds only value), never creating the
/// file. Returns 0 or the errno (EIO for a short write).
[[nodiscard, gnu::visibility("hidden")]] int write_attr(const std::filesystem::path& path, std::string_view value);

/// Reads the whole file into out; returns 0 or the errno.
[[nodiscard, gnu::visibility("hidden")]] int read_attr(const std::filesystem::path& path, std::string& out);

} // namespace amupmu::detail

#endif
