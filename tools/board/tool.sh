# SPDX-License-Identifier: GPL-2.0
# The amupmu tool on the board (busybox sh; sourced by payloads after
# /lib.sh). Backend: QEMU TCG PMUv3, in exclusive mode (the amupmu
# devicetree) or shared mode (the stock one: perf core counts for amupmu);
# the same checks in both (info_mode below). Instruction counts are exact
# only under -icount (INST_RETIRED counts nothing in TCG without it).

owner() { cat /sys/class/misc/amupmu/pmu_owner 2>/dev/null || echo unloaded; }
# the PMU mode amupmu info says is in force: exclusive, shared, refused, none
# (lib.sh's pmu_mode reads sysfs instead and says "off" for refused)
info_mode() { amupmu info 2>/dev/null | sed -n 's/^pmu mode: *\([a-z]*\):.*/\1/p'; }
icount() { case $AMUPMU_BOARD in *icount1) return 0 ;; esac; return 1; }
# intervals N: N under -icount; 1 without it, where guest time follows the
# host's clock and a loaded host can keep the tool off its vCPU for several
# of them (an interval's report is then late, never repeated)
intervals() { if icount; then echo "$1"; else echo 1; fi; }

# wait_file FILE: until FILE exists, up to 60 s (a loaded host without
# -icount can take seconds to start a command)
wait_file() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	[ -e "$1" ]
}

# holder_cmd NAME: a command that says it runs (/tmp/NAME.held) and runs
# until /tmp/NAME.release exists: "amupmu stat -- CMD" counts before it
# starts CMD, so once the file is there the session is in place, and it
# stays there until released, however slow the host
holder_cmd() {
	rm -f "/tmp/$1.held" "/tmp/$1.release"
	echo ": >/tmp/$1.held; while [ ! -e /tmp/$1.release ]; do sleep 0.05; done"
}

# the value of EVENT in FILE, "amupmu stat -x," output in perf stat's
# columns (value,unit,event,run time,running %,metric value,metric unit)
csv_count() { grep "^[0-9]*,,$2," "$1" | head -1 | cut -d, -f1; }

# stat of the fixed loop: 2 * N instructions at EL0, within 0.1 %. The
# loop is pinned to CPU 0 and only CPU 0 counted: QEMU's -icount is one
# instruction clock for all vCPUs, which makes the other (idle) vCPU
# "retire" instructions too, and a migrating task's EL0 count fuzzy. The
# rest is the workload's start and exit and the tool's own EL0 code
# between enable and disable (printed from a 1-iteration run).
stat_fixed_loop() {
	amupmu stat -C 0 -e inst_retired:u -x, -o /tmp/one.csv -- taskset 1 amupmu-workload loop 1 || return 1
	echo "# overhead of a 1-iteration run: $(csv_count /tmp/one.csv inst_retired:u) inst_retired:u"
	n=100000000 expect=200000000
	amupmu stat -C 0 -e inst_retired:u,cpu_cycles:u -x, -o /tmp/loop.csv -- taskset 1 amupmu-workload loop $n ||
		return 1
	sed 's/^/# /' /tmp/loop.csv
	got=$(csv_count /tmp/loop.csv inst_retired:u)
	[ -n "$got" ] || return 1
	diff=$((got > expect ? got - expect : expect - got))
	echo "# fixed loop: expected $expect inst_retired:u, measured $got, off by $diff ($((diff * 1000000 / expect)) ppm)"
	[ $((diff * 1000)) -le $expect ]
}

# the perf-stat-like table of a branchy workload with derived metrics
stat_table() {
	amupmu stat -o /tmp/table.txt -- amupmu-workload branchy 1000000 0.1 || return 1
	sed 's/^/# /' /tmp/table.txt
	# perf's header for -a, counts, the elapsed time; amupmu's notes as
	# comments: every other line is blank, a count or the header
	grep -q "^ Performance counter stats for 'system wide':$" /tmp/table.txt &&
		grep -Eq '^ *[0-9,]+      cpu_cycles( |$)' /tmp/table.txt &&
		grep -q '^ *[0-9.]* seconds time elapsed$' /tmp/table.txt &&
		grep -q '^# counted on CPUs' /tmp/table.txt &&
		! grep -v -e '^$' -e '^#' -e '^ *[0-9,]*      [a-z_:]' -e 'seconds time elapsed$' \
			-e 'Performance counter stats' /tmp/table.txt
}

stat_exit_status() {
	amupmu stat -e cpu_cycles -o /dev/null -- sh -c 'exit 7'
	[ $? = 7 ]
}

# perf stat --json: one object per counter and line, perf's keys
stat_json() {
	amupmu stat --json -e cpu_cycles,inst_retired -o /tmp/stat.json -- amupmu-workload loop 1000 || return 1
	sed 's/^/# /' /tmp/stat.json
	[ "$(wc -l </tmp/stat.json)" = 2 ] &&
		grep -q '^{"counter-value" : "[0-9]*\.[0-9]*", "unit" : "", "event" : "cpu_cycles", "event-runtime" : [0-9]*, "pcnt-running" : [0-9.]*}$' /tmp/stat.json &&
		grep -q '"event" : "inst_retired", .*"metric-value" : "[0-9.]*", "metric-unit" : "ipc"}$' /tmp/stat.json
}

