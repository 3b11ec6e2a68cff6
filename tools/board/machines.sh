# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The board machines (bash, sourced by tools/board/run.sh and dts/check.sh):
# the QEMU options of each and the amupmu overlay that goes with it, so that
# a DTB is dumped and checked with the options of the boot that uses it.
#   el1  -M virt: the kernel runs at EL1, GICv2
#   vhe  -M virt,virtualization=on,gic-version=3: the kernel boots at EL2
#        and runs there with VHE, GICv3, as on real Armv8.1+ boards

# shellcheck disable=SC2034 # used by the scripts that source this file
BOARD_MACHINES="el1 vhe"
BOARD_CPU=max,pauth-impdef=on
BOARD_MEM=1024

# The CPU models a board may run (run.sh -c): QEMU 7.2's -cpu names. max
# (the default) has every feature QEMU emulates, with MIDR implementer 0x00
# part 0x051; the others are real cores with their real MIDR_EL1, for the
# tests of core-specific event names (payload events.sh)
BOARD_CPUS="max cortex-a76 neoverse-n1 a64fx"

# board_cpu CPU: the -cpu value of a CPU model
board_cpu() {
	case $1 in
	max) echo max,pauth-impdef=on ;;
	cortex-a76 | neoverse-n1 | a64fx) echo "$1" ;;
	*) return 1 ;;
	esac
}

# cpu_expect CPU: its MIDR_EL1 implementer/part as /proc/cpuinfo shows them
# (the cpu field of init's AMUPMU-BOARD line)
cpu_expect() {
	case $1 in
	max) echo 0x00/0x051 ;;
	cortex-a76) echo 0x41/0xd0b ;;
	neoverse-n1) echo 0x41/0xd0c ;;
	a64fx) echo 0x46/0x001 ;;
	*) return 1 ;;
	esac
}

# What any kernel prints when something is wrong, and what the debug kernel
# adds, as fixed strings separated by "|": run.sh and tools/deb-e2e.sh fail
# a boot whose kernel log has one. An Oops, BUG or WARNING, lockdep
# ("WARNING: possible circular locking ...", "BUG: Invalid wait context"),
# KASAN/KFENCE ("BUG: KASAN: ..."), UBSAN, DEBUG_OBJECTS, DEBUG_LIST, hung
# tasks, soft/hard lockups, RCU stalls (rcu_sched or rcu_preempt, expedited
# or not), workqueue lockups, usercopy, refcount, SLUB debug, IRQ storms.
BOARD_SPLATS="Oops|BUG:|WARNING:|Unable to handle kernel|Kernel panic|kernel BUG at|\
Internal error:|Call trace:|soft lockup|hard LOCKUP|self-detected stall|\
detected stalls|detected expedited stalls|workqueue lockup|blocked for more than|\
UBSAN:|ODEBUG:|list_add corruption|list_del corruption|DEBUG_LOCKS_WARN_ON|\
scheduling while atomic|sleeping function called from invalid context|\
usercopy: Kernel memory|refcount_t: |nobody cared|Poison overwritten|\
Redzone overwritten|Object already free"

# machine_opt MACH: the -M value of a machine
machine_opt() {
	case $1 in
	el1) echo virt ;;
	vhe) echo virt,virtualization=on,gic-version=3 ;;
	*) return 1 ;;
	esac
}

# machine_overlay MACH: the overlay (in dts/) that hands the machine's PMU
# to amupmu. QEMU writes the PMU PPI as <1 7 4> with a GICv3 and <1 7 0xN04>
# with a GICv2 (N: the CPU mask, which depends on -smp); the GIC drivers
# ignore that mask, so the one overlay with <1 7 4> serves both machines at
# any -smp (dts/check.sh checks it against each machine's DTB).
machine_overlay() {
	machine_opt "$1" >/dev/null && echo amupmu-virt.dtso
}

# machine_qemu MACH SMP: the QEMU command of a machine, into QEMU_CMD
machine_qemu() {
	local m
	m=$(machine_opt "$1") || return 1
	QEMU_CMD=("${QEMU:-qemu-system-aarch64}" -M "$m" -cpu "$BOARD_CPU" -smp "$2" -m "$BOARD_MEM"
		-display none -nic none)
}

