// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: PMUv3 shared mode. Where the kernel's arm_pmu owns the PMU (a
 * stock devicetree or ACPI), a session's group is counted and sampled by
 * in-kernel perf counters: one per event and online CPU of the set, CPU
 * bound, pinned, created at CONFIG on whichever arm_pmu serves that CPU
 * (PERF_TYPE_RAW: perf core asks each PMU, and an arm_pmu refuses the CPUs
 * of other classes) and held until RELEASE. amupmu writes no PMU register.
 * Documentation/dev-tools/amupmu-shared-mode-research.md has the reasons.
 *
 * Control without perf_event_enable()/disable(): the counters keep running
 * and the session keeps, per CPU and event, a total (@acc) and the count it
 * started from (@base). ENABLE takes the bases, DISABLE folds the counts in,
 * RESET zeroes; each is one IPI per CPU for the whole group, and so is READ
 * (perf_event_read_value() would cost an IPI per event and may sleep). A
 * sampling counter is parked (the largest period) while the group is
 * disabled and gets its period back at ENABLE, so its period restarts there.
 *
 * Locking: the commands run under cpus_read_lock() and the session's lock
 * (amupmu_pmu_cmd.c); the hotplug callbacks under the hotplug write lock, so the
 * two exclude each other. A CPU's struct amupmu_perf_cpu is touched on that
 * CPU with interrupts off (the IPIs, the read fast path, the hotplug
 * callbacks, which run on the CPU) or in the overflow handler on it, or,
 * when the CPU is offline, by a command. perf_event_*() calls that sleep
 * run in process context outside those sections.
 *
 * Hotplug: perf core detaches a CPU's events for good when it goes down, so
 * the offline callback folds the counts and releases the events, and the
 * online callback creates them again.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/hardirq.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/sched/clock.h>
#include <linux/smp.h>
#include <asm/sysreg.h>
#include <asm/virt.h>

#include "amupmu.h"
#include "amupmu_compat.h"
#include "amupmu_pmu.h"
#include "amupmu_session.h"

static bool pmu_shared = true;
module_param(pmu_shared, bool, 0644);
MODULE_PARM_DESC(pmu_shared,
		 "count through the kernel's perf core where arm_pmu owns the PMU (shared mode, default Y); N refuses PMU sessions there with ENXIO (new CONFIGs only)");

/*
 * perf core's mark of a throttled event in hw.interrupts (MAX_INTERRUPTS,
 * core.c, not in a header): set before the overflow handler is called for
 * the interrupt that went over the limit; perf then stops the event until
 * its CPU's next tick (perf_adjust_freq_unthr_context()).
 */
#define AMUPMU_PERF_THROTTLED	(~0ULL)
/* the largest period perf_event_period() takes: a disabled group's sampling counters */
#define AMUPMU_PERF_PARKED	(BIT_ULL(63) - 1)
/* CHAIN: arm_pmu's 6.12 refuses it, 6.1's never schedules it (it would never count) */
#define AMUPMU_EV_CHAIN		0x1e

/**
 * struct amupmu_perf_cpu - a shared-mode group on one CPU of its set
 * @s: the session
 * @cpu: the CPU
 * @live: @ev are installed (the CPU is online and their creation worked)
 * @counting: live and the group enabled: the totals grow from @base
 * @ev: the perf event of each event of the group, NULL when not live
 * @acc: each event's total before @base
 * @base: each event's perf count when the group last started counting
 * @overflows: each event's samples' overflows since CONFIG or RESET
 * @acc_en: multiplexed group: each event's time enabled before @base_en
 * @acc_run: idem, time running before @base_run
 * @base_en: perf's time enabled of the event when the totals started over
 * @base_run: idem, time running
 */
