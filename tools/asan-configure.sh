#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# asan-configure.sh DIR: configure a host build of lib/ and tools/ with
# AddressSanitizer and UndefinedBehaviorSanitizer (every UB report fatal)
# and compile_commands.json (tools/static-check.sh uses it).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S "$TOP" -B "${1:?usage: asan-configure.sh DIR}" -DCMAKE_BUILD_TYPE=Debug -DAMUPMU_WERROR=ON \
	-DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
	-DCMAKE_C_FLAGS="$SAN" -DCMAKE_CXX_FLAGS="$SAN" \
	-DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
