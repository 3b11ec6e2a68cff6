// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: PMUv3 exclusive mode. When the "amupmu,pmuv3" devicetree node
 * bound, amupmu programs the PMU of every CPU itself and takes its
 * overflow PPI; sessions (open files, amupmu_session.c) count groups of
 * events per CPU. The PMU commands of a session (CONFIG, CTL, READ and its
 * fast path) are here for both modes: a group in shared mode counts
 * through perf core (amupmu_perf.c).
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
 * Sampling: an event with a sample_period has its counter preloaded to
 * 2^width - period; each overflow interrupt folds the count into the total,
 * re-arms the counter for the next period (keeping the events counted since
 * the overflow) and writes a struct amupmu_sample into the session's ring.
 * Readers of the ring (read(), poll()) are woken through an irq_work, queued
 * only when one waits.
 *
 * Wraps: a total is the sum of the counter's deltas modulo its width, so
 * fewer than 2^width events may pass between two folds. 64-bit counters
 * never get near that. A 32-bit counter that only counts is re-armed like a
 * sampling one, every 2^31 events (as perf does): its interrupt then folds
 * it 2^31 events before the next wrap could hide one, however late the
 * interrupt comes and however rarely the session reads.
 *
 * Throttling: a CPU takes at most DIV_ROUND_UP(sample_rate_max, HZ) sample
 * interrupts per tick (a window of TICK_NSEC from its first). The one that
 * goes over masks the interrupts of the CPU's sampling counters
 * (PMINTENCLR_EL1; they keep counting) and starts a pinned hrtimer one tick
 * later that unmasks them, re-arming a counter that overflowed meanwhile
 * (that overflow gives no sample). Each session whose counter was masked
 * counts one throttle on that CPU (READ's throttled, a netlink event). As
 * perf's throttle, with the budget per CPU rather than per event: what
 * bounds the interrupt load is the CPU's rate, whoever asks for it.
 *
 * Power-down: a CPU whose idle state powers the PMU down passes through the
 * CPU PM notifier, which saves each counter's hardware value on entry and
 * writes the same value back on exit, so a sampling counter keeps the part
 * of its period that is left (as arm_pmu does).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/cpu_pm.h>
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/pid_namespace.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/jiffies.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <asm/irq_regs.h>
#include <asm/sysreg.h>
#include <asm/virt.h>
#include <clocksource/arm_arch_timer.h>

#include "amupmu.h"
#include "amupmu_compat.h"
#include "amupmu_counter.h"
#include "amupmu_pmu.h"
#include "amupmu_session.h"

static_assert(AMUPMU_PMEVTYPER_P == ARMV8_PMU_EXCLUDE_EL1);
static_assert(AMUPMU_PMEVTYPER_U == ARMV8_PMU_EXCLUDE_EL0);
static_assert(AMUPMU_PMEVTYPER_NSH == ARMV8_PMU_INCLUDE_EL2);

/* The counter width: 32 or 64, anything else refused at load (EINVAL). */
static unsigned int pmu_counter_bits = 64;

static int amupmu_counter_bits_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v) || (v != 32 && v != 64))
		return -EINVAL;
	*(unsigned int *)kp->arg = v;
	return 0;
}

static const struct kernel_param_ops amupmu_counter_bits_ops = {
	.set = amupmu_counter_bits_set,
	.get = param_get_uint,
};

module_param_cb(pmu_counter_bits, &amupmu_counter_bits_ops, &pmu_counter_bits, 0444);
MODULE_PARM_DESC(pmu_counter_bits,
		 "event counter width: 64 (PMCR_EL0.LP where PMUv3p5 has it) or 32 (overflows accumulated by the interrupt); other values are refused");

/*
 * The smallest sample_period: an interrupt per 10,000 events at most. The
 * module parameter can raise it (or lower it to 1,000) at load time or,
 * for root, later through /sys/module/amupmu/parameters/; a write out of
 * range is refused with EINVAL and changes nothing.
 */
#define AMUPMU_PERIOD_MIN_DEFAULT	10000
#define AMUPMU_PERIOD_MIN_FLOOR		1000

unsigned int amupmu_sample_period_min = AMUPMU_PERIOD_MIN_DEFAULT;

/*
 * A 32-bit parameter of at least @min: not a number, or beyond 32 bits
 * (kstrtouint: ERANGE), EINVAL all the same; a refused write changes nothing
 */
static int amupmu_param_set_uint_min(const char *val, unsigned int min, unsigned int *dst)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v) || v < min)
		return -EINVAL;
	WRITE_ONCE(*dst, v);
	return 0;
}

static int amupmu_period_min_set(const char *val, const struct kernel_param *kp)
{
	return amupmu_param_set_uint_min(val, AMUPMU_PERIOD_MIN_FLOOR, &amupmu_sample_period_min);
}

static const struct kernel_param_ops amupmu_period_min_ops = {
	.set = amupmu_period_min_set,
	.get = param_get_uint,
};

module_param_cb(sample_period_min, &amupmu_period_min_ops, &amupmu_sample_period_min, 0644);
MODULE_PARM_DESC(sample_period_min,
		 "smallest sample_period accepted, 1000 .. 4294967295 (default 10000)");

/*
 * The sample interrupts a CPU may take per second in exclusive mode:
 * perf's default kernel.perf_event_max_sample_rate (DEFAULT_MAX_SAMPLE_RATE,
 * 100000), which a module cannot read (sysctl_perf_event_sample_rate is not
 * exported on 6.1 or 6.12). Per tick: DIV_ROUND_UP(rate, HZ) interrupts,
 * then the CPU's sampling counters are throttled until the next tick. Root
 * may change it at any time through /sys/module/amupmu/parameters/.
 */
#define AMUPMU_SAMPLE_RATE_DEFAULT	100000

static unsigned int amupmu_sample_rate_max = AMUPMU_SAMPLE_RATE_DEFAULT;

static int amupmu_sample_rate_set(const char *val, const struct kernel_param *kp)
{
	return amupmu_param_set_uint_min(val, 1, &amupmu_sample_rate_max);
}

static const struct kernel_param_ops amupmu_sample_rate_ops = {
	.set = amupmu_sample_rate_set,
	.get = param_get_uint,
};

module_param_cb(sample_rate_max, &amupmu_sample_rate_ops, &amupmu_sample_rate_max, 0644);
MODULE_PARM_DESC(sample_rate_max,
		 "exclusive mode: sample interrupts per second and CPU before they are throttled until the next tick, 1 .. 4294967295 (default 100000, perf's default perf_event_max_sample_rate); shared mode follows kernel.perf_event_max_sample_rate");

/* The interrupts a CPU may take in a tick before it is throttled. */
static unsigned int amupmu_sample_budget(void)
{
	/* in 64 bits: rates near U32_MAX must not wrap to a budget of 0 */
	return DIV_ROUND_UP_ULL((u64)READ_ONCE(amupmu_sample_rate_max), HZ);
}

/* PMCCNTR_EL0's bit in PMCNTEN/PMINTEN/PMOVS (the kernel's name from 6.4) */
#ifdef ARMV8_PMU_CYCLE_IDX
#define AMUPMU_CYCLE_IDX	ARMV8_PMU_CYCLE_IDX
#else
#define AMUPMU_CYCLE_IDX	31
#endif
static_assert(AMUPMU_CYCLE_IDX == 31);
#define AMUPMU_CPU_CYCLES	0x11
#define AMUPMU_PMCCFILTR_MASK	(ARMV8_PMU_EXCLUDE_EL1 | ARMV8_PMU_EXCLUDE_EL0 | \
				 ARMV8_PMU_INCLUDE_EL2)
#define AMUPMU_EV_ALL		(AMUPMU_EV_EXCL_USER | AMUPMU_EV_EXCL_KERNEL | \
				 AMUPMU_EV_EXCL_HV | AMUPMU_EV_EXCL_HOST | \
				 AMUPMU_EV_EXCL_GUEST | AMUPMU_EV_RAW)

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
 * @cnt: the counters
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
	struct amupmu_pmu_counter cnt[AMUPMU_PMU_MAX_EVENTS];
};

/* per CPU, allocated at load (amupmu_pmu_init()), freed at unload */
static struct amupmu_pmu_cpu __percpu *amupmu_pmu_cpus;
static DEFINE_MUTEX(amupmu_pmu_alloc_lock);
static DECLARE_RWSEM(amupmu_pmu_own_rwsem);
static DEFINE_PER_CPU(u8, amupmu_pmu_irq_cookie);

static struct amupmu_pmu_cpu *amupmu_pc(unsigned int cpu)
{
	return per_cpu_ptr(amupmu_pmu_cpus, cpu);
}

static u8 *amupmu_sess_idx(struct amupmu_session *s, unsigned int cpu)
{
	return amupmu_sc(s, cpu)->idx;
}

/* ------------------------------------------------------------ hardware, on the CPU */

/*
 * PMEVCNTR<n>_EL0 and PMEVTYPER<n>_EL0 by number, for reads and writes
 * alike: no PMSELR_EL0 write and ISB. PMEVN_SWITCH() is the kernel's
 * (amupmu_compat.h supplies it before 6.4).
 */
#define AMUPMU_RD_EVCNTR(n)		return read_sysreg(pmevcntr##n##_el0)
#define AMUPMU_WR_EVCNTR(n)		write_sysreg(val, pmevcntr##n##_el0)
#define AMUPMU_WR_EVTYPER(n)		write_sysreg(val, pmevtyper##n##_el0)

static __always_inline u64 amupmu_hw_read_counter(unsigned int idx)
{
	if (idx == AMUPMU_CYCLE_IDX)
		return read_sysreg(pmccntr_el0);
	PMEVN_SWITCH(idx, AMUPMU_RD_EVCNTR);
	return 0;
}

static void amupmu_hw_write_counter(unsigned int idx, u64 val)
{
	if (idx == AMUPMU_CYCLE_IDX)
		write_sysreg(val, pmccntr_el0);
	else
		PMEVN_SWITCH(idx, AMUPMU_WR_EVCNTR);
}

static void amupmu_hw_write_type(unsigned int idx, u32 evtyper)
{
	u64 val = evtyper;

	if (idx == AMUPMU_CYCLE_IDX)
		write_sysreg(val & AMUPMU_PMCCFILTR_MASK, pmccfiltr_el0);
	else
		PMEVN_SWITCH(idx, AMUPMU_WR_EVTYPER);
}

