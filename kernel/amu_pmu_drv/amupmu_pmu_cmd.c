// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: the PMU commands of a session (AMUPMU_PMU_CONFIG, AMUPMU_PMU_CTL,
 * AMUPMU_PMU_READ and its fast path), in both modes: exclusive, on the
 * counters amupmu_pmu.c programs (their per-CPU state and the lock order
 * in amupmu_pmu_excl.h), and shared, through perf core (amupmu_perf.c).
 * CONFIG checks the events against every CPU of the set and plans the
 * counters; READ gathers the totals by IPI, or reads them in place when
 * the caller runs on the CPU it asks for, and copies them out after every
 * lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/mm.h>
#include <linux/pid_namespace.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <asm/sysreg.h>
#include <asm/virt.h>

#include "amupmu.h"
#include "amupmu_compat.h"
#include "amupmu_counter.h"
#include "amupmu_pmu.h"
#include "amupmu_pmu_excl.h"
#include "amupmu_session.h"

#define AMUPMU_CPU_CYCLES	0x11
#define AMUPMU_EV_ALL		(AMUPMU_EV_EXCL_USER | AMUPMU_EV_EXCL_KERNEL | \
				 AMUPMU_EV_EXCL_HV | AMUPMU_EV_EXCL_HOST | \
				 AMUPMU_EV_EXCL_GUEST | AMUPMU_EV_RAW)

/* ------------------------------------------------------------ a group's lifetime */

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
	if (s->shared)
		amupmu_perf_release(s);
	else if (!amupmu_sess_stale(s))
		amupmu_pmu_group_free(s);
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
				  ev->sample_period > amupmu_pmu_period_max(ci)))
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
	amupmu_pmu_group_program(s);
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
			amupmu_pmu_group_enable(s);
		amupmu_sess_clocks(s, true, now);
		break;
	case AMUPMU_PMU_CTL_DISABLE:
		if (!s->enabled)
			return 0;
		if (s->shared)
			amupmu_perf_disable(s);
		else
			amupmu_pmu_group_disable(s);
		s->enabled = false;
		amupmu_sess_clocks(s, false, now);
		break;
	case AMUPMU_PMU_CTL_RESET:
		if (s->shared)
			amupmu_perf_reset(s);
		else
			amupmu_pmu_group_reset(s);
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
	/*
	 * The group's generation again, under the CPU's lock: a release of the
	 * device clears the counters under this lock and moves the generation
	 * on before another claim can give them to a new group, so a group
	 * that ended never reads a new group's counters here.
	 */
	live = pc->live && !amupmu_sess_stale(s);
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
	 * and the session's as long as s->lock is held. A device removal racing
	 * this read can at worst let it return the zeroed counters of a group
	 * that ended a moment before; amupmu_read_here() checks the generation
	 * again under the CPU's lock, so it never returns another group's.
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
