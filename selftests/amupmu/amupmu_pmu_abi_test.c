// SPDX-License-Identifier: GPL-2.0
/*
 * The ABI of the three PMU session commands of /dev/amupmu
 * (AMUPMU_PMU_CONFIG, AMUPMU_PMU_CTL, AMUPMU_PMU_READ, include/uapi/linux/
 * amupmu.h): sizes below the first version, non-zero tails (E2BIG), zero
 * tails and the older, shorter READs accepted, flags and reserved fields,
 * every range check, bad user pointers, one group per session; each
 * refused call writes nothing back and changes nothing (the group's state
 * and totals); the READ_ALL refusals.
 *
 * The fixture, its backend line and the helpers: amupmu_pmu_fixture.h.
 * The CAP_PERFMON check of CONFIG: amupmu_pmu_priv_test.
 */
#define _GNU_SOURCE
#include "amupmu_pmu_fixture.h"

#define MAX_SZ		AMUPMU_SIZE_MAX

/* ---------------------------------------------------------------- helpers */

union ctl_buf {
	struct amupmu_pmu_ctl ctl;
	unsigned char raw[BIG_SZ];
};

union rd_buf {
	struct amupmu_pmu_read rd;
	unsigned char raw[BIG_SZ];
};

/* A mapping whose second page is PROT_NONE. */
struct guard_map {
	unsigned char *map;
	unsigned char *guard;
	size_t len;
};

static int guard_map(struct guard_map *m)
{
	size_t page = sysconf(_SC_PAGESIZE);

	m->len = 2 * page;
	m->map = mmap(NULL, m->len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->map == MAP_FAILED)
		return -errno;
	m->guard = m->map + page;
	return mprotect(m->guard, page, PROT_NONE) ? -errno : 0;
}

/* ---------------------------------------------------------------- CONFIG ABI */

TEST_F(pmu, config_without_ctl_is_unconfigured)
{
	struct snap s;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	expect_unconfigured(_metadata, self->fd, "fresh session");
	ret = snap_read(self->fd, 0, 1, &s);
	EXPECT_EQ(-ENODEV, ret) {
		TH_LOG("READ on a fresh session: %s", amupmu_errstr(ret));
	}
}

TEST_F(pmu, config_size_below_ver0)
{
	union cfg_buf b;
	struct group g;
	char what[64];
	__u32 size;

	PMU_BEGIN();
	NEED_PMU();
	for (size = 0; size < AMUPMU_PMU_CONFIG_SIZE_VER0; size++) {
		cfg_base(&b, &g);
		b.cfg.size = size;
		snprintf(what, sizeof(what), "CONFIG size %u", size);
		expect_config_refused(_metadata, self->fd, &b, CFG_SZ, EINVAL, what);
	}
	expect_all_free(_metadata, self, "after the size sweep");
}

TEST_F(pmu, config_size_nonzero_tail_e2big)
{
	union cfg_buf b;
	struct group g;
	char what[64];
	size_t pos;

	PMU_BEGIN();
	NEED_PMU();
	for (pos = CFG_SZ; pos < CFG_SZ + 8; pos++) {
		cfg_base(&b, &g);
		b.cfg.size = CFG_SZ + 8;
		b.raw[pos] = 0x01;
		snprintf(what, sizeof(what), "CONFIG size %zu, tail byte %zu set", CFG_SZ + 8, pos);
		expect_config_refused(_metadata, self->fd, &b, CFG_SZ + 8, E2BIG, what);
	}
	expect_all_free(_metadata, self, "after the tail sweep");
}

TEST_F(pmu, config_size_above_max)
{
	static const size_t sizes[] = { MAX_SZ + 1, MAX_SZ + 8, BIG_SZ };
	union cfg_buf b;
	struct group g;
	char what[64];
	size_t i;

	PMU_BEGIN();
	NEED_PMU();
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		cfg_base(&b, &g);
		b.cfg.size = sizes[i];
		snprintf(what, sizeof(what), "CONFIG size %zu, zero tail", sizes[i]);
		expect_config_refused(_metadata, self->fd, &b, sizes[i], E2BIG, what);
	}
}

TEST_F(pmu, config_size_larger_zero_tail)
{
	static const size_t sizes[] = { CFG_SZ + 1, CFG_SZ + 8, CFG_SZ + 64, MAX_SZ };
	union cfg_buf b;
	struct group g;
	size_t i;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		cfg_base(&b, &g);
		b.cfg.size = sizes[i];
		ret = amupmu_ioctl(self->fd, AMUPMU_PMU_CONFIG, &b);
		ASSERT_EQ(0, ret) {
			TH_LOG("CONFIG size %zu, zero tail: %s", sizes[i], amupmu_errstr(ret));
		}
		expect_counter(_metadata, self, &b.cfg, 0, true, "CPU_CYCLES");
		EXPECT_EQ(want_free(self, self->nr_counters + 1), b.cfg.counters_free);
		EXPECT_TRUE(all_bytes(b.raw + CFG_SZ, BIG_SZ - CFG_SZ, 0)) {
			TH_LOG("CONFIG size %zu: the unknown tail was written", sizes[i]);
		}
		ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE));
	}
}

