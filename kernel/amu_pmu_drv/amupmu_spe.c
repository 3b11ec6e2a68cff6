// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: the Statistical Profiling Extension.
 *
 * This part: SPE discovery per CPU (on that CPU), and the filter and
 * interval configuration an SPE session programs (PMSFCR_EL1, PMSEVFR_EL1,
 * PMSNEVFR_EL1, PMSLATFR_EL1, PMSIRR_EL1), checked against the CPUs'
 * PMSIDR_EL1 and SPE version as the Arm ARM (DDI 0487, D24 and the
 * SPEFilterBy* pseudocode) defines them. The defaults a session can ask
 * for are the arm_spe debugfs knobs (amupmu_debugfs.c), changed only
 * through amupmu_spe_defaults_set(), which checks the whole result first:
 * a refused change leaves them as they were.
 *
 * Errors, in this order (so that the errno does not depend on which CPU
 * is looked at first): a value the architecture gives no meaning at any
 * SPE version, EINVAL; a feature a CPU lacks, EOPNOTSUPP; a value out of
 * that CPU's range (interval below PMSIDR_EL1.Interval's minimum, MINLAT
 * beyond PMSIDR_EL1.CountSize's width) or a CONSTRAINED UNPREDICTABLE
 * combination (FL with MINLAT 0; FT with no type without FEAT_SPE_EFT),
 * EINVAL.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/smp.h>

#include "amupmu.h"
#include "amupmu_compat.h"
#include "amupmu_spe.h"

/* The PMSFCR_EL1 bits a configuration may set (FDS: no PMSDSFR_EL1 support yet). */
#define AMUPMU_PMSFCR_VALID	(PMSFCR_EL1_FE | PMSFCR_EL1_FT | PMSFCR_EL1_FL | \
				 PMSFCR_EL1_FnE | PMSFCR_EL1_TYPE | PMSFCR_EL1_TYPEm)
#define AMUPMU_PMSFCR_EFT	(PMSFCR_EL1_FP | PMSFCR_EL1_SIMD | PMSFCR_EL1_TYPEm)
#define AMUPMU_PMSIRR_VALID	(PMSIRR_EL1_INTERVAL | PMSIRR_EL1_RND)

static DEFINE_PER_CPU(u64, amupmu_spe_pmbidr_pcpu);

static DEFINE_MUTEX(amupmu_spe_lock);	/* amupmu_spe_defaults */
static struct amupmu_spe_filter amupmu_spe_defaults;

/*
 * Like the kernel's arm_spe_pmu, PMSIDR_EL1 is read only when
 * PMBIDR_EL1.P is 0: when firmware keeps the profiling buffer (P = 1)
 * the PMS* registers trap to EL3 and the CPU counts as one without SPE.
 */
static void amupmu_spe_read_ids(struct amupmu_cpu_info *ci, u64 *pmbidr)
{
	u64 (*rd)(enum amupmu_reg reg) = amupmu_dev.backend->read;

	*pmbidr = 0;
	ci->flags &= ~AMUPMU_CPU_SPE;
	ci->pmsidr = 0;
	if (!ci->spe_version)
		return;
	*pmbidr = rd(AMUPMU_REG_PMBIDR);
	if (*pmbidr & PMBIDR_EL1_P)
		return;
	ci->flags |= AMUPMU_CPU_SPE;
	ci->pmsidr = rd(AMUPMU_REG_PMSIDR);
}

/**
 * amupmu_spe_discover() - SPE of this CPU, into its discovery entry
 * @ci: the entry (spe_version set), on its CPU with preemption off
 */
void amupmu_spe_discover(struct amupmu_cpu_info *ci)
{
	u64 pmbidr;

	amupmu_spe_read_ids(ci, &pmbidr);
	this_cpu_write(amupmu_spe_pmbidr_pcpu, pmbidr);
}

/* PMBIDR_EL1 of @cpu as discovery read it (0: not discovered or no SPE). */
u64 amupmu_spe_pmbidr(unsigned int cpu)
{
	return READ_ONCE(per_cpu(amupmu_spe_pmbidr_pcpu, cpu));
}

#ifdef CONFIG_AMUPMU_MOCK
static void amupmu_spe_rediscover_fn(void *arg)
{
	struct amupmu_cpu_info *ci = arg;
	u64 dfr0 = amupmu_dev.backend->read(AMUPMU_REG_ID_AA64DFR0);

	ci->id_aa64dfr0 = dfr0;
	ci->spe_version = FIELD_GET(ID_AA64DFR0_EL1_PMSVer, dfr0);
	amupmu_spe_discover(ci);
}

