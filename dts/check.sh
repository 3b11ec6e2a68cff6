#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dts/check.sh: every devicetree check of the amupmu project.
#
# Usage: dts/check.sh [-o DIR] [DTB...]
#
#   Checks the bindings (amupmu,pmuv3 and amupmu,cpu-frames: dt-doc-validate),
#   builds their examples and validates them against the bindings
#   (dt-extract-example, cpp, dtc, dt-mk-schema, dt-validate), makes sure the
#   validator does reject a bad node of each, compiles every overlay
#   dts/*.dtso, and checks overlaid DTBs:
#    - with no DTB argument: for each board machine of
#      tools/board/machines.sh (el1: -M virt, GICv2; vhe: -M
#      virt,virtualization=on,gic-version=3) at -smp 2 and 8, QEMU's DTB
#      dumped with the board's own options (skipped without
#      qemu-system-aarch64), overlaid with that machine's overlay;
#    - each DTB argument: a DTB that already has an "amupmu,pmuv3" node is
#      checked as it is, any other DTB gets amupmu-virt.dtbo applied first.
#   An overlaid DTB must have exactly one enabled "amupmu,pmuv3" node that
#   passes dt-validate against the binding, with an interrupts property and
#   an interrupt parent (its own or inherited), and no enabled arm_pmu node
#   (arm,armv8-pmuv3, arm,cortex-*-pmu, arm,neoverse-*-pmu); with a single
#   arm_pmu node in the tree, the interrupt specifier must match it: cell
#   for cell with a GICv3, PPI number and trigger with a GICv2 (its CPU
#   mask, cell 2 bits [15:8], depends on -smp and the GIC drivers ignore it).
#   Each machine's overlaid DTB also gets the mock boards' frame nodes
#   (machines.sh machine_frames, tools/board/run.sh -f): one
#   "amupmu,cpu-frames" node per CPU, each naming its own CPU node, valid
#   against the binding. And each gets the SPE node of the -S yes boards
#   (machines.sh machine_spe): PPI 5 named by no node of QEMU's DTB, then
#   /spe with compatible arm,statistical-profiling-extension-v1,
#   interrupts <1 5 4> and the root node's interrupt parent.
#
#   -o DIR  keep the products (*.dtbo, MACHINE-smpN-*.dtb, MACHINE-smpN-amupmu.dtb,
#           MACHINE-smpN-frames.dtb, MACHINE-smpN-spe.dtb, *-amupmu.dtb) in DIR.
#
# Output: one "ok - <what>" or "not ok - <what>" line per check (TAP-like,
# "# SKIP <why>" on skipped checks, "# ..." diagnostics), a "1..N" plan
# at the end; exit status 1 if any check failed, 2 on usage errors.
#
# Environment: DTC, FDTOVERLAY, FDTGET, CPP, QEMU (tool overrides);
# DT_INCLUDE: a directory holding dt-bindings/ (default: the Debian kernel
# headers under build/cache, else /usr/src/linux-headers-*, else a
# generated stand-in with the two constants the example uses);
# DT_CHECK_STRICT=1: a missing dt-schema or QEMU is a failure, not a skip.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
BINDINGS=$HERE/bindings
NAMES="amupmu,pmuv3 amupmu,cpu-frames"	# bindings/perf/NAME.yaml
# shellcheck source=tools/board/machines.sh
. "$TOP/tools/board/machines.sh"

DTC=${DTC:-dtc}
FDTOVERLAY=${FDTOVERLAY:-fdtoverlay}
FDTGET=${FDTGET:-fdtget}
CPP=${CPP:-cpp}
QEMU=${QEMU:-qemu-system-aarch64}
STRICT=${DT_CHECK_STRICT:-0}

OUT=
while getopts "o:h" opt; do
	case $opt in
	o) OUT=$OPTARG ;;
	h) sed -n '4,44s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "usage: $0 [-o DIR] [DTB...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