TEST_F(pmu, config_flags_and_reserved)
{
	union cfg_buf b;
	struct group g;
	char what[64];
	unsigned int bit;

	PMU_BEGIN();
	NEED_PMU();
	for (bit = 0; bit < 32; bit++) {
		/* bit 0, AMUPMU_PMU_CONFIG_MULTIPLEX: shared mode's (amupmu_mux_test) */
		if (bit == 0 && self->shared)
			continue;
		cfg_base(&b, &g);
		b.cfg.flags = 1U << bit;
		snprintf(what, sizeof(what), "CONFIG flags bit %u", bit);
		expect_config_refused(_metadata, self->fd, &b, CFG_SZ,
				      bit == 0 ? EOPNOTSUPP : EINVAL, what);
	}
	for (bit = 0; bit < 32; bit++) {
		cfg_base(&b, &g);
		b.cfg.__reserved = 1U << bit;
		snprintf(what, sizeof(what), "CONFIG __reserved bit %u", bit);
		expect_config_refused(_metadata, self->fd, &b, CFG_SZ, EINVAL, what);
		cfg_base(&b, &g);
		b.cfg.ring_pages = 1U << bit;
		snprintf(what, sizeof(what), "CONFIG ring_pages %u without sampling", 1U << bit);
		expect_config_refused(_metadata, self->fd, &b, CFG_SZ, EINVAL, what);
	}
	expect_all_free(_metadata, self, "after the flag sweep");
}

TEST_F(pmu, config_nr_events)
{
	static const __u32 nrs[] = { 0, MAX_GROUP + 1, MAX_GROUP + 2, 1024, 0x80000000U,
				     0xFFFFFFFFU };
	struct amupmu_pmu_event ev[MAX_GROUP + 2];
	union cfg_buf b;
	struct group g;
	char what[64];
	unsigned int i;

	PMU_BEGIN();
	NEED_PMU();
	for (i = 0; i < ARRAY_SIZE(ev); i++)
		amupmu_pmu_event_set(&ev[i], self->filler, 0);
	for (i = 0; i < ARRAY_SIZE(nrs); i++) {
		cfg_base(&b, &g);
		b.cfg.events_uptr = (uintptr_t)ev;
		b.cfg.nr_events = nrs[i];
		snprintf(what, sizeof(what), "CONFIG nr_events %u", nrs[i]);
		expect_config_refused(_metadata, self->fd, &b, CFG_SZ, EINVAL, what);
	}
	expect_all_free(_metadata, self, "after the nr_events sweep");
}

TEST_F(pmu, config_event_size_bad)
{
	static const __u32 sizes[] = {
		0, 1, 8, EV_SZ - 1, EV_SZ + 1, EV_SZ + 4, EV_SZ + 7, 4095,
		AMUPMU_PMU_EVENT_SIZE_MAX + 8, BIG_SZ, 1U << 20, 0xFFFFFFF8U,
	};
	static unsigned char events[BIG_SZ * 2];
	union cfg_buf b;
	struct group g;
	char what[64];
	size_t i;

	PMU_BEGIN();
	NEED_PMU();
	memset(events, 0, sizeof(events));
	((struct amupmu_pmu_event *)events)->event = PMUV3_EV_CPU_CYCLES;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		cfg_base(&b, &g);
		b.cfg.events_uptr = (uintptr_t)events;
		b.cfg.event_size = sizes[i];
		snprintf(what, sizeof(what), "CONFIG event_size %u", sizes[i]);
		expect_config_refused(_metadata, self->fd, &b, CFG_SZ, EINVAL, what);
	}
	expect_all_free(_metadata, self, "after the event_size sweep");
}

/* Larger event entries with zero tails are accepted, at their stride. */
TEST_F(pmu, config_event_size_larger)
{
	static const __u32 sizes[] = { EV_SZ + 8, 2 * EV_SZ, 256, AMUPMU_PMU_EVENT_SIZE_MAX };
	static unsigned char events[3 * AMUPMU_PMU_EVENT_SIZE_MAX];
	struct amupmu_pmu_event *e;
	union cfg_buf b;
	struct group g;
	unsigned int i, k;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		memset(events, 0, sizeof(events));
		for (k = 0; k < 3; k++) {
			e = (struct amupmu_pmu_event *)(events + k * sizes[i]);
			e->event = k ? self->filler : PMUV3_EV_CPU_CYCLES;
		}
		cfg_base(&b, &g);
		b.cfg.events_uptr = (uintptr_t)events;
		b.cfg.event_size = sizes[i];
		b.cfg.nr_events = 3;
		ret = amupmu_ioctl(self->fd, AMUPMU_PMU_CONFIG, &b);
		ASSERT_EQ(0, ret) {
			TH_LOG("event_size %u with zero tails: %s", sizes[i], amupmu_errstr(ret));
		}
		expect_counter(_metadata, self, &b.cfg, 0, true, "CPU_CYCLES, the first event");
		expect_counter(_metadata, self, &b.cfg, 1, false, "the second event");
		expect_counter(_metadata, self, &b.cfg, 2, false, "the third event");
		if (!self->shared) {
			EXPECT_NE(b.cfg.counters[1], b.cfg.counters[2]);
		}
		ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE));
	}
}

TEST_F(pmu, config_cpus_len_bad)
{
	static const __u32 lens[] = {
		0, 1, 4, 7, 9, 12, AMUPMU_PMU_CPUS_LEN_MAX + 8, AMUPMU_PMU_CPUS_LEN_MAX + 1,
		2048, 0xFFFFFFF8U,
	};
	static __u64 cpus[BIG_SZ / 8];
	union cfg_buf b;
	struct group g;
	char what[64];
	size_t i;

	PMU_BEGIN();
	NEED_PMU();
	memset(cpus, 0, sizeof(cpus));
	cpus[0] = 1;
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		cfg_base(&b, &g);
		b.cfg.cpus_uptr = (uintptr_t)cpus;
		b.cfg.cpus_len = lens[i];
		snprintf(what, sizeof(what), "CONFIG cpus_len %u", lens[i]);
		expect_config_refused(_metadata, self->fd, &b, CFG_SZ, EINVAL, what);
	}
	expect_all_free(_metadata, self, "after the cpus_len sweep");
}

