// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: PMUv3 exclusive mode, the hardware. When the "amupmu,pmuv3"
 * devicetree node bound, amupmu programs the PMU of every CPU itself and
 * takes its overflow PPI; sessions (open files, amupmu_session.c) count
 * groups of events per CPU. Here: the PMU's registers, its overflow
 * interrupt and throttling, CPU power management, the claim and release of
 * the PMU and each CPU's start and stop. The PMU commands of a session
 * (CONFIG, CTL, READ and its fast path), for both modes, are in
 * amupmu_pmu_cmd.c; the per-CPU state both use and the lock order are in
 * amupmu_pmu_excl.h.
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
#include <linux/cpu.h>
#include <linux/cpu_pm.h>
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/irq_work.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/pid_namespace.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/jiffies.h>
#include <linux/wait.h>
#include <asm/irq_regs.h>
#include <asm/sysreg.h>
#include <asm/virt.h>
#include <clocksource/arm_arch_timer.h>

#include "amupmu.h"
#include "amupmu_compat.h"
#include "amupmu_counter.h"
#include "amupmu_pmu.h"
#include "amupmu_pmu_excl.h"
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

#define AMUPMU_PMCCFILTR_MASK	(ARMV8_PMU_EXCLUDE_EL1 | ARMV8_PMU_EXCLUDE_EL0 | \
				 ARMV8_PMU_INCLUDE_EL2)

/* the per-CPU state and its locks, with amupmu_pmu_cmd.c (amupmu_pmu_excl.h) */
struct amupmu_pmu_cpu __percpu *amupmu_pmu_cpus;
/* counter allocation: the used masks and owners (order: amupmu_pmu_excl.h) */
DEFINE_MUTEX(amupmu_pmu_alloc_lock);
/* read by session commands, written when the device goes away */
DECLARE_RWSEM(amupmu_pmu_own_rwsem);
static DEFINE_PER_CPU(u8, amupmu_pmu_irq_cookie);

/* ------------------------------------------------------------ hardware, on the CPU */

/* PMEVCNTR<n>_EL0 and PMEVTYPER<n>_EL0 by number, as amupmu_hw_read_counter() */
#define AMUPMU_WR_EVCNTR(n)		write_sysreg(val, pmevcntr##n##_el0)
#define AMUPMU_WR_EVTYPER(n)		write_sysreg(val, pmevtyper##n##_el0)

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

/* Stop the counters of @mask and clear their overflows; their totals are kept. */
static void amupmu_hw_counters_stop(unsigned long mask)
{
	write_sysreg(mask, pmcntenclr_el0);
	write_sysreg(mask, pmintenclr_el1);
	isb();
	write_sysreg(mask, pmovsclr_el0);
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
 * saved, or its start value), interrupt enabled, stopped: ENABLE, or
 * amupmu_pmu_hw_setup() for the running ones, starts a group with one
 * write (amupmu_op_enable() has why). On the CPU, under pc->lock.
 */
static void amupmu_hw_counter_program(struct amupmu_pmu_cpu *pc, unsigned int idx)
{
	struct amupmu_pmu_counter *c = &pc->cnt[idx];

	pc->throttled &= ~BIT(idx);	/* its interrupt is enabled below */
	amupmu_hw_counters_stop(BIT(idx));
	amupmu_hw_write_type(idx, c->evtyper);
	amupmu_hw_write_counter(idx, c->prev);
	write_sysreg(BIT(idx), pmintenset_el1);
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
		local64_inc(&amupmu_pc(cpu)->lost_total);
		amupmu_nl_ring_lost(s->nl.id, cpu, sc->lost);
	}
}

/**
 * amupmu_sess_throttled() - count a throttle of the session's sample interrupts
 * @s: the session
 * @cpu: this CPU
 *
 * The session's count on @cpu (READ's throttled), the CPU's total over
 * every session, and a THROTTLE netlink event. In the sample interrupt of
 * either mode, on @cpu, with the session's state of that CPU locked as for
 * amupmu_sess_sample().
 */
