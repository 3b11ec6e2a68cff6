#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# install-test.sh [BUILD_DIR]: install libamupmu from BUILD_DIR (default
# build/host) into a temporary prefix, then build and run a consumer three
# ways: CMake find_package(amupmu) with the shared and with the static
# library, and pkg-config. Host only.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$TOP/build/host}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cmake --install "$B" --prefix "$T/usr" >/dev/null
test -f "$T/usr/include/amupmu/session.hpp"
test -f "$T/usr/include/amupmu/version.hpp"

mkdir -p "$T/src"
cat >"$T/src/main.cpp" <<'CPP'
#include <amupmu/amupmu.hpp>
#include <cstdio>
int main()
{
	// catalogue, metrics and errata need no device
	const auto e = amupmu::parse_event("inst_retired:u", 0x412FD481);
	const amupmu::EventCount c[] = {{0x08, 0, 200}, {0x11, 0, 100}};
	const auto m = amupmu::derive_metrics(c);
	std::printf("%s 0x%x ipc %.1f errata %zu\n", amupmu::version_string.data(), e.number,
		    m.empty() ? 0.0 : m[0].value, amupmu::errata_for(0x412FD481).size());
	return e.number == 0x08 && !m.empty() && m[0].value == 2.0 ? 0 : 1;
}
CPP
cat >"$T/src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(consumer CXX)
find_package(amupmu 0.1 REQUIRED)
add_executable(shared main.cpp)
target_link_libraries(shared PRIVATE amupmu::amupmu)
add_executable(static main.cpp)
target_link_libraries(static PRIVATE amupmu::amupmu_static)
CMAKE
cmake -S "$T/src" -B "$T/build" -DCMAKE_PREFIX_PATH="$T/usr" >/dev/null
cmake --build "$T/build" >/dev/null
LD_LIBRARY_PATH=$(dirname "$(find "$T/usr" -name 'libamupmu.so' | head -1)") "$T/build/shared"
"$T/build/static"
if ldd "$T/build/static" | grep -q libamupmu; then echo "static consumer links libamupmu.so" >&2; exit 1; fi

pc=$(dirname "$(find "$T/usr" -name amupmu.pc | head -1)")
# shellcheck disable=SC2046
c++ -std=c++20 -o "$T/pc" "$T/src/main.cpp" $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs amupmu)
LD_LIBRARY_PATH=$(PKG_CONFIG_PATH=$pc pkg-config --variable=libdir amupmu) "$T/pc"
echo "install-test: find_package(amupmu) shared + static, pkg-config: ok"
