// SPDX-License-Identifier: GPL-2.0
/*
 * Counting with the PMU sessions of /dev/amupmu (AMUPMU_PMU_CONFIG, CTL,
 * READ against include/uapi/linux/amupmu.h), in exclusive and shared mode:
 * CPU_CYCLES on the cycle counter beside a second event, times and state,
 * totals monotonic while enabled, frozen while disabled and kept across
 * disable / enable; RESET while disabled and while enabled; a session on
 * every CPU; totals across 32-bit counter wraps (pmu_counter_bits=32,
 * exclusive mode); one READ of every CPU of a group (READ_ALL) against the
 * single-CPU READs around it.
 *
 * The fixture, its backend line and the helpers: amupmu_pmu_fixture.h.
 * A CPU going offline: amupmu_pmu_hotplug_test.
 */
#define _GNU_SOURCE
#include "amupmu_pmu_fixture.h"

#define WRAP_32		(1ULL << 32)

/* ---------------------------------------------------------------- counting */

/*
 * {CPU_CYCLES, INST_RETIRED or SW_INCR} on CPU 0: the cycle counter,
 * state, times, monotonic totals while enabled, frozen while disabled,
 * totals kept across disable / enable, and RESET.
 */
TEST_F(pmu, cpu_cycles_counting)
{
	struct snap fresh, r1, r, prev, d1, d2, e;
	unsigned int i, nr;
	struct group g;
	double ratio;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	ASSERT_EQ(0, amupmu_pin_cpu(0));
	group_init(&g, 0);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	group_add(&g, self->icount ? PMUV3_EV_INST_RETIRED : self->filler, 0);
	nr = g.nr;
	ret = group_config(self->fd, &g);
	ASSERT_EQ(0, ret) {
		TH_LOG("CONFIG: %s", amupmu_errstr(ret));
	}
	expect_counter(_metadata, self, &g.cfg, 0, true, "CPU_CYCLES without filters");
	expect_counter(_metadata, self, &g.cfg, 1, false, "the second event");
	EXPECT_EQ(want_free(self, self->nr_counters + 1), g.cfg.counters_free);

	/* configured, never enabled: all zero */
	read_ok(_metadata, self->fd, 0, nr, &fresh);
	EXPECT_EQ(RD_STATE(0), fresh.rd.state);
	EXPECT_EQ(0ULL, fresh.rd.time_enabled);
	EXPECT_EQ(0ULL, fresh.rd.time_running);
	for (i = 0; i < nr; i++) {
		EXPECT_EQ(0ULL, fresh.v[i].value);
		EXPECT_EQ(0ULL, fresh.v[i].overflows);
	}

	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	amupmu_busy_ns(20 * NSEC_PER_MSEC);
	read_ok(_metadata, self->fd, 0, nr, &r1);
	EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED), r1.rd.state);
	EXPECT_LT(0ULL, r1.rd.time_enabled);
	EXPECT_LT(0ULL, r1.rd.time_running);
	EXPECT_LT(0ULL, r1.v[0].value);
	if (self->icount) {
		EXPECT_LT(0ULL, r1.v[1].value);
	}
	TH_LOG("after 20 ms: cycles %llu, event 0x%x %llu, enabled %llu ns, running %llu ns",
	       (unsigned long long)r1.v[0].value, g.ev[1].event,
	       (unsigned long long)r1.v[1].value,
	       (unsigned long long)r1.rd.time_enabled,
	       (unsigned long long)r1.rd.time_running);
	if (self->qemu && r1.rd.time_running) {
		ratio = (double)r1.v[0].value / (double)r1.rd.time_running;
		EXPECT_TRUE(ratio > 0.5 && ratio < 2.0) {
			TH_LOG("cycles per ns running %.3f (QEMU: 1.0)", ratio);
		}
	}

	/* monotonic while enabled */
	prev = r1;
	for (i = 0; i < 5; i++) {
		amupmu_busy_ns(2 * NSEC_PER_MSEC);
		read_ok(_metadata, self->fd, 0, nr, &r);
		EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED), r.rd.state);
		EXPECT_LE(prev.v[0].value, r.v[0].value);
		EXPECT_LE(prev.v[1].value, r.v[1].value);
		EXPECT_LE(prev.rd.time_enabled, r.rd.time_enabled);
		EXPECT_LE(prev.rd.time_running, r.rd.time_running);
		prev = r;
	}
	EXPECT_LT(r1.v[0].value, prev.v[0].value);
	EXPECT_LT(r1.rd.time_enabled, prev.rd.time_enabled);

	/* frozen while disabled */
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
	read_ok(_metadata, self->fd, 0, nr, &d1);
	EXPECT_EQ(RD_STATE(0), d1.rd.state);
	EXPECT_LE(prev.v[0].value, d1.v[0].value);
	amupmu_busy_ns(10 * NSEC_PER_MSEC);
	sleep_ns(10 * NSEC_PER_MSEC);
	read_ok(_metadata, self->fd, 0, nr, &d2);
	EXPECT_EQ(RD_STATE(0), d2.rd.state);
	for (i = 0; i < nr; i++) {
		EXPECT_EQ(d1.v[i].value, d2.v[i].value) {
			TH_LOG("event %u changed while disabled", i);
		}
		EXPECT_EQ(d1.v[i].overflows, d2.v[i].overflows);
	}
	EXPECT_EQ(d1.rd.time_enabled, d2.rd.time_enabled);
	EXPECT_EQ(d1.rd.time_running, d2.rd.time_running);

	/* totals accumulate over a second enabled period */
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	amupmu_busy_ns(5 * NSEC_PER_MSEC);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
	read_ok(_metadata, self->fd, 0, nr, &e);
	EXPECT_EQ(RD_STATE(0), e.rd.state);
	EXPECT_LT(d2.v[0].value, e.v[0].value);
	EXPECT_LE(d2.v[1].value, e.v[1].value);
	EXPECT_LT(d2.rd.time_enabled, e.rd.time_enabled);

	/* RESET while disabled: exactly zero */
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RESET));
	read_ok(_metadata, self->fd, 0, nr, &r);
	EXPECT_EQ(RD_STATE(0), r.rd.state);
	for (i = 0; i < nr; i++) {
		EXPECT_EQ(0ULL, r.v[i].value) {
			TH_LOG("event %u after RESET while disabled", i);
		}
		EXPECT_EQ(0ULL, r.v[i].overflows);
	}
	EXPECT_EQ(0ULL, r.rd.time_enabled);
	EXPECT_EQ(0ULL, r.rd.time_running);
}

