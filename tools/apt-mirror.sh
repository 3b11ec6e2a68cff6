# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The Debian archive the host's apt already uses (sourced by tools/deps.sh
# and tools/deb-e2e.sh): the first URI of /etc/apt/sources.list.d/*.sources
# or of a "deb" line of /etc/apt/sources.list*.

# apt_mirror [security]: print that URI (without a trailing /), of the
# security archive with "security"; fails when the host names none
apt_mirror() {
	local m want=${1:-} sel=(grep -v security)
	[ "$want" = security ] && sel=(grep security)
	m=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | "${sel[@]}" | head -1 || true)
	[ -n "$m" ] || m=$(awk -v want="$want" '$1 == "deb" && (want == "security") == ($0 ~ /security/) {
			for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/) { print $i; exit } }' \
		/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
	[ -n "$m" ] || return 1
	echo "${m%/}"
}
