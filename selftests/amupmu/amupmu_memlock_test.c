// SPDX-License-Identifier: GPL-2.0
/*
 * Locked memory (review of issue 24, M1): the SPE buffers and the PMU
 * sample ring are charged to the configuring user's locked memory
 * (user_struct.locked_vm against RLIMIT_MEMLOCK; CAP_IPC_LOCK lifts the
 * limit) as long as the memory lives: until the last mapping is gone, not
 * only until RELEASE. The mappings are not inherited across fork()
 * (VM_DONTCOPY, as perf's).
 *
 * Every test runs in a child as uid 65534 with CAP_PERFMON alone (no
 * CAP_IPC_LOCK) under a small RLIMIT_MEMLOCK.
 *
 *  - spe_release_keeps_charge (mock builds with SPE): CONFIG, mmap,
 *    RELEASE in a loop: ENOMEM once the mapped buffers fill the limit
 *    (before the fix RELEASE gave the charge back while the mapping kept
 *    the buffer pinned: the loop never failed); munmap gives it back and
 *    CONFIG works again; a fork()ed child has no copy of the mapping.
 *  - pmu_ring_per_user (PMU sessions: exclusive or shared mode): a ring
 *    held by one process counts against another process of the same user
 *    (before: per mm, each process had a limit of its own); a ring whose
 *    fd is closed counts while it is mapped, and not after munmap.
 * Backends: the mock build's SPE model for the first (no SPE: the test
 * skips), the PMU mode INFO reports for the second.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "amupmu_test.h"
#include "amupmu_priv.h"

#define SPE_PAGES	4	/* data pages of each SPE buffer: 5 pages charged */
#define SPE_LIMIT	24	/* RLIMIT_MEMLOCK pages: 4 buffers fit, the 5th not */
#define SPE_ROUNDS	12
#define RING_PAGES	8	/* 9 pages charged */
#define RING_LIMIT	12	/* one ring fits, two not */

FIXTURE(memlock) {
	int fd;
	struct amupmu_info info;
	struct amupmu_cpu_info cpus[2];
	bool spe, mock, sessions;
	unsigned int cpu;
	char backend[384];
};

FIXTURE_SETUP(memlock)
{
	char board[192];
	int ret;

	self->fd = -1;
	AMUPMU_OPEN_DEVICE(self->fd);
	ret = amupmu_query(self->fd, &self->info, self->cpus, 2);
	ASSERT_EQ(0, ret) {
		TH_LOG("AMUPMU_INFO: %s", amupmu_errstr(ret));
	}
	self->spe = self->info.features & AMUPMU_FEAT_SPE;
	self->mock = self->info.features & AMUPMU_FEAT_MOCK;
	self->sessions = amupmu_pmu_sessions_work(&self->info);
	self->cpu = amupmu_cpu_online(1) == 1 ? 1 : 0;
	amupmu_board_line(board, sizeof(board));
	snprintf(self->backend, sizeof(self->backend),
		 "%s; PMU %s; features 0x%llx; board \"%s\"",
		 self->spe && self->mock ? "mock SPE model (test build)" :
		 self->spe ? "hardware SPE" : "no SPE",
		 amupmu_pmu_mode_name(&self->info), (unsigned long long)self->info.features,
		 board[0] ? board : "unknown");
}

FIXTURE_TEARDOWN(memlock)
{
	if (self->fd >= 0)
		close(self->fd);
}

static int set_memlock(unsigned int pages)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct rlimit rl = { pages * pg, pages * pg };

	return setrlimit(RLIMIT_MEMLOCK, &rl) ? -errno : 0;
}

#define STEP_FAIL(step, fmt, ...) do {						\
	fprintf(stderr, "#   step %d: " fmt "\n", step, ##__VA_ARGS__);		\
	ret = 100 + (step);							\
	goto out;								\
} while (0)

/* ---------------------------------------------------------------- SPE */

