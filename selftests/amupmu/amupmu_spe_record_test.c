// SPDX-License-Identifier: GPL-2.0
/*
 * SPE profiling and its records (mock builds; production builds check the
 * refusals and skip, amupmu_spe_fixture.h): basic (records, bytes ==
 * data_head, the header's and the walker's record counts, PC ELs per the
 * enables; kernel PCs at EL2 on a VHE host), filters (LD, ST, B, FP with
 * FPm, FL: every record obeys, the model's rej_* grow and its records ==
 * READ's), interval (1024 exact, RND mean in [1024, 1279]), multi_access
 * (atomics as loads and stores).
 */
#define _GNU_SOURCE
#include "amupmu_spe_fixture.h"

/* ---------------------------------------------------------------- records */

struct el_arg {
	__u32 en;
	unsigned int kernel_el;	/* 1, 2 (VHE), 0 unknown */
};

static bool check_el(const struct rec *r, const void *arg, char *why, size_t size)
{
	const struct el_arg *a = arg;
	__u32 en = a->en;

	if (r->el == 0 && !(en & AMUPMU_SPE_EN_USER)) {
		snprintf(why, size, "an EL0 PC without EN_USER");
		return false;
	}
	if (r->el != 0 && !(en & AMUPMU_SPE_EN_KERNEL)) {
		snprintf(why, size, "an EL%u PC without EN_KERNEL", r->el);
		return false;
	}
	if (r->el != 0 && (a->kernel_el ? r->el != a->kernel_el : r->el == 3)) {
		snprintf(why, size, "a kernel PC at EL%u, the kernel runs at EL%u", r->el,
			 a->kernel_el);
		return false;
	}
	return true;
}

static void basic_run(struct __test_metadata *_metadata, FIXTURE_DATA(sess) *self, __u32 en)
{
	struct amupmu_spe_buf_header *h[2];
	struct amupmu_spe_config c;
	struct amupmu_spe_cpu e[MAX_CPUS];
	__u64 mask = self->nr_cpu_ids > 1 ? 3 : 1;
	unsigned int i, n = self->nr_cpu_ids > 1 ? 2 : 1;
	struct el_arg ea = { .en = en };
	char how[256];
	struct walk w;
	int fd, r;

	ea.kernel_el = amupmu_boot_kernel_el(how, sizeof(how));
	TH_LOG("kernel at EL%u (%s)", ea.kernel_el, how);
	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (i = 0; i < n; i++)
		STREAM(i, "ops_per_us=50");
	cfg_init(&c, &mask, en, 64);
	c.interval = 4096;	/* ~2400 records of 64 bytes in 200 ms: no overflow */
	CONFIG(fd, &c);
	for (i = 0; i < n; i++)
		MAP(h[i], fd, i, 64);
	CTL(fd, AMUPMU_SPE_CTL_ENABLE);
	busy_on(mask, 200);
	CTL(fd, AMUPMU_SPE_CTL_DISABLE);
	r = spe_read(fd, e, MAX_CPUS);
	ASSERT_EQ((int)n, r);
	for (i = 0; i < n; i++) {
		log_entry(_metadata, en == AMUPMU_SPE_EN_USER ? "user" : "user+kernel", &e[i]);
		EXPECT_EQ(i, e[i].cpu);
		EXPECT_LT(0ULL, e[i].records);
		EXPECT_EQ(e[i].bytes, h[i]->data_head);
		EXPECT_EQ(e[i].records, h[i]->records);
		EXPECT_EQ(0ULL, e[i].faults);
		EXPECT_EQ(0ULL, e[i].lost_bytes);
		EXPECT_EQ((__u32)AMUPMU_SPE_BUF_VERSION, h[i]->version);
		EXPECT_EQ((__u64)64 * sysconf(_SC_PAGESIZE), h[i]->data_size);
		EXPECT_EQ(i, h[i]->cpu);
		WALK(h[i], &w, check_el, &ea);
		TH_LOG("cpu%u walked: %llu records (EL0 %llu EL1 %llu EL2 %llu), %llu PAD bytes; "
		       "ld %llu st %llu b %llu other %llu", i, (unsigned long long)w.records,
		       (unsigned long long)w.el_seen[0], (unsigned long long)w.el_seen[1],
		       (unsigned long long)w.el_seen[2], (unsigned long long)w.pads,
		       (unsigned long long)w.loads, (unsigned long long)w.stores,
		       (unsigned long long)w.branches, (unsigned long long)w.other);
		EXPECT_EQ(e[i].records, w.records);
		munmap(h[i], 65 * sysconf(_SC_PAGESIZE));
	}
	close(fd);
}

TEST_F(sess, basic)
{
	BEGIN();
	basic_run(_metadata, self, AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_KERNEL | AMUPMU_SPE_EN_TS);
	basic_run(_metadata, self, AMUPMU_SPE_EN_USER);
}

