// SPDX-License-Identifier: GPL-2.0
/*
 * Who may do what with amupmu (Documentation/admin-guide/amupmu-privileges.rst
 * has the same table):
 *
 *  - /dev/amupmu is a character device, root:root, mode 0666: anybody may
 *    open it and ask INFO (what the CPUs are; the same as sysfs shows);
 *  - configuring PMU counters (AMUPMU_PMU_CONFIG) needs CAP_PERFMON (or
 *    CAP_SYS_ADMIN): the counters are per CPU, system-wide, and count the
 *    kernel too. perf requires the same for CPU-wide events when
 *    kernel.perf_event_paranoid > 0; the sysctl is not exported to modules,
 *    so amupmu always behaves as perf does at paranoid >= 1, whatever the
 *    sysctl says (checked at paranoid -1 and 2 here);
 *  - the privilege is checked when the group is configured: a file with a
 *    group configured by a privileged process may be handed to (or
 *    inherited by) an unprivileged one, which may then read and control it,
 *    as with a perf event fd;
 *  - a session without a group has nothing to control or read (ENODEV);
 *  - reading the AMU counters (AMUPMU_AMU_READ, ABI 2.1) needs CAP_PERFMON
 *    too: they are per CPU, system-wide. The privilege is checked before
 *    the hardware: without CAP_PERFMON it is EACCES also where no CPU has a
 *    usable AMU (production builds on QEMU, amu=0), which is EOPNOTSUPP
 *    only for a caller with CAP_PERFMON (the PMU commands check the
 *    ownership first: ENXIO for everybody when arm_pmu owns the PMU and
 *    shared mode is off);
 *  - of sysfs and the module parameters only sample_period_min and
 *    pmu_shared are writable, by root (0644; amupmu_sysfs_test checks
 *    every file);
 *    debugfs is root-only (its mount point is mode 0700);
 *  - cpuN/pmu_counters_view shows every session's totals: mode 0400, and
 *    reading it needs CAP_PERFMON whatever the mode (root may chmod it);
 *  - a sample ring counts against the configuring process's
 *    RLIMIT_MEMLOCK unless it has CAP_IPC_LOCK (ENOMEM beyond).
 *
 * Each row runs in a child dropped to uid/gid 65534 without capabilities,
 * to root without CAP_PERFMON and CAP_SYS_ADMIN, or to uid 65534 with only
 * CAP_PERFMON. Backend: the CPU's PMU (QEMU TCG PMUv3 on the board), in
 * exclusive mode (amupmu devicetree) or shared mode (stock devicetree,
 * through perf core): the same table in both. With the kernel's arm_pmu
 * owning the PMU and shared mode off every PMU command is ENXIO for
 * everybody: matrix_shared_off turns pmu_shared off (and back on) on a
 * stock board to check that table too.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "amupmu_test.h"
#include "amupmu_priv.h"

#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define CAP_BIT(c)	(1ULL << (c))
#define ALL_CAPS	(CAP_BIT(CAP_LAST_CAP + 1) - 1)
#define COUNTERS_VIEW	AMUPMU_SYSFS "/cpu0/pmu_counters_view"

struct who {
	const char *name;
	uid_t uid;
	__u64 caps;
	bool perfmon;	/* may configure */
};

static const struct who whos[] = {
	{ "uid 65534, no capabilities", AMUPMU_NOBODY, 0, false },
	{ "root without CAP_PERFMON/CAP_SYS_ADMIN", 0,
	  ~(CAP_BIT(CAP_PERFMON) | CAP_BIT(CAP_SYS_ADMIN)) & ALL_CAPS, false },
	{ "uid 65534 with CAP_PERFMON", AMUPMU_NOBODY, CAP_BIT(CAP_PERFMON), true },
};

static int inherited_fd = -1;

static int open_dev(void)
{
	return open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
}