stat_interval() {
	amupmu stat -I 100 -x, -e cpu_cycles -o /tmp/iv.csv -- sleep 1 || return 1
	sed 's/^/# /' /tmp/iv.csv
	# interval lines carry perf's time column first, the totals after them
	# perf's "summary" (perf stat -I --summary)
	[ "$(grep -c '^[0-9.]*,[0-9]*,,cpu_cycles,[0-9]*,[0-9.]*,,$' /tmp/iv.csv)" -ge "$(intervals 3)" ] &&
		grep -q '^summary,[0-9]*,,cpu_cycles,' /tmp/iv.csv
}

# no command: whole CPUs until SIGINT or SIGTERM, as perf stat -a counts;
# the report, then the signal's status (perf stat's sig_atexit())
stat_until_signal() {
	for sig in INT TERM; do
		amupmu stat -a -e cpu_cycles -o /tmp/sw.txt &
		pid=$!
		sleep 1
		kill -$sig $pid
		wait $pid
		rc=$?
		sed 's/^/# /' /tmp/sw.txt
		want=130
		[ $sig = TERM ] && want=143
		echo "# SIG$sig: status $rc, want $want"
		[ $rc = $want ] || return 1
		grep -q "^ Performance counter stats for 'system wide':$" /tmp/sw.txt &&
			grep -q '^ *[1-9][0-9,]*      cpu_cycles' /tmp/sw.txt &&
			grep -q '^# counted on CPUs' /tmp/sw.txt && ! grep -q '^# command' /tmp/sw.txt || return 1
	done
	# with -I: intervals until the signal, then perf's summary
	amupmu stat -I 100 -x, -e cpu_cycles -o /tmp/swi.csv &
	pid=$!
	sleep 1
	kill -INT $pid
	wait $pid
	rc=$?
	sed 's/^/# /' /tmp/swi.csv
	[ $rc = 130 ] && [ "$(grep -c '^[0-9.]*,[0-9]*,,cpu_cycles,' /tmp/swi.csv)" -ge "$(intervals 5)" ] &&
		grep -q '^summary,[0-9]*,,cpu_cycles,' /tmp/swi.csv
}

# perf's event syntax: a group with its modifiers, the PMU syntax, the
# generic names of Linux's PMUv3 map (QEMU implements few events: cycles
# and instructions; "branches" is BR_RETIRED, which it lacks)
stat_perf_syntax() {
	amupmu stat -e '{cycles,instructions}:u,amupmu/event=0x11/k,cpu-cycles' -x, -o /tmp/syn.csv -- \
		amupmu-workload loop 1000 || return 1
	sed 's/^/# /' /tmp/syn.csv
	for e in cycles:u instructions:u amupmu/event=0x11/k cpu-cycles; do
		grep -q "^[0-9]*,,$e,[0-9]*,[0-9.]*," /tmp/syn.csv || return 1
	done
	# cycles:u and instructions:u give the IPC, on instructions:u's line
	grep -q '^[0-9]*,,instructions:u,[0-9]*,[0-9.]*,[0-9.]*,ipc$' /tmp/syn.csv || return 1
	amupmu stat -e branches -- true 2>/tmp/syn.err
	rc=$?
	sed 's/^/# /' /tmp/syn.err
	# (stat_table's default set says whether this CPU has BR_RETIRED)
	if grep -q 'br_retired left out of the default set' /tmp/table.txt; then
		[ $rc = 1 ] && grep -q 'branches (0x0021): not implemented' /tmp/syn.err
	else
		[ $rc = 0 ]
	fi
}

# perf stat's -A, -r, --interval-count, -M and --metric-only
stat_per_cpu() {
	amupmu stat -A -e cpu_cycles -x, -o /tmp/pc.csv -- sleep 0.2 || return 1
	sed 's/^/# /' /tmp/pc.csv
	n=$(grep -c ^processor /proc/cpuinfo)
	[ "$(grep -c '^CPU[0-9]*,[0-9]*,,cpu_cycles,' /tmp/pc.csv)" = "$n" ] && grep -q '^CPU0,' /tmp/pc.csv &&
		grep -q "^CPU$((n - 1))," /tmp/pc.csv
}

stat_repeat() {
	amupmu stat -r 3 -C 0 -e inst_retired:u,cpu_cycles:u -o /tmp/r.txt -- taskset 1 amupmu-workload loop 100000 ||
		return 1
	sed 's/^/# /' /tmp/r.txt
	grep -q "^ Performance counter stats for 'CPU(s) 0' (3 runs):$" /tmp/r.txt &&
		grep -q ' seconds time elapsed' /tmp/r.txt || return 1
	amupmu stat -r 3 -C 0 -e inst_retired:u -x, -o /tmp/r.csv -- taskset 1 amupmu-workload loop 100000 || return 1
	sed 's/^/# /' /tmp/r.csv
	# the noise column after the event: the mean of 3 runs of the same loop
	grep -q '^[0-9.]*,,inst_retired:u,[0-9.]*%,[0-9]*,[0-9.]*,,$' /tmp/r.csv || return 1
	# under -icount the same 200000 loop instructions each run; CPU 0 is
	# counted whole, so whatever else runs at EL0 there in a run (the
	# tool itself, a shell) adds to it: 0.00 % and 2.19 % seen. The
	# deviation's arithmetic is tested exactly on the host (RunStats);
	# here it stays within a few per cent
	if icount; then awk -F, '$3 == "inst_retired:u" { exit !($4 + 0 < 5) }' /tmp/r.csv || return 1; fi
}

