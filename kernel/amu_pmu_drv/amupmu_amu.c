// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: the Activity Monitors Unit (FEAT_AMUv1), read only.
 *
 * The AMU counters free-run: firmware enables them and the kernel reads two
 * of them for frequency invariance. amupmu never writes an AMU register
 * (AMCR, AMCNTENSET/CLR, AMUSERENR, the counters); it reads the counters of
 * each CPU on that CPU, interrupts off, with the generic timer's count of
 * the same moment, and user space works with differences.
 *
 * A core's counters are in its power domain: after CPU hotplug, and after
 * an idle power-down whose firmware does not save and restore them, they
 * restart from zero. Each CPU's raw values are saved when it goes down (the
 * offline callback, CPU_PM_ENTER) and checked when it comes back (online,
 * CPU_PM_EXIT): a counter below its saved value restarted, and the saved
 * value is added to it from then on, so what AMUPMU_AMU_READ reports is
 * monotonic while the module is loaded.
 *
 * Which CPUs: discovery decides per CPU from its own ID_AA64PFR0_EL1.AMU
 * (the kernel's ARM64_HAS_AMU_EXTN capability is not per CPU). Firmware
 * that has not enabled AMU access at EL3 (CPTR_EL3.TAM set) makes every AMU
 * access trap to EL3; Linux's answer is CONFIG_ARM64_AMU_EXTN=n, amupmu
 * honours it, and the module parameter amu=0 does the same for amupmu
 * alone (AMUPMU_CPU_AMU_OFF: no AMU register of any CPU is touched).
 *
 * Register access goes through the backend (amupmu_dev.backend->read): the
 * hardware's system registers, or the mock model of test builds.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/cpu_pm.h>
#include <linux/cpumask.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <asm/sysreg.h>
#include <clocksource/arm_arch_timer.h>

#include "amupmu.h"
#include "amupmu_amu.h"

static bool amupmu_amu_enabled = true;
module_param_named(amu, amupmu_amu_enabled, bool, 0444);
MODULE_PARM_DESC(amu, "use the CPUs' Activity Monitors (default Y; N: read no AMU system register; the memory-mapped ID frames are still read)");

/**
 * struct amupmu_amu_bookkeeping - one CPU's AMU bookkeeping
 * @live: the CPU is online and its AMU usable: its counters may be read
 * @nr: counters per group (AMCGCR_EL0.CG0NC, CG1NC; at most 16)
 * @base: added to each raw counter: the values lost in power-downs
 * @last: raw values saved when the CPU last went down
 * @enabled: AMCNTENSET0/1_EL0 when the CPU last went down
 * @restarts: power-downs after which the counters had restarted
 *
 * Written on its CPU only (hotplug callbacks, CPU PM notifier, reads from
 * an IPI), always with interrupts off; read from other CPUs only while the
 * CPU is offline, under cpus_read_lock().
 */
struct amupmu_amu_bookkeeping {
	bool live;
	u8 nr[2];
	u64 base[2][AMUPMU_AMU_MAX_COUNTERS];
	u64 last[2][AMUPMU_AMU_MAX_COUNTERS];
	u32 enabled[2];
	u32 restarts;
};

static DEFINE_PER_CPU(struct amupmu_amu_bookkeeping, amupmu_amu_pcpu);
/* a CPU with a usable AMU has come online since load: set once, never cleared */
static bool amupmu_amu_any;

/* The counter registers of a group, for the backend's read(). */
static const enum amupmu_reg amupmu_amu_cntr_reg[2] = {
	AMUPMU_REG_AMEVCNTR0, AMUPMU_REG_AMEVCNTR1,
};

/**
 * amupmu_amu_nr_counters() - the counters of a group, from discovery
 * @ci: a discovered CPU with AMUPMU_CPU_AMU
 * @group: 0 or 1
 *
 * Return: AMCGCR_EL0.CG0NC or CG1NC (group 1 only with AMCFGR_EL0.NCG at
 * least 1), at most AMUPMU_AMU_MAX_COUNTERS.
 */
unsigned int amupmu_amu_nr_counters(const struct amupmu_cpu_info *ci, unsigned int group)
{
	unsigned int n;

	if (!group)
		n = FIELD_GET(AMUPMU_AMCGCR_CG0NC, ci->amcgcr);
	else if (FIELD_GET(AMUPMU_AMCFGR_NCG, ci->amcfgr) >= 1)
		n = FIELD_GET(AMUPMU_AMCGCR_CG1NC, ci->amcgcr);
	else
		n = 0;
	return min_t(unsigned int, n, AMUPMU_AMU_MAX_COUNTERS);
}

/**
 * amupmu_amu_discover() - the AMU part of a CPU's discovery
 * @ci: the entry being filled, on its CPU, preemption disabled; its
 *	amu_version is set
 */
static void amupmu_amu_discover(struct amupmu_cpu_info *ci)
{
	const struct amupmu_backend *be = amupmu_dev.backend;
	u64 (*rd)(enum amupmu_reg reg) = be->read;
	unsigned int n, nr0, nr1;

	if (!ci->amu_version)
		return;
	if (!amupmu_amu_enabled || !(be->mock_flags || IS_ENABLED(CONFIG_ARM64_AMU_EXTN))) {
		ci->flags |= AMUPMU_CPU_AMU_OFF;
		return;
	}
	ci->flags |= AMUPMU_CPU_AMU;
	ci->amcfgr = rd(AMUPMU_REG_AMCFGR);
	ci->amcgcr = rd(AMUPMU_REG_AMCGCR);
	ci->amcr = rd(AMUPMU_REG_AMCR);
	nr0 = amupmu_amu_nr_counters(ci, 0);
	nr1 = amupmu_amu_nr_counters(ci, 1);
	ci->amcntenset0 = rd(AMUPMU_REG_AMCNTENSET0);
	if (nr1)
		ci->amcntenset1 = rd(AMUPMU_REG_AMCNTENSET1);
	for (n = 0; n < nr0; n++)
		ci->amevtyper0[n] = rd(AMUPMU_REG_AMEVTYPER0 + n) & 0xffff;
	for (n = 0; n < nr1; n++)
		ci->amevtyper1[n] = rd(AMUPMU_REG_AMEVTYPER1 + n) & 0xffff;
	/* as the kernel's freq_counters_valid(): both cycle counters at zero */
	if (nr0 >= 2 && !rd(AMUPMU_REG_AMEVCNTR0) && !rd(AMUPMU_REG_AMEVCNTR0 + 1))
		ci->flags |= AMUPMU_CPU_AMU_ZERO;
}

/* Save the raw values: the CPU is going down. On the CPU, interrupts off. */
static void amupmu_amu_save(struct amupmu_amu_bookkeeping *st)
{
	u64 (*rd)(enum amupmu_reg reg) = amupmu_dev.backend->read;
	unsigned int g, n;

	st->enabled[0] = rd(AMUPMU_REG_AMCNTENSET0);
	st->enabled[1] = st->nr[1] ? rd(AMUPMU_REG_AMCNTENSET1) : 0;
	for (g = 0; g < 2; g++)
		for (n = 0; n < st->nr[g]; n++)
			st->last[g][n] = rd(amupmu_amu_cntr_reg[g] + n);
}

/*
 * The CPU is back: a counter below its saved value restarted from zero, so
 * its saved value is added from now on. On the CPU, interrupts off.
 */
static void amupmu_amu_check(struct amupmu_amu_bookkeeping *st)
{
	u64 (*rd)(enum amupmu_reg reg) = amupmu_dev.backend->read;
	bool restarted = false;
	unsigned int g, n;
	u64 raw;

	for (g = 0; g < 2; g++) {
		for (n = 0; n < st->nr[g]; n++) {
			raw = rd(amupmu_amu_cntr_reg[g] + n);
			if (raw < st->last[g][n]) {
				st->base[g][n] += st->last[g][n];
				restarted = true;
			}
			st->last[g][n] = raw;
		}
	}
	if (restarted)
		st->restarts++;
}

/**
 * amupmu_amu_cpu_start() - this CPU came online (its hotplug callback)
 * @cpu: the CPU
 * @ci: its discovery entry
 *
 * The first time: take the counter numbers from discovery. Afterwards:
 * find out whether the counters restarted while it was down.
 */
static void amupmu_amu_cpu_start(unsigned int cpu, const struct amupmu_cpu_info *ci)
{
	struct amupmu_amu_bookkeeping *st = this_cpu_ptr(&amupmu_amu_pcpu);
	unsigned long irqflags;

	if (!(ci->flags & AMUPMU_CPU_AMU))
		return;
	WRITE_ONCE(amupmu_amu_any, true);
	local_irq_save(irqflags);
	if (amupmu_dev.backend->amu_start)
		amupmu_dev.backend->amu_start();
	if (!st->nr[0]) {
		st->nr[0] = amupmu_amu_nr_counters(ci, 0);
		st->nr[1] = amupmu_amu_nr_counters(ci, 1);
		amupmu_amu_save(st);
	} else {
		amupmu_amu_check(st);
	}
	WRITE_ONCE(st->live, true);
	local_irq_restore(irqflags);
}

/* This CPU is going offline (its hotplug teardown callback). */
static void amupmu_amu_cpu_stop(unsigned int cpu)
{
	struct amupmu_amu_bookkeeping *st = this_cpu_ptr(&amupmu_amu_pcpu);
	unsigned long irqflags;

	if (!READ_ONCE(st->live))
		return;
	local_irq_save(irqflags);
	WRITE_ONCE(st->live, false);
	amupmu_amu_save(st);
	if (amupmu_dev.backend->amu_stop)
		amupmu_dev.backend->amu_stop();
	local_irq_restore(irqflags);
}

/* Idle power-down: save on the way down, check on the way back. */
static int amupmu_amu_pm_notify(struct notifier_block *nb, unsigned long action, void *v)
{
	struct amupmu_amu_bookkeeping *st = this_cpu_ptr(&amupmu_amu_pcpu);

	if (!READ_ONCE(st->live))
		return NOTIFY_OK;
	switch (action) {
	case CPU_PM_ENTER:
		amupmu_amu_save(st);
		break;
	case CPU_PM_EXIT:
	case CPU_PM_ENTER_FAILED:
		amupmu_amu_check(st);
		break;
	}
	return NOTIFY_OK;
}

static struct notifier_block amupmu_amu_pm_nb = {
	.notifier_call = amupmu_amu_pm_notify,
};

const struct amupmu_unit_ops amupmu_amu_unit = {
	.discover = amupmu_amu_discover,
	.cpu_online = amupmu_amu_cpu_start,
	.cpu_offline = amupmu_amu_cpu_stop,
};

/* ------------------------------------------------------------ AMUPMU_AMU_READ */

/*
 * CAP_PERFMON, checked once per open file: the first AMUPMU_AMU_READ that
 * passes it marks the file, and the file keeps it (in a process that
 * inherits it or receives it over a socket too), as perf checks at
 * perf_event_open() and a perf fd keeps it. A refusal is not remembered:
 * each refused read checks (and audits) once.
 */
static bool amupmu_amu_capable(struct amupmu_session *s)
{
	bool *ok = amupmu_session_amu_perfmon(s);

	if (READ_ONCE(*ok))
		return true;
	if (!perfmon_capable())
		return false;
	WRITE_ONCE(*ok, true);
	return true;
}

/* Tries of amupmu_amu_read_local() before it keeps a slow reading. */
#define AMUPMU_AMU_READ_TRIES	4

/*
 * Read this CPU's counters into @e; on the CPU, interrupts off.
 *
 * The generic timer is read on both sides of the counters and @e->time is
 * the middle. Interrupts off do not stop a hypervisor (or TCG's host) from
 * preempting the vCPU between the two: a reading that took more than
 * 100 us would pair the counts with the wrong moment, and is taken again
 * (the last one is kept after AMUPMU_AMU_READ_TRIES).
 */
static void amupmu_amu_read_local(struct amupmu_amu_cpu *e)
{
	const struct amupmu_amu_bookkeeping *st = this_cpu_ptr(&amupmu_amu_pcpu);
	u64 (*rd)(enum amupmu_reg reg) = amupmu_dev.backend->read;
	u64 slow = arch_timer_get_cntfrq() / 10000, t0, t1;
	unsigned int n, tries = 0;

	e->nr_group0 = st->nr[0];
	e->nr_group1 = st->nr[1];
	e->restarts = st->restarts;
	do {
		t0 = arch_timer_read_counter();
		e->enabled0 = rd(AMUPMU_REG_AMCNTENSET0);
		e->enabled1 = st->nr[1] ? rd(AMUPMU_REG_AMCNTENSET1) : 0;
		for (n = 0; n < st->nr[0]; n++)
			e->group0[n] = st->base[0][n] + rd(AMUPMU_REG_AMEVCNTR0 + n);
		for (n = 0; n < st->nr[1]; n++)
			e->group1[n] = st->base[1][n] + rd(AMUPMU_REG_AMEVCNTR1 + n);
		t1 = arch_timer_read_counter();
	} while (t1 - t0 > slow && ++tries < AMUPMU_AMU_READ_TRIES);
	e->time = t0 + (t1 - t0) / 2;
}

/**
 * struct amupmu_amu_req - one AMUPMU_AMU_READ
 * @mask: the set's CPUs
 * @ents: one entry per CPU of @mask, in ascending order
 */
struct amupmu_amu_req {
	const struct cpumask *mask;
	struct amupmu_amu_cpu *ents;
};

static struct amupmu_amu_cpu *amupmu_amu_slot(const struct amupmu_amu_req *q, unsigned int cpu)
{
	return &q->ents[bitmap_weight(cpumask_bits(q->mask), cpu)];
}

static void amupmu_amu_read_ipi(void *arg)
{
	amupmu_amu_read_local(amupmu_amu_slot(arg, smp_processor_id()));
}

/* An entry that is not read now: no AMU, never online, or offline. */
static void amupmu_amu_fill_cold(struct amupmu_amu_cpu *e, unsigned int cpu,
				 struct amupmu_cpu_info *ci)
{
	const struct amupmu_amu_bookkeeping *st = per_cpu_ptr(&amupmu_amu_pcpu, cpu);
	unsigned int g, n;

	amupmu_cpu_snapshot(cpu, ci);
	if (!(ci->flags & AMUPMU_CPU_DISCOVERED)) {
		e->state = AMUPMU_AMU_UNDISCOVERED;
		return;
	}
	if (!(ci->flags & AMUPMU_CPU_AMU)) {
		e->state = AMUPMU_AMU_NO_AMU;
		return;
	}
	/* offline: what it had when it went down */
	e->state = AMUPMU_AMU_OFFLINE;
	e->nr_group0 = st->nr[0];
	e->nr_group1 = st->nr[1];
	e->enabled0 = st->enabled[0];
	e->enabled1 = st->enabled[1];
	e->restarts = st->restarts;
	for (g = 0; g < 2; g++)
		for (n = 0; n < st->nr[g]; n++)
			(g ? e->group1 : e->group0)[n] = st->base[g][n] + st->last[g][n];
}

static int amupmu_amu_read_cpus(const struct cpumask *mask, struct amupmu_amu_cpu *ents)
{
	struct amupmu_amu_req q = { .mask = mask, .ents = ents };
	struct amupmu_cpu_info ci;
	cpumask_var_t ipi;
	unsigned int cpu;

	if (!zalloc_cpumask_var(&ipi, GFP_KERNEL))
		return -ENOMEM;
	cpus_read_lock();
	for_each_cpu(cpu, mask) {
		if (cpu_online(cpu) && READ_ONCE(per_cpu_ptr(&amupmu_amu_pcpu, cpu)->live))
			cpumask_set_cpu(cpu, ipi);
		else
			amupmu_amu_fill_cold(amupmu_amu_slot(&q, cpu), cpu, &ci);
	}
	/* the local CPU directly, interrupts off; the others by IPI, in parallel */
	on_each_cpu_mask(ipi, amupmu_amu_read_ipi, &q, true);
	cpus_read_unlock();
	free_cpumask_var(ipi);
	return 0;
}

static int amupmu_amu_copy_out(const struct amupmu_amu_read *rd,
			       const struct amupmu_amu_cpu *ents, unsigned int n)
{
	u8 __user *dst = u64_to_user_ptr(rd->entries_uptr);
	size_t klen = min_t(size_t, rd->entry_size, sizeof(*ents));
	unsigned int i;

	for (i = 0; i < n; i++, dst += rd->entry_size) {
		if (copy_to_user(dst, &ents[i], klen))
			return -EFAULT;
		if (rd->entry_size > klen && clear_user(dst + klen, rd->entry_size - klen))
			return -EFAULT;
	}
	return 0;
}

/**
 * amupmu_amu_read_fast() - AMUPMU_AMU_READ of the calling CPU, before the
 *	general dispatch
 * @s: the open file's session (its CAP_PERFMON mark)
 * @u: the user's struct amupmu_amu_read
 *
 * The common shape of a per-CPU reader (the struct and entry of this ABI's
 * size, a one-word set naming the CPU the caller runs on): one copy in, the
 * registers read in place with interrupts off, two constant-size copies
 * out. Preemption is off from the CPU check to the read, so the CPU cannot
 * change or go offline in between.
 *
 * Return: 0, -EFAULT or -EACCES as the general path would; -EAGAIN for
 * anything else, which the general path then checks and answers.
 */
int amupmu_amu_read_fast(struct amupmu_session *s, struct amupmu_amu_read __user *u)
{
	struct amupmu_amu_cpu e = { };
	struct amupmu_amu_read rd;
	unsigned long flags;
	unsigned int cpu;
	u64 word;

	if (copy_from_user(&rd, u, sizeof(rd)))
		return -EAGAIN;
	if (rd.size != sizeof(rd) || rd.flags || rd.__reserved || rd.cpus_len != sizeof(u64) ||
	    !rd.nr_cpus || rd.nr_cpus > AMUPMU_AMU_READ_CPUS_MAX || rd.entry_size != sizeof(e) ||
	    get_user(word, (u64 __user *)u64_to_user_ptr(rd.cpus_uptr)))
		return -EAGAIN;
	/* the struct passed the general path's checks: its next one is the privilege */
	if (!amupmu_amu_capable(s))
		return -EACCES;
	if (!READ_ONCE(amupmu_amu_any))
		return -EAGAIN;
	cpu = get_cpu();
	if (word != BIT_ULL(cpu) || !READ_ONCE(this_cpu_ptr(&amupmu_amu_pcpu)->live)) {
		put_cpu();
		return -EAGAIN;
	}
	e.cpu = cpu;
	local_irq_save(flags);
	amupmu_amu_read_local(&e);
	local_irq_restore(flags);
	put_cpu();
	if (copy_to_user(u64_to_user_ptr(rd.entries_uptr), &e, sizeof(e)))
		return -EFAULT;
	rd.nr_cpus = 1;
	rd.timer_freq = arch_timer_get_cntfrq();
	return copy_to_user(u, &rd, sizeof(rd)) ? -EFAULT : 0;
}

/* On the CPU (IPI, or locally with interrupts off): one entry. */
static void amupmu_amu_read_one_ipi(void *arg)
{
	amupmu_amu_read_local(arg);
}

/*
 * A set of one CPU (the common case of per-CPU tools and of the library's
 * local reads): no mask to allocate, the entry on the stack, the local CPU
 * read in place. Return: 1 when the set is not a single CPU, else 0 or
 * -errno as amupmu_amu_cmd_read().
 */
static int amupmu_amu_read_single(struct amupmu_amu_read *rd)
{
	struct amupmu_amu_cpu e = { };
	struct amupmu_cpu_info ci;
	unsigned int cpu;
	u64 word;
	int ret;

	if (rd->cpus_len != sizeof(u64))
		return 1;
	if (copy_from_user(&word, u64_to_user_ptr(rd->cpus_uptr), sizeof(word)))
		return -EFAULT;
	if (hweight64(word) != 1)
		return 1;
	cpu = __ffs64(word);
	if (cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return -ENODEV;
	if (rd->nr_cpus < 1)
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(rd->entries_uptr), rd->entry_size))
		return -EFAULT;
	e.cpu = cpu;
	cpus_read_lock();
	if (!cpu_online(cpu) || !READ_ONCE(per_cpu_ptr(&amupmu_amu_pcpu, cpu)->live))
		amupmu_amu_fill_cold(&e, cpu, &ci);
	else
		smp_call_function_single(cpu, amupmu_amu_read_one_ipi, &e, 1);
	cpus_read_unlock();
	ret = amupmu_amu_copy_out(rd, &e, 1);
	if (!ret) {
		rd->nr_cpus = 1;
		rd->entry_size = sizeof(e);
		rd->timer_freq = arch_timer_get_cntfrq();
	}
	return ret;
}