/* The cycle counter overflows at 64 bits (PMCR_EL0.LC), event counters at pc->mask. */
static __always_inline u64 amupmu_counter_mask(const struct amupmu_pmu_cpu *pc, unsigned int idx)
{
	return idx == AMUPMU_CYCLE_IDX ? U64_MAX : pc->mask;
}

/*
 * Fold the hardware count of counter @idx (@c) into its total: the delta
 * modulo the width. Inlined into the loops of the read and interrupt paths.
 */
static __always_inline void amupmu_counter_fold(struct amupmu_pmu_counter *c, unsigned int idx)
{
	u64 now = amupmu_hw_read_counter(idx) & c->mask;

	c->total += amupmu_counter_delta(now, c->prev, c->mask);
	c->prev = now;
}

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

/* Stop a counter and clear it in hardware; its total is kept. */
static void amupmu_hw_counter_stop(unsigned int idx)
{
	write_sysreg(BIT(idx), pmcntenclr_el0);
	write_sysreg(BIT(idx), pmintenclr_el1);
	isb();
	write_sysreg(BIT(idx), pmovsclr_el0);
}

/*
 * Start a counter over: one span from its next overflow (see struct
 * amupmu_pmu_counter), its width that of the CPU. Not on the hardware.
 */
static void amupmu_counter_init(struct amupmu_pmu_cpu *pc, unsigned int idx)
{
	struct amupmu_pmu_counter *c = &pc->cnt[idx];

	c->mask = amupmu_counter_mask(pc, idx);
	c->span = amupmu_counter_span(c->period, c->mask);
	c->prev = -c->span & c->mask;
}

/*
 * Program counter @idx with its saved value @prev (what it had when it was
 * saved, or its start value), interrupt enabled, counting when its bit in
 * pc->running is set. On the CPU, under pc->lock.
 */
static void amupmu_hw_counter_program(struct amupmu_pmu_cpu *pc, unsigned int idx)
{
	struct amupmu_pmu_counter *c = &pc->cnt[idx];

	pc->throttled &= ~BIT(idx);	/* its interrupt is enabled below */
	amupmu_hw_counter_stop(idx);
	amupmu_hw_write_type(idx, c->evtyper);
	amupmu_hw_write_counter(idx, c->prev);
	write_sysreg(BIT(idx), pmintenset_el1);
	if (pc->running & BIT(idx))
		write_sysreg(BIT(idx), pmcntenset_el0);
	isb();
}

/*
 * After the overflow of a re-armed counter: fold its count in and set it to
 * overflow again one span after the last overflow, keeping the events it
 * counted since (unless they already exceed a span). Under pc->lock.
 */
static void amupmu_counter_rearm(struct amupmu_pmu_cpu *pc, unsigned int idx)
{
	struct amupmu_pmu_counter *c = &pc->cnt[idx];
	u64 now = amupmu_hw_read_counter(idx) & c->mask;

	c->total += amupmu_counter_delta(now, c->prev, c->mask);
	c->prev = amupmu_counter_next(now, c->span, c->mask);
	amupmu_hw_write_counter(idx, c->prev);
}

/* The sample record of a group, with room for its values. */
struct amupmu_sample_buf {
	struct amupmu_sample rec;
	u64 values[AMUPMU_PMU_MAX_EVENTS];
};

static void amupmu_collect_totals(struct amupmu_pmu_cpu *pc, const u8 *idx, unsigned int n,
				  u64 *totals);

/**
 * amupmu_sess_sample() - write a sample into the session's ring
 * @s: the session
 * @cpu: this CPU
 * @ev: the event whose counter overflowed (its index in the group)
 * @regs: the interrupted context, NULL when unknown
 * @values: the group's totals on this CPU, NULL to have the exclusive
 *	counters folded and read (exclusive mode)
 *
 * The record has the interrupted context (PC, mode, task as the session's
 * pid namespace sees it), the generic timer and the group's totals. An
 * event that excludes the kernel whose interrupt came in the kernel (skid)
 * gives no sample: no kernel address for a user-only event (as perf drops
 * them). In the overflow interrupt of either mode, on @cpu, with the
 * session's state of that CPU locked (exclusive: amupmu_pmu_cpu.lock).
 */
void amupmu_sess_sample(struct amupmu_session *s, unsigned int cpu, unsigned int ev,
			struct pt_regs *regs, const u64 *values)
{
	struct amupmu_sess_cpu *sc = amupmu_sc(s, cpu);
	/* filled up to len, the part copied: no zeroing (INIT_STACK_ALL_ZERO) */
	struct amupmu_sample_buf b __uninitialized;
	u32 len = sizeof(b.rec) + s->nr_events * sizeof(u64);
	bool user = regs && user_mode(regs);

	if (s->no_kernel[ev] && !user) {
		sc->skid++;
		return;
	}
	b.rec = (struct amupmu_sample) {
		.size = len,
		.type = AMUPMU_SAMPLE_PMU_OVERFLOW,
		.mode = user ? AMUPMU_MODE_USER : AMUPMU_MODE_KERNEL,
		.event = ev,
		.cpu = cpu,
		.nr_values = s->nr_events,
		.pid = task_tgid_nr_ns(current, s->pid_ns),
		.tid = task_pid_nr_ns(current, s->pid_ns),
		.time = arch_timer_read_counter(),
		.pc = regs ? instruction_pointer(regs) : 0,
	};
	if (values)
		memcpy(b.values, values, s->nr_events * sizeof(u64));
	else
		amupmu_collect_totals(amupmu_pc(cpu), sc->idx, s->nr_events, b.values);
	if (amupmu_ring_write(s->ring, &b, len)) {
		sc->samples++;
		/*
		 * The wake-up is an irq_work, i.e. an IPI to this CPU: only
		 * when a reader waits. wq_has_sleeper()'s barrier pairs with
		 * the one between a reader queueing itself and looking at the
		 * ring (set_current_state() in read(), smp_mb() in poll()).
		 */
		if (wq_has_sleeper(&s->wait))
			irq_work_queue(&s->wake);
	} else {
		sc->lost++;
		amupmu_nl_ring_lost(s->nl.id, cpu, sc->lost);
	}
}

/*
 * Stop every counter of this CPU at once (PMCR_EL0.E), as
 * armv8pmu_handle_irq() does, so that the totals folded meanwhile are of
 * one moment. Returns PMCR_EL0 as it was, for amupmu_pmu_thaw().
 */
static __always_inline u64 amupmu_pmu_freeze(void)
{
	u64 pmcr = read_sysreg(pmcr_el0);

	write_sysreg(pmcr & ~(u64)ARMV8_PMU_PMCR_E, pmcr_el0);
	isb();
	return pmcr;
}

static __always_inline void amupmu_pmu_thaw(u64 pmcr)
{
	write_sysreg(pmcr, pmcr_el0);
	isb();
}

/*
 * The CPU went over its sample budget: mask the interrupts of its sampling
 * counters until the next tick, and count a throttle for each session they
 * belong to. On the CPU, PMU frozen, under pc->lock.
 */
static void amupmu_pmu_throttle(struct amupmu_pmu_cpu *pc)
{
	unsigned long mask = 0, used = pc->used & ~pc->throttled;
	unsigned int idx;

	for_each_set_bit(idx, &used, AMUPMU_PMU_MAX_EVENTS)
		if (pc->cnt[idx].period)
			mask |= BIT(idx);
	if (!mask)
		return;
	write_sysreg(mask, pmintenclr_el1);
	isb();
	pc->throttled |= mask;
	pc->throttle_seq++;
	for_each_set_bit(idx, &mask, AMUPMU_PMU_MAX_EVENTS) {
		struct amupmu_session *s = pc->cnt[idx].owner;
		struct amupmu_sess_cpu *sc = amupmu_sc(s, pc->cpu);

		if (sc->throttle_seq == pc->throttle_seq)
			continue;
		sc->throttle_seq = pc->throttle_seq;
		sc->throttled++;
		amupmu_nl_throttle(s->nl.id, pc->cpu, sc->throttled);
	}
	/*
	 * A tick from the first throttle, not from the last: restarting a
	 * queued timer would push the unthrottle out for as long as other
	 * counters keep crossing the budget (a session configured and released
	 * over and over would keep another session's counters masked)
	 */
	if (!hrtimer_is_queued(&pc->unthrottle))
		hrtimer_start(&pc->unthrottle, ns_to_ktime(TICK_NSEC),
			      HRTIMER_MODE_REL_PINNED_HARD);
}

/* @n more sample interrupts on this CPU: throttle it past its budget. Under pc->lock. */
static void amupmu_pmu_budget(struct amupmu_pmu_cpu *pc, unsigned int n)
{
	u64 now = local_clock();

	if (now - pc->window >= TICK_NSEC) {
		pc->window = now;
		pc->irqs = 0;
	}
	pc->irqs += n;
	if (pc->irqs > amupmu_sample_budget())
		amupmu_pmu_throttle(pc);
}

/*
 * A tick after a throttle: unmask the throttled counters' interrupts. A
 * counter that overflowed while masked is re-armed from that overflow, as
 * its interrupt would have (no sample: it was throttled). On the CPU, hard
 * interrupt context; a CPU that went offline meanwhile (the timer then
 * runs on another CPU) has nothing left to do; a CPU PM save and set-up
 * keeps the throttled counters masked for it.
 */
static enum hrtimer_restart amupmu_pmu_unthrottle(struct hrtimer *t)
{
	struct amupmu_pmu_cpu *pc = container_of(t, struct amupmu_pmu_cpu, unthrottle);
	unsigned long flags, mask;
	unsigned int idx;
	u64 pmcr;

	raw_spin_lock_irqsave(&pc->lock, flags);
	mask = pc->throttled & pc->used;
	pc->throttled = 0;
	pc->irqs = 0;
	pc->window = local_clock();
	if (mask && pc->live && pc->cpu == smp_processor_id()) {
		pmcr = amupmu_pmu_freeze();
		for_each_set_bit(idx, &mask, AMUPMU_PMU_MAX_EVENTS) {
			if (read_sysreg(pmovsclr_el0) & BIT(idx)) {
				write_sysreg(BIT(idx), pmovsclr_el0);
				amupmu_counter_rearm(pc, idx);
			}
		}
		write_sysreg(mask, pmintenset_el1);
		amupmu_pmu_thaw(pmcr);
	}
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	return HRTIMER_NORESTART;
}

