// SPDX-License-Identifier: GPL-2.0
/*
 * Counter allocation and event validation of the PMU sessions of
 * /dev/amupmu (AMUPMU_PMU_CONFIG against include/uapi/linux/amupmu.h):
 *
 *  - PMCR_EL0.N event counters plus the cycle counter per CPU, shared by
 *    the sessions (open files): all taken, then EBUSY for others until
 *    closed or released; disjoint counters; N + 2 events refused; per-CPU
 *    accounting; INFO's pmu_counters_free says which are free, and a
 *    refused CONFIG writes nothing back and takes nothing (in shared mode
 *    perf core decides: what fits is checked, not where);
 *  - events: accepted exactly when PMCEID says so, IMPLEMENTATION DEFINED
 *    ones with AMUPMU_EV_RAW only, malformed ones refused.
 *
 * The fixture, its backend line and the helpers: amupmu_pmu_fixture.h.
 */
#define _GNU_SOURCE
#include "amupmu_pmu_fixture.h"

/* ---------------------------------------------------------------- allocation */

/*
 * N event counters and the cycle counter: then EBUSY for others until
 * closed. In shared mode the same: N + 1 pinned perf events take every
 * counter, and perf core cannot schedule another session's pinned one.
 */
static void exhaust_then_free(struct __test_metadata *_metadata, FIXTURE_DATA(pmu) *self,
			      bool release)
{
	const unsigned int n = self->nr_counters;
	struct group a, b, c;
	__u32 free0 = 1;
	unsigned int i;
	int fa, ret;

	fa = open_dev();
	ASSERT_LE(0, fa);
	group_all_counters(self, &a, 0);
	ret = group_config(fa, &a);
	ASSERT_EQ(0, ret) {
		TH_LOG("%u events (CPU_CYCLES + %u x 0x%x) on CPU 0: %s", n + 1, n,
		       self->filler, amupmu_errstr(ret));
	}
	EXPECT_EQ(want_free(self, n + 1), a.cfg.counters_free);
	expect_counter(_metadata, self, &a.cfg, 0, true, "all counters");
	for (i = 1; i <= n; i++)
		expect_counter(_metadata, self, &a.cfg, i, false, "all counters");
	expect_counters_valid(_metadata, self, &a);

	/* INFO: nothing free on CPU 0 */
	ASSERT_EQ(0, amupmu_counters_free(self->fd, &free0, 1));
	EXPECT_EQ(0U, free0) {
		TH_LOG("CPU 0 full: INFO pmu_counters_free 0x%x", free0);
	}
	/* another session: nothing left, nothing taken, nothing written back */
	group_init(&b, 0);
	group_add(&b, self->filler, 0);
	amupmu_pmu_config_init(&b.cfg, b.ev, b.nr, b.cpus.w, b.cpus.len);
	expect_config_refused(_metadata, self->fd, &b.cfg, CFG_SZ, EBUSY,
			      "1 event on a full CPU 0");
	group_init(&c, 0);
	group_add(&c, PMUV3_EV_CPU_CYCLES, 0);
	amupmu_pmu_config_init(&c.cfg, c.ev, c.nr, c.cpus.w, c.cpus.len);
	expect_config_refused(_metadata, self->fd, &c.cfg, CFG_SZ, EBUSY,
			      "CPU_CYCLES on a full CPU 0");

	if (release) {
		ASSERT_EQ(0, amupmu_pmu_ctl(fa, AMUPMU_PMU_CTL_RELEASE));
		ret = amupmu_pmu_ctl(fa, AMUPMU_PMU_CTL_ENABLE);
		EXPECT_EQ(-ENODEV, ret) {
			TH_LOG("CTL ENABLE after RELEASE: %s", amupmu_errstr(ret));
		}
	} else {
		close(fa);
	}
	ret = group_config(self->fd, &b);
	EXPECT_EQ(0, ret) {
		TH_LOG("1 event after the other session %s: %s",
		       release ? "released" : "closed", amupmu_errstr(ret));
	}
	EXPECT_EQ(want_free(self, n + 1), b.cfg.counters_free);
	if (release) {
		/* the released session configures again */
		group_init(&c, 0);
		group_add(&c, self->filler, 0);
		ret = group_config(fa, &c);
		EXPECT_EQ(0, ret) {
			TH_LOG("CONFIG after RELEASE: %s", amupmu_errstr(ret));
		}
		EXPECT_EQ(want_free(self, n), c.cfg.counters_free);
		if (!self->shared) {
			EXPECT_NE(b.cfg.counters[0], c.cfg.counters[0]);
		}
		close(fa);
	}
}