static int row_open(void *arg)
{
	int fd = open_dev();

	(void)arg;
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int row_info(void *arg)
{
	struct amupmu_info info;
	int fd = open_dev(), ret;

	(void)arg;
	if (fd < 0)
		return -errno;
	ret = amupmu_query(fd, &info, NULL, 0);
	close(fd);
	return ret;
}

/* CONFIG CPU_CYCLES on CPU 0 in a new session; sampling when @period. */
static int config_cpu0(__u32 flags, __u64 period)
{
	struct amupmu_pmu_event ev;
	struct amupmu_pmu_config cfg;
	__u64 cpus = 1;
	int fd = open_dev(), ret;

	if (fd < 0)
		return -errno;
	amupmu_pmu_event_set(&ev, PMUV3_EV_CPU_CYCLES, flags);
	ev.sample_period = period;
	amupmu_pmu_config_init(&cfg, &ev, 1, &cpus, sizeof(cpus));
	cfg.ring_pages = period ? 1 : 0;
	ret = amupmu_ioctl(fd, AMUPMU_PMU_CONFIG, &cfg);
	close(fd);
	return ret;
}

/* Counting, with the event flags at @arg. */
static int row_config(void *arg)
{
	return config_cpu0(*(const __u32 *)arg, 0);
}

/* Sampling at EL0 with a one-page ring. */
static int row_config_sampling(void *arg)
{
	(void)arg;
	return config_cpu0(AMUPMU_EV_USER_ONLY, 1000000);
}

/* AMUPMU_AMU_READ of CPU 0 in a new session. */
static int row_amu_read(void *arg)
{
	struct amupmu_amu_read rd;
	struct amupmu_amu_cpu e;
	int fd = open_dev(), ret;

	(void)arg;
	if (fd < 0)
		return -errno;
	ret = amupmu_amu_read_cpu(fd, 0, &e, &rd);
	close(fd);
	return ret;
}

/* AMUPMU_SPE_CONFIG of CPU 0, user space only, in a new session. */
static int row_spe_user(void *arg)
{
	__u64 mask = 1;
	struct amupmu_spe_config c = {
		.size = sizeof(c),
		.enables = AMUPMU_SPE_EN_USER,
		.interval = 1024,
		.buf_pages = 4,
		.cpus_len = sizeof(mask),
		.cpus_uptr = (__u64)(unsigned long)&mask,
	};
	int fd = open_dev(), ret;

	(void)arg;
	if (fd < 0)
		return -errno;
	ret = ioctl(fd, AMUPMU_SPE_CONFIG, &c) ? -errno : 0;
	close(fd);
	return ret;
}

static int row_ctl_no_group(void *arg)
{
	int fd = open_dev(), ret;

	(void)arg;
	if (fd < 0)
		return -errno;
	ret = amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_ENABLE);
	close(fd);
	return ret;
}

/* READ and CTL of the group the parent configured, on the inherited file. */
static int row_inherited(void *arg)
{
	struct amupmu_pmu_value v;
	struct amupmu_pmu_read rd;
	int ret;

	(void)arg;
	ret = amupmu_pmu_ctl(inherited_fd, AMUPMU_PMU_CTL_ENABLE);
	if (!ret)
		ret = amupmu_pmu_read(inherited_fd, 0, &v, 1, &rd);
	if (!ret)
		ret = amupmu_pmu_ctl(inherited_fd, AMUPMU_PMU_CTL_DISABLE);
	return ret;
}