# machine_dtb MACH SMP DIR: print the path of QEMU's DTB for that machine
# and -smp, dumped into DIR with the same options as the boot (once: the
# name carries a hash of the command and of the QEMU version)
machine_dtb() {
	local key f
	machine_qemu "$1" "$2" || return 1
	key=$({ printf '%s\n' "${QEMU_CMD[@]}"; "${QEMU_CMD[0]}" --version | head -1; } | md5sum | cut -c1-8)
	f=$3/$1-smp$2-$key.dtb
	if [ ! -s "$f" ]; then
		mkdir -p "$3" || return 1
		if ! "${QEMU_CMD[@]}" -machine dumpdtb="$f.tmp$$" >/dev/null 2>&1 ||
		   ! [ -s "$f.tmp$$" ] || ! mv "$f.tmp$$" "$f"; then
			rm -f "$f.tmp$$"
			return 1
		fi
	fi
	echo "$f"
}

# machine_expect MACH: what init must find on the booted machine (the
# kernel_el and gic fields of its AMUPMU-BOARD line)
machine_expect() {
	case $1 in
	el1) echo "kernel_el=1 gic=v2" ;;
	vhe) echo "kernel_el=2 gic=v3" ;;
	*) return 1 ;;
	esac
}

# machine_frames DTB: give each CPU of DTB (a dumped or overlaid virt DTB,
# changed in place) an "amupmu,cpu-frames" node (dts/bindings/perf/
# amupmu,cpu-frames.yaml) with an AMU and a PMU frame, in QEMU's
# platform-bus window (/platform-bus@c000000, 0x0c000000-0x0dffffff, where
# QEMU maps dynamic sysbus devices; unused on these boards): CPU node k of
# /cpus (in DTB order) gets /platform-bus@c000000/cpu-frames@<k*0x2000>,
# reg <k*0x2000 0x1000> "amu" and <k*0x2000+0x1000 0x1000> "pmu", and
# cpu = its phandle. Nothing answers there: only the mock build of the
# module (its frame model) may boot with these nodes, as a production
# build would read the window and take an external abort.
machine_frames() {
	local dtb=$1 bus=/platform-bus@c000000 c ph ph0='' node k=0 a
	"${FDTGET:-fdtget}" "$dtb" "$bus" ranges >/dev/null 2>&1 || {
		echo "machine_frames: $dtb has no $bus" >&2
		return 1
	}
	for c in $("${FDTGET:-fdtget}" -l "$dtb" /cpus); do
		[ "$("${FDTGET:-fdtget}" -t s "$dtb" "/cpus/$c" device_type 2>/dev/null)" = cpu ] || continue
		ph=$("${FDTGET:-fdtget}" -t x "$dtb" "/cpus/$c" phandle) || return 1
		a=$((k * 0x2000))
		node=$bus/cpu-frames@$(printf %x $a)
		"${FDTPUT:-fdtput}" -c "$dtb" "$node" &&
		"${FDTPUT:-fdtput}" -t s "$dtb" "$node" compatible amupmu,cpu-frames &&
		"${FDTPUT:-fdtput}" -t x "$dtb" "$node" reg \
			"$(printf %x $a)" 1000 "$(printf %x $((a + 0x1000)))" 1000 &&
		"${FDTPUT:-fdtput}" -t s "$dtb" "$node" reg-names amu pmu &&
		"${FDTPUT:-fdtput}" -t x "$dtb" "$node" cpu "$ph" || return 1
		[ -n "$ph0" ] || ph0=$ph
		k=$((k + 1))
	done
	[ "$k" -gt 0 ] || { echo "machine_frames: no CPU node in $dtb" >&2; return 1; }
	[ "${2:-}" = bad ] || return 0
	for a in 100000 102000 104000; do
		node=$bus/cpu-frames@$a
		"${FDTPUT:-fdtput}" -c "$dtb" "$node" &&
		"${FDTPUT:-fdtput}" -t s "$dtb" "$node" compatible amupmu,cpu-frames &&
		"${FDTPUT:-fdtput}" -t x "$dtb" "$node" reg "$a" 1000 "$(printf %x $((0x$a + 0x1000)))" 1000 ||
			return 1
	done
	"${FDTPUT:-fdtput}" -t s "$dtb" "$bus/cpu-frames@100000" reg-names amu pmu &&
	"${FDTPUT:-fdtput}" -t x "$dtb" "$bus/cpu-frames@100000" cpu "$ph0" &&
	"${FDTPUT:-fdtput}" -t s "$dtb" "$bus/cpu-frames@102000" reg-names amu foo &&
	"${FDTPUT:-fdtput}" -t x "$dtb" "$bus/cpu-frames@102000" cpu "$ph0" &&
	"${FDTPUT:-fdtput}" -t s "$dtb" "$bus/cpu-frames@104000" reg-names amu pmu
}

