#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# amupmu's module parameters at load time: pmu_counter_bits takes 32 or 64
# only; anything else (48, ...) fails the insmod with EINVAL and leaves no
# module loaded. sample_period_min refuses values below its floor the same
# way. amu (ABI 2.1, bool, 0444) takes a boolean only; with amu=0 the AMU
# is left alone: the amupmu_amu_*_test programs (run here) then expect
# AMUPMU_CPU_AMU_OFF on every CPU of a mock build, no AMUPMU_CPU_AMU,
# AMUPMU_AMU_READ EOPNOTSUPP and no AMU file in sysfs. pmu_shared (ABI 2.3, bool, 0644: shared mode where
# the kernel's arm_pmu owns the PMU) takes a boolean only at load and at run
# time (Y, N, 1, 0; other text EINVAL, the value unchanged), and INFO's
# AMUPMU_FEAT_PMU_SHARED (amupmu_session info) and the sysfs features line
# follow it: with N a CONFIG is ENXIO on a stock board, with Y it counts.
# busybox sh compatible; prints TAP 13 itself. Needs root and the
# module at $AMUPMU_KO (default: the installed one, modinfo -n amupmu;
# else /amupmu.ko). Leaves the module loaded with its default parameters.
#
# Environment:
#   AMUPMU_KO     module to insmod (default: modinfo -n amupmu, else /amupmu.ko)
#   AMUPMU_BOARD  the board line, printed (set by the board harness)

# The t_* steps are called through step "$@".
# shellcheck disable=SC2317

TAP_NAME=amupmu_modparam
# shellcheck source=selftests/amupmu/amupmu_tap.sh
. "$(dirname "$0")/amupmu_tap.sh"

AMUPMU_KO=$(amupmu_ko)

KSFT_PASS=0
KSFT_FAIL=1

PARAM=/sys/module/amupmu/parameters
BAD_BITS="48 0 1 16 31 33 63 65 128 -32 abc"
BAD_AMU="2 abc -1 x"
BAD_SHARED="2 abc -1 x maybe"
NR_TESTS=$((13 + $(echo "$BAD_BITS" | wc -w) + $(echo "$BAD_AMU" | wc -w) + $(echo "$BAD_SHARED" | wc -w)))
# AMUPMU_INFO and a counting session for the shell (next to this script)
SESSION=$(dirname "$0")/amupmu_session

step() {
	name=$1
	shift
	"$@"
	result $? "$name"
}

# einval <insmod output>: the insmod failed with EINVAL: busybox's insmod
# says strerror's "Invalid argument", kmod's (Debian's) "Invalid parameters"
einval() {
	case $1 in
	*"Invalid argument"* | *"Invalid parameters"*) return 0 ;;
	esac
	return 1
}

module_loaded() { [ -d /sys/module/amupmu ] || grep -q '^amupmu ' /proc/modules; }

kernel_trouble() {
	dmesg 2>/dev/null | grep -cE 'BUG:|WARNING:|Oops|Unable to handle kernel|Undefined instruction'
}

t_rmmod_if_loaded() {
	module_loaded || return 0
	rmmod amupmu || { log "rmmod amupmu failed"; return 1; }
	! module_loaded
}

# t_refused <value>: insmod with pmu_counter_bits=<value> fails with EINVAL,
# and no module is left behind
t_refused() {
	out=$(insmod "$AMUPMU_KO" "pmu_counter_bits=$1" 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ]; then
		log "pmu_counter_bits=$1 loaded (parameter reads $(cat "$PARAM/pmu_counter_bits" 2>/dev/null))"
		rmmod amupmu
		return 1
	fi
	if module_loaded; then
		log "pmu_counter_bits=$1 refused ($out) but the module is loaded"
		rmmod amupmu
		return 1
	fi
	einval "$out" && return 0
	log "pmu_counter_bits=$1: '$out', expected EINVAL (Invalid argument)"
	return 1
}

