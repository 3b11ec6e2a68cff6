# SPDX-License-Identifier: GPL-2.0
# Helpers for board payloads (busybox sh).

# run_test NAME CMD...: frame one test program's TAP output for the host.
run_test() {
	name=$1
	shift
	echo "AMUPMU-BEGIN $name"
	"$@"
	rc=$?
	echo "AMUPMU-END $name rc=$rc"
	return 0
}

# tap_check NAME CMD...: a one-result TAP test from a shell command.
tap_check() {
	name=$1
	shift
	echo "AMUPMU-BEGIN $name"
	if "$@"; then echo "ok 1 $name"; else echo "not ok 1 $name"; fi
	echo "AMUPMU-END $name rc=0"
}

# the backend every test of this boot runs on
board_backend() {
	be=$(cat /sys/class/misc/amupmu/backend 2>/dev/null || echo unloaded)
	echo "# backend: QEMU TCG PMUv3 ($AMUPMU_BOARD), AMU/SPE registers: $be"
}

# mem_snapshot NAME: Slab and MemAvailable (kB) after dropping the caches,
# into mem_NAME_slab / mem_NAME_avail.
mem_snapshot() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 1
	eval "$(awk -v n="$1" '/^Slab:/ { printf "mem_%s_slab=%s\n", n, $2 }
		/^VmallocUsed:/ { printf "mem_%s_vmalloc=%s\n", n, $2 }
		/^MemAvailable:/ { printf "mem_%s_avail=%s\n", n, $2 }' /proc/meminfo)"
}

# mem_within A B SUITE: the slab grew by at most AMUPMU_SLAB_SLACK_KB
# (default 512) and VmallocUsed by at most AMUPMU_VMALLOC_SLACK_KB (default
# 256: kernel thread stacks are vmalloc, 16 kB each) from snapshot A to B;
# prints the figure line (MemAvailable too).
# shellcheck disable=SC2154 # s0 a0 s1 a1 v0 v1 come from the eval
mem_within() {
	eval "s0=\$mem_$1_slab a0=\$mem_$1_avail s1=\$mem_$2_slab a1=\$mem_$2_avail"
	eval "v0=\$mem_$1_vmalloc v1=\$mem_$2_vmalloc"
	ds=$((s1 - s0)) da=$((a0 - a1)) dv=$((v1 - v0))
	echo "# $3 memory: Slab ${s0} -> ${s1} kB ($ds), VmallocUsed ${v0} -> ${v1} kB ($dv), MemAvailable ${a0} -> ${a1} kB (-$da)"
	echo "# AMUPMU-FIGURE $3-memory slab_delta_kb=$ds vmalloc_delta_kb=$dv avail_drop_kb=$da"
	# the driver allocates from the slab and vmalloc (rings) only; MemAvailable
	# moves by MiBs with page-cache refills (seen: -4.6 MB with slab +60 kB)
	# and is reported, not bounded
	[ "$ds" -le "${AMUPMU_SLAB_SLACK_KB:-512}" ] && [ "$dv" -le "${AMUPMU_VMALLOC_SLACK_KB:-256}" ]
}
