#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: install what is missing, build, boot the emulated arm64 board
# (Debian 6.1 kernel, the amupmu devicetree so amupmu owns the PMU,
# -icount shift=0), load the module, print `amupmu info`, count workloads
# with `amupmu stat` and sample one with `amupmu record` / `amupmu report`;
# then boot the mock build for `amupmu amu` and `amupmu spe record/report`
# (QEMU has no AMU and no SPE: labelled as the mock models).
# K=6.12: the trixie kernel; MACHINE=vhe: the EL2/VHE, GICv3 board.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
# shellcheck source=tools/board/machines.sh
. tools/board/machines.sh
K=${K:-6.1}
MACH=${MACHINE:-el1}
M=$(machine_opt "$MACH") || { echo "demo: MACHINE=${BOARD_MACHINES// /|}" >&2; exit 2; }
step() { printf '\n==> %s\n' "$*"; }

step "dependencies (make deps)"
./tools/deps.sh
step "amupmu.ko for $K (and its mock test build, for the AMU part)"
./tools/build-module.sh "$K" prod
./tools/build-module.sh "$K" mock
step "aarch64 amupmu tool and workloads"
make -s cross-build >build/demo-cross.log 2>&1 || { cat build/demo-cross.log; exit 1; }
step "booting qemu-system-aarch64 -M $M -cpu max (Debian $(cat "build/cache/kernels/$K/abi")), amupmu devicetree, -icount shift=0"
./tools/board/run.sh -k "$K" -m "$MACH" -d amupmu -i demo | grep -vE '^\[|^AMUPMU-(BEGIN|END)|^(not )?ok 1 ' || true
grep -q '^passed=.* failed=0 ' build/board/"$K-$MACH"-amupmu-prod-icount-demo/summary
step "the Activity Monitors and SPE: QEMU has neither, so this boot loads the mock build (AMU and SPE registers from the mock models)"
./tools/board/run.sh -k "$K" -m "$MACH" -d amupmu -v mock demo-mock | grep -vE '^\[|^AMUPMU-(BEGIN|END)|^(not )?ok 1 ' || true
grep -q '^passed=.* failed=0 ' build/board/"$K-$MACH"-amupmu-mock-demo-mock/summary