/**
 * amupmu_spe_rediscover() - discover @cpu's SPE again (the mock's spe_model)
 * @cpu: an online CPU, under cpus_read_lock()
 *
 * Return: 0, or the errno of the cross call.
 */
int amupmu_spe_rediscover(unsigned int cpu)
{
	struct amupmu_cpu_info *c = &amupmu_dev.cpus[cpu], ci;
	int ret;

	mutex_lock(&amupmu_dev.lock);
	ci = *c;
	ret = smp_call_function_single(cpu, amupmu_spe_rediscover_fn, &ci, 1);
	if (!ret) {
		if (ci.flags & (AMUPMU_CPU_AMU | AMUPMU_CPU_SPE))
			ci.flags |= amupmu_dev.backend->mock_flags;
		else
			ci.flags &= ~amupmu_dev.backend->mock_flags;
		*c = ci;
	}
	mutex_unlock(&amupmu_dev.lock);
	return ret;
}
#endif

/* Smallest sampling interval PMSIDR_EL1.Interval allows (reserved: the largest). */
static u32 amupmu_spe_min_interval(u64 pmsidr)
{
	static const u16 ops[] = { 256, 512, 768, 1024, 1536, 2048, 3072, 4096 };
	unsigned int i = FIELD_GET(PMSIDR_EL1_INTERVAL, pmsidr);

	return i < ARRAY_SIZE(ops) ? ops[i] : ops[ARRAY_SIZE(ops) - 1];
}

/* Largest PMSLATFR_EL1.MINLAT: the counters' width, PMSIDR_EL1.CountSize. */
static u32 amupmu_spe_max_minlat(u64 pmsidr)
{
	/* 0b0011: 16-bit saturating; 0b0010 (and reserved values): 12-bit */
	return FIELD_GET(PMSIDR_EL1_COUNTSIZE, pmsidr) == 3 ? 0xffff : 0xfff;
}

/* PMSEVFR_EL1/PMSNEVFR_EL1 bits that are RES0 at SPE version @pmsver. */
static u64 amupmu_spe_evfr_res0(unsigned int pmsver)
{
	switch (pmsver) {
	case ID_AA64DFR0_EL1_PMSVer_IMP:
		return PMSEVFR_EL1_RES0_IMP;
	case ID_AA64DFR0_EL1_PMSVer_V1P1:
		return PMSEVFR_EL1_RES0_V1P1;
	case ID_AA64DFR0_EL1_PMSVer_V1P2:
	case ID_AA64DFR0_EL1_PMSVer_V1P3:
		return PMSEVFR_EL1_RES0_V1P2;
	default:
		return PMSEVFR_EL1_RES0_V1P4;
	}
}

/* What the architecture defines at no version: EINVAL whatever the CPU. */
static int amupmu_spe_check_shape(const struct amupmu_spe_filter *f)
{
	if (f->pmsfcr & ~AMUPMU_PMSFCR_VALID)
		return -EINVAL;
	if ((f->pmsevfr | f->pmsnevfr) & PMSEVFR_EL1_RES0_V1P4)
		return -EINVAL;
	if (f->pmslatfr & ~PMSLATFR_EL1_MINLAT)
		return -EINVAL;
	if (f->pmsirr & ~AMUPMU_PMSIRR_VALID)
		return -EINVAL;
	return 0;
}

/* The checks that depend on one CPU's SPE version and PMSIDR_EL1. */
static int amupmu_spe_check_cpu(const struct amupmu_spe_filter *f, unsigned int pmsver,
				u64 pmsidr)
{
	u64 fcr = f->pmsfcr;
	bool eft = pmsidr & PMSIDR_EL1_EFT;

	/* features the CPU lacks */
	if (((fcr & PMSFCR_EL1_FE) && !(pmsidr & PMSIDR_EL1_FE)) ||
	    ((fcr & PMSFCR_EL1_FT) && !(pmsidr & PMSIDR_EL1_FT)) ||
	    ((fcr & PMSFCR_EL1_FL) && !(pmsidr & PMSIDR_EL1_FL)) ||
	    (((fcr & PMSFCR_EL1_FnE) || f->pmsnevfr) && !(pmsidr & PMSIDR_EL1_FnE)) ||
	    ((fcr & AMUPMU_PMSFCR_EFT) && !eft))
		return -EOPNOTSUPP;
	if ((f->pmsevfr | f->pmsnevfr) & amupmu_spe_evfr_res0(pmsver))
		return -EOPNOTSUPP;
	/* ranges */
	if ((f->pmsirr & PMSIRR_EL1_INTERVAL) < amupmu_spe_min_interval(pmsidr))
		return -EINVAL;
	if (FIELD_GET(PMSLATFR_EL1_MINLAT, f->pmslatfr) > amupmu_spe_max_minlat(pmsidr))
		return -EINVAL;
	/* CONSTRAINED UNPREDICTABLE */
	if ((fcr & PMSFCR_EL1_FL) && !FIELD_GET(PMSLATFR_EL1_MINLAT, f->pmslatfr))
		return -EINVAL;
	if ((fcr & PMSFCR_EL1_FT) && !(fcr & PMSFCR_EL1_TYPE) && !eft)
		return -EINVAL;
	return 0;
}

