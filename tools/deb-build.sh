#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deb-build.sh [-o OUT] [-a ARCH] [-P PROFILES] [--twice] [--update-symbols]
#
# Builds amupmu's Debian packages (debian/) from this tree: the tree's
# files (tracked and untracked, not ignored: git ls-files) are copied to
# OUT/amupmu-VERSION/ and built there with dpkg-buildpackage (source and
# binaries, unsigned), so that nothing is written into the tree and the
# results land in OUT (default build/deb). Default: cross-built for arm64
# with the profiles cross,nocheck (the Catch2 tests cannot run on this
# host; make host-test/cross-test run them).
#
# Then lintian on the .changes: the script fails on any error or warning
# lintian reports (overrides in debian/*lintian-overrides, each with its
# reason, are lintian's own). --twice builds again in a second directory
# and compares the .debs byte for byte (reproducibility: SOURCE_DATE_EPOCH
# is debian/changelog's date, as dpkg-buildpackage sets it).
#
# --update-symbols writes debian/libamupmu2.symbols from the built library
# (every exported symbol, demangled, as dpkg-gensymbols' (c++) tags, at the
# version listed there or else this one): run it when the library's ABI
# changes on purpose; the build fails on any symbol not listed or gone
# (dh_makeshlibs -- -c4).
#
# Needs the Build-Depends of debian/control for ARCH (tools/deps.sh installs
# them) and lintian.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=$TOP/build/deb
ARCH=arm64
PROFILES=cross,nocheck
TWICE=0
SYMBOLS=0
while [ $# -gt 0 ]; do
	case $1 in
	-o) OUT=$2; shift 2 ;;
	-a) ARCH=$2; shift 2 ;;
	-P) PROFILES=$2; shift 2 ;;
	--twice) TWICE=1; shift ;;
	--update-symbols) SYMBOLS=1; shift ;;
	*) echo "usage: deb-build.sh [-o OUT] [-a ARCH] [-P PROFILES] [--twice]" >&2; exit 1 ;;
	esac
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
case $OUT/ in "$TOP"/build/*) ;; "$TOP"/*) echo "deb-build: OUT inside the source tree, not under build/" >&2; exit 1 ;; esac

VERSION=$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Version)
SRC=amupmu-$VERSION

# A cross build on a host that has the host's prometheus-cpp-dev (make
# deps: the host build's) cannot install prometheus-cpp-dev:ARCH beside it
# (civetweb, which both depend on, is not Multi-Arch): when that is the only
# Build-Depends missing, dpkg-buildpackage skips the check (-d) and the
# build finds the arm64 one where make deps unpacked it; dpkg-shlibdeps
# finds its libraries' dependencies in the installed
# libprometheus-cpp-*1.0:ARCH (Multi-Arch: same, tools/deps.sh).
NODEPCHECK=()
if [ "$ARCH" != "$(dpkg --print-architecture)" ]; then
	unmet=$(cd "$TOP" && dpkg-checkbuilddeps -a"$ARCH" -P"$PROFILES" 2>&1 | sed -n 's/.*Unmet build dependencies: //p' || true)
	# (and civetweb's -dev, which the exporter links too: the same reason)
	if [ -n "$unmet" ] && [ -z "$(echo "$unmet" | sed 's/ *([^)]*)//g; s/:[a-z0-9]*//g' | xargs -n1 |
		grep -vx -e prometheus-cpp-dev -e libcivetweb-dev)" ] &&
	   [ -f "$TOP/build/cache/prometheus-cpp-$ARCH/.complete" ]; then
		NODEPCHECK=(-d)
		export AMUPMU_PROMETHEUS_CPP_ROOT=$TOP/build/cache/prometheus-cpp-$ARCH
		echo "deb-build: prometheus-cpp-dev:$ARCH from $AMUPMU_PROMETHEUS_CPP_ROOT (not installable beside the host's)"
	fi
fi

build() { # build DIR: the packages in DIR
	local dir=$1 t0 t1
	rm -rf "$dir" && mkdir -p "$dir/$SRC"
	(cd "$TOP" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		rsync -a --from0 --files-from=- ./ "$dir/$SRC/")
	t0=$(date +%s)
	(cd "$dir/$SRC" && AMUPMU_SYMBOLS_UPDATE=$SYMBOLS DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-} $(case ,$PROFILES, in *,nocheck,*) echo nocheck ;; esac)" \
		dpkg-buildpackage "${NODEPCHECK[@]}" -a"$ARCH" -P"$PROFILES" -us -uc -j"$(nproc)") \
		>"$dir/build.log" 2>&1 || { tail -40 "$dir/build.log" >&2; echo "deb-build: failed (log: $dir/build.log)" >&2; return 1; }
	t1=$(date +%s)
	echo "deb-build: $dir: built in $((t1 - t0)) s"
}

build "$OUT/1"
if [ "$SYMBOLS" = 1 ]; then
	# the library's symbols as dpkg-gensymbols finds them in the built
	# package tree (dh_makeshlibs writes none without a symbols file)
	(cd "$OUT/1/$SRC" && dpkg-gensymbols -a"$ARCH" -plibamupmu2 -Pdebian/libamupmu2 -v"$VERSION" \
		-O"$OUT/symbols" -c0 >/dev/null)
	python3 - "$OUT/symbols" "$TOP/debian/libamupmu2.symbols" <<'PY'