TEST_F(pmu, alloc_exhaust_close)
{
	PMU_BEGIN();
	NEED_PMU();
	exhaust_then_free(_metadata, self, false);
}

TEST_F(pmu, alloc_exhaust_release)
{
	PMU_BEGIN();
	NEED_PMU();
	exhaust_then_free(_metadata, self, true);
}

/* Sessions sharing CPU 0 get disjoint counters; the cycle counter goes once. */
TEST_F(pmu, alloc_disjoint)
{
	struct group a, b;
	unsigned int i, j;
	int fa, fb, ret;

	PMU_BEGIN();
	NEED_EXCLUSIVE("counter indices: perf core places shared-mode events "
		       "(alloc_exhaust_*, alloc_too_many and alloc_per_cpu check what fits)");
	if (self->nr_counters < 4)
		SKIP(return, "PMCR_EL0.N %u < 4", self->nr_counters);

	fa = open_dev();
	fb = open_dev();
	ASSERT_LE(0, fa);
	ASSERT_LE(0, fb);
	group_init(&a, 0);
	group_add_n(&a, self->filler, 2);
	group_init(&b, 0);
	group_add_n(&b, self->filler, 2);
	ASSERT_EQ(0, group_config(fa, &a));
	ret = group_config(fb, &b);
	ASSERT_EQ(0, ret) {
		TH_LOG("second session, 2 events: %s", amupmu_errstr(ret));
	}
	EXPECT_EQ(self->nr_counters + 1, a.cfg.counters_free);
	EXPECT_EQ(self->nr_counters - 1, b.cfg.counters_free);
	expect_counters_valid(_metadata, self, &a);
	expect_counters_valid(_metadata, self, &b);
	for (i = 0; i < 2; i++) {
		EXPECT_GT(self->nr_counters, a.cfg.counters[i]);
		EXPECT_GT(self->nr_counters, b.cfg.counters[i]);
		for (j = 0; j < 2; j++) {
			EXPECT_NE(a.cfg.counters[i], b.cfg.counters[j]) {
				TH_LOG("sessions share counter %u", a.cfg.counters[i]);
			}
		}
	}
	close(fa);
	close(fb);

	/* the second session's CPU_CYCLES falls back to an event counter */
	fa = open_dev();
	fb = open_dev();
	ASSERT_LE(0, fa);
	ASSERT_LE(0, fb);
	group_init(&a, 0);
	group_add(&a, PMUV3_EV_CPU_CYCLES, 0);
	group_add(&a, self->filler, 0);
	b = a;
	ASSERT_EQ(0, group_config(fa, &a));
	ret = group_config(fb, &b);
	ASSERT_EQ(0, ret) {
		TH_LOG("second session {CPU_CYCLES, 0x%x}: %s", self->filler, amupmu_errstr(ret));
	}
	EXPECT_EQ(AMUPMU_PMU_CYCLE_COUNTER, a.cfg.counters[0]);
	EXPECT_GT(self->nr_counters, b.cfg.counters[0]) {
		TH_LOG("second CPU_CYCLES on counter %u", b.cfg.counters[0]);
	}
	EXPECT_EQ(self->nr_counters - 1, b.cfg.counters_free);
	for (i = 0; i < 2; i++) {
		for (j = 0; j < 2; j++) {
			EXPECT_NE(a.cfg.counters[i], b.cfg.counters[j]);
		}
	}
	close(fa);
	close(fb);
}

/*
 * N + 2 events do not fit: EBUSY, nothing written back, nothing allocated
 * (in shared mode: perf core cannot schedule the last pinned event).
 */