/* RESET while enabled zeroes the totals and counting goes on. */
TEST_F(pmu, reset_while_enabled)
{
	struct snap a, b, c;
	struct group g;
	__u64 t0, span;

	PMU_BEGIN();
	NEED_PMU();
	ASSERT_EQ(0, amupmu_pin_cpu(0));
	group_init(&g, 0);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	ASSERT_EQ(0, group_config(self->fd, &g));
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	amupmu_busy_ns(20 * NSEC_PER_MSEC);
	read_ok(_metadata, self->fd, 0, 1, &a);
	t0 = amupmu_now_ns();
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RESET));
	read_ok(_metadata, self->fd, 0, 1, &b);
	span = amupmu_now_ns() - t0;
	amupmu_busy_ns(20 * NSEC_PER_MSEC);
	read_ok(_metadata, self->fd, 0, 1, &c);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));

	TH_LOG("cycles before RESET %llu, right after %llu (%llu ns from RESET to READ), "
	       "20 ms later %llu", (unsigned long long)a.v[0].value,
	       (unsigned long long)b.v[0].value, (unsigned long long)span,
	       (unsigned long long)c.v[0].value);
	EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED), b.rd.state);
	EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED), c.rd.state);
	if (self->icount || !self->qemu) {
		EXPECT_GT(a.v[0].value / 2, b.v[0].value);
		EXPECT_GT(a.rd.time_enabled / 2, b.rd.time_enabled);
	} else {
		/*
		 * QEMU without -icount: cycles and times follow the host
		 * clock, and a vCPU preempted between RESET and READ for half
		 * the 20 ms above fails the halving. What RESET zeroed can
		 * have grown only for the time around the two calls: at most
		 * that long enabled, and QEMU's one cycle per ns (twice that
		 * here)
		 */
		EXPECT_GE(span + TIME_SLACK_NS, b.rd.time_enabled);
		EXPECT_GE(2 * (span + TIME_SLACK_NS), b.v[0].value);
	}
	EXPECT_LT(b.v[0].value, c.v[0].value);
	EXPECT_LT(b.rd.time_enabled, c.rd.time_enabled);
}

