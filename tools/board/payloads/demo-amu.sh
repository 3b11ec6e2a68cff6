# SPDX-License-Identifier: GPL-2.0
# Board payload of make demo, second part: the Activity Monitors. QEMU has
# no AMU, so this runs on the mock build, whose AMU registers come from the
# mock register model (its debugfs knobs set each CPU's "DVFS" frequency,
# IPC and memory-stall rate); `amupmu amu` says MOCK AMU MODEL in its
# header. The workload is real; the AMU figures are the model's.
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
tap_check rmmod rmmod amupmu