struct amupmu_perf_cpu {
	struct amupmu_session *s;
	unsigned int cpu;
	bool live;
	bool counting;
	struct perf_event *ev[AMUPMU_PMU_MAX_EVENTS];
	u64 acc[AMUPMU_PMU_MAX_EVENTS];
	u64 base[AMUPMU_PMU_MAX_EVENTS];
	u64 overflows[AMUPMU_PMU_MAX_EVENTS];
	u64 acc_en[AMUPMU_PMU_MAX_EVENTS];
	u64 acc_run[AMUPMU_PMU_MAX_EVENTS];
	u64 base_en[AMUPMU_PMU_MAX_EVENTS];
	u64 base_run[AMUPMU_PMU_MAX_EVENTS];
};

/* configured shared groups: what the hotplug callbacks walk */
static LIST_HEAD(amupmu_perf_sessions);
static DEFINE_MUTEX(amupmu_perf_lock);

/**
 * amupmu_perf_available() - shared mode is on (module parameter pmu_shared)
 *
 * Return: whether a CONFIG while arm_pmu owns the PMU goes through perf core.
 */
bool amupmu_perf_available(void)
{
	return READ_ONCE(pmu_shared);
}

/* a PMU for PERF_TYPE_RAW events has been seen: stays (arm_pmu is built in) */
static bool amupmu_perf_seen;

/**
 * amupmu_perf_has_pmu() - perf core has a PMU for amupmu's events
 *
 * Shared mode needs an arm_pmu instance registered with perf core. There
 * is none where firmware describes no PMU, or where amupmu's devicetree
 * node took the PMU's place and its device is unbound. Probed with a
 * disabled counter on this CPU (a heterogeneous system whose arm_pmu
 * serves only other CPUs answers no here: CONFIG tells per CPU). Once
 * seen it stays: arm_pmu is built in and never unregisters its PMUs.
 * Process context, no amupmu lock held.
 *
 * Return: whether INFO may advertise AMUPMU_FEAT_PMU_SHARED.
 */
bool amupmu_perf_has_pmu(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_RAW,
		.size = sizeof(attr),
		.config = ARMV8_PMUV3_PERFCTR_CPU_CYCLES,
		.disabled = 1,
	};
	struct perf_event *ev;

	if (READ_ONCE(amupmu_perf_seen))
		return true;
	ev = perf_event_create_kernel_counter(&attr, raw_smp_processor_id(), NULL, NULL, NULL);
	if (IS_ERR(ev))
		/* ENODEV: the CPU went offline under the probe; ask again next time */
		return PTR_ERR(ev) != -ENOENT;
	perf_event_release_kernel(ev);
	WRITE_ONCE(amupmu_perf_seen, true);
	return true;
}

static struct amupmu_perf_cpu *amupmu_perf_pc(struct amupmu_session *s, unsigned int cpu)
{
	return per_cpu_ptr(s->perf, cpu);
}

/*
 * An event's count as perf_event_read_local() gives it: on the event's CPU
 * with interrupts off, which keeps perf core's scheduling and IPIs out. An
 * event not on this CPU (offline, evicted) is not read in hardware: its
 * count is what perf last folded. Every shared-mode read goes through here.
 *
 * Why perf's fields and not an exported reader: perf_event_read_local() is
 * not exported on 6.1 or 6.12 (Module.symvers of both), and the exported
 * perf_event_read_value() takes the event's mutex (it may sleep, so not in
 * the IPIs or the overflow handler) and makes a cross-call per event: the
 * multiplexed group's READ, which uses it, costs 7696 guest ns for seven
 * events against 2336 for this path (Documentation/dev-tools/
 * amupmu-performance.rst, shared mode, 6.1 el1). The fields are
 * perf_event_read_local()'s own test (oncpu == this CPU, then pmu->read()
 * and count). amupmu_pmu_mode_test's shared_read_local_moves fails if a kernel
 * changes what they mean: a pinned counter read on its CPU twice around a
 * busy loop must have moved by at least the loop (it would not, with
 * oncpu no longer the CPU number, or pmu->read() no longer folding into
 * count).
 */