/* A session on every possible CPU counts on each online one. */
TEST_F(pmu, all_cpus)
{
	struct group g;
	struct snap s;
	unsigned int cpu;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	group_init(&g, 0);
	cpuset_clear(&g.cpus, ((self->nr_cpu_ids + 63) / 64) * 8);
	for (cpu = 0; cpu < self->nr_cpu_ids; cpu++)
		if (self->cpus[cpu].flags & AMUPMU_CPU_POSSIBLE)
			cpuset_add(&g.cpus, cpu);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	ret = group_config(self->fd, &g);
	ASSERT_EQ(0, ret) {
		TH_LOG("CONFIG on all %u CPUs: %s", self->nr_cpu_ids, amupmu_errstr(ret));
	}
	expect_counter(_metadata, self, &g.cfg, 0, true, "CPU_CYCLES");
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	amupmu_busy_ns(5 * NSEC_PER_MSEC);
	sleep_ns(20 * NSEC_PER_MSEC);
	for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
		if (!(self->cpus[cpu].flags & AMUPMU_CPU_POSSIBLE))
			continue;
		read_ok(_metadata, self->fd, cpu, 1, &s);
		TH_LOG("cpu %u: cycles %llu, state 0x%x", cpu,
		       (unsigned long long)s.v[0].value, s.rd.state);
		EXPECT_TRUE(!!(s.rd.state & AMUPMU_READ_ENABLED));
		if (amupmu_cpu_online(cpu) == 1) {
			EXPECT_FALSE(!!(s.rd.state & AMUPMU_READ_OFFLINE));
			EXPECT_LT(0ULL, s.v[0].value) {
				TH_LOG("cpu %u counted no cycle", cpu);
			}
			EXPECT_LT(0ULL, s.rd.time_running);
		}
	}
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
}

/*
 * pmu_counter_bits=32: two CPU_CYCLES, one on the cycle counter, one on an
 * event counter, over more than two 32-bit wraps (QEMU's cycle counter runs
 * at 1 GHz: 2^32 cycles in 4.3 s). The overflow interrupt alone keeps the
 * 64-bit total: after one read that measures the rate, nothing reads the
 * group until the end, and a read folds nothing anyway. The event counter
 * interrupts every 2^31 events (the driver re-arms it half a width below
 * its overflow), so a late interrupt cannot hide a wrap.
 */
TEST_F_TIMEOUT(pmu, wrap_32bit, 120)
{
	const __u64 target = 5 * (WRAP_32 / 2);		/* 2.5 wraps */
	const __u64 deadline = amupmu_now_ns() + 60 * NSEC_PER_SEC;
	struct amupmu_pmu_value *cc, *ec;
	double wait;
	__u64 diff;
	struct group g;
	struct snap s;
	int ret;

	PMU_BEGIN();
	NEED_EXCLUSIVE("pmu_counter_bits and the overflow count of a counting event: "
		       "perf core decides the counter width and folds overflows itself");
	ASSERT_NE(0U, self->counter_bits) {
		TH_LOG("%s missing", COUNTER_BITS_PARAM);
	}
	if (self->counter_bits == 64)
		SKIP(return, "64-bit counters: no wrap to test");
	ASSERT_EQ(32U, self->counter_bits);

	group_init(&g, 0);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	ret = group_config(self->fd, &g);
	ASSERT_EQ(0, ret) {
		TH_LOG("CONFIG {CPU_CYCLES, CPU_CYCLES}: %s", amupmu_errstr(ret));
	}
	ASSERT_EQ(AMUPMU_PMU_CYCLE_COUNTER, g.cfg.counters[0]);
	ASSERT_GT(self->nr_counters, g.cfg.counters[1]) {
		TH_LOG("second CPU_CYCLES on counter %u, not an event counter",
		       g.cfg.counters[1]);
	}
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RESET));
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	sleep_ns(NSEC_PER_SEC / 2);
	read_ok(_metadata, self->fd, 0, 2, &s);
	ASSERT_LT(0ULL, s.v[1].value);
	/* then no read: the time the rate says the target takes, 10 % more */
	wait = (double)(target - s.v[1].value) * s.rd.time_enabled / s.v[1].value * 1.1;
	if (wait > deadline - amupmu_now_ns())
		wait = deadline - amupmu_now_ns();
	sleep_ns((__u64)wait);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
	read_ok(_metadata, self->fd, 0, 2, &s);

	cc = &s.v[0];
	ec = &s.v[1];
	TH_LOG("cycle counter %llu (%llu overflows), event counter %llu (%llu overflows), "
	       "enabled %llu ns",
	       (unsigned long long)cc->value, (unsigned long long)cc->overflows,
	       (unsigned long long)ec->value, (unsigned long long)ec->overflows,
	       (unsigned long long)s.rd.time_enabled);
	ASSERT_LE(2 * WRAP_32, ec->value) {
		TH_LOG("fewer than two wraps in %llu ns", (unsigned long long)s.rd.time_enabled);
	}
	/* one interrupt per 2^31 events; the last one may still be pending */
	EXPECT_TRUE(ec->overflows == ec->value >> 31 || ec->overflows + 1 == ec->value >> 31) {
		TH_LOG("event counter: %llu overflow interrupts for a total of %llu",
		       (unsigned long long)ec->overflows, (unsigned long long)ec->value);
	}
	/* the cycle counter may be 64-bit (PMCR_EL0.LC) and then never wraps */
	EXPECT_TRUE(cc->overflows == 0 || cc->overflows == cc->value >> 32) {
		TH_LOG("cycle counter: %llu overflows for a total of %llu",
		       (unsigned long long)cc->overflows, (unsigned long long)cc->value);
	}
	diff = cc->value > ec->value ? cc->value - ec->value : ec->value - cc->value;
	EXPECT_GT(ec->value / 1000, diff) {
		TH_LOG("cycle and event counter totals differ by %llu",
		       (unsigned long long)diff);
	}
}

