#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that every command and option of the amupmu binary is in its page.

  tools/man-check.py [--amupmu BINARY] [--pages DIR]

BINARY (default build/host/tools/amupmu/amupmu) is asked for its commands
(`amupmu --help`, "Commands:") and each command for its options
(`amupmu CMD --help`; for spe, each action's: `amupmu spe ACTION --help`
for the actions its usage lines name). DIR holds the pages'
sources as tools/man-pages.py writes them (NAME.SECTION.rst; default: a
temporary directory it is run into). Fails, naming each, when

  - a command has no page amupmu-CMD.1, or its NAME line is not the
    summary `amupmu --help` gives it;
  - an option (-x, --long) of a command's help, or an spe action, is not
    in that command's page;
  - amupmu(1) does not list a command, `amupmu help`, --help or --version;
  - `amupmu help CMD` does not show the page amupmu-CMD(1) (man-db, with
    MANPATH the pages built here), or does not fall back to the command's
    --help text where no page is installed (an empty MANPATH) or there is
    no man (an empty PATH).

Options are looked for as words of the page's text (``--json`` and
"--json" alike), not in any particular place: the page's DESCRIPTION is
the documentation's text, which names options where it explains them.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPTION = re.compile(r"(?<![\w/.=-])(--?[A-Za-z][A-Za-z0-9-]*)")


def run_help(binary, args):
    r = subprocess.run([binary] + args + ["--help"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise RuntimeError(f"'amupmu {' '.join(args + ['--help'])}' exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout + r.stderr


def commands(top_help):
    out = []
    in_cmds = False
    for line in top_help.splitlines():
        if line.startswith("Commands:"):
            in_cmds = True
            continue
        if in_cmds:
            m = re.match(r"^  (\S+)\s{2,}(.*)$", line)
            if m:
                out.append((m.group(1), m.group(2).strip()))
            elif not line.strip() and out:
                break
    return out


def options(help_text):
    """The options a help text defines: those in its Usage lines and its
    option column (lines whose first word is an option)."""
    found = set()
    for line in help_text.splitlines():
        s = line.strip()
        if line.startswith("Usage:") or line.startswith("       amupmu"):
            found.update(OPTION.findall(s))
        elif s.startswith("-"):
            # the option column: up to two spaces, then the description
            found.update(OPTION.findall(re.split(r"\s{2,}", s)[0]))
    return found


def page_text(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    # rst markup around an option does not hide it: ``--json``, **-e**
    return text.replace("``", " ").replace("**", " ")


def has_word(text, word):
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text) is not None


def name_line(text):
    # the title block's subtitle: the line between the second pair of '-' bars
    m = re.search(r"^-{3,}\n(.+)\n-{3,}$", text, re.M)
    return m.group(1).strip() if m else None


def help_errors(binary, pages, cmd, summary):
    """`amupmu help CMD` with the page built in PAGES, then with none."""
    errors = []
    man1 = os.path.join(pages, "man", "man1")
    os.makedirs(man1, exist_ok=True)
    page = os.path.join(pages, f"amupmu-{cmd}.1")
    if not os.path.exists(page):
        return [f"amupmu help {cmd}: no page {page} built"]
    link = os.path.join(man1, f"amupmu-{cmd}.1")
    if not os.path.lexists(link):
        os.symlink(page, link)
    empty = os.path.join(pages, "no-man")
    os.makedirs(empty, exist_ok=True)
    for manpath, path, want, what in (
            (os.path.join(pages, "man"), os.environ.get("PATH", ""), f"amupmu-{cmd} - {summary}", "the page"),
            (empty, os.environ.get("PATH", ""), f"Usage: amupmu {cmd}", "the --help text without a page"),
            (empty, empty, f"Usage: amupmu {cmd}", "the --help text without man")):
        env = dict(os.environ, MANPATH=manpath, PATH=path, MANPAGER="cat", PAGER="cat", MANWIDTH="200",
                   LC_ALL="C.UTF-8")
        r = subprocess.run([binary, "help", cmd], capture_output=True, text=True, timeout=60, env=env,
                           stdin=subprocess.DEVNULL)
        # man's formatting may hyphenate or bold; compare on plain words
        out = re.sub(r".\x08", "", r.stdout)
        out = re.sub(r"\s+", " ", out.replace("\u2010", "-").replace("\u2212", "-"))
        if r.returncode != 0 or re.sub(r"\s+", " ", want) not in out:
            errors.append(f"'amupmu help {cmd}' (MANPATH={manpath}, PATH={path}) exited {r.returncode} without {what} "
                          f"('{want}'): {(r.stdout + r.stderr)[:300]!r}")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--amupmu", default=os.path.join(TOP, "build/host/tools/amupmu/amupmu"))
    ap.add_argument("--pages")
    args = ap.parse_args()

    tmp = None
    pages = args.pages
    if not pages:
        tmp = tempfile.TemporaryDirectory()
        pages = tmp.name
        subprocess.run([sys.executable, os.path.join(TOP, "tools/man-pages.py"), "--out", pages], check=True)

    errors = []
    checked = 0
    top_help = run_help(args.amupmu, [])
    cmds = commands(top_help)
    if not cmds:
        errors.append("'amupmu --help' lists no commands (no \"Commands:\" block)")
    main_page = os.path.join(pages, "amupmu.1.rst")
    main_text = page_text(main_page) if os.path.exists(main_page) else ""
    if not main_text:
        errors.append("amupmu(1): no page")
    for opt in sorted(options(top_help) | {"--help", "--version"}):
        checked += 1
        if main_text and not has_word(main_text, opt):
            errors.append(f"amupmu(1): option {opt} of 'amupmu --help' is not in the page")
    checked += 1
    if main_text and not has_word(main_text, "amupmu help"):
        errors.append("amupmu(1): 'amupmu help' is not in the page")
    for cmd, summary in cmds:
        checked += 1
        if main_text and not has_word(main_text, f"amupmu {cmd}"):
            errors.append(f"amupmu(1): command '{cmd}' is not listed")
        checked += 1
        errors += help_errors(args.amupmu, pages, cmd, summary)
        path = os.path.join(pages, f"amupmu-{cmd}.1.rst")
        if not os.path.exists(path):
            errors.append(f"amupmu-{cmd}(1): no page for the command '{cmd}' ('amupmu --help' lists it)")
            continue
        text = page_text(path)
        with open(path, encoding="utf-8") as f:
            nl = name_line(f.read())
        if nl != summary:
            errors.append(f"amupmu-{cmd}(1): NAME line '{nl}' is not 'amupmu --help''s '{summary}'")
        helps = {(cmd,): run_help(args.amupmu, [cmd])}
        # a command with actions (spe): every action named in its usage lines
        actions = sorted(set(re.findall(rf"^(?:Usage:|\s+)\s*amupmu {cmd} ([a-z]+)\b",
                                        helps[(cmd,)], re.M)))
        for act in actions:
            checked += 1
            if not has_word(text, f"{cmd} {act}"):
                errors.append(f"amupmu-{cmd}(1): action 'amupmu {cmd} {act}' is not in the page")
            helps[(cmd, act)] = run_help(args.amupmu, [cmd, act])
        for words, h in sorted(helps.items()):
            for opt in sorted(options(h)):
                checked += 1
                if not has_word(text, opt):
                    errors.append(f"amupmu-{cmd}(1): option {opt} of 'amupmu {' '.join(words)} --help' "
                                  f"is not in the page")
    for e in errors:
        print(f"man-check: {e}", file=sys.stderr)
    print(f"man-check: {len(cmds)} commands, {checked} commands, actions and options checked, "
          f"{len(errors)} missing")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
