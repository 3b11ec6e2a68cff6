#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Documentation/dev-tools/amupmu-reliability.rst: the reliability suites
and the figures they printed on the boards.

Every suite prints "# AMUPMU-FIGURE <suite> key=value ..." lines; this
script reads them from build/board/*/console.log.

  reliability-table.py --update   rewrite the document (suites + figures)
  reliability-table.py --check    TAP: the committed suite table is the one
                                  SUITES below generates (the figures part
                                  may differ: it depends on the run), and
                                  with --require-figures every suite printed
                                  its figure on every board it runs on in
                                  build/board/ with no failure marker
                                  (--since PATH: only boards booted after
                                  PATH was last modified)
"""
import glob
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(TOP, "Documentation/dev-tools/amupmu-reliability.rst")
BOARDS = os.path.join(TOP, "build/board")

# suite, program, boards (payload: kernels machine DT/variant), what it checks, backend
SUITES = [
    ("fuzz", "amupmu_fuzz (payload fuzz)", "fuzz: 6.1+6.12 vhe amupmu/prod; 6.1 el1 amupmu/prod, stock/prod; 6.12 el1 amupmu/mock",
     "200,000 ioctl/read/poll/mmap calls from 4 threads (make soak: 10,000,000; shared mode: "
     "pmu_shared toggled too): every answer in the errno contract, nothing left allocated",
     "QEMU PMU (exclusive or shared mode), mock AMU/SPE"),
    ("hostile", "amupmu_hostile (payload hostile)",
     "hostile: 6.12 vhe stock/prod; 6.1-debug el1 amupmu/mock -S yes, vhe amupmu/prod",
     "hostile local users for 60 guest s: 4 processes (root; uid 65534 after and before open) x 3 "
     "files x 2 threads of random valid and invalid commands, poll/epoll (unbounded waits "
     "too), mmap of the ring, the SPE buffers and random offsets, read, fork, close/dup, "
     "netlink, while a controller offlines/onlines CPUs, unbinds/binds amupmu-spe, writes the "
     "arm_spe knobs and toggles pmu_shared: every errno in the contract, no worker killed or "
     "30 s in a call, no kernel splat; seeded (-s replays)",
     "QEMU PMU (exclusive or shared mode), mock AMU/SPE"),
    ("netlink-fuzz", "amupmu_netlink_test fuzz", "check: every board (3,000 messages); fuzz: as fuzz (20,000)",
     "random generic netlink requests as root and as nobody: message types, commands, versions, "
     "flags, attribute types, lengths, values and nesting, wrong lengths, sockets closed while "
     "subscribed: every answer in the errno contract, every well-formed request answered, no "
     "subscription left", "the driver's netlink family"),
    ("fuzz-memory", "payload fuzz", "as fuzz",
     "Slab and VmallocUsed after the fuzz and a reload, against after a warm-up round (512 / 256 kB; MemAvailable reported)",
     "host kernel"),
    ("abi-AMUPMU_INFO", "amupmu_abi_test", "check: every board",
     "size-1/0/4 EINVAL, +1/+8 tail E2BIG, > 4096 E2BIG, zero tail accepted, each flag and "
     "reserved bit EINVAL, 256 unknown nr/dir/type ENOTTY; state unchanged", "QEMU PMU"),
    ("abi-AMUPMU_PMU_CONFIG", "amupmu_abi_test", "check: every board", "as above", "QEMU PMU"),
    ("abi-AMUPMU_PMU_CTL", "amupmu_abi_test", "check: every board", "as above", "QEMU PMU"),
    ("abi-AMUPMU_PMU_READ", "amupmu_abi_test", "check: every board", "as above", "QEMU PMU"),
    ("abi-AMUPMU_AMU_READ", "amupmu_abi_test", "check: every board",
     "as above; without a usable AMU a valid request is EOPNOTSUPP", "mock AMU / none (prod)"),
    ("abi-AMUPMU_AMU_READ-fields", "amupmu_amu_abi_test", "check: every board; cpupm",
     "every size below VER0, flags/reserved bits, entry_size, nr_cpus, CPU set, cpus_len, "
     "EFAULT pointers: the errno, nothing written back", "mock AMU / none (prod)"),
    ("amu-hotplug-read", "amupmu_amu_hotplug_test", "check: amupmu/mock boards; cpupm",
     "4 threads reading every online CPU's AMU while cpu1 goes offline and back every 5 ms: "
     "each read succeeds, state 0 or AMUPMU_AMU_OFFLINE (time 0), counters, restarts and "
     "time never go backwards per CPU", "mock AMU"),
    ("spe-knobs", "amupmu_spe_test", "check: every board",
     "arm_spe debugfs knobs and spe_model: every knob's bad input EINVAL with nothing "
     "changed; CONSTRAINED UNPREDICTABLE and missing-feature refusals per PMSIDR_EL1/PMSVer",
     "mock SPE / none (prod)"),
    ("sysfs", "amupmu_sysfs_test", "check: every board",
     "every sysfs/parameter/debugfs file: read-only ones refuse writes (EACCES, also root); "
     "writable ones refuse bad input (EINVAL), value unchanged", "sysfs"),
    ("priv-matrix", "amupmu_priv_test", "check: every board",
     "uid 65534 / root without CAP_PERFMON / CAP_PERFMON only: open, INFO, CONFIG, CTL, "
     "debugfs, sysfs writes (Documentation/admin-guide/amupmu-privileges.rst)", "QEMU PMU"),
    ("priv-matrix-shared-off", "amupmu_priv_test", "check: stock boards",
     "the same table with shared mode off (pmu_shared=N): every PMU command ENXIO for everybody",
     "QEMU PMU (arm_pmu)"),
    ("hotplug", "amupmu_stress_test", "stress: 6.1+6.12 vhe, 6.1 el1 amupmu/prod -icount",
     "100 offline/online cycles per secondary CPU while counting and sampling on all CPUs: "
     "monotonic totals, AMUPMU_READ_OFFLINE, no interrupt storm", "QEMU PMU"),
    ("concurrency", "amupmu_stress_test", "stress (-icount, as hotplug), parallel: 6.1+6.12 el1 amupmu/prod",
     "8 threads of sessions against a hotplug toggler (20 s by default; in make check 4 guest s "
     "under -icount, 8 s on the parallel boards): only EBUSY refusals, no deadlock", "QEMU PMU"),
    ("concurrency-shared-toggle", "amupmu_stress_test", "stress: stock boards",
     "the same storm in shared mode while pmu_shared goes off and on every 2 ms: CONFIG EBUSY "
     "or ENXIO, nothing else; the groups' commands never refused", "QEMU PMU (perf core)"),
    ("load-unload", "amupmu_stress_test", "stress (-icount, as hotplug), parallel: 6.1+6.12 el1 amupmu/prod",
     "100 insmod/rmmod cycles; refused with a session open or a ring mapped; no IRQ left, "
     "Slab/MemAvailable within 512 / 4096 kB", "QEMU PMU"),
]

# which board payloads print which suites
PAYLOAD_SUITES = {
    "fuzz": ["fuzz", "netlink-fuzz", "fuzz-memory"],
    "hostile": ["hostile"],
    "check": ["abi-AMUPMU_INFO", "abi-AMUPMU_PMU_CONFIG", "abi-AMUPMU_PMU_CTL",
              "abi-AMUPMU_PMU_READ", "abi-AMUPMU_AMU_READ", "abi-AMUPMU_AMU_READ-fields",
              "amu-hotplug-read", "spe-knobs", "sysfs", "priv-matrix", "priv-matrix-shared-off",
              "netlink-fuzz"],
    "cpupm": ["abi-AMUPMU_AMU_READ-fields", "amu-hotplug-read"],
    "stress": ["hotplug", "concurrency", "concurrency-shared-toggle", "load-unload"],
    "soak": ["fuzz", "fuzz-memory"],
    "parallel": ["concurrency", "load-unload"],
}

# suites that run on some builds of a payload only: the board name's part
# (K-MACHINE-DT-VARIANT...) that must be there (the AMU model: mock builds)
SUITE_BOARDS = {
    "amu-hotplug-read": "-mock-",
    "priv-matrix-shared-off": "-stock-",
    "concurrency-shared-toggle": "-stock-",
}

BEGIN = ".. figures-begin (generated by tools/reliability-table.py --update)"
END = ".. figures-end"


def rst_table(header, rows):
    cols = list(zip(*([header] + rows)))
    w = [max(len(c) for c in col) for col in cols]
    line = "  ".join("=" * n for n in w)
    out = [line, "  ".join(h.ljust(n) for h, n in zip(header, w)).rstrip(), line]
    out += ["  ".join(c.ljust(n) for c, n in zip(r, w)).rstrip() for r in rows]
    out.append(line)
    return "\n".join(out)


def static_part():
    rows = [(s, p, b, c, be) for s, p, b, c, be in SUITES]
    return f"""\
.. SPDX-License-Identifier: GPL-2.0

==================================
amupmu reliability and security
==================================

For developers and reviewers who want to know how amupmu is tested against
misuse and load. It answers: which suites (fuzzers, hostile local users,
ABI sweeps, privileges, hotplug, concurrency, load/unload) run on which
boards and what each checks, which static gates the code passes, what the
suites found, and what the boards of the last ``make check`` printed.

Each suite prints its figure as a line
``# AMUPMU-FIGURE <suite> key=value ...``; ``tools/reliability-table.py
--update`` (``make reliability-doc``) collects them from the last boards
(``build/board/*/console.log``) into the table at the end. ``make check``
fails when the suite table below is not the one the script generates, or
when a suite did not print its figure on a board it runs on. The board
harness fails any boot whose kernel log has an oops, WARN, BUG or lockup,
so every figure below comes with 0 of them.