/* Longer bitmaps with zero high words are the same CPU set. */
TEST_F(pmu, config_cpus_len_larger)
{
	static const __u32 lens[] = { 8, 16, 64, AMUPMU_PMU_CPUS_LEN_MAX };
	static __u64 cpus[AMUPMU_PMU_CPUS_LEN_MAX / 8];
	union cfg_buf b;
	struct group g;
	struct snap s;
	size_t i;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	memset(cpus, 0, sizeof(cpus));
	cpus[0] = 1;
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		cfg_base(&b, &g);
		b.cfg.cpus_uptr = (uintptr_t)cpus;
		b.cfg.cpus_len = lens[i];
		ret = amupmu_ioctl(self->fd, AMUPMU_PMU_CONFIG, &b);
		ASSERT_EQ(0, ret) {
			TH_LOG("cpus_len %u: %s", lens[i], amupmu_errstr(ret));
		}
		read_ok(_metadata, self->fd, 0, 1, &s);
		if (self->nr_cpu_ids > 1) {
			ret = snap_read(self->fd, 1, 1, &s);
			EXPECT_EQ(-EINVAL, ret) {
				TH_LOG("cpus_len %u: READ cpu 1, not in the set: %s", lens[i],
				       amupmu_errstr(ret));
			}
		}
		ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE));
	}
}

TEST_F(pmu, config_cpuset_empty_or_impossible)
{
	static __u64 cpus[AMUPMU_PMU_CPUS_LEN_MAX / 8];
	const unsigned int last = AMUPMU_PMU_CPUS_LEN_MAX * 8 - 1;
	unsigned int bad[4], i, n = 0;
	union cfg_buf b;
	struct group g;
	char what[80];

	PMU_BEGIN();
	NEED_PMU();
	/* no CPU */
	memset(cpus, 0, sizeof(cpus));
	for (i = 8; i <= AMUPMU_PMU_CPUS_LEN_MAX; i *= 2) {
		cfg_base(&b, &g);
		b.cfg.cpus_uptr = (uintptr_t)cpus;
		b.cfg.cpus_len = i;
		snprintf(what, sizeof(what), "empty CPU set, cpus_len %u", i);
		expect_config_refused(_metadata, self->fd, &b, CFG_SZ, EINVAL, what);
	}

	/* CPU numbers that are not possible, alone and with CPU 0 */
	bad[n++] = self->nr_cpu_ids;
	if (self->nr_cpu_ids < 63)
		bad[n++] = 63;
	if (self->nr_cpu_ids < 64)
		bad[n++] = 64;
	if (self->nr_cpu_ids <= last)
		bad[n++] = last;
	for (i = 0; i < 2 * n; i++) {
		unsigned int cpu = bad[i / 2];

		memset(cpus, 0, sizeof(cpus));
		cpus[cpu / 64] |= 1ULL << (cpu % 64);
		if (i & 1)
			cpus[0] |= 1;
		cfg_base(&b, &g);
		b.cfg.cpus_uptr = (uintptr_t)cpus;
		b.cfg.cpus_len = AMUPMU_PMU_CPUS_LEN_MAX;
		snprintf(what, sizeof(what), "CPU %u (nr_cpu_ids %u)%s", cpu, self->nr_cpu_ids,
			 (i & 1) ? " with CPU 0" : "");
		expect_config_refused(_metadata, self->fd, &b, CFG_SZ, ENODEV, what);
	}
	expect_all_free(_metadata, self, "after the CPU set sweep");
}

TEST_F(pmu, config_bad_pointers)
{
	struct amupmu_pmu_event *ev_edge;
	struct guard_map m;
	__u64 *cpu_edge;
	union cfg_buf b;
	struct group g;
	struct {
		const char *what;
		__u64 uptr;
	} bad[4];
	size_t i;

	PMU_BEGIN();
	NEED_PMU();
	ASSERT_EQ(0, guard_map(&m));
	bad[0].what = "NULL";
	bad[0].uptr = 0;
	bad[1].what = "address 1";
	bad[1].uptr = 1;
	bad[2].what = "PROT_NONE page";
	bad[2].uptr = (uintptr_t)m.guard;
	bad[3].what = "kernel address";
	bad[3].uptr = KERNEL_ADDR;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char what[64];

		cfg_base(&b, &g);
		b.cfg.events_uptr = bad[i].uptr;
		snprintf(what, sizeof(what), "events_uptr %s", bad[i].what);
		expect_config_refused(_metadata, self->fd, &b, CFG_SZ, EFAULT, what);

		cfg_base(&b, &g);
		b.cfg.cpus_uptr = bad[i].uptr;
		snprintf(what, sizeof(what), "cpus_uptr %s", bad[i].what);
		expect_config_refused(_metadata, self->fd, &b, CFG_SZ, EFAULT, what);
	}

	/* the second event is in the PROT_NONE page */
	ev_edge = (struct amupmu_pmu_event *)(m.guard - EV_SZ);
	amupmu_pmu_event_set(ev_edge, PMUV3_EV_CPU_CYCLES, 0);
	cfg_base(&b, &g);
	b.cfg.events_uptr = (uintptr_t)ev_edge;
	b.cfg.nr_events = 2;
	expect_config_refused(_metadata, self->fd, &b, CFG_SZ, EFAULT,
			      "events running into a PROT_NONE page");
	/* one event straddling the page boundary */
	cfg_base(&b, &g);
	b.cfg.events_uptr = (uintptr_t)(m.guard - EV_SZ / 2);
	expect_config_refused(_metadata, self->fd, &b, CFG_SZ, EFAULT,
			      "event straddling a PROT_NONE page");
	/* the second CPU word is in the PROT_NONE page */
	cpu_edge = (__u64 *)(m.guard - 8);
	*cpu_edge = 1;
	cfg_base(&b, &g);
	b.cfg.cpus_uptr = (uintptr_t)cpu_edge;
	b.cfg.cpus_len = 16;
	expect_config_refused(_metadata, self->fd, &b, CFG_SZ, EFAULT,
			      "CPU set running into a PROT_NONE page");
	munmap(m.map, m.len);
	expect_all_free(_metadata, self, "after the bad pointers");
}

