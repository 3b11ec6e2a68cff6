#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh: build the boards' debug kernel (lockdep, KASAN, KFENCE,
# UBSAN, DEBUG_OBJECTS, DEBUG_LIST, hung-task/lockup/RCU-stall detection)
# from Debian's linux-source-6.1 and expose it to the harness as kernel
# "6.1-debug" ($CACHE/kernels/6.1-debug: Image, abi, version, build, .complete),
# for tools/build-module.sh 6.1-debug and tools/board/run.sh -k 6.1-debug.
#
# Config: allnoconfig + selftests/amupmu/config (the kselftest fragment)
# merged with scripts/kconfig/merge_config.sh + olddefconfig. Fails before
# the long build when an option of the fragment that the kernel's Kconfig
# defines did not survive olddefconfig (a missing dependency drops it).
#
# The build tree lives outside the source tree, in
#   ${AMUPMU_KCACHE:-/var/cache/amupmu}/debug-kernel/KEY/
# KEY: a hash of the linux-source-6.1 package version and tarball, the
# fragment, the cross compiler's version and the recipe (the bodies of this
# script's configure and build functions). A complete entry (.complete) is
# reused ("cached"): a second run builds nothing, also for another checkout.
# Called at the end of tools/deps.sh (make deps). JOBS (default nproc).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CACHE:-$TOP/build/cache}
KCACHE=${AMUPMU_KCACHE:-/var/cache/amupmu}/debug-kernel
TARBALL=${AMUPMU_KSRC:-/usr/src/linux-source-6.1.tar.xz}
FRAG=$TOP/selftests/amupmu/config
TAG=6.1-debug
JOBS=${JOBS:-$(nproc)}
KMAKE=(make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
	KBUILD_BUILD_USER=amupmu KBUILD_BUILD_HOST=amupmu
	KBUILD_BUILD_TIMESTAMP=2024-01-01)

log() { printf 'debug-kernel: %s\n' "$*"; }
die() { printf 'debug-kernel: error: %s\n' "$*" >&2; exit 1; }