Suites
======

{rst_table(("suite", "program", "boards", "checks", "backend"), rows)}

Static gates
============

- ``amupmu.ko``: ``W=1`` and sparse (``C=2``) with zero warnings on 6.1 and
  6.12, ``checkpatch.pl --strict`` clean (``tools/checkpatch.sh``).
- C++ (``lib/``, ``tools/``): clang-tidy with ``.clang-tidy`` and cppcheck
  with ``tools/static/`` (``make static``), zero findings; the host tests
  built and run under AddressSanitizer + UndefinedBehaviorSanitizer
  (``make host-asan-test``, every report fatal).
- ``selftests/syzkaller/dev_amupmu.txt``: the syzkaller description of
  the ABI, checked against the UAPI header by
  ``selftests/syzkaller/check.py`` (``make syzcheck``).

Findings
========

- **QEMU multi-threaded TCG resets a CPU's PMU counters** (not amupmu).
  With a sampling session and a counting session on both CPUs, cycling
  cpu1 offline/online makes the counting session's totals on cpu0 fall
  back to a few tens of milliseconds' worth of counts, about once per 100
  cycles: every counter of cpu0 (the cycle counter and event counter 0)
  restarts from 0 while amupmu's saved previous value does not, so the
  64-bit total becomes the new hardware value. ftrace of every amupmu
  function during such a run shows no ``amupmu_pmu_hw_setup()`` (the only
  ``PMCR_EL0`` write with the reset bits) nor any counter write on cpu0
  besides the sampling counter's re-arm; without the sampling session (4 x
  400 cycles) and under ``-icount`` (single-threaded TCG, 3 x 400 cycles)
  it never happens. Repro: ``tools/board/run.sh -k 6.1 -d amupmu -v prod
  stress`` (``hotplug_counting`` fails in about one run of three). The
  stress payload therefore runs under ``-icount`` in ``make check``; the
  check itself stays (it must pass on hardware).
