/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amupmu: the Statistical Profiling Extension (amupmu_spe.c), shared with
 * the debugfs knobs and the mock model.
 */
#ifndef AMUPMU_SPE_H
#define AMUPMU_SPE_H

#include <linux/types.h>

struct amupmu_cpu_info;
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

void amupmu_spe_init(void);
void amupmu_spe_discover(struct amupmu_cpu_info *ci);
u64 amupmu_spe_pmbidr(unsigned int cpu);
int amupmu_spe_filter_check(const struct amupmu_spe_filter *f, const struct cpumask *cpus);
void amupmu_spe_defaults_get(struct amupmu_spe_filter *f);
int amupmu_spe_defaults_set(enum amupmu_spe_reg reg, u64 mask, u64 val);
#ifdef CONFIG_AMUPMU_MOCK
int amupmu_spe_rediscover(unsigned int cpu);
/* amupmu_mock.c: the SPE model's identification (debugfs spe_model) */
extern const struct file_operations amupmu_mock_spe_fops;
#endif

#endif /* AMUPMU_SPE_H */