TEST_F(pmu, alloc_too_many)
{
	const unsigned int n = self->nr_counters;
	struct group g;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	group_all_counters(self, &g, 0);
	group_add(&g, self->filler, 0);
	ASSERT_EQ(n + 2, g.nr);
	amupmu_pmu_config_init(&g.cfg, g.ev, g.nr, g.cpus.w, g.cpus.len);
	expect_config_refused(_metadata, self->fd, &g.cfg, CFG_SZ, EBUSY, "N + 2 events");
	expect_all_free(_metadata, self, "after N + 2 events");

	if (n + 1 < MAX_GROUP) {
		group_init(&g, 0);
		group_add_n(&g, self->filler, MAX_GROUP);
		amupmu_pmu_config_init(&g.cfg, g.ev, g.nr, g.cpus.w, g.cpus.len);
		expect_config_refused(_metadata, self->fd, &g.cfg, CFG_SZ, EBUSY,
				      "AMUPMU_PMU_MAX_EVENTS events");
	}

	group_all_counters(self, &g, 0);
	ret = group_config(self->fd, &g);
	EXPECT_EQ(0, ret) {
		TH_LOG("%u events after the refusals: %s", n + 1, amupmu_errstr(ret));
	}
	EXPECT_EQ(want_free(self, n + 1), g.cfg.counters_free);
}

/*
 * Counters are per CPU; counters_free is the fewest on a CPU of the set
 * (exclusive mode; 0 in shared mode, where perf core's pinned events fill
 * each CPU the same way).
 */
TEST_F(pmu, alloc_per_cpu)
{
	const unsigned int n = self->nr_counters;
	struct group a, b, c, d;
	int fa, fb, fc, fd, ret;

	PMU_BEGIN();
	NEED_PMU();
	if (self->nr_cpu_ids < 2 || amupmu_cpu_online(1) != 1)
		SKIP(return, "no online cpu1");

	fa = open_dev();
	fb = open_dev();
	fc = open_dev();
	fd = open_dev();
	ASSERT_LE(0, fa);
	ASSERT_LE(0, fb);
	ASSERT_LE(0, fc);
	ASSERT_LE(0, fd);
	group_all_counters(self, &a, 0);
	ASSERT_EQ(0, group_config(fa, &a));

	group_init(&b, 1);
	group_add(&b, self->filler, 0);
	ret = group_config(fb, &b);
	EXPECT_EQ(0, ret) {
		TH_LOG("1 event on cpu1 while CPU 0 is full: %s", amupmu_errstr(ret));
	}
	EXPECT_EQ(want_free(self, n + 1), b.cfg.counters_free);

	group_init(&c, 0);
	cpuset_add(&c.cpus, 1);
	group_add(&c, self->filler, 0);
	amupmu_pmu_config_init(&c.cfg, c.ev, c.nr, c.cpus.w, c.cpus.len);
	expect_config_refused(_metadata, fc, &c.cfg, CFG_SZ, EBUSY,
			      "1 event on {0, 1} while CPU 0 is full");

	group_all_counters(self, &d, 1);
	d.nr--;			/* the rest of cpu1: cycle counter + N - 1 */
	ret = group_config(fd, &d);
	EXPECT_EQ(0, ret) {
		TH_LOG("the rest of cpu1: %s", amupmu_errstr(ret));
	}
	EXPECT_EQ(want_free(self, n), d.cfg.counters_free);
	if (!self->shared) {
		EXPECT_NE(b.cfg.counters[0], d.cfg.counters[1]);
	}
	close(fa);
	close(fb);
	close(fc);
	close(fd);
}

/* ---------------------------------------------------------------- events */

/*
 * Every common event: accepted when PMCEID says so, EOPNOTSUPP otherwise;
 * with AMUPMU_EV_RAW always, but for CHAIN in shared mode (EINVAL: perf
 * core chains counters itself, a CHAIN event of its own would never count).
 */
