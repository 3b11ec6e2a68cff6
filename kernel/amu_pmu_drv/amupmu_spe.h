/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amupmu: the Statistical Profiling Extension (amupmu_spe.c), shared with
 * the debugfs knobs and the mock model.
 */
#ifndef AMUPMU_SPE_H
#define AMUPMU_SPE_H

#include <linux/types.h>

struct amupmu_cpu_info;
struct amupmu_unit_ops;
struct cpumask;

/**
 * struct amupmu_spe_filter - what an SPE session programs besides the
 *	buffer and PMSCR_EL1: the registers' values, in the Arm ARM's layout
 * @pmsfcr: PMSFCR_EL1 (FE, FT, FL, FnE, TYPE, TYPEm)
 * @pmsevfr: PMSEVFR_EL1
 * @pmsnevfr: PMSNEVFR_EL1
 * @pmslatfr: PMSLATFR_EL1 (MINLAT)
 * @pmsirr: PMSIRR_EL1 (INTERVAL, RND)
 */
struct amupmu_spe_filter {
	u64 pmsfcr;
	u64 pmsevfr;
	u64 pmsnevfr;
	u64 pmslatfr;
	u64 pmsirr;
};

enum amupmu_spe_reg {
	AMUPMU_SPE_PMSFCR,
	AMUPMU_SPE_PMSEVFR,
	AMUPMU_SPE_PMSNEVFR,
	AMUPMU_SPE_PMSLATFR,
	AMUPMU_SPE_PMSIRR,
};

static inline u64 *amupmu_spe_filter_reg(struct amupmu_spe_filter *f, enum amupmu_spe_reg reg)
{
	switch (reg) {
	case AMUPMU_SPE_PMSEVFR:
		return &f->pmsevfr;
	case AMUPMU_SPE_PMSNEVFR:
		return &f->pmsnevfr;
	case AMUPMU_SPE_PMSLATFR:
		return &f->pmslatfr;
	case AMUPMU_SPE_PMSIRR:
		return &f->pmsirr;
	default:
		return &f->pmsfcr;
	}
}

/*
 * The SPE register seam: every SPE system register access of the driver
 * goes through amupmu_spe_ops, which the mock build replaces with its
 * model (amupmu_mock_spe.c) so that the mock runs the same programming,
 * buffer and interrupt paths as the hardware.
 */
enum amupmu_spe_sysreg {
	AMUPMU_SPE_SR_PMSCR,	/* PMSCR_EL1; PMSCR_EL2 on a VHE host (same bits: E0HSPE, E2SPE) */
	AMUPMU_SPE_SR_PMSICR,
	AMUPMU_SPE_SR_PMSIRR,
	AMUPMU_SPE_SR_PMSFCR,
	AMUPMU_SPE_SR_PMSEVFR,
	AMUPMU_SPE_SR_PMSNEVFR,
	AMUPMU_SPE_SR_PMSLATFR,
	AMUPMU_SPE_SR_PMBLIMITR,
	AMUPMU_SPE_SR_PMBPTR,
	AMUPMU_SPE_SR_PMBSR,
	AMUPMU_SPE_SR_NR,
};

/**
 * struct amupmu_spe_ops - SPE register access of the calling CPU
 * @read: read @r; on the CPU, preemption (or interrupts) off
 * @write: write @r; same context. Writes are followed by isb() where the
 *	architecture needs it: the caller issues isb() itself.
 * @drain: PSB CSYNC, DSB NSH, then ISB: every record the CPU has sampled
 *	so far is written to memory and PMBPTR_EL1/PMBSR_EL1 as read next
 *	cover it (the sequence of the kernel's arm_spe_pmu before it reads
 *	PMBPTR_EL1)
 *
 * The buffer management interrupt of a CPU, level-sensitive while
 * PMBSR_EL1.S is 1, makes the hardware backend's PPI handler call
 * amupmu_spe_irq_handle() on that CPU; the mock model calls it itself, in
 * hard interrupt context on that CPU, when it sets PMBSR_EL1.S, and again
 * while S stays 1 (level semantics).
 */