static __always_inline u64 amupmu_perf_count(struct perf_event *ev)
{
	if (READ_ONCE(ev->oncpu) == smp_processor_id())
		ev->pmu->read(ev);
	return local64_read(&ev->count);
}

/*
 * perf's event attributes for event @e of the group. The filters map to
 * perf's exclude bits, which arm_pmu turns into the same PMEVTYPER bits as
 * exclusive mode (amupmu_evtyper()); a kernel at EL1 without VHE has no
 * host/guest switch of its own, so EXCL_HOST there excludes EL2 as in
 * exclusive mode. 64-bit counters where the PMU has them (config1 bit 0).
 * A multiplexed group's events are flexible, and disabled while the group
 * is (perf core schedules them only when enabled, so no parking).
 */
static void amupmu_perf_attr(const struct amupmu_session *s, unsigned int e, bool long_counter,
			     struct perf_event_attr *attr)
{
	bool vhe = is_kernel_in_hyp_mode();
	u32 fl = s->ev_flags[e];

	*attr = (struct perf_event_attr) {
		.type = PERF_TYPE_RAW,
		.size = sizeof(*attr),
		.config = s->evtyper[e] & ARMV8_PMU_EVTYPE_EVENT,
		.config1 = long_counter,
		.pinned = !s->multiplex,
		.disabled = s->multiplex && !s->enabled,
		.sample_period = !s->period[e] ? 0 :
				 s->enabled || s->multiplex ? s->period[e] : AMUPMU_PERF_PARKED,
		.exclude_user = !!(fl & AMUPMU_EV_EXCL_USER),
		.exclude_kernel = !!(fl & AMUPMU_EV_EXCL_KERNEL),
		.exclude_hv = !!(fl & AMUPMU_EV_EXCL_HV) || (!vhe && (fl & AMUPMU_EV_EXCL_HOST)),
		.exclude_host = vhe && (fl & AMUPMU_EV_EXCL_HOST),
		.exclude_guest = !!(fl & AMUPMU_EV_EXCL_GUEST),
	};
}

/*
 * The overflow of a sampling counter: perf core calls this from arm_pmu's
 * interrupt on the event's CPU (PMU stopped meanwhile). The sample carries
 * the group's totals on this CPU. perf core throttles the event as it does
 * its own (kernel.perf_event_max_sample_rate per tick,
 * perf_cpu_time_max_percent): the interrupt that goes over the limit still
 * comes here, marked, and is counted as a throttle of the session on this
 * CPU; perf then stops the counter (it does not count) until the tick. A
 * pseudo-NMI (not on Debian's kernels, which have no
 * CONFIG_ARM64_PSEUDO_NMI) could interrupt a reader of the state: its
 * samples are dropped.
 */
static void amupmu_perf_overflow(struct perf_event *ev, struct perf_sample_data *data,
				 struct pt_regs *regs)
{
	struct amupmu_perf_cpu *pc = ev->overflow_handler_context;
	struct amupmu_session *s = pc->s;
	u64 values[AMUPMU_PMU_MAX_EVENTS];
	unsigned int e, i;

	if (in_nmi() || !pc->counting)
		return;
	if (READ_ONCE(ev->hw.interrupts) == AMUPMU_PERF_THROTTLED)
		amupmu_sess_throttled(s, pc->cpu);
	for (e = 0; e < s->nr_events && pc->ev[e] != ev; e++)
		;
	if (e == s->nr_events)
		return;		/* being installed or released on this CPU */
	pc->overflows[e]++;
	for (i = 0; i < s->nr_events; i++)
		values[i] = pc->acc[i] + amupmu_perf_count(pc->ev[i]) - pc->base[i];
	amupmu_sess_sample(s, pc->cpu, e, regs, values);
}