TEST_F(pmu, events_per_pmceid)
{
	char list[512] = "";
	size_t used = 0;
	struct group g;
	unsigned int i, ev;
	bool impl;
	int ret, want;

	PMU_BEGIN();
	NEED_PMU();
	for (i = 0; i < 0x80; i++) {
		ev = i < 0x40 ? i : 0x4000 + (i - 0x40);
		impl = amupmu_event_implemented(self->cpu0, ev);
		want = self->shared && ev == PMUV3_EV_CHAIN ? -EINVAL : 0;
		if (impl && used < sizeof(list) - 8)
			used += snprintf(list + used, sizeof(list) - used, " 0x%x", ev);

		group_init(&g, 0);
		group_add(&g, ev, 0);
		ret = group_config(self->fd, &g);
		if (impl) {
			EXPECT_EQ(want, ret) {
				TH_LOG("implemented event 0x%x: %s", ev, amupmu_errstr(ret));
			}
		} else {
			EXPECT_EQ(-EOPNOTSUPP, ret) {
				TH_LOG("event 0x%x not in PMCEID: %s", ev, amupmu_errstr(ret));
			}
		}
		if (!ret) {
			ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE));
		}
		expect_unconfigured(_metadata, self->fd, "event sweep");

		/* AMUPMU_EV_RAW: not checked */
		group_init(&g, 0);
		group_add(&g, ev, AMUPMU_EV_RAW);
		ret = group_config(self->fd, &g);
		EXPECT_EQ(want, ret) {
			TH_LOG("event 0x%x with AMUPMU_EV_RAW: %s", ev, amupmu_errstr(ret));
		}
		if (!ret) {
			ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE));
		}
		expect_unconfigured(_metadata, self->fd, "RAW event sweep");
	}
	TH_LOG("implemented events (PMCEID0 0x%llx PMCEID1 0x%llx):%s",
	       (unsigned long long)self->cpu0->pmceid0,
	       (unsigned long long)self->cpu0->pmceid1, list);
	expect_all_free(_metadata, self, "after the event sweep");
}

/* IMPLEMENTATION DEFINED and unimplemented events need AMUPMU_EV_RAW. */
TEST_F(pmu, events_raw)
{
	__u32 evs[4];
	unsigned int i, n = 0;
	struct group g;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	evs[n++] = 0x0160;
	evs[n++] = 0xFFFF;
	evs[n++] = 0x4040;
	if (!amupmu_event_implemented(self->cpu0, PMUV3_EV_STALL_SLOT))
		evs[n++] = PMUV3_EV_STALL_SLOT;
	for (i = 0; i < n; i++) {
		group_init(&g, 0);
		group_add(&g, evs[i], 0);
		ret = group_config(self->fd, &g);
		EXPECT_EQ(-EOPNOTSUPP, ret) {
			TH_LOG("event 0x%x without AMUPMU_EV_RAW: %s", evs[i], amupmu_errstr(ret));
		}
		if (!ret)
			amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE);

		group_init(&g, 0);
		group_add(&g, evs[i], AMUPMU_EV_RAW);
		ret = group_config(self->fd, &g);
		EXPECT_EQ(0, ret) {
			TH_LOG("event 0x%x with AMUPMU_EV_RAW: %s", evs[i], amupmu_errstr(ret));
		}
		expect_counter(_metadata, self, &g.cfg, 0, false, "RAW event");
		if (!ret)
			amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE);
	}
}

/* Malformed events, alone or after valid ones: refused, nothing allocated. */
TEST_F(pmu, events_invalid)
{
	struct bad {
		__u32 event, flags;
		__u64 reserved;
		int err;
		char what[80];
	} bad[192];
	unsigned int i, n = 0, pos;
	__u32 f;
	union cfg_buf b;
	struct group g;

	PMU_BEGIN();
	NEED_PMU();
#define BAD(_ev, _fl, _rsv, _err, ...) do {					\
	bad[n].event = (_ev);							\
	bad[n].flags = (_fl);							\
	bad[n].reserved = (_rsv);						\
	bad[n].err = (_err);							\
	snprintf(bad[n].what, sizeof(bad[n].what), __VA_ARGS__);		\
	n++;									\
} while (0)
	BAD(0x10000, 0, 0, EINVAL, "event 0x10000");
	BAD(0x10000, AMUPMU_EV_RAW, 0, EINVAL, "event 0x10000, RAW");
	BAD(0x10011, 0, 0, EINVAL, "event 0x10011");
	BAD(0x80000008, AMUPMU_EV_RAW, 0, EINVAL, "event 0x80000008, RAW");
	BAD(0xFFFFFFFF, AMUPMU_EV_RAW, 0, EINVAL, "event 0xffffffff, RAW");
	/* filters that count at no exception level here (el_filters_matrix has all) */
	for (f = 0; f <= AMUPMU_EV_EXCL_ALL; f++) {
		if ((f & ~AMUPMU_EV_EXCL_ALL) || amupmu_filter_counts(f, self->kernel_el,
								      self->has_el2))
			continue;
		BAD(PMUV3_EV_CPU_CYCLES, f, 0, EINVAL, "CPU_CYCLES, filters 0x%x count nothing", f);
		BAD(self->filler, f, 0, EINVAL, "0x%x, filters 0x%x count nothing", self->filler, f);
		BAD(0x0160, f | AMUPMU_EV_RAW, 0, EINVAL, "0x160 RAW, filters 0x%x count nothing",
		    f);
	}
	/* unknown flag bits, alone and beside valid filters */
	for (i = 6; i < 32; i++) {
		BAD(PMUV3_EV_CPU_CYCLES, 1U << i, 0, EINVAL, "event flags bit %u", i);
		if (i == 6 || i == 31)
			BAD(PMUV3_EV_CPU_CYCLES, (1U << i) | AMUPMU_EV_USER_ONLY, 0, EINVAL,
			    "event flags bit %u with :u", i);
	}
	for (i = 0; i < 64; i++)
		BAD(PMUV3_EV_CPU_CYCLES, 0, 1ULL << i, EINVAL,
		    "sample_period bit %u without ring_pages", i);
	ASSERT_GE(ARRAY_SIZE(bad), n);
