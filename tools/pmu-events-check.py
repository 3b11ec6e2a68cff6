#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Cross-check amupmu's event names against Linux perf's pmu-events JSON.

  tools/pmu-events-check.py --amupmu BINARY [--emulator CMD] --allow FILE
                            (--arch-dir DIR | --tarball TAR --cache DIR)

perf's tables (tools/perf/pmu-events/arch/arm64/ of Debian's
linux-source-6.1: mapfile.csv, each core's directory, and the architected
common-and-microarch.json and recommended.json) are GPL data: this test reads
them, nothing of them enters the library or the tree. --tarball extracts
that directory of /usr/src/linux-source-6.1.tar.xz into --cache once.

For every core of perf's mapfile.csv, `amupmu list --midr MIDR --json`
(run through the emulator for a cross build: qemu-aarch64 ...) gives the
names amupmu resolves on that core and their numbers: the architected
table, and where libpfm4 has the core (both know it) libpfm4's table.
Every name both know must have the same number in both; a disagreement
fails unless FILE lists it ("core NAME perf=0x.. amupmu=0x..  why", one
per line, '#' comments) with its explanation. Names only one side knows
are counted, not failures (perf's tables and libpfm4's are not the same
lists). perf's architected tables are compared with amupmu's own the same
way (core "common"). An allowed disagreement that no longer occurs fails
too, so that the list stays true.

Top-down metrics are not compared: linux-source-6.1's arm64 tables have
no Arm top-down metric (only HiSilicon hip08's, in HiSilicon's own
methodology; Arm's sbsa.json came with Linux 6.2, the Neoverse
metrics.json with 6.6).

Prints one line per core and ends with "pmu-events: N passed, N failed"
(a core passes when all its shared names agree).
"""

import argparse
import csv
import glob
import json
import os
import shlex
import subprocess
import sys

ARCH = "linux-source-6.1/tools/perf/pmu-events/arch/arm64"


def extract(tarball, cache):
    arch = os.path.join(cache, ARCH)
    if os.path.isfile(os.path.join(arch, "mapfile.csv")):
        return arch
    if not os.path.isfile(tarball):
        sys.exit(f"pmu-events: {tarball} is missing: install Debian's linux-source-6.1 (make deps)")
    os.makedirs(cache, exist_ok=True)
    subprocess.run(["tar", "-xJf", tarball, "-C", cache, "--wildcards", ARCH + "/*"], check=True)
    return arch


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def code(text):
    return int(text, 16) if isinstance(text, str) else int(text)


def architected(arch):
    """perf's ArchStdEvent names -> number."""
    out = {}
    for name in ("common-and-microarch.json", "recommended.json"):
        path = os.path.join(arch, name)
        if os.path.isfile(path):
            for e in load(path):
                if "EventName" in e and "EventCode" in e:
                    out[e["EventName"].upper()] = code(e["EventCode"])
    return out


def perf_core(arch, directory, std):
    """A core's names -> number, ArchStdEvent resolved."""
    out = {}
    for path in sorted(glob.glob(os.path.join(arch, directory, "*.json"))):
        if os.path.basename(path) == "metrics.json":
            continue
        for e in load(path):
            if "ArchStdEvent" in e:
                name = e["ArchStdEvent"].upper()
                number = code(e["EventCode"]) if "EventCode" in e else std.get(name)
            elif "EventName" in e and "EventCode" in e:
                name, number = e["EventName"].upper(), code(e["EventCode"])
            else:
                continue
            if number is not None:
                out[name] = number
    return out


def amupmu_events(binary, emulator, midr):
    r = subprocess.run(emulator + [binary, "list", "--json", "--midr", hex(midr)],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit(f"pmu-events: amupmu list --midr {hex(midr)} exited {r.returncode}: {r.stderr.strip()}")
    doc = json.loads(r.stdout)
    names = {}
    for e in doc["events"]:
        if e["group"] in ("architected", "core") and "event" in e:
            names[e["name"].upper()] = int(e["event"], 16)
    return doc["cpus"][0], names


def read_allow(path):
    allow = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 4)
            if len(parts) < 5:
                sys.exit(f"pmu-events: {path}:{n}: 'core NAME perf=0x.. amupmu=0x.. why' expected")
            core, name, p, a, why = parts
            allow[(core, name.upper(), p, a)] = why
    return allow


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--amupmu", required=True)
    ap.add_argument("--emulator", default="", help="the emulator command, words split by ';' or spaces")
    ap.add_argument("--allow", required=True)
    ap.add_argument("--arch-dir")
    ap.add_argument("--tarball", default="/usr/src/linux-source-6.1.tar.xz")
    ap.add_argument("--cache")
    args = ap.parse_args()
    arch = args.arch_dir or extract(args.tarball, args.cache or "build/pmu-events")
    emulator = [w for w in args.emulator.replace(";", " ").split() if w]
    allow = read_allow(args.allow)
    used = set()
    std = architected(arch)
    passed = failed = 0

    def compare(core, theirs, ours):
        nonlocal passed, failed
        both = sorted(set(theirs) & set(ours))
        bad = []
        for name in both:
            if theirs[name] == ours[name]:
                continue
            key = (core, name, f"perf={theirs[name]:#x}", f"amupmu={ours[name]:#x}")
            if key in allow:
                used.add(key)
                print(f"  allowed: {core} {name} perf={theirs[name]:#x} amupmu={ours[name]:#x}: {allow[key]}")
            else:
                bad.append(f"{name} perf={theirs[name]:#x} amupmu={ours[name]:#x}")
        return both, bad

    # the architected tables, with any core's amupmu names (MIDR 0: none of its own)
    _, ours = amupmu_events(args.amupmu, emulator, 0)
    both, bad = compare("common", std, ours)
    line = f"common: {len(both)} names both know agree" if not bad else \
        f"common: DISAGREE on {len(bad)} of {len(both)}: {'; '.join(bad)}"
    print(line)
    passed, failed = (passed + 1, failed) if not bad else (passed, failed + 1)

    with open(os.path.join(arch, "mapfile.csv"), encoding="utf-8") as f:
        rows = [r for r in csv.reader(l for l in f if not l.startswith("#")) if len(r) >= 4]
    seen = set()
    for midr_text, _, directory, kind in rows:
        if kind.strip() != "core":
            continue
        midr = int(midr_text, 16)
        if (midr, directory) in seen:
            continue
        seen.add((midr, directory))
        cpu, ours = amupmu_events(args.amupmu, emulator, midr)
        theirs = perf_core(arch, directory, std)
        table = cpu["table"] or "architected only"
        both, bad = compare(directory, theirs, ours)
        only_perf = len(set(theirs) - set(ours))
        only_ours = len(set(ours) - set(theirs))
        verdict = "agree" if not bad else f"DISAGREE on {len(bad)}: {'; '.join(bad)}"
        print(f"{directory} ({midr:#010x}, {cpu['core']}; {table}): {len(both)} names both know {verdict}; "
              f"{only_perf} only perf's, {only_ours} only amupmu's")
        if bad:
            failed += 1
        else:
            passed += 1

    stale = [k for k in allow if k not in used]
    for k in stale:
        print(f"stale allow entry (the disagreement no longer occurs): {' '.join(k)}")
        failed += 1
    print(f"pmu-events: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
