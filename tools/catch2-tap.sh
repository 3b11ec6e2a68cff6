#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# catch2-tap.sh [--once] [RUNNER...] -- BINARY [ARGS...]
# Run each Catch2 test case of BINARY in its own process and print one TAP
# line per test case (Catch2 2.x's own TAP reporter prints one per
# assertion). RUNNER, e.g. qemu-aarch64-static, prefixes every run.
# --once: for test cases that share no state (the host tests), one
# process runs them all (Catch2's XML reporter, read here); only when that
# run fails does every test case run again in its own process, so that a
# crash names its test. The TAP lines are the same either way. 180 test
# cases under ASan: 35 s instead of 95.
# POSIX sh: runs on the host and in the board's busybox.
runner= once=0
[ "${1:-}" = --once ] && { once=1; shift; }
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

# one run: every test case's line, the backend/locale/SKIP lines and
# warnings it printed as comments after it; all listed ones reported, or
# nothing printed and the loop below runs
# shellcheck disable=SC2086
if [ $once = 1 ] && $runner "$bin" -r xml "$@" >"$tmp.xml" 2>"$tmp.err" </dev/null &&
   awk -v n="$n" '
	function unxml(s) {
		gsub(/&quot;/, "\"", s); gsub(/&apos;/, "\047", s); gsub(/&lt;/, "<", s)
		gsub(/&gt;/, ">", s); gsub(/&amp;/, "\\&", s); return s
	}
	/<TestCase name="/ { name = $0; sub(/.*<TestCase name="/, "", name); sub(/".*/, "", name)
		name = unxml(name); notes = ""; warn = 0; next }
	/<Warning>/ { warn = 1; next }
	/<\/Warning>/ { warn = 0; next }
	/<OverallResult success="/ { i++; res[i] = ($0 ~ /success="true"/ ? "ok " : "not ok ") i " - " name }
	warn || /backend|under the locale|SKIP/ { line = $0; sub(/^[ \t]+/, "", line)
		if (line != "" && line !~ /^<\/?(StdOut|StdErr)>$/) notes = notes "# " unxml(line) "\n" }
	/<\/TestCase>/ { out[i] = res[i] "\n" notes }
	END {
		if (i != n) exit 1
		for (k = 1; k <= i; k++) if (res[k] !~ /^ok /) exit 1
		for (k = 1; k <= i; k++) printf "%s", out[k]
	}' "$tmp.xml" >"$tmp.tap" &&
   [ "$(grep -c '^ok ' "$tmp.tap")" = "$n" ]; then
	cat "$tmp.tap"
	rm -f "$tmp.names" "$tmp.xml" "$tmp.err" "$tmp.tap"
	exit 0
fi
rm -f "$tmp.xml" "$tmp.err" "$tmp.tap"

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
