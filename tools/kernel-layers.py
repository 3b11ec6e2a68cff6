#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The kernel module's include and call graph, by owner.

kernel-layers.py SRC_DIR OBJ_DIR... [--check]
  SRC_DIR  kernel/amu_pmu_drv
  OBJ_DIR  the objects of a build of it, e.g. build/module/6.1/mock/obj
           (tools/build-module.sh leaves them there); several builds are
           checked alike, production and mock, 6.1 and 6.12. Together they
           must compile every .c file, and each the files its Kbuild
           always compiles (amupmu-y).

For each .c and .h: the amupmu headers it includes, and for each .c, per
other file, the global symbols (functions, data) its objects reference
there, from the objects' symbol tables (what the compiler left as calls,
not what comments mention), over all the builds given. Each file has an
owner: the core, an interface, a unit or the mock model. Allowed:
 - the core uses only the core;
 - amupmu_main.c (the module's registration point and ioctl dispatch, part
   of the core) uses the core, and of the others only their entry points
   (MAIN_ENTRY: the ops tables, init and exit, the commands and file
   hooks), not their internals;
 - a unit uses the core, the interfaces and itself;
 - an interface uses the core, the interfaces and the units it presents;
 - the mock uses the core and the units whose register seam it models.
A private header (PRIVATE) is included by the files of the owners it
names only, whoever else its owner may be used by. With --check, exits 1
when a file uses an owner or a symbol it may not.
"""
import glob, os, re, subprocess, sys

OWNER = {
    'amupmu.h': 'core', 'amupmu_compat.h': 'core', 'amupmu_session.h': 'core',
    'amupmu_main.c': 'main', 'amupmu_discovery.c': 'core', 'amupmu_session.c': 'core',
    'amupmu_ring.c': 'core', 'amupmu_hw.c': 'core',
    'amupmu_sysfs.c': 'interface', 'amupmu_debugfs.c': 'interface', 'amupmu_netlink.c': 'interface',
    'amupmu_amu.c': 'amu', 'amupmu_amu.h': 'amu',
    'amupmu_pmu.c': 'pmu', 'amupmu_pmu_cmd.c': 'pmu', 'amupmu_perf.c': 'pmu',
    'amupmu_pmu.h': 'pmu', 'amupmu_pmu_excl.h': 'pmu', 'amupmu_counter.h': 'pmu',
    'amupmu_spe.c': 'spe', 'amupmu_spe_dev.c': 'spe', 'amupmu_spe.h': 'spe', 'amupmu_spe_model.h': 'spe',
    'amupmu_frames.c': 'frames', 'amupmu_frames.h': 'frames',
    'amupmu_mock.c': 'mock', 'amupmu_mock_frames.c': 'mock', 'amupmu_mock_spe.c': 'mock',
    'amupmu_mock.h': 'mock',
}
UNITS = {'amu', 'pmu', 'spe', 'frames'}
SEAMS = {'spe', 'frames'}	# the units whose registers the mock models behind a seam
# a unit's register seam chosen at build time (a constant pointer, so that
# the hardware's accesses stay direct calls): the unit names the model's ops
SEAM_OPS = {'amupmu_spe_mock_ops': 'spe'}
# headers that only the files of these owners include: a unit's own state
# and code shared between its files (the SPE register model: with the mock
# that models it)
PRIVATE = {
    'amupmu_pmu_excl.h': {'pmu'},
    'amupmu_counter.h': {'pmu'},
    'amupmu_spe_model.h': {'spe', 'mock'},
    'amupmu_mock.h': {'mock'},
}
# what amupmu_main.c may use of each owner but the core: its ops table
# (amupmu_<x>_unit, always allowed), its lifetime, the device it binds,
# the commands and file operations it serves and what AMUPMU_INFO reports.
# A unit's other symbols are its internals.
MAIN_ENTRY = {
    'amu': {'amupmu_amu_init', 'amupmu_amu_exit', 'amupmu_amu_cmd_read', 'amupmu_amu_read_fast'},
    'pmu': {'amupmu_pmu_init', 'amupmu_pmu_exit', 'amupmu_pmu_claim', 'amupmu_pmu_release',
            'amupmu_pmu_free_mask', 'amupmu_pmu_cmd', 'amupmu_pmu_cmd_read',
            'amupmu_pmu_read_fast', 'amupmu_pmu_release_group', 'amupmu_pmu_file_release',
            'amupmu_perf_available', 'amupmu_perf_has_pmu'},
    'spe': {'amupmu_spe_init', 'amupmu_spe_exit', 'amupmu_spe_dev_init', 'amupmu_spe_dev_exit',
            'amupmu_spe_owner', 'amupmu_spe_cmd', 'amupmu_spe_release', 'amupmu_spe_file_init',
            'amupmu_spe_file_release', 'amupmu_spe_configured', 'amupmu_spe_mmap',
            'amupmu_spe_poll'},
    'frames': {'amupmu_frames_init', 'amupmu_frames_exit'},
    'interface': {'amupmu_sysfs_init', 'amupmu_sysfs_exit', 'amupmu_debugfs_init',
                  'amupmu_debugfs_exit', 'amupmu_nl_init', 'amupmu_nl_exit',
                  'amupmu_nl_owner_event', 'amupmu_owner_name'},
    'mock': {'amupmu_mock_backend'},	# the register backend a mock build loads with
}


def allowed(user, used):
    if used == 'main':		# amupmu_dev and what the module reports: the core
        used = 'core'
    if user == used or used == 'core' or user == 'main':
        return True
    if user == 'core':
        return False
    if user in UNITS:
        return used == 'interface'
    if user == 'interface':
        return used in UNITS
    if user == 'mock':
        return used in SEAMS
    return False


def symbol_ok(user, used, sym):
    """May a file of owner @user reference @sym, defined by owner @used?"""
    if user == 'main' and used not in ('core', 'main'):
        return bool(re.fullmatch(r'amupmu_[a-z]+_unit', sym)) or sym in MAIN_ENTRY.get(used, ())
    return allowed(user, used) or SEAM_OPS.get(sym) == user


def include_ok(user, h):
    return allowed(user, OWNER[h]) and (h not in PRIVATE or user in PRIVATE[h])


def symbols(obj):
    out = subprocess.run([os.environ.get('NM', 'aarch64-linux-gnu-nm'), obj],
                         capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == 'U':
            undefined.add(f[1])
        elif len(f) == 3 and f[1] in 'TDBR':
            defined.add(f[2])
    return defined, undefined


def edge(graph, user, used):
    used = 'core' if used == 'main' else used
    if used != user:
        graph.setdefault(user, set()).add(used)


def kbuild_objects(src):
    """The objects Kbuild always compiles (amupmu-y), and the conditional ones."""
    text = open(os.path.join(src, 'Kbuild')).read().replace('\\\n', ' ')
    always, cond = set(), set()
    for m in re.finditer(r'^amupmu-(y|\$\([A-Z0-9_]+\))\s*[:+]?=\s*(.*)$', text, re.M):
        (always if m.group(1) == 'y' else cond).update(m.group(2).split())
    return always, cond


def label(objdir):
    m = re.search(r'module/([^/]+)/([^/]+)/', os.path.abspath(objdir) + '/')
    return '%s/%s' % m.groups() if m else objdir


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    check = '--check' in sys.argv[1:]
    if len(args) < 2:
        print('usage: kernel-layers.py SRC_DIR OBJ_DIR... [--check]')
        return 2
    src, objdirs = args[0], args[1:]
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(src, '*.[ch]')))
    unknown = [f for f in files if f not in OWNER]
    if unknown:
        print('not ok - no owner for %s (add it to OWNER)' % ' '.join(unknown))
        return 1
    always, cond = kbuild_objects(src)
    builds = [label(d) for d in objdirs]
    # per .c file: symbol -> the builds its object references it in
    uses, definer, compiled = {}, {}, {}
    for d, b in zip(objdirs, builds):
        definer[b] = {}
        for c in (f for f in files if f.endswith('.c')):
            obj = os.path.join(d, c[:-2] + '.o')
            if not os.path.exists(obj):
                if c[:-2] + '.o' in always:
                    print('not ok - %s missing: Kbuild always compiles it' % obj)
                    return 1
                continue
            compiled.setdefault(c, []).append(b)
            dfn, und = symbols(obj)
            for s in und:
                uses.setdefault(c, {}).setdefault(s, set()).add(b)
            uses.setdefault(c, {})
            for s in dfn:
                definer[b][s] = c
    missing = [c for c in files if c.endswith('.c') and c not in compiled]
    if missing:
        print('not ok - no build given compiles %s (Kbuild: %s)' %
              (' '.join(missing), 'listed' if all(c[:-2] + '.o' in always | cond
                                                   for c in missing) else 'not listed'))
        return 1
    print('# builds: %s' % ' '.join(builds))
    bad = 0
    graph = {}
    for f in files:
        me = OWNER[f]
        text = open(os.path.join(src, f)).read()
        line = []
        for h in re.findall(r'^#include "(amupmu[a-z0-9_]*\.h)"', text, re.M):
            if h not in OWNER:
                print('not ok - %s includes %s, which has no owner' % (f, h))
                return 1
            ok = include_ok(me, h)
            bad += not ok
            line.append(h if ok else h + ' [NOT ALLOWED]')
            edge(graph, me, OWNER[h])
        kind = ', private' if f in PRIVATE else ''
        print('%s (%s%s)' % (f, me, kind))
        print('  includes: %s' % (' '.join(line) or '-'))
        if f.endswith('.h'):
            continue
        by = {}
        for s, where in uses[f].items():
            for b in where:
                d = definer[b].get(s)
                if d and d != f:
                    by.setdefault(d, {}).setdefault(s, set()).add(b)
        for d in sorted(by, key=lambda d: (OWNER[d] not in ('core', 'main'), OWNER[d], d)):
            syms = []
            for s in sorted(by[d]):
                ok = symbol_ok(me, OWNER[d], s)
                bad += not ok
                tag = ''
                if not ok:
                    tag = ' [NOT ALLOWED]'
                elif not allowed(me, OWNER[d]):
                    tag = ' [its register seam, chosen at build time]'
                if by[d][s] != set(compiled[f]) & set(compiled[d]):
                    tag += ' [%s]' % ','.join(b for b in builds if b in by[d][s])
                syms.append(s + tag)
            edge(graph, me, OWNER[d])
            print('  uses %s (%s): %s' % (d, OWNER[d], ' '.join(syms)))
    print('# owners, who uses whom (includes and calls; main: amupmu_main.c, of the core):')
    for o in sorted(graph):
        print('#   %s -> %s' % (o, ' '.join(sorted(graph[o]))))
    print('%s - %d uses across owners that are not allowed' % ('ok' if not bad else 'not ok', bad))
    return 1 if bad and check else 0


sys.exit(main())