stat_interval_count() {
	amupmu stat -I 100 --interval-count 3 -x, -e cpu_cycles -o /tmp/ic.csv
	rc=$?
	sed 's/^/# /' /tmp/ic.csv
	# no command: 3 intervals, the totals, status 0 (no signal ended it)
	[ $rc = 0 ] && [ "$(grep -c '^[0-9.]*,[0-9]*,,cpu_cycles,' /tmp/ic.csv)" = 3 ] &&
		grep -q '^summary,[0-9]*,,cpu_cycles,' /tmp/ic.csv
}

stat_metric_only() {
	amupmu stat -M ipc --metric-only -x, -o /tmp/mo.csv -- amupmu-workload loop 100000 || return 1
	sed 's/^/# /' /tmp/mo.csv
	# -M alone counts the metric's events; a header line, a line of values
	[ "$(sed -n 1p /tmp/mo.csv)" = "ipc," ] && sed -n 2p /tmp/mo.csv | grep -q '^[0-9.]*,$'
}

stat_bad_event() {
	amupmu stat -e inst_retird -- true 2>/tmp/err.txt
	rc=$?
	sed 's/^/# /' /tmp/err.txt
	[ $rc = 1 ] && grep -q "unknown event 'inst_retird'; did you mean 'inst_retired'" /tmp/err.txt
}

stat_busy() {
	n=$(amupmu info | grep -o '[0-9]* event counters' | head -1 | cut -d' ' -f1)
	[ -n "$n" ] || return 1
	ev=cpu_cycles i=0
	while [ $i -lt "$n" ]; do ev=$ev,sw_incr; i=$((i + 1)); done
	amupmu stat -e "$ev" -o /dev/null -- sh -c "$(holder_cmd busy)" &
	holder=$!
	wait_file /tmp/busy.held || { echo "# the holder did not start"; touch /tmp/busy.release; wait $holder; return 1; }
	amupmu stat -e cpu_cycles -- true 2>/tmp/err.txt
	rc=$?
	touch /tmp/busy.release
	wait $holder
	sed 's/^/# /' /tmp/err.txt
	if [ "$(info_mode)" = shared ]; then
		# perf core places the counters: none is amupmu's to call free
		[ $rc = 1 ] && grep -q 'AMUPMU_PMU_CONFIG (perf core could not schedule 1 pinned counters): Device or resource busy (EBUSY)' /tmp/err.txt
	else
		[ $rc = 1 ] && grep -q 'AMUPMU_PMU_CONFIG (0 counters free, 1 asked): Device or resource busy (EBUSY)' /tmp/err.txt
	fi
}

# arm_pmu owns the PMU and shared mode is off: refused, and the message
# says why
stat_kernel_owner() {
	amupmu stat -e cpu_cycles -- true 2>/tmp/err.txt
	rc=$?
	sed 's/^/# /' /tmp/err.txt
	[ $rc = 1 ] && grep -qF "AMUPMU_PMU_CONFIG: PMU owned by the kernel and shared mode is off (module parameter pmu_shared=N, or no arm_pmu registered with perf core) (ENXIO)" /tmp/err.txt
}

# amupmu info says which mode is in force and why, in text and JSON
info_pmu_mode() {
	amupmu info >/tmp/info.txt && amupmu info --json >/tmp/info.json || return 1
	grep '^pmu ' /tmp/info.txt | sed 's/^/# /'
	case $1 in
	shared) grep -q '^pmu mode: *shared: arm_pmu owns the PMU, amupmu counts through perf core (pmu_shared=Y)$' /tmp/info.txt &&
		grep -q '"pmu_mode": "shared"' /tmp/info.json ;;
	exclusive) grep -q '^pmu mode: *exclusive: devicetree node amupmu,pmuv3$' /tmp/info.txt &&
		grep -q '"pmu_mode": "exclusive"' /tmp/info.json ;;
	refused) grep -qx 'pmu mode: *refused: the kernel owns the PMU and shared mode is off (pmu_shared=N, or no arm_pmu registered with perf core)' /tmp/info.txt &&
		grep -q '"pmu_mode": "refused"' /tmp/info.json ;;
	*) return 1 ;;
	esac
}

# shared mode: stat's comment line says so, no CPU evicted
stat_shared_comment() {
	amupmu stat -e cpu_cycles -o /tmp/sh.txt -- amupmu-workload loop 1000 || return 1
	sed 's/^/# /' /tmp/sh.txt
	grep -q '^# pmu: shared mode: arm_pmu owns the PMU, counted through perf core (pinned counters)$' /tmp/sh.txt &&
		! grep -q 'evicted' /tmp/sh.txt
}

