#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""amupmu exporter scraped by a real Prometheus server (issue 28).

  tools/board/exporter-test.py -k 6.1|6.12 -v mock|prod [-m el1|vhe] [-s N] [-t SECS] [--bench]

Starts Debian's Prometheus server (unpacked by make deps into
build/cache/prometheus) on 127.0.0.1 with its own configuration and data
directory under build/exporter-test/NAME/ (scrape interval 1 s), boots the
board (tools/board/run.sh -d amupmu -n: QEMU user networking with
restrict=on, the guest's ports 10140 (the exporter) and 10141 (the
payload remote.sh's control) forwarded from free loopback ports of the
host), and drives the board from the host:

  mock (the AMU of the mock register model): the exporter without PMU
    events; CPU 1's model set to 1.5 GHz, IPC 1.2, 30 % memory stall, always
    active; a workload on CPU 1 under `amupmu amu -C 1`; Prometheus's
    rate() of the instructions, the frequency, IPC and memory-stall share
    against amupmu amu's figures and the model's; CPU 1 offline and online;
    the module unloaded and loaded again under the running exporter.
  prod (the PMU, exclusive mode, -icount shift=0: QEMU's PMU has
    INST_RETIRED only then): the exporter counting inst_retired:u and
    cpu_cycles:u; `amupmu stat -C 1 -e inst_retired:u` of a workload on
    CPU 1 against the exporter's count over the same run; `amupmu record`
    of CPU 1 throttled and losing records, against the exporter's
    amupmu_pmu_sample_throttles_total and _samples_lost_total; CPU 1 offline
    and online; rmmod refused while the exporter's session holds the module,
    the exporter answering on.

