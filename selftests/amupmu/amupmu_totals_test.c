// SPDX-License-Identifier: GPL-2.0
/*
 * The per-CPU totals of lost samples and throttles in netlink CPU_GET
 * (AMUPMU_NL_A_LOST_TOTAL, AMUPMU_NL_A_THROTTLED_TOTAL, ABI 2.5;
 * include/uapi/linux/amupmu_netlink.h):
 *
 *  - exact: a session sampling CPU 1 into a one-page ring nobody reads,
 *    at the smallest period with the interrupt limit lowered (exclusive
 *    mode's sample_rate_max, shared mode's kernel.perf_event_max_sample_rate),
 *    loses records and is throttled; the CPU's totals grow by exactly its
 *    READ's lost and throttled, in a do and in a dump (no other session
 *    runs on the board meanwhile), and a RESET of the session takes
 *    nothing back;
 *  - hotplug: CPU 1 offline (its totals still answered, unchanged) and
 *    online again: unchanged, and a second round counts on from there;
 *
 * Who gets them (CAP_PERFMON only): amupmu_netlink_test's
 * cpu_totals_privilege. Runs in either PMU mode (the fixture's backend
 * line says which); needs root (the limits, hotplug) with CAP_PERFMON or
 * CAP_SYS_ADMIN in effect in the initial user namespace (skips otherwise,
 * as uid 0 in a container may be) and a CPU 1.
 */
#define _GNU_SOURCE
#include "amupmu_pmu_fixture.h"
#include "amupmu_nl.h"

#define PERIOD_MIN_PARAM	"/sys/module/amupmu/parameters/sample_period_min"
#define SAMPLE_RATE_PARAM	"/sys/module/amupmu/parameters/sample_rate_max"
#define PERF_RATE_SYSCTL	"/proc/sys/kernel/perf_event_max_sample_rate"
#define TOTALS_RATE		"1000"	/* interrupts per second allowed */
#define TOTALS_PERIOD		1000ULL	/* sample_period_min's floor */
#define TOTALS_BUSY_NS		(300 * NSEC_PER_MSEC)
#define TOTALS_CPU		1U

/* The totals of @cpu as a CAP_PERFMON caller gets them: both must be there. */
static void totals(struct __test_metadata *_metadata, __u32 cpu, bool dump, struct nl_cpu_reply *r)
{
	struct nl nl;
	int ret;

	ASSERT_EQ(0, nl_ready(&nl));
	ret = nl_cpu_get(&nl, cpu, dump, r);
	close(nl.fd);
	ASSERT_EQ(0, ret) {
		TH_LOG("CPU_GET %s of CPU %u: %s", dump ? "dump" : "do", cpu, amupmu_errstr(ret));
	}
	ASSERT_TRUE(r->has_lost && r->has_throttled) {
		TH_LOG("CPU_GET %s of CPU %u as root: LOST_TOTAL %s, THROTTLED_TOTAL %s",
		       dump ? "dump" : "do", cpu, r->has_lost ? "there" : "missing",
		       r->has_throttled ? "there" : "missing");
	}
}

/*
 * A limit lowered for a moment: written, the caller does what it needs
 * without any ASSERT (an ASSERT leaves the test at once), then writes the
 * saved value back.
 */
struct limit {
	const char *path;
	char saved[32];
	bool lowered;
};

static int limit_lower(struct limit *l, const char *path, const char *val)
{
	int ret;

	l->path = path;
	l->lowered = false;
	ret = amupmu_read_line(path, l->saved, sizeof(l->saved));
	if (ret)
		return ret;
	l->lowered = true;
	return amupmu_write_str(path, val);
}

static int limit_restore(struct limit *l)
{
	if (!l->lowered)
		return 0;
	l->lowered = false;
	return amupmu_write_str(l->path, l->saved);
}

/*
 * One round: ENABLE with the interrupt limit lowered, spin on CPU 1,
 * DISABLE, READ CPU 1 into @sn; the totals before (@t0) and after (@t1)
 * grow by exactly READ's lost and throttled (the session's counts since
 * its RESET).
 */
