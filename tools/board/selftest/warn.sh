# SPDX-License-Identifier: GPL-2.0
# Harness self-test: a kernel-log splat must fail the boot even when every
# TAP result passes.
. /lib.sh
tap_check passes true
echo "<4>WARNING: CPU: 0 PID: 1 at amupmu-harness-self-test" >/dev/kmsg
