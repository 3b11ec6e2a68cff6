#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# exporter_http.sh AMUPMU: amupmu exporter's HTTP endpoint on the host, on
# loopback only: listening on a port the system picks, /metrics in
# Prometheus's text format (gzip when asked), amupmu_up 0 without the
# device (the module not loaded: no error), a second scrape counting
# nothing as an error, OpenMetrics when the Accept header prefers it (as
# Prometheus's does), and SIGTERM ending it with status 0. Backend: host,
# no device (civetweb and prometheus-cpp's families are the real ones).
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
grep -qi '^Content-Type: text/plain; version=0.0.4; charset=utf-8' "$dir/headers" || fail "not the text format"
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

# OpenMetrics as Prometheus 2.42 asks for it (gzip too)
accept='application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,'
accept+='text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
curl -sS --max-time 10 -H "Accept: $accept" -H 'Accept-Encoding: gzip' -D "$dir/headers3" -o "$dir/om.gz" \
	"http://127.0.0.1:$port/metrics" || fail "curl OpenMetrics"
grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8' "$dir/headers3" ||
	fail "not OpenMetrics"
gzip -dc "$dir/om.gz" >"$dir/om"
[ "$(tail -n 1 "$dir/om")" = '# EOF' ] || fail "OpenMetrics without its # EOF"
grep -qx '# TYPE amupmu_exporter_scrape_errors counter' "$dir/om" || fail "a counter's family named with _total"
grep -qx 'amupmu_exporter_scrape_errors_total{source="device"} 0' "$dir/om" || fail "a counter's sample"
grep -qx 'amupmu_up 0' "$dir/om" || fail "amupmu_up in OpenMetrics"
grep -qx 'amupmu_exporter_scrapes_total{format="text"} 2' "$dir/om" || fail "the two text scrapes before"
grep -qx '# TYPE exposer_request_latencies summary' "$dir/om" || fail "the summary"
echo "ok 3 - OpenMetrics when the Accept header prefers it"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
[ "$status" = 0 ] || fail "SIGTERM: status $status"
grep -q '^amupmu exporter: stopped by signal 15$' "$dir/err" || fail "no stop line"
echo "ok 4 - SIGTERM ends it with status 0"