# t_loads <value>: insmod with pmu_counter_bits=<value> works and reads back
t_loads() {
	if ! out=$(insmod "$AMUPMU_KO" "pmu_counter_bits=$1" 2>&1); then
		log "pmu_counter_bits=$1: insmod failed: $out"
		return 1
	fi
	rc=0
	got=$(cat "$PARAM/pmu_counter_bits" 2>/dev/null)
	[ "$got" = "$1" ] || { log "pmu_counter_bits=$1 reads '$got'"; rc=1; }
	[ -c /dev/amupmu ] || [ -d /sys/class/misc/amupmu ] || { log "no amupmu device"; rc=1; }
	rmmod amupmu || { log "rmmod after pmu_counter_bits=$1 failed"; rc=1; }
	return "$rc"
}

t_period_min_floor() {
	if out=$(insmod "$AMUPMU_KO" sample_period_min=1 2>&1); then
		log "sample_period_min=1 loaded"
		rmmod amupmu
		return 1
	fi
	module_loaded && { log "sample_period_min=1 refused but loaded"; rmmod amupmu; return 1; }
	einval "$out" && return 0
	log "sample_period_min=1: '$out', expected EINVAL"
	return 1
}

# t_amu_refused <value>: insmod with amu=<value> fails with EINVAL
t_amu_refused() {
	if out=$(insmod "$AMUPMU_KO" "amu=$1" 2>&1); then
		log "amu=$1 loaded (parameter reads $(cat "$PARAM/amu" 2>/dev/null))"
		rmmod amupmu
		return 1
	fi
	module_loaded && { log "amu=$1 refused ($out) but loaded"; rmmod amupmu; return 1; }
	einval "$out" && return 0
	log "amu=$1: '$out', expected EINVAL"
	return 1
}

# the mock build's count of the AMU system register reads its model served
AMU_READS=/sys/kernel/debug/amupmu/amu_reads
# the AMU programs (Makefile's AMUPMU_AMU_TESTS)
AMU_TESTS="amupmu_amu_info_test amupmu_amu_abi_test amupmu_amu_model_test amupmu_amu_hotplug_test"

# t_amu <0|1>: loads, reads back N/Y at mode 0444; no AMU file in sysfs
# and no "amu" feature with amu=0, where the AMU programs pass (with
# amu=1 it is the default the payloads run them on). On a mock build the
# proof that amu=0 reads no AMU system register: the model's amu_reads
# is 0 after the load and after the AMU programs (with amu=1 it is not:
# the counter works)
t_amu() {
	want=N
	[ "$1" = 1 ] && want=Y
	if ! out=$(insmod "$AMUPMU_KO" "amu=$1" 2>&1); then
		log "amu=$1: insmod failed: $out"
		return 1
	fi
	rc=0
	got=$(cat "$PARAM/amu" 2>/dev/null)
	[ "$got" = "$want" ] || { log "amu=$1 reads '$got', expected $want"; rc=1; }
	mode=$(stat -c %a "$PARAM/amu" 2>/dev/null)
	[ "$mode" = 444 ] || { log "$PARAM/amu mode '$mode', expected 444"; rc=1; }
	feats=$(cat /sys/class/misc/amupmu/features 2>/dev/null)
	backend=$(cat /sys/class/misc/amupmu/backend 2>/dev/null)
	log "amu=$1: backend $backend, features: $feats"
	reads=
	if [ "$backend" = mock ]; then
		if [ -r "$AMU_READS" ]; then
			reads=$(cat "$AMU_READS")
			log "amu=$1: $AMU_READS after insmod: $reads"
			if [ "$1" = 0 ] && [ "$reads" != 0 ]; then
				log "amu=0 but the mock served $reads AMU register reads"; rc=1
			fi
			if [ "$1" = 1 ] && [ "${reads:-0}" -eq 0 ] 2>/dev/null; then
				log "amu=1 and no AMU register read: the counter does not count"; rc=1
			fi
		else
			log "mock build without $AMU_READS (debugfs not mounted?)"; rc=1
		fi
	fi
	if [ "$1" = 0 ]; then
		case " $feats " in *" amu "*) log "amu=0 but features lists amu"; rc=1 ;; esac
		# the AMU register files (the frame files am<reg> follow the
		# devicetree, not the parameter)
		for f in /sys/class/misc/amupmu/cpu*/amu_version /sys/class/misc/amupmu/cpu*/amc*_el0 \
			/sys/class/misc/amupmu/cpu*/amu_group*; do
			[ -e "$f" ] && { log "amu=0 but $f exists"; rc=1; }
		done
	elif [ "$backend" = mock ]; then
		case " $feats " in *" amu "*) ;; *) log "mock build, amu=1, no amu feature"; rc=1 ;; esac
	fi
	if [ "$1" = 0 ]; then
		for t in $AMU_TESTS; do
			[ -x "$(dirname "$0")/$t" ] || continue
			"$(dirname "$0")/$t" >/tmp/amu_test.$$ 2>&1
			trc=$?
			sed 's/^/#   /' /tmp/amu_test.$$
			rm -f /tmp/amu_test.$$
			[ "$trc" = 0 ] || { log "$t with amu=$1: status $trc"; rc=1; }
		done
		if [ -n "$reads" ]; then
			reads=$(cat "$AMU_READS")
			log "amu=0: $AMU_READS after the AMU programs: $reads"
			[ "$reads" = 0 ] || { log "amu=0: $reads AMU register reads"; rc=1; }
		fi
	fi
	rmmod amupmu || { log "rmmod after amu=$1 failed"; rc=1; }
	return "$rc"
}