/* perf_event_create_kernel_counter()'s errors as the ABI has them. */
static int amupmu_perf_errno(int err)
{
	/* no PMU took the event for that CPU: nothing serves it */
	return err == -ENOENT ? -ENXIO : err;
}

/*
 * Create the group's events on online @cpu into @evs: each must be on a
 * CPU PMU, running (a pinned event perf core cannot schedule is in error
 * state as soon as it is created: EBUSY) and, to sample, on a PMU with an
 * overflow interrupt (else EOPNOTSUPP). Process context. On error none is
 * left.
 */
static int amupmu_perf_cpu_create(struct amupmu_session *s, unsigned int cpu,
				  struct perf_event **evs)
{
	struct amupmu_perf_cpu *pc = amupmu_perf_pc(s, cpu);
	struct perf_event_attr attr;
	struct amupmu_cpu_info ci;
	unsigned int e, made;
	int ret = 0;

	amupmu_cpu_snapshot(cpu, &ci);
	for (made = 0; made < s->nr_events && !ret; made++) {
		struct perf_event *ev;

		amupmu_perf_attr(s, made, ci.pmu_version >= ID_AA64DFR0_EL1_PMUVer_V3P5, &attr);
		ev = perf_event_create_kernel_counter(&attr, cpu, NULL, amupmu_perf_overflow, pc);
		if (IS_ERR(ev)) {
			ret = amupmu_perf_errno(PTR_ERR(ev));
			break;
		}
		evs[made] = ev;
		if (ev->pmu->task_ctx_nr != perf_hw_context)
			ret = -ENXIO;		/* not a CPU PMU took it */
		else if (s->period[made] && ev->pmu->capabilities & PERF_PMU_CAP_NO_INTERRUPT)
			ret = -EOPNOTSUPP;
		else if (!s->multiplex && READ_ONCE(ev->state) != PERF_EVENT_STATE_ACTIVE)
			ret = -EBUSY;
	}
	if (ret) {
		for (e = 0; e < made; e++) {
			perf_event_release_kernel(evs[e]);
			evs[e] = NULL;
		}
	}
	return ret;
}

/* Release @cpu's events of the group (not live any more). Process context. */
static void amupmu_perf_cpu_release(struct amupmu_session *s, struct perf_event **evs)
{
	unsigned int e;

	for (e = 0; e < s->nr_events; e++) {
		if (evs[e])
			perf_event_release_kernel(evs[e]);
		evs[e] = NULL;
	}
}

/**
 * amupmu_perf_config() - the shared-mode counters of a group being configured
 * @s: the session: events validated, CPU set and per-CPU state set, not
 *	configured yet, not enabled
 *
 * Creates every event on every online CPU of the set (sampling ones parked);
 * offline CPUs get theirs when they come online. Under amupmu_pmu_lock().
 *
 * Return: 0; -EINVAL (CHAIN), -ENXIO (no PMU serves a CPU), -EBUSY (a
 * pinned counter does not fit), -EOPNOTSUPP, -ENOMEM; nothing is left.
 */
int amupmu_perf_config(struct amupmu_session *s)
{
	unsigned int cpu, e;
	int ret = 0;

	for (e = 0; e < s->nr_events; e++)
		if ((s->evtyper[e] & ARMV8_PMU_EVTYPE_EVENT) == AMUPMU_EV_CHAIN)
			return -EINVAL;
	s->perf = alloc_percpu(struct amupmu_perf_cpu);
	if (!s->perf)
		return -ENOMEM;
	for_each_cpu(cpu, s->cpus) {
		amupmu_perf_pc(s, cpu)->s = s;
		amupmu_perf_pc(s, cpu)->cpu = cpu;
	}
	for_each_cpu_and(cpu, s->cpus, cpu_online_mask) {
		struct amupmu_perf_cpu *pc = amupmu_perf_pc(s, cpu);

		ret = amupmu_perf_cpu_create(s, cpu, pc->ev);
		if (ret)
			break;
		pc->live = true;
	}
	if (ret) {
		for_each_cpu(cpu, s->cpus)
			amupmu_perf_cpu_release(s, amupmu_perf_pc(s, cpu)->ev);
		free_percpu(s->perf);
		s->perf = NULL;
		return ret;
	}
	mutex_lock(&amupmu_perf_lock);
	list_add(&s->perf_node, &amupmu_perf_sessions);
	mutex_unlock(&amupmu_perf_lock);
	return 0;
}