/* A session holds one group: a second CONFIG is EBUSY and changes nothing. */
TEST_F(pmu, config_twice)
{
	struct group g, g2;
	struct snap s;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	group_init(&g, 0);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	group_add(&g, self->filler, 0);
	ASSERT_EQ(0, group_config(self->fd, &g));

	group_init(&g2, 0);
	group_add(&g2, self->filler, 0);
	ret = group_config(self->fd, &g2);
	EXPECT_EQ(-EBUSY, ret) {
		TH_LOG("second CONFIG: %s", amupmu_errstr(ret));
	}
	/* the same group is a second CONFIG too */
	ret = group_config(self->fd, &g);
	EXPECT_EQ(-EBUSY, ret) {
		TH_LOG("same CONFIG again: %s", amupmu_errstr(ret));
	}
	read_ok(_metadata, self->fd, 0, 2, &s);
	EXPECT_EQ(2U, s.rd.nr_values);

	/* only the first group's two counters are taken */
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE));
	expect_all_free(_metadata, self, "after the second CONFIG");
}

/* ---------------------------------------------------------------- CTL ABI */

TEST_F(pmu, ctl_without_group)
{
	__u32 op;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	for (op = AMUPMU_PMU_CTL_ENABLE; op <= AMUPMU_PMU_CTL_RELEASE; op++) {
		ret = amupmu_pmu_ctl(self->fd, op);
		EXPECT_EQ(-ENODEV, ret) {
			TH_LOG("CTL op %u without a group: %s", op, amupmu_errstr(ret));
		}
	}
}

/* A group with counts, disabled; @s gets its state. */
static void counted_group(struct __test_metadata *_metadata, FIXTURE_DATA(pmu) *self,
			  struct snap *s)
{
	struct group g;

	ASSERT_EQ(0, amupmu_pin_cpu(0));
	group_init(&g, 0);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	group_add(&g, self->filler, 0);
	ASSERT_EQ(0, group_config(self->fd, &g));
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	amupmu_busy_ns(5 * NSEC_PER_MSEC);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
	read_ok(_metadata, self->fd, 0, 2, s);
	ASSERT_LT(0ULL, s->v[0].value);
}

static void expect_same_snap(struct __test_metadata *_metadata, const struct snap *a,
			     const struct snap *b, unsigned int nr, const char *what)
{
	unsigned int i;

	EXPECT_EQ(a->rd.state, b->rd.state) {
		TH_LOG("%s: state 0x%x -> 0x%x", what, a->rd.state, b->rd.state);
	}
	EXPECT_EQ(a->rd.time_enabled, b->rd.time_enabled) {
		TH_LOG("%s: time_enabled changed", what);
	}
	EXPECT_EQ(a->rd.time_running, b->rd.time_running);
	for (i = 0; i < nr; i++) {
		EXPECT_EQ(a->v[i].value, b->v[i].value) {
			TH_LOG("%s: event %u total changed", what, i);
		}
		EXPECT_EQ(a->v[i].overflows, b->v[i].overflows);
	}
}

/*
 * The @i-th malformed CTL request built on @op, in @b; false past the
 * last. Sizes, non-zero tails, flags and __reserved bits.
 */
static bool ctl_bad_case(unsigned int i, __u32 op, union ctl_buf *b, size_t *len,
			 int *err, char *what, size_t what_len)
{
	static const size_t big[] = { MAX_SZ + 1, MAX_SZ + 8, BIG_SZ };

	memset(b, 0, sizeof(*b));
	amupmu_pmu_ctl_init(&b->ctl, op);
	*len = CTL_SZ;
	*err = EINVAL;
	if (i < AMUPMU_PMU_CTL_SIZE_VER0) {
		b->ctl.size = i;
		snprintf(what, what_len, "CTL op %u size %u", op, i);
		return true;
	}
	i -= AMUPMU_PMU_CTL_SIZE_VER0;
	if (i < 8) {
		b->ctl.size = CTL_SZ + 8;
		b->raw[CTL_SZ + i] = 1;
		*len = CTL_SZ + 8;
		*err = E2BIG;
		snprintf(what, what_len, "CTL op %u size %zu, tail byte %zu set", op,
			 CTL_SZ + 8, CTL_SZ + i);
		return true;
	}
	i -= 8;
	if (i < ARRAY_SIZE(big)) {
		b->ctl.size = big[i];
		*len = big[i];
		*err = E2BIG;
		snprintf(what, what_len, "CTL op %u size %zu", op, big[i]);
		return true;
	}
	i -= ARRAY_SIZE(big);
	if (i < 32) {
		b->ctl.flags = 1U << i;
		snprintf(what, what_len, "CTL op %u flags bit %u", op, i);
		return true;
	}
	i -= 32;
	if (i < 32) {
		b->ctl.__reserved = 1U << i;
		snprintf(what, what_len, "CTL op %u __reserved bit %u", op, i);
		return true;
	}
	return false;
}