/**
 * amupmu_spe_filter_check() - is @f a configuration every CPU of @cpus can run?
 * @f: the configuration
 * @cpus: the CPUs, or NULL for every CPU with SPE
 *
 * CPUs without SPE in @cpus are the caller's business (a session refuses
 * them itself). Takes amupmu_dev.lock.
 *
 * Return: 0, -EINVAL or -EOPNOTSUPP (see the top of this file), -ENODEV
 * when no CPU considered has SPE.
 */
int amupmu_spe_filter_check(const struct amupmu_spe_filter *f, const struct cpumask *cpus)
{
	unsigned int cpu, seen = 0;
	int ret, ret_range = 0;

	ret = amupmu_spe_check_shape(f);
	if (ret)
		return ret;
	mutex_lock(&amupmu_dev.lock);
	for_each_possible_cpu(cpu) {
		const struct amupmu_cpu_info *ci = &amupmu_dev.cpus[cpu];

		if ((cpus && !cpumask_test_cpu(cpu, cpus)) || !(ci->flags & AMUPMU_CPU_SPE))
			continue;
		seen++;
		ret = amupmu_spe_check_cpu(f, ci->spe_version, ci->pmsidr);
		if (ret == -EOPNOTSUPP)
			break;
		if (ret && !ret_range)
			ret_range = ret;
		ret = 0;
	}
	mutex_unlock(&amupmu_dev.lock);
	if (ret)
		return ret;
	if (!seen)
		return -ENODEV;
	return ret_range;
}

/* The defaults a session asks for (the arm_spe knobs). */
void amupmu_spe_defaults_get(struct amupmu_spe_filter *f)
{
	mutex_lock(&amupmu_spe_lock);
	*f = amupmu_spe_defaults;
	mutex_unlock(&amupmu_spe_lock);
}

/**
 * amupmu_spe_defaults_set() - change one field of the defaults
 * @reg: which register (enum amupmu_spe_reg)
 * @mask: the field's bits in it
 * @val: its new bits, in place (within @mask)
 *
 * The result is checked against every CPU with SPE, the other fields as
 * they are; a refused change changes nothing.
 *
 * Return: 0, -EINVAL, -EOPNOTSUPP, -ENODEV (no CPU has SPE).
 */
int amupmu_spe_defaults_set(enum amupmu_spe_reg reg, u64 mask, u64 val)
{
	struct amupmu_spe_filter f;
	u64 *r;
	int ret;

	if (val & ~mask)
		return -EINVAL;
	mutex_lock(&amupmu_spe_lock);
	f = amupmu_spe_defaults;
	r = amupmu_spe_filter_reg(&f, reg);
	*r = (*r & ~mask) | val;
	ret = amupmu_spe_filter_check(&f, NULL);
	if (!ret)
		amupmu_spe_defaults = f;
	mutex_unlock(&amupmu_spe_lock);
	return ret;
}

/**
 * amupmu_spe_init() - the defaults at load: no filter, the smallest interval
 *	every CPU with SPE allows
 */
void amupmu_spe_init(void)
{
	unsigned int cpu;
	u32 interval = 0;

	mutex_lock(&amupmu_dev.lock);
	for_each_possible_cpu(cpu) {
		const struct amupmu_cpu_info *ci = &amupmu_dev.cpus[cpu];

		if (ci->flags & AMUPMU_CPU_SPE)
			interval = max(interval, amupmu_spe_min_interval(ci->pmsidr));
	}
	mutex_unlock(&amupmu_dev.lock);
	mutex_lock(&amupmu_spe_lock);
	amupmu_spe_defaults = (struct amupmu_spe_filter) { .pmsirr = interval };
	mutex_unlock(&amupmu_spe_lock);
}