/**
 * amupmu_perf_live() - the group's counters are installed on @cpu
 * @s: a shared session with a group
 * @cpu: a CPU of its set
 *
 * Return: true when they are (the CPU is online and they were created).
 */
bool amupmu_perf_live(struct amupmu_session *s, unsigned int cpu)
{
	return amupmu_perf_pc(s, cpu)->live;
}

enum amupmu_perf_op {
	AMUPMU_PERF_START,	/* ENABLE: count from now */
	AMUPMU_PERF_STOP,	/* DISABLE: fold what was counted */
	AMUPMU_PERF_ZERO,	/* RESET: start the totals over */
};

/* One operation on the group on one CPU: on it, interrupts off, or for an offline CPU. */
static void amupmu_perf_cpu_op(struct amupmu_session *s, struct amupmu_perf_cpu *pc,
			       enum amupmu_perf_op op)
{
	struct amupmu_sess_cpu *sc = amupmu_sc(s, pc->cpu);
	unsigned int e;

	for (e = 0; e < s->nr_events; e++) {
		u64 now = pc->live ? amupmu_perf_count(pc->ev[e]) : 0;

		/* a multiplexed event counts only while enabled: its total is since ZERO */
		if (s->multiplex && op != AMUPMU_PERF_ZERO)
			continue;
		switch (op) {
		case AMUPMU_PERF_START:
			pc->base[e] = now;
			break;
		case AMUPMU_PERF_STOP:
			if (pc->counting)
				pc->acc[e] += now - pc->base[e];
			break;
		case AMUPMU_PERF_ZERO:
			pc->acc[e] = 0;
			pc->base[e] = now;
			pc->overflows[e] = 0;
			pc->acc_en[e] = 0;
			pc->acc_run[e] = 0;
			break;
		}
	}
	if (op == AMUPMU_PERF_START) {
		pc->counting = pc->live;
	} else if (op == AMUPMU_PERF_STOP) {
		pc->counting = false;
	} else {
		sc->samples = 0;
		sc->lost = 0;
		sc->skid = 0;
		sc->throttled = 0;
	}
}

struct amupmu_perf_ipi {
	struct amupmu_session *s;
	enum amupmu_perf_op op;
};

static void amupmu_perf_ipi_fn(void *arg)
{
	struct amupmu_perf_ipi *a = arg;

	amupmu_perf_cpu_op(a->s, amupmu_perf_pc(a->s, smp_processor_id()), a->op);
}

/* @op on every CPU of the set: one on_each_cpu_mask(), the offline ones here. */
static void amupmu_perf_each_cpu(struct amupmu_session *s, enum amupmu_perf_op op)
{
	struct amupmu_perf_ipi a = { .s = s, .op = op };
	unsigned int cpu;

	cpumask_and(s->scratch, s->cpus, cpu_online_mask);
	on_each_cpu_mask(s->scratch, amupmu_perf_ipi_fn, &a, true);
	for_each_cpu_andnot(cpu, s->cpus, cpu_online_mask)
		amupmu_perf_cpu_op(s, amupmu_perf_pc(s, cpu), op);
}

/**
 * amupmu_perf_release() - free a shared group's counters
 * @s: the session; under amupmu_pmu_lock()
 *
 * The group stops counting on every CPU first (on each CPU, interrupts
 * off): an overflow handler of a sampling event reads every event of the
 * group on its CPU, and must not find one already released while another
 * still runs (the fuzzer's RELEASE of an enabled sampling group met a
 * NULL event in the handler). Once perf_event_release_kernel() returns
 * the event is off its CPU (a synchronous IPI), so no overflow handler
 * runs for it any more.
 */