# machine_ppi_users DTB N: the nodes of DTB whose interrupts property names
# PPI N (3-cell GIC specifiers <1 N flags>, as both virt GICs take them),
# one path a line; nothing when the PPI is free
machine_ppi_users() {
	local dts
	dts=$("${DTC:-dtc}" -q -I dtb -O dts "$1") || return 1
	printf '%s\n' "$dts" | awk -v ppi="$2" '
		function num(s,  v, i) {
			s = tolower(s)
			if (s !~ /^0x/)
				return s + 0
			for (i = 3; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		/{[[:space:]]*$/ { path[++d] = $1; next }
		/^[[:space:]]*};/ { d--; next }
		/^[[:space:]]*interrupts = </ {
			s = $0; sub(/.*</, "", s); sub(/>.*/, "", s)
			k = split(s, c, " ")
			for (i = 1; i + 1 <= k; i += 3)
				if (num(c[i]) == 1 && num(c[i + 1]) == ppi) {
					p = ""
					for (j = 2; j <= d; j++) p = p "/" path[j]
					print (p == "" ? "/" : p)
					break
				}
		}'
}

# machine_spe DTB [N]: add the board's SPE device node to DTB (changed in place),
# as a board whose CPUs implement SPE describes it (the binding
# Documentation/devicetree/bindings/perf/spe-pmu.yaml of Linux):
#   /spe { compatible = "arm,statistical-profiling-extension-v1";
#          interrupts = <1 5 4>; };
# The interrupt is the profiling buffer's PPI: <1 5 4> = GIC_PPI 5 (INTID
# 21), IRQ_TYPE_LEVEL_HIGH, the PPI Arm's base boards (FVP, Juno) give SPE.
# On QEMU's virt it is free on both machines: the dumped DTBs name PPIs 7
# (PMU), 9 (GIC maintenance, vhe only) and 13, 14, 11, 10 (timers), and
# QEMU's hw/arm/virt.h wires no device to PPI 5 (besides those, at most 12,
# the EL2 virtual timer). machine_spe refuses a DTB in which a node names
# PPI 5 (machine_ppi_users), and dts/check.sh checks it on each machine. No interrupt-parent: the node
# inherits the root node's, the GIC. The same specifier is right for the
# GICv2 (el1) and the GICv3 (vhe) machine for the reason
# dts/amupmu-virt.dtso gives for the PMU's <1 7 4>: both kernel GIC drivers
# take the INTID from cells 0-1 (PPI n -> INTID n + 16) and the trigger from
# cell 2 & 0xf, ignoring the GICv2 CPU mask in bits [15:8]. QEMU's CPUs have
# no SPE and nothing raises INTID 21: the node only gives the "amupmu-spe"
# driver a stock device to claim (on a production build the claim fails
# with ENODEV; the mock build's CPUs report SPE, and it succeeds). N 2 adds
# a second such node, /spe2, on the same PPI: two devices, of which
# amupmu takes one at a time (a big.LITTLE board's per-cluster SPE nodes
# would name PPI partitions instead; QEMU's GICs have none).
machine_spe() {
	local dtb=$1 users node
	if "${FDTGET:-fdtget}" "$dtb" /spe compatible >/dev/null 2>&1; then
		echo "machine_spe: $dtb has a /spe node already" >&2
		return 1
	fi
	users=$(machine_ppi_users "$dtb" 5) || return 1
	if [ -n "$users" ]; then
		echo "machine_spe: PPI 5 is taken in $dtb by: $users" >&2
		return 1
	fi
	for node in /spe $([ "${2:-1}" = 2 ] && echo /spe2); do
		"${FDTPUT:-fdtput}" -c "$dtb" "$node" &&
		"${FDTPUT:-fdtput}" -t s "$dtb" "$node" compatible arm,statistical-profiling-extension-v1 &&
		"${FDTPUT:-fdtput}" -t u "$dtb" "$node" interrupts 1 5 4 || return 1
	done
}
