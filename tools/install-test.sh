#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# install-test.sh: `make install` (PREFIX=/usr, DESTDIR a temporary
# directory, KDIR Debian's 6.1 arm64 headers from make deps, cross) and
# then: what landed where; a consumer built and run four ways (CMake
# find_package(amupmu) with the shared and with the static library,
# pkg-config shared and --static), which also checks library_version() of
# the libamupmu.so it runs with and links libnl through Monitor; examples/
# built against it with CMake and with its Makefile (pkg-config); the
# installed amupmu command; the installed module's vermagic; every
# installed header compiled on its own.
# Host only.
set -euo pipefail
# (grep -q reads a command's output from a here-string, not a pipe: under
# pipefail, grep quitting at its first match can leave ldd's later writes
# a SIGPIPE and fail the pipeline; make check once failed so)
TOP=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
KC=${CACHE:-$TOP/build/cache}/kernels/6.1
ABI=$(cat "$KC/abi")
make -s -C "$TOP" install DESTDIR="$T" PREFIX=/usr \
	KDIR="$KC/root/usr/src/linux-headers-$ABI" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log" >&2; exit 1; }
for f in include/amupmu/session.hpp include/amupmu/version.hpp include/linux/amupmu.h bin/amupmu; do
	test -f "$T/usr/$f" || { echo "install-test: $f not installed" >&2; exit 1; }
done
ko=$(find "$T/lib/modules/$ABI" -name amupmu.ko)
[ -n "$ko" ] || { echo "install-test: amupmu.ko not under $T/lib/modules/$ABI" >&2; exit 1; }
grep -q "^$ABI " <<<"$(modinfo -F vermagic "$ko")" || { echo "install-test: $ko: vermagic is not $ABI" >&2; exit 1; }
# the UAPI header compiles on its own, as a C program includes it
printf '#include <linux/amupmu.h>\nint main(void) { return AMUPMU_ABI_MAJOR > 0 ? 0 : 1; }\n' >"$T/uapi.c"
cc -I"$T/usr/include" -o "$T/uapi" "$T/uapi.c" && "$T/uapi"
# every installed header compiles on its own (each is one subsystem a
# user includes alone)
for h in "$T"/usr/include/amupmu/*.hpp; do
	echo "#include <amupmu/${h##*/}>" | c++ -std=c++20 -Wall -Wextra -Werror -fsyntax-only \
		-I"$T/usr/include" -x c++ - ||
		{ echo "install-test: ${h##*/} does not compile on its own" >&2; exit 1; }
done
libdir=$(dirname "$(find "$T/usr" -name 'libamupmu.so' | head -1)")
grep -q '^amupmu ' <<<"$(LD_LIBRARY_PATH=$libdir "$T/usr/bin/amupmu" --version)"

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
	// the library it runs with is the one its headers describe
	const amupmu::LibraryVersion lib = amupmu::library_version();
	// the netlink family through libnl (which the static library's users
	// link too): on the host, without the module, not registered
	try {
		const amupmu::Monitor m;
		std::printf("netlink family amupmu version %u\n", m.family_version());
	} catch (const amupmu::Error& e) {
		std::printf("%s\n", e.what());
	}
	std::printf("%s (library %.*s, libamupmu.so.%u) 0x%x ipc %.1f errata %zu\n",
		    amupmu::version_string.data(), static_cast<int>(lib.version.size()), lib.version.data(),
		    lib.soversion, e.number, m.empty() ? 0.0 : m[0].value, amupmu::errata_for(0x412FD481).size());
	return e.number == 0x08 && !m.empty() && m[0].value == 2.0 && lib.version == amupmu::version_string &&
			       lib.soversion == amupmu::soversion
		       ? 0
		       : 1;
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
if grep -q libamupmu <<<"$(ldd "$T/build/static")"; then echo "static consumer links libamupmu.so" >&2; exit 1; fi

pc=$(dirname "$(find "$T/usr" -name amupmu.pc | head -1)")
# shellcheck disable=SC2046
c++ -std=c++20 -o "$T/pc" "$T/src/main.cpp" $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs amupmu)
LD_LIBRARY_PATH=$(PKG_CONFIG_PATH=$pc pkg-config --variable=libdir amupmu) "$T/pc"
# the static library with what pkg-config --static adds (Requires.private:
# libnl-genl-3.0, libnl-3.0)
libs=$(PKG_CONFIG_PATH=$pc pkg-config --static --libs amupmu)
grep -q -- '-lnl-genl-3' <<<"$libs" || { echo "install-test: pkg-config --static --libs amupmu: no libnl ($libs)" >&2; exit 1; }
# shellcheck disable=SC2046,SC2086
c++ -std=c++20 -o "$T/pcs" "$T/src/main.cpp" $(PKG_CONFIG_PATH=$pc pkg-config --cflags amupmu) ${libs/-lamupmu/-l:libamupmu.a}
"$T/pcs"
if grep -q libamupmu <<<"$(ldd "$T/pcs")"; then echo "pkg-config --static consumer links libamupmu.so" >&2; exit 1; fi

# examples/ as a user builds them against the installed library, with
# warnings as errors: CMake on its own (find_package) and the Makefile
# (pkg-config); each runs against the installed libamupmu.so and, without
# the driver here, fails as it should: status 1, its name and the
# library's message with the errno's name
cmake -S "$TOP/examples" -B "$T/examples-cmake" -DCMAKE_PREFIX_PATH="$T/usr" -DCMAKE_CXX_FLAGS="-Werror" >/dev/null
cmake --build "$T/examples-cmake" >/dev/null
mkdir -p "$T/examples-make"
PKG_CONFIG_PATH=$pc make -s -C "$TOP/examples" O="$T/examples-make" CXXFLAGS="-O2 -Wall -Wextra -Werror"
for dir in examples-cmake examples-make; do
	for ex in count_region hot_pcs amu_rates exc_undef netlink_events; do
		out=$(LD_LIBRARY_PATH=$libdir "$T/$dir/amupmu-example-$ex" 2>&1) && rc=0 || rc=$?
		if [ "$rc" != 1 ] || ! grep -q "^$ex: .* ([A-Z]*)$" <<<"$out"; then
			echo "install-test: $dir/amupmu-example-$ex without the driver: status $rc, '$out'" >&2
			exit 1
		fi
	done
done
grep -q "=> $libdir/libamupmu.so" <<<"$(LD_LIBRARY_PATH=$libdir ldd "$T/examples-make/amupmu-example-count_region")" ||
	{ echo "install-test: the Makefile's examples do not link the installed libamupmu.so" >&2; exit 1; }
echo "install-test: find_package(amupmu) shared + static, pkg-config shared + static, examples/ (CMake, Makefile): ok"
