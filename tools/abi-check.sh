#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# abi-check.sh [--update] [BUILD_DIR]: the ABI of libamupmu.so in BUILD_DIR
# (default build/host, a RelWithDebInfo build: abidw reads its DWARF)
# against the baseline lib/libamupmu/abi/libamupmu.abi.xz, as TAP
# (libabigail's abidw and abidiff; the public headers define what counts).
#   1. the exports are the amupmu namespace only (lib/libamupmu/libamupmu.map)
#   2. no incompatible change under the same SONAME: an incompatible change
#      needs a new AMUPMU_SOVERSION (lib/libamupmu/CMakeLists.txt) and then
#      a new baseline; compatible additions pass and are listed
#   3. nothing internal is exported: no symbol of the report component or
#      the text helpers (amupmu::report, amupmu::text), and a symbol of a
#      detail namespace only when a public header names it (what inline
#      functions of the headers call: RingCursor, the SPE decoder's tables)
# --update writes the baseline from BUILD_DIR (after an intended change).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
update=0
[ "${1:-}" = --update ] && { update=1; shift; }
B=${1:-$TOP/build/host}
SO=$B/lib/libamupmu/libamupmu.so
BASE=$TOP/lib/libamupmu/abi/libamupmu.abi.xz
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

[ -e "$SO" ] || { echo "not ok 1 - $SO missing: make host-build"; exit 1; }
headers=(--headers-dir "$TOP/lib/libamupmu/include/amupmu" --headers-dir "$B/lib/libamupmu/include/amupmu")
abidw "${headers[@]}" --no-corpus-path --no-show-locs --drop-private-types --drop-undefined-syms \
	--type-id-style hash --out-file "$T/current.abi" "$(readlink -f "$SO")" ||
	{ echo "not ok 1 - abidw $SO failed"; exit 1; }
soname() { sed -n "1s/.* soname='\([^']*\)'.*/\1/p" "$1"; }

if [ $update = 1 ]; then
	xz -9 -c "$T/current.abi" >"$BASE"
	echo "abi-check: $BASE now records $(soname "$T/current.abi")"
	exit 0
fi

echo "TAP version 13"
echo "1..3"
failed=0
# tap_empty N FILE OK FAIL: "ok N - OK" when FILE is empty, else "not ok N -
# FAIL" and FILE's first lines
tap_empty() {
	if [ -s "$2" ]; then
		echo "not ok $1 - $4"
		head -10 "$2" | sed 's/^/#   /'
		failed=1
	else
		echo "ok $1 - $3"
	fi
}

# 1: every exported symbol is in the amupmu namespace (or the version node)
nm -D --defined-only "$SO" | awk '{print $NF}' |
	grep -vE '^(_ZN6amupmu|_ZNK6amupmu|_ZT[ISVT]N6amupmu|_ZT[hv][^N]*_NK?6amupmu|AMUPMU_1$)' >"$T/foreign"
n=$(nm -D --defined-only "$SO" | grep -c .)
tap_empty 1 "$T/foreign" "libamupmu.so exports $n symbols, all of the amupmu namespace (version node AMUPMU_1)" \
	"libamupmu.so exports $(grep -c . "$T/foreign") symbols outside the amupmu namespace"

# 3: nothing internal (run before 2, which may end the script; printed
# after it)
nm -DC --defined-only "$SO" | awk '{$1 = $2 = ""; print substr($0, 3)}' >"$T/demangled"
grep -E 'amupmu::(report|text)::' "$T/demangled" >"$T/internal"
sed -n 's/.*::detail::\([A-Za-z_][A-Za-z_0-9]*\).*/\1/p' "$T/demangled" | sort -u |
	while read -r name; do
		grep -rqw -- "$name" "$TOP/lib/libamupmu/include/amupmu" || grep -F "::detail::$name" "$T/demangled"
	done >>"$T/internal"
report_internal() {
	tap_empty 3 "$T/internal" \
		"nothing internal exported ($(grep -c '::detail::' "$T/demangled") symbols of detail namespaces, each named by a public header's inline code)" \
		"libamupmu.so exports $(grep -c . "$T/internal") internal symbols (the report's, the text helpers', or a detail one no public header names): hide them"
}

# 2: against the baseline
if [ ! -f "$BASE" ]; then
	echo "not ok 2 - no baseline $BASE: tools/abi-check.sh --update"
	report_internal
	exit 1
fi
xz -dc "$BASE" >"$T/baseline.abi"
was=$(soname "$T/baseline.abi") now=$(soname "$T/current.abi")
abidiff --no-show-locs "$T/baseline.abi" "$T/current.abi" >"$T/report" 2>&1
rc=$?
if [ "$was" != "$now" ]; then
	echo "not ok 2 - the SONAME is $now, the baseline records $was: after raising AMUPMU_SOVERSION, record the new ABI with tools/abi-check.sh --update"
	failed=1
elif [ $((rc & 3)) != 0 ]; then
	echo "not ok 2 - abidiff failed (status $rc)"
	head -10 "$T/report" | sed 's/^/#   /'
	failed=1
elif [ $((rc & 8)) != 0 ]; then
	echo "not ok 2 - incompatible ABI change under the same SONAME $now: raise AMUPMU_SOVERSION (lib/libamupmu/CMakeLists.txt), then tools/abi-check.sh --update"
	grep -E 'Functions changes summary|Variables changes summary|removed|changed' "$T/report" | head -15 | sed 's/^/#   /'
	failed=1
elif [ $((rc & 4)) != 0 ] && grep -qE "type size changed|offset changed|data member .* (was removed|deleted)|vtable offset|base class(es)? (insertion|deletion)" "$T/report"; then
	# abidiff calls a changed layout a change, not an incompatible one;
	# the policy does not: a program built against the old headers
	# allocates and reads the old layout. A base class added or removed
	# is one; a "base class change" only carries its members' changes
	# (std::optional<T>'s bases when T changes), which the other patterns
	# judge
	echo "not ok 2 - the layout of a public type changed under the same SONAME $now: raise AMUPMU_SOVERSION (lib/libamupmu/CMakeLists.txt), then tools/abi-check.sh --update"
	grep -E "^  \[C\]|type size changed|offset changed" "$T/report" | head -15 | sed 's/^/#   /'
	failed=1
elif [ $((rc & 4)) != 0 ]; then
	echo "ok 2 - $now: compatible with the baseline (additions only)"
	grep -E 'changes summary' "$T/report" | sed 's/^/#   /'
else
	echo "ok 2 - $now: the ABI is the baseline's"
fi
report_internal
exit $failed