#undef BAD

	for (i = 0; i < n; i++) {
		/* alone, then last of three after valid events */
		for (pos = 0; pos < 3; pos += 2) {
			char what[96];

			group_init(&g, 0);
			if (pos) {
				group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
				group_add(&g, self->filler, 0);
			}
			group_add(&g, bad[i].event, bad[i].flags);
			g.ev[g.nr - 1].sample_period = bad[i].reserved;
			memset(&b, 0, sizeof(b));
			amupmu_pmu_config_init(&b.cfg, g.ev, g.nr, g.cpus.w, g.cpus.len);
			snprintf(what, sizeof(what), "%s (event %u of %u)", bad[i].what,
				 g.nr - 1, g.nr);
			expect_config_refused(_metadata, self->fd, &b, CFG_SZ, bad[i].err, what);
		}
	}
	TH_LOG("%u invalid events (kernel at EL%u, CPU %s EL2)", n, self->kernel_el,
	       self->has_el2 ? "with" : "without");
	expect_all_free(_metadata, self, "after the invalid events");
}

/* ---------------------------------------------------------------- INFO's free counters */

/* Bits of the counters @g's CONFIG got. */
static __u32 group_mask(const struct group *g)
{
	__u32 m = 0;
	unsigned int i;

	for (i = 0; i < g->nr; i++)
		m |= 1U << g->cfg.counters[i];
	return m;
}

/*
 * INFO's per-CPU pmu_counters_free: every event counter below
 * pmu_num_counters and bit 31 with no session (0 when the kernel owns the
 * PMU); a session's counters leave the mask of its CPUs only; a CONFIG
 * that needs more than is free is EBUSY, writes nothing back and leaves
 * the mask as it was; closing and RELEASE give the bits back.
 */