void amupmu_perf_release(struct amupmu_session *s)
{
	unsigned int cpu;

	mutex_lock(&amupmu_perf_lock);
	list_del_init(&s->perf_node);
	mutex_unlock(&amupmu_perf_lock);
	if (!s->perf)
		return;
	amupmu_perf_each_cpu(s, AMUPMU_PERF_STOP);
	for_each_cpu(cpu, s->cpus)
		amupmu_perf_cpu_release(s, amupmu_perf_pc(s, cpu)->ev);
	free_percpu(s->perf);
	s->perf = NULL;
}

/*
 * Give the sampling counters their periods (@park: the parked one), which
 * restarts each period, and put evicted counters back where they fit
 * (perf_event_enable() retries an event in error state). Process context.
 */
static void amupmu_perf_periods(struct amupmu_session *s, bool park)
{
	unsigned int cpu, e;

	if (s->multiplex)
		return;
	for_each_cpu(cpu, s->cpus) {
		struct amupmu_perf_cpu *pc = amupmu_perf_pc(s, cpu);

		if (!pc->live)
			continue;
		for (e = 0; e < s->nr_events; e++) {
			if (READ_ONCE(pc->ev[e]->state) == PERF_EVENT_STATE_ERROR)
				perf_event_enable(pc->ev[e]);
			if (s->period[e])
				perf_event_period(pc->ev[e],
						  park ? AMUPMU_PERF_PARKED : s->period[e]);
		}
	}
}

/* A multiplexed group's events in or out of perf core's scheduling. Process context. */
static void amupmu_perf_mux_switch(struct amupmu_session *s, bool on)
{
	unsigned int cpu, e;

	if (!s->multiplex)
		return;
	for_each_cpu(cpu, s->cpus) {
		struct amupmu_perf_cpu *pc = amupmu_perf_pc(s, cpu);

		for (e = 0; pc->live && e < s->nr_events; e++) {
			if (on)
				perf_event_enable(pc->ev[e]);
			else
				perf_event_disable(pc->ev[e]);
		}
	}
}

/**
 * amupmu_perf_enable() - AMUPMU_PMU_CTL_ENABLE in shared mode
 * @s: the session (s->enabled already set); under amupmu_pmu_lock()
 */
void amupmu_perf_enable(struct amupmu_session *s)
{
	amupmu_perf_periods(s, false);
	amupmu_perf_mux_switch(s, true);
	amupmu_perf_each_cpu(s, AMUPMU_PERF_START);
}

/**
 * amupmu_perf_disable() - AMUPMU_PMU_CTL_DISABLE in shared mode
 * @s: the session; under amupmu_pmu_lock()
 */
void amupmu_perf_disable(struct amupmu_session *s)
{
	amupmu_perf_each_cpu(s, AMUPMU_PERF_STOP);
	amupmu_perf_periods(s, true);
	amupmu_perf_mux_switch(s, false);
}

/**
 * amupmu_perf_reset() - AMUPMU_PMU_CTL_RESET in shared mode
 * @s: the session; under amupmu_pmu_lock()
 *
 * Zero the totals and sample counts; an enabled group's sampling counters
 * start their periods over.
 */
void amupmu_perf_reset(struct amupmu_session *s)
{
	unsigned int cpu, e;

	amupmu_perf_periods(s, !s->enabled);
	amupmu_perf_each_cpu(s, AMUPMU_PERF_ZERO);
	if (!s->multiplex)
		return;
	/* perf core's times, and a count that goes with them */
	for_each_cpu(cpu, s->cpus) {
		struct amupmu_perf_cpu *pc = amupmu_perf_pc(s, cpu);

		for (e = 0; pc->live && e < s->nr_events; e++)
			pc->base[e] = perf_event_read_value(pc->ev[e], &pc->base_en[e],
							    &pc->base_run[e]);
	}
}