/* ---------------------------------------------------------------- filters */

struct filt {
	const char *name;
	__u64 pmsfcr;
	__u32 min_latency;
	int st_rej;		/* the spe_stats counter that must grow */
};

static bool check_filter(const struct rec *r, const void *arg, char *why, size_t size)
{
	const struct filt *f = arg;
	bool ldst = r->op_class == OP_LDST, st = ldst && (r->subclass & OP_LDST_ST);

	if (f->pmsfcr & AMUPMU_SPE_PMSFCR_FL && r->total < f->min_latency) {
		snprintf(why, size, "total latency %u < %u", r->total, f->min_latency);
		return false;
	}
	if (!(f->pmsfcr & AMUPMU_SPE_PMSFCR_FT))
		return true;
	if ((f->pmsfcr & AMUPMU_SPE_PMSFCR_FPM) &&
	    !(r->op_class == OP_OTHER && (r->subclass & OP_OTHER_FP))) {
		snprintf(why, size, "not FP");
		return false;
	}
	if ((f->pmsfcr & (AMUPMU_SPE_PMSFCR_LD | AMUPMU_SPE_PMSFCR_ST | AMUPMU_SPE_PMSFCR_B)) &&
	    !(((f->pmsfcr & AMUPMU_SPE_PMSFCR_LD) && ldst && !st) ||
	      ((f->pmsfcr & AMUPMU_SPE_PMSFCR_ST) && st) ||
	      ((f->pmsfcr & AMUPMU_SPE_PMSFCR_B) && r->op_class == OP_BRANCH))) {
		snprintf(why, size, "type outside the filter");
		return false;
	}
	return true;
}

TEST_F(sess, filters)
{
	static const struct filt filts[] = {
		{ "LD", AMUPMU_SPE_PMSFCR_FT | AMUPMU_SPE_PMSFCR_LD, 0, ST_REJ_TYPE },
		{ "ST", AMUPMU_SPE_PMSFCR_FT | AMUPMU_SPE_PMSFCR_ST, 0, ST_REJ_TYPE },
		{ "B", AMUPMU_SPE_PMSFCR_FT | AMUPMU_SPE_PMSFCR_B, 0, ST_REJ_TYPE },
		{ "FP+FPm", AMUPMU_SPE_PMSFCR_FT | AMUPMU_SPE_PMSFCR_FP | AMUPMU_SPE_PMSFCR_FPM, 0,
		  ST_REJ_TYPE },
		{ "FL 100", AMUPMU_SPE_PMSFCR_FL, 100, ST_REJ_LATENCY },
	};
	unsigned int cpu = self->cpu, i;
	__u64 mask = 1ULL << cpu;

	BEGIN();
	STREAM(cpu, "ops_per_us=50");
	for (i = 0; i < ARRAY_SIZE(filts); i++) {
		const struct filt *f = &filts[i];
		struct amupmu_spe_buf_header *h;
		struct amupmu_spe_config c;
		struct amupmu_spe_cpu e;
		__u64 st0[ST_NR], st1[ST_NR];
		struct walk w;
		int fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);

		ASSERT_LE(0, fd);
		cfg_init(&c, &mask, AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_KERNEL, 64);
		c.interval = 4096;
		c.pmsfcr = f->pmsfcr;
		c.min_latency = f->min_latency;
		CONFIG(fd, &c);
		MAP(h, fd, cpu, 64);
		STATS(cpu, st0);
		CTL(fd, AMUPMU_SPE_CTL_ENABLE);
		busy_on(mask, 150);
		CTL(fd, AMUPMU_SPE_CTL_DISABLE);
		STATS(cpu, st1);
		READ_CPU(fd, cpu, &e);
		WALK(h, &w, check_filter, f);
		TH_LOG("%s: records %llu (walked %llu: ld %llu st %llu b %llu other %llu fp %llu, "
		       "min total %llu); model: selected %llu coll %llu rej_type %llu rej_event %llu "
		       "rej_latency %llu records %llu", f->name, (unsigned long long)e.records,
		       (unsigned long long)w.records, (unsigned long long)w.loads,
		       (unsigned long long)w.stores, (unsigned long long)w.branches,
		       (unsigned long long)w.other, (unsigned long long)w.fp,
		       (unsigned long long)w.min_total,
		       (unsigned long long)(st1[ST_SELECTED] - st0[ST_SELECTED]),
		       (unsigned long long)(st1[ST_COLLISIONS] - st0[ST_COLLISIONS]),
		       (unsigned long long)(st1[ST_REJ_TYPE] - st0[ST_REJ_TYPE]),
		       (unsigned long long)(st1[ST_REJ_EVENT] - st0[ST_REJ_EVENT]),
		       (unsigned long long)(st1[ST_REJ_LATENCY] - st0[ST_REJ_LATENCY]),
		       (unsigned long long)(st1[ST_RECORDS] - st0[ST_RECORDS]));
		EXPECT_LT(0ULL, e.records);
		EXPECT_EQ(e.records, w.records);
		EXPECT_EQ(st1[ST_RECORDS] - st0[ST_RECORDS], e.records);
		EXPECT_LT(0ULL, st1[f->st_rej] - st0[f->st_rej]);
		munmap(h, 65 * sysconf(_SC_PAGESIZE));
		close(fd);
	}
}

