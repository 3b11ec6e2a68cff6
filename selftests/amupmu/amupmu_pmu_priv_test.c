// SPDX-License-Identifier: GPL-2.0
/*
 * What an unprivileged or contained task gets from the PMU sessions of
 * /dev/amupmu: CONFIG without CAP_PERFMON is EACCES (the counters are
 * system-wide); EL0 access to the PMU traps (PMUSERENR_EL0 is 0 while
 * amupmu owns it, and arm_pmu's while no perf event asks for user
 * access); a sample carries the pid and tid of the configuring process's
 * pid namespace, never the initial namespace's. The privilege table of
 * every command: amupmu_priv_test.
 *
 * The fixture, its backend line and the helpers: amupmu_pmu_fixture.h.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>

#include "amupmu_pmu_fixture.h"

/* ---------------------------------------------------------------- CAP_PERFMON */

/* Without CAP_PERFMON (system-wide counters) CONFIG is EACCES. */
TEST_F(pmu, config_needs_perfmon)
{
	union cfg_buf b;
	struct group g;
	int status, fd, ret;
	pid_t pid;

	PMU_BEGIN();
	NEED_PMU();
	if (geteuid() != 0)
		SKIP(return, "needs root to drop to an unprivileged user");

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct amupmu_info info;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		fd = open_dev();
		if (fd < 0)
			_exit(11);
		if (amupmu_query(fd, &info, NULL, 0))
			_exit(12);
		cfg_base(&b, &g);
		ret = amupmu_ioctl(fd, AMUPMU_PMU_CONFIG, &b);
		if (ret == -EACCES)
			_exit(0);
		fprintf(stderr, "# unprivileged CONFIG: expected EACCES, got %s\n", amupmu_errstr(ret));
		_exit(13);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("unprivileged child: status %d (10 setuid, 11 open, 12 INFO, "
		       "13 CONFIG not EACCES)", WEXITSTATUS(status));
	}
	expect_all_free(_metadata, self, "after the unprivileged CONFIG");
}

/* ---------------------------------------------------------------- pid namespace */

/* What the task in the new pid namespace saw, shared with the test. */
struct pidns_result {
	int step, err;
	pid_t ns_pid;		/* getpid() in the new namespace: 1 */
	pid_t init_pid;		/* the same task in the initial namespace */
	unsigned int n, loop, loop_ns, loop_init, other;
	__u32 first_pid, first_tid;
};

/* In the new namespace, pid 1: sample CPU_CYCLES:u on CPU 0 over the loop. */
static int pidns_sample(struct pidns_result *res)
{
	struct sample_rec rec;
	struct group g;
	struct ring r;
	__u64 tail, head;
	int fd, ret;

	res->ns_pid = getpid();
	res->step = 1;
	if (amupmu_pin_cpu(0))
		return -errno;
	fd = open_dev();
	res->step = 2;
	if (fd < 0)
		return -errno;
	group_init(&g, 0);
	group_add(&g, PMUV3_EV_CPU_CYCLES, AMUPMU_EV_USER_ONLY);
	g.ev[0].sample_period = SAMPLE_P;
	res->step = 3;
	ret = group_config_ring(fd, &g, 16);
	if (ret)
		return ret;
	res->step = 4;
	ret = ring_map(fd, 16, &r);
	if (ret)
		return ret;
	res->step = 5;
	ret = amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_ENABLE);
	if (ret)
		return ret;
	sample_loop(LOOP_N);
	ret = amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_DISABLE);
	if (ret)
		return ret;
	head = __atomic_load_n(&r.hdr->data_head, __ATOMIC_ACQUIRE);
	for (tail = r.hdr->data_tail; tail < head; tail += REC_SZ(1)) {
		bool in_loop;

		ring_copy(&r, tail, &rec, REC_SZ(1));
		in_loop = rec.s.pc >= (uintptr_t)sample_loop &&
			  rec.s.pc < (uintptr_t)sample_loop_end;
		res->n++;
		if (!in_loop) {
			res->other++;
			continue;
		}
		res->loop++;
		if (rec.s.pid == 1 && rec.s.tid == 1)
			res->loop_ns++;
		else if (!res->first_pid && !res->first_tid) {
			res->first_pid = rec.s.pid;
			res->first_tid = rec.s.tid;
		}
		if (rec.s.pid == (__u32)res->init_pid || rec.s.tid == (__u32)res->init_pid)
			res->loop_init++;
	}
	res->step = 0;
	return 0;
}

/*
 * A process in a new pid namespace (unshare(CLONE_NEWPID), then fork: pid
 * 1 there) configures a sampling session on its CPU and runs the loop:
 * the samples of the loop carry pid 1 and tid 1, its pid and tid as seen
 * in the namespace of the process that configured the group, never the
 * initial namespace's.
 */
