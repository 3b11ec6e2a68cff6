# SPDX-License-Identifier: GPL-2.0
# Board payload of make demo: load the module, show what the board has,
# count a workload with amupmu stat, sample it with amupmu record/report.
. /lib.sh

tap_check insmod insmod "$AMUPMU_KO"
board_backend
demo amupmu-info amupmu info
# 2 * 20M instructions at EL0 (exact under -icount), pinned to CPU 0 and
# counted there; the table goes to stderr
demo amupmu-stat-loop sh -c 'amupmu stat -C 0 -e inst_retired:u,cpu_cycles:u -- taskset 1 amupmu-workload loop 20000000 2>&1'
# the default set: cycles, instructions, branches, L1D events, stalls; what
# this CPU does not implement (PMCEID) is named and left out
demo amupmu-stat-branchy sh -c 'amupmu stat -- amupmu-workload branchy 1000000 0.1 2>&1'
# asked for explicitly, an event the CPU lacks is an error before anything
# is programmed
demo amupmu-stat-l1d sh -c 'out=$(amupmu stat -e l1d_cache,l1d_cache_refill -- amupmu-workload chase 100000 1024 2>&1);
	rc=$?; echo "$out"; [ $rc = 0 ] || echo "$out" | grep -q "not implemented (PMCEID"'
demo amupmu-record sh -c 'amupmu record -C 0 -e cpu_cycles:u -c 200000 -o /tmp/demo.rec -- taskset 1 amupmu-workload chase 2000000 4096 2>&1'
demo amupmu-report amupmu report -i /tmp/demo.rec --top 5