/* Refused CTLs on a disabled group: nothing enabled, reset or released. */
TEST_F(pmu, ctl_refused_while_disabled)
{
	static const __u32 ops[] = {
		AMUPMU_PMU_CTL_ENABLE, AMUPMU_PMU_CTL_RESET, AMUPMU_PMU_CTL_RELEASE,
	};
	struct snap base, s;
	union ctl_buf b;
	char what[80];
	unsigned int i, k;
	size_t len;
	int err, ret;

	PMU_BEGIN();
	NEED_PMU();
	counted_group(_metadata, self, &base);
	for (k = 0; k < ARRAY_SIZE(ops); k++) {
		for (i = 0; ctl_bad_case(i, ops[k], &b, &len, &err, what, sizeof(what)); i++) {
			ret = expect_err(_metadata, self->fd, AMUPMU_PMU_CTL, &b, len, err,
					 true, what);
			ASSERT_NE(0, ret) {
				TH_LOG("%s was accepted: stopping", what);
			}
			read_ok(_metadata, self->fd, 0, 2, &s);
			expect_same_snap(_metadata, &base, &s, 2, what);
		}
	}
}

/* Refused CTLs on an enabled group: still enabled, not reset, not released. */
TEST_F(pmu, ctl_refused_while_enabled)
{
	static const __u32 ops[] = {
		AMUPMU_PMU_CTL_DISABLE, AMUPMU_PMU_CTL_RESET, AMUPMU_PMU_CTL_RELEASE,
	};
	struct snap prev, s;
	union ctl_buf b;
	char what[80];
	unsigned int i, k;
	size_t len;
	int err, ret;

	PMU_BEGIN();
	NEED_PMU();
	counted_group(_metadata, self, &prev);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	for (k = 0; k < ARRAY_SIZE(ops); k++) {
		for (i = 0; ctl_bad_case(i, ops[k], &b, &len, &err, what, sizeof(what)); i++) {
			ret = expect_err(_metadata, self->fd, AMUPMU_PMU_CTL, &b, len, err,
					 true, what);
			ASSERT_NE(0, ret) {
				TH_LOG("%s was accepted: stopping", what);
			}
			read_ok(_metadata, self->fd, 0, 2, &s);
			EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED), s.rd.state) {
				TH_LOG("%s: state 0x%x", what, s.rd.state);
			}
			EXPECT_LE(prev.v[0].value, s.v[0].value) {
				TH_LOG("%s: total went back (reset?)", what);
			}
			EXPECT_LE(prev.rd.time_enabled, s.rd.time_enabled);
			prev = s;
		}
	}
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
}

TEST_F(pmu, ctl_unknown_op)
{
	static const __u32 ops[] = { 0, AMUPMU_PMU_CTL_RELEASE + 1, 6, 0x100, 0x80000001U,
				     0xFFFFFFFFU };
	struct snap base, s;
	union ctl_buf b;
	char what[64];
	unsigned int i;

	PMU_BEGIN();
	NEED_PMU();
	counted_group(_metadata, self, &base);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		memset(&b, 0, sizeof(b));
		amupmu_pmu_ctl_init(&b.ctl, ops[i]);
		snprintf(what, sizeof(what), "CTL op 0x%x", ops[i]);
		expect_err(_metadata, self->fd, AMUPMU_PMU_CTL, &b, CTL_SZ, EINVAL, true, what);
		read_ok(_metadata, self->fd, 0, 2, &s);
		expect_same_snap(_metadata, &base, &s, 2, what);
	}
}

TEST_F(pmu, ctl_size_larger_zero_tail)
{
	static const size_t sizes[] = { CTL_SZ + 1, CTL_SZ + 8, CTL_SZ + 64, MAX_SZ };
	struct snap base, s;
	union ctl_buf b;
	size_t i;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	counted_group(_metadata, self, &base);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		memset(&b, 0, sizeof(b));
		amupmu_pmu_ctl_init(&b.ctl, AMUPMU_PMU_CTL_ENABLE);
		b.ctl.size = sizes[i];
		ret = amupmu_ioctl(self->fd, AMUPMU_PMU_CTL, &b);
		EXPECT_EQ(0, ret) {
			TH_LOG("CTL ENABLE size %zu: %s", sizes[i], amupmu_errstr(ret));
		}
		read_ok(_metadata, self->fd, 0, 2, &s);
		EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED), s.rd.state);

		memset(&b, 0, sizeof(b));
		amupmu_pmu_ctl_init(&b.ctl, AMUPMU_PMU_CTL_DISABLE);
		b.ctl.size = sizes[i];
		ret = amupmu_ioctl(self->fd, AMUPMU_PMU_CTL, &b);
		EXPECT_EQ(0, ret) {
			TH_LOG("CTL DISABLE size %zu: %s", sizes[i], amupmu_errstr(ret));
		}
		EXPECT_TRUE(all_bytes(b.raw + CTL_SZ, BIG_SZ - CTL_SZ, 0)) {
			TH_LOG("CTL size %zu: the unknown tail was written", sizes[i]);
		}
		read_ok(_metadata, self->fd, 0, 2, &s);
		EXPECT_EQ(RD_STATE(0), s.rd.state);
	}
}

/* RELEASE frees the group: CTL and READ are ENODEV until CONFIG again. */
TEST_F(pmu, ctl_release_then_config)
{
	struct snap base, s;
	struct group g;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	counted_group(_metadata, self, &base);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE));
	ret = amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE);
	EXPECT_EQ(-ENODEV, ret);
	ret = amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE);
	EXPECT_EQ(-ENODEV, ret) {
		TH_LOG("second RELEASE: %s", amupmu_errstr(ret));
	}
	ret = snap_read(self->fd, 0, 2, &s);
	EXPECT_EQ(-ENODEV, ret) {
		TH_LOG("READ after RELEASE: %s", amupmu_errstr(ret));
	}
	expect_all_free(_metadata, self, "after RELEASE");

	/* a new, different group starts from zero */
	group_init(&g, 0);
	group_add_n(&g, self->filler, 3);
	ret = group_config(self->fd, &g);
	ASSERT_EQ(0, ret) {
		TH_LOG("CONFIG after RELEASE: %s", amupmu_errstr(ret));
	}
	read_ok(_metadata, self->fd, 0, 3, &s);
	EXPECT_EQ(RD_STATE(0), s.rd.state);
	EXPECT_EQ(0ULL, s.rd.time_enabled);
	EXPECT_EQ(0ULL, s.v[0].value);
}