static int spe_config(int fd, unsigned int cpu)
{
	static __u64 mask;
	struct amupmu_spe_config c = {
		.size = sizeof(c),
		.enables = AMUPMU_SPE_EN_USER,
		.interval = 1024,
		.buf_pages = SPE_PAGES,
		.cpus_len = sizeof(mask),
		.cpus_uptr = (uintptr_t)&mask,
	};

	mask = 1ULL << cpu;
	return amupmu_ioctl(fd, AMUPMU_SPE_CONFIG, &c);
}

static int spe_ctl(int fd, __u32 op)
{
	struct amupmu_spe_ctl ctl = { .size = sizeof(ctl), .op = op };

	return amupmu_ioctl(fd, AMUPMU_SPE_CTL, &ctl);
}

/*
 * In the child (uid 65534, CAP_PERFMON): returns 0 or -(100 + step); the
 * rounds that fitted are logged.
 */
static int spe_rounds(void *arg)
{
	const unsigned int cpu = *(const unsigned int *)arg;
	const size_t len = (SPE_PAGES + 1) * sysconf(_SC_PAGESIZE);
	void *maps[SPE_ROUNDS] = { NULL };
	unsigned int i, n = 0;
	int fd, r, ret = 0, status;
	pid_t pid;

	if (set_memlock(SPE_LIMIT))
		return -1;
	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -2;
	for (i = 0; i < SPE_ROUNDS; i++) {
		r = spe_config(fd, cpu);
		if (r == -ENOMEM)
			break;
		if (r)
			STEP_FAIL(1, "round %u: SPE_CONFIG: %s", i, strerror(-r));
		maps[n] = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, AMUPMU_SPE_MMAP_OFFSET(cpu));
		if (maps[n] == MAP_FAILED) {
			maps[n] = NULL;
			STEP_FAIL(2, "round %u: mmap: %s", i, strerror(errno));
		}
		n++;
		r = spe_ctl(fd, AMUPMU_SPE_CTL_RELEASE);
		if (r)
			STEP_FAIL(3, "round %u: RELEASE: %s", i, strerror(-r));
	}
	fprintf(stderr, "#   %u CONFIG/mmap/RELEASE rounds of %u pages fitted in %u pages\n",
		n, SPE_PAGES + 1, SPE_LIMIT);
	if (i == SPE_ROUNDS)
		STEP_FAIL(4, "%u rounds without ENOMEM: RELEASE gave back what the mappings pin",
			  SPE_ROUNDS);
	if (n == 0)
		STEP_FAIL(5, "the first CONFIG was refused (uid 65534 charged elsewhere?)");
	if (n > SPE_LIMIT / (SPE_PAGES + 1))
		STEP_FAIL(6, "%u buffers of %u pages fitted in %u pages", n, SPE_PAGES + 1,
			  SPE_LIMIT);

	/* VM_DONTCOPY: a child has no copy of the mapping */
	pid = fork();
	if (pid == 0)
		_exit(msync(maps[0], len, MS_ASYNC) == -1 && errno == ENOMEM ? 0 : 1);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		STEP_FAIL(7, "a fork()ed child inherited the mapping of an SPE buffer");

	/* the last mapping of a buffer gives its charge back */
	for (i = 0; i < n; i++) {
		munmap(maps[i], len);
		maps[i] = NULL;
	}
	r = spe_config(fd, cpu);
	if (r)
		STEP_FAIL(8, "SPE_CONFIG after munmap of every buffer: %s", strerror(-r));
	r = spe_ctl(fd, AMUPMU_SPE_CTL_RELEASE);
	if (r)
		STEP_FAIL(9, "RELEASE: %s", strerror(-r));
	/* and RELEASE without a mapping at once */
	for (i = 0; i < SPE_ROUNDS; i++) {
		r = spe_config(fd, cpu) ?: spe_ctl(fd, AMUPMU_SPE_CTL_RELEASE);
		if (r)
			STEP_FAIL(10, "round %u without mappings: %s", i, strerror(-r));
	}
out:
	for (i = 0; i < SPE_ROUNDS; i++)
		if (maps[i])
			munmap(maps[i], len);
	close(fd);
	return ret ? -ret : 0;
}