static void round_exact(struct __test_metadata *_metadata, FIXTURE_DATA(pmu) *self,
			const char *what, struct snap *sn, struct nl_cpu_reply *t0,
			struct nl_cpu_reply *t1)
{
	struct limit rate;
	struct nl_cpu_reply d;
	int ret, restored;

	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RESET));
	totals(_metadata, TOTALS_CPU, false, t0);
	ret = limit_lower(&rate, self->shared ? PERF_RATE_SYSCTL : SAMPLE_RATE_PARAM,
			  TOTALS_RATE);
	if (!ret)
		ret = amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE);
	if (!ret)
		ret = busy_on(TOTALS_CPU, TOTALS_BUSY_NS);
	if (!ret)
		ret = amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE);
	restored = limit_restore(&rate);
	ASSERT_EQ(0, ret) {
		TH_LOG("%s: %s at %s/s, ENABLE, spin on CPU %u, DISABLE: %s", what, rate.path,
		       TOTALS_RATE, TOTALS_CPU, amupmu_errstr(ret));
	}
	ASSERT_EQ(0, restored) {
		TH_LOG("%s: writing %s back to %s: %s", what, rate.path, rate.saved,
		       amupmu_errstr(restored));
	}
	read_ok(_metadata, self->fd, TOTALS_CPU, 1, sn);
	totals(_metadata, TOTALS_CPU, false, t1);
	totals(_metadata, TOTALS_CPU, true, &d);
	TH_LOG("%s: session on CPU %u: %llu samples, %llu lost, %llu skid, throttled %llu, "
	       "%llu overflows; LOST_TOTAL %llu -> %llu (dump %llu), THROTTLED_TOTAL %llu -> %llu "
	       "(dump %llu)", what, TOTALS_CPU, (unsigned long long)sn->rd.samples,
	       (unsigned long long)sn->rd.lost, (unsigned long long)sn->rd.skid,
	       (unsigned long long)sn->rd.throttled, (unsigned long long)sn->v[0].overflows,
	       (unsigned long long)t0->lost, (unsigned long long)t1->lost,
	       (unsigned long long)d.lost, (unsigned long long)t0->throttled,
	       (unsigned long long)t1->throttled, (unsigned long long)d.throttled);
	/* the case is the one meant: the ring filled and the CPU throttled */
	EXPECT_LT(0ULL, sn->rd.lost);
	EXPECT_LT(0ULL, sn->rd.throttled);
	EXPECT_EQ(sn->rd.lost, t1->lost - t0->lost);
	EXPECT_EQ(sn->rd.throttled, t1->throttled - t0->throttled);
	/* a dump reads the same (nothing samples now) */
	EXPECT_EQ(t1->lost, d.lost);
	EXPECT_EQ(t1->throttled, d.throttled);
}

/*
 * The totals are exact, a session's RESET takes nothing back, and they
 * survive CPU 1 going offline and online: see the top of the file.
 */
TEST_F(pmu, totals_exact_and_hotplug)
{
	struct nl_cpu_reply t0, t1, t2, t3, off;
	struct limit period_min;
	struct snap sn, sn2;
	struct group g;
	const char *why;
	int ret, restored;

	PMU_BEGIN();
	NEED_PMU();
	if (geteuid())
		SKIP(return, "lowering the limits and CPU hotplug need root");
	why = totals_not_privileged();
	if (why)
		SKIP(return, "%s: CPU_GET has no totals", why);
	if (self->nr_cpu_ids <= TOTALS_CPU || amupmu_cpu_online(TOTALS_CPU) != 1)
		SKIP(return, "no CPU %u online", TOTALS_CPU);

	/* CPU_CYCLES on CPU 1 every 1000 (sample_period_min lowered for the CONFIG), one page */
	group_init(&g, TOTALS_CPU);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	g.ev[0].sample_period = TOTALS_PERIOD;
	ret = limit_lower(&period_min, PERIOD_MIN_PARAM, "1000");
	if (!ret)
		ret = group_config_ring(self->fd, &g, 1);
	restored = limit_restore(&period_min);
	ASSERT_EQ(0, ret) {
		TH_LOG("sample_period_min 1000, CONFIG CPU_CYCLES every %llu on CPU %u: %s",
		       TOTALS_PERIOD, TOTALS_CPU, amupmu_errstr(ret));
	}
	ASSERT_EQ(0, restored);

	round_exact(_metadata, self, "round 1", &sn, &t0, &t1);

	/* RESET: READ's counts start over, the CPU's totals do not */
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RESET));
	totals(_metadata, TOTALS_CPU, false, &t2);
	EXPECT_EQ(t1.lost, t2.lost);
	EXPECT_EQ(t1.throttled, t2.throttled);

	/* offline: still answered, unchanged; online: unchanged */
	ret = amupmu_set_online(TOTALS_CPU, false);
	ASSERT_EQ(0, ret) {
		TH_LOG("offlining cpu%u: %s", TOTALS_CPU, amupmu_errstr(ret));
	}
	self->cpu1_offlined = true;
	totals(_metadata, TOTALS_CPU, false, &off);
	EXPECT_EQ(t1.lost, off.lost);
	EXPECT_EQ(t1.throttled, off.throttled);
	ret = amupmu_set_online(TOTALS_CPU, true);
	ASSERT_EQ(0, ret) {
		TH_LOG("onlining cpu%u: %s", TOTALS_CPU, amupmu_errstr(ret));
	}
	self->cpu1_offlined = false;
	totals(_metadata, TOTALS_CPU, false, &t3);
	TH_LOG("across cpu%u offline and online: LOST_TOTAL %llu, %llu offline, %llu after; "
	       "THROTTLED_TOTAL %llu, %llu, %llu", TOTALS_CPU,
	       (unsigned long long)t1.lost, (unsigned long long)off.lost,
	       (unsigned long long)t3.lost, (unsigned long long)t1.throttled,
	       (unsigned long long)off.throttled, (unsigned long long)t3.throttled);
	EXPECT_EQ(t1.lost, t3.lost);
	EXPECT_EQ(t1.throttled, t3.throttled);

	/* and they count on from there (the session samples CPU 1 again) */
	round_exact(_metadata, self, "round 2, after cpu1 came back", &sn2, &t0, &t1);
	EXPECT_EQ(t3.lost, t0.lost);
	EXPECT_EQ(t3.throttled, t0.throttled);
	EXPECT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE));
}

TEST_HARNESS_MAIN
