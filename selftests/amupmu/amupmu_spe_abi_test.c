// SPDX-License-Identifier: GPL-2.0
/*
 * What AMUPMU_SPE_CONFIG / CTL / READ and the buffer mmap() refuse (mock
 * builds, amupmu_spe_fixture.h): abi (every bad field EINVAL and nothing
 * configured, the EFT checks with spe_model, ENODEV / EBUSY, READ and
 * mmap checks, DEFAULTS takes the arm_spe knobs), privilege (every
 * configuration is CPU-wide: CAP_PERFMON, the columns of
 * Documentation/admin-guide/amupmu-privileges.rst), privilege_no_spe (the
 * privilege is checked first on production builds too), kpti (every
 * configuration EOPNOTSUPP under KPTI; skips without it).
 */
#define _GNU_SOURCE
#include "amupmu_spe_fixture.h"
#include "amupmu_priv.h"

/* ---------------------------------------------------------------- CONFIG, CTL, READ, mmap */

struct bad {
	const char *what;
	int want;
	void (*mod)(struct amupmu_spe_config *c);
};

static void b_flags(struct amupmu_spe_config *c) { c->flags = 1U << 2; }
static void b_resv(struct amupmu_spe_config *c) { c->__reserved = 1; }
static void b_en0(struct amupmu_spe_config *c) { c->enables = 0; }
static void b_en_unknown(struct amupmu_spe_config *c) { c->enables |= 1U << 2; }
static void b_en_ts_only(struct amupmu_spe_config *c) { c->enables = AMUPMU_SPE_EN_TS; }
static void b_pct_nots(struct amupmu_spe_config *c) { c->pct = AMUPMU_SPE_PCT_PHYSICAL; }
static void b_pct2(struct amupmu_spe_config *c) { c->enables |= AMUPMU_SPE_EN_TS; c->pct = 2; }
static void b_int255(struct amupmu_spe_config *c) { c->interval = 255; }
static void b_int257(struct amupmu_spe_config *c) { c->interval = 257; }
static void b_int1000(struct amupmu_spe_config *c) { c->interval = 1000; }
static void b_pages0(struct amupmu_spe_config *c) { c->buf_pages = 0; }
static void b_pages1(struct amupmu_spe_config *c) { c->buf_pages = 1; }
static void b_pages3(struct amupmu_spe_config *c) { c->buf_pages = 3; }
static void b_pages2048(struct amupmu_spe_config *c) { c->buf_pages = 2048; }
static void b_wm(struct amupmu_spe_config *c) { c->watermark = 2 * 4096 * 16 + 1; }
static void b_def_fcr(struct amupmu_spe_config *c)
{ c->flags = AMUPMU_SPE_CFG_DEFAULTS; c->interval = 0; c->pmsfcr = AMUPMU_SPE_PMSFCR_FL; }
static void b_def_int(struct amupmu_spe_config *c) { c->flags = AMUPMU_SPE_CFG_DEFAULTS; }
static void b_fl0(struct amupmu_spe_config *c) { c->pmsfcr = AMUPMU_SPE_PMSFCR_FL; }
static void b_fcr_resv(struct amupmu_spe_config *c) { c->pmsfcr = 1ULL << 8; }
static void b_size(struct amupmu_spe_config *c) { c->size = 8; }
static void b_cpus_len(struct amupmu_spe_config *c) { c->cpus_len = 7; }
static void b_cpus_empty(struct amupmu_spe_config *c) { static __u64 z; c->cpus_uptr = (uintptr_t)&z; }

static const struct bad bads[] = {
	{ "flags unknown bit", -EINVAL, b_flags },
	{ "__reserved", -EINVAL, b_resv },
	{ "enables 0", -EINVAL, b_en0 },
	{ "enables unknown bit 2", -EINVAL, b_en_unknown },
	{ "enables TS only", -EINVAL, b_en_ts_only },
	{ "pct without TS", -EINVAL, b_pct_nots },
	{ "pct 2", -EINVAL, b_pct2 },
	{ "interval 255", -EINVAL, b_int255 },
	{ "interval 257", -EINVAL, b_int257 },
	{ "interval 1000", -EINVAL, b_int1000 },
	{ "buf_pages 0", -EINVAL, b_pages0 },
	{ "buf_pages 1", -EINVAL, b_pages1 },
	{ "buf_pages 3", -EINVAL, b_pages3 },
	{ "buf_pages 2048", -EINVAL, b_pages2048 },
	{ "watermark beyond the buffer", -EINVAL, b_wm },
	{ "DEFAULTS with pmsfcr", -EINVAL, b_def_fcr },
	{ "DEFAULTS with interval", -EINVAL, b_def_int },
	{ "FL with min_latency 0", -EINVAL, b_fl0 },
	{ "pmsfcr reserved bit 8", -EINVAL, b_fcr_resv },
	{ "size 8", -EINVAL, b_size },
	{ "cpus_len 7", -EINVAL, b_cpus_len },
	{ "empty CPU set", -EINVAL, b_cpus_empty },
};