/* An entry's state before its events are looked at. */
static u32 amupmu_perf_state(struct amupmu_session *s, struct amupmu_perf_cpu *pc)
{
	u32 state = AMUPMU_READ_SHARED | (s->enabled ? AMUPMU_READ_ENABLED : 0);

	if (!pc->live)
		state |= cpu_online(pc->cpu) ? AMUPMU_READ_EVICTED : AMUPMU_READ_OFFLINE;
	return state;
}

/* The rest of an entry: the CPU, its state, sample counts, time running so far. */
static void amupmu_perf_entry_fill(struct amupmu_session *s, unsigned int cpu, u32 state,
				   struct amupmu_pmu_read_cpu *ent)
{
	struct amupmu_sess_cpu *sc = amupmu_sc(s, cpu);

	ent->cpu = cpu;
	ent->state = state;
	ent->samples = sc->samples;
	ent->lost = sc->lost;
	ent->skid = sc->skid;
	ent->time_running = sc->run_ns;
}

/**
 * amupmu_perf_read_entry() - a READ entry of a shared group
 * @s: the session
 * @cpu: a CPU of its set: this CPU with interrupts off, or an offline one
 * @ent: filled but for time_running's current stretch (the caller adds it)
 */
void amupmu_perf_read_entry(struct amupmu_session *s, unsigned int cpu,
			    struct amupmu_pmu_read_cpu *ent)
{
	struct amupmu_perf_cpu *pc = amupmu_perf_pc(s, cpu);
	u32 state = amupmu_perf_state(s, pc);
	unsigned int e;

	for (e = 0; e < s->nr_events; e++) {
		u64 v = pc->acc[e];

		if (pc->counting)
			v += amupmu_perf_count(pc->ev[e]) - pc->base[e];
		if (pc->live && READ_ONCE(pc->ev[e]->state) != PERF_EVENT_STATE_ACTIVE)
			state |= AMUPMU_READ_EVICTED;
		ent->values[e].value = v;
		ent->values[e].overflows = pc->overflows[e];
	}
	amupmu_perf_entry_fill(s, cpu, state, ent);
}

/**
 * amupmu_perf_read_mux() - a READ entry of a multiplexed group, with times
 * @s: the session
 * @cpu: a CPU of its set
 * @ent: filled but for time_running's current stretch (the caller adds it)
 * @times: per event, time enabled and time running
 *
 * Process context (perf_event_read_value() sleeps and reads perf core's
 * times, one IPI per event), under amupmu_pmu_lock().
 */
void amupmu_perf_read_mux(struct amupmu_session *s, unsigned int cpu,
			  struct amupmu_pmu_read_cpu *ent, struct amupmu_ev_times *times)
{
	struct amupmu_perf_cpu *pc = amupmu_perf_pc(s, cpu);
	u32 state = amupmu_perf_state(s, pc);
	unsigned int e;

	for (e = 0; e < s->nr_events; e++) {
		u64 v = pc->acc[e], en = pc->acc_en[e], run = pc->acc_run[e];

		if (pc->live) {
			u64 now_en, now_run;

			v += perf_event_read_value(pc->ev[e], &now_en, &now_run) - pc->base[e];
			en += now_en - pc->base_en[e];
			run += now_run - pc->base_run[e];
		}
		ent->values[e].value = v;
		ent->values[e].overflows = pc->overflows[e];
		times[e].enabled = en;
		times[e].running = run;
	}
	amupmu_perf_entry_fill(s, cpu, state, ent);
}