void amupmu_sess_throttled(struct amupmu_session *s, unsigned int cpu)
{
	struct amupmu_sess_cpu *sc = amupmu_sc(s, cpu);

	sc->throttled++;
	local64_inc(&amupmu_pc(cpu)->throttled_total);
	amupmu_nl_throttle(s->nl.id, cpu, sc->throttled);
}

/**
 * amupmu_pmu_totals() - a CPU's lost samples and throttles since load
 * @cpu: a possible CPU
 * @lost: out: sample records lost on @cpu by every session's ring
 * @throttled: out: throttles of every session's sample interrupts on @cpu
 *
 * Any context; takes no lock (amupmu_pmu_cpu.lost_total has the rule).
 */
void amupmu_pmu_totals(unsigned int cpu, u64 *lost, u64 *throttled)
{
	struct amupmu_pmu_cpu *pc = amupmu_pc(cpu);

	*lost = local64_read(&pc->lost_total);
	*throttled = local64_read(&pc->throttled_total);
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
		amupmu_sess_throttled(s, pc->cpu);
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
	write_sysreg(used & pc->running, pmcntenset_el0);
	isb();
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
	for_each_set_bit(idx, &used, AMUPMU_PMU_MAX_EVENTS)
		amupmu_counter_fold(&pc->cnt[idx], idx);
	amupmu_hw_counters_stop(used);
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

/*
 * The largest sample period of a CPU's event counters: their width, which
 * is 64 bits only with PMUv3p5 and pmu_counter_bits=64 (PMCR_EL0.LP).
 */
u64 amupmu_pmu_period_max(const struct amupmu_cpu_info *ci)
{
	if (pmu_counter_bits == 64 && ci->pmu_version >= ID_AA64DFR0_EL1_PMUVer_V3P5)
		return S64_MAX;
	return U32_MAX;
}

/* ------------------------------------------------------------ a group's counters */

/*
 * What a session command does to its counters on one CPU (@mask: their
 * indexes there): on that CPU (@hw: its PMU may be touched) or, for a CPU
 * that is not live, from anywhere (@hw false). Under pc->lock.
 */
typedef void (*amupmu_counter_op_t)(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
				    unsigned long mask, bool hw);

struct amupmu_sess_ipi {
	struct amupmu_session *s;
	amupmu_counter_op_t op;
};

static void amupmu_sess_cpu_op(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			       amupmu_counter_op_t op, bool hw)
{
	const u8 *idx = amupmu_sess_idx(s, pc->cpu);
	unsigned long mask = 0;
	unsigned int e;

	for (e = 0; e < s->nr_events; e++)
		mask |= BIT(idx[e]);
	op(s, pc, mask, hw);
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

	lockdep_assert_held_read(&amupmu_pmu_own_rwsem);
	lockdep_assert_held(&s->lock);

	cpumask_and(s->scratch, s->cpus, cpu_online_mask);
	on_each_cpu_mask(s->scratch, amupmu_sess_ipi_fn, &a, true);
	for_each_cpu_andnot(cpu, s->cpus, cpu_online_mask) {
		struct amupmu_pmu_cpu *pc = amupmu_pc(cpu);

		raw_spin_lock_irqsave(&pc->lock, flags);
		amupmu_sess_cpu_op(s, pc, op, false);
		raw_spin_unlock_irqrestore(&pc->lock, flags);
	}
}

/*
 * A group starts and stops as one: its counters by one write of
 * PMCNTENSET_EL0 or PMCNTENCLR_EL0, so that they count over the same
 * instructions and a sample's values (an overflow taken after the stop
 * included) are of one moment.
 */
static void amupmu_op_enable(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			     unsigned long mask, bool hw)
{
	pc->running |= mask;
	if (hw)
		write_sysreg(mask, pmcntenset_el0);
}

static void amupmu_op_disable(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			      unsigned long mask, bool hw)
{
	unsigned int idx;

	pc->running &= ~mask;
	if (!hw)
		return;
	write_sysreg(mask, pmcntenclr_el0);
	isb();
	for_each_set_bit(idx, &mask, AMUPMU_PMU_MAX_EVENTS)
		amupmu_counter_fold(&pc->cnt[idx], idx);
}

static void amupmu_counter_reset(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
				 unsigned int idx, bool hw)
{
	struct amupmu_pmu_counter *c = &pc->cnt[idx];
	struct amupmu_sess_cpu *sc = amupmu_sc(s, pc->cpu);

	/*
	 * Start it over: one span from its overflow, so that a counter
	 * re-armed every span keeps its margin and a sampling one its
	 * period (amupmu_op_reset() then drops an overflow it had before).
	 * A CPU that is not live takes the start value when it is programmed.
	 */
	if (hw) {
		amupmu_counter_init(pc, idx);
		amupmu_hw_write_counter(idx, c->prev);
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

/*
 * A running group is stopped while its counters start over and started
 * again with one write each way, so that they count from the same
 * instruction; an overflow they had before is dropped (its interrupt
 * would re-arm nothing and count one for the new total).
 */
static void amupmu_op_reset(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			    unsigned long mask, bool hw)
{
	unsigned long run = mask & pc->running;
	unsigned int idx;

	if (hw) {
		write_sysreg(run, pmcntenclr_el0);
		isb();
	}
	for_each_set_bit(idx, &mask, AMUPMU_PMU_MAX_EVENTS)
		amupmu_counter_reset(s, pc, idx, hw);
	if (hw) {
		isb();
		write_sysreg(mask, pmovsclr_el0);
		write_sysreg(run, pmcntenset_el0);
	}
}

/* A new group, stopped: CONFIG cleared its bits in pc->running, ENABLE starts it. */
static void amupmu_op_program(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			      unsigned long mask, bool hw)
{
	unsigned int idx;

	pc->ovs_saved &= ~mask;
	for_each_set_bit(idx, &mask, AMUPMU_PMU_MAX_EVENTS) {
		amupmu_counter_init(pc, idx);
		if (hw)
			amupmu_hw_counter_program(pc, idx);
		else
			pc->cnt[idx].mask = 0;
	}
}

/* The counters leave the group: stopped, freed (under amupmu_pmu_alloc_lock too). */
static void amupmu_op_release(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			      unsigned long mask, bool hw)
{
	unsigned int idx;

	if (hw)
		amupmu_hw_counters_stop(mask);
	pc->used &= ~mask;
	pc->running &= ~mask;
	pc->throttled &= ~mask;
	for_each_set_bit(idx, &mask, AMUPMU_PMU_MAX_EVENTS)
		pc->cnt[idx].owner = NULL;
}

/* The group's counters on its CPUs, for the PMU commands (amupmu_pmu_excl.h). */
void amupmu_pmu_group_program(struct amupmu_session *s)
{
	amupmu_sess_each_cpu(s, amupmu_op_program);
}

void amupmu_pmu_group_enable(struct amupmu_session *s)
{
	amupmu_sess_each_cpu(s, amupmu_op_enable);
}

void amupmu_pmu_group_disable(struct amupmu_session *s)
{
	amupmu_sess_each_cpu(s, amupmu_op_disable);
}

void amupmu_pmu_group_reset(struct amupmu_session *s)
{
	amupmu_sess_each_cpu(s, amupmu_op_reset);
}

/* Free the group's counters (under amupmu_pmu_alloc_lock too). */
void amupmu_pmu_group_free(struct amupmu_session *s)
{
	mutex_lock(&amupmu_pmu_alloc_lock);
	amupmu_sess_each_cpu(s, amupmu_op_release);
	mutex_unlock(&amupmu_pmu_alloc_lock);
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