# ------------------------------------------------------------------ pmu_shared

# the mode INFO says: exclusive, shared, off or none (amupmu_session info)
info_mode() {
	out=$("$SESSION" info 2>&1) || { log "amupmu_session info: $out"; echo error; return; }
	echo "${out##*mode=}"
}

# the mode INFO must say with pmu_shared=<Y|N>: it only matters where the
# kernel's arm_pmu owns the PMU
want_mode() {
	case $(cat /sys/class/misc/amupmu/pmu_owner 2>/dev/null) in
	amupmu) echo exclusive ;;
	kernel) [ "$1" = Y ] && echo shared || echo off ;;
	*) echo none ;;
	esac
}

# expect_mode <Y|N> <what>: INFO follows pmu_shared; a CONFIG on CPU 0
# counts where the mode has sessions and is ENXIO where it is off
expect_mode() {
	got=$(info_mode)
	want=$(want_mode "$1")
	log "$2: pmu_shared $(cat "$PARAM/pmu_shared" 2>/dev/null), INFO mode $got ($("$SESSION" info 2>&1))"
	[ "$got" = "$want" ] || { log "$2: INFO mode '$got', expected '$want'"; return 1; }
	case $want in
	shared | exclusive)
		"$SESSION" count 0 >/tmp/sess.$$ 2>&1 &
		pid=$!
		# up to 30 s: a loaded host without -icount can take seconds
		i=0
		while ! grep -q counting /tmp/sess.$$ 2>/dev/null && kill -0 "$pid" 2>/dev/null && [ "$i" -lt 300 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -TERM "$pid" 2>/dev/null
		wait "$pid"
		src=$?
		sed 's/^/#   /' /tmp/sess.$$
		grep -q '^cpu0 value=[1-9][0-9]* ' /tmp/sess.$$
		crc=$?
		rm -f /tmp/sess.$$
		if [ "$src" != 0 ] || [ "$crc" != 0 ]; then
			log "$2: no count on CPU 0 in $want mode (status $src)"
			return 1
		fi
		;;
	off)
		out=$("$SESSION" count 0 2>&1)
		src=$?
		if [ "$src" != 3 ] || [ "$out" != "CONFIG: ENXIO" ]; then
			log "$2: CONFIG with shared mode off: status $src, '$out', expected ENXIO"
			return 1
		fi
		;;
	esac
	return 0
}