TEST_F(pmu, counters_free_mask)
{
	const unsigned int n = self->nr_counters;
	const __u32 all = amupmu_all_counters_mask(n);
	__u32 *free_mask, *before;
	struct group a, b;
	union cfg_buf buf;
	unsigned int cpu;
	int fa, fb, ret;

	PMU_BEGIN();
	free_mask = calloc(self->nr_cpu_ids, sizeof(*free_mask));
	before = calloc(self->nr_cpu_ids, sizeof(*before));
	ASSERT_NE(NULL, free_mask);
	ASSERT_NE(NULL, before);
	ASSERT_EQ(0, amupmu_counters_free(self->fd, free_mask, self->nr_cpu_ids));
	for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
		const struct amupmu_cpu_info *ci = &self->cpus[cpu];
		__u32 want = 0;

		if (self->info.pmu_owner == AMUPMU_PMU_OWNER_AMUPMU &&
		    (ci->flags & AMUPMU_CPU_DISCOVERED) && (ci->flags & AMUPMU_CPU_PMU))
			want = amupmu_all_counters_mask(ci->pmu_num_counters);
		TH_LOG("cpu%u: pmu_counters_free 0x%08x (PMCR_EL0.N %u)", cpu, free_mask[cpu],
		       ci->pmu_num_counters);
		EXPECT_EQ(want, free_mask[cpu]) {
			TH_LOG("cpu%u: idle pmu_counters_free 0x%x, expected 0x%x (pmu_owner %u)",
			       cpu, free_mask[cpu], want, self->info.pmu_owner);
		}
	}
	NEED_PMU();
	if (self->shared) {
		/* perf core decides: 0 on every CPU, also with CPU 0 full */
		fa = open_dev();
		ASSERT_LE(0, fa);
		group_all_counters(self, &a, 0);
		ASSERT_EQ(0, group_config(fa, &a));
		ASSERT_EQ(0, amupmu_counters_free(self->fd, free_mask, self->nr_cpu_ids));
		for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
			EXPECT_EQ(0U, free_mask[cpu]) {
				TH_LOG("shared mode, CPU 0 full: cpu%u pmu_counters_free 0x%x", cpu,
				       free_mask[cpu]);
			}
		}
		TH_LOG("shared mode: pmu_counters_free 0 on every CPU, idle and with all %u "
		       "counters of CPU 0 held", n + 1);
		close(fa);
		free(free_mask);
		free(before);
		return;
	}
	if (n < 3)
		SKIP(return, "PMCR_EL0.N %u < 3", n);

	fa = open_dev();
	fb = open_dev();
	ASSERT_LE(0, fa);
	ASSERT_LE(0, fb);
	/* A takes the cycle counter and two event counters of CPU 0 */
	group_init(&a, 0);
	group_add(&a, PMUV3_EV_CPU_CYCLES, 0);
	group_add_n(&a, self->filler, 2);
	ASSERT_EQ(0, group_config(fa, &a));
	ASSERT_EQ(0, amupmu_counters_free(self->fd, free_mask, self->nr_cpu_ids));
	TH_LOG("A took 0x%08x: CPU 0 free 0x%08x", group_mask(&a), free_mask[0]);
	EXPECT_EQ(all & ~group_mask(&a), free_mask[0]);
	EXPECT_TRUE(!(free_mask[0] & (1U << 31))) {
		TH_LOG("the cycle counter A holds is still free");
	}
	for (cpu = 1; cpu < self->nr_cpu_ids; cpu++) {
		if (!(self->cpus[cpu].flags & AMUPMU_CPU_DISCOVERED))
			continue;
		EXPECT_EQ(amupmu_all_counters_mask(self->cpus[cpu].pmu_num_counters),
			  free_mask[cpu]) {
			TH_LOG("cpu%u lost counters to a session on CPU 0", cpu);
		}
	}

	/* B needs n - 1 event counters, n - 2 are free: EBUSY, nothing changes */
	memcpy(before, free_mask, self->nr_cpu_ids * sizeof(*before));
	group_init(&b, 0);
	group_add_n(&b, self->filler, n - 1);
	memset(&buf, 0, sizeof(buf));
	amupmu_pmu_config_init(&buf.cfg, b.ev, b.nr, b.cpus.w, b.cpus.len);
	expect_config_refused(_metadata, fb, &buf, CFG_SZ, EBUSY,
			      "n - 1 event counters with n - 2 free");
	ASSERT_EQ(0, amupmu_counters_free(self->fd, free_mask, self->nr_cpu_ids));
	EXPECT_EQ(0, memcmp(before, free_mask, self->nr_cpu_ids * sizeof(*before))) {
		TH_LOG("the refused CONFIG changed pmu_counters_free of CPU 0: 0x%x -> 0x%x",
		       before[0], free_mask[0]);
	}

	/* the n - 2 that are free fit, then nothing is free */
	b.nr = n - 2;
	ret = group_config(fb, &b);
	ASSERT_EQ(0, ret) {
		TH_LOG("the %u free event counters: %s", n - 2, amupmu_errstr(ret));
	}
	EXPECT_EQ(0U, group_mask(&a) & group_mask(&b));
	ASSERT_EQ(0, amupmu_counters_free(self->fd, free_mask, self->nr_cpu_ids));
	EXPECT_EQ(0U, free_mask[0]);

	/* closing A gives its three back, B's RELEASE the rest */
	close(fa);
	ASSERT_EQ(0, amupmu_counters_free(self->fd, free_mask, self->nr_cpu_ids));
	EXPECT_EQ(group_mask(&a), free_mask[0]);
	ASSERT_EQ(0, amupmu_pmu_ctl(fb, AMUPMU_PMU_CTL_RELEASE));
	ASSERT_EQ(0, amupmu_counters_free(self->fd, free_mask, self->nr_cpu_ids));
	EXPECT_EQ(all, free_mask[0]);
	close(fb);
	free(free_mask);
	free(before);
}

TEST_HARNESS_MAIN