# stat --multiplex: shared mode multiplexes 9 events over QEMU's 6 event
# counters (+ the cycle counter, which INST_RETIRED cannot use); each -x
# line is perf's estimate of the fixed loop's 2 * N instructions (within
# 20 %; under -icount, else cycles and no bound) with its running share,
# at least one below 100 %; the table has perf's "(NN.NN%)". Exclusive
# mode refuses it with the reason.
stat_multiplex() {
	ev=cpu_cycles:u
	icount && ev=inst_retired:u
	e9=$ev,$ev,$ev,$ev,$ev,$ev,$ev,$ev,$ev
	if [ "$(info_mode)" != shared ]; then
		amupmu stat --multiplex -C 0 -e "$e9" -- true 2>/tmp/mux.err
		rc=$?
		sed 's/^/# /' /tmp/mux.err
		[ $rc = 1 ] && grep -q 'AMUPMU_PMU_CONFIG_MULTIPLEX: amupmu owns the PMU (exclusive mode)' /tmp/mux.err
		return
	fi
	n=20000000 expect=40000000
	amupmu stat --multiplex -C 0 -e "$e9" -x, -o /tmp/mux.csv -- taskset 1 amupmu-workload loop $n || return 1
	sed 's/^/# /' /tmp/mux.csv
	rows=0 partial=0
	# value,unit,event,run time (ns),running %,metric value,metric unit
	while IFS=, read -r v _ e _ pct _; do
		[ "$e" = $ev ] || continue
		rows=$((rows + 1))
		[ "$pct" = 100.00 ] || partial=$((partial + 1))
		case $v in '' | *[!0-9]*) echo "# not a count: $v"; return 1 ;; esac
		[ $ev = inst_retired:u ] || continue
		d=$((v > expect ? v - expect : expect - v))
		[ $((d * 5)) -le $expect ] || { echo "# $v is more than 20 % off $expect"; return 1; }
	done </tmp/mux.csv
	echo "# $rows lines of $ev, $partial with a running share below 100 %"
	[ $rows = 9 ] && [ $partial -ge 1 ] &&
		grep -q '^# pmu: shared mode: .* (multiplexed: ' /tmp/mux.csv || return 1
	amupmu stat --multiplex -C 0 -e "$e9" -o /tmp/mux.txt -- taskset 1 amupmu-workload loop $n || return 1
	sed 's/^/# /' /tmp/mux.txt
	grep -q " $ev  *([0-9][0-9]*\.[0-9][0-9]%)\$" /tmp/mux.txt
}

# pmu_shared=N where shared mode was on: new groups refused with the
# reason, amupmu info says so; Y again after
shared_mode_off() {
	p=/sys/module/amupmu/parameters/pmu_shared
	echo N >$p || return 1
	info_pmu_mode refused && stat_kernel_owner
	rc=$?
	echo Y >$p
	[ $rc = 0 ] && [ "$(cat $p)" = Y ] && [ "$(info_mode)" = shared ]
}

# the module cannot go away under an open session: rmmod is refused while
# stat counts, and stat ends normally
rmmod_while_counting() {
	amupmu stat -e cpu_cycles -o /tmp/held.txt -- sh -c "$(holder_cmd rmmod)" &
	holder=$!
	wait_file /tmp/rmmod.held || { echo "# the holder did not start"; touch /tmp/rmmod.release; wait $holder; return 1; }
	if rmmod amupmu 2>/tmp/rmmod.txt; then
		touch /tmp/rmmod.release
		wait $holder
		echo "# rmmod succeeded under an open session"
		insmod "$AMUPMU_KO"
		return 1
	fi
	sed 's/^/# /' /tmp/rmmod.txt
	touch /tmp/rmmod.release
	wait $holder && grep -q cpu_cycles /tmp/held.txt
}

calibrate_not_x2() {
	rm -f /tmp/cal
	AMUPMU_CALIBRATION=/tmp/cal amupmu calibrate >/tmp/cal.txt 2>&1
	rc=$?
	sed 's/^/# /' /tmp/cal.txt
	[ $rc = 0 ] && grep -q 'no erratum of the catalogue applies' /tmp/cal.txt &&
		grep -q 'nothing stored' /tmp/cal.txt && [ ! -e /tmp/cal ]
}

# through taskset: the mappings of the last exec name the samples
record_report() {
	amupmu record -C 0 -e cpu_cycles:u -c 100000 -o /tmp/loop.rec -- taskset 1 amupmu-workload loop 20000000 ||
		return 1
	amupmu report -i /tmp/loop.rec --top 5 >/tmp/report.txt || return 1
	sed 's/^/# /' /tmp/report.txt
	# the loop's function is the hottest symbol of the static binary
	sed -n '/hottest symbols/,/^$/p' /tmp/report.txt | sed -n 3p | grep -q 'amupmu::workloads::insn_loop'
}

