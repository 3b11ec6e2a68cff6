#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# catch2-tap.sh [RUNNER...] -- BINARY [ARGS...]
# Run each Catch2 test case of BINARY in its own process and print one TAP
# line per test case (Catch2 2.x's own TAP reporter prints one per
# assertion). RUNNER, e.g. qemu-aarch64-static, prefixes every run.
# POSIX sh: runs on the host and in the board's busybox.
runner=
while [ $# -gt 0 ] && [ "$1" != -- ]; do runner="$runner $1"; shift; done
[ "$1" = -- ] && shift
bin=$1
shift
[ -n "$bin" ] || { echo "usage: catch2-tap.sh [RUNNER...] -- BINARY [ARGS...]" >&2; exit 2; }
tmp=${TMPDIR:-/tmp}/catch2-tap.$$
# shellcheck disable=SC2086
# (Catch2 2.x exits with the number of tests listed)
$runner "$bin" --list-test-names-only >"$tmp.names"
n=$(grep -c . "$tmp.names")
[ "$n" -gt 0 ] || { echo "not ok 1 - $bin: no test cases listed"; rm -f "$tmp.names"; exit 1; }
echo "TAP version 13"
echo "1..$n"
i=0 failed=0
while IFS= read -r name; do
	[ -n "$name" ] || continue
	i=$((i + 1))
	# Catch2 test specs: escape the characters that have a meaning there
	spec=$(printf '%s' "$name" | sed -e 's/\\/\\\\/g' -e 's/,/\\,/g' -e 's/\[/\\[/g' -e 's/\]/\\]/g' -e 's/"/\\"/g')
	# shellcheck disable=SC2086
	if $runner "$bin" "$spec" "$@" >"$tmp.out" 2>&1 </dev/null &&
	   grep -q 'in 1 test case' "$tmp.out"; then
		echo "ok $i - $name"
	else
		failed=$((failed + 1))
		echo "not ok $i - $name"
		sed 's/^/# /' "$tmp.out"
	fi
	grep -E '^(warning|WARN)|backend|under the locale' "$tmp.out" | sed 's/^/# /'
done <"$tmp.names"
rm -f "$tmp.names" "$tmp.out"
[ "$failed" = 0 ]