# configure DIR: the .config of the debug kernel in the source tree DIR
configure() {
	local d=$1 sym line val
	"${KMAKE[@]}" -C "$d" allnoconfig >/dev/null || return 1
	# the release name: what uname -r and vermagic say (6.1.N-amupmu-debug)
	printf 'CONFIG_LOCALVERSION="-amupmu-debug"\n# CONFIG_LOCALVERSION_AUTO is not set\n' \
		>"$d/amupmu-local.config"
	(cd "$d" && ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- ./scripts/kconfig/merge_config.sh \
		-m -O . .config "$FRAG" amupmu-local.config >/dev/null) || return 1
	"${KMAKE[@]}" -C "$d" olddefconfig >/dev/null || return 1
	# every requested value must be in the final .config, unless this
	# kernel's Kconfig does not define the symbol at all
	find "$d" -name 'Kconfig*' -exec sed -n \
		's/^[[:space:]]*\(menu\)\{0,1\}config[[:space:]]\{1,\}\([A-Za-z0-9_]\{1,\}\).*/\2/p' {} + |
		sort -u >"$d/.kconfig-symbols"
	local missing=() absent=()
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			sym=${line%%=*}; sym=${sym#CONFIG_}; val=${line#*=} ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# CONFIG_}; sym=${sym%% *}; val=n ;;
		*) continue ;;
		esac
		if ! grep -qx "$sym" "$d/.kconfig-symbols"; then
			absent+=("$sym")
		elif [ "$val" = n ]; then
			grep -q "^CONFIG_$sym=" "$d/.config" && missing+=("$line")
		else
			# shellcheck disable=SC1087 # a regex bracket, not an array
			grep -qxF "CONFIG_$sym=$val" "$d/.config" || missing+=("$line (got: $(grep "CONFIG_$sym[= ]" "$d/.config" || echo unset))")
		fi
	done < <(cat "$FRAG" "$d/amupmu-local.config")
	[ ${#absent[@]} = 0 ] || log "not in this kernel's Kconfig (skipped): ${absent[*]}"
	if [ ${#missing[@]} -gt 0 ]; then
		printf 'debug-kernel: did not survive olddefconfig: %s\n' "${missing[@]}" >&2
		return 1
	fi
}

# build DIR: the Image, the modules (arm_spe_pmu) and Module.symvers, and
# what out-of-tree modules need (make -C DIR M=...)
build() {
	"${KMAKE[@]}" -C "$1" -j"$JOBS" Image modules &&
	"${KMAKE[@]}" -C "$1" modules_prepare &&
	test -s "$1/Module.symvers"
}

[ -r "$TARBALL" ] || die "no $TARBALL (make deps installs linux-source-6.1)"
for t in flex bison bc aarch64-linux-gnu-gcc; do
	command -v "$t" >/dev/null || die "$t missing (make deps)"
done
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)
KEY=$({
	echo "$srcver"; stat -c '%n %s %Y' "$TARBALL"
	cat "$FRAG"
	aarch64-linux-gnu-gcc --version | head -1
	declare -f configure build; printf '%s\n' "${KMAKE[@]}"
} | sha256sum | cut -c1-16)
E=$KCACHE/$KEY
mkdir -p "$KCACHE"

# one build at a time per cache; a second caller waits and finds it done
exec 9>"$KCACHE/.lock"
flock 9

# an entry without .complete is a build that died (we hold the lock)
for d in "$KCACHE"/*/; do
	if [ -d "$d" ] && [ ! -f "$d/.complete" ] && [ "${d%/}" != "$E" ]; then
		log "removing the unfinished build $d"
		rm -rf "$d"
	fi
done

if [ -f "$E/.complete" ] && [ -s "$E/abi" ]; then
	log "$TAG: $(cat "$E/abi") cached in $E"
else
	rm -rf "$E"; mkdir -p "$E"
	log "$TAG: building in $E (linux-source-6.1 $srcver, -j$JOBS; 877 files: about 8 min on 2 idle cores, 47 min measured on 2 busy ones)"
	t0=$(date +%s)
	tar -xJf "$TARBALL" -C "$E"
	mv "$E"/linux-source-6.1 "$E/linux"
	configure "$E/linux" || die "config check failed (fragment: $FRAG)"
	log "$TAG: config ok, compiling (log: $E/build.log)"
	build "$E/linux" >"$E/build.log" 2>&1 || { tail -30 "$E/build.log" >&2; die "build failed (see $E/build.log)"; }
	"${KMAKE[@]}" -s -C "$E/linux" kernelrelease >"$E/abi"
	echo "$srcver+amupmu-debug" >"$E/version"
	cp "$E/linux/.config" "$E/config"
	echo "$(( $(date +%s) - t0 ))" >"$E/build-seconds"
	touch "$E/.complete"
	log "$TAG: $(cat "$E/abi") built in $(cat "$E/build-seconds") s"
fi

# the harness's view: $CACHE/kernels/6.1-debug, links into the cache entry
K=$CACHE/kernels/$TAG
if [ "$(cat "$K/key" 2>/dev/null)" != "$KEY" ] || [ ! -f "$K/.complete" ] || ! cmp -s "$E/abi" "$K/abi"; then
	rm -rf "$K.tmp"; mkdir -p "$K.tmp"
	ln -s "$E/linux/arch/arm64/boot/Image" "$K.tmp/Image"
	ln -s "$E/linux" "$K.tmp/build"
	ln -s "$E/config" "$K.tmp/config"
	cp "$E/abi" "$E/version" "$K.tmp/"
	echo "$KEY" >"$K.tmp/key"
	touch "$K.tmp/.complete"
	rm -rf "$K"; mv "$K.tmp" "$K"
fi
log "$TAG: $K -> $E ($(cat "$K/abi"))"