# amupmu doctor with the module loaded: every check counting needs is ok
# (the PMU mode in force, $1), the AMU and SPE as the build has them (mock:
# the model, said to be one; prod: QEMU's CPUs have neither), in text and
# JSON; exit status 0
doctor_loaded() {
	amupmu doctor >/tmp/doctor.txt
	rc=$?
	amupmu doctor --json >/tmp/doctor.json
	jrc=$?
	sed 's/^/# /' /tmp/doctor.txt
	if [ $rc != 0 ] || [ $jrc != 0 ]; then
		echo "# exit status $rc, --json $jrc"
		return 1
	fi
	for line in '^  ok    loaded: amupmu is loaded' '^  ok    node: /dev/amupmu (mode 0666, group root) opened' \
		'^  ok    abi: ' '^  ok    capability: CAP_PERFMON: ' "^  ok    mode: $1: " '^  ok    cpu0: PMUv3' \
		'^counting works ('; do
		grep -q "$line" /tmp/doctor.txt || { echo "# no line '$line'"; return 1; }
	done
	case $(cat /sys/class/misc/amupmu/backend) in
	mock) grep -q '^  warn  present: mock: the AMU is the test build' /tmp/doctor.txt &&
		grep -q '^  warn  present: mock: SPE.* on CPUs 0-[0-9]* is the test build' /tmp/doctor.txt &&
		grep -q '^  ok    device: the mock model is amupmu' /tmp/doctor.txt || return 1 ;;
	*) grep -q '^  skip  present: no CPU implements the AMU' /tmp/doctor.txt &&
		grep -q '^  skip  present: no CPU implements SPE' /tmp/doctor.txt || return 1 ;;
	esac
	grep -q '"counting": true,' /tmp/doctor.json &&
		grep -q '"unit": "pmu",' /tmp/doctor.json && grep -q '"check": "mode",' /tmp/doctor.json || return 1
	# --device naming a file or another driver's node is not opened: the
	# reason, and counting does not work (status 1)
	amupmu doctor --device /proc/version >/tmp/doctor-notdev.txt
	rc=$?
	sed 's/^/# /' /tmp/doctor-notdev.txt | grep node:
	[ $rc = 1 ] && grep -q '^  fail  node: /proc/version is not a character device$' /tmp/doctor-notdev.txt || return 1
	amupmu doctor --device /dev/null >/tmp/doctor-null.txt
	rc=$?
	sed 's/^/# /' /tmp/doctor-null.txt | grep node:
	[ $rc = 1 ] && grep -q "^  fail  node: /dev/null is device 1:3, not amupmu's ($(cat /sys/class/misc/amupmu/dev))\$" /tmp/doctor-null.txt
}

# amupmu doctor as uid 65534 without capabilities: the capability fails
# with its fix, counting does not work (status 1)
doctor_unprivileged() {
	/selftests/amupmu_runas 65534 amupmu doctor >/tmp/doctor-nobody.txt 2>&1
	rc=$?
	sed 's/^/# /' /tmp/doctor-nobody.txt
	[ $rc = 1 ] && grep -q '^  fail  capability: no CAP_PERFMON (nor CAP_SYS_ADMIN)' /tmp/doctor-nobody.txt &&
		grep -q "^        fix: run it as root, or give the capability to one group's members (perf-security.rst): sudo groupadd -f perf_users && .*sudo setcap cap_perfmon+ep" /tmp/doctor-nobody.txt &&
		grep -q '^  warn  perf_event_paranoid: -\{0,1\}[0-9]*: .*CAP_PERFMON' /tmp/doctor-nobody.txt &&
		grep -q '^counting does not work (' /tmp/doctor-nobody.txt
}

