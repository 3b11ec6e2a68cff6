// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu PMU shared mode: multiplexed groups (AMUPMU_PMU_CONFIG_MULTIPLEX)
 * and per-event times (AMUPMU_PMU_READ_TIMES).
 *
 *  - a group with more events than the PMU has counters is refused with
 *    EBUSY when pinned (the default) and accepted with the multiplex flag;
 *    then every event runs part of the time (time_running < time_enabled)
 *    and the scaled estimate of a fixed instruction loop is near the exact
 *    count;
 *  - a multiplexed group's READ needs AMUPMU_PMU_READ_TIMES (EINVAL
 *    without), also with AMUPMU_PMU_READ_ALL, and DISABLE stops its times;
 *  - READ_TIMES on a pinned group gives every event the group's time
 *    enabled and the CPU's time running;
 *  - the flag is EOPNOTSUPP in exclusive mode, unknown flags EINVAL.
 *
 * Backend: the QEMU TCG PMUv3 of the board (6 event counters + cycle
 * counter), stock devicetree (arm_pmu owns the PMU: shared mode) or the
 * amupmu devicetree (exclusive mode: only the refusal runs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "amupmu_test.h"

#define EV_INST_RETIRED	0x08
#define EV_CPU_CYCLES	0x11
#define NR_MUX		9	/* more than 6 event counters + the cycle counter */
#define LOOP_INSNS	20000000ULL

FIXTURE(mux) {
	int fd;
	struct amupmu_info info;
	bool shared;
	__u32 event;	/* INST_RETIRED where QEMU counts it (-icount), else CPU_CYCLES */
	__u64 cpus[1];
	char backend[160];
};

FIXTURE_SETUP(mux)
{
	struct amupmu_cpu_info c0;
	char board[96];

	AMUPMU_OPEN_DEVICE(self->fd);
	ASSERT_EQ(0, amupmu_query(self->fd, &self->info, &c0, 1));
	self->event = c0.pmceid0 & (1ULL << EV_INST_RETIRED) ? EV_INST_RETIRED : EV_CPU_CYCLES;
	self->shared = self->info.features & AMUPMU_FEAT_PMU_SHARED;
	self->cpus[0] = 1;	/* CPU 0 */
	amupmu_board_line(board, sizeof(board));
	snprintf(self->backend, sizeof(self->backend), "QEMU TCG PMUv3, %s, event 0x%x; board \"%s\"",
		 self->shared ? "shared mode (perf core)" :
		 self->info.pmu_owner == AMUPMU_PMU_OWNER_AMUPMU ? "exclusive mode" : "no PMU sessions",
		 self->event, board[0] ? board : "unknown");
}

FIXTURE_TEARDOWN(mux)
{
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * CONFIG of @n events on CPU 0, each @event at EL0 (QEMU implements few
 * events; perf core schedules duplicates as separate events all the same).
 */
static int mux_config(int fd, const __u64 *cpus, unsigned int n, __u32 flags, __u32 event)
{
	struct amupmu_pmu_event ev[AMUPMU_PMU_MAX_EVENTS];
	struct amupmu_pmu_config cfg;
	unsigned int i;

	memset(ev, 0, sizeof(ev));
	for (i = 0; i < n; i++) {
		ev[i].event = event;
		ev[i].flags = AMUPMU_EV_EXCL_KERNEL | AMUPMU_EV_EXCL_HV;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.flags = flags;
	cfg.nr_events = n;
	cfg.event_size = sizeof(ev[0]);
	cfg.events_uptr = (__u64)(uintptr_t)ev;
	cfg.cpus_uptr = (__u64)(uintptr_t)cpus;
	cfg.cpus_len = sizeof(__u64);
	return amupmu_ioctl(fd, AMUPMU_PMU_CONFIG, &cfg);
}

static int mux_ctl(int fd, __u32 op)
{
	struct amupmu_pmu_ctl c = { .size = sizeof(c), .op = op };

	return amupmu_ioctl(fd, AMUPMU_PMU_CTL, &c);
}

/* READ of CPU 0 with @flags into @v (AMUPMU_PMU_MAX_EVENTS room). */
static int mux_read(int fd, __u32 flags, struct amupmu_pmu_value_times *v,
		    struct amupmu_pmu_read *rd)
{
	memset(rd, 0, sizeof(*rd));
	rd->size = sizeof(*rd);
	rd->flags = flags;
	rd->nr_values = AMUPMU_PMU_MAX_EVENTS;
	rd->values_uptr = (__u64)(uintptr_t)v;
	return amupmu_ioctl(fd, AMUPMU_PMU_READ, rd);
}

#define NEED_SHARED() do {							\
	AMUPMU_SKIPPED_IN_SETUP(self->fd);					\
	TH_LOG("backend: %s", self->backend);					\
	if (!self->shared)							\
		SKIP(return, "not shared mode (pmu_owner %u, features 0x%llx)",	\
		     self->info.pmu_owner,					\
		     (unsigned long long)self->info.features);			\
	ASSERT_EQ(0, amupmu_pin_cpu(0));					\
} while (0)

/* Pinned: more events than counters is EBUSY; multiplexed: accepted, each runs part of the time. */
TEST_F(mux, more_events_than_counters)
{
	struct amupmu_pmu_value_times v[AMUPMU_PMU_MAX_EVENTS], w[AMUPMU_PMU_MAX_EVENTS];
	struct amupmu_pmu_read rd;
	unsigned int e, partial = 0;
	__u64 exact = 0;

	NEED_SHARED();
	ASSERT_EQ(-EBUSY, mux_config(self->fd, self->cpus, NR_MUX, 0, self->event));
	/* refused: nothing kept, a group that fits works */
	ASSERT_EQ(0, mux_config(self->fd, self->cpus, 2, 0, self->event));
	ASSERT_EQ(0, mux_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE));

	ASSERT_EQ(0, mux_config(self->fd, self->cpus, NR_MUX, AMUPMU_PMU_CONFIG_MULTIPLEX,
				self->event));
	ASSERT_EQ(-EINVAL, mux_read(self->fd, 0, v, &rd));
	ASSERT_EQ(0, mux_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	amupmu_insn_loop(LOOP_INSNS / 2);	/* two instructions per iteration */
	ASSERT_EQ(0, mux_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
	ASSERT_EQ(0, mux_read(self->fd, AMUPMU_PMU_READ_TIMES, v, &rd));
	ASSERT_EQ((__u32)NR_MUX, rd.nr_values);
	EXPECT_TRUE(!!(rd.state & AMUPMU_READ_SHARED));
	for (e = 0; e < NR_MUX; e++) {
		TH_LOG("event %u: %llu in %llu of %llu ns", e, (unsigned long long)v[e].value,
		       (unsigned long long)v[e].time_running,
		       (unsigned long long)v[e].time_enabled);
		EXPECT_LT(0ULL, v[e].time_enabled);
		EXPECT_LE(v[e].time_running, v[e].time_enabled);
		if (v[e].time_running < v[e].time_enabled)
			partial++;
		/* cycles (no -icount) run at other rates: no bound for them */
		if (v[e].time_running && self->event == EV_INST_RETIRED) {
			/* the scaled estimate of the loop's instructions */
			__u64 est = (__u64)((double)v[e].value * v[e].time_enabled /
					    v[e].time_running);

			EXPECT_LT(LOOP_INSNS * 8 / 10, est);
			EXPECT_GT(LOOP_INSNS * 12 / 10, est);
			exact += est;
		}
	}
	/* 9 events on 7 counters (one of them the cycle counter, which none of these fits) */
	EXPECT_LE(1U, partial);
	if (self->event == EV_INST_RETIRED)
		EXPECT_LT(0ULL, exact);

	/* disabled: the times stand still */
	usleep(20000);
	ASSERT_EQ(0, mux_read(self->fd, AMUPMU_PMU_READ_TIMES, w, &rd));
	for (e = 0; e < NR_MUX; e++) {
		EXPECT_EQ(v[e].time_enabled, w[e].time_enabled);
		EXPECT_EQ(v[e].value, w[e].value);
	}
	/* RESET: totals and times start over */
	ASSERT_EQ(0, mux_ctl(self->fd, AMUPMU_PMU_CTL_RESET));
	ASSERT_EQ(0, mux_read(self->fd, AMUPMU_PMU_READ_TIMES, v, &rd));
	for (e = 0; e < NR_MUX; e++) {
		EXPECT_EQ(0ULL, v[e].value);
		EXPECT_EQ(0ULL, v[e].time_enabled);
	}
}

/* READ_ALL with times: header, then 32-byte values, per CPU entry. */
TEST_F(mux, read_all_times)
{
	__u64 buf[(sizeof(struct amupmu_pmu_read_cpu) +
		   NR_MUX * sizeof(struct amupmu_pmu_value_times)) / 8 * 2];
	struct amupmu_pmu_read_cpu *ent = (void *)buf;
	struct amupmu_pmu_value_times *v = (void *)(ent + 1);
	struct amupmu_pmu_read rd;
	unsigned int e;

	NEED_SHARED();
	ASSERT_EQ(0, mux_config(self->fd, self->cpus, NR_MUX, AMUPMU_PMU_CONFIG_MULTIPLEX,
				self->event));
	ASSERT_EQ(0, mux_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	amupmu_insn_loop(LOOP_INSNS / 4);
	memset(buf, 0xaa, sizeof(buf));
	memset(&rd, 0, sizeof(rd));
	rd.size = sizeof(rd);
	rd.flags = AMUPMU_PMU_READ_ALL;
	rd.nr_cpus = 1;
	rd.nr_values = NR_MUX;
	rd.values_uptr = (__u64)(uintptr_t)buf;
	ASSERT_EQ(-EINVAL, amupmu_ioctl(self->fd, AMUPMU_PMU_READ, &rd));
	rd.flags = AMUPMU_PMU_READ_ALL | AMUPMU_PMU_READ_TIMES;
	ASSERT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_PMU_READ, &rd));
	ASSERT_EQ(1U, rd.nr_cpus);
	EXPECT_EQ(0U, ent->cpu);
	EXPECT_EQ((__u32)(AMUPMU_READ_ENABLED | AMUPMU_READ_SHARED), ent->state);
	EXPECT_EQ((__u32)(AMUPMU_READ_ENABLED | AMUPMU_READ_SHARED), rd.state);
	for (e = 0; e < NR_MUX; e++) {
		EXPECT_LT(0ULL, v[e].time_enabled);
		EXPECT_LE(v[e].time_running, v[e].time_enabled);
	}
	/* nothing beyond the entry's values was written */
	EXPECT_EQ(0xaaaaaaaaaaaaaaaaULL, *(__u64 *)(v + NR_MUX));
}

/* READ_TIMES of a pinned group: the group's time enabled, the CPU's time running. */
TEST_F(mux, times_of_pinned_group)
{
	struct amupmu_pmu_value_times v[AMUPMU_PMU_MAX_EVENTS];
	struct amupmu_pmu_value plain[AMUPMU_PMU_MAX_EVENTS];
	struct amupmu_pmu_read rd, r2;
	unsigned int e;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	TH_LOG("backend: %s", self->backend);
	if (!(self->info.features & (AMUPMU_FEAT_PMU_SHARED | AMUPMU_FEAT_PMU_EXCLUSIVE)))
		SKIP(return, "no PMU sessions here (pmu_owner %u)", self->info.pmu_owner);
	ASSERT_EQ(0, amupmu_pin_cpu(0));
	ASSERT_EQ(0, mux_config(self->fd, self->cpus, 3, 0, self->event));
	ASSERT_EQ(0, mux_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	amupmu_insn_loop(LOOP_INSNS / 20);
	ASSERT_EQ(0, mux_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
	ASSERT_EQ(0, mux_read(self->fd, AMUPMU_PMU_READ_TIMES, v, &rd));
	ASSERT_EQ(3U, rd.nr_values);
	for (e = 0; e < 3; e++) {
		EXPECT_EQ(rd.time_enabled, v[e].time_enabled);
		EXPECT_EQ(rd.time_running, v[e].time_running);
	}
	/* the values are those of a READ without times */
	memset(&r2, 0, sizeof(r2));
	r2.size = sizeof(r2);
	r2.nr_values = AMUPMU_PMU_MAX_EVENTS;
	r2.values_uptr = (__u64)(uintptr_t)plain;
	ASSERT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_PMU_READ, &r2));
	for (e = 0; e < 3; e++)
		EXPECT_EQ(plain[e].value, v[e].value);
}

/* The flag is shared mode's; flags beyond it are refused; both change nothing. */
TEST_F(mux, flag_validation)
{
	struct amupmu_pmu_value_times v[AMUPMU_PMU_MAX_EVENTS];
	struct amupmu_pmu_read rd;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	TH_LOG("backend: %s", self->backend);
	if (!(self->info.features & (AMUPMU_FEAT_PMU_SHARED | AMUPMU_FEAT_PMU_EXCLUSIVE)))
		SKIP(return, "no PMU sessions here (pmu_owner %u)", self->info.pmu_owner);
	EXPECT_EQ(-EINVAL, mux_config(self->fd, self->cpus, 1, 1U << 1, self->event));
	EXPECT_EQ(-EINVAL, mux_config(self->fd, self->cpus, 1, 1U << 31, self->event));
	if (!self->shared)
		EXPECT_EQ(-EOPNOTSUPP, mux_config(self->fd, self->cpus, 1,
						  AMUPMU_PMU_CONFIG_MULTIPLEX, self->event));
	/* refused: the session has no group */
	EXPECT_EQ(-ENODEV, mux_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	EXPECT_EQ(-EINVAL, mux_read(self->fd, 1U << 2, v, &rd));
}

TEST_HARNESS_MAIN
