#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deps: install every Debian package amupmu needs, fetch Debian's
# arm64 kernels (bookworm 6.1, trixie 6.12) into $CACHE and build the debug
# kernel (tools/debug-kernel.sh, 6.1-debug; cached outside). Idempotent: when
# everything is in place it downloads nothing (set REFRESH=1 to re-resolve
# the newest kernel ABI from the archive).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CACHE:-$TOP/build/cache}
REFRESH=${REFRESH:-0}
export DEBIAN_FRONTEND=noninteractive

log() { printf 'deps: %s\n' "$*"; }
die() { printf 'deps: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (it installs Debian packages)"

HOST_PKGS=(
	make cmake g++ gcc pkg-config cpio gzip xz-utils python3 bc kmod flex bison libssl-dev libelf-dev
	gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
	qemu-system-arm qemu-user-static binfmt-support arch-test e2fsprogs
	device-tree-compiler dt-schema sparse mmdebstrap
	catch2 libnl-3-dev libnl-genl-3-dev
	libnl-3-dev:arm64 libnl-genl-3-dev:arm64
	libpfm4-dev libpfm4-dev:arm64
	libnl-utils libnl-cli-3-200:arm64
	linux-source-6.1 clang-tidy cppcheck rsync
	locales abigail-tools libdw-dev
	debhelper dh-dkms lintian python3-docutils man-db crossbuild-essential-arm64
	pkgconf:arm64 libdw-dev:arm64 libstdc++-12-dev:arm64
	prometheus-cpp-dev libprometheus-cpp-core1.0:arm64 libprometheus-cpp-pull1.0:arm64 libcivetweb1:arm64 zlib1g-dev:arm64
)

# ---------------------------------------------------------------- host
# shellcheck source=tools/apt-mirror.sh
. "$TOP/tools/apt-mirror.sh"
mirror() { # the Debian archive the host already uses
	apt_mirror || die "cannot find a Debian archive URI in /etc/apt/sources.list*"
}

missing_host_pkgs() {
	local p q arch
	arch=$(dpkg --print-architecture)
	for p in "${HOST_PKGS[@]}"; do
		q=$p
		# multi-arch packages: ask for the host's instance unless one is named
		case $p in *:*) ;; *) dpkg-query -W "$p:$arch" >/dev/null 2>&1 && q=$p:$arch ;; esac
		dpkg-query -W -f='${db:Status-Status}\n' "$q" 2>/dev/null | grep -qx installed || echo "$p"
	done
}

install_host() {
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		log "adding the arm64 architecture"
		dpkg --add-architecture arm64
		apt-get update -q || die "apt-get update failed"
	fi
	local miss
	miss=$(missing_host_pkgs)
	if [ -z "$miss" ]; then
		log "host packages: all ${#HOST_PKGS[@]} installed"
		return
	fi
	log "installing: $(echo $miss | tr '\n' ' ')"
	apt-get update -q >/dev/null || die "apt-get update failed"
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $miss >"$CACHE/apt-install.log" 2>&1 \
		|| { tail -20 "$CACHE/apt-install.log" >&2; die "cannot install: $miss (is the Debian archive reachable?)"; }
	miss=$(missing_host_pkgs)
	[ -z "$miss" ] || die "still missing after install: $miss"
}

# ---------------------------------------------------------------- trixie apt
TRIXIE_APT=$CACHE/apt-trixie
trixie_apt_opts() {
	echo "-o Dir::State::Lists=$TRIXIE_APT/lists -o Dir::Etc::SourceList=$TRIXIE_APT/sources.list" \
	     "-o Dir::Etc::SourceParts=/nonexistent -o Dir::Cache=$TRIXIE_APT/cache" \
	     "-o APT::Architectures::=arm64 -o APT::Architectures::=amd64" \
	     "-o Dir::State::status=$TRIXIE_APT/status"
}
setup_trixie_apt() {
	mkdir -p "$TRIXIE_APT/lists/partial" "$TRIXIE_APT/cache/archives/partial"
	: >"$TRIXIE_APT/status"
	echo "deb [arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) trixie main" \
		>"$TRIXIE_APT/sources.list"
	chown -R _apt "$TRIXIE_APT/lists" 2>/dev/null || true
	# shellcheck disable=SC2046
	apt-get $(trixie_apt_opts) update -q >/dev/null || die "apt-get update of trixie failed"
}

# ---------------------------------------------------------------- kernels
# resolve <suite>: print the ABI name linux-image-arm64 depends on, e.g. 6.1.0-57-arm64
resolve_abi() {
	local opts=""
	[ "$1" = trixie ] && opts=$(trixie_apt_opts)
	# shellcheck disable=SC2086
	apt-cache $opts depends linux-image-arm64:arm64 2>/dev/null |
		sed -n 's/.*Depends: linux-image-\([0-9][^:]*-arm64\)\(-unsigned\)\?:arm64/\1/p' | head -1
}

pkgver() { # pkgver <suite> <pkg>
	local opts=""
	[ "$1" = trixie ] && opts=$(trixie_apt_opts)
	# shellcheck disable=SC2086
	apt-cache $opts show "$2" 2>/dev/null | sed -n 's/^Version: //p' | head -1
}

