# SPDX-License-Identifier: GPL-2.0
# Board payload: the board driven from the host over run.sh -n's network
# (tools/board/exporter-test.py): the network up, then the host's commands
# (board_control on port 10141) until it sends "exit". The host's checks
# come back as TAP lines it has the board print ("echo ok N name"), so
# that run.sh counts them with the board's own. Loads nothing itself.
. /lib.sh

tap_check network board_net_up
board_backend
run_test remote board_control 10141
