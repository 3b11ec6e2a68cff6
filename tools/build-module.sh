#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-module.sh KERNEL [VARIANT]
#   KERNEL  6.1 | 6.12   (Debian bookworm / trixie arm64 kernels from make deps)
#           6.1-debug    (the debug kernel of tools/debug-kernel.sh: its tree)
#   VARIANT prod (default) | mock  (mock = CONFIG_AMUPMU_MOCK=y test build)
#
# Cross-builds amupmu.ko with W=1 into build/module/KERNEL/VARIANT/ using the
# compiler the kernel was built with: the host's gcc-12 cross compiler for
# 6.1 and 6.1-debug, gcc-14 inside the trixie build chroot for 6.12. Fails on any compiler
# or modpost warning. Set SPARSE=1 to also run sparse (C=2). The module's
# objects are left in build/module/KERNEL/VARIANT/obj.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CACHE:-$TOP/build/cache}
K=${1:?usage: build-module.sh 6.1|6.12|6.1-debug [prod|mock]}
VARIANT=${2:-prod}
OUT=$TOP/build/module/$K/$VARIANT
KC=$CACHE/kernels/$K
[ -f "$KC/.complete" ] || { echo "build-module: kernel $K missing: run make deps (6.1-debug: tools/debug-kernel.sh)" >&2; exit 1; }
ABI=$(cat "$KC/abi")

extra=()
[ "$VARIANT" = mock ] && extra+=(CONFIG_AMUPMU_MOCK=y)
[ "${SPARSE:-0}" = 1 ] && extra+=(C=2 CHECK=sparse)

# stage the sources: kernel/amu_pmu_drv keeps its relative path to include/uapi
stage() { # stage DIR
	rm -rf "$1"; mkdir -p "$1/kernel" "$1/include"
	cp -r "$TOP/kernel/amu_pmu_drv" "$1/kernel/"
	cp -r "$TOP/include/uapi" "$1/include/"
}

# a failed build leaves no objects of an earlier one for kernel-layers.py
rm -rf "$OUT/obj"
mkdir -p "$OUT"
log=$OUT/build.log
case $K in
6.1)
	src=$OUT/src
	stage "$src"
	make -C "$KC/root/usr/src/linux-headers-$ABI" M="$src/kernel/amu_pmu_drv" \
		ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- W=1 "${extra[@]}" modules >"$log" 2>&1 \
		|| { cat "$log" >&2; exit 1; }
	;;
6.1-debug)
	# the configured and built tree in the debug kernel's cache entry
	src=$OUT/src
	stage "$src"
	make -C "$KC/build" M="$src/kernel/amu_pmu_drv" \
		ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- W=1 "${extra[@]}" modules >"$log" 2>&1 \
		|| { cat "$log" >&2; exit 1; }
	;;
6.12)
	CH=$CACHE/chroot-trixie
	[ -f "$CH/.complete" ] || { echo "build-module: trixie chroot missing: run make deps" >&2; exit 1; }
	# the headers, once, at /kroot inside the chroot (relative kbuild links kept)
	if [ "$(cat "$CH/kroot/.abi" 2>/dev/null)" != "$ABI" ]; then
		rm -rf "$CH/kroot"; mkdir -p "$CH/kroot"
		cp -a "$KC/root/usr" "$CH/kroot/"
		sed -i "s|^include .*/usr/src/|include /kroot/usr/src/|" \
			"$CH/kroot/usr/src/linux-headers-$ABI/Makefile"
		echo "$ABI" >"$CH/kroot/.abi"
	fi
	rel=amupmu-build/$(printf %s "$TOP" | md5sum | cut -c1-8)/$VARIANT
	stage "$CH/$rel"
	chroot "$CH" make -C "/kroot/usr/src/linux-headers-$ABI" M="/$rel/kernel/amu_pmu_drv" \
		ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- W=1 "${extra[@]}" modules >"$log" 2>&1 \
		|| { cat "$log" >&2; exit 1; }
	src=$CH/$rel
	;;
*)
	echo "build-module: unknown kernel $K (6.1, 6.12 or 6.1-debug)" >&2; exit 1 ;;
esac

cp "$src/kernel/amu_pmu_drv/amupmu.ko" "$OUT/amupmu.ko"
# the objects, for tools/kernel-layers.py (6.12 builds inside the chroot)
rm -rf "$OUT/obj" && mkdir -p "$OUT/obj"
cp "$src"/kernel/amu_pmu_drv/*.o "$OUT/obj/"
rm -f "$OUT/obj/amupmu.o" "$OUT/obj/amupmu.mod.o"
if grep -E 'warning:|error:|WARNING:' "$log" >&2; then
	echo "build-module: $K/$VARIANT: warnings (see $log)" >&2
	exit 1
fi
vermagic=$(aarch64-linux-gnu-objcopy -O binary --only-section=.modinfo "$OUT/amupmu.ko" /dev/stdout |
	tr '\0' '\n' | sed -n 's/^vermagic=//p')
case $vermagic in "$ABI "*) ;; *) echo "build-module: vermagic '$vermagic' is not $ABI" >&2; exit 1 ;; esac
echo "module $K/$VARIANT: $OUT/amupmu.ko ($vermagic), 0 warnings with W=1${SPARSE:+ and sparse}"