static bool check_ldst(const struct rec *r, const void *arg, char *why, size_t size)
{
	(void)arg;
	if (r->op_class != OP_LDST) {
		snprintf(why, size, "class %u with knobs FT LD|ST", r->op_class);
		return false;
	}
	return true;
}

TEST_F(sess, abi)
{
	unsigned int cpu = self->cpu, i;
	__u64 mask = 1ULL << cpu, big;
	struct amupmu_spe_config c, base;
	struct amupmu_spe_cpu e[MAX_CPUS];
	struct amupmu_spe_read rd;
	struct amupmu_spe_buf_header *h;
	struct walk w;
	void *m;
	int fd2, r;

	BEGIN();
	cfg_init(&base, &mask, AMUPMU_SPE_EN_USER, 16);
	for (i = 0; i < ARRAY_SIZE(bads); i++) {
		c = base;
		bads[i].mod(&c);
		r = spe_config(self->fd, &c);
		EXPECT_EQ(bads[i].want, r) {
			TH_LOG("%s: %s, want %s", bads[i].what, amupmu_errstr(r),
			       amupmu_errstr(bads[i].want));
		}
		/* nothing changed: no configuration (CTL ENODEV), the CPU free */
		r = spe_ctl(self->fd, AMUPMU_SPE_CTL_ENABLE);
		EXPECT_EQ(-ENODEV, r) {
			TH_LOG("after %s: CTL %s", bads[i].what, amupmu_errstr(r));
		}
		if (r == 0) {
			spe_ctl(self->fd, AMUPMU_SPE_CTL_RELEASE);
		}
	}
	/* FT with no type: EINVAL without EFT, fine with it */
	self->model_touched = true;
	r = write_fmt(SPE_MODEL, "%u pmsidr=0x%llx\n", cpu,
		      (unsigned long long)(self->cpus[cpu].pmsidr & ((1ULL << 26) - 1)));
	ASSERT_EQ(0, r) {
		TH_LOG("spe_model without EFT: %s", amupmu_errstr(r));
	}
	c = base;
	c.pmsfcr = AMUPMU_SPE_PMSFCR_FT;
	r = spe_config(self->fd, &c);
	EXPECT_EQ(-EINVAL, r) {
		TH_LOG("FT with no type, no EFT: %s", amupmu_errstr(r));
	}
	c = base;
	c.pmsfcr = AMUPMU_SPE_PMSFCR_FT | AMUPMU_SPE_PMSFCR_FP;
	r = spe_config(self->fd, &c);
	EXPECT_EQ(-EOPNOTSUPP, r) {
		TH_LOG("FT FP, no EFT: %s", amupmu_errstr(r));
	}
	r = write_fmt(SPE_MODEL, "%u reset\n", cpu);
	ASSERT_EQ(0, r);
	self->model_touched = false;
	c = base;
	c.pmsfcr = AMUPMU_SPE_PMSFCR_FT;
	r = spe_config(self->fd, &c);
	EXPECT_EQ(0, r) {
		TH_LOG("FT with no type, EFT: %s", amupmu_errstr(r));
	}
	if (!r)
		spe_ctl(self->fd, AMUPMU_SPE_CTL_RELEASE);

	/* a CPU not possible: ENODEV */
	big = 1ULL << 63;
	c = base;
	c.cpus_uptr = (uintptr_t)&big;
	r = spe_config(self->fd, &c);
	EXPECT_EQ(self->nr_cpu_ids <= 63 ? -ENODEV : 0, r) {
		TH_LOG("CPU 63: %s", amupmu_errstr(r));
	}
	/* CTL without config */
	EXPECT_EQ(-ENODEV, spe_ctl(self->fd, AMUPMU_SPE_CTL_DISABLE));
	EXPECT_EQ(-ENODEV, spe_ctl(self->fd, AMUPMU_SPE_CTL_RELEASE));
	EXPECT_EQ(-ENODEV, spe_read(self->fd, e, MAX_CPUS));

	/* second CONFIG on the same fd, another fd on the same CPU: EBUSY */
	c = base;
	CONFIG(self->fd, &c);
	c = base;
	EXPECT_EQ(-EBUSY, spe_config(self->fd, &c));
	fd2 = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	c = base;
	EXPECT_EQ(-EBUSY, spe_config(fd2, &c));

	/* READ: nr_cpus too small, entry_size bad */
	memset(&rd, 0, sizeof(rd));
	rd.size = sizeof(rd);
	rd.nr_cpus = 0;
	rd.entry_size = sizeof(e[0]);
	rd.cpus_uptr = (uintptr_t)e;
	EXPECT_EQ(-EINVAL, amupmu_ioctl(self->fd, AMUPMU_SPE_READ, &rd));
	rd.nr_cpus = MAX_CPUS;
	rd.entry_size = 68;
	EXPECT_EQ(-EINVAL, amupmu_ioctl(self->fd, AMUPMU_SPE_READ, &rd));
	rd.entry_size = 64;
	EXPECT_EQ(-EINVAL, amupmu_ioctl(self->fd, AMUPMU_SPE_READ, &rd));
	rd.entry_size = 8192;
	EXPECT_EQ(-EINVAL, amupmu_ioctl(self->fd, AMUPMU_SPE_READ, &rd));
	EXPECT_EQ(1, spe_read(self->fd, e, MAX_CPUS));

	/* mmap: a CPU not in the set, a wrong length, PROT_EXEC */
	m = spe_map(self->fd, cpu ? 0 : 1, 16, PROT_READ);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, 4 * sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, self->fd,
		 AMUPMU_SPE_MMAP_OFFSET(cpu));
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = spe_map(self->fd, cpu, 16, PROT_READ | PROT_EXEC);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	CTL(self->fd, AMUPMU_SPE_CTL_RELEASE);
	close(fd2);

	/* DEFAULTS takes the arm_spe knobs: FT with LD|ST */
	self->knobs_touched = true;
	r = amupmu_write_str(ARM_SPE "/pmsfcr_type", "0x6\n");
	ASSERT_EQ(0, r) {
		TH_LOG("pmsfcr_type: %s", amupmu_errstr(r));
	}
	r = amupmu_write_str(ARM_SPE "/pmsfcr_ft", "1\n");
	ASSERT_EQ(0, r) {
		TH_LOG("pmsfcr_ft: %s", amupmu_errstr(r));
	}
	STREAM(cpu, "ops_per_us=50");
	c = base;
	c.flags = AMUPMU_SPE_CFG_DEFAULTS;
	c.interval = 0;
	c.enables |= AMUPMU_SPE_EN_KERNEL;
	CONFIG(self->fd, &c);
	MAP(h, self->fd, cpu, 16);
	CTL(self->fd, AMUPMU_SPE_CTL_ENABLE);
	busy_on(mask, 30);
	CTL(self->fd, AMUPMU_SPE_CTL_DISABLE);
	WALK(h, &w, check_ldst, NULL);
	TH_LOG("DEFAULTS FT LD|ST: %llu records (ld %llu st %llu)",
	       (unsigned long long)w.records, (unsigned long long)w.loads,
	       (unsigned long long)w.stores);
	EXPECT_LT(0ULL, w.records);
	munmap(h, 17 * sysconf(_SC_PAGESIZE));
	CTL(self->fd, AMUPMU_SPE_CTL_RELEASE);
	amupmu_write_str(ARM_SPE "/pmsfcr_ft", "0\n");
	amupmu_write_str(ARM_SPE "/pmsfcr_type", "0\n");
	self->knobs_touched = false;
}

