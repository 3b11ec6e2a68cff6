// SPDX-License-Identifier: GPL-2.0
/*
 * PMU sessions of /dev/amupmu across CPU hotplug: cpu1 goes offline and
 * back while a group counts (READ says OFFLINE, the totals and
 * time_running freeze, counting resumes), while it samples (samples name
 * their CPU, nothing lost, cpu1 samples again), and under READ_ALL (the
 * entry says OFFLINE with frozen totals). Needs root and a hot-pluggable
 * cpu1. Power-down (CPU PM): amupmu_cpupm_test.
 *
 * The fixture, its backend line and the helpers: amupmu_pmu_fixture.h.
 */
#define _GNU_SOURCE
#include "amupmu_pmu_fixture.h"

/* ---------------------------------------------------------------- fixture */

/* The tests that take cpu1 offline and back. */
#define NEED_CPU1_HOTPLUG() do {						\
	if (self->nr_cpu_ids < 2 ||						\
	    !amupmu_path_exists(AMUPMU_CPU_SYSFS "/cpu1/online"))		\
		SKIP(return, "no hot-pluggable cpu1");				\
	if (geteuid() != 0)							\
		SKIP(return, "offlining cpu1 needs root");			\
	if (amupmu_cpu_online(1) != 1)						\
		SKIP(return, "cpu1 is offline already");			\
} while (0)

/* ---------------------------------------------------------------- counting */

/*
 * A CPU going offline keeps its totals (READ says OFFLINE, nothing moves),
 * and counting resumes when it is back.
 */
TEST_F_TIMEOUT(pmu, offline_cpu, 60)
{
	struct snap r1, r2, r3, r4, r5;
	struct group g;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	NEED_CPU1_HOTPLUG();

	group_init(&g, 1);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	ret = group_config(self->fd, &g);
	ASSERT_EQ(0, ret) {
		TH_LOG("CONFIG on cpu1: %s", amupmu_errstr(ret));
	}
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	ASSERT_EQ(0, busy_on(1, 20 * NSEC_PER_MSEC));
	read_ok(_metadata, self->fd, 1, 1, &r1);
	EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED), r1.rd.state);
	EXPECT_LT(0ULL, r1.v[0].value);

	ret = amupmu_set_online(1, false);
	ASSERT_EQ(0, ret) {
		TH_LOG("offlining cpu1: %s", amupmu_errstr(ret));
	}
	self->cpu1_offlined = true;
	read_ok(_metadata, self->fd, 1, 1, &r2);
	EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED | AMUPMU_READ_OFFLINE), r2.rd.state);
	EXPECT_LE(r1.v[0].value, r2.v[0].value);
	sleep_ns(50 * NSEC_PER_MSEC);
	read_ok(_metadata, self->fd, 1, 1, &r3);
	EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED | AMUPMU_READ_OFFLINE), r3.rd.state);
	EXPECT_EQ(r2.v[0].value, r3.v[0].value) {
		TH_LOG("cycles of offline cpu1 moved");
	}
	EXPECT_EQ(r2.v[0].overflows, r3.v[0].overflows);
	EXPECT_EQ(r2.rd.time_running, r3.rd.time_running) {
		TH_LOG("time_running of offline cpu1 moved");
	}
	EXPECT_LT(r2.rd.time_enabled, r3.rd.time_enabled);
	/* other CPU numbers are not in the set, whatever their state */
	ret = snap_read(self->fd, 0, 1, &r4);
	EXPECT_EQ(-EINVAL, ret);

	ret = amupmu_set_online(1, true);
	ASSERT_EQ(0, ret) {
		TH_LOG("onlining cpu1: %s", amupmu_errstr(ret));
	}
	self->cpu1_offlined = false;
	ASSERT_EQ(0, busy_on(1, 20 * NSEC_PER_MSEC));
	read_ok(_metadata, self->fd, 1, 1, &r4);
	EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED), r4.rd.state);
	EXPECT_LT(r3.v[0].value, r4.v[0].value) {
		TH_LOG("counting did not resume on cpu1");
	}
	EXPECT_LT(r3.rd.time_running, r4.rd.time_running);
	ASSERT_EQ(0, busy_on(1, 5 * NSEC_PER_MSEC));
	read_ok(_metadata, self->fd, 1, 1, &r5);
	EXPECT_LT(r4.v[0].value, r5.v[0].value);
	TH_LOG("cpu1 cycles: %llu before offline, %llu offline, %llu, %llu after online",
	       (unsigned long long)r1.v[0].value, (unsigned long long)r3.v[0].value,
	       (unsigned long long)r4.v[0].value, (unsigned long long)r5.v[0].value);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
}

/* ---------------------------------------------------------------- sampling */

/*
 * Sampling the cycle counter on CPUs 0 and 1 while cpu1 goes offline and
 * back: samples name their CPU, nothing is lost on the way, totals
 * monotonic, cpu1 samples again once online.
 */
