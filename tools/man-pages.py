#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Build amupmu's manual pages from the rst documentation (rst2man).

  tools/man-pages.py --out DIR [--version V] [--date YYYY-MM-DD] [--rst-only]

V and the date default to debian/changelog's newest entry.

The pages have no source of their own: each is put together from the
sections of the documentation that describe its subject, so that the
documentation and the pages cannot drift apart:

  amupmu(1)            Documentation/userspace-api/amupmu-tool.rst, "The
                       ``amupmu`` command": its introduction (how a COMMAND
                       is run), and the list of commands below
  amupmu-CMD(1)        the same section's definition-list items whose term
                       is ``amupmu CMD ...`` (their terms are the SYNOPSIS,
                       their bodies the DESCRIPTION); calibrate: the
                       "Calibration" section; spe claim/release: the admin
                       guide's paragraph on them
  amupmu-workload(1)   amupmu-tool.rst, "Workloads"
  amupmu(4)            Documentation/userspace-api/amupmu.rst, whole

What is here is only what a manual page needs beside that text: each page's
NAME line (tools/man-check.py checks it against `amupmu --help`), FILES,
ENVIRONMENT, EXIT STATUS where the text has none, and SEE ALSO. DIR gets
NAME.SECTION.rst (what rst2man reads; tools/man-check.py reads it too) and
NAME.SECTION, the page. Warnings of the rst parser are errors.
"""

import argparse
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL_RST = "Documentation/userspace-api/amupmu-tool.rst"
UAPI_RST = "Documentation/userspace-api/amupmu.rst"
ADMIN_RST = "Documentation/admin-guide/amupmu.rst"

# command -> the one-line summary `amupmu --help` gives it (checked by
# tools/man-check.py), in --help's order
COMMANDS = [
    ("info", "show the driver ABI, PMU ownership, kernel EL, GIC and each CPU's PMU, SPE and AMU"),
    ("doctor", "check the module, device, privileges, PMU, AMU and SPE: what works, why not, the fix"),
    ("list", "list the events of the CPUs present by group, as perf list (libpfm4 names per core)"),
    ("stat", "count PMU events on whole CPUs over a command (perf stat -a): totals, metrics, errata"),
    ("amu", "AMU per CPU over a command or every interval: MHz, IPC, memory stall, active %"),
    ("record", "run a command and sample PCs on counter overflow, to a file"),
    ("report", "hottest PCs and symbols of a recording"),
    ("script", "a recording as perf script's text (FlameGraph, speedscope)"),
    ("calibrate", "measure this board's erratum parameters and store them"),
    ("spe", "SPE profiling: record, report, dump, knobs; claim or release the SPE device"),
    ("monitor", "print the driver's netlink events as they arrive (hotplug, owners, sessions, lost samples)"),
    ("exporter", "serve AMU, PMU and driver metrics to Prometheus over HTTP"),
]

# the perf pages a reader of each amupmu page knows its model from
PERF_SEE_ALSO = {
    "stat": ["perf-stat(1)"], "list": ["perf-list(1)"], "record": ["perf-record(1)"], "report": ["perf-report(1)"],
    "script": ["perf-script(1)"], "spe": ["perf-arm-spe(1)"],
}

EXIT_STATUS_GENERIC = (
    "0 on success; 1 on an error, usage errors included; 2 when the device node "
    "is missing (the amupmu module is not loaded). A command that runs a COMMAND "
    "exits with COMMAND's status (128 + signal when it was killed), unless the "
    "DESCRIPTION says otherwise.")


class RstError(Exception):
    pass


def read(rel):
    with open(os.path.join(TOP, rel), encoding="utf-8") as f:
        return f.read().split("\n")


def is_underline(line, ch=None):
    return len(line) >= 3 and len(set(line)) == 1 and line[0] in "=-~^" and (ch is None or line[0] == ch)


def section(lines, title, rel):
    """The body of the section TITLE (underlined, any level) up to the next
    heading of the same or a higher level."""
    for i in range(len(lines) - 1):
        if lines[i] == title and is_underline(lines[i + 1]) and len(lines[i + 1]) >= len(title):
            ch = lines[i + 1][0]
            level_chars = "=-~^"
            stop = level_chars[:level_chars.index(ch) + 1]
            body = []
            j = i + 2
            while j < len(lines):
                if (j + 1 < len(lines) and lines[j] and not lines[j].startswith(" ")
                        and is_underline(lines[j + 1]) and lines[j + 1][0] in stop
                        and len(lines[j + 1]) >= len(lines[j])
                        and not (j > 0 and is_underline(lines[j - 1]))):
                    break
                body.append(lines[j])
                j += 1
            return body
    raise RstError(f"{rel}: no section '{title}'")


def strip_headings(body):
    """A section's subsection headings (used where a body is included
    whole): their title kept as a paragraph."""
    out = []
    for k, line in enumerate(body):
        if is_underline(line) and k > 0 and body[k - 1] and len(line) >= len(body[k - 1]):
            continue
        out.append(line)
    return out


def definitions(body):
    """(term, body lines) of the definition-list items of BODY whose term is
    an ``amupmu ...`` literal, bodies dedented by their indentation."""
    items = []
    i = 0
    while i < len(body):
        line = body[i]
        if line.startswith("``amupmu ") and line.endswith("``") and i + 1 < len(body) \
                and body[i + 1].startswith(" "):
            term = line[2:-2]
            j = i + 1
            block = []
            while j < len(body) and (not body[j].strip() or body[j].startswith(" ")):
                block.append(body[j])
                j += 1
            indent = min(len(b) - len(b.lstrip()) for b in block if b.strip())
            items.append((term, [b[indent:] for b in block]))
            i = j
        else:
            i += 1
    return items


def unsphinx(lines):
    """Sphinx-only roles as the plain docutils rst2man uses: text."""
    return [re.sub(r":(?:doc|ref):`([^`<]*?)(?:\s*<[^>]*>)?`", r"``\1``", l) for l in lines]


def trim(lines):
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def heading(text, ch, over=False):
    bar = ch * max(len(text), 3)
    return ([bar] if over else []) + [text, bar, ""]


def page(name, section_no, summary, version, date, parts, see_also, sources):
    out = [f".. generated by tools/man-pages.py from {', '.join(sources)}: edit those", ""]
    out += heading(name, "=", over=True)
    out += heading(summary, "-", over=True)
    out += [f":Manual section: {section_no}", ":Manual group: amupmu", f":Version: {version}",
            f":Date: {date}", ""]
    for title, body in parts:
        out += heading(title, "=") + trim(unsphinx(body)) + [""]
    out += heading("SEE ALSO", "=") + [", ".join(f"**{s}**" for s in see_also), ""]
    return out


def literal_synopsis(terms):
    return ["| " + "``" + t + "``" for t in terms]


def build(version, date):
    tool = read(TOOL_RST)
    cmd_body = section(tool, "The ``amupmu`` command", TOOL_RST)
    defs = definitions(cmd_body)
    # the body of the subsection "``amupmu spe report``" is a definition too
    pages = {}
    all_cmd_pages = [f"amupmu-{c}(1)" for c, _ in COMMANDS]

    def see_also(cmd, extra=()):
        return (["amupmu(1)"] + [p for p in all_cmd_pages if p != f"amupmu-{cmd}(1)"]
                + list(extra) + ["amupmu(4)"] + PERF_SEE_ALSO.get(cmd, []))

    common = paragraph_starting(cmd_body, "Every command takes ``-h``", TOOL_RST)
    for cmd, summary in COMMANDS:
        mine = [(t, b) for t, b in defs if t == f"amupmu {cmd}" or t.startswith(f"amupmu {cmd} ")]
        sources = [TOOL_RST]
        if cmd == "calibrate":
            # the command section says "See Calibration"
            mine = [(t, b) for t, b in mine if "See Calibration" not in " ".join(b)]
            calib = section(tool, "Calibration", TOOL_RST)
            term = calib[1].split("``")[1] if calib[1].startswith("``amupmu calibrate") else "amupmu calibrate"
            mine = [(term, calib)] + mine
        if not mine:
            raise RstError(f"{TOOL_RST}: no ``amupmu {cmd} ...`` item for amupmu-{cmd}(1)")
        terms = [t for t, _ in mine]
        desc = []
        extra_parts = []
        if cmd == "spe":
            admin = read(ADMIN_RST)
            para = [l for l in paragraph_starting(admin, "``amupmu spe claim [DEVICE]``", ADMIN_RST)]
            terms = ["amupmu spe claim [DEVICE] [--sysfs DIR]",
                     "amupmu spe release [DEVICE] [--sysfs DIR]"] + terms
            desc += ["The SPE device", "--------------", ""] + para + [""]
            sources.append(ADMIN_RST)
        first = True
        for t, b in mine:
            if first and cmd != "spe":
                desc += b + [""]
            else:
                desc += heading("``" + t + "``", "-") + b + [""]
            first = False
        parts = [("SYNOPSIS", literal_synopsis(terms)), ("DESCRIPTION", desc),
                 ("COMMON OPTIONS", common)]
        if not re.search(r"(?i)exit(s with| status)", "\n".join(desc)):
            parts.append(("EXIT STATUS", [EXIT_STATUS_GENERIC]))
        if cmd == "doctor":
            parts.append(("ENVIRONMENT", ["``AMUPMU_DOCTOR_ROOT``",
                                          "    for tests: the root directory the checks read "
                                          "instead of /", ""]))
        if cmd == "calibrate":
            parts.append(("FILES", ["``/var/lib/amupmu/calibration``", "    the default calibration file", ""]))
            parts.append(("ENVIRONMENT", ["``AMUPMU_CALIBRATION``",
                                          "    the calibration file instead of the default", ""]))
        if cmd == "exporter":
            parts.append(("FILES", ["``/etc/amupmu/exporter.conf``",
                                    "    the configuration the systemd unit amupmu-exporter.service passes "
                                    "with --config", ""]))
        pages[(f"amupmu-{cmd}", 1)] = page(f"amupmu-{cmd}", 1, summary, version, date, parts,
                                           see_also(cmd), sources)

    # amupmu(1): the introduction of the command section and the commands
    intro = []
    for line in cmd_body:
        if line.startswith("``amupmu "):
            break
        intro.append(line)
    cmds = []
    for cmd, summary in COMMANDS:
        cmds += [f"**amupmu {cmd}**", f"    {summary}; **amupmu-{cmd}**\\ (1)", ""]
    parts = [
        ("SYNOPSIS", ["| ``amupmu <command> [options]``", "| ``amupmu help [<command>]``",
                      "| ``amupmu --help | --version``"]),
        ("DESCRIPTION", ["**amupmu** uses the amupmu driver (``/dev/amupmu``, **amupmu**\\ (4)) "
                         "to count and sample with the PMUv3 performance monitors, read the "
                         "Activity Monitors (AMU) and profile with the Statistical Profiling "
                         "Extension (SPE) of arm64 CPUs, printing what perf prints where perf "
                         "has a format. ``amupmu <command> --help`` shows a command's options, "
                         "``amupmu help <command>`` its manual page.",
                         ""]),
        ("COMMANDS", cmds),
        ("OPTIONS", ["``-h``, ``--help``", "    the commands, or with a command its options", "",
                     "``--version``", "    amupmu's version and the library's ABI", ""]),
        ("RUNNING A COMMAND", intro),
        ("EXIT STATUS", [EXIT_STATUS_GENERIC]),
        ("FILES", ["``/dev/amupmu``", "    the driver's device node (**amupmu**\\ (4))", "",
                   "``/var/lib/amupmu/calibration``", "    erratum parameters (**amupmu-calibrate**\\ (1))", ""]),
    ]
    pages[("amupmu", 1)] = page("amupmu", 1, "arm64 AMU, PMUv3 and SPE measurements through the amupmu driver",
                                version, date, parts,
                                all_cmd_pages + ["amupmu-workload(1)", "amupmu(4)", "perf(1)"], [TOOL_RST])

    # amupmu-workload(1)
    work = section(tool, "Workloads", TOOL_RST)
    parts = [("SYNOPSIS", ["| ``amupmu-workload loop N | branchy N RATE | chase STEPS KIB | "
                           "triad ELEMS REPS | memset KIB REPS | undef N``",
                           "| ``amupmu-workload-dyn ROUNDS``"]),
             ("DESCRIPTION", ["Workloads with known behaviour, for checking counts."] + [""] + work)]
    pages[("amupmu-workload", 1)] = page("amupmu-workload", 1, "workloads with known instruction and memory behaviour",
                                         version, date, parts, ["amupmu(1)", "amupmu-stat(1)"], [TOOL_RST])

    # amupmu(4): the ioctl ABI document, its title dropped
    uapi = read(UAPI_RST)
    title = next(i for i in range(1, len(uapi) - 1)
                 if is_underline(uapi[i - 1], "=") and is_underline(uapi[i + 1], "="))
    rest = uapi[title + 2:]
    # the document's sections become the page's; its first paragraphs the DESCRIPTION
    first_sec = next(i for i in range(len(rest) - 1)
                     if rest[i] and not rest[i].startswith(" ") and is_underline(rest[i + 1], "="))
    out = page("amupmu", 4, "arm64 AMU, PMUv3 and SPE driver: the /dev/amupmu device and its ioctls",
               version, date,
               [("SYNOPSIS", ["| ``#include <linux/amupmu.h>``", "|",
                              "| ``fd = open(\"/dev/amupmu\", O_RDWR | O_CLOEXEC);``",
                              "| ``ioctl(fd, AMUPMU_INFO, &info);``"]),
                ("DESCRIPTION", rest[:first_sec])],
               ["amupmu(1)", "perf_event_open(2)", "ioctl(2)"], [UAPI_RST])
    see = out.index("SEE ALSO")
    body = unsphinx(rest[first_sec:])
    body += [""] + heading("FILES", "=") + ["``/dev/amupmu``", "    the device node (misc device, mode 0666)",
                                             "", "``/sys/devices/virtual/misc/amupmu/``",
                                             "    the driver's per-CPU capability files", ""]
    pages[("amupmu", 4)] = out[:see] + body + [""] + out[see:]
    return pages


def paragraph_starting(lines, start, rel):
    for i, line in enumerate(lines):
        if line.startswith(start):
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            return lines[i:j]
    raise RstError(f"{rel}: no paragraph starting '{start}'")


def changelog_release():
    """debian/changelog's newest version and date (YYYY-MM-DD): the pages'
    defaults, the packages' own (dpkg sets SOURCE_DATE_EPOCH from that date)."""
    import email.utils
    with open(os.path.join(TOP, "debian/changelog"), encoding="utf-8") as f:
        text = f.read()
    version = re.match(r"\S+ \(([^)]+)\)", text).group(1).split("-")[0]
    stamp = re.search(r"^ -- .*?>  (.+)$", text, re.M).group(1)
    return version, email.utils.parsedate_to_datetime(stamp).strftime("%Y-%m-%d")


def main():
    version, date = changelog_release()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--version", default=version)
    ap.add_argument("--date", default=date)
    ap.add_argument("--rst-only", action="store_true", help="write the rst, run no rst2man")
    args = ap.parse_args()
    try:
        pages = build(args.version, args.date)
    except RstError as e:
        print(f"man-pages: {e}", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    if not args.rst_only:
        from docutils.core import publish_file
        from docutils.writers import manpage
    status = 0
    for (name, sec), lines in sorted(pages.items()):
        rst = os.path.join(args.out, f"{name}.{sec}.rst")
        with open(rst, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        if args.rst_only:
            continue
        try:
            publish_file(source_path=rst, destination_path=os.path.join(args.out, f"{name}.{sec}"),
                         writer=manpage.Writer(),
                         settings_overrides={"halt_level": 2, "report_level": 2,
                                             "input_encoding": "utf-8", "output_encoding": "utf-8"})
        except Exception as e:  # docutils' SystemMessage: the parser's warning
            print(f"man-pages: {rst}: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