/* ---------------------------------------------------------------- privilege */

struct priv_arg {
	int fd;
	__u64 mask;
	__u32 enables, pct;
};

static int priv_config(void *p)
{
	struct priv_arg *a = p;
	struct amupmu_spe_config c;
	int r;

	cfg_init(&c, &a->mask, a->enables, 4);
	c.pct = a->pct;
	r = spe_config(a->fd, &c);
	if (!r)
		r = spe_ctl(a->fd, AMUPMU_SPE_CTL_RELEASE);
	return r;
}

TEST_F(sess, privilege)
{
	/*
	 * Every SPE configuration is CPU-wide (it samples every task's EL0 on
	 * its CPUs: other users' PCs, data addresses, latencies): CAP_PERFMON
	 * (or CAP_SYS_ADMIN) whatever the enables, as perf's CPU-wide events.
	 * The first two rows were allowed to uid 65534 before (issue 24).
	 */
	static const struct { const char *what; __u32 en, pct; } cases[] = {
		{ "user", AMUPMU_SPE_EN_USER, 0 },
		{ "user TS virtual", AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_TS, 0 },
		{ "kernel", AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_KERNEL, 0 },
		{ "CX", AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_CX, 0 },
		{ "PA", AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_PA, 0 },
		{ "pct physical", AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_TS, AMUPMU_SPE_PCT_PHYSICAL },
	};
	/* the columns of Documentation/admin-guide/amupmu-privileges.rst */
	static const struct { const char *who; uid_t uid; __u64 caps; int want; } cols[] = {
		{ "uid 65534 no caps", AMUPMU_NOBODY, 0, -EACCES },
		{ "root w/o CAP_PERFMON, CAP_SYS_ADMIN", 0,
		  ~((1ULL << CAP_PERFMON) | (1ULL << CAP_SYS_ADMIN)) & ((1ULL << 41) - 1), -EACCES },
		{ "uid 65534 + CAP_PERFMON", AMUPMU_NOBODY, 1ULL << CAP_PERFMON, 0 },
	};
	struct priv_arg a = { .mask = 1ULL << self->cpu };
	unsigned int i, j;
	int r;

	BEGIN();
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		a.enables = cases[i].en;
		a.pct = cases[i].pct;
		for (j = 0; j < ARRAY_SIZE(cols); j++) {
			a.fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
			ASSERT_LE(0, a.fd);
			r = amupmu_run_as(cols[j].uid, cols[j].uid ? AMUPMU_NOBODY : 0, cols[j].caps,
					  priv_config, &a);
			TH_LOG("%s, %s: %s", cols[j].who, cases[i].what, amupmu_errstr(r));
			EXPECT_EQ(cols[j].want, r);
			/* root, the same fd: allowed */
			r = priv_config(&a);
			EXPECT_EQ(0, r) {
				TH_LOG("root, %s: %s", cases[i].what, amupmu_errstr(r));
			}
			close(a.fd);
		}
	}
}