static irqreturn_t amupmu_pmu_irq_handler(int irq, void *dev_id)
{
	struct amupmu_pmu_cpu *pc;
	unsigned int idx, cpu, sampled = 0;
	unsigned long ovs;
	u64 pmcr;

	cpu = smp_processor_id();
	pc = amupmu_pc(cpu);
	raw_spin_lock(&pc->lock);
	/*
	 * A throttled counter's overflow stays pending for
	 * amupmu_pmu_unthrottle() (its interrupt is masked; another counter's
	 * interrupt must not re-arm and sample it early)
	 */
	ovs = read_sysreg(pmovsclr_el0) & U32_MAX & ~(unsigned long)pc->throttled;
	if (!ovs) {
		raw_spin_unlock(&pc->lock);
		return IRQ_NONE;
	}
	write_sysreg(ovs, pmovsclr_el0);
	pmcr = amupmu_pmu_freeze();
	for_each_set_bit(idx, &ovs, AMUPMU_PMU_MAX_EVENTS) {
		struct amupmu_pmu_counter *c = &pc->cnt[idx];

		if (pc->used & BIT(idx)) {
			c->overflows++;
			if (c->span)
				amupmu_counter_rearm(pc, idx);
			else
				amupmu_counter_fold(c, idx);
			if (c->period) {
				amupmu_sess_sample(c->owner, cpu, c->ev, get_irq_regs(), NULL);
				sampled++;
			}
		} else {
			/* not ours: left over from before, mask it */
			write_sysreg(BIT(idx), pmintenclr_el1);
		}
	}
	if (sampled)
		amupmu_pmu_budget(pc, sampled);
	amupmu_pmu_thaw(pmcr);
	raw_spin_unlock(&pc->lock);
	return IRQ_HANDLED;
}

/* ------------------------------------------------------------ CPU start/stop */

/*
 * Program this CPU's PMU from the saved state: a known PMCR_EL0, EL0 access
 * closed (PMUSERENR_EL0 = 0), every interrupt masked and cleared, then the
 * allocated counters with the values they had when they were saved (a
 * counter new to this CPU from its start value), counting when their group
 * is enabled. On the CPU, with the PMU known to be PMUv3.
 */
static void amupmu_pmu_hw_setup(struct amupmu_pmu_cpu *pc, unsigned int pmuver)
{
	unsigned long used, flags, throttled;
	unsigned int idx;
	u64 pmcr;

	write_sysreg(0, pmuserenr_el0);
	write_sysreg(U32_MAX, pmcntenclr_el0);
	write_sysreg(U32_MAX, pmintenclr_el1);
	write_sysreg(U32_MAX, pmovsclr_el0);
	pmcr = ARMV8_PMU_PMCR_E | ARMV8_PMU_PMCR_LC;
	if (pmu_counter_bits == 64 && pmuver >= ID_AA64DFR0_EL1_PMUVer_V3P5)
		pmcr |= ARMV8_PMU_PMCR_LP;
	write_sysreg(pmcr, pmcr_el0);
	isb();

	raw_spin_lock_irqsave(&pc->lock, flags);
	pc->mask = pmcr & ARMV8_PMU_PMCR_LP ? U64_MAX : U32_MAX;
	used = pc->used;
	/* a throttle outlives a power-down: its unthrottle timer ends it */
	throttled = pc->throttled & used;
	for_each_set_bit(idx, &used, AMUPMU_PMU_MAX_EVENTS) {
		if (pc->cnt[idx].mask != amupmu_counter_mask(pc, idx)) {
			amupmu_counter_init(pc, idx);
			pc->ovs_saved &= ~BIT(idx);
		}
		amupmu_hw_counter_program(pc, idx);
	}
	if (throttled) {
		write_sysreg(throttled, pmintenclr_el1);
		isb();
		pc->throttled = throttled;
	}
	/*
	 * An overflow the save found pending: its interrupt comes once
	 * interrupts are on again, as it would have without the power-down,
	 * and re-arms the counter from the wrapped value it was saved with.
	 * Dropped, a sampling counter would count on from just past zero and
	 * sample again only after a whole wrap (2^64 cycles for PMCCNTR_EL0).
	 */
	if (pc->ovs_saved & used) {
		write_sysreg(pc->ovs_saved & used, pmovsset_el0);
		isb();
	}
	pc->ovs_saved = 0;
	raw_spin_unlock_irqrestore(&pc->lock, flags);
}

/* Fold every allocated counter into its total and stop it. On the CPU. */
static void amupmu_pmu_hw_save(struct amupmu_pmu_cpu *pc)
{
	unsigned long used, flags;
	unsigned int idx;

	raw_spin_lock_irqsave(&pc->lock, flags);
	used = pc->used;
	/* frozen first, so that no overflow comes between the look and the stop */
	write_sysreg(used, pmcntenclr_el0);
	isb();
	pc->ovs_saved |= read_sysreg(pmovsclr_el0) & used;
	for_each_set_bit(idx, &used, AMUPMU_PMU_MAX_EVENTS) {
		amupmu_counter_fold(&pc->cnt[idx], idx);
		amupmu_hw_counter_stop(idx);
	}
	raw_spin_unlock_irqrestore(&pc->lock, flags);
}

/* The PMUv3 version of this CPU, 0 when it has none. */
static unsigned int amupmu_this_cpu_pmuver(void)
{
	unsigned int v = FIELD_GET(ID_AA64DFR0_EL1_PMUVer, read_sysreg_s(SYS_ID_AA64DFR0_EL1));

	return v == ID_AA64DFR0_EL1_PMUVer_IMP_DEF ? 0 : v;
}

/**
 * amupmu_pmu_cpu_start() - bring this CPU's PMU under amupmu
 *
 * Called on the CPU (hotplug online callback, or IPI at probe) when amupmu
 * owns the PMU: program it (amupmu_pmu_hw_setup()), restart the running
 * clocks of enabled sessions and enable the PPI. A CPU without PMUv3 is
 * left alone (never live).
 */
static void amupmu_pmu_cpu_start(void)
{
	int irq = READ_ONCE(amupmu_dev.pmu_irq);
	unsigned int cpu, idx, pmuver;
	struct amupmu_pmu_cpu *pc;
	unsigned long running, flags;
	u64 now;

	pmuver = amupmu_this_cpu_pmuver();
	if (!irq || !pmuver)
		return;
	cpu = smp_processor_id();
	pc = amupmu_pc(cpu);
	/* may run in IPI context: read the CPU itself, not discovery's table */
	pc->nr_counters = FIELD_GET(ARMV8_PMU_PMCR_N, read_sysreg(pmcr_el0));
	amupmu_pmu_hw_setup(pc, pmuver);

	now = local_clock();
	raw_spin_lock_irqsave(&pc->lock, flags);
	running = pc->running;
	for_each_set_bit(idx, &running, AMUPMU_PMU_MAX_EVENTS) {
		struct amupmu_sess_cpu *sc = amupmu_sc(pc->cnt[idx].owner, cpu);

		if (!sc->run_since)
			sc->run_since = now;
	}
	WRITE_ONCE(pc->live, true);
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	enable_percpu_irq(irq, IRQ_TYPE_NONE);
}

/* On the CPU, before it goes offline or amupmu lets the PMU go: save and stop. */
static void amupmu_pmu_cpu_stop(void)
{
	int irq = READ_ONCE(amupmu_dev.pmu_irq);
	unsigned int cpu = smp_processor_id();
	struct amupmu_pmu_cpu *pc;
	unsigned long used, flags;
	unsigned int idx;
	u64 now;

	if (!irq || !amupmu_pc(cpu)->live)
		return;
	disable_percpu_irq(irq);
	pc = amupmu_pc(cpu);
	amupmu_pmu_hw_save(pc);
	/* not waiting: it may be queued behind this IPI; it finds the CPU not live */
	hrtimer_try_to_cancel(&pc->unthrottle);

	now = local_clock();
	raw_spin_lock_irqsave(&pc->lock, flags);
	used = pc->used;
	for_each_set_bit(idx, &used, AMUPMU_PMU_MAX_EVENTS) {
		struct amupmu_sess_cpu *sc = amupmu_sc(pc->cnt[idx].owner, cpu);

		if (sc->run_since) {
			sc->run_ns += now - sc->run_since;
			sc->run_since = 0;
		}
	}
	/* the unthrottle timer is cancelled: the CPU starts again unthrottled */
	pc->throttled = 0;
	pc->irqs = 0;
	WRITE_ONCE(pc->live, false);
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	write_sysreg(0, pmcr_el0);
	isb();
}

static void amupmu_pmu_cpu_start_ipi(void *unused)
{
	amupmu_pmu_cpu_start();
}

static void amupmu_pmu_cpu_stop_ipi(void *unused)
{
	amupmu_pmu_cpu_stop();
}

static void amupmu_pmu_cpu_online(unsigned int cpu, const struct amupmu_cpu_info *ci)
{
	amupmu_pmu_cpu_start();
}

static void amupmu_pmu_cpu_offline(unsigned int cpu)
{
	amupmu_pmu_cpu_stop();
}

const struct amupmu_unit_ops amupmu_pmu_unit = {
	.cpu_online = amupmu_pmu_cpu_online,
	.cpu_offline = amupmu_pmu_cpu_offline,
};

/*
 * CPU power management: a core that powers down in idle or suspend comes
 * back with its PMU reset. Save before, reprogram after with the saved
 * values (as arm_pmu does). Runs on the CPU with interrupts off; pc->lock
 * orders it against the commands' IPIs and offline updates.
 */
static int amupmu_cpu_pm_notify(struct notifier_block *nb, unsigned long action, void *v)
{
	struct amupmu_pmu_cpu *pc = amupmu_pc(smp_processor_id());

	if (!READ_ONCE(pc->live))
		return NOTIFY_OK;
	switch (action) {
	case CPU_PM_ENTER:
		amupmu_pmu_hw_save(pc);
		break;
	case CPU_PM_EXIT:
	case CPU_PM_ENTER_FAILED:
		amupmu_pmu_hw_setup(pc, amupmu_this_cpu_pmuver());
		break;
	}
	return NOTIFY_OK;
}

static struct notifier_block amupmu_cpu_pm_nb = {
	.notifier_call = amupmu_cpu_pm_notify,
};

/**
 * amupmu_pmu_init() - the per-CPU state, for the module's lifetime
 */