# t_shared_refused <value>: insmod with pmu_shared=<value> fails with EINVAL
t_shared_refused() {
	if out=$(insmod "$AMUPMU_KO" "pmu_shared=$1" 2>&1); then
		log "pmu_shared=$1 loaded (parameter reads $(cat "$PARAM/pmu_shared" 2>/dev/null))"
		rmmod amupmu
		return 1
	fi
	module_loaded && { log "pmu_shared=$1 refused ($out) but loaded"; rmmod amupmu; return 1; }
	einval "$out" && return 0
	log "pmu_shared=$1: '$out', expected EINVAL"
	return 1
}

# t_shared_load <0|1>: loads, reads back N/Y at mode 0644, INFO follows
t_shared_load() {
	want=N
	[ "$1" = 1 ] && want=Y
	if ! out=$(insmod "$AMUPMU_KO" "pmu_shared=$1" 2>&1); then
		log "pmu_shared=$1: insmod failed: $out"
		return 1
	fi
	rc=0
	got=$(cat "$PARAM/pmu_shared" 2>/dev/null)
	[ "$got" = "$want" ] || { log "pmu_shared=$1 reads '$got', expected $want"; rc=1; }
	mode=$(stat -c %a "$PARAM/pmu_shared" 2>/dev/null)
	[ "$mode" = 644 ] || { log "$PARAM/pmu_shared mode '$mode', expected 644"; rc=1; }
	expect_mode "$want" "insmod pmu_shared=$1" || rc=1
	rmmod amupmu || { log "rmmod after pmu_shared=$1 failed"; rc=1; }
	return "$rc"
}

# write_param <value>: echo it into pmu_shared; prints the error. The
# echo program, not the shell's: dash's builtin (Debian's sh, the
# packages' end-to-end test) reports every failed write as "I/O error",
# the program (coreutils', busybox's applet) with its errno's text
write_param() { (env echo "$1" >"$PARAM/pmu_shared") 2>&1; }

# pmu_shared written at run time: each value read back, INFO following it
t_shared_runtime() {
	rc=0
	for v in N Y 0 1 n y; do
		case $v in [Y1y]) want=Y ;; *) want=N ;; esac
		out=$(write_param "$v") || { log "echo $v > pmu_shared: $out"; rc=1; continue; }
		got=$(cat "$PARAM/pmu_shared")
		[ "$got" = "$want" ] || { log "pmu_shared=$v reads '$got', expected $want"; rc=1; }
		expect_mode "$want" "pmu_shared=$v at run time" || rc=1
	done
	return "$rc"
}

# text that is no boolean: EINVAL, the value (and INFO) unchanged, from Y and from N
t_shared_garbage() {
	rc=0
	for before in N Y; do
		write_param "$before" >/dev/null || { log "echo $before > pmu_shared failed"; return 1; }
		for v in $BAD_SHARED; do
			if out=$(write_param "$v"); then
				log "echo $v > pmu_shared accepted (reads $(cat "$PARAM/pmu_shared"))"
				rc=1
				continue
			fi
			einval "$out" || { log "echo $v > pmu_shared: '$out', expected EINVAL"; rc=1; }
			got=$(cat "$PARAM/pmu_shared")
			[ "$got" = "$before" ] || { log "echo $v > pmu_shared changed $before to $got"; rc=1; }
		done
		[ "$(info_mode)" = "$(want_mode "$before")" ] ||
			{ log "INFO mode $(info_mode) after refused writes, pmu_shared $before"; rc=1; }
	done
	write_param Y >/dev/null
	return "$rc"
}

