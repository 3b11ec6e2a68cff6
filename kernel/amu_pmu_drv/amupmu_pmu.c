// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: PMUv3 exclusive mode. When the "amupmu,pmuv3" devicetree node
 * bound, amupmu programs the PMU of every CPU itself and takes its
 * overflow PPI; sessions (open files) count groups of events per CPU.
 *
 * Locking, outermost first:
 *  - cpus_read_lock(): every session command that touches a CPU's PMU holds
 *    it, so CPUs cannot come or go meanwhile; the hotplug callbacks run
 *    under the hotplug write lock, so they exclude session commands.
 *  - amupmu_pmu_alloc_lock: counter allocation (the used masks and owners).
 *  - amupmu_pmu_cpu.lock (raw, IRQ-safe): a CPU's totals; taken by the
 *    overflow handler and the IPIs on that CPU and by readers of an offline
 *    CPU. The hardware of a CPU is only touched on that CPU.
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
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/cpu_pm.h>
#include <linux/cpumask.h>
#include <linux/interrupt.h>
#include <linux/irq_work.h>
#include <linux/sched/clock.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <asm/irq_regs.h>
#include <asm/sysreg.h>
#include <clocksource/arm_arch_timer.h>

#include "amupmu.h"
#include "amupmu_compat.h"
#include "amupmu_counter.h"

static_assert(AMUPMU_PMEVTYPER_P == ARMV8_PMU_EXCLUDE_EL1);
static_assert(AMUPMU_PMEVTYPER_U == ARMV8_PMU_EXCLUDE_EL0);
static_assert(AMUPMU_PMEVTYPER_NSH == ARMV8_PMU_INCLUDE_EL2);

static unsigned int pmu_counter_bits = 64;
module_param(pmu_counter_bits, uint, 0444);
MODULE_PARM_DESC(pmu_counter_bits,
		 "event counter width: 64 (PMCR_EL0.LP where PMUv3p5 has it) or 32 (overflows accumulated by the interrupt)");

/*
 * The smallest sample_period: an interrupt per 10,000 events at most. The
 * module parameter can raise it (or lower it to 1,000) at load time or,
 * for root, later through /sys/module/amupmu/parameters/; a write out of
 * range is refused with EINVAL and changes nothing.
 */
#define AMUPMU_PERIOD_MIN_DEFAULT	10000
#define AMUPMU_PERIOD_MIN_FLOOR		1000

unsigned int amupmu_sample_period_min = AMUPMU_PERIOD_MIN_DEFAULT;

static int amupmu_period_min_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	/* not a number, or beyond 32 bits (kstrtouint: ERANGE): EINVAL all the same */
	if (kstrtouint(val, 0, &v) || v < AMUPMU_PERIOD_MIN_FLOOR)
		return -EINVAL;
	WRITE_ONCE(amupmu_sample_period_min, v);
	return 0;
}

static const struct kernel_param_ops amupmu_period_min_ops = {
	.set = amupmu_period_min_set,
	.get = param_get_uint,
};

module_param_cb(sample_period_min, &amupmu_period_min_ops, &amupmu_sample_period_min, 0644);
MODULE_PARM_DESC(sample_period_min,
		 "smallest sample_period accepted, 1000 .. 4294967295 (default 10000)");

#define AMUPMU_CYCLE_IDX	31	/* PMCCNTR_EL0's bit in PMCNTEN/PMINTEN/PMOVS */
#define AMUPMU_CPU_CYCLES	0x11
#define AMUPMU_PMCCFILTR_MASK	(ARMV8_PMU_EXCLUDE_EL1 | ARMV8_PMU_EXCLUDE_EL0 | \
				 ARMV8_PMU_INCLUDE_EL2)
#define AMUPMU_EV_ALL		(AMUPMU_EV_EXCL_EL0 | AMUPMU_EV_EXCL_EL1 | \
				 AMUPMU_EV_INCL_EL2 | AMUPMU_EV_RAW)
#define AMUPMU_CPUS_LEN_MAX	1024
#define AMUPMU_PFR0_EL2		GENMASK_ULL(11, 8)	/* ID_AA64PFR0_EL1.EL2 */

/**
 * struct amupmu_pmu_counter - one hardware counter of one CPU
 * @owner: the session it is allocated to, NULL when free
 * @evtyper: PMEVTYPER<n>_EL0 (or PMCCFILTR_EL0) value
 * @ev: index of the counter's event in its owner's group
 * @prev: hardware value at the last update
 * @total: 64-bit total up to @prev
 * @overflows: overflow interrupts taken
 * @period: sample period, 0 when the counter only counts
 * @mask: its width as programmed (amupmu_hw_counter_start())
 * @span: events from one re-arm to the next overflow: @period, 2^31 for a
 *	32-bit counter that only counts, 0 when the overflow only folds
 *
 * A power-of-two size (64 bytes): the read path indexes an array of them.
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
 * @lock: guards @cnt[].prev/total/overflows and @live
 * @used: counters allocated (bit n: event counter n, bit 31: cycle
 *	counter); under amupmu_pmu_alloc_lock, read by hotplug callbacks
 * @live: the CPU is online and its counters are programmed
 * @mask: width mask of its event counters (32 or 64 bits)
 * @nr_counters: PMCR_EL0.N
 * @cnt: the counters
 */
struct amupmu_pmu_cpu {
	raw_spinlock_t lock;
	u32 used;
	bool live;
	u64 mask;
	unsigned int nr_counters;
	struct amupmu_pmu_counter cnt[AMUPMU_PMU_MAX_EVENTS];
};

/**
 * struct amupmu_session - an open file of /dev/amupmu
 * @lock: serialises the session's commands (taken inside cpus_read_lock())
 * @configured: it holds a group
 * @enabled: the group counts
 * @nr_events: events in the group
 * @evtyper: each event's PMEVTYPER value
 * @cpus: the CPU set
 * @idx: counter of event e on CPU c: @idx[c * AMUPMU_PMU_MAX_EVENTS + e]
 * @enabled_ns: time enabled before @enabled_since
 * @enabled_since: when it was last enabled (valid while @enabled)
 * @run_ns: per CPU, time counted before @run_since
 * @run_since: per CPU, when it last started counting there (0: not
 *	counting); written by commands and hotplug callbacks, which exclude
 *	each other through the hotplug lock
 * @period: each event's sample period (0: counting only)
 * @samples: per CPU, records written by that CPU (under its pc->lock)
 * @lost: per CPU, records it dropped because the ring was full (idem)
 * @ring: the sample ring, NULL until a sampling group is configured; kept
 *	when the group is released, freed with the session (under @lock)
 * @read_lock: serialises read()
 * @wait: read() and poll() wait here for records
 * @wake: wakes @wait from the interrupt handler
 */