import re, subprocess, sys
src, dst = sys.argv[1:]
old = {}
try:
    for line in open(dst):
        m = re.match(r' \(c\+\+\)"(.*)" (\S+)$', line.rstrip("\n"))
        if m:
            old[m.group(1)] = m.group(2)
except FileNotFoundError:
    pass
head, syms = [], []
for line in open(src):
    line = line.rstrip("\n")
    if line.startswith("#MISSING"):
        continue  # a symbol the library no longer has: dropped
    if not line.startswith(" "):
        head.append(line)
        continue
    m = re.match(r' \(c\+\+\)"(.*)" (\S+)', line)
    if m:  # already a (c++) pattern: kept
        syms.append((None, m.group(1), m.group(2)))
        continue
    name, ver = line.split()[0], line.split()[1]
    sym, _, node = name.partition("@")
    syms.append((sym, node, ver))
dem = subprocess.run(["c++filt"], input="\n".join(s or "" for s, _, _ in syms), capture_output=True,
                     text=True, check=True).stdout.split("\n")
out = [h for h in head if not h.startswith("*")]
out.append("* Build-Depends-Package: libamupmu-dev")
body = []
for (sym, node, ver), d in zip(syms, dem):
    if sym is None:
        body.append(f' (c++)"{node}" {ver}')
        continue
    key = f"{d}@{node}"
    body.append(f' (c++)"{key}" {old.get(key, ver)}' if d != sym else f" {sym}@{node} {ver}")
out += sorted(set(body))  # C1 and C2 constructors demangle alike: one pattern
open(dst, "w").write("\n".join(out) + "\n")
print(f"deb-build: {dst}: {len(set(body))} symbols")
PY
fi
CHANGES=$OUT/1/amupmu_${VERSION}_$ARCH.changes
for d in "$OUT"/1/*.deb; do
	echo "== $(basename "$d")"
	dpkg-deb -c "$d" | awk '{print $1, $6, $7, $8}'
done >"$OUT/contents.txt"
echo "deb-build: package contents in $OUT/contents.txt"

# amupmu-dkms: the module built as its dkms.conf's MAKE line builds it (the
# shipped tree copied to DKMS's build directory), against the cached Debian
# 6.1 arm64 headers (tools/deps.sh); cross from a non-arm64 host
CACHE=${CACHE:-$TOP/build/cache}
KC=$CACHE/kernels/6.1
if [ -f "$KC/.complete" ]; then
	ABI=$(cat "$KC/abi")
	D=$OUT/dkms && rm -rf "$D" && mkdir -p "$D"
	dpkg-deb -x "$OUT"/1/amupmu-dkms_*_all.deb "$D/pkg"
	MV=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$D/pkg/usr/src/amupmu-"*/dkms.conf)
	mkdir -p "$D/tree/amupmu/$MV"
	cp -a "$D/pkg/usr/src/amupmu-$MV" "$D/tree/amupmu/$MV/build"
	cross=()
	[ "$(uname -m)" = aarch64 ] || cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	make_line=$(kernel_source_dir=$KC/root/usr/src/linux-headers-$ABI dkms_tree=$D/tree bash -c \
		'. "$1"; eval echo "${MAKE[0]}"' _ "$D/tree/amupmu/$MV/build/dkms.conf")
	# shellcheck disable=SC2086
	$make_line "${cross[@]}" >"$D/make.log" 2>&1 || { cat "$D/make.log" >&2; echo "deb-build: dkms MAKE failed" >&2; exit 1; }
	if grep -E 'warning:|error:|WARNING:' "$D/make.log" >&2; then echo "deb-build: dkms MAKE warned" >&2; exit 1; fi
	ko=$D/tree/amupmu/$MV/build/kernel/amu_pmu_drv/amupmu.ko
	vermagic=$(aarch64-linux-gnu-objcopy -O binary --only-section=.modinfo "$ko" /dev/stdout |
		tr '\0' '\n' | sed -n 's/^vermagic=//p')
	echo "deb-build: amupmu-dkms: dkms.conf's MAKE built amupmu.ko for $ABI ($vermagic), no warning"
else
	echo "deb-build: no cached 6.1 headers ($KC): the dkms MAKE line not tried"
fi

# lintian's exit status is 0 below errors; warnings fail here too
lintian --info --display-info --pedantic --fail-on error,warning "$CHANGES" | tee "$OUT/lintian.txt" || {
	echo "deb-build: lintian: errors or warnings (above, $OUT/lintian.txt)" >&2; exit 1; }
echo "deb-build: lintian: no error or warning ($(grep -c . "$OUT/lintian.txt" || true) info/pedantic lines)"

if [ "$TWICE" = 1 ]; then
	build "$OUT/2"
	bad=0
	for d in "$OUT"/1/*.deb; do
		if cmp -s "$d" "$OUT/2/$(basename "$d")"; then
			echo "deb-build: reproducible: $(basename "$d")"
		else
			echo "deb-build: NOT reproducible: $(basename "$d")" >&2; bad=1
		fi
	done
	[ "$bad" = 0 ] || exit 1
fi