Each check is a TAP line, printed here and on the board's console (run.sh
counts it with the board's own results). Everything started here is
stopped at the end (the board, Prometheus); nothing listens beyond
127.0.0.1, and the guest reaches nothing. Exit status 0 when every check
and the board passed.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXPORTER_PORT = 10140
CONTROL_PORT = 10141
# tolerances, stated in the admin guide's test section
RATE_TOLERANCE = 0.05	# rate() of a counter against amupmu amu's figure and the model's
RATIO_TOLERANCE = 0.01	# ratios of counters read in the same AMUPMU_AMU_READ (IPC, frequency)
PMU_SLACK = 0.02	# the exporter's count over the run above amupmu stat's (EL0 of others on the CPU)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Test:
    def __init__(self, args):
        self.args = args
        self.icount = args.v == "prod" or args.bench
        self.name = (f"{args.k}-{args.m}-amupmu-{args.v}{'' if args.s == 2 else f'-smp{args.s}'}"
                     f"{'-icount' if self.icount else ''}-exporter{'-bench' if args.bench else ''}")
        self.dir = os.path.join(TOP, "build", "exporter-test", self.name)
        self.n = 0
        self.failed = 0
        self.prom = None
        self.board = None
        self.log = None

    # ---------------------------------------------------------------- TAP
    def result(self, ok, what, detail=""):
        self.n += 1
        line = f"{'ok' if ok else 'not ok'} {self.n} - {what}"
        if not ok:
            self.failed += 1
        print(line + (f"  # {detail}" if detail else ""), flush=True)
        if detail:
            self.tell(f"# {detail}")
        self.tell(line)
        return ok

    def tell(self, line):
        try:
            self.control("tap " + line.replace("\n", " "), quiet=True)
        except OSError:
            pass

    # ---------------------------------------------------------------- the board's control port
    def control(self, command, quiet=False, timeout=300):
        # QEMU accepts the host's connection before the guest does: a reset
        # with nothing read means the guest was not listening (nothing ran)
        for attempt in range(30):
            data = b""
            try:
                with socket.create_connection(("127.0.0.1", self.ctl_port), timeout=timeout) as s:
                    s.sendall((command + "\n").encode())
                    while True:
                        chunk = s.recv(65536)
                        if not chunk:
                            break
                        data += chunk
            except ConnectionResetError:
                if data:
                    raise
            if data:
                break
            time.sleep(0.3)
        text = data.decode(errors="replace")
        lines = text.rstrip("\n").split("\n")
        if not lines or not lines[-1].startswith("rc="):
            raise OSError(f"no reply to '{command}' ({text!r})")
        rc = int(lines[-1][3:])
        out = "\n".join(lines[:-1])
        if not quiet:
            print(f"# board$ {command}  (rc={rc})" + "".join(f"\n#   {l}" for l in out.split("\n") if l), flush=True)
        return rc, out

    def wait_control(self, limit):
        end = time.time() + limit
        while time.time() < end:
            if self.board.poll() is not None:
                return False
            try:
                rc, _ = self.control("true", quiet=True, timeout=5)
                if rc == 0:
                    return True
            except OSError:
                pass
            time.sleep(1)
        return False

    # ---------------------------------------------------------------- Prometheus
    def query(self, q, at=None):
        params = {"query": q}
        if at is not None:
            params["time"] = f"{at:.3f}"
        url = f"http://127.0.0.1:{self.prom_port}/api/v1/query?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.load(r)
        if body.get("status") != "success":
            raise RuntimeError(f"query {q}: {body}")
        return body["data"]["result"]

    def scalar(self, q, at=None):
        """The value of a query that gives one series, or None."""
        r = self.query(q, at)
        if len(r) != 1:
            return None
        return float(r[0]["value"][1])

    def wait_for(self, q, want, limit=30):
        end = time.time() + limit
        v = None
        while time.time() < end:
            v = self.scalar(q)
            if v == want:
                return True
            time.sleep(0.5)
        return False

    def start_prometheus(self):
        binary = os.path.join(TOP, "build", "cache", "prometheus", "usr", "bin", "prometheus")
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"exporter-test: no {binary} (make deps)")
        # a fresh TSDB: a run within 5 minutes of the last would see its
        # series (another instance, the last port) beside this run's
        data = os.path.join(self.dir, "prometheus")
        shutil.rmtree(data, ignore_errors=True)
        os.makedirs(data)
        conf = os.path.join(self.dir, "prometheus.yml")
        with open(conf, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: amupmu\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{self.exp_port}']\n")
        self.prom_log = open(os.path.join(self.dir, "prometheus.log"), "w")
        self.prom = subprocess.Popen(
            [binary, f"--config.file={conf}", f"--storage.tsdb.path={data}",
             f"--web.listen-address=127.0.0.1:{self.prom_port}", "--storage.tsdb.retention.time=1d",
             "--log.level=warn"],
            stdout=self.prom_log, stderr=subprocess.STDOUT, start_new_session=True)
        end = time.time() + 30
        while time.time() < end:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.prom_port}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if self.prom.poll() is not None:
                break
            time.sleep(0.5)
        raise SystemExit("exporter-test: Prometheus did not start (see prometheus.log)")

    # ---------------------------------------------------------------- the steps
    def exporter_up(self, events, extra=""):
        conf = f"listen = :{EXPORTER_PORT}\\n" + (f"events = {events}\\n" if events else "") + extra
        self.control(f"printf '{conf}' >/tmp/exporter.conf && cat /tmp/exporter.conf")
        # on CPU 0: the workloads run on CPU 1
        self.control("taskset 1 /tests/amupmu-dyn exporter --config /tmp/exporter.conf >/tmp/exporter.log 2>&1 &")
        rc, out = self.control("i=0; while [ $i -lt 100 ] && ! grep -q 'listening on' /tmp/exporter.log; do "
                               "sleep 0.2; i=$((i+1)); done; cat /tmp/exporter.log; grep -q 'listening on' /tmp/exporter.log")
        self.result(rc == 0, "the exporter listens in the guest", out.split("\n")[-1] if out else "")
        t0 = time.time()
        ok = self.wait_for('up{job="amupmu"}', 1, 90) and self.wait_for("amupmu_up", 1, 30)
        self.result(ok, "Prometheus scrapes it: up == 1 and amupmu_up == 1",
                    f"after {time.time() - t0:.1f} s" + ("" if ok else f"; target: {self.target_health()}"))
        # Prometheus asks for OpenMetrics first: every scrape is served in it
        # (the counter a scrape reads is the one before it)
        om = txt = None
        end = time.time() + 15
        while time.time() < end:
            om = self.scalar('amupmu_exporter_scrapes_total{format="openmetrics"}')
            txt = self.scalar('amupmu_exporter_scrapes_total{format="text"}')
            if om:
                break
            time.sleep(0.5)
        self.result(om is not None and om > 0 and txt == 0,
                    "Prometheus negotiates OpenMetrics: the exporter serves every scrape in it",
                    f"amupmu_exporter_scrapes_total openmetrics {om}, text {txt}")

    def target_health(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.prom_port}/api/v1/targets", timeout=10) as r:
                t = json.load(r)["data"]["activeTargets"]
            return "; ".join(f"{x['health']} {x['lastError']} ({x['lastScrapeDuration']:.3f} s)" for x in t)
        except (OSError, KeyError, ValueError) as e:
            return str(e)

    def offline_online(self, metric):
        t_off = time.time()
        rc, _ = self.control("echo 0 >/sys/devices/system/cpu/cpu1/online")
        time.sleep(5)
        t_on = time.time()
        rc2, _ = self.control("echo 1 >/sys/devices/system/cpu/cpu1/online")
        time.sleep(4)
        now = time.time()
        self.result(rc == 0 and rc2 == 0, "CPU 1 offline and online")
        win = int(t_on - t_off - 2)
        gap = self.query(f"count_over_time({metric}[{win}s])", at=t_on - 0.3)
        online = self.scalar(f'max_over_time(amupmu_cpu_online{{cpu="1"}}[{win}s])', at=t_on - 0.3)
        self.result(not gap and online == 0, f"{metric} stops while CPU 1 is offline (amupmu_cpu_online 0)",
                    f"samples in the last {win} s offline: {gap}, amupmu_cpu_online max {online}")
        # back within 30 s (a loaded host's guest may miss a scrape or two)
        back = None
        while back is None and time.time() < now + 30:
            back = self.scalar(metric)
            if back is None:
                time.sleep(1)
        now = time.time()
        resets = self.scalar(f"resets({metric}[{int(now - t_off + 3)}s])", at=now)
        self.result(back is not None and resets == 0, f"{metric} resumes, monotonic (resets() 0)",
                    f"value {back}, resets {resets}")

    def run_mock(self):
        self.control("insmod /amupmu.ko")
        self.exporter_up("")
        rc, _ = self.control("echo '1 freq=1500000000 ipc=1200 stall=300 active=1000' "
                             ">/sys/kernel/debug/amupmu/amu_model")
        time.sleep(2)
        rc, out = self.control("amupmu amu -C 1 -x , -- taskset 2 sh -c "
                               "'amupmu-workload loop 50000000; sleep 6'")
        t_end = time.time()
        # amupmu amu -x: cpu,mhz,ipc,mem_stall_pct,active_pct,seconds,cpu_cycles,
        # cnt_cycles,inst_retired,stall_backend_mem,flags
        cols = ["cpu", "mhz", "ipc", "mem_stall_pct", "active_pct", "seconds", "cpu_cycles", "cnt_cycles",
                "inst_retired", "stall_backend_mem", "flags"]
        row = None
        for line in out.split("\n"):
            # the console may put a carriage return, blanks or NULs before
            # the row (6.12 mock once: 53 blanks before "1,"; 6.1 mock once:
            # NULs): the row is what follows
            f = line.rsplit("\r", 1)[-1].replace("\0", "").strip().split(",")
            if len(f) == len(cols) and f[0] == "1":
                row = dict(zip(cols, f))
        self.result(rc == 0 and row is not None, "amupmu amu -C 1 over a workload on CPU 1", row and str(row))
        if not row:
            return
        sec = float(row["seconds"])
        amu_rate = float(row["inst_retired"]) / sec
        model_rate = 1.5e9 * 1.2
        # inside the run (at least 6 s of it), after the model's change
        at = t_end - 1.0
        w = "6s"
        prom_rate = self.scalar(f'rate(amupmu_amu_instructions_retired_total{{cpu="1"}}[{w}])', at)
        ok = prom_rate is not None and abs(prom_rate / amu_rate - 1) < RATE_TOLERANCE \
            and abs(prom_rate / model_rate - 1) < RATE_TOLERANCE
        self.result(ok, f"rate(instructions[{w}]) on CPU 1 == amupmu amu's within {RATE_TOLERANCE:.0%}",
                    f"Prometheus {prom_rate}/s, amupmu amu {amu_rate:.0f}/s, model {model_rate:.0f}/s")
        freq = self.scalar(f'rate(amupmu_amu_core_cycles_total{{cpu="1"}}[{w}]) / '
                           f'rate(amupmu_amu_constant_cycles_total{{cpu="1"}}[{w}]) * '
                           "on(instance, job) group_left() amupmu_amu_timer_frequency_hertz", at)
        amu_hz = float(row["mhz"]) * 1e6
        self.result(freq is not None and abs(freq / amu_hz - 1) < RATIO_TOLERANCE
                    and abs(freq / 1.5e9 - 1) < RATIO_TOLERANCE,
                    f"frequency from rate(): amupmu amu's MHz within {RATIO_TOLERANCE:.0%}",
                    f"Prometheus {freq} Hz, amupmu amu {amu_hz:.0f} Hz, model 1.5e9")
        ipc = self.scalar(f'rate(amupmu_amu_instructions_retired_total{{cpu="1"}}[{w}]) / '
                          f'rate(amupmu_amu_core_cycles_total{{cpu="1"}}[{w}])', at)
        stall = self.scalar(f'rate(amupmu_amu_memory_stall_cycles_total{{cpu="1"}}[{w}]) / '
                            f'rate(amupmu_amu_core_cycles_total{{cpu="1"}}[{w}])', at)
        self.result(ipc is not None and abs(ipc / float(row["ipc"]) - 1) < RATIO_TOLERANCE
                    and stall is not None and abs(stall * 100 / float(row["mem_stall_pct"]) - 1) < RATIO_TOLERANCE,
                    "IPC and memory-stall share from rate(): amupmu amu's",
                    f"IPC {ipc} vs {row['ipc']}, stall {stall} vs {row['mem_stall_pct']} %")
        self.offline_online('amupmu_amu_core_cycles_total{cpu="1"}')
        # the module unloaded and loaded again under the running exporter
        t_un = time.time()
        rc, out = self.control("rmmod amupmu")
        time.sleep(5)
        t_in = time.time()
        rc2, _ = self.control("insmod /amupmu.ko && echo '1 freq=1500000000 ipc=1200 stall=300 active=1000' "
                              ">/sys/kernel/debug/amupmu/amu_model")
        time.sleep(7)
        now = time.time()
        self.result(rc == 0 and rc2 == 0, "rmmod and insmod under the running exporter", out)
        win = int(t_in - t_un - 2)
        amupmu_up = self.scalar(f"max_over_time(amupmu_up[{win}s])", at=t_in - 0.3)
        up = self.scalar(f'min_over_time(up{{job="amupmu"}}[{int(now - t_un)}s])', at=now)
        gap = self.query(f'count_over_time(amupmu_amu_core_cycles_total{{cpu="0"}}[{win}s])', at=t_in - 0.3)
        self.result(amupmu_up == 0 and up == 1 and not gap,
                    "while unloaded: amupmu_up 0, the AMU series stop, the exporter answers (up 1)",
                    f"amupmu_up max {amupmu_up}, up min {up}, samples {gap}")
        after = self.scalar('rate(amupmu_amu_instructions_retired_total{cpu="1"}[5s])', at=now - 0.5)
        spike = self.scalar(f'max_over_time(rate(amupmu_amu_instructions_retired_total{{cpu="1"}}[3s])'
                            f'[{int(now - t_un + 2)}s:1s])', at=now)
        resets = self.scalar(f'resets(amupmu_amu_instructions_retired_total{{cpu="1"}}[{int(now - t_un + 3)}s])',
                             at=now)
        self.result(after is not None and abs(after / model_rate - 1) < RATE_TOLERANCE
                    and spike is not None and spike < 100 * model_rate,
                    "after the reload the series resume at the model's rate, no wrap-sized jump",
                    f"rate {after}/s, largest 3 s rate across the reload {spike}/s, resets() {resets}")

    @staticmethod
    def busy(seconds, background=False):
        """A shell command: CPU 1 busy at EL0 for that long (returning at
        once with background)."""
        cmd = (f"taskset 2 amupmu-workload loop 1000000000000 2>/dev/null & p=$!; sleep {seconds}; "
               "kill $p; wait $p; true")
        return f"({cmd}) >/dev/null 2>&1 &" if background else cmd

    def run_spe(self):
        """spe = on (the mock SPE model): CPU 1's stream set to a latency
        of 100 cycles (the model's branches then take 50-150 cycles, its
        loads and stores at least 51), a workload on CPU 1, and
        Prometheus's view of the histograms against the model and the
        exporter's own record count; CPU 1 offline and online."""
        lat, interval = 100, 1 << 18
        self.control("insmod /amupmu.ko && echo '1 lat=%d' >/sys/kernel/debug/amupmu/spe_stream" % lat)
        self.exporter_up("", f"spe = on\\nspe_interval = {interval}\\n")
        self.wait_for('amupmu_sessions{kind="spe"}', 1, 30)
        t0 = time.time()
        rc, _ = self.control(self.busy(8))
        t1 = time.time()
        time.sleep(3)
        self.result(rc == 0, "a workload on CPU 1 under the exporter's SPE session", f"{t1 - t0:.1f} s")
        at = t1 - 0.5
        w = f"{max(int(t1 - t0) - 2, 3)}s"
        c1 = 'cpu="1"'
        count = self.scalar(f'sum(amupmu_spe_latency_cycles_count{{{c1}}})', at)
        records = self.scalar(f'amupmu_spe_records_total{{{c1}}}', at)
        self.result(count is not None and count > 0 and count == records,
                    "the histograms count every record the exporter decoded on CPU 1 (the model's have a latency)",
                    f"histograms {count}, amupmu_spe_records_total {records}")
        # every record the model wrote on CPU 1 is in the exporter's count
        # (stats read before and after a scrape that drained them), and
        # the records times the interval are the model's EL0 operations
        stats = "sed -n 's/^cpu1 ops_el0=\\([0-9]*\\) .* records=\\([0-9]*\\) .*/\\1 \\2/p' " \
                "/sys/kernel/debug/amupmu/spe_stats"
        _, a = self.control(stats)
        time.sleep(2.5)
        p = self.scalar(f'amupmu_spe_records_total{{{c1}}}')
        iv = self.scalar('amupmu_spe_interval_operations')
        _, b = self.control(stats)
        try:
            (_, rec_a), (ops_b, rec_b) = ([int(x) for x in v.split()[-2:]] for v in (a, b))
        except ValueError:
            rec_a = rec_b = ops_b = None
        self.result(p is not None and rec_a is not None and rec_a <= p <= rec_b,
                    "the exporter decoded every record the model wrote on CPU 1",
                    f"exporter {p}, model {rec_a} before the scrape and {rec_b} after")
        self.result(p and iv == interval and ops_b and abs(p * iv - ops_b) <= 0.01 * ops_b + 2 * iv,
                    "records times amupmu_spe_interval_operations: the model's EL0 operations within 1 %",
                    f"{p} x {iv} = {p * iv if p and iv else None}, model ops_el0 {ops_b}")
        low = self.scalar(f'sum(amupmu_spe_latency_cycles_bucket{{{c1},op=~"branch|load|store",le="32.0"}})', at)
        br = self.scalar(f'amupmu_spe_latency_cycles_count{{{c1},op="branch"}}', at)
        br_in = self.scalar(f'amupmu_spe_latency_cycles_bucket{{{c1},op="branch",le="256.0"}}', at)
        self.result(low == 0 and br and br == br_in,
                    f"latencies as the model's at lat={lat}: no branch, load or store at 32 cycles or below, "
                    "every branch at 256 or below",
                    f"le 32: {low}, branches {br}, of them le 256: {br_in}")
        med = self.scalar(f'histogram_quantile(0.5, rate(amupmu_spe_latency_cycles_bucket{{{c1},op="branch"}}[{w}]))',
                          at)
        self.result(med is not None and 64 <= med <= 128,
                    "histogram_quantile(0.5) of the branches: in the model's median's bucket (64, 128]",
                    f"{med} cycles (the model: uniform over 50-150)")
        share = self.scalar(f'sum(rate(amupmu_spe_latency_cycles_count{{{c1},op="branch"}}[{w}])) / '
                            f'sum(rate(amupmu_spe_latency_cycles_count{{{c1}}}[{w}]))', at)
        self.result(share is not None and abs(share - 0.15) < 0.03,
                    "the branches' share of the samples: the model's 150 in 1000 within 0.03", f"{share}")
        lost = self.scalar(f'amupmu_spe_lost_bytes_total{{{c1}}}', at)
        self.result(lost == 0, "no SPE record lost at this interval", f"amupmu_spe_lost_bytes_total {lost}")
        self.offline_online(f'amupmu_spe_records_total{{{c1}}}')
        before = self.scalar(f'amupmu_spe_records_total{{{c1}}}')
        rc, _ = self.control(self.busy(3))
        time.sleep(3)
        after = self.scalar(f'amupmu_spe_records_total{{{c1}}}')
        self.result(rc == 0 and before is not None and after is not None and after > before,
                    "CPU 1 profiled again after it came back", f"records {before} -> {after}")

    def run_prod(self):
        self.control("insmod /amupmu.ko")
        # spe = on where QEMU has no SPE: said once, everything else served
        self.exporter_up("inst_retired:u,cpu_cycles:u", "spe = on\\n")
        metric = 'amupmu_pmu_events_total{cpu="1",event="inst_retired:u"}'
        time.sleep(2)
        # (the status, not the output: a short command's output is
        # sometimes lost on the way back)
        rc, out = self.control("n=$(grep -c 'spe: no online CPU has SPE' /tmp/exporter.log); echo $n; [ \"$n\" = 1 ]")
        spe_err = self.scalar('amupmu_exporter_scrape_errors_total{source="spe"}')
        hist = self.query('amupmu_spe_latency_cycles_count')
        self.result(rc == 0 and spe_err == 0 and not hist,
                    "spe = on without SPE (QEMU): the log says so once, no SPE series, no scrape error",
                    f"log lines {out.strip()}, scrape errors (spe) {spe_err}, histograms {hist}")
        t0 = time.time()
        rc, out = self.control("amupmu stat -C 1 -e inst_retired:u -x , -- taskset 2 amupmu-workload loop 100000000")
        time.sleep(3)
        t1 = time.time()
        stat = None
        for line in out.split("\n"):
            f = line.split(",")
            if len(f) > 2 and f[2].startswith("inst_retired"):
                stat = float(f[0])
        before = self.scalar(metric, at=t0)
        after = self.scalar(metric, at=t1)
        self.result(rc == 0 and stat is not None, "amupmu stat -C 1 of a workload on CPU 1", f"{stat}")
        if stat is not None and before is not None and after is not None:
            delta = after - before
            self.result(stat <= delta <= stat * (1 + PMU_SLACK) + 2e6,
                        f"the exporter's inst_retired:u over the run == amupmu stat's (+{PMU_SLACK:.0%})",
                        f"exporter {delta:.0f}, amupmu stat {stat:.0f}")
        else:
            self.result(False, "the exporter's inst_retired:u on CPU 1 before and after", f"{before} {after}")
        cyc = self.scalar('amupmu_pmu_events_total{cpu="0",event="cpu_cycles:u"}')
        self.result(cyc is not None and cyc > 0, "cpu_cycles:u counted on CPU 0", f"{cyc}")
        self.throttled_and_lost()
        self.offline_online(metric)
        rc, out = self.control("rmmod amupmu; s=$?; grep -q '^amupmu ' /proc/modules && exit $((s == 0))")
        self.result(rc == 0, "rmmod refused while the exporter's PMU session is open (the module stays)", out)
        # (a scrape may miss its 1 s timeout on a loaded host: up flaps)
        ok = self.wait_for('up{job="amupmu"}', 1, 30) and self.wait_for("amupmu_up", 1, 30)
        self.result(ok, "the exporter answers on after the refused rmmod",
                    "" if ok else f"target: {self.target_health()}")

    def throttled_and_lost(self):
        """Another process's sampling sessions, losing records and throttled:
        amupmu record of CPU_CYCLES on CPU 1 every 1000 cycles (the
        smallest sample_period_min allows) with a one-page ring, which may
        drop records, then again with sample_rate_max lowered to 1,000
        interrupts per second (4 a tick at HZ 250, far below the demand:
        throttled every tick, as the selftest sample_throttled does). The
        exporter reads the driver's exact totals since the module's load
        (netlink CPU_GET, ABI 2.5): the records record says CPU 1's ring
        lost, exactly (the module was loaded for this test and no other
        session samples), and at least one throttle on CPU 1."""
        p = "/sys/module/amupmu/parameters"
        record = ("amupmu record -C 1 -e cpu_cycles -c 1000 --pages 1 -o /tmp/throttle.rec -- "
                  "taskset 2 amupmu-workload loop 30000000")
        rc, out = self.control(f"m=$(cat {p}/sample_period_min); echo 1000 >{p}/sample_period_min && {record}; "
                               f"s=$?; echo $m >{p}/sample_period_min; exit $s")
        lost = None
        for line in out.split("\n"):
            m = re.search(r"; ([0-9]+) lost, ", line)
            if m:
                lost = int(m.group(1))
        self.result(rc == 0 and lost is not None, "amupmu record of CPU 1 every 1000 cycles, one-page ring",
                    f"{lost} lost")
        q_lost = 'amupmu_pmu_samples_lost_total{cpu="1"}'
        exp_lost = missed = None
        end = time.time() + 15
        while time.time() < end:
            exp_lost = self.scalar(q_lost)
            missed = self.scalar("amupmu_exporter_events_missed_total")
            if exp_lost is not None and exp_lost == lost:
                break
            time.sleep(1)
        ok = exp_lost is not None and lost is not None and exp_lost == lost
        self.result(ok, "the exporter's lost samples on CPU 1: record's count, exactly",
                    f"{q_lost} {exp_lost}, amupmu record {lost}, missed events {missed}")
        rc, out = self.control(f"m=$(cat {p}/sample_period_min); r=$(cat {p}/sample_rate_max); "
                               f"echo 1000 >{p}/sample_period_min && echo 1000 >{p}/sample_rate_max && {record}; "
                               f"s=$?; echo $m >{p}/sample_period_min; echo $r >{p}/sample_rate_max; exit $s")
        self.result(rc == 0, "amupmu record of CPU 1 again, sample_rate_max 1000")
        q_thr = 'amupmu_pmu_sample_throttles_total{cpu="1"}'
        thr = None
        end = time.time() + 15
        while time.time() < end:
            thr = self.scalar(q_thr)
            if thr:
                break
            time.sleep(1)
        self.result(thr is not None and thr >= 1, "the exporter counts the record's throttled interrupts on CPU 1",
                    f"{q_thr} {thr}")

    def figures(self):
        """The exporter's cost on this board (figures, not checks): the
        median scrape duration it reports, and its CPU time per scrape from
        /proc/PID/stat over about 10 scrapes (guest time under TCG)."""
        cmd = "p=$(pidof amupmu-dyn); set -- $(cut -d' ' -f14,15 /proc/$p/stat); echo $(($1 + $2))"
        _, a = self.control(cmd, quiet=True)
        s0 = self.scalar('exposer_scrapes_total')
        time.sleep(10)
        _, b = self.control(cmd, quiet=True)
        s1 = self.scalar('exposer_scrapes_total')
        med = self.scalar("quantile_over_time(0.5, amupmu_exporter_scrape_duration_seconds[10s])")
        try:
            ticks = int(b.split()[-1]) - int(a.split()[-1])
            per = ticks / 100 / (s1 - s0)
            line = (f"exporter cost: scrape {med * 1e3:.2f} ms (median, its own figure), CPU {per * 1e3:.1f} ms "
                    f"per scrape ({ticks} ticks over {s1 - s0:.0f} scrapes), {per / 15:.3%} of a CPU at a 15 s interval")
        except (ValueError, TypeError, ZeroDivisionError, IndexError) as e:
            line = f"exporter cost: not measured ({e})"
        print("# " + line, flush=True)
        self.tell("# " + line)

    def exporter_value(self, name):
        """A value of the exporter's /metrics, read from the host."""
        url = f"http://127.0.0.1:{self.exp_port}/metrics"
        with urllib.request.urlopen(url, timeout=60) as r:
            for line in r.read().decode().split("\n"):
                if line.startswith(name + " "):
                    return float(line.split()[1])
        raise ValueError(f"no {name} in /metrics")

    def run_bench(self):
        """make bench's figures: the exporter serving the AMU and two PMU
        events (every CPU) and the driver's health, scraped every second for
        30 s: guest CPU time per scrape (utime + stime of /proc/PID/stat,
        10 ms ticks) and the scrape duration it reports (median), under
        -icount: guest time follows the instructions executed."""
        self.control("insmod /amupmu.ko")
        spe_interval = 1 << 18
        self.exporter_up("inst_retired,cpu_cycles", f"spe = on\\nspe_interval = {spe_interval}\\n" if self.args.spe else "")
        cmd = "p=$(pidof amupmu-dyn); set -- $(cut -d' ' -f14,15 /proc/$p/stat); echo $(($1 + $2))"
        if self.args.spe:
            # CPU 1 busy at EL0 all through the window: the mock model's
            # 1e9 operations a second, one record in 2^18
            self.control(self.busy(40, background=True), quiet=True)
        time.sleep(3)
        # the scrapes counted by the exporter itself (prometheus-cpp's
        # exposer_scrapes_total, read here, one scrape more): Prometheus
        # misses the ones that outlast its 1 s timeout on a slow guest
        _, a = self.control(cmd, quiet=True)
        s0 = self.exporter_value("exposer_scrapes_total")
        time.sleep(30)
        _, b = self.control(cmd, quiet=True)
        s1 = self.exporter_value("exposer_scrapes_total") - 1
        med = self.scalar("quantile_over_time(0.5, amupmu_exporter_scrape_duration_seconds[30s])")
        size = self.scalar('max_over_time(scrape_samples_scraped{job="amupmu"}[30s])')
        try:
            ticks = int(b.split()[-1]) - int(a.split()[-1])
            n = s1 - s0
            fig = {"smp": self.args.s, "scrapes": int(n), "cpu_ms_per_scrape": round(ticks * 10 / n, 3),
                   "cpu_share_at_15s": round(ticks / 100 / n / 15, 6),
                   "scrape_ms_median": None if med is None else round(med * 1e3, 3),
                   "samples_per_scrape": None if size is None else int(size),
                   "prometheus_up_share": self.scalar('avg_over_time(up{job="amupmu"}[30s])')}
            if self.args.spe:
                rec = self.scalar('sum(rate(amupmu_spe_records_total[30s]))')
                fig.update({"spe_interval": spe_interval, "spe_records_per_s": round(rec, 1),
                            "cpu_ms_per_s": round(ticks * 10 / 30, 3),
                            "us_per_record": round(ticks * 1e4 / 30 / rec, 2) if rec else None})
            ok = True
        except (ValueError, TypeError, ZeroDivisionError, IndexError, OSError) as e:
            fig = {"smp": self.args.s, "error": str(e)}
            ok = False
        print("BENCH-JSON " + json.dumps(fig), flush=True)
        self.result(ok, f"exporter cost at -smp {self.args.s} measured", json.dumps(fig))

    def stop_exporter(self):
        rc, out = self.control("kill $(pidof amupmu-dyn); i=0; while pidof amupmu-dyn >/dev/null && [ $i -lt 50 ]; "
                               "do sleep 0.2; i=$((i+1)); done; cat /tmp/exporter.log; ! pidof amupmu-dyn")
        self.result(rc == 0 and "stopped by signal 15" in out, "the exporter stops on SIGTERM, nothing crashed",
                    out.split("\n")[-1] if out else "")
        rc, out = self.control("rmmod amupmu")
        self.result(rc == 0, "rmmod after the exporter stopped", out)

    def run(self):
        os.makedirs(self.dir, exist_ok=True)
        self.exp_port, self.ctl_port, self.prom_port = free_port(), free_port(), free_port()
        t_start = time.time()
        self.start_prometheus()
        board_log = open(os.path.join(self.dir, "board.log"), "w")
        self.board = subprocess.Popen(
            [os.path.join(TOP, "tools", "board", "run.sh"), "-k", self.args.k, "-m", self.args.m, "-d", "amupmu",
             "-v", self.args.v, "-n", f"{self.exp_port}:{EXPORTER_PORT},{self.ctl_port}:{CONTROL_PORT}",
             "-t", str(self.args.t), "-s", str(self.args.s)]
            # QEMU's PMU implements INST_RETIRED only under -icount (the
            # prod board counts it, the bench's guest time follows the
            # instructions); the mock AMU's rates follow the guest's clock,
            # which -icount would tie to the instructions run
            + (["-i"] if self.icount else []) + ["remote"],
            stdout=board_log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            if not self.wait_control(self.args.t):
                self.result(False, "the board's control port answers")
            else:
                self.steps(t_start)
            try:
                rc = self.board.wait(timeout=120)
            except subprocess.TimeoutExpired:
                rc = None
        finally:
            for p in (self.board, self.prom):
                if p and p.poll() is None:
                    os.killpg(p.pid, signal.SIGTERM)
                    try:
                        p.wait(timeout=20)
                    except subprocess.TimeoutExpired:
                        os.killpg(p.pid, signal.SIGKILL)
                        p.wait()
        return self.summary(board_log, rc, t_start)

    def steps(self, t_start):
        try:
            print(f"# board up after {time.time() - t_start:.0f} s", flush=True)
            if self.args.bench:
                self.run_bench()
            elif self.args.v == "mock":
                self.run_mock()
                self.figures()
                self.stop_exporter()
                self.run_spe()
            else:
                self.run_prod()
                self.figures()
            self.stop_exporter()
            self.control("exit", quiet=True)
        except OSError as e:
            # the board went away (its timeout, a crash): what run.sh says
            self.result(False, "the board answers the whole run", str(e))

    def summary(self, board_log, rc, t_start):
        board_log.close()
        with open(os.path.join(self.dir, "board.log")) as f:
            tail = [l for l in f if l.startswith(("board ", "not ok"))]
        print("".join("# " + l for l in tail), end="")
        took = time.time() - t_start
        print(f"exporter-test {self.name}: {self.n - self.failed} passed, {self.failed} failed "
              f"(board status {rc}), {took:.0f} s")
        return 0 if self.failed == 0 and rc == 0 else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", default="6.1", choices=["6.1", "6.12"])
    ap.add_argument("-v", default="mock", choices=["mock", "prod"])
    ap.add_argument("-m", default="el1", choices=["el1", "vhe"])
    ap.add_argument("-t", type=int, default=0, help="the board's timeout (s; default 900, as make check gives its boards; --bench 1500)")
    ap.add_argument("-s", type=int, default=2, help="vCPUs (run.sh -s)")
    ap.add_argument("--bench", action="store_true",
                    help="make bench's figures instead of the checks (-icount; BENCH-JSON line)")
    ap.add_argument("--spe", action="store_true",
                    help="with --bench: the SPE histograms on too (spe_interval 2^18), CPU 1 busy")
    args = ap.parse_args()
    if not args.t:
        # -icount with 8 vCPUs on one TCG thread boots in minutes on a loaded host
        args.t = 1500 if args.bench else 900
    sys.exit(Test(args).run())


if __name__ == "__main__":
    main()
