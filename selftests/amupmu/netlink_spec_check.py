#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The netlink spec and the UAPI header describe the same family.

Documentation/netlink/specs/amupmu.yaml (the kernel's genetlink-legacy
format, for generic clients such as the kernel's ynl) against
include/uapi/linux/amupmu_netlink.h: every enum the spec defines (its
definitions, attribute sets and operations) must be in the header with the
same C names and values, and the header must have nothing more; the family
name and version agree. With --schema (or the kernel's
Documentation/netlink/genetlink-legacy.yaml found under build/cache) the
spec is also validated against the kernel's JSON schema. Prints TAP.
"""
import argparse
import os
import re
import sys

import yaml

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
SPEC = os.path.join(TOP, 'Documentation/netlink/specs/amupmu.yaml')
HEADER = os.path.join(TOP, 'include/uapi/linux/amupmu_netlink.h')
SCHEMA_CANDIDATES = [
    os.path.join(TOP, 'build/cache/linux-source/Documentation/netlink/genetlink-legacy.yaml'),
]

results = []


def check(name, ok, diag=''):
    results.append((name, ok, diag))


def c_name(prefix, name):
    return (prefix + name).upper().replace('-', '_')


def spec_enums(spec):
    """{enum-name: {C name: value}} as the ynl code generator would emit them."""
    enums = {}
    for d in spec.get('definitions', []):
        if d['type'] not in ('enum', 'flags'):
            continue
        prefix = d.get('name-prefix', spec['name'] + '-' + d['name'] + '-')
        val = d.get('value-start', 0)
        entries = {}
        for e in d['entries']:
            ename = e if isinstance(e, str) else e['name']
            if isinstance(e, dict) and 'value' in e:
                val = e['value']
            entries[c_name(prefix, ename)] = val if d['type'] == 'enum' else 1 << val
            val += 1
        enums[d['enum-name']] = entries
    for s in spec['attribute-sets']:
        prefix = s.get('name-prefix', spec['name'] + '-a-' + s['name'] + '-')
        val = 1
        entries = {}
        for a in s['attributes']:
            val = a.get('value', val)
            entries[c_name(prefix, a['name'])] = val
            val += 1
        enums[s['enum-name']] = entries
    ops = spec['operations']
    val = 1
    entries = {}
    for o in ops['list']:
        val = o.get('value', val)
        entries[c_name(ops['name-prefix'], o['name'])] = val
        val += 1
    enums[ops['enum-name']] = entries
    return enums


def header_enums(text):
    """{enum name: {C name: value}} of the header's public entries."""
    text = re.sub(r'/\*.*?\*/', lambda m: ' PRIVATE ' if 'private:' in m.group(0) else ' ',
                  text, flags=re.S)
    enums = {}
    for m in re.finditer(r'enum\s+(\w+)\s*\{(.*?)\};', text, re.S):
        body = m.group(2).split('PRIVATE')[0]
        val = 0
        entries = {}
        for item in [i.strip() for i in body.split(',') if i.strip()]:
            if '=' in item:
                name, expr = [x.strip() for x in item.split('=', 1)]
                val = int(expr, 0)
            else:
                name = item
            entries[name] = val
            val += 1
        enums[m.group(1)] = entries
    return enums


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--schema', help='the kernel\'s genetlink-legacy.yaml')
    args = ap.parse_args()

    with open(SPEC) as f:
        spec = yaml.safe_load(f)
    with open(HEADER) as f:
        htext = f.read()

    schema = args.schema or next((p for p in SCHEMA_CANDIDATES if os.path.exists(p)), None)
    if schema:
        import jsonschema
        with open(schema) as f:
            js = yaml.safe_load(f)
        try:
            jsonschema.validate(spec, js)
            check('spec valid against ' + os.path.basename(schema), True)
        except jsonschema.ValidationError as e:
            check('spec valid against ' + os.path.basename(schema), False, str(e).split('\n')[0])
    else:
        results.append(('spec valid against the kernel schema # SKIP genetlink-legacy.yaml '
                        'not found (pass --schema)', True, ''))

    check('protocol genetlink-legacy', spec.get('protocol') == 'genetlink-legacy')
    m = re.search(r'#define\s+AMUPMU_NL_FAMILY_NAME\s+"([^"]+)"', htext)
    check('family name', m and m.group(1) == spec['name'],
          'header %s, spec %s' % (m and m.group(1), spec['name']))
    m = re.search(r'#define\s+AMUPMU_NL_FAMILY_VERSION\s+(\d+)', htext)
    check('family version', m and int(m.group(1)) == spec.get('version'),
          'header %s, spec %s' % (m and m.group(1), spec.get('version')))

    want = spec_enums(spec)
    have = header_enums(htext)
    for ename, entries in want.items():
        got = have.get(ename)
        if got is None:
            check('enum %s in the header' % ename, False, 'missing')
            continue
        if ename != spec['operations']['enum-name'] and any(
                v == 0 for v in got.values()) and ename in [
                s['enum-name'] for s in spec['attribute-sets']]:
            got = {k: v for k, v in got.items() if v != 0}    # the UNSPEC entry
        if ename == spec['operations']['enum-name']:
            got = {k: v for k, v in got.items() if v != 0}
        diff = ['%s: spec %s, header %s' % (k, entries.get(k), got.get(k))
                for k in sorted(set(entries) | set(got), key=lambda k: entries.get(k, got.get(k)))
                if entries.get(k) != got.get(k)]
        check('enum %s: spec and header agree' % ename, not diff, '; '.join(diff))
    for ename in have:
        if ename not in want:
            check('header enum %s described by the spec' % ename, False, 'missing in the spec')

    # every attribute an operation names exists in its set
    sets = {s['name']: {a['name'] for a in s['attributes']} for s in spec['attribute-sets']}
    bad = []
    for o in spec['operations']['list']:
        names = set()
        for kind in ('do', 'dump'):
            for part in ('request', 'reply'):
                names |= set(o.get(kind, {}).get(part, {}).get('attributes', []))
        names |= set(o.get('event', {}).get('attributes', []))
        bad += ['%s: %s' % (o['name'], n) for n in names - sets[o['attribute-set']]]
    check('operations name existing attributes', not bad, ', '.join(bad))

    print('1..%d' % len(results))
    for i, (name, ok, diag) in enumerate(results, 1):
        print('%s %d - %s' % ('ok' if ok else 'not ok', i, name))
        if not ok and diag:
            print('# ' + diag)
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == '__main__':
    sys.exit(main())
