#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The kernel module's include and call graph, by owner.

kernel-layers.py SRC_DIR OBJ_DIR [--check]
  SRC_DIR  kernel/amu_pmu_drv
  OBJ_DIR  the objects of a mock build of it (every file compiled), e.g.
           build/module/6.1/mock/src/kernel/amu_pmu_drv

For each .c: the amupmu headers it includes, and for each other file the
global symbols (functions, data) its object references there, from the
objects' symbol tables (what the compiler left as calls, not what comments
mention). Each file has an owner: the core, an interface, a unit or the
mock model. Allowed: the core (but amupmu_main.c, the module's registration
point and ioctl dispatch) uses only the core; a unit uses the core, the
interfaces and itself; an interface uses the core, the interfaces and the
units it presents; the mock uses the core and the units whose register
seam it models. With --check, exits 1 when a file uses an owner it may not.
"""
import glob, os, re, subprocess, sys

OWNER = {
    'amupmu.h': 'core', 'amupmu_compat.h': 'core', 'amupmu_session.h': 'core',
    'amupmu_main.c': 'main', 'amupmu_discovery.c': 'core', 'amupmu_session.c': 'core',
    'amupmu_ring.c': 'core', 'amupmu_hw.c': 'core',
    'amupmu_sysfs.c': 'interface', 'amupmu_debugfs.c': 'interface', 'amupmu_netlink.c': 'interface',
    'amupmu_amu.c': 'amu', 'amupmu_amu.h': 'amu',
    'amupmu_pmu.c': 'pmu', 'amupmu_perf.c': 'pmu', 'amupmu_pmu.h': 'pmu', 'amupmu_counter.h': 'pmu',
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


def main():
    src, objdir = sys.argv[1], sys.argv[2]
    check = '--check' in sys.argv[3:]
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(src, '*.[ch]')))
    unknown = [f for f in files if f not in OWNER]
    if unknown:
        print('not ok - no owner for %s (add it to OWNER)' % ' '.join(unknown))
        return 1
    definer, uses = {}, {}
    for c in (f for f in files if f.endswith('.c')):
        obj = os.path.join(objdir, c[:-2] + '.o')
        if not os.path.exists(obj):
            print('not ok - %s missing: a mock build compiles every file' % obj)
            return 1
        d, u = symbols(obj)
        uses[c] = u
        for s in d:
            definer[s] = c
    bad = 0
    for c in sorted(uses):
        text = open(os.path.join(src, c)).read()
        incs = re.findall(r'^#include "(amupmu[a-z0-9_]*\.h)"', text, re.M)
        me = OWNER[c]
        line = []
        for h in incs:
            ok = allowed(me, OWNER[h])
            bad += not ok
            line.append(h if ok else h + ' [NOT ALLOWED]')
        print('%s (%s)' % (c, me))
        print('  includes: %s' % ' '.join(line))
        by = {}
        for s in uses[c]:
            if s in definer and definer[s] != c:
                by.setdefault(definer[s], []).append(s)
        for f in sorted(by, key=lambda f: (OWNER[f] not in ('core', 'main'), OWNER[f], f)):
            ok = allowed(me, OWNER[f]) or all(SEAM_OPS.get(x) == me for x in by[f])
            bad += not ok
            note = '' if ok else ' [NOT ALLOWED]'
            if ok and not allowed(me, OWNER[f]):
                note = ' [its register seam, chosen at build time]'
            print('  uses %s (%s)%s: %s' % (f, OWNER[f], note, ' '.join(sorted(by[f]))))
    print('%s - %d uses across owners that are not allowed' % ('ok' if not bad else 'not ok', bad))
    return 1 if bad and check else 0


sys.exit(main())