/*
 * The privilege row without SPE (production builds on QEMU): the privilege
 * is checked first, so uid 65534 gets EACCES, not what the hardware lacks;
 * with CAP_PERFMON, EOPNOTSUPP. Skips where SPE is present (privilege).
 */
TEST_F(sess, privilege_no_spe)
{
	struct priv_arg a = { .mask = 1, .enables = AMUPMU_SPE_EN_USER };
	int r;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	if (!spe_only(_metadata->name))
		SKIP(return, "AMUPMU_SPE_ONLY=%s", getenv("AMUPMU_SPE_ONLY"));
	TH_LOG("backend: %s", self->backend);
	if (self->spe)
		SKIP(return, "SPE present: the privilege test covers it");
	a.fd = self->fd;
	r = amupmu_run_as(AMUPMU_NOBODY, AMUPMU_NOBODY, 0, priv_config, &a);
	TH_LOG("uid 65534 no caps, no SPE: %s", amupmu_errstr(r));
	EXPECT_EQ(-EACCES, r);
	r = amupmu_run_as(AMUPMU_NOBODY, AMUPMU_NOBODY, 1ULL << CAP_PERFMON, priv_config, &a);
	TH_LOG("uid 65534 + CAP_PERFMON, no SPE: %s", amupmu_errstr(r));
	EXPECT_EQ(-EOPNOTSUPP, r);
}

/* ---------------------------------------------------------------- KPTI (issue 24) */

/*
 * Issue 24, defect 7: under KPTI the kernel is unmapped at EL0 and the
 * buffer (a kernel address) faults for samples taken there and on the
 * way in and out of the kernel: every configuration is refused
 * (EOPNOTSUPP), kernel-only ones too (only user sampling was). Boards
 * without KPTI (QEMU's CPUs are not affected by Meltdown) skip: boot one
 * with kpti=1 (BOARD_APPEND) to run it. The ISB after the drain's
 * PSB CSYNC and DSB NSH (also defect 7) has no effect on the mock model,
 * whose registers are plain memory: no test can show it here.
 */
TEST_F(sess, kpti)
{
	static const __u32 en[] = { AMUPMU_SPE_EN_USER, AMUPMU_SPE_EN_KERNEL,
				    AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_KERNEL };
	__u64 mask = 1ULL << self->cpu;
	struct amupmu_spe_config c;
	char buf[128] = "", cmdline[1024] = "";
	unsigned int i;
	int r;

	BEGIN();
	/*
	 * KPTI: "Mitigation: PTI" on a CPU Meltdown affects; forced with kpti=1
	 * (or on) on the command line, where the meltdown file of an
	 * unaffected CPU still says "Not affected"
	 */
	amupmu_read_file("/sys/devices/system/cpu/vulnerabilities/meltdown", buf, sizeof(buf) - 1);
	amupmu_read_file("/proc/cmdline", cmdline, sizeof(cmdline) - 1);
	TH_LOG("meltdown: %s", buf);
	if (!strstr(buf, "PTI") && !strstr(cmdline, "kpti=1") && !strstr(cmdline, "kpti=on"))
		SKIP(return, "KPTI off (boot with kpti=1 to run this)");
	for (i = 0; i < ARRAY_SIZE(en); i++) {
		cfg_init(&c, &mask, en[i], 4);
		r = spe_config(self->fd, &c);
		TH_LOG("enables 0x%x under KPTI: %s", en[i], amupmu_errstr(r));
		EXPECT_EQ(-EOPNOTSUPP, r);
		if (!r)
			spe_ctl(self->fd, AMUPMU_SPE_CTL_RELEASE);
	}
}

TEST_HARNESS_MAIN
