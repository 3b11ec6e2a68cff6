#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that selftests/syzkaller/dev_amupmu.txt describes the ABI of
include/uapi/linux/amupmu.h (TAP, one result per command, struct and flag
set; syzkaller itself is not needed):

 - every _IO command of the header has exactly one ioctl$<NAME> with
   cmd const[<NAME>] and arg ptr[..., <name in lower case>], and no
   ioctl$ names a command the header lacks;
 - every struct of the header is described (or listed in NOT_DESCRIBED with
   the reason) with the same fields in the same order, each of its width
   (__u8 int8, __u16 int16, __u32 int32, __u64 int64, arrays of the same
   length, a flexible array as array[...], an array of struct X as
   array[X]);
 - every struct a description's array, pointer or union names is described
   (unions, [ ... ] blocks, are the description's own: a buffer that holds
   one of several layouts);
 - the "size" of a command's struct is len[parent, ...]; fields the header's kernel-doc says "must be
   0" are const[0, ...];
 - every flags[<set>] set lists exactly the constants of the header's enum
   of the same name.
"""
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(TOP, "include/uapi/linux/amupmu.h")
DESC = os.path.join(TOP, "selftests/syzkaller/dev_amupmu.txt")

# Header structs syzkaller does not take as syscall arguments.
NOT_DESCRIBED = {
    "amupmu_ring_header": "page 0 of the mmap()ed ring: memory, not an argument",
}

WIDTH = {"__u8": 8, "__u16": 16, "__u32": 32, "__u64": 64, "__aligned_u64": 64}


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def parse_header(path):
    raw = open(path).read()
    text = strip_comments(raw)
    cmds = re.findall(r"#define\s+(AMUPMU_\w+)\s+_IO\(AMUPMU_TYPE,\s*AMUPMU_CMD_\w+\)", text)
    structs = {}
    for name, body in re.findall(r"struct\s+(amupmu_\w+)\s*\{(.*?)\};", text, flags=re.S):
        fields = []
        for decl in body.split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            m = re.fullmatch(r"((?:struct\s+)?\w+)\s+(\w+)(?:\[(\w*)\])?", decl)
            if not m:
                raise SystemExit(f"check.py: cannot parse '{decl}' in struct {name}")
            fields.append((m.group(2), m.group(1), m.group(3)))
        structs[name] = fields
    enums = {}
    for name, body in re.findall(r"enum\s+(amupmu_\w+)\s*\{(.*?)\};", text, flags=re.S):
        enums[name] = [e.split("=")[0].strip() for e in body.split(",") if e.strip()]
    # kernel-doc: "@field: must be 0" per struct
    zero = {}
    for doc, name in re.findall(r"/\*\*(.*?)\*/\s*struct\s+(amupmu_\w+)\s*\{", raw, flags=re.S):
        zero[name] = set(re.findall(r"@(\w+):\s*must be 0", doc))
    return cmds, structs, enums, zero


def parse_desc(path):
    text = "\n".join(l for l in open(path).read().splitlines() if not l.lstrip().startswith("#"))
    ioctls = re.findall(r"^ioctl\$(\w+)\((.*)\)\s*$", text, flags=re.M)
    structs = {}
    for name, body in re.findall(r"^(\w+)\s*\{\n(.*?)^\}", text, flags=re.S | re.M):
        structs[name] = [tuple(l.split(None, 1)) for l in body.splitlines() if l.strip()]
    flagsets = {n: [v.strip() for v in vals.split(",")]
                for n, vals in re.findall(r"^(\w+)\s*=\s*(.+)$", text, flags=re.M)}
    unions = {}
    for name, body in re.findall(r"^(\w+)\s*\[\n(.*?)^\]", text, flags=re.S | re.M):
        unions[name] = [tuple(l.split(None, 1)) for l in body.splitlines() if l.strip()]
    return ioctls, structs, flagsets, unions


def named_types(t):
    """The struct/union names a syzkaller type refers to (array[X], ptr64[dir, X])."""
    m = re.fullmatch(r"array\[(\w+)(?:,.*)?\]", t)
    if m:
        return [m.group(1)]
    m = re.fullmatch(r"ptr64\[\w+,\s*(.+)\]", t)
    if m:
        return named_types(m.group(1)) or [m.group(1)]
    return []


def width_of(t):
    """Bits of a syzkaller field type, or None when it has none."""
    m = re.match(r"(u?int)(8|16|32|64)", t)
    if m:
        return int(m.group(2))
    if t.startswith("ptr64"):
        return 64
    m = re.match(r"(?:len|bytesize|const|flags)\[.*,\s*(?:u?int)(8|16|32|64)\]$", t)
    return int(m.group(1)) if m else None


results = []


def result(ok, what, why=""):
    results.append((ok, what, why))


def main():
    cmds, hstructs, enums, zero = parse_header(HEADER)
    ioctls, dstructs, flagsets, unions = parse_desc(DESC)

    seen = {}
    for name, args in ioctls:
        seen.setdefault(name, []).append(args)
    for c in cmds:
        got = seen.get(c, [])
        want_arg = c.lower()
        if len(got) != 1:
            result(False, f"ioctl${c}", f"{len(got)} descriptions, want 1")
            continue
        args = got[0]
        ok = f"cmd const[{c}]" in args and re.search(r"arg ptr\[\w+, " + want_arg + r"\]", args)
        result(bool(ok), f"ioctl${c}", "" if ok else f"want cmd const[{c}] and arg ptr[..., {want_arg}]")
    for name in seen:
        if name not in cmds:
            result(False, f"ioctl${name}", "the header has no such command")

    cmd_structs = {c.lower() for c in cmds}
    for s, hfields in sorted(hstructs.items()):
        if s in NOT_DESCRIBED:
            result(s not in dstructs, f"struct {s}", "listed as not described but described"
                   if s in dstructs else "")
            continue
        if s not in dstructs:
            result(False, f"struct {s}", "not described")
            continue
        dfields = dstructs[s]
        errs = []
        if [f[0] for f in hfields] != [f[0] for f in dfields]:
            errs.append(f"fields {[f[0] for f in dfields]} != header {[f[0] for f in hfields]}")
        for (hname, htype, harr), d in zip(hfields, dfields):
            dtype = d[1] if len(d) > 1 else ""
            if harr is not None:
                m = re.fullmatch(r"array\[(\w+)(?:,\s*(\w+))?\]", dtype)
                n = {"AMUPMU_PMU_MAX_EVENTS": "32", "AMUPMU_AMU_MAX_COUNTERS": "16"}.get(harr, harr)
                if htype.startswith("struct "):
                    elem_ok = m is not None and m.group(1) == htype.split()[1]
                else:
                    elem_ok = m is not None and width_of(m.group(1)) == WIDTH.get(htype)
                if not elem_ok or (m.group(2) or "") != n:
                    errs.append(f"{hname}: {dtype} is not array of {htype}[{harr}]")
                continue
            if htype.startswith("struct "):
                if dtype != htype.split()[1]:
                    errs.append(f"{hname}: {dtype} is not {htype}")
                continue
            if width_of(dtype) != WIDTH.get(htype):
                errs.append(f"{hname}: {dtype} is not {WIDTH.get(htype)} bits ({htype})")
            if hname == "size" and s in cmd_structs and not dtype.startswith("len[parent,"):
                errs.append(f"size: {dtype}, want len[parent, ...]")
            if hname in zero.get(s, ()) and not dtype.startswith("const[0,"):
                errs.append(f"{hname}: must be 0 in the header, {dtype} is not const[0, ...]")
        result(not errs, f"struct {s} ({len(hfields)} fields)", "; ".join(errs))
    for s in dstructs:
        if s not in hstructs:
            result(False, f"struct {s}", "the header has no such struct")

    known = set(dstructs) | set(unions)
    for s, fields in sorted(list(dstructs.items()) + list(unions.items())):
        missing = sorted({t for f in fields if len(f) > 1 for t in named_types(f[1])
                          if not re.fullmatch(r"u?int(8|16|32|64)", t) and t not in known})
        kind = "union" if s in unions else "struct"
        if missing or kind == "union":
            result(not missing, f"{kind} {s}: the types it names are described",
                   f"not described: {missing}" if missing else "")
    for s in unions:
        if s in hstructs:
            result(False, f"union {s}", "the header has a struct of that name")

    for name, vals in sorted(flagsets.items()):
        ok = name in enums and sorted(vals) == sorted(enums[name])
        result(ok, f"flags {name}", "" if ok else f"{vals} != header {enums.get(name)}")

    print("TAP version 13")
    print(f"1..{len(results)}")
    for i, (ok, what, why) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {what}{' # ' + why if why and ok else ''}")
        if not ok:
            print(f"#   {why}")
    return 0 if all(r[0] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