/* ---------------------------------------------------------------- interval */

TEST_F(sess, interval)
{
	unsigned int cpu = self->cpu, jit;
	__u64 mask = 1ULL << cpu;

	BEGIN();
	STREAM(cpu, "ops_per_us=50");
	for (jit = 0; jit < 2; jit++) {
		struct amupmu_spe_config c;
		__u64 st0[ST_NR], st1[ST_NR], ops, sel;
		double mean;
		int fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);

		ASSERT_LE(0, fd);
		cfg_init(&c, &mask, AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_KERNEL, 64);
		c.flags = jit ? AMUPMU_SPE_CFG_JITTER : 0;
		CONFIG(fd, &c);
		STATS(cpu, st0);
		CTL(fd, AMUPMU_SPE_CTL_ENABLE);
		busy_on(mask, 200);
		CTL(fd, AMUPMU_SPE_CTL_DISABLE);
		STATS(cpu, st1);
		ops = st1[ST_OPS_EL0] + st1[ST_OPS_KERNEL] - st0[ST_OPS_EL0] - st0[ST_OPS_KERNEL];
		sel = st1[ST_SELECTED] - st0[ST_SELECTED];
		ASSERT_LT(100ULL, sel) {
			TH_LOG("ops %llu selected %llu", (unsigned long long)ops,
			       (unsigned long long)sel);
		}
		mean = (double)ops / sel;
		TH_LOG("%s: ops %llu selected %llu: mean interval %.1f (lost_ns %llu)",
		       jit ? "jitter" : "no jitter", (unsigned long long)ops,
		       (unsigned long long)sel, mean,
		       (unsigned long long)(st1[ST_LOST_NS] - st0[ST_LOST_NS]));
		if (!jit) {
			/* every 1024th operation, +-1 selection at each end */
			EXPECT_LE(ops / 1024, sel + 1);
			EXPECT_GE(ops / 1024 + 1, sel);
		} else {
			/* [1024, 1279] each: mean 1151.5; above 1024 shows the spread */
			EXPECT_GE(mean, 1024.0 * 0.99);
			EXPECT_LE(mean, 1279.0 * 1.01);
			EXPECT_LT(1024.0 + 32, mean);
		}
		close(fd);
	}
}

/* ---------------------------------------------------------------- multi-access */

TEST_F(sess, multi_access)
{
	unsigned int cpu = self->cpu;
	__u64 mask = 1ULL << cpu, st0[ST_NR], st1[ST_NR], ml, ms;
	struct amupmu_spe_buf_header *h;
	struct amupmu_spe_config c;
	struct walk w;
	int fd;

	BEGIN();
	STREAM(cpu, "ops_per_us=50 atomic=200");
	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	cfg_init(&c, &mask, AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_KERNEL, 128);
	c.interval = 2048;
	CONFIG(fd, &c);
	MAP(h, fd, cpu, 128);
	STATS(cpu, st0);
	CTL(fd, AMUPMU_SPE_CTL_ENABLE);
	busy_on(mask, 200);
	CTL(fd, AMUPMU_SPE_CTL_DISABLE);
	STATS(cpu, st1);
	WALK(h, &w, NULL, NULL);
	ml = st1[ST_MULTI_LOAD] - st0[ST_MULTI_LOAD];
	ms = st1[ST_MULTI_STORE] - st0[ST_MULTI_STORE];
	TH_LOG("atomics: model multi_load %llu multi_store %llu; walked AT loads %llu stores %llu",
	       (unsigned long long)ml, (unsigned long long)ms,
	       (unsigned long long)w.atomic_ld, (unsigned long long)w.atomic_st);
	ASSERT_LT(0ULL, ml);
	ASSERT_LT(0ULL, ms);
	EXPECT_LE(ml, 2 * ms);
	EXPECT_LE(ms, 2 * ml);
	EXPECT_LT(0ULL, w.atomic_ld);
	EXPECT_LT(0ULL, w.atomic_st);
	EXPECT_EQ(ml, w.atomic_ld);
	EXPECT_EQ(ms, w.atomic_st);
	munmap(h, 129 * sysconf(_SC_PAGESIZE));
	close(fd);
}

TEST_HARNESS_MAIN