# fetch_kernel <tag> <suite>: download image, headers, kbuild into $CACHE/kernels/<tag>
fetch_kernel() {
	local tag=$1 suite=$2 dir abi opts="" pkgs d kb
	dir=$CACHE/kernels/$tag
	if [ "$REFRESH" != 1 ] && [ -s "$dir/abi" ] && [ -f "$dir/.complete" ]; then
		log "kernel $tag: $(cat "$dir/abi") ($(cat "$dir/version")) cached"
		return
	fi
	if [ "$suite" = trixie ]; then
		setup_trixie_apt
		opts=$(trixie_apt_opts)
	elif [ ! -f "$CACHE/.bookworm-updated" ]; then
		apt-get update -q >/dev/null || die "apt-get update failed"
		touch "$CACHE/.bookworm-updated"
	fi
	abi=$(resolve_abi "$suite")
	[ -n "$abi" ] || die "cannot resolve linux-image-arm64:arm64 in $suite"
	if [ -s "$dir/abi" ] && [ "$(cat "$dir/abi")" = "$abi" ] && [ -f "$dir/.complete" ]; then
		log "kernel $tag: $abi cached"
		return
	fi
	kb=linux-kbuild-$(echo "$abi" | cut -d. -f1,2)
	case $abi in 6.1.*) ;; *) kb=linux-kbuild-${abi%-arm64} ;; esac
	apt-cache $opts show "$kb:amd64" >/dev/null 2>&1 || kb=linux-kbuild-$(echo "$abi" | cut -d. -f1,2)
	pkgs=("linux-image-$abi:arm64" "linux-headers-$abi:arm64" "linux-headers-${abi%-arm64}-common:all" "$kb:amd64")
	[ "$suite" = bookworm ] && pkgs+=(busybox-static:arm64)
	rm -rf "$dir"; mkdir -p "$dir/debs" "$dir/root"
	chown _apt "$dir/debs" 2>/dev/null || true
	log "kernel $tag: downloading ${pkgs[*]}"
	# shellcheck disable=SC2086
	(cd "$dir/debs" && apt-get $opts download "${pkgs[@]}") >"$dir/download.log" 2>&1 \
		|| { cat "$dir/download.log" >&2; die "cannot download the $suite kernel packages: ${pkgs[*]}"; }
	for d in "$dir"/debs/*.deb; do dpkg-deb -x "$d" "$dir/root"; done
	# the flavour Makefile includes the -common one by absolute path
	sed -i "s|^include /usr/src/|include $dir/root/usr/src/|" \
		"$dir/root/usr/src/linux-headers-$abi/Makefile"
	test -x "$dir/root/usr/src/linux-headers-$abi/scripts/mod/modpost" \
		|| die "kernel $tag: kbuild tools missing (package $kb)"
	cp "$dir/root/boot/vmlinuz-$abi" "$dir/Image"
	echo "$abi" >"$dir/abi"
	dpkg-deb -f "$(ls "$dir"/debs/linux-image-*.deb)" Version >"$dir/version"
	rm -rf "$dir/debs"
	touch "$dir/.complete"
	log "kernel $tag: $abi ($(cat "$dir/version"))"
}

# ---------------------------------------------------------------- trixie build chroot (gcc-14)
CHROOT_PKGS=gcc-14-aarch64-linux-gnu,make,bc,bison,flex,libelf-dev,kmod,python3,sparse,dwarves
make_chroot() {
	local c=$CACHE/chroot-trixie
	if [ "$(cat "$c/.complete" 2>/dev/null)" = "$CHROOT_PKGS" ]; then
		log "trixie build chroot: cached ($(chroot "$c" aarch64-linux-gnu-gcc-14 -dumpfullversion))"
		return
	fi
	rm -rf "$c"
	log "trixie build chroot: mmdebstrap (about 15 s)"
	mmdebstrap --quiet --variant=apt \
		--include="$CHROOT_PKGS" \
		trixie "$c" "deb $(mirror) trixie main" >"$CACHE/chroot.log" 2>&1 \
		|| { tail -20 "$CACHE/chroot.log" >&2; die "mmdebstrap of trixie failed"; }
	echo "$CHROOT_PKGS" >"$c/.complete"
	log "trixie build chroot: $(chroot "$c" aarch64-linux-gnu-gcc-14 -dumpfullversion)"
}

# ---------------------------------------------------------------- kernel source bits
extract_ksrc() {
	local out=$CACHE/linux-source tar
	if [ -f "$out/.complete" ]; then
		log "linux-source: cached"
		return
	fi
	tar=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null) || die "linux-source-6.1 not installed"
	rm -rf "$out"; mkdir -p "$out"
	log "linux-source: extracting the kselftest harness and checkpatch"
	tar -xJf "$tar" -C "$out" --strip-components=1 \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h \
		linux-source-6.1/tools/testing/selftests/kselftest_module.h \
		linux-source-6.1/tools/testing/selftests/lib.mk \
		linux-source-6.1/tools/testing/selftests/kselftest \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
	touch "$out/.complete"
}

# ---------------------------------------------------------------- genl-ctrl-list
# libnl-utils:arm64 conflicts with the host's libnl-utils (the same
# /usr/bin paths), so the arm64 package is unpacked into the cache, not
# installed: the board runs its genl-ctrl-list (tools/board/run.sh) with
# the arm64 libnl libraries of HOST_PKGS.
fetch_libnl_utils_arm64() {
	local out=$CACHE/libnl-utils-arm64 tmp
	if [ -x "$out/usr/bin/genl-ctrl-list" ]; then
		log "libnl-utils:arm64: cached"
		return
	fi
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get download -q libnl-utils:arm64 >/dev/null 2>&1) ||
		{ rm -rf "$tmp"; die "cannot download libnl-utils:arm64"; }
	rm -rf "$out"
	dpkg-deb -x "$tmp"/libnl-utils_*_arm64.deb "$out"
	rm -rf "$tmp"
	log "libnl-utils:arm64: unpacked into $out"
}

# ---------------------------------------------------------------- prometheus-cpp (arm64), prometheus
# amupmu exporter links prometheus-cpp's core, civetweb's C++ server and
# zlib (tools/amupmu/exposition.cpp). Debian ships prometheus-cpp as
# shared libraries only, and prometheus-cpp-dev:arm64 cannot be installed
# beside the host's prometheus-cpp-dev (both depend on civetweb, which is
# not Multi-Arch): the arm64 -dev package, the libraries it names and the
# -dev packages its CMake configuration looks for (civetweb, zlib, curl)
# are unpacked into the cache, which the cross build's find_package()
# searches (tools/amupmu/CMakeLists.txt) to link amupmu-dyn, the
# dynamically linked amupmu the boards run the exporter with.
PROMETHEUS_CPP_ARM64_DEBS=(prometheus-cpp-dev libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0
	libprometheus-cpp-push1.0 libcivetweb-dev libcivetweb1 civetweb zlib1g-dev zlib1g libcurl4-openssl-dev libcurl4)
fetch_arm64_unpacked() { # fetch_arm64_unpacked DIR CHECKFILE PKG...: arm64 packages unpacked into $CACHE/DIR
	local out=$CACHE/$1 check=$2 tmp p
	shift 2
	if [ -e "$out/$check" ] && [ "$(cat "$out/.complete" 2>/dev/null)" = "$*" ]; then
		log "$(basename "$out"): cached"
		return
	fi
	tmp=$(mktemp -d)
	chown _apt "$tmp" 2>/dev/null || true
	(cd "$tmp" && apt-get download -q "${@/%/:arm64}" >/dev/null 2>&1) ||
		{ rm -rf "$tmp"; die "cannot download the arm64 packages $*"; }
	rm -rf "$out"
	for p in "$tmp"/*.deb; do dpkg-deb -x "$p" "$out"; done
	rm -rf "$tmp"
	echo "$*" >"$out/.complete"
	log "$(basename "$out"): unpacked $*"
}
# Debian's Prometheus server for the exporter's board test, unpacked, not
# installed: the package's service would start at installation and listen
# on every interface; the test runs the binary itself on 127.0.0.1
fetch_prometheus_server() {
	local out=$CACHE/prometheus tmp
	if [ -x "$out/usr/bin/prometheus" ]; then
		log "prometheus: cached ($("$out/usr/bin/prometheus" --version 2>&1 | head -1))"
		return
	fi
	tmp=$(mktemp -d)
	chown _apt "$tmp" 2>/dev/null || true
	(cd "$tmp" && apt-get download -q prometheus >/dev/null 2>&1) ||
		{ rm -rf "$tmp"; die "cannot download prometheus"; }
	rm -rf "$out"
	dpkg-deb -x "$tmp"/prometheus_*.deb "$out"
	rm -rf "$tmp"
	log "prometheus: unpacked into $out ($("$out/usr/bin/prometheus" --version 2>&1 | head -1))"
}

mkdir -p "$CACHE"
install_host
fetch_libnl_utils_arm64
fetch_arm64_unpacked prometheus-cpp-arm64 usr/lib/aarch64-linux-gnu/cmake/prometheus-cpp/prometheus-cpp-config.cmake \
	"${PROMETHEUS_CPP_ARM64_DEBS[@]}"
fetch_prometheus_server
fetch_kernel 6.1 bookworm
fetch_kernel 6.12 trixie
make_chroot
extract_ksrc
# the debug kernel (6.1-debug), built once into a cache outside the tree
CACHE=$CACHE "$TOP/tools/debug-kernel.sh" || die "the debug kernel did not build"
log "ready: 6.1=$(cat "$CACHE/kernels/6.1/abi") 6.12=$(cat "$CACHE/kernels/6.12/abi")" \
    "6.1-debug=$(cat "$CACHE/kernels/6.1-debug/abi")," \
    "$(qemu-system-aarch64 --version | head -1), $(aarch64-linux-gnu-gcc --version | head -1)"