# the sysfs features line is INFO's features (a name per bit): pmu_shared
# in it exactly when INFO has AMUPMU_FEAT_PMU_SHARED (bit 5), both values
t_shared_sysfs_features() {
	rc=0
	for v in N Y; do
		write_param "$v" >/dev/null || return 1
		feats=$(cat /sys/class/misc/amupmu/features)
		info=$("$SESSION" info) || return 1
		hex=${info#features=0x}
		hex=${hex%% *}
		bit=$(( (0x$hex >> 5) & 1 ))
		listed=0
		case " $feats " in *" pmu_shared "*) listed=1 ;; esac
		log "pmu_shared=$v: features '$feats', INFO $info"
		[ "$bit" = "$listed" ] ||
			{ log "pmu_shared=$v: INFO bit 5 (pmu_shared) $bit, sysfs lists it: $listed"; rc=1; }
	done
	return "$rc"
}

t_default() {
	insmod "$AMUPMU_KO" || { log "insmod with the defaults failed"; return 1; }
	got=$(cat "$PARAM/pmu_counter_bits" 2>/dev/null)
	log "default pmu_counter_bits $got, amu $(cat "$PARAM/amu" 2>/dev/null)," \
		"pmu_shared $(cat "$PARAM/pmu_shared" 2>/dev/null)"
	[ "$got" = 32 ] || [ "$got" = 64 ] || return 1
	[ "$(cat "$PARAM/amu" 2>/dev/null)" = Y ] && [ "$(cat "$PARAM/pmu_shared" 2>/dev/null)" = Y ]
}

t_no_kernel_trouble() {
	now=$(kernel_trouble)
	[ "${now:-0}" -le "$trouble_before" ] && return 0
	log "kernel log gained BUG/WARNING/Oops lines:"
	dmesg | grep -E 'BUG:|WARNING:|Oops|Unable to handle kernel|Undefined instruction' | tail -5 | sed 's/^/#   /'
	return 1
}

cleanup() { module_loaded || insmod "$AMUPMU_KO" 2>/dev/null; }

[ "$(id -u)" = 0 ] || skip_all "needs root"
[ -f "$AMUPMU_KO" ] || skip_all "module $AMUPMU_KO not found (set AMUPMU_KO)"
[ -x "$SESSION" ] || skip_all "$SESSION not found (built with the selftests)"
for tool in insmod rmmod; do
	command -v $tool >/dev/null || skip_all "$tool not available"
done

echo "TAP version 13"
echo "1..$NR_TESTS"
log "backend: module parameters of $AMUPMU_KO (${AMUPMU_BOARD:-board unknown})"
trouble_before=$(kernel_trouble)
trouble_before=${trouble_before:-0}
trap cleanup EXIT

step "rmmod amupmu (if loaded)" t_rmmod_if_loaded
for v in $BAD_BITS; do
	step "insmod pmu_counter_bits=$v: EINVAL, nothing loaded" t_refused "$v"
done
step "insmod pmu_counter_bits=32 loads" t_loads 32
step "insmod pmu_counter_bits=64 loads" t_loads 64
step "insmod sample_period_min=1: EINVAL, nothing loaded" t_period_min_floor
for v in $BAD_AMU; do
	step "insmod amu=$v: EINVAL, nothing loaded" t_amu_refused "$v"
done
step "insmod amu=0: the AMU left alone (the amupmu_amu_*_test programs)" t_amu 0
step "insmod amu=1: the AMU in use" t_amu 1
for v in $BAD_SHARED; do
	step "insmod pmu_shared=$v: EINVAL, nothing loaded" t_shared_refused "$v"
done
step "insmod pmu_shared=0: N, INFO and CONFIG follow" t_shared_load 0
step "insmod pmu_shared=1: Y, INFO and CONFIG follow" t_shared_load 1
step "insmod with the defaults" t_default
step "pmu_shared at run time: N Y 0 1 n y accepted, INFO and CONFIG follow" t_shared_runtime
step "pmu_shared at run time: no boolean is EINVAL, unchanged" t_shared_garbage
step "sysfs features lists pmu_shared exactly when INFO has it" t_shared_sysfs_features
step "no kernel BUG/WARNING during the test" t_no_kernel_trouble

[ $test_num -eq $NR_TESTS ] || log "ran $test_num of $NR_TESTS steps"
[ $failed -eq 0 ] && exit $KSFT_PASS
exit $KSFT_FAIL
