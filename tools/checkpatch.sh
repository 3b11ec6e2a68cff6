#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --strict (from Debian's linux-source-6.1, see make deps) on
# the module and the UAPI header. A finding fails unless its file and type
# are listed, with the reason, in kernel/amu_pmu_drv/checkpatch-justified.txt.
# Prints TAP: one line per file.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
CP=${CHECKPATCH:-$TOP/build/cache/linux-source/scripts/checkpatch.pl}
[ -f "$CP" ] || { echo "not ok 1 - checkpatch.pl missing ($CP): run make deps"; exit 1; }
JUST=kernel/amu_pmu_drv/checkpatch-justified.txt
files=(kernel/amu_pmu_drv/*.[ch] include/uapi/linux/amupmu*.h)
echo "1..${#files[@]}"
i=0 bad=0
tmp=$(mktemp -d)
for f in "${files[@]}"; do
	i=$((i + 1))
	(cd "$tmp" && perl "$CP" --strict --no-tree --terse --show-types -f "$TOP/$f") 2>&1 |
		sed "s|^$TOP/||" | grep -E '^[^ ]+:[0-9]+: (ERROR|WARNING|CHECK):' >"$tmp/out"
	left=$(while IFS= read -r line; do
		type=$(echo "$line" | sed -E 's/^[^ ]+ (ERROR|WARNING|CHECK):([A-Z_]+):.*/\2/')
		grep -qE "^$f $type " "$JUST" || echo "$line"
	done <"$tmp/out")
	if [ -z "$left" ]; then
		echo "ok $i - checkpatch --strict $f ($(wc -l <"$tmp/out") justified)"
	else
		bad=1; echo "not ok $i - checkpatch --strict $f"; echo "$left" | sed 's/^/# /'
	fi
done
rm -rf "$tmp"
exit $bad
