/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amupmu: a session (an open file of /dev/amupmu): its lifetime and ring
 * are the core's (amupmu_session.c); its PMU group is configured by the
 * PMU commands (amupmu_pmu_cmd.c) for the PMU modes, exclusive
 * (amupmu_pmu.c) and shared through perf core (amupmu_perf.c), which keep
 * their counter state apart and share this.
 */
#ifndef AMUPMU_SESSION_H
#define AMUPMU_SESSION_H

#include <linux/cpumask.h>
#include <linux/irq_work.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/wait.h>

#include "amupmu.h"

struct amupmu_perf_cpu;

/**
 * struct amupmu_sess_cpu - a session's state on one CPU of its set
 * @idx: counter of each event
 * @run_ns: time counted before @run_since
 * @run_since: when it last started counting there (0: not counting);
 *	written by commands and hotplug callbacks, which exclude each other
 *	through the hotplug lock
 * @samples: records written by that CPU (under its amupmu_pmu_cpu.lock)
 * @lost: records it dropped because the ring was full (idem)
 * @skid: samples it dropped as kernel context of a no-kernel counter (idem)
 * @throttled: times its sample interrupts were throttled until the next
 *	tick (idem; shared mode: in the overflow handler, on the CPU)
 * @throttle_seq: exclusive mode: the CPU's throttle this session's
 *	@throttled last counted (one throttle stops all of the CPU's sampling
 *	counters, counted once per session); under amupmu_pmu_cpu.lock
 */
struct amupmu_sess_cpu {
	u8 idx[AMUPMU_PMU_MAX_EVENTS];
	u64 run_ns;
	u64 run_since;
	u64 samples;
	u64 lost;
	u64 skid;
	u64 throttled;
	u64 throttle_seq;
};

/**
 * struct amupmu_session - an open file of /dev/amupmu
 * @lock: serialises the session's commands (taken inside cpus_read_lock())
 * @gen: amupmu_sess_gen when the group was configured, 0 without a group:
 *	a group of an earlier binding of the device is gone (ENXIO)
 * @configured: it holds a group
 * @enabled: the group counts
 * @nr_events: events in the group
 * @evtyper: each event's PMEVTYPER value
 * @no_kernel: each event's filter excludes the kernel
 * @ev_flags: each event's enum amupmu_event_flags (shared mode: perf's
 *	exclude bits)
 * @cpus: the CPU set (empty without a group); allocated with the session
 * @scratch: a CPU mask for the commands (under @lock), idem
 * @pcpu: per CPU of the set: counters, times, sample counts
 * @enabled_ns: time enabled before @enabled_since
 * @enabled_since: when it was last enabled (valid while @enabled)
 * @period: each event's sample period (0: counting only)
 * @pid_ns: pid namespace of the configuring process: samples name tasks
 *	in it
 * @ring: the sample ring, NULL until a sampling group is configured; kept
 *	when the group is released, freed with the session (under @lock)
 * @read_lock: serialises read()
 * @wait: read() and poll() wait here for records
 * @wake: wakes @wait from the interrupt handler
 * @node: in amupmu_sessions (so that a departing device wakes readers)
 * @spe: the file's SPE state (amupmu_spe.c: its configuration and poll
 *	wait queue), allocated at open, freed at release
 * @amu_perfmon: an AMUPMU_AMU_READ of this file passed the CAP_PERFMON
 *	check: later ones do not check again (amupmu_amu.c; set once, never
 *	cleared, read and written with READ_ONCE/WRITE_ONCE)
 * @nl: the group as the netlink family reports it (registered while
 *	@configured)
 * @shared: the group counts through perf core (amupmu_perf.c); fixed
 *	while @configured
 * @multiplex: shared mode, AMUPMU_PMU_CONFIG_MULTIPLEX: flexible events
 * @perf: shared mode: per CPU of the set, the perf events and totals
 * @perf_node: shared mode: in amupmu_perf.c's list of configured groups
 *	(what the hotplug callbacks walk)
 */
struct amupmu_session {
	struct mutex lock; /* see @lock above */
	unsigned int gen;
	bool configured;
	bool enabled;
	u32 nr_events;
	u32 evtyper[AMUPMU_PMU_MAX_EVENTS];
	bool no_kernel[AMUPMU_PMU_MAX_EVENTS];
	u32 ev_flags[AMUPMU_PMU_MAX_EVENTS];
	cpumask_var_t cpus;
	cpumask_var_t scratch;
	struct amupmu_sess_cpu __percpu *pcpu;
	u64 enabled_ns;
	u64 enabled_since;
	u64 period[AMUPMU_PMU_MAX_EVENTS];
	struct pid_namespace *pid_ns;
	struct amupmu_ring *ring;
	struct mutex read_lock; /* see @read_lock above */
	wait_queue_head_t wait;
	struct irq_work wake;
	struct list_head node;
	struct amupmu_spe_sess *spe;
	bool amu_perfmon;
	struct amupmu_nl_sess nl;
	bool shared;
	bool multiplex;
	struct amupmu_perf_cpu __percpu *perf;
	struct list_head perf_node;
};

static inline struct amupmu_sess_cpu *amupmu_sc(struct amupmu_session *s, unsigned int cpu)
{
	return per_cpu_ptr(s->pcpu, cpu);
}

/* amupmu_session.c */
extern unsigned int amupmu_sess_gen;
void amupmu_sessions_wake(void);
int amupmu_session_ring(struct amupmu_session *s, unsigned int pages);

/*
 * The group belongs to a binding of the PMU device that went away
 * (amupmu_pmu_release() bumped amupmu_sess_gen since it was configured).
 */
static inline bool amupmu_sess_stale(const struct amupmu_session *s)
{
	unsigned int gen = READ_ONCE(s->gen);

	return gen && gen != READ_ONCE(amupmu_sess_gen);
}

#endif /* AMUPMU_SESSION_H */
