# SPDX-License-Identifier: GPL-2.0
# Board payload: the ioctl fuzzer (AMUPMU_FUZZ_CALLS calls, default
# 200000; soak.sh: 10000000) after a warm-up round, in the board's PMU mode
# (exclusive on the amupmu devicetree; shared on the stock one, where the
# fuzzer also turns pmu_shared off and on), then the module must
# unload, and the slab and MemAvailable must be back within bounds once it
# is reloaded. The kernel
# log is checked by run.sh (no oops, WARN, BUG).
. /lib.sh

tap_check insmod insmod "$AMUPMU_KO"
board_backend
# a short warm-up round and a reload first: what the kernel allocates once
# (per-CPU page lists, module loader and kernfs caches) is not a leak
run_test amupmu_fuzz-warmup env AMUPMU_FUZZ_CALLS=20000 /selftests/amupmu_fuzz
tap_check rmmod-after-warmup rmmod amupmu
tap_check insmod-after-warmup insmod "$AMUPMU_KO"
mem_snapshot before
run_test amupmu_fuzz env AMUPMU_FUZZ_CALLS="${AMUPMU_FUZZ_CALLS:-200000}" /selftests/amupmu_fuzz
# the generic netlink family (issue 15): random requests, attributes,
# lengths and nesting, as root and as nobody (amupmu_netlink_test's fuzz
# test; the check payload runs it with 3000 messages)
run_test amupmu_netlink_fuzz env AMUPMU_NL_ONLY=fuzz \
	AMUPMU_NL_FUZZ_MSGS="${AMUPMU_NL_FUZZ_MSGS:-20000}" /selftests/amupmu_netlink_test
tap_check rmmod-after-fuzz rmmod amupmu
tap_check insmod-after-fuzz insmod "$AMUPMU_KO"
mem_snapshot after
tap_check fuzz-memory-back mem_within before after fuzz
tap_check rmmod rmmod amupmu