/* ---------------------------------------------------------------- READ_ALL */

/*
 * A group on every possible CPU read with one READ_ALL: nr_cpus out is
 * the CPUs of the set, entries in ascending CPU order with cpu set, per-CPU
 * state and times, totals between two single-CPU READs taken before and
 * after (equal to them once disabled); room for more entries or values
 * leaves the rest untouched, at the stride nr_values gives.
 */
TEST_F(pmu, read_all_every_cpu)
{
	static unsigned int set[AMUPMU_TEST_MAX_CPUS];
	struct snap *before, *after;
	struct read_all ra = { 0 };
	struct amupmu_pmu_read_cpu *e;
	unsigned int nset, i, k, extra;
	struct group g;
	int ret;

	PMU_BEGIN();
	NEED_PMU();
	group_init(&g, 0);
	cpuset_clear(&g.cpus, ((self->nr_cpu_ids + 63) / 64) * 8);
	for (i = 0; i < self->nr_cpu_ids; i++)
		if (self->cpus[i].flags & AMUPMU_CPU_POSSIBLE)
			cpuset_add(&g.cpus, i);
	nset = cpuset_list(&g.cpus, set, ARRAY_SIZE(set));
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	group_add(&g, self->filler, 0);
	ret = group_config(self->fd, &g);
	ASSERT_EQ(0, ret) {
		TH_LOG("CONFIG on %u CPUs: %s", nset, amupmu_errstr(ret));
	}
	before = calloc(nset, sizeof(*before));
	after = calloc(nset, sizeof(*after));
	ASSERT_NE(NULL, before);
	ASSERT_NE(NULL, after);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	for (i = 0; i < nset; i++)
		if (amupmu_cpu_online(set[i]) == 1)
			busy_on(set[i], 2 * NSEC_PER_MSEC);

	/* enabled: single READs, READ_ALL, single READs */
	for (i = 0; i < nset; i++)
		read_ok(_metadata, self->fd, set[i], 2, &before[i]);
	ret = read_all(self->fd, &ra, nset, 2);
	ASSERT_EQ(0, ret) {
		TH_LOG("READ_ALL of %u CPUs: %s", nset, amupmu_errstr(ret));
	}
	for (i = 0; i < nset; i++)
		read_ok(_metadata, self->fd, set[i], 2, &after[i]);
	TH_LOG("READ_ALL: nr_cpus %u (set of %u), nr_values %u, state 0x%x, time_enabled %llu",
	       ra.rd.nr_cpus, nset, ra.rd.nr_values, ra.rd.state,
	       (unsigned long long)ra.rd.time_enabled);
	EXPECT_EQ(nset, ra.rd.nr_cpus);
	EXPECT_EQ(2U, ra.rd.nr_values);
	EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED), ra.rd.state);
	EXPECT_EQ(0ULL, ra.rd.time_running);
	EXPECT_NE(AMUPMU_SENTINEL64, ra.rd.time_enabled);
	EXPECT_LT(0ULL, ra.rd.time_enabled);
	for (i = 0; i < nset && i < ra.rd.nr_cpus; i++) {
		bool online = amupmu_cpu_online(set[i]) == 1;

		e = amupmu_read_all_entry(ra.buf, 2, i);
		TH_LOG("entry %u: cpu %u state 0x%x running %llu cycles %llu (single %llu..%llu)",
		       i, e->cpu, e->state, (unsigned long long)e->time_running,
		       (unsigned long long)e->values[0].value,
		       (unsigned long long)before[i].v[0].value,
		       (unsigned long long)after[i].v[0].value);
		EXPECT_EQ(set[i], e->cpu) {
			TH_LOG("entry %u is cpu %u, expected cpu %u (ascending order)", i, e->cpu,
			       set[i]);
		}
		EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED | (online ? 0 : AMUPMU_READ_OFFLINE)),
			  e->state);
		EXPECT_LE(before[i].rd.time_running, e->time_running);
		EXPECT_GE(after[i].rd.time_running, e->time_running);
		EXPECT_EQ(0ULL, e->samples);
		EXPECT_EQ(0ULL, e->lost);
		EXPECT_EQ(0ULL, e->skid);
		for (k = 0; k < 2; k++) {
			EXPECT_LE(before[i].v[k].value, e->values[k].value) {
				TH_LOG("cpu %u event %u: READ_ALL %llu below the READ before, %llu",
				       set[i], k, (unsigned long long)e->values[k].value,
				       (unsigned long long)before[i].v[k].value);
			}
			EXPECT_GE(after[i].v[k].value, e->values[k].value) {
				TH_LOG("cpu %u event %u: READ_ALL %llu above the READ after, %llu",
				       set[i], k, (unsigned long long)e->values[k].value,
				       (unsigned long long)after[i].v[k].value);
			}
		}
		if (online) {
			EXPECT_LT(0ULL, e->values[0].value);
		}
	}

	/* disabled: READ_ALL equals the single READs, with room to spare */
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
	for (i = 0; i < nset; i++)
		read_ok(_metadata, self->fd, set[i], 2, &before[i]);
	for (extra = 0; extra < 3; extra++) {
		__u32 nv = 2 + (extra & 1), nc = nset + (extra >> 1) * 2;

		ret = read_all(self->fd, &ra, nc, nv);
		ASSERT_EQ(0, ret) {
			TH_LOG("READ_ALL room for %u CPUs x %u values: %s", nc, nv, amupmu_errstr(ret));
		}
		EXPECT_EQ(nset, ra.rd.nr_cpus);
		EXPECT_EQ(2U, ra.rd.nr_values);
		EXPECT_EQ(RD_STATE(0), ra.rd.state);
		for (i = 0; i < nset; i++) {
			e = amupmu_read_all_entry(ra.buf, nv, i);
			EXPECT_EQ(set[i], e->cpu);
			EXPECT_EQ(before[i].rd.state, e->state);
			EXPECT_EQ(before[i].rd.time_running, e->time_running);
			for (k = 0; k < 2; k++) {
				EXPECT_EQ(before[i].v[k].value, e->values[k].value);
				EXPECT_EQ(before[i].v[k].overflows, e->values[k].overflows);
			}
			if (nv > 2) {
				EXPECT_TRUE(all_bytes(&e->values[2], VAL_SZ, AMUPMU_FILL_BYTE)) {
					TH_LOG("room %u values: value 2 of cpu %u written", nv,
					       set[i]);
				}
			}
		}
		EXPECT_TRUE(all_bytes(ra.buf + nset * amupmu_read_all_stride(nv),
				      ra.len - nset * amupmu_read_all_stride(nv),
				      AMUPMU_FILL_BYTE)) {
			TH_LOG("room for %u entries: entries past the %u CPUs written", nc, nset);
		}
	}
	free(ra.buf);
	free(before);
	free(after);
}

TEST_HARNESS_MAIN
