#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# exporter_http.sh AMUPMU: amupmu exporter's HTTP endpoint on the host, on
# loopback only: listening on a port the system picks, /metrics in
# Prometheus's text format (gzip when asked), amupmu_up 0 without the
# device (the module not loaded: no error), a second scrape counting
# nothing as an error, and SIGTERM ending it with status 0. Backend: host,
# no device (prometheus-cpp's Exposer and civetweb are the real ones).
set -euo pipefail
AMUPMU=$1
dir=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "not ok - $*"; sed 's/^/# /' "$dir"/err "$dir"/* 2>/dev/null | head -40; exit 1; }

printf 'device = %s/no-amupmu\nnetlink = no\n' "$dir" >"$dir/conf"
"$AMUPMU" exporter --listen 127.0.0.1:0 --config "$dir/conf" 2>"$dir/err" &
pid=$!
port=
for _ in $(seq 100); do
	port=$(sed -n 's/^amupmu exporter: listening on 127\.0\.0\.1:\([0-9]*\), \/metrics$/\1/p' "$dir/err")
	[ -n "$port" ] && break
	kill -0 "$pid" 2>/dev/null || fail "the exporter exited"
	sleep 0.1
done
[ -n "$port" ] || fail "no 'listening on' line in 10 s"
echo "# listening on 127.0.0.1:$port"

curl -sS --max-time 10 -D "$dir/headers" -o "$dir/metrics" "http://127.0.0.1:$port/metrics" || fail "curl"
# prometheus-cpp 1.0 names no version: Prometheus reads text/plain as 0.0.4
grep -qi '^Content-Type: text/plain' "$dir/headers" || fail "not the text format"
grep -qx 'amupmu_up 0' "$dir/metrics" || fail "amupmu_up is not 0 without the device"
grep -qx '# TYPE amupmu_exporter_scrape_errors_total counter' "$dir/metrics" || fail "no scrape errors family"
grep -qx 'amupmu_exporter_scrape_errors_total{source="device"} 0' "$dir/metrics" ||
	fail "a missing module counted as an error"
grep -q '^amupmu_exporter_scrape_duration_seconds [0-9.e-]*$' "$dir/metrics" || fail "no scrape duration"
echo "ok 1 - /metrics without the device: amupmu_up 0, the text format"

# gzip when the scraper accepts it, as Prometheus does
curl -sS --max-time 10 -H 'Accept-Encoding: gzip' -D "$dir/headers2" -o "$dir/metrics.gz" \
	"http://127.0.0.1:$port/metrics" || fail "curl gzip"
grep -qi '^Content-Encoding: gzip' "$dir/headers2" || fail "no gzip"
gzip -dc "$dir/metrics.gz" | grep -qx 'amupmu_up 0' || fail "the gzip body"
echo "ok 2 - gzip when asked"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
[ "$status" = 0 ] || fail "SIGTERM: status $status"
grep -q '^amupmu exporter: stopped by signal 15$' "$dir/err" || fail "no stop line"
echo "ok 3 - SIGTERM ends it with status 0"
