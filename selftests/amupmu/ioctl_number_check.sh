#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Host-side check of amupmu's ioctl number (no board needed); prints TAP 13:
#  1. Documentation/userspace-api/ioctl/ioctl-number.rst comes out of the
#     linux-source tarball (only that member is extracted);
#  2. AMUPMU_TYPE of include/uapi/linux/amupmu.h is not listed in it (a
#     type some other driver registered, as 0xB7 of ABI 1 is, would make
#     our commands collide with theirs);
#  3. AMUPMU_CMD_LAST is not in the UAPI header (ABI 2 removed it: user
#     space learns the commands from AMUPMU_INFO's supported_ioctls).
#
# Usage: selftests/amupmu/ioctl_number_check.sh [LINUX_SOURCE_TARBALL]
#   default tarball /usr/src/linux-source-6.1.tar.xz (Debian's
#   linux-source-6.1, which make deps installs).
# Environment:
#   IOCTL_NUMBER_RST  an already extracted ioctl-number.rst (skips tar)
#   AMUPMU_UAPI       the header to check (default: this tree's)
# Exits 0 when every check passed, 1 otherwise.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TARBALL=${1:-/usr/src/linux-source-6.1.tar.xz}
UAPI=${AMUPMU_UAPI:-$HERE/../../include/uapi/linux/amupmu.h}
MEMBER='*/Documentation/userspace-api/ioctl/ioctl-number.rst'

n=0
failed=0
result() { # result <0|1> <description>
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=1
	fi
}

echo "TAP version 13"
echo "1..3"

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
RST=$tmp/ioctl-number.rst

# 1: the table
if [ -n "${IOCTL_NUMBER_RST:-}" ]; then
	cp "$IOCTL_NUMBER_RST" "$RST" 2>/dev/null
	src=$IOCTL_NUMBER_RST
else
	tar -xJf "$TARBALL" --wildcards --to-stdout "$MEMBER" >"$RST" 2>"$tmp/tar.err"
	src="$TARBALL ($MEMBER)"
fi
# "0xNN" or 'c' in column 1 starts a row of the table
awk '/^(0x[0-9A-Fa-f][0-9A-Fa-f]|'"'"'.'"'"')[ \t]/' "$RST" >"$tmp/rows" 2>/dev/null
rows=$(wc -l <"$tmp/rows")
if [ "$rows" -gt 100 ]; then
	result 0 "ioctl-number.rst from $src: $rows rows"
else
	[ -s "$tmp/tar.err" ] && sed 's/^/# /' "$tmp/tar.err"
	result 1 "ioctl-number.rst from $src: $rows rows (not extracted?)"
fi

# 2: AMUPMU_TYPE not registered by anybody
def=$(awk '$1 == "#define" && $2 == "AMUPMU_TYPE" { print $3; exit }' "$UAPI" 2>/dev/null)
case $def in
0x*|0X*) type=$(printf '%d' "$def" 2>/dev/null) ;;
\'?\') type=$(printf '%d' "\"$(echo "$def" | cut -c2)") ;;
[0-9]*) type=$def ;;
*) type= ;;
esac
if [ -z "$type" ]; then
	result 1 "AMUPMU_TYPE: no '#define AMUPMU_TYPE <number>' in $UAPI (found '${def:-nothing}')"
else
	hex=$(printf '0x%02X' "$type")
	: >"$tmp/hits"
	while IFS= read -r row; do
		code=${row%%[ 	]*}
		case $code in
		0x*|0X*) v=$(printf '%d' "$code" 2>/dev/null) ;;
		\'?\') v=$(printf '%d' "\"$(echo "$code" | cut -c2)") ;;
		*) continue ;;
		esac
		[ "$v" = "$type" ] && printf '%s\n' "$row" >>"$tmp/hits"
	done <"$tmp/rows"
	if [ -s "$tmp/hits" ]; then
		sed 's/^/# listed: /' "$tmp/hits"
		result 1 "AMUPMU_TYPE $hex ($def in $(basename "$UAPI")) is registered in ioctl-number.rst"
	else
		result 0 "AMUPMU_TYPE $hex ($def) is not listed in ioctl-number.rst"
	fi
fi

# 3: no AMUPMU_CMD_LAST
if grep -n 'AMUPMU_CMD_LAST' "$UAPI" >"$tmp/last" 2>/dev/null; then
	sed 's/^/# /' "$tmp/last"
	result 1 "AMUPMU_CMD_LAST is in $(basename "$UAPI") (ABI 2 removed it)"
else
	result 0 "AMUPMU_CMD_LAST is not in $(basename "$UAPI")"
fi

exit $failed