- **QEMU multi-threaded TCG loses counter values beside a sampling
  counter** (not amupmu; shared mode shows it through perf core). Without
  ``-icount``, a sampling counter's overflow timer runs QEMU's
  ``pmu_op_start()``/``pmu_op_finish()`` on the main thread while the vCPU
  thread runs the same pair at every exception entry and return
  (``target/arm/helper.c``), so now and then the other counters of that
  vCPU lose their values. arm_pmu starts a counting event at half range,
  so perf core's count jumps by almost 2^31 (32-bit event counters; 2^63
  with 64-bit ones). perf alone does it, without amupmu: two pinned
  counting ``CPU_CYCLES`` events and one sampling event (period 100000) on
  cpu0 of the 6.1 el1 stock board, read 300 times 1 ms apart, jumped 20,
  12 and 18 times in three runs (totals 1.5e10 to 2.2e10 where 3.07e8 was
  due); there were no jumps without the sampling event nor under
  ``-icount`` (three runs each). ``unbind.shared_off_with_sessions``
  failed in ``make check`` this way (session A's cpu0 total fell while
  session B sampled cpu0), so it samples on another CPU than the one whose
  counts it checks. The tests that check counts beside sampling on the
  same CPU run under ``-icount``; on hardware the checks stand as written.
- **Shared mode: RELEASE of an enabled sampling group crashed the
  kernel** (amupmu, fixed). The fuzzer on the 6.1 el1 stock board hit a
  NULL dereference in amupmu's perf overflow handler: RELEASE released the
  group's perf events one at a time while the group still counted, and an
  overflow of an event not yet released read every event of the group and
  met a released one. The release stops the group on every CPU first (on
  each CPU, interrupts off). ``pmu.sample_release_while_overflowing`` (400
  releases of 7-event groups sampling every ``sample_period_min`` cycles
  on two CPUs) crashed a board in one run of three without the fix;
  every stock check board runs it.
