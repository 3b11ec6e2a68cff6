# SPDX-License-Identifier: GPL-2.0
# Board payload of make demo, second part: the Activity Monitors and the
# Statistical Profiling Extension. QEMU has neither, so this runs on the
# mock build, whose AMU and SPE registers come from the mock register
# models: the AMU model's debugfs knobs set each CPU's "DVFS" frequency,
# IPC and memory-stall rate, and the SPE model samples the operations of
# the context each of its ticks interrupts, with synthetic latencies, data
# addresses and data sources. `amupmu amu` says MOCK AMU MODEL in its
# header and the SPE recording and report name the mock model as their
# backend. The workloads are real; the AMU figures and SPE records are the
# models'.
. /lib.sh

tap_check insmod insmod "$AMUPMU_KO"
board_backend
model=/sys/kernel/debug/amupmu/amu_model
# two "DVFS" operating points: CPU 0 a big core at 2.4 GHz, CPU 1 at 1.2 GHz
demo amu-model-set sh -c "echo '0 freq=2400000000 ipc=2100 stall=150' >$model &&
	echo '1 freq=1200000000 ipc=900 stall=400' >$model && cat $model"
# the branchy workload pinned to CPU 0 (busy) while CPU 1 idles
demo amupmu-amu sh -c 'amupmu amu -- taskset 1 amupmu-workload branchy 1000000 0.1 2>&1'
demo amupmu-info-amu sh -c 'amupmu info | sed -n "/^cpu0/,/^cpu1/p"'

# SPE: the debugfs knobs, then loads and stores of a pointer chase on CPU 0
# sampled every 1024 operations with their latencies, and the report
mount -t debugfs none /sys/kernel/debug 2>/dev/null
demo amupmu-spe-knobs sh -c 'amupmu spe knobs 2>&1'
demo amupmu-spe-record sh -c 'amupmu spe record -C 0 --type ld,st --interval 1024 --ts -o /tmp/demo-spe.data \
	-- taskset 1 amupmu-workload chase 2000000 4096 2>&1'
demo amupmu-spe-report sh -c 'amupmu spe report -i /tmp/demo-spe.data --top 5 2>&1'
demo amupmu-spe-dump sh -c 'amupmu spe dump -i /tmp/demo-spe.data 2>&1 | head -24'
tap_check rmmod rmmod amupmu