TEST_F(pmu, sample_pid_namespace)
{
	struct pidns_result *res;
	int status;
	pid_t pid;

	PMU_BEGIN();
	NEED_PMU();
	if (geteuid() != 0)
		SKIP(return, "unshare(CLONE_NEWPID) needs CAP_SYS_ADMIN");
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		   -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	memset(res, 0, sizeof(*res));
	res->step = -1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		pid_t inner;

		if (unshare(CLONE_NEWPID))
			_exit(10);
		inner = fork();
		if (inner < 0)
			_exit(11);
		if (!inner) {
			/* wait for the parent to publish our initial-namespace pid */
			while (!__atomic_load_n(&res->init_pid, __ATOMIC_ACQUIRE))
				;
			res->err = pidns_sample(res);
			_exit(res->err ? 12 : 0);
		}
		__atomic_store_n(&res->init_pid, inner, __ATOMIC_RELEASE);
		if (waitpid(inner, &status, 0) != inner || !WIFEXITED(status))
			_exit(13);
		_exit(WEXITSTATUS(status));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	TH_LOG("task pid %d in the initial namespace, getpid() %d in its own: %u samples, "
	       "%u in the loop (%u with pid 1 tid 1, %u with the initial pid), %u elsewhere",
	       res->init_pid, res->ns_pid, res->n, res->loop, res->loop_ns, res->loop_init,
	       res->other);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("status %d (10 unshare, 11 fork, 12 sampling step %d: %s, 13 wait)",
		       WEXITSTATUS(status), res->step, strerror(-res->err));
	}
	EXPECT_EQ(1, res->ns_pid);
	EXPECT_NE(1, res->init_pid);
	EXPECT_LT(0U, res->loop);
	EXPECT_EQ(res->loop, res->loop_ns) {
		TH_LOG("loop samples with pid %u tid %u, not 1/1 (the namespace's)",
		       res->first_pid, res->first_tid);
	}
	EXPECT_EQ(0U, res->loop_init) {
		TH_LOG("samples carry the initial namespace's pid %d", res->init_pid);
	}
	munmap(res, sizeof(*res));
}

/* ---------------------------------------------------------------- EL0 access */

/* EL0 accesses to the PMU that PMUSERENR_EL0.EN (and .SW/.CR/.ER) gate. */
#ifdef __aarch64__
#define EL0_READ(name, reg)							\
static void name(void)								\
{										\
	__u64 v;								\
	asm volatile("mrs %0, " reg : "=r" (v));				\
	(void)v;								\
}
EL0_READ(el0_pmccntr, "pmccntr_el0")
EL0_READ(el0_pmevcntr0, "pmevcntr0_el0")
EL0_READ(el0_pmevtyper0, "pmevtyper0_el0")
EL0_READ(el0_pmcr, "pmcr_el0")
EL0_READ(el0_pmcntenset, "pmcntenset_el0")
EL0_READ(el0_pmovsclr, "pmovsclr_el0")
EL0_READ(el0_pmselr, "pmselr_el0")
EL0_READ(el0_pmxevcntr, "pmxevcntr_el0")
EL0_READ(el0_pmceid0, "pmceid0_el0")
EL0_READ(el0_pmccfiltr, "pmccfiltr_el0")
static void el0_pmswinc(void)
{
	asm volatile("msr pmswinc_el0, xzr");
}
#endif

/* Run @fn in a child: the signal that killed it, 0 when it returned. */
static int el0_access(void (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		fn();
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

/*
 * While amupmu owns the PMU, PMUSERENR_EL0 is 0: every EL0 access to the
 * counters and their controls traps and the task gets SIGILL, with no
 * group and with a group counting on this CPU. In shared mode arm_pmu owns
 * PMUSERENR_EL0 and opens it only to a task with a perf event that asks
 * for user access (perf_user_access=1): amupmu's in-kernel counters never
 * do, so the same traps.
 */
TEST_F(pmu, el0_pmu_access_traps)
{
#ifdef __aarch64__
	static const struct {
		void (*fn)(void);
		const char *what;
	} acc[] = {
		{ el0_pmccntr, "mrs pmccntr_el0" },
		{ el0_pmevcntr0, "mrs pmevcntr0_el0" },
		{ el0_pmevtyper0, "mrs pmevtyper0_el0" },
		{ el0_pmcr, "mrs pmcr_el0" },
		{ el0_pmcntenset, "mrs pmcntenset_el0" },
		{ el0_pmovsclr, "mrs pmovsclr_el0" },
		{ el0_pmselr, "mrs pmselr_el0" },
		{ el0_pmxevcntr, "mrs pmxevcntr_el0" },
		{ el0_pmceid0, "mrs pmceid0_el0" },
		{ el0_pmccfiltr, "mrs pmccfiltr_el0" },
		{ el0_pmswinc, "msr pmswinc_el0" },
	};
	unsigned int i, pass, trapped = 0;
	struct group g;
	int sig;
#endif

	PMU_BEGIN();
	NEED_PMU();
#ifndef __aarch64__
	SKIP(return, "aarch64 system registers");
#else
	if (self->shared) {
		__u64 ua = 0;

		/* absent before arm64 had it (5.17): no EL0 access at all */
		if (!amupmu_read_u64("/proc/sys/kernel/perf_user_access", &ua) && ua)
			SKIP(return, "perf_user_access=%llu: arm_pmu may open the PMU to EL0",
			     (unsigned long long)ua);
	}
	ASSERT_EQ(0, amupmu_pin_cpu(0));
	for (pass = 0; pass < 2; pass++) {
		if (pass) {
			group_init(&g, 0);
			group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
			group_add(&g, self->filler, 0);
			ASSERT_EQ(0, group_config(self->fd, &g));
			ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
		}
		for (i = 0; i < ARRAY_SIZE(acc); i++) {
			sig = el0_access(acc[i].fn);
			EXPECT_EQ(SIGILL, sig) {
				TH_LOG("%s at EL0 %s: %s", acc[i].what,
				       pass ? "with a group counting" : "without a session",
				       sig > 0 ? strsignal(sig) : sig ? strerror(-sig) :
				       "executed (PMUSERENR_EL0 lets EL0 in)");
			}
			trapped += sig == SIGILL;
		}
	}
	TH_LOG("%u of %zu EL0 PMU accesses trapped (SIGILL)", trapped, 2 * ARRAY_SIZE(acc));
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
#endif
}

TEST_HARNESS_MAIN
