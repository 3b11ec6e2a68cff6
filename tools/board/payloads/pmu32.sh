# SPDX-License-Identifier: GPL-2.0
# Board payload: the PMU tests with 32-bit event counters (overflows folded
# by the interrupt). Run without -icount: the wrap test sleeps ~10 s of
# guest time, and an idle guest under -icount is where QEMU 7.2 stalled once.
PMU_COUNTER_BITS=32 . /payload-pmu.sh
