#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the kselftest tests and assertions of selftests/amupmu/, to show
that moving tests between programs lost none.

  selftest-census.py [--rev REV] [--names] [FILE...]

Per file: the TEST / TEST_F / TEST_F_TIMEOUT definitions and the ASSERT_*
and EXPECT_* occurrences (comments and strings left out), then the totals.
--names lists every test as FIXTURE.NAME (TEST: the name alone), sorted,
and marks a name defined twice. --rev reads the files as they are at a git
revision (default: the work tree). FILE defaults to every .c and .h file of
selftests/amupmu/.
"""
import argparse
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIR = "selftests/amupmu"

TEST_RE = re.compile(r"^(TEST|TEST_F|TEST_F_TIMEOUT|TEST_SIGNAL)\s*\(\s*(\w+)(?:\s*,\s*(\w+))?",
                     re.M)
CHECK_RE = re.compile(r"\b(ASSERT|EXPECT)_[A-Z_]+\s*\(")


def strip_comments_and_strings(text):
    """The C text with comments and string/char literals blanked."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def files_at(rev, names):
    if rev is None:
        if not names:
            d = os.path.join(TOP, DIR)
            names = sorted(os.path.join(DIR, f) for f in os.listdir(d) if f.endswith((".c", ".h")))
        return [(f, open(os.path.join(TOP, f), encoding="utf-8").read()) for f in names]
    if not names:
        ls = subprocess.run(["git", "-C", TOP, "ls-tree", "--name-only", rev, DIR + "/"],
                            check=True, capture_output=True, text=True).stdout.split()
        names = sorted(f for f in ls if f.endswith((".c", ".h")))
    return [(f, subprocess.run(["git", "-C", TOP, "show", f"{rev}:{f}"], check=True,
                               capture_output=True, text=True).stdout) for f in names]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rev")
    ap.add_argument("--names", action="store_true")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()

    tot = {"tests": 0, "ASSERT": 0, "EXPECT": 0}
    names = []
    print(f"{'file':44} {'tests':>5} {'ASSERT':>6} {'EXPECT':>6}")
    for f, text in files_at(args.rev, args.files):
        code = strip_comments_and_strings(text)
        tests = TEST_RE.findall(code)
        checks = [m.group(1) for m in CHECK_RE.finditer(code)]
        row = {"tests": len(tests), "ASSERT": checks.count("ASSERT"),
               "EXPECT": checks.count("EXPECT")}
        for k in tot:
            tot[k] += row[k]
        names += [f"{a}.{b}" if kind != "TEST" and b else a for kind, a, b in tests]
        print(f"{os.path.basename(f):44} {row['tests']:5} {row['ASSERT']:6} {row['EXPECT']:6}")
    print(f"{'total':44} {tot['tests']:5} {tot['ASSERT']:6} {tot['EXPECT']:6}"
          f"  (assertions {tot['ASSERT'] + tot['EXPECT']})")
    dups = sorted({n for n in names if names.count(n) > 1})
    if args.names:
        for n in sorted(names):
            print(n + ("  DUPLICATE" if n in dups else ""))
    if dups:
        print("defined more than once: " + " ".join(dups), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