/**
 * amupmu_amu_cmd_read() - AMUPMU_AMU_READ
 * @s: the open file's session (its CAP_PERFMON mark)
 * @rd: the command, copied in; the caller writes it back on success
 *
 * Checks, in this order: the struct (EINVAL), CAP_PERFMON (EACCES; once per
 * file, amupmu_amu_capable()), an AMU
 * to read (EOPNOTSUPP), the CPU set (EINVAL, ENODEV, EFAULT), the entries'
 * room (EINVAL, EFAULT). Nothing is written to user space on error.
 */
int amupmu_amu_cmd_read(struct amupmu_session *s, struct amupmu_amu_read *rd)
{
	struct amupmu_amu_cpu *ents;
	cpumask_var_t mask;
	unsigned int n, cpu;
	int ret;

	if (rd->flags || rd->__reserved || rd->nr_cpus > AMUPMU_AMU_READ_CPUS_MAX ||
	    rd->entry_size < AMUPMU_AMU_CPU_SIZE_VER0 ||
	    rd->entry_size > AMUPMU_CPU_ENTRY_SIZE_MAX || !IS_ALIGNED(rd->entry_size, sizeof(u64)))
		return -EINVAL;
	if (!amupmu_amu_capable(s))
		return -EACCES;
	if (!READ_ONCE(amupmu_amu_any))
		return -EOPNOTSUPP;
	ret = amupmu_amu_read_single(rd);
	if (ret <= 0)
		return ret;
	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	ret = amupmu_cpuset_from_user(mask, rd->cpus_uptr, rd->cpus_len);
	if (ret)
		goto out_mask;
	n = cpumask_weight(mask);
	if (rd->nr_cpus < n) {
		ret = -EINVAL;
		goto out_mask;
	}
	if (!access_ok(u64_to_user_ptr(rd->entries_uptr), (size_t)n * rd->entry_size)) {
		ret = -EFAULT;
		goto out_mask;
	}
	ents = kcalloc(n, sizeof(*ents), GFP_KERNEL);
	if (!ents) {
		ret = -ENOMEM;
		goto out_mask;
	}
	n = 0;
	for_each_cpu(cpu, mask)
		ents[n++].cpu = cpu;
	ret = amupmu_amu_read_cpus(mask, ents);
	if (!ret)
		ret = amupmu_amu_copy_out(rd, ents, n);
	if (!ret) {
		rd->nr_cpus = n;
		rd->entry_size = sizeof(*ents);
		rd->timer_freq = arch_timer_get_cntfrq();
	}
	kfree(ents);
out_mask:
	free_cpumask_var(mask);
	return ret;
}

int amupmu_amu_init(void)
{
	return cpu_pm_register_notifier(&amupmu_amu_pm_nb);
}

void amupmu_amu_exit(void)
{
	cpu_pm_unregister_notifier(&amupmu_amu_pm_nb);
}
