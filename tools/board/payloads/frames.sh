# SPDX-License-Identifier: GPL-2.0
# Board payload: the CPUs' memory-mapped AMU and PMU ID frames
# ("amupmu,cpu-frames" nodes, which run.sh adds on mock boards: -f yes,
# the default with -d amupmu -v mock; -f bad adds three nodes the driver
# must refuse). The mock frame model gives even CPUs a consistent
# Cortex-X2 r2p0 identity and odd CPUs an AMIIDR that disagrees with their
# AMPIDR. Checks that each CPU's frames are read once, on load or when the
# CPU first comes online after load, that the cross-check reports the odd
# CPUs' AMU frames only, that the bad nodes are refused, and that unload
# releases the frames.
. /lib.sh

ncpu=$(grep -c '^processor' /proc/cpuinfo)
bus=/proc/device-tree/platform-bus@c000000
bad=0
[ -d "$bus/cpu-frames@100000" ] && bad=1
drv=/sys/bus/platform/drivers/amupmu-frames
last=$((ncpu - 1))

# mark NAME: a line in the kernel log; since NAME: the log after it
mark() { echo "amupmu-frames-test: $1" >/dev/kmsg; }
since() { dmesg | sed -n "/amupmu-frames-test: $1\$/,\$p"; }
# nread NAME CPU REG: how often REG (AMIIDR/PMIIDR) of CPU was reported since NAME
nread() { since "$1" | grep -c "cpu$2: $3 0x[0-9a-f]* (part"; }
ndisagree() { since "$1" | grep -c "cpu$2: $3 0x[0-9a-f]* disagrees"; }

# every CPU of LIST read once since NAME (both frames), the others not;
# the cross-check fires for the odd CPUs' AMU frames only
read_once() { # read_once NAME LIST
	r=0
	for c in $(seq 0 "$last"); do
		want=0
		case " $2 " in *" $c "*) want=1 ;; esac
		for reg in AMIIDR PMIIDR; do
			n=$(nread "$1" "$c" "$reg")
			[ "$n" = "$want" ] || { echo "# cpu$c $reg reported $n times, want $want"; r=1; }
		done
		want_d=$((want * (c % 2)))
		n=$(ndisagree "$1" "$c" AMIIDR)
		[ "$n" = "$want_d" ] || { echo "# cpu$c AMIIDR disagreement $n, want $want_d"; r=1; }
		n=$(ndisagree "$1" "$c" PMIIDR)
		[ "$n" = 0 ] || { echo "# cpu$c PMIIDR disagreement $n, want 0"; r=1; }
	done
	return $r
}

nbound() { find "$drv" -maxdepth 1 -name '*cpu-frames' 2>/dev/null | wc -l; }
info() { grep -H . /sys/class/misc/amupmu/cpu*/[ap]m*idr 2>/dev/null | sed 's/^/# /'; true; }

# every CPU's frame files hold the mock model's values
frames_sysfs() {
	for c in $all; do
		d=/sys/class/misc/amupmu/cpu$c
		want=0xd482043b
		[ $((c % 2)) = 1 ] && want=0xd482143b
		[ "$(cat $d/amiidr)" = "$want" ] || { echo "# cpu$c amiidr $(cat $d/amiidr)"; return 1; }
		[ "$(cat $d/pmiidr)" = 0xd482043b ] || return 1
		[ "$(cat $d/ampidr)" = "0x00000048 0x000000bd 0x0000002b 0x00000000 0x00000004" ] ||
			{ echo "# cpu$c ampidr $(cat $d/ampidr)"; return 1; }
		[ "$(cat $d/amcidr)" = "0x0000000d 0x00000090 0x00000005 0x000000b1" ] || return 1
		[ "$(cat $d/amdevarch)" = 0x47700a66 ] || { echo "# cpu$c amdevarch $(cat $d/amdevarch)"; return 1; }
	done
}
all=$(seq 0 "$last" | tr '\n' ' ')

echo "# $ncpu CPUs, $(find "$bus/" -maxdepth 1 -name 'cpu-frames@*' | wc -l) frame nodes, bad nodes: $bad"
mark load1
tap_check insmod insmod "$AMUPMU_KO"
board_backend
tap_check frames-bound test "$(nbound)" = "$ncpu"
tap_check frames-read-at-load read_once load1 "$all"
# /proc/iomem names each frame "DEVICE amu" / "DEVICE pmu"
tap_check frames-iomem-claimed test "$(grep -c '\.cpu-frames [ap]mu$' /proc/iomem)" = $((2 * ncpu))
info
if [ "$bad" = 1 ]; then
	since load1 >/tmp/load1.log
	tap_check frames-refused-duplicate grep -q 'cpu-frames: cpu0 has frames in .* already' /tmp/load1.log
	tap_check frames-refused-reg-names grep -q 'c102000.cpu-frames: reg-names "foo": not' /tmp/load1.log
	tap_check frames-refused-no-cpu grep -q 'c104000.cpu-frames: no cpu property' /tmp/load1.log
	# the driver core's line: "probe of DEV failed" (6.1), "probe with driver" (6.12)
	tap_check frames-refused-einval test "$(grep -cE \
		'probe (of c[0-9a-f]+\.cpu-frames|with driver amupmu-frames) failed with error -22' \
		/tmp/load1.log)" = 3
fi

if [ "$ncpu" -gt 1 ]; then
	# read once per CPU: an offline/online cycle after load reads nothing,
	# nor does binding the node again (while its CPU is offline)
	dev=$(since load1 | sed -n "s/.*amupmu-frames \([^:]*\): cpu$last: AMIIDR .*(part.*/\1/p" | head -1)
	mark cycle
	tap_check frames-unbind sh -c "echo $dev >$drv/unbind && ! grep -q ' : $dev ' /proc/iomem"
	echo 0 >/sys/devices/system/cpu/cpu$last/online
	tap_check frames-bind-cpu-offline sh -c "echo $dev >$drv/bind && [ -e $drv/$dev ]"
	echo 1 >/sys/devices/system/cpu/cpu$last/online
	tap_check frames-not-reread read_once cycle ""

	# a CPU offline at load is read when it comes online
	tap_check rmmod-1 rmmod amupmu
	echo 0 >/sys/devices/system/cpu/cpu$last/online
	mark load2
	tap_check insmod-cpu-offline insmod "$AMUPMU_KO"
	tap_check frames-offline-cpu-not-read read_once load2 "$(seq 0 $((last - 1)) | tr '\n' ' ')"
	mark online2
	echo 1 >/sys/devices/system/cpu/cpu$last/online
	tap_check frames-read-on-online read_once online2 "$last"
	info
	# sysfs (the same fields as AMUPMU_INFO's amu_frame/pmu_frame): the
	# mock model's identities, odd CPUs' AMIIDR saying r2p1
	tap_check frames-in-sysfs frames_sysfs
fi

tap_check rmmod rmmod amupmu
tap_check frames-unbound test "$(nbound)" = 0
tap_check frames-iomem-released sh -c "! grep -q cpu-frames /proc/iomem"