int amupmu_pmu_init(void)
{
	unsigned int cpu;

	amupmu_pmu_cpus = alloc_percpu(struct amupmu_pmu_cpu);
	if (!amupmu_pmu_cpus)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		raw_spin_lock_init(&amupmu_pc(cpu)->lock);
		amupmu_pc(cpu)->cpu = cpu;
		hrtimer_init(&amupmu_pc(cpu)->unthrottle, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
		amupmu_pc(cpu)->unthrottle.function = amupmu_pmu_unthrottle;
	}
	return 0;
}

void amupmu_pmu_exit(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		hrtimer_cancel(&amupmu_pc(cpu)->unthrottle);
	free_percpu(amupmu_pmu_cpus);
	amupmu_pmu_cpus = NULL;
}

/**
 * amupmu_pmu_claim() - take the PMU: its PPI and every CPU's registers
 * @dev: the platform device, for messages
 * @irq: the PMU PPI
 */
int amupmu_pmu_claim(struct device *dev, int irq)
{
	int ret;

	/* a per-CPU IRQ cannot be shared: this fails if arm_pmu holds it */
	ret = request_percpu_irq(irq, amupmu_pmu_irq_handler, "amupmu", &amupmu_pmu_irq_cookie);
	if (ret) {
		dev_err(dev, "cannot take the PMU interrupt %d: %d\n", irq, ret);
		return ret;
	}
	ret = cpu_pm_register_notifier(&amupmu_cpu_pm_nb);
	if (ret)
		goto out_irq;

	/* under the hotplug lock: CPUs coming online see pmu_irq set */
	cpus_read_lock();
	down_write(&amupmu_pmu_own_rwsem);
	mutex_lock(&amupmu_dev.lock);
	amupmu_dev.exclusive = true;
	WRITE_ONCE(amupmu_dev.pmu_irq, irq);
	mutex_unlock(&amupmu_dev.lock);
	on_each_cpu(amupmu_pmu_cpu_start_ipi, NULL, 1);
	up_write(&amupmu_pmu_own_rwsem);
	cpus_read_unlock();
	return 0;

out_irq:
	free_percpu_irq(irq, &amupmu_pmu_irq_cookie);
	return ret;
}

/*
 * amupmu_pmu_release() - let the PMU go (the device is removed: module
 * unload, or an unbind with sessions open). Every group ends: its counters
 * stop and are freed, its session gets ENXIO for PMU commands until it
 * releases the group, its readers wake up.
 */
void amupmu_pmu_release(void)
{
	int irq = amupmu_dev.pmu_irq;
	unsigned int cpu;

	cpus_read_lock();
	down_write(&amupmu_pmu_own_rwsem);
	on_each_cpu(amupmu_pmu_cpu_stop_ipi, NULL, 1);
	mutex_lock(&amupmu_dev.lock);
	amupmu_dev.exclusive = false;
	WRITE_ONCE(amupmu_dev.pmu_irq, 0);
	mutex_unlock(&amupmu_dev.lock);
	mutex_lock(&amupmu_pmu_alloc_lock);
	for_each_possible_cpu(cpu) {
		struct amupmu_pmu_cpu *pc = amupmu_pc(cpu);
		unsigned long flags;

		raw_spin_lock_irqsave(&pc->lock, flags);
		pc->used = 0;
		pc->running = 0;
		pc->throttled = 0;
		memset(pc->cnt, 0, sizeof(pc->cnt));
		raw_spin_unlock_irqrestore(&pc->lock, flags);
	}
	WRITE_ONCE(amupmu_sess_gen, amupmu_sess_gen + 1 ?: 1);
	mutex_unlock(&amupmu_pmu_alloc_lock);
	up_write(&amupmu_pmu_own_rwsem);
	cpus_read_unlock();
	/* no counter is left to unthrottle: the timers find nothing, or are gone */
	for_each_possible_cpu(cpu)
		hrtimer_cancel(&amupmu_pc(cpu)->unthrottle);
	cpu_pm_unregister_notifier(&amupmu_cpu_pm_nb);
	free_percpu_irq(irq, &amupmu_pmu_irq_cookie);
	amupmu_sessions_wake();
}

/**
 * amupmu_pmu_free_mask() - the counters of @cpu no session holds
 * @cpu: the CPU
 * @nr_counters: its PMCR_EL0.N as discovery read it
 *
 * Return: bit n event counter n, bit 31 the cycle counter; 0 unless amupmu
 * owns the PMU.
 */
u32 amupmu_pmu_free_mask(unsigned int cpu, unsigned int nr_counters)
{
	u32 free = 0;

	mutex_lock(&amupmu_pmu_alloc_lock);
	if (READ_ONCE(amupmu_dev.pmu_irq) && nr_counters)
		free = ((u32)(BIT_ULL(nr_counters) - 1) | BIT(AMUPMU_CYCLE_IDX)) &
		       ~amupmu_pc(cpu)->used;
	mutex_unlock(&amupmu_pmu_alloc_lock);
	return free;
}

/* ------------------------------------------------------------ sessions */

/*
 * What a session command does to one of its counters on one CPU: on that
 * CPU (@hw: its PMU may be touched) or, for a CPU that is not live, from
 * anywhere (@hw false). Under pc->lock.
 */
typedef void (*amupmu_counter_op_t)(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
				    unsigned int idx, bool hw);

struct amupmu_sess_ipi {
	struct amupmu_session *s;
	amupmu_counter_op_t op;
};

static void amupmu_sess_cpu_op(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			       amupmu_counter_op_t op, bool hw)
{
	const u8 *idx = amupmu_sess_idx(s, pc->cpu);
	unsigned int e;

	for (e = 0; e < s->nr_events; e++)
		op(s, pc, idx[e], hw);
	if (hw)
		isb();
}

static void amupmu_sess_ipi_fn(void *arg)
{
	struct amupmu_sess_ipi *a = arg;
	struct amupmu_pmu_cpu *pc = amupmu_pc(smp_processor_id());

	raw_spin_lock(&pc->lock);
	amupmu_sess_cpu_op(a->s, pc, a->op, pc->live);
	raw_spin_unlock(&pc->lock);
}

/*
 * Run @op for the session's counters on every CPU of its set: one
 * on_each_cpu_mask() for the online ones, under the CPU's lock here for
 * the others. Called under cpus_read_lock() and s->lock.
 */
static void amupmu_sess_each_cpu(struct amupmu_session *s, amupmu_counter_op_t op)
{
	struct amupmu_sess_ipi a = { .s = s, .op = op };
	unsigned long flags;
	unsigned int cpu;

	cpumask_and(s->scratch, s->cpus, cpu_online_mask);
	on_each_cpu_mask(s->scratch, amupmu_sess_ipi_fn, &a, true);
	for_each_cpu_andnot(cpu, s->cpus, cpu_online_mask) {
		struct amupmu_pmu_cpu *pc = amupmu_pc(cpu);

		raw_spin_lock_irqsave(&pc->lock, flags);
		amupmu_sess_cpu_op(s, pc, op, false);
		raw_spin_unlock_irqrestore(&pc->lock, flags);
	}
}

static void amupmu_op_enable(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			     unsigned int idx, bool hw)
{
	pc->running |= BIT(idx);
	if (hw)
		write_sysreg(BIT(idx), pmcntenset_el0);
}

static void amupmu_op_disable(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			      unsigned int idx, bool hw)
{
	pc->running &= ~BIT(idx);
	if (hw) {
		write_sysreg(BIT(idx), pmcntenclr_el0);
		isb();
		amupmu_counter_fold(&pc->cnt[idx], idx);
	}
}

static void amupmu_op_reset(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			    unsigned int idx, bool hw)
{
	struct amupmu_pmu_counter *c = &pc->cnt[idx];
	struct amupmu_sess_cpu *sc = amupmu_sc(s, pc->cpu);

	/*
	 * Start it over: one span from its overflow, so that a counter
	 * re-armed every span keeps its margin and a sampling one its
	 * period. Then drop an overflow it had before (its interrupt would
	 * re-arm nothing and count one for the new total). A CPU that is not
	 * live takes the start value when it is programmed.
	 */
	if (hw) {
		amupmu_counter_init(pc, idx);
		amupmu_hw_write_counter(idx, c->prev);
		isb();
		write_sysreg(BIT(idx), pmovsclr_el0);
	} else {
		c->mask = 0;
		pc->ovs_saved &= ~BIT(idx);
	}
	c->total = 0;
	c->overflows = 0;
	/* once per CPU: the sample counts are the CPU's, not the counter's */
	if (c->ev == 0) {
		sc->samples = 0;
		sc->lost = 0;
		sc->skid = 0;
		sc->throttled = 0;
	}
}

static void amupmu_op_program(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			      unsigned int idx, bool hw)
{
	amupmu_counter_init(pc, idx);
	pc->ovs_saved &= ~BIT(idx);
	if (hw)
		amupmu_hw_counter_program(pc, idx);
	else
		pc->cnt[idx].mask = 0;
}

/* The counter leaves the group: stopped, freed (under amupmu_pmu_alloc_lock too). */
static void amupmu_op_release(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			      unsigned int idx, bool hw)
{
	if (hw)
		amupmu_hw_counter_stop(idx);
	pc->used &= ~BIT(idx);
	pc->running &= ~BIT(idx);
	pc->throttled &= ~BIT(idx);
	pc->cnt[idx].owner = NULL;
}

/* Free the group's per-CPU state (not its counters). */
static void amupmu_sess_free_group(struct amupmu_session *s)
{
	cpumask_clear(s->cpus);
	free_percpu(s->pcpu);
	s->pcpu = NULL;
	if (s->pid_ns)
		put_pid_ns(s->pid_ns);
	s->pid_ns = NULL;
}

/*
 * Free the group's counters. Under cpus_read_lock(), the own rwsem and
 * s->lock. A group of a binding that went away has no counters left.
 */
static void amupmu_sess_release_group(struct amupmu_session *s)
{
	if (!s->configured)
		return;
	amupmu_nl_session_end(&s->nl);
	if (s->shared) {
		amupmu_perf_release(s);
	} else if (!amupmu_sess_stale(s)) {
		mutex_lock(&amupmu_pmu_alloc_lock);
		amupmu_sess_each_cpu(s, amupmu_op_release);
		mutex_unlock(&amupmu_pmu_alloc_lock);
	}
	amupmu_sess_free_group(s);
	s->configured = false;
	s->enabled = false;
	s->shared = false;
	s->multiplex = false;
	WRITE_ONCE(s->gen, 0);
}

static void amupmu_pmu_lock(struct amupmu_session *s)
{
	cpus_read_lock();
	down_read(&amupmu_pmu_own_rwsem);
	mutex_lock(&s->lock);
}

