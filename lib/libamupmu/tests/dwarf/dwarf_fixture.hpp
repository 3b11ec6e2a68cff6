// SPDX-License-Identifier: GPL-2.0
//
// The symbolizer's DWARF fixture (tests/CMakeLists.txt, dwarf/embed.cmake),
// compiled into the host tests:
//   fixture_main.c, fixture_util.c  the sources
//   libfixture.so     fixture_*.c built with -g -O1 and a build-id
//   libfixture-gz.so  the same with -gz=zlib (SHF_COMPRESSED debug sections)
//   fixture.debug     objcopy --only-keep-debug of libfixture.so
//   fixture-z.debug   the same with --compress-debug-sections=zlib
//   libfixture-link.so  libfixture.so --strip-all --add-gnu-debuglink=fixture.debug
//   libfixture-bare.so  libfixture.so --strip-all (its build-id only)
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace amupmu::test {

/// The files above by name.
const std::map<std::string, std::string_view>& dwarf_fixture_files();

} // namespace amupmu::test