TEST_F(memlock, spe_release_keeps_charge)
{
	int r;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	TH_LOG("backend: %s", self->backend);
	if (!self->spe || !self->mock)
		SKIP(return, "needs the mock SPE model (mock build)");
	r = amupmu_run_as(AMUPMU_NOBODY, AMUPMU_NOBODY, 1ULL << CAP_PERFMON, spe_rounds,
			  &self->cpu);
	EXPECT_EQ(0, r) {
		TH_LOG("uid 65534 + CAP_PERFMON, RLIMIT_MEMLOCK %u pages, cpu%u: %d (%s)",
		       SPE_LIMIT, self->cpu, r, r > -100 ? amupmu_errstr(r) : "step above");
	}
}

/* ---------------------------------------------------------------- PMU ring */

static int ring_config(int fd)
{
	static struct amupmu_pmu_event ev;
	static __u64 cpus = 1;
	struct amupmu_pmu_config cfg;

	amupmu_pmu_event_set(&ev, PMUV3_EV_CPU_CYCLES, AMUPMU_EV_USER_ONLY);
	ev.sample_period = 1000000;
	amupmu_pmu_config_init(&cfg, &ev, 1, &cpus, sizeof(cpus));
	cfg.ring_pages = RING_PAGES;
	return amupmu_ioctl(fd, AMUPMU_PMU_CONFIG, &cfg);
}

static int ring_rows(void *arg)
{
	const size_t len = (RING_PAGES + 1) * sysconf(_SC_PAGESIZE);
	int fd = -1, fd2 = -1, r, ret = 0, status, go[2] = { -1, -1 }, done[2] = { -1, -1 };
	void *m = NULL;
	char c = 0;
	pid_t pid;

	(void)arg;
	if (set_memlock(RING_LIMIT))
		return -1;
	if (pipe(go) || pipe(done))
		return -2;
	/* a second process of the same user, forked before any charge */
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		close(done[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		fd2 = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
		r = fd2 < 0 ? -errno : ring_config(fd2);
		if (write(done[1], &c, 1) != 1)
			_exit(3);
		_exit(r == -ENOMEM ? 0 : r ? 4 : 1);
	}
	close(go[0]);
	close(done[1]);
	if (pid < 0)
		STEP_FAIL(1, "fork: %s", strerror(errno));
	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		STEP_FAIL(2, "open: %s", strerror(errno));
	r = ring_config(fd);
	if (r)
		STEP_FAIL(3, "ring of %u pages in %u: %s", RING_PAGES + 1, RING_LIMIT,
			  strerror(-r));
	if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
		STEP_FAIL(4, "pipe");
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		STEP_FAIL(5, "another process of the user got a second ring beside it "
			  "(status 0x%x; 1: it fitted, per-process limit)", status);
	pid = -1;

	/* a closed fd's ring counts while mapped */
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		m = NULL;
		STEP_FAIL(6, "mmap of the ring: %s", strerror(errno));
	}
	close(fd);
	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		STEP_FAIL(7, "open: %s", strerror(errno));
	r = ring_config(fd);
	if (r != -ENOMEM)
		STEP_FAIL(8, "a second ring beside a mapped one: %s, expected ENOMEM",
			  r ? strerror(-r) : "success");
	munmap(m, len);
	m = NULL;
	r = ring_config(fd);
	if (r)
		STEP_FAIL(9, "a ring after the mapped one went: %s", strerror(-r));
out:
	if (m)
		munmap(m, len);
	if (fd >= 0)
		close(fd);
	close(go[1]);
	close(done[0]);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return ret ? -ret : 0;
}

TEST_F(memlock, pmu_ring_per_user)
{
	int r;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	TH_LOG("backend: %s", self->backend);
	if (!self->sessions)
		SKIP(return, "PMU in %s", amupmu_pmu_mode_name(&self->info));
	r = amupmu_run_as(AMUPMU_NOBODY, AMUPMU_NOBODY, 1ULL << CAP_PERFMON, ring_rows, NULL);
	EXPECT_EQ(0, r) {
		TH_LOG("uid 65534 + CAP_PERFMON, RLIMIT_MEMLOCK %u pages: %d (%s)", RING_LIMIT,
		       r, r > -100 ? amupmu_errstr(r) : "step above");
	}
}

TEST_HARNESS_MAIN