static void amupmu_pmu_unlock(struct amupmu_session *s)
{
	mutex_unlock(&s->lock);
	up_read(&amupmu_pmu_own_rwsem);
	cpus_read_unlock();
}

/* ------------------------------------------------------------ commands */

/*
 * ENXIO while the kernel owns the PMU and shared mode is off, or when the
 * session's exclusive group went with its device. A shared group stays
 * until it is released.
 */
static int amupmu_pmu_owned(const struct amupmu_session *s)
{
	if (s->configured && s->shared)
		return 0;
	if (!READ_ONCE(amupmu_dev.pmu_irq))
		return s->configured || !amupmu_perf_available() ? -ENXIO : 0;
	return amupmu_sess_stale(s) ? -ENXIO : 0;
}

/* The session counts on @cpu when enabled: the CPU's counters are there. */
static bool amupmu_sess_cpu_live(struct amupmu_session *s, unsigned int cpu)
{
	return s->shared ? amupmu_perf_live(s, cpu) : amupmu_pc(cpu)->live;
}

/*
 * The largest sample period of a CPU's event counters: their width, which
 * is 64 bits only with PMUv3p5 and pmu_counter_bits=64 (PMCR_EL0.LP).
 */
static u64 amupmu_period_max(const struct amupmu_cpu_info *ci)
{
	if (pmu_counter_bits == 64 && ci->pmu_version >= ID_AA64DFR0_EL1_PMUVer_V3P5)
		return S64_MAX;
	return U32_MAX;
}

/* Does the CPU implement event @n (PMCEID0/1, with the 0x4000 range from v3p1)? */
static bool amupmu_event_implemented(const struct amupmu_cpu_info *ci, u32 n)
{
	if (n < 0x20)
		return ci->pmceid0 & BIT_ULL(n);
	if (n < 0x40)
		return ci->pmceid1 & BIT_ULL(n - 0x20);
	if (n >= 0x4000 && n < 0x4020)
		return ci->pmceid0 & BIT_ULL(n - 0x4000 + 32);
	if (n >= 0x4020 && n < 0x4040)
		return ci->pmceid1 & BIT_ULL(n - 0x4020 + 32);
	return false;
}

/* PMEVTYPER value of @ev for a CPU, or -errno. */
static long amupmu_event_type(const struct amupmu_pmu_event *ev,
			      const struct amupmu_cpu_info *ci)
{
	bool has_el2 = FIELD_GET(ID_AA64PFR0_EL1_EL2, ci->id_aa64pfr0);
	u32 n = ev->event, type;

	if (ev->flags & ~AMUPMU_EV_ALL)
		return -EINVAL;
	if (ev->sample_period && (ev->sample_period < READ_ONCE(amupmu_sample_period_min) ||
				  ev->sample_period > amupmu_period_max(ci)))
		return -EINVAL;
	if (n > (ci->pmu_version >= ID_AA64DFR0_EL1_PMUVer_V3P1 ? 0xffff : 0x3ff))
		return -EINVAL;
	type = amupmu_evtyper(ev->flags, n, is_kernel_in_hyp_mode(), has_el2);
	if (!amupmu_evtyper_counts(type, has_el2))
		return -EINVAL;
	if (!(ev->flags & AMUPMU_EV_RAW) && !amupmu_event_implemented(ci, n))
		return -EOPNOTSUPP;
	return type;
}

/**
 * struct amupmu_config_req - what AMUPMU_PMU_CONFIG copied in from user space
 * @evs: the events
 * @cpus: the CPU set
 *
 * Copied before any lock is taken: a fault on user memory must not stall
 * with the hotplug lock held. (A new ring's locked-memory charge is its
 * own, atomic and taken under the locks: amupmu_mbuf_init().)
 */
struct amupmu_config_req {
	struct amupmu_pmu_event evs[AMUPMU_PMU_MAX_EVENTS];
	cpumask_var_t cpus;
};

/*
 * Choose a counter for each event on @cpu, given its free counters:
 * CPU_CYCLES goes to the cycle counter while it is free, the rest to the
 * lowest free event counters. Sets *free_out to the free counters before;
 * returns 0, or -EBUSY when they do not suffice. Writes only @idx.
 */
static int amupmu_plan_cpu(struct amupmu_session *s, unsigned int cpu, u8 *idx, u32 *free_out)
{
	struct amupmu_cpu_info ci;
	unsigned int e, i;
	u32 avail;

	/* PMCR_EL0.N as discovery read it: the CPU may be offline now */
	amupmu_cpu_snapshot(cpu, &ci);
	avail = (u32)(BIT_ULL(ci.pmu_num_counters) - 1) | BIT(AMUPMU_CYCLE_IDX);
	avail &= ~amupmu_pc(cpu)->used;
	*free_out = hweight32(avail);
	for (e = 0; e < s->nr_events; e++) {
		if ((s->evtyper[e] & ARMV8_PMU_EVTYPE_EVENT) == AMUPMU_CPU_CYCLES &&
		    avail & BIT(AMUPMU_CYCLE_IDX)) {
			i = AMUPMU_CYCLE_IDX;
		} else {
			i = ffs(avail & ~BIT(AMUPMU_CYCLE_IDX));
			if (!i)
				return -EBUSY;
			i--;
		}
		avail &= ~BIT(i);
		idx[e] = i;
	}
	return 0;
}

/* Validate the sizes of AMUPMU_PMU_CONFIG and copy its arrays in. No locks held. */
static int amupmu_config_copy_in(const struct amupmu_pmu_config *cfg,
				 struct amupmu_config_req *req)
{
	bool sampling = false;
	unsigned int e;
	int ret;

	if (cfg->flags & ~AMUPMU_PMU_CONFIG_MULTIPLEX || cfg->__reserved)
		return -EINVAL;
	if (!cfg->nr_events || cfg->nr_events > AMUPMU_PMU_MAX_EVENTS ||
	    cfg->event_size < AMUPMU_PMU_EVENT_SIZE_VER0 || cfg->event_size > AMUPMU_SIZE_MAX ||
	    !IS_ALIGNED(cfg->event_size, sizeof(u64)))
		return -EINVAL;
	for (e = 0; e < cfg->nr_events; e++) {
		u64 uptr = cfg->events_uptr + (u64)e * cfg->event_size;

		ret = copy_struct_from_user(&req->evs[e], sizeof(req->evs[e]),
					    u64_to_user_ptr(uptr), cfg->event_size);
		if (ret)
			return ret;
		if (req->evs[e].sample_period)
			sampling = true;
	}
	/* a ring exactly when an event samples */
	if (sampling ? !is_power_of_2(cfg->ring_pages) || cfg->ring_pages > AMUPMU_RING_PAGES_MAX
		     : cfg->ring_pages)
		return -EINVAL;
	return amupmu_cpuset_from_user(req->cpus, cfg->cpus_uptr, cfg->cpus_len);
}

/* The session's netlink view, registered once the group is configured. */
static void amupmu_sess_nl_start(struct amupmu_session *s)
{
	s->nl = (struct amupmu_nl_sess) {
		.kind = AMUPMU_NL_SESSION_PMU,
		.cpus = s->cpus,
		.nr_events = s->nr_events,
		.evtyper = s->evtyper,
		.period = s->period,
	};
	amupmu_nl_session_start(&s->nl);
}

/*
 * The shared-mode part of CONFIG: the perf events first (they sample into
 * nothing until ENABLE), then the ring; either failing undoes both.
 */
static int amupmu_pmu_config_shared(struct amupmu_session *s, struct amupmu_pmu_config *cfg,
				    struct amupmu_config_req *req)
{
	int ret;

	s->pid_ns = get_pid_ns(task_active_pid_ns(current));
	s->multiplex = cfg->flags & AMUPMU_PMU_CONFIG_MULTIPLEX;
	ret = amupmu_perf_config(s);
	if (ret)
		goto out_free;
	if (cfg->ring_pages) {
		ret = amupmu_session_ring(s, cfg->ring_pages);
		if (ret) {
			amupmu_perf_release(s);
			goto out_free;
		}
	}
	s->shared = true;
	s->configured = true;
	s->enabled = false;
	s->enabled_ns = 0;
	WRITE_ONCE(s->gen, 0);
	amupmu_sess_nl_start(s);
	cfg->counters_free = 0;
	memset(cfg->counters, 0, sizeof(cfg->counters));
	memset(cfg->counters, AMUPMU_COUNTER_PERF, s->nr_events);
	return 0;

out_free:
	amupmu_sess_free_group(s);
	s->nr_events = 0;
	s->multiplex = false;
	return ret;
}

static int amupmu_pmu_config(struct amupmu_session *s, struct amupmu_pmu_config *cfg,
			     struct amupmu_config_req *req)
{
	const struct amupmu_pmu_event *evs = req->evs;
	struct amupmu_cpu_info ci;
	unsigned int cpu, first, e;
	u32 free, min_free = U32_MAX;
	long type;
	int ret;

	if (s->configured)
		return -EBUSY;
	if (!perfmon_capable())
		return -EACCES;
	/* the PMU has what it has: only perf core can multiplex */
	if ((cfg->flags & AMUPMU_PMU_CONFIG_MULTIPLEX) && READ_ONCE(amupmu_dev.pmu_irq))
		return -EOPNOTSUPP;
	cpumask_copy(s->cpus, req->cpus);

	/* the events must be valid and implemented on every CPU of the set */
	s->nr_events = cfg->nr_events;
	for_each_cpu(cpu, s->cpus) {
		amupmu_cpu_snapshot(cpu, &ci);
		if (!(ci.flags & AMUPMU_CPU_DISCOVERED) || !(ci.flags & AMUPMU_CPU_PMU)) {
			ret = -ENODEV;
			goto out_free;
		}
		for (e = 0; e < cfg->nr_events; e++) {
			type = amupmu_event_type(&evs[e], &ci);
			if (type < 0) {
				ret = type;
				goto out_free;
			}
			s->evtyper[e] = type;
			s->ev_flags[e] = evs[e].flags;
			s->no_kernel[e] = !amupmu_evtyper_counts_kernel(type,
									is_kernel_in_hyp_mode());
			s->period[e] = evs[e].sample_period;
		}
	}

	s->pcpu = alloc_percpu(struct amupmu_sess_cpu);
	if (!s->pcpu) {
		ret = -ENOMEM;
		goto out_free;
	}
	if (!READ_ONCE(amupmu_dev.pmu_irq))
		return amupmu_pmu_config_shared(s, cfg, req);