# amupmu doctor without the module: not loaded, and this initramfs has no
# amupmu.ko under /lib/modules and no DKMS; the device and PMU mode are
# not checked; arm_pmu's PMU is there on the stock devicetree, the amupmu
# one gives the PMU to amupmu; status 1, JSON "counting": false
doctor_unloaded() {
	amupmu doctor >/tmp/doctor-unloaded.txt
	rc=$?
	amupmu doctor --json >/tmp/doctor-unloaded.json
	jrc=$?
	sed 's/^/# /' /tmp/doctor-unloaded.txt
	[ $rc = 1 ] && [ $jrc = 1 ] &&
		grep -q "^  fail  loaded: amupmu is not loaded and no amupmu.ko is built for kernel $(uname -r) (no amupmu-dkms)$" /tmp/doctor-unloaded.txt &&
		grep -q "^        fix: sudo apt install amupmu-dkms linux-headers-$(uname -r)$" /tmp/doctor-unloaded.txt &&
		grep -q '^  skip  node: the module is not loaded$' /tmp/doctor-unloaded.txt &&
		grep -q '^  skip  mode: unknown without the module$' /tmp/doctor-unloaded.txt &&
		grep -q '"counting": false,' /tmp/doctor-unloaded.json || return 1
	case $AMUPMU_BOARD in
	*/amupmu/*) grep -q '^  ok    arm_pmu: none registered: the devicetree gives the PMU to amupmu' /tmp/doctor-unloaded.txt ;;
	*) grep -q '^  ok    arm_pmu: registered with perf core: armv8_' /tmp/doctor-unloaded.txt ;;
	esac
}

# with the module loaded
tool_tests() {
	pmode=$(info_mode)
	echo "# amupmu tool tests, pmu owner $(owner), pmu mode $pmode, board $AMUPMU_BOARD"
	tap_check stat-bad-event stat_bad_event
	tap_check calibrate-not-x2 calibrate_not_x2
	tap_check "info-pmu-mode-$pmode" info_pmu_mode "$pmode"
	case $pmode in
	exclusive | shared) tap_check "doctor-$pmode" doctor_loaded "$pmode" ;;
	esac
	tap_check doctor-unprivileged doctor_unprivileged
	monitor_tool_tests
	case $pmode in
	exclusive | shared)
		if icount; then tap_check stat-fixed-loop-0.1% stat_fixed_loop; fi
		tap_check stat-table stat_table
		tap_check stat-exit-status stat_exit_status
		tap_check stat-json stat_json
		tap_check stat-interval stat_interval
		tap_check stat-system-wide-until-signal stat_until_signal
		tap_check stat-perf-event-syntax stat_perf_syntax
		tap_check stat-per-cpu stat_per_cpu
		tap_check stat-repeat stat_repeat
		tap_check stat-interval-count stat_interval_count
		tap_check stat-metric-only stat_metric_only
		tap_check stat-busy stat_busy
		tap_check stat-multiplex stat_multiplex
		tap_check rmmod-refused-while-counting rmmod_while_counting
		tap_check record-report record_report
		if [ "$pmode" = shared ]; then
			tap_check stat-shared-comment stat_shared_comment
			tap_check shared-mode-off-enxio shared_mode_off
		fi
		;;
	refused)
		tap_check stat-kernel-owner-enxio stat_kernel_owner
		;;
	esac
}

# after rmmod
tool_tests_unloaded() {
	tap_check doctor-no-module doctor_unloaded
	tap_check stat-no-module sh -c 'amupmu stat -- true 2>/tmp/err.txt; rc=$?; cat /tmp/err.txt;
		[ $rc = 2 ] && grep -q "is the amupmu module loaded" /tmp/err.txt'
	if [ -x /tests/amupmu_board_tests ]; then
		run_test amupmu_board_tests-unloaded /tests/amupmu_board_tests -r tap --use-colour no "[unloaded]"
	fi
}

# ---------------------------------------------------------------- record/report of
# dynamic programs and their children (issue 14). Backend: QEMU TCG PMUv3,
# in exclusive mode (the amupmu devicetree) or shared mode (the stock one).

# amupmu-workload-dyn (dynamically linked: /lib/ld-linux-aarch64.so.1 and
# /lib/libc.so.6) spends its time in libc's strcspn and, in the child it
# forks, in strspn: both named from the libc of the mappings read at the
# processes' start and exit stops, the child's too
record_dynamic() {
	[ -x /tests/amupmu-workload-dyn ] || { echo "# no /tests/amupmu-workload-dyn"; return 1; }
	amupmu record -e cpu_cycles:u -c 100000 -o /tmp/dyn.rec -- amupmu-workload-dyn 3000 || return 1
	amupmu report -i /tmp/dyn.rec --top 6 >/tmp/dyn.txt || return 1
	sed 's/^/# /' /tmp/dyn.txt
	sed -n '/hottest symbols/,/^$/p' /tmp/dyn.txt >/tmp/dyn-syms.txt
	grep -q '\[\.\] strcspn  /lib/libc.so.6$' /tmp/dyn-syms.txt &&
		grep -q '\[\.\] strspn  /lib/libc.so.6$' /tmp/dyn-syms.txt || return 1
	# the thread that named itself dyn-thread has its own command rows
	# (perf's comm is the thread's), its process's main thread its own
	amupmu report -i /tmp/dyn.rec --sort comm,sym --top 8 >/tmp/dyn-comm.txt || return 1
	sed -n '/hottest symbols/,/^$/p' /tmp/dyn-comm.txt | sed 's/^/# /'
	grep -q '  dyn-thread  \[\.\] strcspn$' /tmp/dyn-comm.txt &&
		grep -q '  amupmu-workload  \[\.\] strcspn$' /tmp/dyn-comm.txt
}

# amupmu script of that recording: perf script's lines, libc named
script_dynamic() {
	amupmu script -i /tmp/dyn.rec >/tmp/dyn.script || return 1
	head -6 /tmp/dyn.script | sed 's/^/# /'
	grep -q '^amupmu-workload *[0-9]*/[0-9]* *\[00[01]\] *[0-9]*\.[0-9]\{6\}: *100000 cpu_cycles:u: $' /tmp/dyn.script &&
		grep -q '^	 *[0-9a-f]* strspn+0x[0-9a-f]* (/lib/libc.so.6)$' /tmp/dyn.script
}

# the kernel's functions named from /proc/kallsyms (root sees its
# addresses here); two events in one recording, each sample's own. A
# named kernel function among the hottest symbols, whichever command ran
# it: under -icount the PMU interrupt of a kernel-only counter often comes
# after the return to user space (kept, with the user PC, as perf keeps
# them), so dd's own kernel samples may fall below the 2 % limit.
record_kernel_two_events() {
	amupmu record -e cpu_cycles:u,cpu_cycles:k -c 100000 -o /tmp/k.rec -- \
		dd if=/dev/zero of=/dev/null bs=64k count=2000 2>/dev/null || return 1
	amupmu report -i /tmp/k.rec --sort comm,sym --percent-limit 2 >/tmp/k.txt || return 1
	sed 's/^/# /' /tmp/k.txt
	grep -q '^ksym 0x' /tmp/k.rec &&
		grep -q '^# samples per event: cpu_cycles:u [1-9][0-9]*, cpu_cycles:k [1-9][0-9]*$' /tmp/k.txt &&
		grep -q '^ *[0-9.]*%  [0-9]*  [a-z]*  \[k\] [a-z_]' /tmp/k.txt
}

# -F: the period from the event's rate, written with the frequency
record_frequency() {
	amupmu record -F 500 -e cpu_cycles:u -o /tmp/f.rec -- amupmu-workload loop 20000000 2>/tmp/f.err || return 1
	sed 's/^/# /' /tmp/f.err
	grep -q '^frequency 500$' /tmp/f.rec && grep -q 'amupmu record: -F 500: cpu_cycles:u at [0-9]*/s on CPU 0' /tmp/f.err
}