struct amupmu_spe_ops {
	u64 (*read)(enum amupmu_spe_sysreg r);
	void (*write)(enum amupmu_spe_sysreg r, u64 val);
	void (*drain)(void);
};

extern const struct amupmu_spe_ops amupmu_spe_hw_ops;
#ifdef CONFIG_AMUPMU_MOCK
extern const struct amupmu_spe_ops amupmu_spe_mock_ops;
#endif
/* amupmu_spe.c: the buffer management event of the calling CPU (hard IRQ context) */
void amupmu_spe_irq_handle(void);

extern const struct amupmu_unit_ops amupmu_spe_unit;
int amupmu_spe_init(void);
void amupmu_spe_exit(void);
u64 amupmu_spe_pmbidr(unsigned int cpu);
int amupmu_spe_filter_check(const struct amupmu_spe_filter *f, const struct cpumask *cpus);
void amupmu_spe_defaults_get(struct amupmu_spe_filter *f);
int amupmu_spe_defaults_set(enum amupmu_spe_reg reg, u64 mask, u64 val, u64 *old);

/*
 * sessions: the file's SPE state (a slot in its amupmu_session, allocated
 * at open by amupmu_spe_file_init(), freed by amupmu_spe_file_release()),
 * which holds its configuration and the poll() wait queue
 */
struct amupmu_spe_sess;
struct file;
struct poll_table_struct;
struct vm_area_struct;
int amupmu_spe_file_init(struct amupmu_spe_sess **slot);
int amupmu_spe_cmd(struct amupmu_spe_sess **slot, unsigned int cmd, void *arg, u64 *seq);
/*
 * frees the configuration CONFIG @seq made if the file still holds it
 * (CONFIG's failed copy-back); the file's state stays
 */
void amupmu_spe_release(struct amupmu_spe_sess **slot, u64 seq);
/* the file's ->release: the configuration and the file's SPE state */
void amupmu_spe_file_release(struct amupmu_spe_sess **slot);
int amupmu_spe_mmap(struct amupmu_spe_sess **slot, struct vm_area_struct *vma);
__poll_t amupmu_spe_poll(struct amupmu_spe_sess **slot, struct file *filp,
			 struct poll_table_struct *wait);
bool amupmu_spe_configured(struct amupmu_spe_sess **slot);
int amupmu_spe_live_regs(unsigned int cpu, u64 *regs);
/*
 * The claimed SPE device is being unbound: stop every SPE session's
 * profiling. Called in process context from the device's remove(), before
 * its PPI is disabled and freed, with no CPU hotplug lock and none of
 * amupmu_dev.lock or the session locks held (only amupmu_spe_dev.c's own
 * mutex, which nothing outside that file takes: it may take
 * cpus_read_lock() and any SPE lock). The PPI stays enabled, and its
 * handler may run, until it returns; amupmu_spe_dev_serves() already says
 * false for the device's CPUs. The configurations go stale (ENXIO).
 */
void amupmu_spe_dev_gone(void);

/*
 * amupmu_spe_dev.c: the SPE platform device "amupmu-spe", bound only by
 * hand (driver_override, then bind); while bound, its PPI's handler calls
 * amupmu_spe_irq_handle(). The owner is an enum amupmu_spe_owner of the UAPI.
 */
int amupmu_spe_dev_init(void);		/* after amupmu_spe_init() */
void amupmu_spe_dev_exit(void);		/* before amupmu_spe_exit(): unbinds */
/* a bound device's PPI serves @cpu, or the mock model does (a snapshot) */
bool amupmu_spe_dev_serves(unsigned int cpu);
/* takes amupmu_dev.lock: not to be called with it held */
u32 amupmu_spe_owner(void);

#ifdef CONFIG_AMUPMU_MOCK
/* the mock's spe_model file changed @cpu's identification: read it again */
int amupmu_spe_rediscover(unsigned int cpu);
#endif

#endif /* AMUPMU_SPE_H */