/* ---------------------------------------------------------------- READ ABI */

TEST_F(pmu, read_without_group)
{
	struct snap s;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	ret = snap_read(self->fd, 0, 1, &s);
	EXPECT_EQ(-ENODEV, ret) {
		TH_LOG("READ without a group: %s", amupmu_errstr(ret));
	}
	EXPECT_EQ(AMUPMU_SENTINEL64, s.rd.time_enabled);
	EXPECT_EQ(1U, s.rd.nr_values);
}

/*
 * The @i-th malformed READ request (cpu 0 of a 2-event group on {0}) in @b;
 * false past the last.
 */
static bool read_bad_case(unsigned int i, FIXTURE_DATA(pmu) *self, union rd_buf *b,
			  struct amupmu_pmu_value *values, unsigned char *guard,
			  size_t *len, int *err, char *what, size_t what_len)
{
	static const size_t big[] = { MAX_SZ + 1, MAX_SZ + 8, BIG_SZ };
	const __u32 cpus[] = { 1, self->nr_cpu_ids, 64, 0x7FFFFFFFU, 0xFFFFFFFFU };
	const struct {
		const char *what;
		__u64 uptr;
	} ptrs[] = {
		{ "NULL", 0 },
		{ "address 1", 1 },
		{ "kernel address", KERNEL_ADDR },
		{ "PROT_NONE page", (uintptr_t)guard },
		{ "array running into a PROT_NONE page", (uintptr_t)(guard - VAL_SZ) },
		{ "value straddling a PROT_NONE page", (uintptr_t)(guard - VAL_SZ / 2) },
	};

	memset(b, 0, sizeof(*b));
	amupmu_pmu_read_init(&b->rd, 0, values, 2);
	*len = RD_SZ;
	*err = EINVAL;
	if (i < AMUPMU_PMU_READ_SIZE_VER0) {
		b->rd.size = i;
		snprintf(what, what_len, "READ size %u", i);
		return true;
	}
	i -= AMUPMU_PMU_READ_SIZE_VER0;
	if (i < 8) {
		b->rd.size = RD_SZ + 8;
		b->raw[RD_SZ + i] = 1;
		*len = RD_SZ + 8;
		*err = E2BIG;
		snprintf(what, what_len, "READ size %zu, tail byte %zu set", RD_SZ + 8, RD_SZ + i);
		return true;
	}
	i -= 8;
	if (i < ARRAY_SIZE(big)) {
		b->rd.size = big[i];
		*len = big[i];
		*err = E2BIG;
		snprintf(what, what_len, "READ size %zu", big[i]);
		return true;
	}
	i -= ARRAY_SIZE(big);
	if (i < 32) {
		/*
		 * bit 0, AMUPMU_PMU_READ_ALL, with nr_cpus 0: too small, EINVAL;
		 * bit 1, AMUPMU_PMU_READ_TIMES, is valid for any group
		 * (amupmu_mux_test): with bit 2 here, still refused
		 */
		b->rd.flags = 1U << i | (i == 1 ? 1U << 2 : 0);
		snprintf(what, what_len, "READ flags bit %u%s", i,
			 i ? "" : " (READ_ALL with nr_cpus 0)");
		return true;
	}
	i -= 32;
	if (i < 32) {
		b->rd.nr_cpus = 1U << i;
		snprintf(what, what_len, "READ nr_cpus bit %u without READ_ALL", i);
		return true;
	}
	i -= 32;
	if (i < ARRAY_SIZE(cpus)) {
		/* cpu 1 only when it exists; otherwise it is a second nr_cpu_ids case */
		b->rd.cpu = (i == 0 && self->nr_cpu_ids < 2) ? self->nr_cpu_ids : cpus[i];
		snprintf(what, what_len, "READ cpu %u, not in the set {0}", b->rd.cpu);
		return true;
	}
	i -= ARRAY_SIZE(cpus);
	if (i < 2) {
		b->rd.nr_values = i;	/* group of 2 */
		snprintf(what, what_len, "READ nr_values %u < 2", i);
		return true;
	}
	i -= 2;
	if (i < ARRAY_SIZE(ptrs)) {
		b->rd.values_uptr = ptrs[i].uptr;
		*err = EFAULT;
		snprintf(what, what_len, "READ values_uptr %s", ptrs[i].what);
		return true;
	}
	return false;
}

/* Every malformed READ: refused, nothing written, the group unchanged. */
TEST_F(pmu, read_refused)
{
	struct amupmu_pmu_value values[4], before[4];
	struct snap base, s;
	struct guard_map m;
	union rd_buf b;
	char what[96];
	unsigned int i;
	size_t len;
	int err;

	PMU_BEGIN();
	NEED_PMU();
	ASSERT_EQ(0, guard_map(&m));
	counted_group(_metadata, self, &base);
	memset(values, AMUPMU_FILL_BYTE, sizeof(values));
	memcpy(before, values, sizeof(values));
	for (i = 0; read_bad_case(i, self, &b, values, m.guard, &len, &err, what,
				  sizeof(what)); i++) {
		expect_err(_metadata, self->fd, AMUPMU_PMU_READ, &b, len, err, true, what);
		EXPECT_EQ(0, memcmp(before, values, sizeof(values))) {
			TH_LOG("%s: the refused READ wrote values", what);
		}
		memcpy(values, before, sizeof(values));
	}
	read_ok(_metadata, self->fd, 0, 2, &s);
	expect_same_snap(_metadata, &base, &s, 2, "after the refused READs");
	munmap(m.map, m.len);
}

