/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amupmu: the PMU unit, in two modes that share the session's group
 * (amupmu_session.h): exclusive mode (amupmu_pmu.c: the PMU's registers,
 * interrupt and power management) and shared mode through perf core
 * (amupmu_perf.c); the PMU commands of a session, for both, in
 * amupmu_pmu_cmd.c.
 */
#ifndef AMUPMU_PMU_H
#define AMUPMU_PMU_H

#include "amupmu.h"

struct amupmu_pmu_read;
struct amupmu_pmu_read_cpu;
struct amupmu_session;
struct device;
struct pt_regs;

/* amupmu_pmu.c: exclusive mode, the hardware */
extern const struct amupmu_unit_ops amupmu_pmu_unit;
int amupmu_pmu_init(void);
void amupmu_pmu_exit(void);
int amupmu_pmu_claim(struct device *dev, int irq);
u32 amupmu_pmu_free_mask(unsigned int cpu, unsigned int nr_counters);
void amupmu_pmu_release(void);

/* amupmu_pmu_cmd.c: the PMU commands of a session */
int amupmu_pmu_cmd(struct amupmu_session *s, unsigned int cmd, void *arg);
int amupmu_pmu_cmd_read(struct amupmu_session *s, struct amupmu_pmu_read *rd);
int amupmu_pmu_read_fast(struct amupmu_session *s, struct amupmu_pmu_read __user *u);
void amupmu_pmu_release_group(struct amupmu_session *s);
void amupmu_pmu_file_release(struct amupmu_session *s);

/**
 * struct amupmu_pmu_counter_view - an allocated counter, for cpuN/pmu_counters_view
 * @evtyper: its PMEVTYPER<n>_EL0 (or PMCCFILTR_EL0) value
 * @total: its 64-bit total
 * @overflows: its overflow interrupts
 */
struct amupmu_pmu_counter_view {
	u32 evtyper;
	u64 total;
	u64 overflows;
};

u32 amupmu_pmu_cpu_counters(unsigned int cpu, struct amupmu_pmu_counter_view *cnt);

/* amupmu_pmu.c: a sample of event @ev on this CPU with the group's @values (IRQ context) */
void amupmu_sess_sample(struct amupmu_session *s, unsigned int cpu, unsigned int ev,
			struct pt_regs *regs, const u64 *values);
/* amupmu_pmu.c: the session's sample interrupts on this CPU were throttled (IRQ context) */
void amupmu_sess_throttled(struct amupmu_session *s, unsigned int cpu);
/* amupmu_pmu.c: @cpu's lost samples and throttles over every session since load */
void amupmu_pmu_totals(unsigned int cpu, u64 *lost, u64 *throttled);

/* amupmu_perf.c: shared mode (counting through perf core) */
extern const struct amupmu_unit_ops amupmu_perf_unit;
bool amupmu_perf_available(void);
bool amupmu_perf_has_pmu(void);
int amupmu_perf_config(struct amupmu_session *s);
void amupmu_perf_release(struct amupmu_session *s);
void amupmu_perf_enable(struct amupmu_session *s);
void amupmu_perf_disable(struct amupmu_session *s);
void amupmu_perf_reset(struct amupmu_session *s);
bool amupmu_perf_live(struct amupmu_session *s, unsigned int cpu);
void amupmu_perf_read_entry(struct amupmu_session *s, unsigned int cpu,
			    struct amupmu_pmu_read_cpu *ent);
/**
 * struct amupmu_ev_times - one event's times of a READ with AMUPMU_PMU_READ_TIMES
 * @enabled: ns enabled
 * @running: ns on a counter
 */
struct amupmu_ev_times {
	u64 enabled;
	u64 running;
};

void amupmu_perf_read_mux(struct amupmu_session *s, unsigned int cpu,
			  struct amupmu_pmu_read_cpu *ent, struct amupmu_ev_times *times);

#endif /* AMUPMU_PMU_H */