TMP=$(mktemp -d "${TMPDIR:-/tmp}/amupmu-dt.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
if [ -n "$OUT" ]; then
	mkdir -p "$OUT" || exit 2
	OUT=$(cd "$OUT" && pwd)
else
	OUT=$TMP
fi

N=0
FAILED=0
pass() { N=$((N + 1)); echo "ok - $*"; }
fail() { N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok - $*"; }
skip() { # skip <what> <why>
	if [ "$STRICT" = 1 ]; then
		fail "$1 (DT_CHECK_STRICT: $2)"
	else
		N=$((N + 1)); echo "ok - $1 # SKIP $2"
	fi
}
diag() { sed 's/^/# /' "$@"; }
have() { command -v "$1" >/dev/null 2>&1; }

# run <what> <logfile> <cmd...>: ok when the command succeeds and prints
# nothing on stderr (the dt-schema tools report errors with exit status 0).
run() {
	local what=$1 log=$2
	shift 2
	if "$@" 2>"$log" && [ ! -s "$log" ]; then
		pass "$what"
		return 0
	fi
	fail "$what"
	diag "$log"
	return 1
}

# ------------------------------------------------------------- binding
HAVE_SCHEMA=1
for t in dt-doc-validate dt-extract-example dt-mk-schema dt-validate; do
	have "$t" || HAVE_SCHEMA=0
done

find_dt_include() {
	local d
	if [ -n "${DT_INCLUDE:-}" ]; then
		echo "$DT_INCLUDE"
		return
	fi
	for d in "$TOP"/build/cache/kernels/*/root/usr/src/linux-headers-*-common/include \
		 /usr/src/linux-headers-*/include; do
		if [ -f "$d/dt-bindings/interrupt-controller/arm-gic.h" ]; then
			echo "$d"
			return
		fi
	done
	# Stand-in: the values the binding's example uses (devicetree ABI).
	d=$TMP/include
	mkdir -p "$d/dt-bindings/interrupt-controller"
	cat >"$d/dt-bindings/interrupt-controller/arm-gic.h" <<-'EOF'
		#define GIC_SPI 0
		#define GIC_PPI 1
		#define IRQ_TYPE_LEVEL_HIGH 4
	EOF
	echo "$d"
}

SCHEMA=$OUT/processed-schema.json
if [ "$HAVE_SCHEMA" = 1 ]; then
	for b in $NAMES; do
		run "dt-doc-validate bindings/perf/$b.yaml" "$TMP/$b.doc.log" \
			dt-doc-validate -u "$BINDINGS" "$BINDINGS/perf/$b.yaml"
	done

	# shellcheck disable=SC2016 # expanded by the inner sh
	if run "dt-mk-schema processed schema" "$TMP/mk.log" \
		sh -c 'dt-mk-schema -j "$1" >"$2"' sh "$BINDINGS" "$SCHEMA"; then
		HAVE_JSON=1
	else
		HAVE_JSON=0
	fi

	INC=$(find_dt_include)
	echo "# dt-bindings headers from $INC"
	EXAMPLES_OK=1
	for b in $NAMES; do
		EX=$TMP/$b.example
		# shellcheck disable=SC2016 # expanded by the inner sh
		if run "$b binding example builds (dt-extract-example, cpp, dtc)" "$TMP/$b.ex.log" \
			sh -c 'dt-extract-example "$1" >"$2.dts" &&
			       "$3" -nostdinc -I "$4" -undef -D__DTS__ -x assembler-with-cpp -P \
				    "$2.dts" -o "$2.pp.dts" &&
			       "$5" -q -I dts -O dtb -o "$2.dtb" "$2.pp.dts"' \
			sh "$BINDINGS/perf/$b.yaml" "$EX" "$CPP" "$INC" "$DTC" &&
		   [ "$HAVE_JSON" = 1 ]; then
			run "dt-validate $b binding example" "$TMP/$b.exv.log" \
				dt-validate -s "$SCHEMA" "$EX.dtb"
			if dt-validate -M -s "$SCHEMA" "$EX.dtb" 2>&1 |
			   grep -q "schemas/perf/$b.yaml#"; then
				pass "$b binding example node matched by $b.yaml"
			else
				fail "$b binding example node matched by $b.yaml"
			fi
		else
			EXAMPLES_OK=0
		fi
	done

	if [ "$EXAMPLES_OK" = 1 ]; then
		# The validator reports errors with exit status 0: make sure it
		# does complain about a broken node, so a silent pass means something.
		cat >"$TMP/bad.dts" <<-'EOF'
			/dts-v1/;
			/ {
				compatible = "foo"; model = "foo";
				#address-cells = <1>; #size-cells = <1>;
				gic: interrupt-controller {
					interrupt-controller;
					#interrupt-cells = <3>;
				};
				pmu {
					compatible = "amupmu,pmuv3";
					interrupt-parent = <&gic>;
					interrupts = <1 7 4>, <1 8 4>;
					amupmu,unknown = <1>;
				};
			};
		EOF
		if "$DTC" -q -I dts -O dtb -o "$TMP/bad.dtb" "$TMP/bad.dts" &&
		   dt-validate -l amupmu -s "$SCHEMA" "$TMP/bad.dtb" 2>&1 |
		   grep -q 'too long' &&
		   dt-validate -l amupmu -s "$SCHEMA" "$TMP/bad.dtb" 2>&1 |
		   grep -q "'amupmu,unknown' does not match"; then
			pass "dt-validate rejects a bad amupmu,pmuv3 node"
		else
			fail "dt-validate rejects a bad amupmu,pmuv3 node"
		fi

		# a frames node with a bad reg-names entry, no cpu and an unknown property
		cat >"$TMP/bad-frames.dts" <<-'EOF'
			/dts-v1/;
			/ {
				compatible = "foo"; model = "foo";
				#address-cells = <1>; #size-cells = <1>;
				frames@0 {
					compatible = "amupmu,cpu-frames";
					reg = <0x0 0x1000>, <0x1000 0x1000>;
					reg-names = "amu", "foo";
					amupmu,unknown = <1>;
				};
			};
		EOF
		if "$DTC" -q -I dts -O dtb -o "$TMP/bad-frames.dtb" "$TMP/bad-frames.dts" &&
		   dt-validate -l amupmu -s "$SCHEMA" "$TMP/bad-frames.dtb" >"$TMP/bad-frames.log" 2>&1 &&
		   grep -q "reg-names: 'oneOf' conditional failed" "$TMP/bad-frames.log" &&
		   grep -q "'cpu' is a required property" "$TMP/bad-frames.log" &&
		   grep -q "'amupmu,unknown' does not match" "$TMP/bad-frames.log"; then
			pass "dt-validate rejects a bad amupmu,cpu-frames node"
		else
			fail "dt-validate rejects a bad amupmu,cpu-frames node"
			diag "$TMP/bad-frames.log"
		fi
	fi
else
	skip "dt-schema checks of bindings/perf/amupmu,pmuv3.yaml and amupmu,cpu-frames.yaml" \
		"dt-schema not installed (make deps)"
	HAVE_JSON=0
fi

# ------------------------------------------------------------- overlays
# /amupmu inherits the root node's interrupt-parent, which dtc cannot see
# while compiling a fragment: that one warning is expected. $OUT/NAME.dtbo
# exists only for the overlays that compiled.
for f in "$HERE"/*.dtso; do
	o=$(basename "$f" .dtso)
	run "dtc compiles $o.dtso" "$TMP/$o.dtbo.log" \
		"$DTC" -@ -Wno-interrupts_property -I dts -O dtb -o "$OUT/$o.dtbo" "$f" ||
		rm -f "$OUT/$o.dtbo"
done

# nodes <dts>: "path<TAB>compatible-list" for every node with a compatible,
# from dtc's canonical decompiled output.
nodes() {
	awk '
	/^[ \t]*[^ \t=]+ \{$/ {
		name = $1; sub(/^.*: */, "", name)
		d++; p[d] = (d == 1) ? "" : p[d - 1] "/" name
		next
	}
	/^[ \t]*\};$/ { d--; next }
	/^[ \t]*compatible = / {
		c = $0; sub(/^[ \t]*compatible = /, "", c); sub(/;$/, "", c)
		gsub(/\\0/, "\" \"", c)
		print ((p[d] == "") ? "/" : p[d]) "\t" c
	}' "$1"
}