struct amupmu_session {
	struct mutex lock; /* see @lock above */
	bool configured;
	bool enabled;
	u32 nr_events;
	u32 evtyper[AMUPMU_PMU_MAX_EVENTS];
	cpumask_var_t cpus;
	u8 *idx;
	u64 enabled_ns;
	u64 enabled_since;
	u64 *run_ns;
	u64 *run_since;
	u64 period[AMUPMU_PMU_MAX_EVENTS];
	u64 *samples;
	u64 *lost;
	struct amupmu_ring *ring;
	struct mutex read_lock; /* see @read_lock above */
	wait_queue_head_t wait;
	struct irq_work wake;
};

static struct amupmu_pmu_cpu *amupmu_pmu_cpus;	/* nr_cpu_ids, while exclusive */
static DEFINE_MUTEX(amupmu_pmu_alloc_lock);
static DEFINE_PER_CPU(u8, amupmu_pmu_irq_cookie);

static u8 *amupmu_sess_idx(struct amupmu_session *s, unsigned int cpu)
{
	return &s->idx[cpu * AMUPMU_PMU_MAX_EVENTS];
}

/* ------------------------------------------------------------ hardware, on the CPU */

/* PMEVCNTR<n>_EL0 by number: no PMSELR_EL0 write and ISB on the read path */
#define AMUPMU_EVCNTR_CASE(n)	case n: return read_sysreg(pmevcntr##n##_el0)

static __always_inline u64 amupmu_hw_read_counter(unsigned int idx)
{
	/* 0..31, one jump */
	switch (idx & AMUPMU_CYCLE_IDX) {
	AMUPMU_EVCNTR_CASE(0);
	AMUPMU_EVCNTR_CASE(1);
	AMUPMU_EVCNTR_CASE(2);
	AMUPMU_EVCNTR_CASE(3);
	AMUPMU_EVCNTR_CASE(4);
	AMUPMU_EVCNTR_CASE(5);
	AMUPMU_EVCNTR_CASE(6);
	AMUPMU_EVCNTR_CASE(7);
	AMUPMU_EVCNTR_CASE(8);
	AMUPMU_EVCNTR_CASE(9);
	AMUPMU_EVCNTR_CASE(10);
	AMUPMU_EVCNTR_CASE(11);
	AMUPMU_EVCNTR_CASE(12);
	AMUPMU_EVCNTR_CASE(13);
	AMUPMU_EVCNTR_CASE(14);
	AMUPMU_EVCNTR_CASE(15);
	AMUPMU_EVCNTR_CASE(16);
	AMUPMU_EVCNTR_CASE(17);
	AMUPMU_EVCNTR_CASE(18);
	AMUPMU_EVCNTR_CASE(19);
	AMUPMU_EVCNTR_CASE(20);
	AMUPMU_EVCNTR_CASE(21);
	AMUPMU_EVCNTR_CASE(22);
	AMUPMU_EVCNTR_CASE(23);
	AMUPMU_EVCNTR_CASE(24);
	AMUPMU_EVCNTR_CASE(25);
	AMUPMU_EVCNTR_CASE(26);
	AMUPMU_EVCNTR_CASE(27);
	AMUPMU_EVCNTR_CASE(28);
	AMUPMU_EVCNTR_CASE(29);
	AMUPMU_EVCNTR_CASE(30);
	default: /* AMUPMU_CYCLE_IDX */
		return read_sysreg(pmccntr_el0);
	}
}

static void amupmu_hw_write_counter(unsigned int idx, u64 val)
{
	if (idx == AMUPMU_CYCLE_IDX) {
		write_sysreg(val, pmccntr_el0);
		return;
	}
	write_sysreg(idx, pmselr_el0);
	isb();
	write_sysreg(val, pmxevcntr_el0);
}