- **Hostile local users** (amupmu, fixed). Found by review,
  the debug kernel and the ``hostile`` fuzzer: a poller or epoll entry on
  an SPE wait queue that RELEASE freed (KASAN use-after-free in
  ``remove_wait_queue()``); SPE CONFIG charging locked memory and READ
  copying to user space under the lock ``mmap()`` takes (two threads hung
  in ``account_locked_vm()`` and ``amupmu_spe_mmap()``; the fuzzer's
  seed 2030299122 on 6.1 el1 mock); ``mmap()`` taking the SPE session
  lock at all (lockdep on 6.1-debug: ``mmap_lock`` -> session lock ->
  ``cpu_hotplug_lock`` -> ``sched_domains_mutex`` -> debugfs ``i_rwsem``
  -> ``mmap_lock``); the SPE buffer interrupt walking up to 4 MiB with
  interrupts off (33 ms measured; another CPU's ``AMU_READ`` cross call
  then soft-locked); exclusive-mode sampling without a limit (an
  interrupt storm soft-locked CPU 0 of the 6.1-debug el1 board in
  ``nl.ring_lost_event``); shared mode zeroing perf's throttle count (RCU
  stall and hard lockup on 6.12 vhe at the smallest period); user-only
  SPE sessions without ``CAP_PERFMON``; SPE sessions restarting after
  their device was unbound; locked memory uncharged at RELEASE while the
  buffers stayed mapped. Each has its test
  (``Documentation/admin-guide/amupmu-privileges.rst`` for the rows).
- ``sample_period_min`` refused values above ``U32_MAX`` with ``ERANGE``
  (``kstrtouint()``) where the documentation says ``EINVAL`` (fixed: every
  refused write is ``EINVAL``, and the sysfs suite checks it).
- amupmu cannot follow ``kernel.perf_event_paranoid`` (the sysctl is not
  exported to modules): ``CAP_PERFMON`` is required at every setting
  (``Documentation/admin-guide/amupmu-privileges.rst``).

Figures
=======

What the boards of the last ``make check`` printed. ``make soak``
(10,000,000 fuzzer calls per kernel) has not run on ABI 2; its rows appear
here when it does.

"""


def collect():
    figs = {}
    for log in glob.glob(os.path.join(BOARDS, "*", "console.log")):
        board = os.path.basename(os.path.dirname(log))
        for line in open(log, errors="replace"):
            m = re.match(r"# AMUPMU-FIGURE (\S+) (.*)$", line.strip())
            if m:
                figs[(board, m.group(1))] = m.group(2)
    return figs


def figures_part(figs):
    rows = [(b, s, v) for (b, s), v in sorted(figs.items())]
    if not rows:
        rows = [("(none)", "", "run make check, then make reliability-doc")]
    return "\n".join([BEGIN, "", rst_table(("board", "suite", "figures"), rows), "", END, ""])


def main():
    args = sys.argv[1:]
    if "--update" in args:
        open(DOC, "w").write(static_part() + figures_part(collect()))
        print(f"wrote {DOC}")
        return 0
    results = []
    doc = open(DOC).read() if os.path.exists(DOC) else ""
    ok = doc.split(BEGIN)[0] == static_part()
    results.append((ok, "suite table of Documentation/dev-tools/amupmu-reliability.rst is current"
                    + ("" if ok else " (run make reliability-doc)")))
    if "--require-figures" in args:
        figs = collect()
        since = 0.0
        if "--since" in args:
            since = os.path.getmtime(args[args.index("--since") + 1])
        boards = {os.path.basename(os.path.dirname(c))
                  for c in glob.glob(os.path.join(BOARDS, "*", "console.log"))
                  if os.path.getmtime(c) >= since}
        for board in sorted(boards):
            payload = board.rsplit("-", 1)[-1]
            for s in PAYLOAD_SUITES.get(payload, []):
                if SUITE_BOARDS.get(s, "-") not in f"-{board}-":
                    continue
                v = figs.get((board, s))
                good = v is not None and not re.search(r"(unexpected|splats)=[1-9]", v)
                results.append((good, f"{board}: {s}: {v or 'no figure'}"))
    print("TAP version 13")
    print(f"1..{len(results)}")
    for i, (good, what) in enumerate(results, 1):
        print(f"{'ok' if good else 'not ok'} {i} - {what}")
    return 0 if all(r[0] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