	/* plan the counters before the ring: a busy CPU allocates nothing */
	mutex_lock(&amupmu_pmu_alloc_lock);
	ret = 0;
	for_each_cpu(cpu, s->cpus) {
		if (amupmu_plan_cpu(s, cpu, amupmu_sess_idx(s, cpu), &free))
			ret = -EBUSY;
		min_free = min(min_free, free);
	}
	if (!ret && cfg->ring_pages)
		ret = amupmu_session_ring(s, cfg->ring_pages);
	if (ret) {
		mutex_unlock(&amupmu_pmu_alloc_lock);
		goto out_free;
	}
	s->pid_ns = get_pid_ns(task_active_pid_ns(current));
	for_each_cpu(cpu, s->cpus) {
		struct amupmu_pmu_cpu *pc = amupmu_pc(cpu);
		const u8 *idx = amupmu_sess_idx(s, cpu);
		unsigned long flags;

		raw_spin_lock_irqsave(&pc->lock, flags);
		for (e = 0; e < s->nr_events; e++) {
			pc->used |= BIT(idx[e]);
			pc->running &= ~BIT(idx[e]);
			pc->cnt[idx[e]] = (struct amupmu_pmu_counter) {
				.owner = s,
				.evtyper = s->evtyper[e],
				.period = s->period[e],
				.ev = e,
			};
		}
		raw_spin_unlock_irqrestore(&pc->lock, flags);
	}
	mutex_unlock(&amupmu_pmu_alloc_lock);

	s->configured = true;
	s->enabled = false;
	s->enabled_ns = 0;
	WRITE_ONCE(s->gen, amupmu_sess_gen);
	amupmu_sess_nl_start(s);
	amupmu_sess_each_cpu(s, amupmu_op_program);
	cfg->counters_free = min_free;
	first = cpumask_first(s->cpus);
	memset(cfg->counters, 0, sizeof(cfg->counters));
	for (e = 0; e < s->nr_events; e++)
		cfg->counters[e] = amupmu_sess_idx(s, first)[e];
	return 0;

out_free:
	amupmu_sess_free_group(s);
	s->nr_events = 0;
	return ret;
}

/* Start or stop the session's running-time clocks on its live CPUs. */
static void amupmu_sess_clocks(struct amupmu_session *s, bool run, u64 now)
{
	unsigned int cpu;

	if (run)
		s->enabled_since = now;
	else
		s->enabled_ns += now - s->enabled_since;
	for_each_cpu(cpu, s->cpus) {
		struct amupmu_sess_cpu *sc = amupmu_sc(s, cpu);

		if (run && amupmu_sess_cpu_live(s, cpu)) {
			sc->run_since = now;
		} else if (!run && sc->run_since) {
			sc->run_ns += now - sc->run_since;
			sc->run_since = 0;
		}
	}
}

static int amupmu_pmu_ctl(struct amupmu_session *s, const struct amupmu_pmu_ctl *ctl)
{
	unsigned int cpu;
	u64 now;

	if (ctl->flags || ctl->__reserved ||
	    ctl->op < AMUPMU_PMU_CTL_ENABLE || ctl->op > AMUPMU_PMU_CTL_RELEASE)
		return -EINVAL;
	if (!s->configured)
		return -ENODEV;

	now = local_clock();
	switch (ctl->op) {
	case AMUPMU_PMU_CTL_ENABLE:
		if (s->enabled)
			return 0;
		s->enabled = true;
		if (s->shared)
			amupmu_perf_enable(s);
		else
			amupmu_sess_each_cpu(s, amupmu_op_enable);
		amupmu_sess_clocks(s, true, now);
		break;
	case AMUPMU_PMU_CTL_DISABLE:
		if (!s->enabled)
			return 0;
		if (s->shared)
			amupmu_perf_disable(s);
		else
			amupmu_sess_each_cpu(s, amupmu_op_disable);
		s->enabled = false;
		amupmu_sess_clocks(s, false, now);
		break;
	case AMUPMU_PMU_CTL_RESET:
		if (s->shared)
			amupmu_perf_reset(s);
		else
			amupmu_sess_each_cpu(s, amupmu_op_reset);
		s->enabled_ns = 0;
		s->enabled_since = now;
		for_each_cpu(cpu, s->cpus) {
			struct amupmu_sess_cpu *sc = amupmu_sc(s, cpu);

			sc->run_ns = 0;
			if (sc->run_since)
				sc->run_since = now;
		}
		break;
	case AMUPMU_PMU_CTL_RELEASE:
		amupmu_sess_release_group(s);
		break;
	}
	return 0;
}

/*
 * Copy a session's totals on @cpu into @vals, the hardware counts included
 * when @update (the caller runs on that CPU, which is live). Under
 * pc->lock. Inlined, so that each caller gets the loop for its @update
 * without a test per counter.
 */
static __always_inline void amupmu_collect(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
					   struct amupmu_pmu_value *vals, bool update)
{
	const u8 *idx = amupmu_sess_idx(s, pc->cpu);
	unsigned int e, n = s->nr_events;

	for (e = 0; e < n; e++) {
		unsigned int i = idx[e];
		const struct amupmu_pmu_counter *c = &pc->cnt[i];

		vals[e].value = update ? amupmu_counter_peek(c, i) : c->total;
		vals[e].overflows = c->overflows;
	}
}

/* The group's totals on one CPU, the CPU's counts folded in. On it, under pc->lock. */
static void amupmu_collect_totals(struct amupmu_pmu_cpu *pc, const u8 *idx, unsigned int n,
				  u64 *totals)
{
	unsigned int e;

	for (e = 0; e < n; e++) {
		unsigned int i = idx[e];

		amupmu_counter_fold(&pc->cnt[i], i);
		totals[e] = pc->cnt[i].total;
	}
}

/* An entry with room for the largest group: on the stack, or an array of them. */
struct amupmu_read_one {
	struct amupmu_pmu_read_cpu ent;
	struct amupmu_pmu_value values[AMUPMU_PMU_MAX_EVENTS];
};

static_assert(offsetof(struct amupmu_read_one, values) ==
	      offsetof(struct amupmu_read_one, ent.values));

/**
 * struct amupmu_read_req - a READ's output, gathered under the locks and
 *	copied to user space after them
 * @s: the session
 * @rd: the command's struct
 * @buf: with AMUPMU_PMU_READ_ALL: the entries, @stride bytes each, in the
 *	order of the session's CPUs; else one entry
 * @stride: bytes of an entry (struct amupmu_pmu_read_cpu and the values)
 * @now: local_clock() of the read
 * @times: with AMUPMU_PMU_READ_TIMES: per entry (in @buf's order) and
 *	event, time enabled and time running; else NULL
 */
struct amupmu_read_req {
	struct amupmu_session *s;
	struct amupmu_pmu_read *rd;
	u8 *buf;
	size_t stride;
	u64 now;
	struct amupmu_ev_times (*times)[AMUPMU_PMU_MAX_EVENTS];
};

/*
 * Fill the entry of CPU @pc for session @s, from the hardware when @hw (on
 * it); time_running up to the CPU's last start, the caller adds the rest.
 * Under pc->lock. Inlined: the read fast path uses it too.
 */
static __always_inline void amupmu_read_entry(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
					      struct amupmu_pmu_read_cpu *ent, bool hw)
{
	struct amupmu_sess_cpu *sc = amupmu_sc(s, pc->cpu);

	/* two calls, each with a constant: no test per counter in the loop */
	if (hw)
		amupmu_collect(s, pc, ent->values, true);
	else
		amupmu_collect(s, pc, ent->values, false);
	ent->cpu = pc->cpu;
	ent->state = (s->enabled ? AMUPMU_READ_ENABLED : 0) | (pc->live ? 0 : AMUPMU_READ_OFFLINE);
	ent->samples = sc->samples;
	ent->lost = sc->lost;
	ent->skid = sc->skid;
	ent->time_running = sc->run_ns;
}

/* The index of @cpu's entry in @q's buffer. */
static unsigned int amupmu_read_index(struct amupmu_read_req *q, unsigned int cpu)
{
	if (q->rd->flags & AMUPMU_PMU_READ_ALL)
		return bitmap_weight(cpumask_bits(q->s->cpus), cpu);
	return 0;
}

/* The entry of @cpu in @q's buffer. */
static struct amupmu_pmu_read_cpu *amupmu_read_slot(struct amupmu_read_req *q, unsigned int cpu)
{
	return (struct amupmu_pmu_read_cpu *)(q->buf + amupmu_read_index(q, cpu) * q->stride);
}

static void amupmu_read_ipi(void *arg)
{
	struct amupmu_read_req *q = arg;
	unsigned int cpu = smp_processor_id();
	struct amupmu_pmu_cpu *pc = amupmu_pc(cpu);

	if (q->s->shared) {
		amupmu_perf_read_entry(q->s, cpu, amupmu_read_slot(q, cpu));
		return;
	}
	raw_spin_lock(&pc->lock);
	amupmu_read_entry(q->s, pc, amupmu_read_slot(q, cpu), pc->live);
	raw_spin_unlock(&pc->lock);
}

/*
 * Gather a READ into @q: one on_each_cpu_mask() for the online CPUs asked,
 * the offline ones from their saved totals. Under amupmu_pmu_lock().
 */