static void amupmu_hw_write_type(unsigned int idx, u32 evtyper)
{
	if (idx == AMUPMU_CYCLE_IDX) {
		write_sysreg(evtyper & AMUPMU_PMCCFILTR_MASK, pmccfiltr_el0);
		return;
	}
	write_sysreg(idx, pmselr_el0);
	isb();
	write_sysreg(evtyper, pmxevtyper_el0);
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

static void amupmu_counter_update(struct amupmu_pmu_cpu *pc, unsigned int idx)
{
	amupmu_counter_fold(&pc->cnt[idx], idx);
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
 * Program a counter from zero (a re-armed one from 2^width - span, see
 * struct amupmu_pmu_counter), interrupt enabled, counting if @run.
 */
static void amupmu_hw_counter_start(struct amupmu_pmu_cpu *pc, unsigned int idx, bool run)
{
	struct amupmu_pmu_counter *c = &pc->cnt[idx];

	amupmu_hw_counter_stop(idx);
	amupmu_hw_write_type(idx, c->evtyper);
	c->mask = amupmu_counter_mask(pc, idx);
	c->span = amupmu_counter_span(c->period, c->mask);
	c->prev = -c->span & c->mask;
	amupmu_hw_write_counter(idx, c->prev);
	write_sysreg(BIT(idx), pmintenset_el1);
	if (run)
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

/*
 * Write the sample of counter @c's overflow on this CPU into its session's
 * ring: the interrupted context (PC, EL, task), the generic timer and the
 * group's totals. In the interrupt handler, under pc->lock.
 */
static void amupmu_sample(struct amupmu_pmu_cpu *pc, const struct amupmu_pmu_counter *c,
			  unsigned int cpu)
{
	struct amupmu_session *s = c->owner;
	struct pt_regs *regs = get_irq_regs();
	/* filled up to len, the part copied: no zeroing (INIT_STACK_ALL_ZERO) */
	struct amupmu_sample_buf b __uninitialized;
	u32 len = sizeof(b.rec) + s->nr_events * sizeof(u64);

	b.rec = (struct amupmu_sample) {
		.size = len,
		.type = AMUPMU_SAMPLE_PMU_OVERFLOW,
		.event = c->ev,
		.cpu = cpu,
		.nr_values = s->nr_events,
		.pid = task_tgid_nr(current),
		.tid = task_pid_nr(current),
		.time = arch_timer_read_counter(),
	};
	if (regs) {
		b.rec.pc = instruction_pointer(regs);
		b.rec.el = user_mode(regs) ? 0 : FIELD_GET(GENMASK(3, 2), regs->pstate);
	}
	amupmu_collect_totals(pc, amupmu_sess_idx(s, cpu), s->nr_events, b.values);
	if (amupmu_ring_write(s->ring, &b, len)) {
		s->samples[cpu]++;
		/*
		 * The wake-up is an irq_work, i.e. an IPI to this CPU: only
		 * when a reader waits. wq_has_sleeper()'s barrier pairs with
		 * the one between a reader queueing itself and looking at the
		 * ring (set_current_state() in read(), smp_mb() in poll()).
		 */
		if (wq_has_sleeper(&s->wait))
			irq_work_queue(&s->wake);
	} else {
		s->lost[cpu]++;
	}
}

static irqreturn_t amupmu_pmu_irq_handler(int irq, void *dev_id)
{
	struct amupmu_pmu_cpu *pc;
	unsigned long ovs;
	unsigned int idx, cpu;

	ovs = read_sysreg(pmovsclr_el0) & U32_MAX;
	if (!ovs)
		return IRQ_NONE;
	write_sysreg(ovs, pmovsclr_el0);
	isb();

	cpu = smp_processor_id();
	pc = &amupmu_pmu_cpus[cpu];
	raw_spin_lock(&pc->lock);
	for_each_set_bit(idx, &ovs, AMUPMU_PMU_MAX_EVENTS) {
		if (pc->used & BIT(idx)) {
			pc->cnt[idx].overflows++;
			if (pc->cnt[idx].span)
				amupmu_counter_rearm(pc, idx);
			else
				amupmu_counter_update(pc, idx);
			if (pc->cnt[idx].period)
				amupmu_sample(pc, &pc->cnt[idx], cpu);
		} else {
			/* not ours: left over from before, mask it */
			write_sysreg(BIT(idx), pmintenclr_el1);
		}
	}
	raw_spin_unlock(&pc->lock);
	return IRQ_HANDLED;
}

/* ------------------------------------------------------------ CPU start/stop */

/*
 * Program this CPU's PMU from the saved state: a known PMCR_EL0, every
 * interrupt masked and cleared, then the allocated counters from zero
 * (their totals are kept), counting when their session is enabled.
 * On the CPU, with the PMU known to be PMUv3.
 */
static void amupmu_pmu_hw_setup(struct amupmu_pmu_cpu *pc, unsigned int pmuver)
{
	unsigned long used, flags;
	unsigned int idx;
	u64 pmcr;

	write_sysreg(U32_MAX, pmcntenclr_el0);
	write_sysreg(U32_MAX, pmintenclr_el1);
	write_sysreg(U32_MAX, pmovsclr_el0);
	pmcr = ARMV8_PMU_PMCR_E | ARMV8_PMU_PMCR_LC | ARMV8_PMU_PMCR_P | ARMV8_PMU_PMCR_C;
	if (pmu_counter_bits == 64 && pmuver >= ID_AA64DFR0_EL1_PMUVer_V3P5)
		pmcr |= ARMV8_PMU_PMCR_LP;
	write_sysreg(pmcr, pmcr_el0);
	isb();

	raw_spin_lock_irqsave(&pc->lock, flags);
	pc->mask = pmcr & ARMV8_PMU_PMCR_LP ? U64_MAX : U32_MAX;
	used = pc->used;
	for_each_set_bit(idx, &used, AMUPMU_PMU_MAX_EVENTS)
		amupmu_hw_counter_start(pc, idx, pc->cnt[idx].owner->enabled);
	raw_spin_unlock_irqrestore(&pc->lock, flags);
}

/* Fold every allocated counter into its total and stop it. On the CPU. */
static void amupmu_pmu_hw_save(struct amupmu_pmu_cpu *pc)
{
	unsigned long used, flags;
	unsigned int idx;

	raw_spin_lock_irqsave(&pc->lock, flags);
	used = pc->used;
	for_each_set_bit(idx, &used, AMUPMU_PMU_MAX_EVENTS) {
		amupmu_counter_update(pc, idx);
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
void amupmu_pmu_cpu_start(void)
{
	int irq = READ_ONCE(amupmu_dev.pmu_irq);
	unsigned int cpu, idx, pmuver;
	struct amupmu_pmu_cpu *pc;
	unsigned long used;
	u64 now;

	pmuver = amupmu_this_cpu_pmuver();
	if (!irq || !pmuver)
		return;
	cpu = smp_processor_id();
	pc = &amupmu_pmu_cpus[cpu];
	/* may run in IPI context: read the CPU itself, not discovery's table */
	pc->nr_counters = FIELD_GET(ARMV8_PMU_PMCR_N, read_sysreg(pmcr_el0));
	amupmu_pmu_hw_setup(pc, pmuver);

	now = local_clock();
	used = pc->used;
	for_each_set_bit(idx, &used, AMUPMU_PMU_MAX_EVENTS) {
		struct amupmu_session *s = pc->cnt[idx].owner;

		if (s->enabled && !s->run_since[cpu])
			s->run_since[cpu] = now;
	}
	WRITE_ONCE(pc->live, true);
	enable_percpu_irq(irq, IRQ_TYPE_NONE);
}

/* On the CPU, before it goes offline or amupmu lets the PMU go: save and stop. */
void amupmu_pmu_cpu_stop(void)
{
	int irq = READ_ONCE(amupmu_dev.pmu_irq);
	unsigned int cpu = smp_processor_id();
	struct amupmu_pmu_cpu *pc;
	unsigned long used, flags;
	unsigned int idx;
	u64 now;

	if (!irq || !amupmu_pmu_cpus[cpu].live)
		return;
	disable_percpu_irq(irq);
	pc = &amupmu_pmu_cpus[cpu];
	amupmu_pmu_hw_save(pc);

	now = local_clock();
	raw_spin_lock_irqsave(&pc->lock, flags);
	used = pc->used;
	for_each_set_bit(idx, &used, AMUPMU_PMU_MAX_EVENTS) {
		struct amupmu_session *s = pc->cnt[idx].owner;

		if (s->run_since[cpu]) {
			s->run_ns[cpu] += now - s->run_since[cpu];
			s->run_since[cpu] = 0;
		}
	}
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

/*
 * CPU power management: a core that powers down in idle or suspend comes
 * back with its PMU reset. Save before, reprogram after (as arm_pmu does).
 * Runs on the CPU with interrupts off.
 */
static int amupmu_cpu_pm_notify(struct notifier_block *nb, unsigned long action, void *v)
{
	struct amupmu_pmu_cpu *pc = &amupmu_pmu_cpus[smp_processor_id()];

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
 * amupmu_pmu_claim() - take the PMU: its PPI and every CPU's registers
 * @dev: the platform device, for messages
 * @irq: the PMU PPI
 */
int amupmu_pmu_claim(struct device *dev, int irq)
{
	unsigned int cpu;
	int ret;

	amupmu_pmu_cpus = kcalloc(nr_cpu_ids, sizeof(*amupmu_pmu_cpus), GFP_KERNEL);
	if (!amupmu_pmu_cpus)
		return -ENOMEM;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		raw_spin_lock_init(&amupmu_pmu_cpus[cpu].lock);

	/* a per-CPU IRQ cannot be shared: this fails if arm_pmu holds it */
	ret = request_percpu_irq(irq, amupmu_pmu_irq_handler, "amupmu", &amupmu_pmu_irq_cookie);
	if (ret) {
		dev_err(dev, "cannot take the PMU interrupt %d: %d\n", irq, ret);
		goto out_free;
	}
	ret = cpu_pm_register_notifier(&amupmu_cpu_pm_nb);
	if (ret)
		goto out_irq;

	/* under the hotplug lock: CPUs coming online see pmu_irq set */
	cpus_read_lock();
	mutex_lock(&amupmu_dev.lock);
	amupmu_dev.exclusive = true;
	WRITE_ONCE(amupmu_dev.pmu_irq, irq);
	mutex_unlock(&amupmu_dev.lock);
	on_each_cpu(amupmu_pmu_cpu_start_ipi, NULL, 1);
	cpus_read_unlock();
	return 0;

out_irq:
	free_percpu_irq(irq, &amupmu_pmu_irq_cookie);
out_free:
	kfree(amupmu_pmu_cpus);
	amupmu_pmu_cpus = NULL;
	return ret;
}

/* Let the PMU go; no session can exist (the module is going away). */
void amupmu_pmu_release(void)
{
	int irq = amupmu_dev.pmu_irq;

	cpus_read_lock();
	on_each_cpu(amupmu_pmu_cpu_stop_ipi, NULL, 1);
	mutex_lock(&amupmu_dev.lock);
	amupmu_dev.exclusive = false;
	WRITE_ONCE(amupmu_dev.pmu_irq, 0);
	mutex_unlock(&amupmu_dev.lock);
	cpus_read_unlock();
	cpu_pm_unregister_notifier(&amupmu_cpu_pm_nb);
	free_percpu_irq(irq, &amupmu_pmu_irq_cookie);
	kfree(amupmu_pmu_cpus);
	amupmu_pmu_cpus = NULL;
}

/* ------------------------------------------------------------ sessions */

static void amupmu_sess_wake(struct irq_work *work)
{
	struct amupmu_session *s = container_of(work, struct amupmu_session, wake);

	wake_up_interruptible_poll(&s->wait, EPOLLIN | EPOLLRDNORM);
}

struct amupmu_session *amupmu_session_alloc(void)
{
	struct amupmu_session *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	mutex_init(&s->lock);
	mutex_init(&s->read_lock);
	init_waitqueue_head(&s->wait);
	init_irq_work(&s->wake, amupmu_sess_wake);
	return s;
}

/* What a session command does to one of its counters on one CPU. */
typedef void (*amupmu_counter_op_t)(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
				    unsigned int idx);

/* Per-CPU operation of a session command, run on that CPU by IPI. */
struct amupmu_sess_ipi {
	struct amupmu_session *s;
	amupmu_counter_op_t op;
	struct amupmu_pmu_value *vals;
	struct amupmu_pmu_read *rd;
};

static void amupmu_sess_ipi_fn(void *arg)
{
	struct amupmu_sess_ipi *a = arg;
	unsigned int cpu = smp_processor_id();
	struct amupmu_pmu_cpu *pc = &amupmu_pmu_cpus[cpu];
	u8 *idx = amupmu_sess_idx(a->s, cpu);
	unsigned int e;

	raw_spin_lock(&pc->lock);
	for (e = 0; e < a->s->nr_events; e++)
		a->op(a->s, pc, idx[e]);
	raw_spin_unlock(&pc->lock);
}

static void amupmu_op_enable(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			     unsigned int idx)
{
	amupmu_counter_update(pc, idx);
	write_sysreg(BIT(idx), pmcntenset_el0);
	isb();
}

static void amupmu_op_disable(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			      unsigned int idx)
{
	write_sysreg(BIT(idx), pmcntenclr_el0);
	isb();
	amupmu_counter_update(pc, idx);
}

static void amupmu_op_reset(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			    unsigned int idx)
{
	struct amupmu_pmu_counter *c = &pc->cnt[idx];

	if (pc->live) {
		/*
		 * Start it over: one span from its overflow, so that a counter
		 * re-armed every span keeps its margin and a sampling one its
		 * period. Then drop an overflow it had before (its interrupt
		 * would re-arm nothing and count one for the new total).
		 */
		c->prev = -c->span & c->mask;
		amupmu_hw_write_counter(idx, c->prev);
		isb();
		write_sysreg(BIT(idx), pmovsclr_el0);
	}
	c->total = 0;
	c->overflows = 0;
	/* once per CPU: the sample counts are the CPU's, not the counter's */
	if (c->ev == 0) {
		s->samples[pc - amupmu_pmu_cpus] = 0;
		s->lost[pc - amupmu_pmu_cpus] = 0;
	}
}

static void amupmu_op_program(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			      unsigned int idx)
{
	amupmu_hw_counter_start(pc, idx, false);
}

static void amupmu_op_stop(struct amupmu_session *s, struct amupmu_pmu_cpu *pc,
			   unsigned int idx)
{
	amupmu_hw_counter_stop(idx);
}

/*
 * Run @op for the session's counters on every CPU of its set: by IPI on
 * the online ones, under the CPU's lock here for the others (@live_only:
 * skip those). Called under cpus_read_lock().
 */
static void amupmu_sess_each_cpu(struct amupmu_session *s, bool live_only, amupmu_counter_op_t op)
{
	struct amupmu_sess_ipi a = { .s = s, .op = op };
	struct amupmu_pmu_cpu *pc;
	unsigned long flags;
	unsigned int cpu, e;

	for_each_cpu(cpu, s->cpus) {
		pc = &amupmu_pmu_cpus[cpu];
		if (pc->live) {
			WARN_ON_ONCE(smp_call_function_single(cpu, amupmu_sess_ipi_fn, &a, 1));
			continue;
		}
		if (live_only)
			continue;
		raw_spin_lock_irqsave(&pc->lock, flags);
		for (e = 0; e < s->nr_events; e++)
			op(s, pc, amupmu_sess_idx(s, cpu)[e]);
		raw_spin_unlock_irqrestore(&pc->lock, flags);
	}
}

/* Free the group's CPU set and per-CPU arrays (not its counters). */
static void amupmu_sess_free_group(struct amupmu_session *s)
{
	free_cpumask_var(s->cpus);
	kfree(s->idx);
	kfree(s->run_ns);
	kfree(s->run_since);
	kfree(s->samples);
	kfree(s->lost);
	s->idx = NULL;
	s->run_ns = NULL;
	s->run_since = NULL;
	s->samples = NULL;
	s->lost = NULL;
}

/* Free the group's counters. Under cpus_read_lock() and s->lock. */
static void amupmu_sess_release_group(struct amupmu_session *s)
{
	unsigned int cpu, e;

	if (!s->configured)
		return;
	amupmu_sess_each_cpu(s, true, amupmu_op_stop);
	mutex_lock(&amupmu_pmu_alloc_lock);
	for_each_cpu(cpu, s->cpus) {
		for (e = 0; e < s->nr_events; e++) {
			unsigned int idx = amupmu_sess_idx(s, cpu)[e];

			amupmu_pmu_cpus[cpu].used &= ~BIT(idx);
			amupmu_pmu_cpus[cpu].cnt[idx].owner = NULL;
		}
	}
	mutex_unlock(&amupmu_pmu_alloc_lock);
	amupmu_sess_free_group(s);
	s->configured = false;
	s->enabled = false;
}

void amupmu_session_free(struct amupmu_session *s)
{
	if (!s)
		return;
	if (s->configured)
		amupmu_pmu_release_group(s);
	/* no counter of the session runs: only a queued wake-up may be left */
	irq_work_sync(&s->wake);
	amupmu_ring_put(s->ring);
	mutex_destroy(&s->read_lock);
	mutex_destroy(&s->lock);
	kfree(s);
}

/* ------------------------------------------------------------ commands */

static int amupmu_pmu_owned(void)
{
	return READ_ONCE(amupmu_dev.pmu_irq) ? 0 : -EBUSY;
}

/* PMEVTYPER value of @ev for a CPU, or -errno. */
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

static long amupmu_event_type(const struct amupmu_pmu_event *ev,
			      const struct amupmu_cpu_info *ci)
{
	u32 n = ev->event;
	bool impl;

	if (ev->flags & ~AMUPMU_EV_ALL)
		return -EINVAL;
	if (ev->sample_period && (ev->sample_period < READ_ONCE(amupmu_sample_period_min) ||
				  ev->sample_period > amupmu_period_max(ci)))
		return -EINVAL;
	if (n > (ci->pmu_version >= ID_AA64DFR0_EL1_PMUVer_V3P1 ? 0xffff : 0x3ff))
		return -EINVAL;
	if ((ev->flags & (AMUPMU_EV_EXCL_EL0 | AMUPMU_EV_EXCL_EL1)) ==
	    (AMUPMU_EV_EXCL_EL0 | AMUPMU_EV_EXCL_EL1) && !(ev->flags & AMUPMU_EV_INCL_EL2))
		return -EINVAL;
	if (ev->flags & AMUPMU_EV_INCL_EL2 && !FIELD_GET(AMUPMU_PFR0_EL2, ci->id_aa64pfr0))
		return -EINVAL;
	if (!(ev->flags & AMUPMU_EV_RAW)) {
		if (n < 0x20)
			impl = ci->pmceid0 & BIT_ULL(n);
		else if (n < 0x40)
			impl = ci->pmceid1 & BIT_ULL(n - 0x20);
		else if (n >= 0x4000 && n < 0x4020)
			impl = ci->pmceid0 & BIT_ULL(n - 0x4000 + 32);
		else if (n >= 0x4020 && n < 0x4040)
			impl = ci->pmceid1 & BIT_ULL(n - 0x4020 + 32);
		else
			impl = false;
		if (!impl)
			return -EOPNOTSUPP;
	}
	return amupmu_evtyper(ev->flags, n);
}

/**
 * struct amupmu_config_req - what AMUPMU_PMU_CONFIG copied in from user space
 * @evs: the events
 * @cpus: the CPU set
 *
 * Copied before any lock is taken: a fault on user memory must not stall
 * with the hotplug lock held.
 */
struct amupmu_config_req {
	struct amupmu_pmu_event evs[AMUPMU_PMU_MAX_EVENTS];
	cpumask_var_t cpus;
};

static int amupmu_read_cpuset(struct cpumask *mask, const struct amupmu_pmu_config *cfg)
{
	unsigned long *bits;
	unsigned int cpu, nbits = cfg->cpus_len * BITS_PER_BYTE;
	int ret = 0;

	if (!cfg->cpus_len || cfg->cpus_len % sizeof(u64) || cfg->cpus_len > AMUPMU_CPUS_LEN_MAX)
		return -EINVAL;
	bits = bitmap_zalloc(nbits, GFP_KERNEL);
	if (!bits)
		return -ENOMEM;
	if (copy_from_user(bits, u64_to_user_ptr(cfg->cpus_uptr), cfg->cpus_len)) {
		ret = -EFAULT;
		goto out;
	}
	if (bitmap_empty(bits, nbits)) {
		ret = -EINVAL;
		goto out;
	}
	for_each_set_bit(cpu, bits, nbits) {
		if (cpu >= nr_cpu_ids || !cpu_possible(cpu)) {
			ret = -ENODEV;
			goto out;
		}
		cpumask_set_cpu(cpu, mask);
	}
out:
	bitmap_free(bits);
	return ret;
}

/*
 * Choose a counter for each event on @cpu, given its free counters:
 * CPU_CYCLES goes to the cycle counter while it is free, the rest to the
 * lowest free event counters. Sets *free_out to the free counters before;
 * returns 0, or -EBUSY when they do not suffice.
 */
static int amupmu_plan_cpu(struct amupmu_session *s, unsigned int cpu, u32 *free_out)
{
	struct amupmu_pmu_cpu *pc = &amupmu_pmu_cpus[cpu];
	u8 *idx = amupmu_sess_idx(s, cpu);
	struct amupmu_cpu_info ci;
	unsigned int e, i;
	u32 avail;

	/* PMCR_EL0.N as discovery read it: the CPU may be offline now */
	amupmu_cpu_snapshot(cpu, &ci);
	avail = (u32)(BIT_ULL(ci.pmu_num_counters) - 1) | BIT(AMUPMU_CYCLE_IDX);
	avail &= ~pc->used;
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

	if (cfg->flags || cfg->__reserved)
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
	return amupmu_read_cpuset(req->cpus, cfg);
}

/*
 * Give a sampling group its ring: the session's own when it has the size
 * asked for (emptied), else a new one; EBUSY while a ring of another size
 * is mapped. Under s->lock.
 */
static int amupmu_sess_ring(struct amupmu_session *s, unsigned int pages)
{
	struct amupmu_ring *r;

	if (s->ring && amupmu_ring_pages(s->ring) == pages) {
		amupmu_ring_reset(s->ring);
		return 0;
	}
	if (s->ring && amupmu_ring_mapped(s->ring))
		return -EBUSY;
	r = amupmu_ring_alloc(pages);
	if (!r)
		return -ENOMEM;
	amupmu_ring_put(s->ring);
	WRITE_ONCE(s->ring, r);
	/* a reader waiting on the old ring looks again */
	wake_up_interruptible_all(&s->wait);
	return 0;
}

static int amupmu_pmu_config(struct amupmu_session *s, struct amupmu_pmu_config *cfg,
			     const struct amupmu_config_req *req)
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
	if (!zalloc_cpumask_var(&s->cpus, GFP_KERNEL))
		return -ENOMEM;
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
			s->period[e] = evs[e].sample_period;
		}
	}

	s->idx = kcalloc(nr_cpu_ids, AMUPMU_PMU_MAX_EVENTS, GFP_KERNEL);
	s->run_ns = kcalloc(nr_cpu_ids, sizeof(u64), GFP_KERNEL);
	s->run_since = kcalloc(nr_cpu_ids, sizeof(u64), GFP_KERNEL);
	s->samples = kcalloc(nr_cpu_ids, sizeof(u64), GFP_KERNEL);
	s->lost = kcalloc(nr_cpu_ids, sizeof(u64), GFP_KERNEL);
	if (!s->idx || !s->run_ns || !s->run_since || !s->samples || !s->lost) {
		ret = -ENOMEM;
		goto out_free;
	}
	if (cfg->ring_pages) {
		ret = amupmu_sess_ring(s, cfg->ring_pages);
		if (ret)
			goto out_free;
	}

	mutex_lock(&amupmu_pmu_alloc_lock);
	ret = 0;
	for_each_cpu(cpu, s->cpus) {
		if (amupmu_plan_cpu(s, cpu, &free))
			ret = -EBUSY;
		min_free = min(min_free, free);
	}
	cfg->counters_free = min_free;
	if (ret) {
		mutex_unlock(&amupmu_pmu_alloc_lock);
		ret = AMUPMU_EBUSY_RESPOND;
		goto out_free;
	}
	for_each_cpu(cpu, s->cpus) {
		struct amupmu_pmu_cpu *pc = &amupmu_pmu_cpus[cpu];
		unsigned long flags;

		raw_spin_lock_irqsave(&pc->lock, flags);
		for (e = 0; e < s->nr_events; e++) {
			struct amupmu_pmu_counter *c = &pc->cnt[amupmu_sess_idx(s, cpu)[e]];

			pc->used |= BIT(amupmu_sess_idx(s, cpu)[e]);
			*c = (struct amupmu_pmu_counter) {
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
	amupmu_sess_each_cpu(s, true, amupmu_op_program);
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
		if (run && amupmu_pmu_cpus[cpu].live) {
			s->run_since[cpu] = now;
		} else if (!run && s->run_since[cpu]) {
			s->run_ns[cpu] += now - s->run_since[cpu];
			s->run_since[cpu] = 0;
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
		amupmu_sess_each_cpu(s, true, amupmu_op_enable);
		amupmu_sess_clocks(s, true, now);
		break;
	case AMUPMU_PMU_CTL_DISABLE:
		if (!s->enabled)
			return 0;
		amupmu_sess_each_cpu(s, true, amupmu_op_disable);
		s->enabled = false;
		amupmu_sess_clocks(s, false, now);
		break;
	case AMUPMU_PMU_CTL_RESET:
		amupmu_sess_each_cpu(s, false, amupmu_op_reset);
		s->enabled_ns = 0;
		s->enabled_since = now;
		for_each_cpu(cpu, s->cpus) {
			s->run_ns[cpu] = 0;
			if (s->run_since[cpu])
				s->run_since[cpu] = now;
		}
		break;
	case AMUPMU_PMU_CTL_RELEASE:
		amupmu_sess_release_group(s);
		break;
	}
	return 0;
}

/*
 * Copy a session's totals on @cpu into @vals and its sample counts into
 * @rd, the hardware counts included when @update (the caller runs on that
 * CPU). Under pc->lock. Inlined, so that each caller gets the loop for its
 * @update without a test per counter.
 */
static __always_inline void amupmu_collect(struct amupmu_session *s, unsigned int cpu,
					   struct amupmu_pmu_read *rd,
					   struct amupmu_pmu_value *vals, bool update)
{
	struct amupmu_pmu_cpu *pc = &amupmu_pmu_cpus[cpu];
	const u8 *idx = amupmu_sess_idx(s, cpu);
	unsigned int e, n = s->nr_events;

	rd->samples = s->samples[cpu];
	rd->lost = s->lost[cpu];
	for (e = 0; e < n; e++) {
		unsigned int i = idx[e];
		const struct amupmu_pmu_counter *c = &pc->cnt[i];

		vals[e].value = update ? amupmu_counter_peek(c, i) : c->total;
		vals[e].overflows = c->overflows;
	}
}

#if AMUPMU_HAVE_UACCESS_WINDOW
/*
 * amupmu_collect() with the hardware counts, the values stored straight
 * into the user's array @u: one pass, no copy through the stack. Under
 * pc->lock, so page faults are disabled: false when a store would fault
 * (the caller then takes the general path, which copies and may fault).
 */
static __always_inline bool amupmu_collect_user(struct amupmu_session *s, unsigned int cpu,
						struct amupmu_pmu_read *rd,
						struct amupmu_pmu_value __user *u)
{
	struct amupmu_pmu_cpu *pc = &amupmu_pmu_cpus[cpu];
	const u8 *idx = amupmu_sess_idx(s, cpu);
	unsigned int e, n = s->nr_events;
	bool done = false;

	if (!user_access_begin(u, n * sizeof(*u)))
		return false;
	pagefault_disable();
	for (e = 0; e < n; e++) {
		unsigned int i = idx[e];
		const struct amupmu_pmu_counter *c = &pc->cnt[i];

		unsafe_put_user(amupmu_counter_peek(c, i), &u[e].value, fault);
		unsafe_put_user(c->overflows, &u[e].overflows, fault);
	}
	done = true;
fault:
	pagefault_enable();
	user_access_end();
	rd->samples = s->samples[cpu];
	rd->lost = s->lost[cpu];
	return done;
}
#endif

/*
 * The session's values on this CPU with the hardware counts: into @vals, or
 * when @vals is NULL (a kernel with a user-access window) into the user's
 * @uvals, whatever address that is. False when a store to @uvals would
 * fault. Under pc->lock.
 */
static __always_inline bool amupmu_collect_live(struct amupmu_session *s, unsigned int cpu,
						struct amupmu_pmu_read *rd,
						struct amupmu_pmu_value *vals,
						struct amupmu_pmu_value __user *uvals)
{
#if AMUPMU_HAVE_UACCESS_WINDOW
	if (!vals)
		return amupmu_collect_user(s, cpu, rd, uvals);
#endif
	amupmu_collect(s, cpu, rd, vals, true);
	return true;
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

static void amupmu_read_ipi(void *arg)
{
	struct amupmu_sess_ipi *a = arg;
	unsigned int cpu = smp_processor_id();
	struct amupmu_pmu_cpu *pc = &amupmu_pmu_cpus[cpu];

	raw_spin_lock(&pc->lock);
	amupmu_collect(a->s, cpu, a->rd, a->vals, true);
	raw_spin_unlock(&pc->lock);
}

/* Fill @vals (copied out by the caller, after the locks) and @rd. */
static int amupmu_pmu_read(struct amupmu_session *s, struct amupmu_pmu_read *rd,
			   struct amupmu_pmu_value *vals)
{
	struct amupmu_sess_ipi a = { .s = s, .vals = vals, .rd = rd };
	struct amupmu_pmu_cpu *pc;
	unsigned long flags;
	unsigned int cpu = rd->cpu;
	u64 now;

	if (rd->flags || rd->__reserved)
		return -EINVAL;
	if (!s->configured)
		return -ENODEV;
	if (cpu >= nr_cpu_ids || !cpumask_test_cpu(cpu, s->cpus) || rd->nr_values < s->nr_events)
		return -EINVAL;

	pc = &amupmu_pmu_cpus[cpu];
	/* live cannot change under the hotplug lock, so the IPI cannot fail */
	if (!pc->live || WARN_ON_ONCE(smp_call_function_single(cpu, amupmu_read_ipi, &a, 1))) {
		raw_spin_lock_irqsave(&pc->lock, flags);
		amupmu_collect(s, cpu, rd, vals, false);
		raw_spin_unlock_irqrestore(&pc->lock, flags);
	}
	now = local_clock();
	rd->nr_values = s->nr_events;
	rd->time_enabled = s->enabled_ns + (s->enabled ? now - s->enabled_since : 0);
	rd->time_running = s->run_ns[cpu] + (s->run_since[cpu] ? now - s->run_since[cpu] : 0);
	rd->state = (s->enabled ? AMUPMU_READ_ENABLED : 0) | (pc->live ? 0 : AMUPMU_READ_OFFLINE);
	return 0;
}

/*
 * The read fast path: the caller runs on the CPU it reads. With preemption
 * off that CPU cannot go offline, so neither the hotplug lock nor an IPI is
 * needed. The values go to @vals, or with a user-access window and @vals
 * NULL straight to @uvals. Returns -EAGAIN to take the general path instead
 * (also when a store to @uvals would fault). Inlined into
 * amupmu_pmu_read_fast(): no second frame on the hot path.
 */
static __always_inline int amupmu_pmu_read_local(struct amupmu_session *s,
						 struct amupmu_pmu_read *rd,
						 struct amupmu_pmu_value *vals,
						 struct amupmu_pmu_value __user *uvals)
{
	struct amupmu_pmu_cpu *pc;
	unsigned int cpu;
	unsigned long flags;
	bool live;
	u64 now;

	/* contended (another command of this session runs): the general path waits */
	if (!mutex_trylock(&s->lock))
		return -EAGAIN;
	if (!READ_ONCE(amupmu_dev.pmu_irq) || !s->configured || rd->flags || rd->__reserved ||
	    rd->nr_values < s->nr_events)
		goto slow;
	cpu = get_cpu();
	if (rd->cpu != cpu || !cpumask_test_cpu(cpu, s->cpus)) {
		put_cpu();
		goto slow;
	}
	pc = &amupmu_pmu_cpus[cpu];
	raw_spin_lock_irqsave(&pc->lock, flags);
	live = pc->live && amupmu_collect_live(s, cpu, rd, vals, uvals);
	/* the times too: once preemptible again this CPU may go offline */
	now = local_clock();
	rd->time_running = s->run_ns[cpu] + (s->run_since[cpu] ? now - s->run_since[cpu] : 0);
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	put_cpu();
	if (!live)
		goto slow;

	rd->nr_values = s->nr_events;
	rd->time_enabled = s->enabled_ns + (s->enabled ? now - s->enabled_since : 0);
	rd->state = s->enabled ? AMUPMU_READ_ENABLED : 0;
	mutex_unlock(&s->lock);
	return 0;
slow:
	mutex_unlock(&s->lock);
	return -EAGAIN;
}

/* ------------------------------------------------------------ sysfs view */

static void amupmu_view_update_ipi(void *arg)
{
	struct amupmu_pmu_cpu *pc = arg;
	unsigned long used;
	unsigned int idx;

	raw_spin_lock(&pc->lock);
	used = pc->used;
	for_each_set_bit(idx, &used, AMUPMU_PMU_MAX_EVENTS)
		amupmu_counter_update(pc, idx);
	raw_spin_unlock(&pc->lock);
}

/**
 * amupmu_pmu_cpu_view() - cpuN/pmu_counters: the CPU's allocated counters
 * @cpu: the CPU
 * @buf: sysfs page
 *
 * One line per allocated counter: "<n> type=0x<PMEVTYPER> total=<u64>
 * overflows=<u64>", n 0..30 event counters, 31 the cycle counter; the
 * totals are read on the CPU when it is online. Empty when amupmu does not
 * own the PMU or nothing is allocated.
 */
ssize_t amupmu_pmu_cpu_view(unsigned int cpu, char *buf)
{
	struct {
		u32 evtyper;
		u64 total;
		u64 overflows;
	} cnt[AMUPMU_PMU_MAX_EVENTS];
	struct amupmu_pmu_cpu *pc;
	unsigned long used = 0, flags;
	unsigned int idx;
	int len = 0;

	cpus_read_lock();
	mutex_lock(&amupmu_pmu_alloc_lock);
	if (READ_ONCE(amupmu_dev.pmu_irq)) {
		pc = &amupmu_pmu_cpus[cpu];
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
	cpus_read_unlock();

	for_each_set_bit(idx, &used, AMUPMU_PMU_MAX_EVENTS)
		len += sysfs_emit_at(buf, len, "%u type=0x%08x total=%llu overflows=%llu\n",
				     idx, cnt[idx].evtyper, cnt[idx].total, cnt[idx].overflows);
	return len;
}

/* Copy @n values to user space (on 6.12 the fast path stores them itself). */
static int amupmu_put_values(struct amupmu_pmu_value __user *u,
			     const struct amupmu_pmu_value *vals, unsigned int n)
{
	return copy_to_user(u, vals, n * sizeof(*vals)) ? -EFAULT : 0;
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
 * The common case only: a struct of this kernel's size, read on the CPU the
 * caller runs on (amupmu_pmu_read_local()). A struct that is shorter (it
 * may end where the user's mapping ends, so the copy can fault), or any
 * other case, returns -EAGAIN having changed nothing, and the general
 * dispatch then runs the command from the start.
 *
 * Return: 0, -EAGAIN, or -errno from writing the result back.
 */
int amupmu_pmu_read_fast(struct amupmu_session *s, struct amupmu_pmu_read __user *u)
{
	struct amupmu_pmu_read rd __uninitialized;
#if AMUPMU_HAVE_UACCESS_WINDOW
	if (copy_from_user(&rd, u, sizeof(rd)) || rd.size != sizeof(rd) ||
	    amupmu_pmu_read_local(s, &rd, NULL, u64_to_user_ptr(rd.values_uptr)))
		return -EAGAIN;
	return amupmu_put_read(u, &rd);
#else
	struct amupmu_pmu_value vals[AMUPMU_PMU_MAX_EVENTS] __uninitialized;
	int ret;

	if (copy_from_user(&rd, u, sizeof(rd)) || rd.size != sizeof(rd) ||
	    amupmu_pmu_read_local(s, &rd, vals, NULL))
		return -EAGAIN;
	/* the values first: a READ whose values cannot be written writes nothing else */
	ret = amupmu_put_values(u64_to_user_ptr(rd.values_uptr), vals, rd.nr_values);
	return ret ?: amupmu_put_read(u, &rd);
#endif
}

/**
 * amupmu_pmu_cmd_read() - AMUPMU_PMU_READ
 * @s: the session
 * @rd: the kernel copy of the command's struct
 *
 * The values go to user space after the locks, in one copy.
 *
 * Return: 0 or -errno; EBUSY whenever amupmu does not own the PMU.
 */
int amupmu_pmu_cmd_read(struct amupmu_session *s, struct amupmu_pmu_read *rd)
{
	/* only the group's nr_values entries are filled and copied: no zeroing */
	struct amupmu_pmu_value vals[AMUPMU_PMU_MAX_EVENTS] __uninitialized;
	int ret;

	ret = amupmu_pmu_read_local(s, rd, vals, NULL);
	if (ret == -EAGAIN) {
		cpus_read_lock();
		mutex_lock(&s->lock);
		ret = amupmu_pmu_owned() ?: amupmu_pmu_read(s, rd, vals);
		mutex_unlock(&s->lock);
		cpus_read_unlock();
	}
	if (!ret)
		ret = amupmu_put_values(u64_to_user_ptr(rd->values_uptr), vals, rd->nr_values);
	return ret;
}

/**
 * amupmu_pmu_cmd() - run a PMU command of a session (READ has its own,
 *	amupmu_pmu_cmd_read())
 * @s: the session
 * @cmd: AMUPMU_CMD_PMU_CONFIG or AMUPMU_CMD_PMU_CTL
 * @arg: the kernel copy of the command's struct
 *
 * Return: 0 or -errno; EBUSY whenever amupmu does not own the PMU.
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
	}

	cpus_read_lock();
	mutex_lock(&s->lock);
	ret = amupmu_pmu_owned();
	if (!ret)
		ret = cmd == AMUPMU_CMD_PMU_CONFIG ? amupmu_pmu_config(s, arg, req) :
						     amupmu_pmu_ctl(s, arg);
	mutex_unlock(&s->lock);
	cpus_read_unlock();
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
	cpus_read_lock();
	mutex_lock(&s->lock);
	amupmu_sess_release_group(s);
	mutex_unlock(&s->lock);
	cpus_read_unlock();
}

/* ------------------------------------------------------------ sample ring: read, poll, mmap */

/* The session's ring with a reference, or NULL when it has none. */
static struct amupmu_ring *amupmu_sess_ring_get(struct amupmu_session *s)
{
	struct amupmu_ring *r;

	mutex_lock(&s->lock);
	r = s->ring;
	if (r)
		amupmu_ring_get(r);
	mutex_unlock(&s->lock);
	return r;
}

/**
 * amupmu_session_read() - read(): whole sample records
 * @s: the session
 * @buf: user buffer
 * @count: its size
 * @nonblock: O_NONBLOCK: EAGAIN instead of waiting for a record
 *
 * Return: bytes read, or -EINVAL (no ring, or the next record does not fit
 * in @count), -EAGAIN, -ERESTARTSYS, -EIO (the mapped tail was corrupted),
 * -EFAULT.
 */
ssize_t amupmu_session_read(struct amupmu_session *s, char __user *buf, size_t count,
			    bool nonblock)
{
	struct amupmu_ring *r;
	ssize_t ret;

	if (mutex_lock_interruptible(&s->read_lock))
		return -ERESTARTSYS;
	do {
		r = amupmu_sess_ring_get(s);
		if (!r) {
			ret = -EINVAL;
			break;
		}
		ret = amupmu_ring_read(r, buf, count);
		if (!ret && nonblock)
			ret = -EAGAIN;
		else if (!ret)
			/* 0: a record came, or the ring was replaced: look again */
			ret = wait_event_interruptible(s->wait, !amupmu_ring_empty(r) ||
						       READ_ONCE(s->ring) != r);
		amupmu_ring_put(r);
	} while (!ret);
	mutex_unlock(&s->read_lock);
	return ret;
}

/**
 * amupmu_session_poll() - poll(): EPOLLIN while the ring holds a record
 * @s: the session
 * @filp: its file
 * @wait: the poll table
 *
 * Return: the poll mask; EPOLLERR when the session has no ring.
 */
__poll_t amupmu_session_poll(struct amupmu_session *s, struct file *filp,
			     struct poll_table_struct *wait)
{
	struct amupmu_ring *r = amupmu_sess_ring_get(s);
	__poll_t mask;

	if (!r)
		return EPOLLERR;
	poll_wait(filp, &s->wait, wait);
	/* queued before looking: pairs with wq_has_sleeper() in amupmu_sample() */
	smp_mb();
	mask = amupmu_ring_empty(r) ? 0 : EPOLLIN | EPOLLRDNORM;
	amupmu_ring_put(r);
	return mask;
}

/**
 * amupmu_session_mmap() - mmap() of the session's ring
 * @s: the session
 * @vma: the mapping (see amupmu_ring_mmap())
 *
 * Return: 0, or -EINVAL when the session has no ring or the mapping has
 * another shape.
 */
int amupmu_session_mmap(struct amupmu_session *s, struct vm_area_struct *vma)
{
	int ret = -EINVAL;

	mutex_lock(&s->lock);
	if (s->ring)
		ret = amupmu_ring_mmap(s->ring, vma);
	mutex_unlock(&s->lock);
	return ret;
}