/* Open the file at @arg for writing. */
static int row_write_open(void *arg)
{
	int fd = open(arg, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Open the file at @arg for reading and read it. */
static int row_read(void *arg)
{
	char buf[4096];
	int fd = open(arg, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (read(fd, buf, sizeof(buf)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int row_debugfs(void *arg)
{
	DIR *d = opendir("/sys/kernel/debug");

	(void)arg;
	if (!d)
		return -errno;
	closedir(d);
	return 0;
}

FIXTURE(priv) {
	int fd;
	struct amupmu_info info;
	bool exclusive;	/* amupmu owns the PMU: the counters view exists */
	bool sessions;	/* PMU sessions work: exclusive or shared mode */
	bool shared_off;	/* this test turned pmu_shared off: teardown turns it on */
	bool amu;	/* AMUPMU_FEAT_AMU: a usable AMU */
	int paranoid;
	mode_t view_mode;	/* COUNTERS_VIEW's mode to restore, 0 if untouched */
};

FIXTURE_SETUP(priv)
{
	char buf[32];

	self->fd = -1;
	if (geteuid() != 0)
		SKIP(return, "needs root to drop to the other users");
	AMUPMU_OPEN_DEVICE(self->fd);
	ASSERT_EQ(0, amupmu_query(self->fd, &self->info, NULL, 0));
	self->exclusive = self->info.pmu_owner == AMUPMU_PMU_OWNER_AMUPMU;
	self->sessions = amupmu_pmu_sessions_work(&self->info);
	self->amu = self->info.features & AMUPMU_FEAT_AMU;
	self->paranoid = 99;
	if (!amupmu_read_line(PARANOID, buf, sizeof(buf)))
		self->paranoid = atoi(buf);
	TH_LOG("backend: PMU in %s, %s; kernel.perf_event_paranoid %d",
	       amupmu_pmu_mode_name(&self->info),
	       self->amu ? (self->info.features & AMUPMU_FEAT_MOCK ? "mock AMU model" :
			    "hardware AMU") : "no usable AMU",
	       self->paranoid);
}

FIXTURE_TEARDOWN(priv)
{
	char buf[16];
	int fd;

	if (self->paranoid != 99) {
		fd = open(PARANOID, O_WRONLY);
		if (fd >= 0) {
			snprintf(buf, sizeof(buf), "%d", self->paranoid);
			if (write(fd, buf, strlen(buf)) < 0)
				TH_LOG("could not restore %s", PARANOID);
			close(fd);
		}
	}
	if (self->view_mode && chmod(COUNTERS_VIEW, self->view_mode))
		TH_LOG("could not restore the mode of %s", COUNTERS_VIEW);
	if (self->shared_off && amupmu_set_pmu_shared(true, NULL))
		TH_LOG("could not turn %s back on", AMUPMU_PMU_SHARED_PARAM);
	if (self->fd >= 0)
		close(self->fd);
}

static int rows_passed;

static void expect_row(struct __test_metadata *_metadata, const struct who *w,
		       const char *what, int (*fn)(void *), void *arg, int want)
{
	int got = amupmu_run_as(w->uid, w->uid, w->caps, fn, arg);

	EXPECT_EQ(want, got) {
		TH_LOG("%s: %s: expected %s, got %s", w->name, what,
		       want ? strerror(-want) : "allowed", got ? strerror(-got) : "allowed");
	}
	if (want == got) {
		rows_passed++;
		TH_LOG("%-42s %-40s %s", w->name, what, got ? strerror(-got) : "allowed");
	}
}

TEST_F(priv, device_node)
{
	struct stat st;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	ASSERT_EQ(0, stat(AMUPMU_DEV, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0666U, st.st_mode & 07777) {
		TH_LOG("%s mode %o: the documented mode is 0666", AMUPMU_DEV, st.st_mode & 07777);
	}
	EXPECT_EQ(0U, st.st_uid);
	EXPECT_EQ(0U, st.st_gid);
}

/*
 * The table, with PMU sessions working (@sessions: exclusive or shared
 * mode) or refused with ENXIO for everybody (shared mode off).
 */
static void run_matrix(struct __test_metadata *_metadata, FIXTURE_DATA(priv) *self,
		       bool sessions, const char *figure)
{
	static const __u32 all_els = 0, el0_only = AMUPMU_EV_USER_ONLY;
	int pmu_err = sessions ? -EACCES : -ENXIO;
	size_t i;

	rows_passed = 0;
	for (i = 0; i < ARRAY_SIZE(whos); i++) {
		const struct who *w = &whos[i];
		int cfg_err = w->perfmon ? (sessions ? 0 : -ENXIO) : pmu_err;

		expect_row(_metadata, w, "open /dev/amupmu", row_open, NULL, 0);
		expect_row(_metadata, w, "AMUPMU_INFO", row_info, NULL, 0);
		expect_row(_metadata, w, "PMU_CONFIG, EL0 and EL1", row_config,
			   (void *)&all_els, cfg_err);
		expect_row(_metadata, w, "PMU_CONFIG, EL0 only", row_config,
			   (void *)&el0_only, cfg_err);
		expect_row(_metadata, w, "PMU_CONFIG, sampling EL0", row_config_sampling, NULL,
			   cfg_err);
		expect_row(_metadata, w, "PMU_CTL without a group", row_ctl_no_group, NULL,
			   sessions ? -ENODEV : -ENXIO);
		expect_row(_metadata, w, "AMU_READ of cpu0", row_amu_read, NULL,
			   !w->perfmon ? -EACCES : self->amu ? 0 : -EOPNOTSUPP);
		/* 0444 root (absent without a usable AMU) */
		expect_row(_metadata, w, "write sysfs cpu0/amcr_el0", row_write_open,
			   AMUPMU_SYSFS "/cpu0/amcr_el0", self->amu ? -EACCES : -ENOENT);
		/*
		 * 0400 root: uid 65534 cannot open it even with CAP_PERFMON;
		 * root without CAP_PERFMON opens it (CAP_DAC_OVERRIDE) and is
		 * refused the read. Absent when the kernel owns the PMU
		 * (also in shared mode: perf core places the counters).
		 */
		expect_row(_metadata, w, "read cpu0/pmu_counters_view (0400)", row_read,
			   COUNTERS_VIEW, self->exclusive ? -EACCES : -ENOENT);
		expect_row(_metadata, w, "debugfs (mount point 0700)", row_debugfs, NULL,
			   w->uid ? -EACCES : 0);
		/* every file: amupmu_sysfs_test */
		expect_row(_metadata, w, "write sysfs abi_version", row_write_open,
			   AMUPMU_SYSFS "/abi_version", -EACCES);
		expect_row(_metadata, w, "write parameter pmu_counter_bits", row_write_open,
			   "/sys/module/amupmu/parameters/pmu_counter_bits", -EACCES);
		/* 0644 root:root: uid 0 writes it whatever its capabilities */
		expect_row(_metadata, w, "write parameter sample_period_min", row_write_open,
			   "/sys/module/amupmu/parameters/sample_period_min",
			   w->uid ? -EACCES : 0);
		expect_row(_metadata, w, "write parameter pmu_shared", row_write_open,
			   AMUPMU_PMU_SHARED_PARAM, w->uid ? -EACCES : 0);
	}
	printf("# AMUPMU-FIGURE %s rows=%d\n", figure, rows_passed);
	fflush(stdout);
}

TEST_F(priv, matrix)
{
	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	run_matrix(_metadata, self, self->sessions, "priv-matrix");
}

/*
 * Shared mode off (pmu_shared=N, a stock board): the PMU commands are
 * ENXIO for everybody, before the privilege; the rest of the table is
 * unchanged. pmu_shared is turned on again afterwards.
 */
TEST_F(priv, matrix_shared_off)
{
	struct amupmu_info info;
	int ret;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	if (self->info.pmu_owner != AMUPMU_PMU_OWNER_KERNEL)
		SKIP(return, "PMU in %s: pmu_shared applies where arm_pmu owns the PMU",
		     amupmu_pmu_mode_name(&self->info));
	ret = amupmu_set_pmu_shared(false, NULL);
	ASSERT_EQ(0, ret) {
		TH_LOG("writing N to %s: %s", AMUPMU_PMU_SHARED_PARAM, amupmu_errstr(ret));
	}
	self->shared_off = true;
	ASSERT_EQ(0, amupmu_query(self->fd, &info, NULL, 0));
	TH_LOG("pmu_shared=N: PMU in %s", amupmu_pmu_mode_name(&info));
	ASSERT_FALSE(amupmu_pmu_sessions_work(&info));
	run_matrix(_metadata, self, false, "priv-matrix-shared-off");
	ASSERT_EQ(0, amupmu_set_pmu_shared(true, NULL));
	self->shared_off = false;
	ASSERT_EQ(0, amupmu_query(self->fd, &info, NULL, 0));
	EXPECT_TRUE(amupmu_pmu_shared(&info));
}

/* The privilege is checked at CONFIG: an inherited configured file works. */
TEST_F(priv, inherited_group)
{
	struct amupmu_pmu_event ev;
	struct amupmu_pmu_config cfg;
	__u64 cpus = 1;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	if (!self->sessions)
		SKIP(return, "PMU in %s", amupmu_pmu_mode_name(&self->info));
	amupmu_pmu_event_set(&ev, PMUV3_EV_CPU_CYCLES, 0);
	amupmu_pmu_config_init(&cfg, &ev, 1, &cpus, sizeof(cpus));
	ASSERT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_PMU_CONFIG, &cfg));
	inherited_fd = self->fd;
	expect_row(_metadata, &whos[0], "CTL + READ of an inherited group", row_inherited,
		   NULL, 0);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE));
}

/* amupmu ignores kernel.perf_event_paranoid: CAP_PERFMON at every level. */
TEST_F(priv, paranoid_levels)
{
	static const char * const levels[] = { "-1", "0", "2" };
	static const __u32 el0_only = AMUPMU_EV_USER_ONLY;
	char what[64];
	size_t i;
	int fd;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	if (!self->sessions)
		SKIP(return, "PMU in %s", amupmu_pmu_mode_name(&self->info));
	if (self->paranoid == 99)
		SKIP(return, "no %s", PARANOID);
	for (i = 0; i < ARRAY_SIZE(levels); i++) {
		fd = open(PARANOID, O_WRONLY);
		ASSERT_LE(0, fd);
		ASSERT_EQ((ssize_t)strlen(levels[i]), write(fd, levels[i], strlen(levels[i])));
		close(fd);
		snprintf(what, sizeof(what), "PMU_CONFIG EL0 only, paranoid %s", levels[i]);
		expect_row(_metadata, &whos[0], what, row_config, (void *)&el0_only, -EACCES);
		/* the threat model's table: the AMU and SPE at every level too */
		snprintf(what, sizeof(what), "AMU_READ, paranoid %s", levels[i]);
		expect_row(_metadata, &whos[0], what, row_amu_read, NULL, -EACCES);
		snprintf(what, sizeof(what), "SPE_CONFIG EL0 only, paranoid %s", levels[i]);
		expect_row(_metadata, &whos[0], what, row_spe_user, NULL, -EACCES);
	}
}

/* ---------------------------------------------------------------- counters view */

/* pmu_counters_view shows every session's totals: 0400 root:root. */
TEST_F(priv, counters_view_mode)
{
	struct stat st;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	if (!self->exclusive)
		SKIP(return, "PMU in %s: no %s", amupmu_pmu_mode_name(&self->info),
		     COUNTERS_VIEW);
	ASSERT_EQ(0, stat(COUNTERS_VIEW, &st)) {
		TH_LOG("%s: %s", COUNTERS_VIEW, strerror(errno));
	}
	EXPECT_EQ(0400U, st.st_mode & 07777) {
		TH_LOG("%s mode %o: documented 0400", COUNTERS_VIEW, st.st_mode & 07777);
	}
	EXPECT_EQ(0U, st.st_uid);
	EXPECT_EQ(0U, st.st_gid);
	/* root with CAP_PERFMON reads it */
	EXPECT_EQ(0, row_read(COUNTERS_VIEW));
}

/*
 * The mode is not the only gate: with the file chmod'ed 0444 by root,
 * a reader without CAP_PERFMON is still refused (EACCES), one with it
 * reads.
 */
TEST_F(priv, counters_view_needs_perfmon)
{
	struct stat st;
	size_t i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	if (!self->exclusive)
		SKIP(return, "PMU in %s: no %s", amupmu_pmu_mode_name(&self->info),
		     COUNTERS_VIEW);
	ASSERT_EQ(0, stat(COUNTERS_VIEW, &st));
	self->view_mode = st.st_mode & 07777;
	ASSERT_EQ(0, chmod(COUNTERS_VIEW, 0444)) {
		TH_LOG("chmod 0444 %s: %s", COUNTERS_VIEW, strerror(errno));
	}
	ASSERT_EQ(0, stat(COUNTERS_VIEW, &st));
	ASSERT_EQ(0444U, st.st_mode & 07777);
	for (i = 0; i < ARRAY_SIZE(whos); i++)
		expect_row(_metadata, &whos[i], "read cpu0/pmu_counters_view chmod 0444",
			   row_read, COUNTERS_VIEW, whos[i].perfmon ? 0 : -EACCES);
}

/* ---------------------------------------------------------------- ring memory */

/* A sampling CONFIG of CPU_CYCLES:u on CPU 0 with a ring of @pages. */
static void config_ring_init(struct amupmu_pmu_config *cfg, __u32 pages)
{
	static struct amupmu_pmu_event ev;
	static __u64 cpus = 1;

	amupmu_pmu_event_set(&ev, PMUV3_EV_CPU_CYCLES, AMUPMU_EV_USER_ONLY);
	ev.sample_period = 1000000;
	amupmu_pmu_config_init(cfg, &ev, 1, &cpus, sizeof(cpus));
	cfg->ring_pages = pages;
}

static int config_ring(int fd, __u32 pages, struct amupmu_pmu_config *cfg)
{
	config_ring_init(cfg, pages);
	return amupmu_ioctl(fd, AMUPMU_PMU_CONFIG, cfg);
}

/* RLIMIT_MEMLOCK in the memlock rows: 12 pages (a ring of 8 and its header fit, 16 not). */
#define MEMLOCK_PAGES	12

#define MEMLOCK_FAIL(step, fmt, ...) do {					\
	fprintf(stderr, "#   memlock step %d: " fmt "\n", step, ##__VA_ARGS__);	\
	ret = 100 + (step);							\
	goto out;								\
} while (0)

/*
 * In the child (uid 0; CAP_IPC_LOCK dropped unless *@arg): RLIMIT_MEMLOCK
 * 12 pages, then rings of 256, 8 and 16 pages in two sessions. Without
 * CAP_IPC_LOCK: 256 is ENOMEM and changes nothing (the request unwritten,
 * no group, no counter taken), 8 fits, a second ring of 16 beside it does
 * not, and fits once the first session is closed; the same session
 * configures its ring again after RELEASE.
 * With CAP_IPC_LOCK every ring fits. Returns 0 or -(100 + failed step).
 */
static int row_memlock(void *arg)
{
	const bool ipc_lock = *(const bool *)arg;
	const long page = sysconf(_SC_PAGESIZE);
	struct rlimit rl = { MEMLOCK_PAGES * page, MEMLOCK_PAGES * page };
	struct amupmu_pmu_config cfg, before;
	__u32 free0 = 0, free1 = 0;
	int fa = -1, fb = -1, ret = 0, r;

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		MEMLOCK_FAIL(1, "setrlimit: %s", strerror(errno));
	fa = open_dev();
	fb = open_dev();
	if (fa < 0 || fb < 0)
		MEMLOCK_FAIL(2, "open: %s", strerror(errno));
	if (amupmu_counters_free(fa, &free0, 1))
		MEMLOCK_FAIL(3, "INFO failed");

	r = config_ring(fa, AMUPMU_RING_PAGES_MAX, &cfg);
	if (ipc_lock) {
		if (r)
			MEMLOCK_FAIL(4, "CAP_IPC_LOCK, ring of %u pages: %s",
				     AMUPMU_RING_PAGES_MAX, strerror(-r));
		r = config_ring(fb, AMUPMU_RING_PAGES_MAX, &cfg);
		if (r)
			MEMLOCK_FAIL(5, "CAP_IPC_LOCK, second ring of %u pages: %s",
				     AMUPMU_RING_PAGES_MAX, strerror(-r));
		goto out;
	}
	if (r != -ENOMEM)
		MEMLOCK_FAIL(6, "ring of %u pages over a %d-page RLIMIT_MEMLOCK: %s, expected ENOMEM",
			     AMUPMU_RING_PAGES_MAX, MEMLOCK_PAGES, r ? strerror(-r) : "success");
	/* refused: nothing written, nothing allocated */
	config_ring_init(&before, AMUPMU_RING_PAGES_MAX);
	if (memcmp(&before, &cfg, sizeof(cfg)))
		MEMLOCK_FAIL(7, "the refused CONFIG wrote its argument");
	r = amupmu_pmu_ctl(fa, AMUPMU_PMU_CTL_RESET);
	if (r != -ENODEV)
		MEMLOCK_FAIL(8, "CTL after the refused CONFIG: %s, expected ENODEV (no group)",
			     r ? strerror(-r) : "success");
	if (amupmu_counters_free(fa, &free1, 1) || free0 != free1)
		MEMLOCK_FAIL(9, "pmu_counters_free of CPU 0 0x%x -> 0x%x", free0, free1);

	r = config_ring(fa, 8, &cfg);
	if (r)
		MEMLOCK_FAIL(10, "ring of 8 pages in a %d-page limit: %s", MEMLOCK_PAGES,
			     strerror(-r));
	r = config_ring(fb, 16, &cfg);
	if (r != -ENOMEM)
		MEMLOCK_FAIL(11, "a second ring of 16 pages beside 8: %s, expected ENOMEM",
			     r ? strerror(-r) : "success");
	/* closing the first session gives its pages back */
	close(fa);
	fa = -1;
	r = config_ring(fb, 8, &cfg);
	if (r)
		MEMLOCK_FAIL(12, "ring of 8 pages after the first session closed: %s",
			     strerror(-r));
	/*
	 * RELEASE and CONFIG again on the same session: its ring (kept for
	 * the session, or freed and charged anew) fits; a second session's
	 * does not beside it, and does once the first is closed.
	 */
	if (amupmu_pmu_ctl(fb, AMUPMU_PMU_CTL_RELEASE))
		MEMLOCK_FAIL(13, "RELEASE failed");
	r = config_ring(fb, 8, &cfg);
	if (r)
		MEMLOCK_FAIL(14, "ring of 8 pages again after RELEASE: %s", strerror(-r));
	fa = open_dev();
	if (fa < 0)
		MEMLOCK_FAIL(15, "open: %s", strerror(errno));
	r = config_ring(fa, 8, &cfg);
	if (r != -ENOMEM)
		MEMLOCK_FAIL(16, "two rings of 8 pages in a %d-page limit: %s, expected ENOMEM",
			     MEMLOCK_PAGES, r ? strerror(-r) : "success");
	close(fb);
	fb = -1;
	r = config_ring(fa, 8, &cfg);
	if (r)
		MEMLOCK_FAIL(17, "ring of 8 pages after the other session closed: %s",
			     strerror(-r));
out:
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return ret ? -ret : 0;
}

/*
 * Sample rings count against RLIMIT_MEMLOCK without CAP_IPC_LOCK (root
 * keeping CAP_PERFMON and CAP_SYS_ADMIN), and not with it.
 */
TEST_F(priv, ring_memlock_limit)
{
	static const bool no_ipc_lock = false, ipc_lock = true;
	const struct who limited = {
		"root without CAP_IPC_LOCK", 0, ALL_CAPS & ~CAP_BIT(CAP_IPC_LOCK), true
	};
	const struct who unlimited = { "root with CAP_IPC_LOCK", 0, ALL_CAPS, true };
	__u32 free0 = 0, free1 = 0;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	if (!self->sessions)
		SKIP(return, "PMU in %s", amupmu_pmu_mode_name(&self->info));
	ASSERT_EQ(0, amupmu_counters_free(self->fd, &free0, 1));
	expect_row(_metadata, &limited, "rings of 256, 8, 16 pages, RLIMIT_MEMLOCK 12 pages",
		   row_memlock, (void *)&no_ipc_lock, 0);
	expect_row(_metadata, &unlimited, "two rings of 256 pages, RLIMIT_MEMLOCK 12 pages",
		   row_memlock, (void *)&ipc_lock, 0);
	/* the children's sessions are gone with them */
	ASSERT_EQ(0, amupmu_counters_free(self->fd, &free1, 1));
	EXPECT_EQ(free0, free1);
}

TEST_HARNESS_MAIN