/* nr_values at least the group's size: out the group's size, the rest untouched. */
TEST_F(pmu, read_nr_values_larger)
{
	struct amupmu_pmu_value values[MAX_GROUP + 2];
	struct amupmu_pmu_read rd;
	struct snap base;
	unsigned int nr, i;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	counted_group(_metadata, self, &base);
	for (nr = 2; nr <= MAX_GROUP + 2; nr += (nr < 4 ? 1 : MAX_GROUP - 2)) {
		memset(values, AMUPMU_FILL_BYTE, sizeof(values));
		ret = amupmu_pmu_read(self->fd, 0, values, nr, &rd);
		ASSERT_EQ(0, ret) {
			TH_LOG("READ nr_values %u: %s", nr, amupmu_errstr(ret));
		}
		EXPECT_EQ(2U, rd.nr_values);
		EXPECT_EQ(base.v[0].value, values[0].value);
		EXPECT_EQ(base.v[1].value, values[1].value);
		for (i = 2; i < ARRAY_SIZE(values); i++) {
			EXPECT_TRUE(all_bytes(&values[i], VAL_SZ, AMUPMU_FILL_BYTE)) {
				TH_LOG("nr_values %u: value %u (beyond the group) written", nr, i);
			}
		}
	}
}

TEST_F(pmu, read_size_larger_zero_tail)
{
	static const size_t sizes[] = { RD_SZ + 1, RD_SZ + 8, RD_SZ + 64, MAX_SZ };
	struct amupmu_pmu_value values[2];
	struct snap base;
	union rd_buf b;
	size_t i;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	counted_group(_metadata, self, &base);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		memset(&b, 0, sizeof(b));
		amupmu_pmu_read_init(&b.rd, 0, values, 2);
		b.rd.size = sizes[i];
		ret = amupmu_ioctl(self->fd, AMUPMU_PMU_READ, &b);
		ASSERT_EQ(0, ret) {
			TH_LOG("READ size %zu, zero tail: %s", sizes[i], amupmu_errstr(ret));
		}
		EXPECT_EQ(base.rd.time_enabled, b.rd.time_enabled);
		EXPECT_EQ(base.v[0].value, values[0].value);
		EXPECT_TRUE(all_bytes(b.raw + RD_SZ, BIG_SZ - RD_SZ, 0)) {
			TH_LOG("READ size %zu: the unknown tail was written", sizes[i]);
		}
	}
}

/*
 * READ of an older, shorter struct (@size) on a counted group: accepted;
 * the kernel writes back those @size bytes only. The bytes after the
 * struct hold AMUPMU_FILL_BYTE, as whatever an older caller has there.
 */
static void read_short(struct __test_metadata *_metadata, FIXTURE_DATA(pmu) *self,
		       __u32 size, union rd_buf *b)
{
	struct amupmu_pmu_value values[2];
	struct snap base;
	int ret;

	counted_group(_metadata, self, &base);
	memset(b, AMUPMU_FILL_BYTE, sizeof(*b));
	amupmu_pmu_read_init(&b->rd, 0, values, 2);
	b->rd.size = size;
	memset(b->raw + size, AMUPMU_FILL_BYTE, sizeof(*b) - size);
	ret = amupmu_ioctl(self->fd, AMUPMU_PMU_READ, b);
	ASSERT_EQ(0, ret) {
		TH_LOG("READ of size %u: %s", size, amupmu_errstr(ret));
	}
	EXPECT_EQ(base.rd.time_enabled, b->rd.time_enabled);
	EXPECT_EQ(base.v[0].value, values[0].value);
	EXPECT_TRUE(all_bytes(b->raw + size, sizeof(*b) - size, AMUPMU_FILL_BYTE)) {
		TH_LOG("READ size %u wrote past its struct", size);
	}
}

/* A caller built against ABI 1.0 passes the 48-byte READ. */
TEST_F(pmu, read_size_ver0)
{
	union rd_buf b;

	PMU_BEGIN();
	NEED_PMU();
	read_short(_metadata, self, AMUPMU_PMU_READ_SIZE_VER0, &b);
}

/* The first READ with samples and lost (64 bytes, before skid). */
TEST_F(pmu, read_size_ver1)
{
	union rd_buf b;

	PMU_BEGIN();
	NEED_PMU();
	read_short(_metadata, self, AMUPMU_PMU_READ_SIZE_VER1, &b);
	EXPECT_EQ(0ULL, b.rd.samples);
	EXPECT_EQ(0ULL, b.rd.lost);
}

/* An ABI 2.0-2.3 caller's READ (72 bytes, before throttled): nothing written past skid. */
TEST_F(pmu, read_size_ver2)
{
	union rd_buf b;

	PMU_BEGIN();
	NEED_PMU();
	read_short(_metadata, self, AMUPMU_PMU_READ_SIZE_VER2, &b);
	EXPECT_EQ(0ULL, b.rd.skid);
}

/* ---------------------------------------------------------------- READ_ALL ABI */

/*
 * The READ_ALL refusals, each EINVAL / EFAULT / ENODEV with nothing
 * written: too few entries, cpu not 0, more than 4096 entries, too few
 * values, bad pointers; nr_cpus without the flag; no group.
 */