TEST_F_TIMEOUT(pmu, sample_offline_cpu, 60)
{
	unsigned int per_cpu[2] = { 0 }, bad_cpu = 0, before1;
	struct sample_rec rec;
	struct snap a, b2;
	struct group g;
	struct ring r;
	__u64 tail;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	NEED_CPU1_HOTPLUG();
	group_init(&g, 0);
	cpuset_add(&g.cpus, 1);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	g.ev[0].sample_period = 1000000;
	/*
	 * Nothing drains the ring: QEMU's cycle counter counts idle time too,
	 * a sample per ms on each online CPU for as long as the test runs,
	 * and without -icount that is host time (the hotplug of a loaded
	 * host's vCPUs included). 64 pages hold 5461 records, 2.7 s of both
	 * CPUs (16 pages: 0.7 s; about 200 records under -icount)
	 */
	ret = group_config_ring(self->fd, &g, 64);
	ASSERT_EQ(0, ret) {
		TH_LOG("CONFIG on cpus 0-1: %s", amupmu_errstr(ret));
	}
	ASSERT_EQ(0, ring_map(self->fd, 64, &r));
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	ASSERT_EQ(0, busy_on(1, 20 * NSEC_PER_MSEC));
	read_ok(_metadata, self->fd, 1, 1, &a);
	before1 = a.rd.samples;
	ASSERT_EQ(0, amupmu_set_online(1, false));
	self->cpu1_offlined = true;
	amupmu_busy_ns(20 * NSEC_PER_MSEC);
	read_ok(_metadata, self->fd, 1, 1, &b2);
	EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED | AMUPMU_READ_OFFLINE), b2.rd.state);
	EXPECT_LE(a.v[0].value, b2.v[0].value);
	EXPECT_EQ(before1 <= b2.rd.samples, 1);
	ASSERT_EQ(0, amupmu_set_online(1, true));
	self->cpu1_offlined = false;
	/*
	 * 20 ms at a period of 10^6 cycles is about 20 samples. An overflow
	 * pending when cpu1 went down (interrupt disabled first) must be
	 * taken when it comes back: dropped, the cycle counter would restart
	 * just past zero and never overflow again (once in four boots here
	 * before the offline path kept it).
	 */
	ASSERT_EQ(0, busy_on(1, 20 * NSEC_PER_MSEC));
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
	read_ok(_metadata, self->fd, 1, 1, &a);
	EXPECT_LT(b2.v[0].value, a.v[0].value);
	EXPECT_LT(b2.rd.samples, a.rd.samples) {
		TH_LOG("cpu1 did not sample again after coming back");
	}
	tail = r.hdr->data_tail;
	while (tail < r.hdr->data_head) {
		ring_copy(&r, tail, &rec, REC_SZ(1));
		if (rec.s.cpu < 2)
			per_cpu[rec.s.cpu]++;
		else
			bad_cpu++;
		tail += REC_SZ(1);
	}
	TH_LOG("samples: cpu0 %u, cpu1 %u (READ %llu), lost %llu", per_cpu[0], per_cpu[1],
	       (unsigned long long)a.rd.samples, (unsigned long long)r.hdr->lost);
	EXPECT_EQ(0U, bad_cpu);
	EXPECT_EQ(0ULL, r.hdr->lost);
	EXPECT_EQ(a.rd.samples, (__u64)per_cpu[1]);
	munmap(r.hdr, r.len);
}

/* ---------------------------------------------------------------- READ_ALL */

/* cpu1 offline: its READ_ALL entry says OFFLINE with frozen totals; back online it clears. */
TEST_F_TIMEOUT(pmu, read_all_offline_cpu, 60)
{
	struct read_all ra = { 0 };
	struct amupmu_pmu_read_cpu *e0, *e1;
	__u64 frozen;
	struct group g;

	PMU_BEGIN();
	NEED_PMU();
	NEED_CPU1_HOTPLUG();
	group_init(&g, 0);
	cpuset_add(&g.cpus, 1);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	ASSERT_EQ(0, group_config(self->fd, &g));
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	ASSERT_EQ(0, busy_on(1, 5 * NSEC_PER_MSEC));
	ASSERT_EQ(0, amupmu_set_online(1, false));
	self->cpu1_offlined = true;
	ASSERT_EQ(0, read_all(self->fd, &ra, 2, 1));
	ASSERT_EQ(2U, ra.rd.nr_cpus);
	e0 = amupmu_read_all_entry(ra.buf, 1, 0);
	e1 = amupmu_read_all_entry(ra.buf, 1, 1);
	TH_LOG("cpu1 offline: entry 0 cpu %u state 0x%x, entry 1 cpu %u state 0x%x cycles %llu",
	       e0->cpu, e0->state, e1->cpu, e1->state, (unsigned long long)e1->values[0].value);
	EXPECT_EQ(0U, e0->cpu);
	EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED), e0->state);
	EXPECT_EQ(1U, e1->cpu);
	EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED | AMUPMU_READ_OFFLINE), e1->state);
	EXPECT_LT(0ULL, e1->values[0].value);
	frozen = e1->values[0].value;
	sleep_ns(20 * NSEC_PER_MSEC);
	ASSERT_EQ(0, read_all(self->fd, &ra, 2, 1));
	e1 = amupmu_read_all_entry(ra.buf, 1, 1);
	EXPECT_EQ(frozen, e1->values[0].value);

	ASSERT_EQ(0, amupmu_set_online(1, true));
	self->cpu1_offlined = false;
	ASSERT_EQ(0, busy_on(1, 5 * NSEC_PER_MSEC));
	ASSERT_EQ(0, read_all(self->fd, &ra, 2, 1));
	e1 = amupmu_read_all_entry(ra.buf, 1, 1);
	EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED), e1->state);
	EXPECT_LT(frozen, e1->values[0].value);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
	free(ra.buf);
}

TEST_HARNESS_MAIN