# -a: no command, until SIGTERM; what ran meanwhile is in the recording
record_all_cpus() {
	amupmu record -a -e cpu_cycles:u -o /tmp/a.rec 2>/tmp/a.err &
	rec=$!
	i=0
	while ! grep -q 'until Ctrl-C' /tmp/a.err && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	# half a second or so (-icount: 0.4 guest s): named by the tool's
	# drains (every 250 ms) while it runs
	amupmu-workload loop 200000000
	kill -TERM $rec
	wait $rec || return 1
	sed 's/^/# /' /tmp/a.err
	amupmu report -i /tmp/a.rec --sort comm --top 3 >/tmp/a.txt || return 1
	sed 's/^/# /' /tmp/a.txt
	grep -q '^command$' /tmp/a.rec && grep -q '  amupmu-workload$' /tmp/a.txt || return 1
	# the workload's PCs named from its mappings, read at a drain (-a
	# follows nothing); the tool's own share small: its drains are paced
	# (it was 28 % when it woke at every sample); the bound is 10 %: a
	# loaded host has shown 6.76 % on 6.12 vhe -i
	grep -q '\[\.\] amupmu::workloads::insn_loop+0x[0-9a-f]*  /tests/amupmu-workload$' /tmp/a.txt ||
		return 1
	# shared mode: perf core throttles amupmu's counters (ABI 2.4), and
	# QEMU's slow PMU interrupts make it lower perf_event_max_sample_rate to
	# a few hundred per second at the first sampling test ("perf: interrupt
	# took too long"); a throttled counter stops until the next tick and
	# samples what runs then, the tool's drain among others: no share bound
	[ "$(info_mode)" = shared ] && return 0
	awk '$3 == "amupmu" { sub("%", "", $1); if ($1 + 0 >= 10) bad = 1 } END { exit bad }' /tmp/a.txt
}