TEST_F(pmu, read_all_refused)
{
	static unsigned int set[2];
	struct amupmu_pmu_read rd, ref;
	unsigned char *buf, *guard_buf;
	struct guard_map m;
	unsigned int nset, i;
	struct group g;
	size_t len;
	char what[96];
	struct {
		__u32 cpu, nr_cpus, nr_values, flags;
		__u64 uptr;
		int err;
		const char *what;
	} bad[16];
	unsigned int n = 0;

	PMU_BEGIN();
	NEED_PMU();
	ASSERT_EQ(0, guard_map(&m));
	group_init(&g, 0);
	if (self->nr_cpu_ids > 1 && (self->cpus[1].flags & AMUPMU_CPU_POSSIBLE))
		cpuset_add(&g.cpus, 1);
	nset = cpuset_list(&g.cpus, set, ARRAY_SIZE(set));
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	group_add(&g, self->filler, 0);

	len = (AMUPMU_PMU_READ_CPUS_MAX + 2) * amupmu_read_all_stride(2);
	buf = malloc(len);
	ASSERT_NE(NULL, buf);
	memset(buf, AMUPMU_FILL_BYTE, len);
	/* no group yet: ENODEV */
	amupmu_pmu_read_all_init(&rd, buf, nset, 2);
	expect_err(_metadata, self->fd, AMUPMU_PMU_READ, &rd, RD_SZ, ENODEV, true,
		   "READ_ALL without a group");
	ASSERT_EQ(0, group_config(self->fd, &g));
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	amupmu_busy_ns(NSEC_PER_MSEC);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));

	/* the last entry straddles into the guard page */
	guard_buf = m.guard - nset * amupmu_read_all_stride(2) + 8;
#define BADRA(_cpu, _nc, _nv, _fl, _uptr, _err, _what) do {			\
	bad[n].cpu = (_cpu); bad[n].nr_cpus = (_nc); bad[n].nr_values = (_nv);	\
	bad[n].flags = (_fl); bad[n].uptr = (__u64)(uintptr_t)(_uptr);		\
	bad[n].err = (_err); bad[n].what = (_what); n++;			\
} while (0)
	BADRA(0, nset - 1, 2, AMUPMU_PMU_READ_ALL, buf, EINVAL, "nr_cpus one below the set");
	BADRA(0, 0, 2, AMUPMU_PMU_READ_ALL, buf, EINVAL, "nr_cpus 0");
	BADRA(1, nset, 2, AMUPMU_PMU_READ_ALL, buf, EINVAL, "cpu 1 with READ_ALL");
	BADRA(self->nr_cpu_ids, nset, 2, AMUPMU_PMU_READ_ALL, buf, EINVAL,
	      "cpu nr_cpu_ids with READ_ALL");
	BADRA(0xFFFFFFFFU, nset, 2, AMUPMU_PMU_READ_ALL, buf, EINVAL, "cpu 2^32-1 with READ_ALL");
	BADRA(0, AMUPMU_PMU_READ_CPUS_MAX + 1, 2, AMUPMU_PMU_READ_ALL, buf, EINVAL,
	      "nr_cpus 4097");
	BADRA(0, 0xFFFFFFFFU, 2, AMUPMU_PMU_READ_ALL, buf, EINVAL, "nr_cpus 2^32-1");
	BADRA(0, nset, 1, AMUPMU_PMU_READ_ALL, buf, EINVAL, "nr_values 1 < 2");
	BADRA(0, nset, 0, AMUPMU_PMU_READ_ALL, buf, EINVAL, "nr_values 0");
	BADRA(0, nset, 2, 0, buf, EINVAL, "nr_cpus without READ_ALL");
	BADRA(0, 1, 2, 0, buf, EINVAL, "nr_cpus 1 without READ_ALL");
	BADRA(0, nset, 2, AMUPMU_PMU_READ_ALL | 4, buf, EINVAL, "READ_ALL and flags bit 2");
	BADRA(0, nset, 2, AMUPMU_PMU_READ_ALL, NULL, EFAULT, "values_uptr NULL");
	BADRA(0, nset, 2, AMUPMU_PMU_READ_ALL, KERNEL_ADDR, EFAULT, "values_uptr kernel address");
	BADRA(0, nset, 2, AMUPMU_PMU_READ_ALL, m.guard, EFAULT, "values_uptr PROT_NONE");
	BADRA(0, nset, 2, AMUPMU_PMU_READ_ALL, guard_buf, EFAULT,
	      "last entry straddling a PROT_NONE page");
#undef BADRA
	ASSERT_GE(ARRAY_SIZE(bad), n);
	amupmu_pmu_read_all_init(&ref, buf, nset, 2);
	for (i = 0; i < n; i++) {
		amupmu_pmu_read_all_init(&rd, buf, bad[i].nr_cpus, bad[i].nr_values);
		rd.cpu = bad[i].cpu;
		rd.flags = bad[i].flags;
		rd.values_uptr = bad[i].uptr;
		snprintf(what, sizeof(what), "READ_ALL %s (set of %u)", bad[i].what, nset);
		expect_err(_metadata, self->fd, AMUPMU_PMU_READ, &rd, RD_SZ, bad[i].err, true,
			   what);
		if (bad[i].uptr == (uintptr_t)buf) {
			EXPECT_TRUE(all_bytes(buf, len, AMUPMU_FILL_BYTE)) {
				TH_LOG("%s: the refused READ wrote entries", what);
			}
			memset(buf, AMUPMU_FILL_BYTE, len);
		}
	}
	/* and the valid one still works */
	EXPECT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_PMU_READ, &ref));
	EXPECT_EQ(nset, ref.nr_cpus);
	free(buf);
	munmap(m.map, m.len);
}

TEST_HARNESS_MAIN