static int amupmu_pmu_read(struct amupmu_read_req *q)
{
	struct amupmu_session *s = q->s;
	struct amupmu_pmu_read *rd = q->rd;
	unsigned long flags;
	unsigned int cpu, i;

	if (!s->configured)
		return -ENODEV;
	/* a multiplexed group's counts mean nothing without their times */
	if (rd->nr_values < s->nr_events || (s->multiplex && !q->times))
		return -EINVAL;
	if (rd->flags & AMUPMU_PMU_READ_ALL) {
		if (rd->cpu || rd->nr_cpus < cpumask_weight(s->cpus))
			return -EINVAL;
		cpumask_copy(s->scratch, s->cpus);
	} else {
		if (rd->cpu >= nr_cpu_ids || !cpumask_test_cpu(rd->cpu, s->cpus))
			return -EINVAL;
		cpumask_clear(s->scratch);
		cpumask_set_cpu(rd->cpu, s->scratch);
	}

	if (s->multiplex) {
		/* perf core's times: process context, no IPI of ours */
		for_each_cpu(cpu, s->scratch)
			amupmu_perf_read_mux(s, cpu, amupmu_read_slot(q, cpu),
					     q->times[amupmu_read_index(q, cpu)]);
		cpumask_clear(s->scratch);
	}
	for_each_cpu_andnot(cpu, s->scratch, cpu_online_mask) {
		struct amupmu_pmu_cpu *pc = amupmu_pc(cpu);

		if (s->shared) {
			/* offline: the totals were folded when it went down */
			amupmu_perf_read_entry(s, cpu, amupmu_read_slot(q, cpu));
			continue;
		}
		raw_spin_lock_irqsave(&pc->lock, flags);
		amupmu_read_entry(q->s, pc, amupmu_read_slot(q, cpu), false);
		raw_spin_unlock_irqrestore(&pc->lock, flags);
	}
	cpumask_and(s->scratch, s->scratch, cpu_online_mask);
	/* one CPU: the direct cross call, without the many-CPU machinery */
	if (rd->flags & AMUPMU_PMU_READ_ALL)
		on_each_cpu_mask(s->scratch, amupmu_read_ipi, q, true);
	else if (cpumask_test_cpu(rd->cpu, s->scratch))
		smp_call_function_single(rd->cpu, amupmu_read_ipi, q, 1);

	/* the running times up to now (live cannot change under the hotplug lock) */
	q->now = local_clock();
	i = 0;
	for_each_cpu(cpu, (rd->flags & AMUPMU_PMU_READ_ALL) ? s->cpus : cpumask_of(rd->cpu)) {
		struct amupmu_pmu_read_cpu *ent = (void *)(q->buf + i++ * q->stride);
		struct amupmu_sess_cpu *sc = amupmu_sc(s, cpu);

		if (sc->run_since)
			ent->time_running += q->now - sc->run_since;
	}
	rd->nr_values = s->nr_events;
	rd->time_enabled = s->enabled_ns + (s->enabled ? q->now - s->enabled_since : 0);
	/* the CPU's throttles, or with READ_ALL their sum (the entries have no room) */
	rd->throttled = 0;
	for_each_cpu(cpu, (rd->flags & AMUPMU_PMU_READ_ALL) ? s->cpus : cpumask_of(rd->cpu))
		rd->throttled += READ_ONCE(amupmu_sc(s, cpu)->throttled);
	/* a group that does not multiplex: the group's and the CPU's times */
	if (q->times && !s->multiplex) {
		unsigned int n = (rd->flags & AMUPMU_PMU_READ_ALL) ? cpumask_weight(s->cpus) : 1;
		unsigned int e;

		for (i = 0; i < n; i++) {
			const struct amupmu_pmu_read_cpu *ent = (void *)(q->buf + i * q->stride);

			for (e = 0; e < s->nr_events; e++) {
				q->times[i][e].enabled = rd->time_enabled;
				q->times[i][e].running = ent->time_running;
			}
		}
	}
	return 0;
}

/* The READ's struct fields from its one entry (a single-CPU READ). */
static void amupmu_read_fill(struct amupmu_pmu_read *rd, const struct amupmu_pmu_read_cpu *ent)
{
	rd->time_running = ent->time_running;
	rd->state = ent->state;
	rd->samples = ent->samples;
	rd->lost = ent->lost;
	rd->skid = ent->skid;
}

/*
 * This CPU's entry and the time of the read (@now), for the fast path;
 * false when the group's counters are not live here. One variant per mode,
 * each with its own locking: exclusive under the CPU's lock, shared with
 * interrupts off (which keeps the overflow handler and the hotplug
 * callbacks, which run on the CPU, out).
 */
static __always_inline bool amupmu_read_here(struct amupmu_session *s, unsigned int cpu,
					     struct amupmu_pmu_read_cpu *ent, u64 *now)
{
	struct amupmu_pmu_cpu *pc = amupmu_pc(cpu);
	unsigned long flags;
	bool live;

	raw_spin_lock_irqsave(&pc->lock, flags);
	live = pc->live;
	if (live)
		amupmu_read_entry(s, pc, ent, true);
	*now = local_clock();
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	return live;
}

static __always_inline bool amupmu_read_here_shared(struct amupmu_session *s, unsigned int cpu,
						    struct amupmu_pmu_read_cpu *ent, u64 *now)
{
	unsigned long flags;
	bool live;

	local_irq_save(flags);
	live = amupmu_perf_live(s, cpu);
	if (live)
		amupmu_perf_read_entry(s, cpu, ent);
	*now = local_clock();
	local_irq_restore(flags);
	return live;
}

/*
 * The read fast path: a single-CPU READ by a caller on that CPU. With
 * preemption off that CPU cannot go offline, so neither the hotplug lock
 * nor an IPI is needed. The entry goes to @ent (on the caller's stack) and
 * reaches user space after every lock is dropped. Returns -EAGAIN to take
 * the general path instead. Inlined into amupmu_pmu_read_fast().
 */
static __always_inline int amupmu_pmu_read_local(struct amupmu_session *s,
						 struct amupmu_pmu_read *rd,
						 struct amupmu_read_one *one)
{
	struct amupmu_sess_cpu *sc;
	unsigned int cpu;
	bool live;
	u64 now;

	/*
	 * Without the own rwsem: the per-CPU state lives as long as the module
	 * and the session's as long as s->lock is held, so a device removal
	 * racing this read can at worst let it return the totals of a group
	 * that ended a moment before.
	 */
	/* contended (another command of this session runs): the general path waits */
	if (!mutex_trylock(&s->lock))
		return -EAGAIN;
	if (!s->configured || s->multiplex ||
	    (!s->shared && (!READ_ONCE(amupmu_dev.pmu_irq) || amupmu_sess_stale(s))) ||
	    rd->flags || rd->nr_cpus || rd->nr_values < s->nr_events)
		goto slow;
	cpu = get_cpu();
	if (rd->cpu != cpu || !cpumask_test_cpu(cpu, s->cpus)) {
		put_cpu();
		goto slow;
	}
	sc = amupmu_sc(s, cpu);
	live = s->shared ? amupmu_read_here_shared(s, cpu, &one->ent, &now) :
			   amupmu_read_here(s, cpu, &one->ent, &now);
	/* the times too: once preemptible again this CPU may go offline */
	if (sc->run_since)
		one->ent.time_running += now - sc->run_since;
	put_cpu();
	if (!live)
		goto slow;

	amupmu_read_fill(rd, &one->ent);
	rd->throttled = READ_ONCE(sc->throttled);
	rd->nr_values = s->nr_events;
	rd->time_enabled = s->enabled_ns + (s->enabled ? now - s->enabled_since : 0);
	mutex_unlock(&s->lock);
	return 0;
slow:
	mutex_unlock(&s->lock);
	return -EAGAIN;
}

/* ------------------------------------------------------------ counters view (sysfs) */

static void amupmu_view_update_ipi(void *arg)
{
	struct amupmu_pmu_cpu *pc = arg;
	unsigned long used;
	unsigned int idx;

	raw_spin_lock(&pc->lock);
	used = pc->used;
	for_each_set_bit(idx, &used, AMUPMU_PMU_MAX_EVENTS)
		amupmu_counter_fold(&pc->cnt[idx], idx);
	raw_spin_unlock(&pc->lock);
}

/**
 * amupmu_pmu_cpu_counters() - the counters allocated on a CPU in exclusive mode
 * @cpu: the CPU
 * @cnt: AMUPMU_PMU_MAX_EVENTS entries: entry n gets counter n's type and
 *	totals when it is allocated
 *
 * The totals are folded on the CPU when it is online, so they include what
 * it counted so far.
 *
 * Return: the allocated counters (bit n: event counter n, bit 31 the cycle
 * counter); 0 when amupmu does not own the PMU.
 */
u32 amupmu_pmu_cpu_counters(unsigned int cpu, struct amupmu_pmu_counter_view *cnt)
{
	struct amupmu_pmu_cpu *pc = amupmu_pc(cpu);
	unsigned long used = 0, flags;
	unsigned int idx;

	cpus_read_lock();
	down_read(&amupmu_pmu_own_rwsem);
	mutex_lock(&amupmu_pmu_alloc_lock);
	if (READ_ONCE(amupmu_dev.pmu_irq)) {
		/* fold on the CPU: the totals include what it counted so far */
		if (pc->live)
			smp_call_function_single(cpu, amupmu_view_update_ipi, pc, 1);
		raw_spin_lock_irqsave(&pc->lock, flags);
		used = pc->used;
		for_each_set_bit(idx, &used, AMUPMU_PMU_MAX_EVENTS) {
			cnt[idx].evtyper = pc->cnt[idx].evtyper;
			cnt[idx].total = pc->cnt[idx].total;
			cnt[idx].overflows = pc->cnt[idx].overflows;
		}
		raw_spin_unlock_irqrestore(&pc->lock, flags);
	}
	mutex_unlock(&amupmu_pmu_alloc_lock);
	up_read(&amupmu_pmu_own_rwsem);
	cpus_read_unlock();
	return used;
}

/*
 * Copy @n values to user space, after every lock: in one user-access
 * window where the kernel has one (6.12: no hardened-usercopy walk, no
 * call), else copy_to_user().
 */
static __always_inline int amupmu_put_values(struct amupmu_pmu_value __user *u,
					     const struct amupmu_pmu_value *vals, unsigned int n)
{
#if AMUPMU_HAVE_UACCESS_WINDOW
	unsigned int e;

	if (!user_access_begin(u, n * sizeof(*u)))
		return -EFAULT;
	for (e = 0; e < n; e++) {
		unsafe_put_user(vals[e].value, &u[e].value, efault);
		unsafe_put_user(vals[e].overflows, &u[e].overflows, efault);
	}
	user_access_end();
	return 0;
efault:
	user_access_end();
	return -EFAULT;
#else
	return copy_to_user(u, vals, n * sizeof(*vals)) ? -EFAULT : 0;
#endif
}

/* Write a READ's output fields back into @u, the user's struct of this kernel's size. */
static int amupmu_put_read(struct amupmu_pmu_read __user *u, const struct amupmu_pmu_read *rd)
{
#if AMUPMU_HAVE_UACCESS_WINDOW
	if (!user_access_begin(u, sizeof(*u)))
		return -EFAULT;
	unsafe_put_user(rd->nr_values, &u->nr_values, efault);
	unsafe_put_user(rd->time_enabled, &u->time_enabled, efault);
	unsafe_put_user(rd->time_running, &u->time_running, efault);
	unsafe_put_user(rd->state, &u->state, efault);
	unsafe_put_user(rd->samples, &u->samples, efault);
	unsafe_put_user(rd->lost, &u->lost, efault);
	unsafe_put_user(rd->skid, &u->skid, efault);
	unsafe_put_user(rd->throttled, &u->throttled, efault);
	user_access_end();
	return 0;
efault:
	user_access_end();
	return -EFAULT;
#else
	return copy_to_user(u, rd, sizeof(*rd)) ? -EFAULT : 0;
#endif
}

