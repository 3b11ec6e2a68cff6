/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amupmu: PMUv3 exclusive mode's per-CPU state, private to the PMU unit:
 * amupmu_pmu.c (the PMU's registers, interrupt and power management) keeps
 * it, amupmu_pmu_cmd.c (the PMU commands of a session) allocates counters
 * in it and reads them. It also holds the CPU's totals of lost samples and
 * throttles of both modes (counted by amupmu_sess_sample() and
 * amupmu_sess_throttled(), read by amupmu_pmu_totals()). What both use on
 * the read and interrupt paths is here as inline functions, so that those
 * paths keep no calls.
 *
 * Locking, outermost first:
 *  - cpus_read_lock(): every session command that touches a CPU's PMU holds
 *    it, so CPUs cannot come or go meanwhile; the hotplug callbacks run
 *    under the hotplug write lock, so they exclude session commands.
 *  - amupmu_pmu_own_rwsem: read by session commands, written when the
 *    device goes away (amupmu_pmu_release()), which ends every group.
 *  - amupmu_session.lock: one command of a session at a time.
 *  - amupmu_pmu_alloc_lock: counter allocation (the used masks and owners).
 *  - amupmu_pmu_cpu.lock (raw, IRQ-safe): all of a CPU's counter state;
 *    taken by the overflow handler, the CPU PM notifier and the IPIs on
 *    that CPU, and by commands for an offline CPU. The hardware of a CPU is
 *    only touched on that CPU.
 *  - the ring's lock (raw): inside amupmu_pmu_cpu.lock, by the handler.
 *
 * Also taken in this order:
 *  - mmap_lock -> amupmu_session.lock: mmap() of the ring takes the
 *    session's lock under the mmap lock, so nothing copies to or from user
 *    space, or calls account_locked_vm(), under the session's lock or the
 *    hotplug lock.
 *  - amupmu_session.read_lock -> amupmu_session.lock.
 *  - amupmu_pmu_own_rwsem -> amupmu_dev.lock (claim and release).
 *  - amupmu_sessions_lock is innermost.
 *  - amupmu_pmu_cpu.lock is also taken by the unthrottle hrtimer, by the
 *    read fast path (with the session's lock held by mutex_trylock()) and
 *    by the sysfs counters view (amupmu_pmu_cpu_counters()).
 */
#ifndef AMUPMU_PMU_EXCL_H
#define AMUPMU_PMU_EXCL_H

#include <linux/hrtimer.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <asm/local64.h>
#include <asm/sysreg.h>

#include "amupmu.h"
#include "amupmu_compat.h"
#include "amupmu_counter.h"
#include "amupmu_session.h"

/* PMCCNTR_EL0's bit in PMCNTEN/PMINTEN/PMOVS (the kernel's name from 6.4) */
#ifdef ARMV8_PMU_CYCLE_IDX
#define AMUPMU_CYCLE_IDX	ARMV8_PMU_CYCLE_IDX
#else
#define AMUPMU_CYCLE_IDX	31
#endif
static_assert(AMUPMU_CYCLE_IDX == 31);

/**
 * struct amupmu_pmu_counter - one hardware counter of one CPU
 * @owner: the session it is allocated to, NULL when free
 * @evtyper: PMEVTYPER<n>_EL0 (or PMCCFILTR_EL0) value
 * @ev: index of the counter's event in its owner's group
 * @prev: hardware value at the last update (what a power-down restores)
 * @total: 64-bit total up to @prev
 * @overflows: overflow interrupts taken
 * @period: sample period, 0 when the counter only counts
 * @mask: its width mask, 0 until it is first programmed on its CPU
 * @span: events from one re-arm to the next overflow: @period, 2^31 for a
 *	32-bit counter that only counts, 0 when the overflow only folds
 *
 * All of it under the CPU's amupmu_pmu_cpu.lock. A power-of-two size
 * (64 bytes): the read path indexes an array of them.
 */
struct amupmu_pmu_counter {
	struct amupmu_session *owner;
	u32 evtyper;
	u8 ev;
	u64 prev;
	u64 total;
	u64 overflows;
	u64 period;
	u64 mask;
	u64 span;
};

static_assert((sizeof(struct amupmu_pmu_counter) & (sizeof(struct amupmu_pmu_counter) - 1)) == 0);

/**
 * struct amupmu_pmu_cpu - the PMU of one CPU in exclusive mode
 * @lock: guards everything below but @nr_counters
 * @used: counters allocated (bit n: event counter n, bit 31: cycle
 *	counter); changed under amupmu_pmu_alloc_lock and @lock, so either
 *	is enough to read it
 * @running: counters of enabled groups: they count while the CPU is live
 * @live: the CPU is online and its counters are programmed
 * @cpu: the CPU's number
 * @mask: width mask of its event counters (32 or 64 bits)
 * @ovs_saved: counters whose overflow was pending (PMOVSSET_EL0) when the
 *	CPU was saved: amupmu_pmu_hw_setup() raises it again, so that its
 *	interrupt re-arms the counter and samples as it would have
 * @throttled: sampling counters whose interrupt is masked until
 *	@unthrottle fires (the CPU went over its budget)
 * @irqs: sample interrupts taken in the window that started at @window
 * @window: local_clock() when the window started (a window is a tick long)
 * @throttle_seq: throttles of this CPU so far (see amupmu_sess_cpu)
 * @unthrottle: pinned to the CPU, one tick after a throttle: unmasks the
 *	@throttled counters (runs in hard interrupt context, on the CPU
 *	unless it went offline meanwhile)
 * @nr_counters: PMCR_EL0.N
 * @lost_total: sample records lost on the CPU because a session's ring
 *	was full, over every session of either mode since the module loaded
 *	(each amupmu_sess_cpu.lost increment adds one)
 * @throttled_total: throttles of a session's sample interrupts on the
 *	CPU, idem (each amupmu_sess_cpu.throttled increment adds one)
 * @cnt: the counters
 *
 * @lost_total and @throttled_total are not under @lock (shared mode does
 * not take it): only their CPU adds to them, in its sample interrupt
 * (exclusive mode's handler, or perf core's overflow handler in shared
 * mode; a hard interrupt, never an NMI: the shared handler returns at once
 * in one), with local64_inc(); any CPU reads them with local64_read().
 * Nothing resets them: not hotplug, CPU PM, amupmu_pmu_release() or a
 * session's RESET; they start at 0 when the module loads (alloc_percpu()).
 */
struct amupmu_pmu_cpu {
	raw_spinlock_t lock;
	u32 used;
	u32 running;
	bool live;
	unsigned int cpu;
	u64 mask;
	u32 ovs_saved;
	u32 throttled;
	unsigned int irqs;
	u64 window;
	u64 throttle_seq;
	struct hrtimer unthrottle;
	unsigned int nr_counters;
	local64_t lost_total;
	local64_t throttled_total;
	struct amupmu_pmu_counter cnt[AMUPMU_PMU_MAX_EVENTS];
};

/* per CPU, allocated at load (amupmu_pmu_init()), freed at unload */
extern struct amupmu_pmu_cpu __percpu *amupmu_pmu_cpus;
/* the order of these locks: see the top of this file */
extern struct mutex amupmu_pmu_alloc_lock;
extern struct rw_semaphore amupmu_pmu_own_rwsem;

/* amupmu_pmu.c: the smallest sample_period (module parameter sample_period_min) */
extern unsigned int amupmu_sample_period_min;

static __always_inline struct amupmu_pmu_cpu *amupmu_pc(unsigned int cpu)
{
	return per_cpu_ptr(amupmu_pmu_cpus, cpu);
}

static __always_inline u8 *amupmu_sess_idx(struct amupmu_session *s, unsigned int cpu)
{
	return amupmu_sc(s, cpu)->idx;
}

/*
 * PMEVCNTR<n>_EL0 by number: no PMSELR_EL0 write and ISB (amupmu_pmu.c
 * writes them, and PMEVTYPER<n>_EL0, the same way). PMEVN_SWITCH() is the
 * kernel's (amupmu_compat.h supplies it before 6.4).
 */
#define AMUPMU_RD_EVCNTR(n)		return read_sysreg(pmevcntr##n##_el0)

static __always_inline u64 amupmu_hw_read_counter(unsigned int idx)
{
	if (idx == AMUPMU_CYCLE_IDX)
		return read_sysreg(pmccntr_el0);
	PMEVN_SWITCH(idx, AMUPMU_RD_EVCNTR);
	return 0;
}

#undef AMUPMU_RD_EVCNTR

/*
 * The total counter @idx (@c) would have after a fold, without folding: a
 * read changes no state. Any wrap since the last fold (at most one: its
 * interrupt folds it) is in the masked delta.
 */
static __always_inline u64 amupmu_counter_peek(const struct amupmu_pmu_counter *c,
					       unsigned int idx)
{
	return c->total + amupmu_counter_delta(amupmu_hw_read_counter(idx), c->prev, c->mask);
}

/* amupmu_pmu.c: the largest sample period of a CPU's event counters */
u64 amupmu_pmu_period_max(const struct amupmu_cpu_info *ci);

/*
 * amupmu_pmu.c: an exclusive group's counters on every CPU of its set, on
 * the CPU when it is online (an IPI), else in its saved state. Under
 * cpus_read_lock(), amupmu_pmu_own_rwsem (read; the caller has checked
 * that the group is not stale) and the session's lock; lockdep checks the
 * last two (modules cannot call lockdep_assert_cpus_held()).
 */
void amupmu_pmu_group_program(struct amupmu_session *s);
void amupmu_pmu_group_enable(struct amupmu_session *s);
void amupmu_pmu_group_disable(struct amupmu_session *s);
void amupmu_pmu_group_reset(struct amupmu_session *s);
void amupmu_pmu_group_free(struct amupmu_session *s);

#endif /* AMUPMU_PMU_EXCL_H */