/**
 * amupmu_perf_cpu_online() - give the shared groups their counters on @cpu
 * @cpu: the CPU coming online; called on it from the hotplug callback
 * @ci: its entry
 *
 * A group whose counters cannot be created there (another pinned user took
 * the counters meanwhile) reads AMUPMU_READ_EVICTED on that CPU; the CPU
 * comes up all the same.
 */
static void amupmu_perf_cpu_online(unsigned int cpu, const struct amupmu_cpu_info *ci)
{
	struct perf_event *evs[AMUPMU_PMU_MAX_EVENTS] = { };
	struct amupmu_session *s;
	unsigned int e;

	mutex_lock(&amupmu_perf_lock);
	list_for_each_entry(s, &amupmu_perf_sessions, perf_node) {
		struct amupmu_perf_cpu *pc;
		struct amupmu_sess_cpu *sc;
		int ret;

		if (!cpumask_test_cpu(cpu, s->cpus) || amupmu_perf_pc(s, cpu)->live)
			continue;
		pc = amupmu_perf_pc(s, cpu);
		sc = amupmu_sc(s, cpu);
		ret = amupmu_perf_cpu_create(s, cpu, evs);
		if (ret) {
			pr_warn_ratelimited("cpu%u: a shared-mode group's counters: %d\n",
					    cpu, ret);
			continue;
		}
		local_irq_disable();
		/* this group's events only: @evs may hold a larger group's beyond them */
		memcpy(pc->ev, evs, s->nr_events * sizeof(*evs));
		for (e = 0; e < s->nr_events; e++) {
			pc->base[e] = amupmu_perf_count(pc->ev[e]);
			pc->base_en[e] = 0;	/* perf's times start with the event */
			pc->base_run[e] = 0;
		}
		pc->live = true;
		pc->counting = s->enabled;
		if (s->enabled)
			sc->run_since = local_clock();
		local_irq_enable();
	}
	mutex_unlock(&amupmu_perf_lock);
}

/**
 * amupmu_perf_cpu_offline() - fold and release the shared groups' counters
 * @cpu: the CPU going offline; called on it from the hotplug callback,
 *	before perf core detaches its events
 */
static void amupmu_perf_cpu_offline(unsigned int cpu)
{
	struct perf_event *evs[AMUPMU_PMU_MAX_EVENTS];
	struct amupmu_session *s;
	unsigned int e;

	mutex_lock(&amupmu_perf_lock);
	list_for_each_entry(s, &amupmu_perf_sessions, perf_node) {
		struct amupmu_perf_cpu *pc;
		struct amupmu_sess_cpu *sc;

		if (!cpumask_test_cpu(cpu, s->cpus) || !amupmu_perf_pc(s, cpu)->live)
			continue;
		pc = amupmu_perf_pc(s, cpu);
		sc = amupmu_sc(s, cpu);
		for (e = 0; s->multiplex && e < s->nr_events; e++) {
			u64 en, run;

			pc->acc[e] += perf_event_read_value(pc->ev[e], &en, &run) - pc->base[e];
			pc->acc_en[e] += en - pc->base_en[e];
			pc->acc_run[e] += run - pc->base_run[e];
		}
		local_irq_disable();
		for (e = 0; !s->multiplex && e < s->nr_events; e++)
			if (pc->counting)
				pc->acc[e] += amupmu_perf_count(pc->ev[e]) - pc->base[e];
		if (sc->run_since) {
			sc->run_ns += local_clock() - sc->run_since;
			sc->run_since = 0;
		}
		pc->counting = false;
		pc->live = false;
		memcpy(evs, pc->ev, sizeof(evs));
		memset(pc->ev, 0, sizeof(pc->ev));
		local_irq_enable();
		amupmu_perf_cpu_release(s, evs);
	}
	mutex_unlock(&amupmu_perf_lock);
}

const struct amupmu_unit_ops amupmu_perf_unit = {
	.cpu_online = amupmu_perf_cpu_online,
	.cpu_offline = amupmu_perf_cpu_offline,
};