# with the module loaded and PMU sessions working (payload pmu.sh). The tool's
# own logic, the same on every machine: on one board per kernel and
# machine pair of make check's diagonal (6.1 el1, 6.12 vhe), whose busy
# seconds under -icount cost several host seconds each
record_tool_tests() {
	case $(info_mode) in exclusive | shared) ;; *) return 0 ;; esac
	case $AMUPMU_BOARD in
	6.1/el1/* | 6.12/vhe/*) ;;
	*) echo "# record checks: on the 6.1/el1 and 6.12/vhe boards"; return 0 ;;
	esac
	tap_check record-dynamic-and-fork record_dynamic
	tap_check script-dynamic script_dynamic
	tap_check record-kernel-symbols-two-events record_kernel_two_events
	tap_check record-frequency record_frequency
	tap_check record-all-cpus record_all_cpus
}

# ---------------------------------------------------------------- the netlink
# family through the library (issue 15): amupmu monitor, amupmu info's
# fallback, a generic client that is not ours. Backend: whatever the board
# runs (the events and dumps are the driver's, not the PMU's).

# json_num KEY LINE: the number of "KEY":N in a JSON Lines line
json_num() { printf '%s\n' "$2" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }

# CPU 1 offline and online under amupmu monitor --json --count 2: two
# lines, CPU 1 offline then online, consecutive sequence numbers; the
# command ends by itself with status 0
monitor_hotplug() {
	[ -e /sys/devices/system/cpu/cpu1/online ] || { echo "# no CPU 1 that can go offline"; return 1; }
	amupmu monitor --json --count 2 >/tmp/mon.jsonl 2>/tmp/mon.err &
	pid=$!
	i=0
	while ! grep -q 'Ctrl-C ends' /tmp/mon.err && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	echo 0 >/sys/devices/system/cpu/cpu1/online && echo 1 >/sys/devices/system/cpu/cpu1/online
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill $pid 2>/dev/null
	wait $pid
	rc=$?
	sed 's/^/# /' /tmp/mon.jsonl /tmp/mon.err
	l1=$(sed -n 1p /tmp/mon.jsonl)
	l2=$(sed -n 2p /tmp/mon.jsonl)
	s1=$(json_num seq "$l1")
	s2=$(json_num seq "$l2")
	echo "# status $rc, seqs $s1 $s2"
	[ $rc = 0 ] && [ "$(wc -l </tmp/mon.jsonl)" = 2 ] && [ -n "$s1" ] && [ "$s2" = $((s1 + 1)) ] &&
		printf '%s\n' "$l1" | grep -q '^{"event":"cpu-offline","group":"cpu","seq":[0-9]*,"time_ns":[0-9]*,"cpu":1,"flags":[0-9]*}$' &&
		printf '%s\n' "$l2" | grep -q '^{"event":"cpu-online","group":"cpu","seq":[0-9]*,"time_ns":[0-9]*,"cpu":1,"flags":[0-9]*,"midr":"0x[0-9a-f]\{8\}",' &&
		grep -q '^amupmu monitor: 2 events, 0 gaps (0 events lost), 0 overruns$' /tmp/mon.err
}

# text lines until SIGINT, then status 0; SIGTERM likewise
monitor_until_signal() {
	for sig in INT TERM; do
		amupmu monitor >/tmp/mon.txt 2>/tmp/mon.err &
		pid=$!
		i=0
		while ! grep -q 'Ctrl-C ends' /tmp/mon.err && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		echo 0 >/sys/devices/system/cpu/cpu1/online && echo 1 >/sys/devices/system/cpu/cpu1/online
		# until it printed the online event (up to 30 s), not a fixed
		# 0.5 s a loaded host without -icount can outlast
		i=0
		while ! grep -q ' cpu-online cpu=1 ' /tmp/mon.txt && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
		kill -$sig $pid
		wait $pid
		rc=$?
		sed 's/^/# /' /tmp/mon.txt /tmp/mon.err
		[ $rc = 0 ] && grep -q '^[0-9]*\.[0-9]\{9\} cpu#[0-9]* cpu-offline cpu=1 flags=0x[0-9a-f]*$' /tmp/mon.txt &&
			grep -q '^[0-9]*\.[0-9]\{9\} cpu#[0-9]* cpu-online cpu=1 flags=0x[0-9a-f]* midr=0x' /tmp/mon.txt &&
			grep -q ', ended by a signal$' /tmp/mon.err || return 1
	done
}

# the session and buffer groups need CAP_PERFMON: nobody is refused with
# the kernel's own words, before any event
monitor_privilege() {
	/selftests/amupmu_runas 65534 amupmu monitor --groups cpu,session >/dev/null 2>/tmp/mon.err
	rc=$?
	sed 's/^/# /' /tmp/mon.err
	[ $rc = 1 ] && grep -q 'AMUPMU_NL_CMD_SUBSCRIBE (the session and buffer groups need CAP_PERFMON): Permission denied (EACCES)' /tmp/mon.err
}

# amupmu info without the device node: the netlink family's dumps, said
# so, with the same CPUs, MIDRs and PMU lines as through the device
# (ENOENT as root, EACCES as nobody with the node unreadable)
info_netlink_fallback() {
	amupmu info >/tmp/info-dev.txt || return 1
	mv /dev/amupmu /dev/amupmu.away
	amupmu info >/tmp/info-nl.txt 2>&1
	rc=$?
	mv /dev/amupmu.away /dev/amupmu
	sed 's/^/# /' /tmp/info-nl.txt
	[ $rc = 0 ] && grep -q '^# /dev/amupmu: No such file or directory (ENOENT): from the netlink family "amupmu" instead' /tmp/info-nl.txt ||
		return 1
	# what the dumps do not carry is said to be unknown, not shown as 0
	grep -q '^amupmu driver ABI unknown ' /tmp/info-nl.txt || return 1
	for key in '^cpu[0-9]*:' 'midr_el1:' '  pmu:' '  cpu:'; do
		[ "$(grep "$key" /tmp/info-dev.txt)" = "$(grep "$key" /tmp/info-nl.txt)" ] ||
			{ echo "# '$key' lines differ"; return 1; }
	done
	# --json: the note on stderr, the document on stdout as always
	mv /dev/amupmu /dev/amupmu.away
	amupmu info --json >/tmp/info-nl.json 2>/tmp/info-nl.err
	rc=$?
	mv /dev/amupmu.away /dev/amupmu
	sed 's/^/# /' /tmp/info-nl.err
	[ $rc = 0 ] && [ "$(head -c1 /tmp/info-nl.json)" = "{" ] && grep -q '"midr"' /tmp/info-nl.json &&
		grep -q '"source": "netlink"' /tmp/info-nl.json &&
		grep -q '^# /dev/amupmu: No such file or directory (ENOENT): from the netlink family' /tmp/info-nl.err ||
		return 1
	mode=$(stat -c %a /dev/amupmu)
	chmod 000 /dev/amupmu
	/selftests/amupmu_runas 65534 amupmu info >/tmp/info-nl2.txt 2>&1
	rc=$?
	chmod "$mode" /dev/amupmu
	sed 's/^/# /' /tmp/info-nl2.txt
	[ $rc = 0 ] && grep -q '^# /dev/amupmu: Permission denied (EACCES): from the netlink family' /tmp/info-nl2.txt
}

# a generic netlink client that is not ours (libnl-utils' genl-ctrl-list,
# dynamically linked, with its libraries in the initramfs' /lib) resolves
# the family: its version, and the four requests with the do/dump each has
# (amupmu_netlink.h). Not multicast: no groups.
genl_ctrl_interop() {
	command -v genl-ctrl-list >/dev/null || { echo "# genl-ctrl-list not on this board (make deps)"; return 1; }
	genl-ctrl-list --details >/tmp/genl.txt 2>&1 || { sed 's/^/# /' /tmp/genl.txt; return 1; }
	awk '/^0x/ { p = / amupmu version / } p' /tmp/genl.txt >/tmp/genl-amupmu.txt
	sed 's/^/# /' /tmp/genl-amupmu.txt
	grep -q '^0x[0-9a-f]* amupmu version 1$' /tmp/genl-amupmu.txt &&
		grep -q '^      op unknown (0x01) <has_doit,has_policy>$' /tmp/genl-amupmu.txt &&
		grep -q '^      op unknown (0x02) <has_doit,has_dump,has_policy>$' /tmp/genl-amupmu.txt &&
		grep -q '^      op unknown (0x03) <has_dump,has_policy>$' /tmp/genl-amupmu.txt &&
		grep -q '^      op unknown (0x04) <has_doit,has_policy>$' /tmp/genl-amupmu.txt &&
		! grep -q '^      grp ' /tmp/genl-amupmu.txt
}

# with the module loaded
monitor_tool_tests() {
	echo "# amupmu monitor and info over netlink, board $AMUPMU_BOARD"
	tap_check monitor-hotplug-json-count monitor_hotplug
	tap_check monitor-until-signal monitor_until_signal
	tap_check monitor-session-group-needs-perfmon monitor_privilege
	tap_check info-netlink-fallback info_netlink_fallback
	tap_check genl-ctrl-list-resolves-family genl_ctrl_interop
}