enabled() { # enabled <dtb> <path>
	local st
	st=$("$FDTGET" -t s "$1" "$2" status 2>/dev/null) || return 0
	[ "$st" = okay ] || [ "$st" = ok ]
}

# has_irq_parent <dtb> <path>: the node or an ancestor names the parent
has_irq_parent() {
	local p=$2
	"$FDTGET" "$1" "$p" interrupts-extended >/dev/null 2>&1 && return 0
	while :; do
		"$FDTGET" "$1" "$p" interrupt-parent >/dev/null 2>&1 && return 0
		[ "$p" = / ] && return 1
		p=${p%/*}
		[ -n "$p" ] || p=/
	done
}

# check_dtb <name> <overlaid dtb>
check_dtb() {
	local name=$1 dtb=$2 dts=$TMP/$1.dts
	local amu=() armoff=() armon=() armall=() path compat p ok why
	if ! "$DTC" -q -I dtb -O dts -o "$dts" "$dtb" 2>"$TMP/$name.dtc.log"; then
		fail "$name: dtc decompiles"
		diag "$TMP/$name.dtc.log"
		return
	fi
	pass "$name: dtc decompiles"

	while IFS=$'\t' read -r path compat; do
		case " $compat " in
		*' "amupmu,pmuv3" '*)
			enabled "$dtb" "$path" && amu+=("$path")
			;;
		*' "arm,armv8-pmuv3" '* | *' "arm,cortex-'[ax]*'-pmu" '* | \
		*' "arm,neoverse-'*'-pmu" '*)
			armall+=("$path")
			if enabled "$dtb" "$path"; then
				armon+=("$path")
			else
				armoff+=("$path")
			fi
			;;
		esac
	done < <(nodes "$dts")

	if [ ${#amu[@]} -eq 1 ]; then
		pass "$name: one enabled amupmu,pmuv3 node (${amu[0]})"
	else
		fail "$name: one enabled amupmu,pmuv3 node (found ${#amu[@]}: ${amu[*]:-none})"
		return
	fi
	p=${amu[0]}

	if [ ${#armon[@]} -eq 0 ]; then
		pass "$name: no enabled arm_pmu node (disabled: ${armoff[*]:-none})"
	else
		fail "$name: no enabled arm_pmu node (enabled: ${armon[*]})"
	fi

	local irq ref
	if irq=$("$FDTGET" -t u "$dtb" "$p" interrupts 2>/dev/null) ||
	   irq=$("$FDTGET" -t u "$dtb" "$p" interrupts-extended 2>/dev/null); then
		if has_irq_parent "$dtb" "$p"; then
			pass "$name: $p interrupts <$irq> with an interrupt parent"
		else
			fail "$name: $p interrupts <$irq> with an interrupt parent (none)"
		fi
	else
		fail "$name: $p has interrupts"
		irq=
	fi

	if [ -n "$irq" ] && [ ${#armall[@]} -eq 1 ] &&
	   ref=$("$FDTGET" -t u "$dtb" "${armall[0]}" interrupts 2>/dev/null); then
		local a b same
		read -r -a a <<<"$irq"
		read -r -a b <<<"$ref"
		ok=1
		why="<$irq> vs ${armall[0]} <$ref>"
		if grep -q '"arm,gic-v3"' "$dts"; then
			# GICv3: no CPU mask, the specifier is copied verbatim
			same="same interrupt specifier as ${armall[0]} (GICv3)"
			[ "$irq" = "$ref" ] || ok=0
		else
			same="same PPI and trigger as ${armall[0]}"
			if [ "${a[0]:-}" != "${b[0]:-}" ] || [ "${a[1]:-}" != "${b[1]:-}" ] ||
			   [ $((${a[2]:-0} & 0xf)) -ne $((${b[2]:-0} & 0xf)) ]; then
				ok=0
			fi
		fi
		if [ $ok = 1 ]; then
			pass "$name: $same ($why)"
		else
			fail "$name: $same ($why)"
		fi
	fi

	if [ "$HAVE_JSON" = 1 ]; then
		run "$name: dt-validate against amupmu,pmuv3.yaml" "$TMP/$name.val.log" \
			dt-validate -l amupmu -s "$SCHEMA" "$dtb"
	else
		skip "$name: dt-validate against amupmu,pmuv3.yaml" "no processed schema"
	fi
}

# overlay_and_check <name> <base dtb> <overlay name>
overlay_and_check() {
	local name=$1 base=$2 dtbo=$3.dtbo out
	if "$FDTGET" "$base" / compatible >/dev/null 2>&1 &&
	   "$DTC" -q -I dtb -O dts "$base" 2>/dev/null | grep -q '"amupmu,pmuv3"'; then
		check_dtb "$name" "$base"
		return
	fi
	if [ ! -s "$OUT/$dtbo" ]; then
		fail "$name: fdtoverlay $dtbo (no overlay)"
		return
	fi
	out=$OUT/$name-amupmu.dtb
	if run "$name: fdtoverlay $dtbo" "$TMP/$name.ovl.log" \
		"$FDTOVERLAY" -i "$base" -o "$out" "$OUT/$dtbo"; then
		check_dtb "$name" "$out"
	fi
}

# check_frames <name> <overlaid dtb> <vCPUs>: the frame nodes of the mock
# boards (tools/board/machines.sh machine_frames) added to that DTB: one
# per CPU, each naming a different CPU node, valid against the binding.
check_frames() {
	local name=$1 out=$OUT/$1-frames.dtb n c p cpus=" " seen=" " ok=1
	if ! cp "$2" "$out" || ! machine_frames "$out" 2>"$TMP/$name.fr.log"; then
		fail "$name: machine_frames adds the frame nodes"
		diag "$TMP/$name.fr.log"
		return
	fi
	pass "$name: machine_frames adds the frame nodes"
	for c in $("$FDTGET" -l "$out" /cpus); do
		p=$("$FDTGET" -t x "$out" "/cpus/$c" phandle 2>/dev/null) && cpus="$cpus$p "
	done
	n=0
	for c in $("$FDTGET" -l "$out" /platform-bus@c000000); do
		case $c in cpu-frames@*) ;; *) continue ;; esac
		n=$((n + 1))
		p=$("$FDTGET" -t x "$out" "/platform-bus@c000000/$c" cpu 2>/dev/null) || { ok=0; continue; }
		case $cpus in *" $p "*) ;; *) ok=0 ;; esac
		case $seen in *" $p "*) ok=0 ;; esac
		seen="$seen$p "
	done
	if [ "$n" = "$3" ] && [ $ok = 1 ]; then
		pass "$name: one amupmu,cpu-frames node per CPU, each naming its own CPU ($n)"
	else
		fail "$name: one amupmu,cpu-frames node per CPU, each naming its own CPU ($n nodes, $3 CPUs)"
	fi
	if [ "$HAVE_JSON" = 1 ]; then
		run "$name: frame nodes pass dt-validate against amupmu,cpu-frames.yaml" \
			"$TMP/$name.frv.log" dt-validate -l amupmu -s "$SCHEMA" "$out"
	else
		skip "$name: frame nodes pass dt-validate against amupmu,cpu-frames.yaml" \
			"no processed schema"
	fi
}

# check_spe <name> <QEMU's dtb> <overlaid dtb>: the SPE node of the -S yes
# boards (tools/board/machines.sh machine_spe) on its PPI 5, free in QEMU's DTB
check_spe() {
	local name=$1 out=$OUT/$1-spe.dtb users
	if users=$(machine_ppi_users "$2" 5) && [ -z "$users" ]; then
		pass "$name: PPI 5 is free in QEMU's DTB"
	else
		fail "$name: PPI 5 is free in QEMU's DTB (taken by: ${users:-?})"
	fi
	if ! cp "$3" "$out" || ! machine_spe "$out" 2>"$TMP/$name.spe.log"; then
		fail "$name: machine_spe adds /spe"
		diag "$TMP/$name.spe.log"
		return
	fi
	if [ "$("$FDTGET" -t s "$out" /spe compatible)" = arm,statistical-profiling-extension-v1 ] &&
	   [ "$("$FDTGET" -t u "$out" /spe interrupts)" = "1 5 4" ] &&
	   [ "$(machine_ppi_users "$out" 5)" = /spe ] &&
	   ! "$FDTGET" "$out" /spe interrupt-parent >/dev/null 2>&1 &&
	   "$FDTGET" "$out" / interrupt-parent >/dev/null 2>&1; then
		pass "$name: machine_spe adds /spe (arm,statistical-profiling-extension-v1, <1 5 4>, the root's interrupt parent)"
	else
		fail "$name: machine_spe adds /spe (arm,statistical-profiling-extension-v1, <1 5 4>, the root's interrupt parent)"
	fi
}

if [ $# -eq 0 ]; then
	# every board machine, with its own options and its own overlay
	for m in $BOARD_MACHINES; do
		for smp in 2 8; do
			machine_qemu "$m" "$smp"
			what="$m-smp$smp DTB (${QEMU_CMD[*]:1})"
			if ! have "$QEMU"; then
				skip "$what" "$QEMU not installed"
				continue
			fi
			if base=$(machine_dtb "$m" "$smp" "$OUT"); then
				pass "$what dumped"
				ovl=$(machine_overlay "$m")
				overlay_and_check "$m-smp$smp" "$base" "${ovl%.dtso}"
				# the mock boards' frame nodes on top (tools/board/run.sh -f)
				[ -s "$OUT/$m-smp$smp-amupmu.dtb" ] &&
					check_frames "$m-smp$smp" "$OUT/$m-smp$smp-amupmu.dtb" "$smp"
				# the SPE node of the -S yes boards (tools/board/run.sh -S)
				[ -s "$OUT/$m-smp$smp-amupmu.dtb" ] &&
					check_spe "$m-smp$smp" "$base" "$OUT/$m-smp$smp-amupmu.dtb"
			else
				fail "$what dumped"
			fi
		done
	done
else
	for f in "$@"; do
		name=$(basename "$f" .dtb)
		if [ -r "$f" ]; then
			overlay_and_check "$name" "$f" amupmu-virt
		else
			fail "$name: $f readable"
		fi
	done
fi

echo "1..$N"
[ "$FAILED" -eq 0 ]