/**
 * amupmu_pmu_read_fast() - AMUPMU_PMU_READ without the general dispatch
 * @s: the session
 * @u: the user's struct amupmu_pmu_read
 *
 * The common case only: a struct of this kernel's size, one CPU, read on
 * the CPU the caller runs on (amupmu_pmu_read_local()). A struct that is
 * shorter (it may end where the user's mapping ends, so the copy can
 * fault), or any other case, returns -EAGAIN having changed nothing, and
 * the general dispatch then runs the command from the start.
 *
 * Return: 0, -EAGAIN, or -errno from writing the result back.
 */
int amupmu_pmu_read_fast(struct amupmu_session *s, struct amupmu_pmu_read __user *u)
{
	struct amupmu_pmu_read rd __uninitialized;
	/* only the group's nr_values entries are filled and copied: no zeroing */
	struct amupmu_read_one one __uninitialized;

	if (copy_from_user(&rd, u, sizeof(rd)) || rd.size != sizeof(rd) ||
	    amupmu_pmu_read_local(s, &rd, &one))
		return -EAGAIN;
	/* the values first: a READ whose values cannot be written writes nothing else */
	return amupmu_put_values(u64_to_user_ptr(rd.values_uptr), one.values, rd.nr_values) ?:
	       amupmu_put_read(u, &rd);
}

/*
 * Copy a READ with AMUPMU_PMU_READ_TIMES out: @nent entries (with
 * AMUPMU_PMU_READ_ALL, the header of each then its values) of @ustride
 * bytes, each value a struct amupmu_pmu_value_times. Not the hot path.
 */
static int amupmu_put_times(struct amupmu_read_req *q, size_t nent, u64 ustride)
{
	bool all = q->rd->flags & AMUPMU_PMU_READ_ALL;
	unsigned int i, e;

	if (all)
		nent = q->rd->nr_cpus;
	for (i = 0; i < nent; i++) {
		const struct amupmu_pmu_read_cpu *ent = (void *)(q->buf + i * q->stride);
		u8 __user *dst = u64_to_user_ptr(q->rd->values_uptr + i * ustride);

		if (all) {
			if (copy_to_user(dst, ent, sizeof(*ent)))
				return -EFAULT;
			dst += sizeof(*ent);
		}
		for (e = 0; e < q->rd->nr_values; e++) {
			struct amupmu_pmu_value_times v = {
				.value = ent->values[e].value,
				.overflows = ent->values[e].overflows,
				.time_enabled = q->times[i][e].enabled,
				.time_running = q->times[i][e].running,
			};

			if (copy_to_user(dst + e * sizeof(v), &v, sizeof(v)))
				return -EFAULT;
		}
	}
	return 0;
}

/**
 * amupmu_pmu_cmd_read() - AMUPMU_PMU_READ
 * @s: the session
 * @rd: the kernel copy of the command's struct
 *
 * The values go to user space after the locks, in one copy.
 *
 * Return: 0 or -errno; ENXIO whenever amupmu does not own the PMU.
 */
int amupmu_pmu_cmd_read(struct amupmu_session *s, struct amupmu_pmu_read *rd)
{
	struct amupmu_read_req q = { .s = s, .rd = rd };
	struct amupmu_read_one one __uninitialized;
	bool all = rd->flags & AMUPMU_PMU_READ_ALL;
	bool times = rd->flags & AMUPMU_PMU_READ_TIMES;
	size_t nent = all ? min_t(size_t, rd->nr_cpus, nr_cpu_ids) : 1;
	u32 gstate = 0;
	u64 ustride;
	int ret;

	if (rd->flags & ~(AMUPMU_PMU_READ_ALL | AMUPMU_PMU_READ_TIMES) || (!all && rd->nr_cpus))
		return -EINVAL;
	if (all && (!rd->nr_cpus || rd->nr_cpus > AMUPMU_PMU_READ_CPUS_MAX))
		return -EINVAL;

	/*
	 * The user's stride is its own; the kernel's entries take it when it
	 * is no larger than the largest group (then the answer for a group of
	 * that size is one copy), else room for the largest group. With
	 * times, the kernel keeps them apart and the user's stride has them.
	 */
	ustride = sizeof(struct amupmu_pmu_read_cpu) + (u64)rd->nr_values * sizeof(one.values[0]);
	q.stride = min_t(u64, ustride, sizeof(one));
	if (times) {
		ustride += (u64)rd->nr_values * (sizeof(struct amupmu_pmu_value_times) -
						 sizeof(one.values[0]));
		q.times = kvcalloc(nent, sizeof(*q.times), GFP_KERNEL);
		if (!q.times)
			return -ENOMEM;
	}
	if (all) {
		q.buf = kvzalloc(nent * q.stride, GFP_KERNEL);
		if (!q.buf) {
			kvfree(q.times);
			return -ENOMEM;
		}
	} else {
		q.buf = (u8 *)&one;
	}

	amupmu_pmu_lock(s);
	ret = amupmu_pmu_owned(s) ?: amupmu_pmu_read(&q);
	if (!ret && all) {
		rd->nr_cpus = cpumask_weight(s->cpus);
		gstate = (s->enabled ? AMUPMU_READ_ENABLED : 0) |
			 (s->shared ? AMUPMU_READ_SHARED : 0);
	}
	amupmu_pmu_unlock(s);
	if (ret)
		goto out;

	if (times) {
		ret = amupmu_put_times(&q, nent, ustride);
		if (!all)
			amupmu_read_fill(rd, &one.ent);
	} else if (all) {
		/* each entry is written for the group's values; the rest of the stride as it was */
		unsigned int i;
		size_t used = sizeof(struct amupmu_pmu_read_cpu) +
			      rd->nr_values * sizeof(struct amupmu_pmu_value);

		if (used == ustride) {
			if (copy_to_user(u64_to_user_ptr(rd->values_uptr), q.buf,
					 rd->nr_cpus * ustride))
				ret = -EFAULT;
			i = rd->nr_cpus;
		} else {
			i = 0;
		}
		for (; i < rd->nr_cpus && !ret; i++)
			if (copy_to_user(u64_to_user_ptr(rd->values_uptr + i * ustride),
					 q.buf + i * q.stride, used))
				ret = -EFAULT;
	} else {
		amupmu_read_fill(rd, &one.ent);
		ret = amupmu_put_values(u64_to_user_ptr(rd->values_uptr), one.values,
					rd->nr_values);
	}
	if (all) {
		rd->time_running = 0;
		rd->state = gstate;
		rd->samples = 0;
		rd->lost = 0;
		rd->skid = 0;
	}
out:
	if (all)
		kvfree(q.buf);
	kvfree(q.times);
	return ret;
}

/*
 * The errors a ring is due before the locks (ENXIO, EACCES). Its charge to
 * the caller's locked memory (ENOMEM beyond RLIMIT_MEMLOCK without
 * CAP_IPC_LOCK, as perf's buffers) is made with the ring, under the locks
 * (atomic: amupmu_mbuf_init()).
 */
static int amupmu_config_charge(struct amupmu_session *s, const struct amupmu_pmu_config *cfg,
				struct amupmu_config_req *req)
{
	if (!cfg->ring_pages)
		return 0;
	if (!READ_ONCE(amupmu_dev.pmu_irq) && !amupmu_perf_available())
		return -ENXIO;
	if (!perfmon_capable())
		return -EACCES;
	if (!current->mm)
		return -EINVAL;
	return 0;
}

/**
 * amupmu_pmu_cmd() - run a PMU command of a session (READ has its own,
 *	amupmu_pmu_cmd_read())
 * @s: the session
 * @cmd: AMUPMU_CMD_PMU_CONFIG or AMUPMU_CMD_PMU_CTL
 * @arg: the kernel copy of the command's struct
 *
 * Return: 0 or -errno; ENXIO whenever amupmu does not own the PMU (or the
 * session's group went with a device that was removed; RELEASE still frees
 * such a group).
 */
int amupmu_pmu_cmd(struct amupmu_session *s, unsigned int cmd, void *arg)
{
	struct amupmu_config_req *req = NULL;
	int ret;

	/* user memory is read before the locks */
	if (cmd == AMUPMU_CMD_PMU_CONFIG) {
		req = kzalloc(sizeof(*req), GFP_KERNEL);
		if (!req || !zalloc_cpumask_var(&req->cpus, GFP_KERNEL)) {
			kfree(req);
			return -ENOMEM;
		}
		ret = amupmu_config_copy_in(arg, req);
		if (ret)
			goto out_req;
		ret = amupmu_config_charge(s, arg, req);
		if (ret)
			goto out_req;
	}

	amupmu_pmu_lock(s);
	if (cmd == AMUPMU_CMD_PMU_CTL && amupmu_sess_stale(s) &&
	    ((struct amupmu_pmu_ctl *)arg)->op == AMUPMU_PMU_CTL_RELEASE)
		ret = amupmu_pmu_ctl(s, arg);
	else
		ret = amupmu_pmu_owned(s) ?:
		      cmd == AMUPMU_CMD_PMU_CONFIG ? amupmu_pmu_config(s, arg, req) :
						     amupmu_pmu_ctl(s, arg);
	amupmu_pmu_unlock(s);
out_req:
	if (req) {
		free_cpumask_var(req->cpus);
		kfree(req);
	}
	return ret;
}

/**
 * amupmu_pmu_release_group() - AMUPMU_PMU_CTL_RELEASE, for a CONFIG whose
 *	answer could not be written back (so that it changes nothing)
 * @s: the session
 */
void amupmu_pmu_release_group(struct amupmu_session *s)
{
	amupmu_pmu_lock(s);
	amupmu_sess_release_group(s);
	amupmu_pmu_unlock(s);
}

/**
 * amupmu_pmu_file_release() - the file is closed: free the session's group
 * @s: the session; no command of it runs any more
 */
void amupmu_pmu_file_release(struct amupmu_session *s)
{
	if (!s->configured)
		return;
	amupmu_pmu_lock(s);
	amupmu_sess_release_group(s);
	amupmu_pmu_unlock(s);
}
