#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Static analysis of the C++ in lib/, tools/ and examples/, as TAP: clang-tidy with
# the checked-in .clang-tidy (one result per file; files in
# tools/static/clang-tidy-exclude.txt are skipped, with the reason given
# there) and cppcheck (warning, performance, portability) with
# tools/static/cppcheck-suppressions.txt. Zero findings pass.
# The compile commands come from the ASan build directory (configured here
# if needed: configuring is enough, nothing is built).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
BUILD=${ASAN_BUILD:-$TOP/build/host-asan}
JOBS=${JOBS:-$(nproc)}
OUT=$BUILD/static
mkdir -p "$OUT"

if [ ! -f "$BUILD/compile_commands.json" ]; then
	"$TOP/tools/asan-configure.sh" "$BUILD" >"$OUT/configure.log" 2>&1 ||
		{ echo "not ok 1 - configure $BUILD (log $OUT/configure.log)"; exit 1; }
fi

# CMake's precompiled headers are GCC's (.gch): clang-tidy cannot read
# them. Its copy of the compile commands includes catch.hpp as the sources
# do, without "-include cmake_pch.hxx".
sed -E 's# -Winvalid-pch -include [^ ]*/cmake_pch\.hxx##' "$BUILD/compile_commands.json" \
	>"$OUT/compile_commands.json"

mapfile -t excluded < <(grep -v '^[[:space:]]*\(#\|$\)' tools/static/clang-tidy-exclude.txt)
mapfile -t files < <(git ls-files 'lib/*.cpp' 'tools/*.cpp' 'examples/*.cpp')
# skip[file]=1 for an excluded file: one lookup, no pipe (a "printf | grep
# -q" under pipefail fails when grep exits at the match and printf gets
# SIGPIPE, which once reported a checked file as skipped)
declare -A skip=()
for e in "${excluded[@]}"; do skip[$e]=1; done
todo=()
for f in "${files[@]}"; do
	[ -n "${skip[$f]:-}" ] || todo+=("$f")
done
# logs of an earlier run must not stand in for this one's
rm -f "$OUT"/tidy-*.log "$OUT"/tidy-*.rc

echo "TAP version 13"
echo "1..$((${#files[@]} + 1))"
# clang-tidy, $JOBS files at a time; one log per file. The static
# analyzer in clang's shallow mode (less inlining across calls: the mode
# clang's own scan-build uses for large code bases): the full mode spent
# 27 of monitor.cpp's 35 s and two thirds of the whole check's 1,250 CPU
# seconds, make check has a 30-minute budget, and the tests run under
# ASan and UBSan, which find at run time what the deeper search looks for
# shellcheck disable=SC2016 # the sh -c script expands its own arguments
printf '%s\n' "${todo[@]}" | xargs -P "$JOBS" -I{} sh -c \
	'clang-tidy -p "$1" --quiet --extra-arg=-Xclang --extra-arg=-analyzer-config \
		--extra-arg=-Xclang --extra-arg=mode=shallow "$2" >"$3/tidy-$(echo "$2" | tr / _).log" 2>&1
	echo $? >"$3/tidy-$(echo "$2" | tr / _).rc"' \
	sh "$OUT" {} "$OUT"
n=0 failed=0
for f in "${files[@]}"; do
	n=$((n + 1))
	log=$OUT/tidy-$(echo "$f" | tr / _).log
	if [ -n "${skip[$f]:-}" ]; then
		echo "ok $n - clang-tidy $f # SKIP listed in tools/static/clang-tidy-exclude.txt"
		continue
	fi
	if [ ! -f "$log" ] || [ ! -f "${log%.log}.rc" ]; then
		echo "not ok $n - clang-tidy $f: no log (clang-tidy did not run on it)"
		failed=1
		continue
	fi
	findings=$(grep -cE '(warning|error): ' "$log")
	if [ "$(cat "${log%.log}.rc")" = 0 ] && [ "$findings" = 0 ]; then
		echo "ok $n - clang-tidy $f"
	else
		echo "not ok $n - clang-tidy $f: $findings findings (log $log)"
		grep -E '(warning|error): ' "$log" | head -10 | sed 's/^/#   /'
		failed=1
	fi
done

n=$((n + 1))
# cppcheck takes no comments in its list: the reasons stay in the file
grep -v '^[[:space:]]*\(#\|$\)' tools/static/cppcheck-suppressions.txt >"$OUT/cppcheck-suppressions"
if cppcheck --quiet --enable=warning,performance,portability --std=c++20 --language=c++ \
	--inline-suppr --suppressions-list="$OUT/cppcheck-suppressions" \
	--error-exitcode=1 -I lib/libamupmu/include -I include/uapi -I kernel/amu_pmu_drv \
	-I lib/amupmu-report/include -I lib/amupmu-text/include -I "$BUILD/lib/libamupmu/include" \
	--library=tools/static/libnl.cfg \
	--template='{file}:{line}: {severity} [{id}] {message}' \
	lib/libamupmu/src lib/amupmu-report/src lib/amupmu-text/src lib/libamupmu/tests tools/amupmu examples \
	>"$OUT/cppcheck.log" 2>&1; then
	echo "ok $n - cppcheck lib/ tools/ examples/ ($(grep -c . "$OUT/cppcheck.log") findings)"
else
	echo "not ok $n - cppcheck lib/ tools/ examples/ (log $OUT/cppcheck.log)"
	head -10 "$OUT/cppcheck.log" | sed 's/^/#   /'
	failed=1
fi
exit $failed
