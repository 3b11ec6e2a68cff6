// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: per-CPU hardware discovery.
 *
 * Each CPU's ID and capability registers are read on that CPU, from a CPU
 * hotplug callback, when it first comes online after the module is loaded
 * (for the CPUs online at load time: during load). A CPU that is offline at
 * load is discovered when it comes online. What was read stays valid while
 * the CPU is offline; only its online flag changes.
 *
 * The same hotplug callbacks run the units' parts (struct amupmu_unit_ops):
 * their ID registers at discovery, their per-CPU start and stop, and the
 * interfaces' announcements, in the order of the table amupmu_main.c
 * gives. Discovery knows no unit by name.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/slab.h>
#include <asm/sysreg.h>

#include "amupmu.h"
#include "amupmu_compat.h"

/* the units, in the order amupmu_discovery_start() was given them */
static const struct amupmu_unit_ops *const *amupmu_units;
static unsigned int amupmu_nr_units;

/* PMUVer 0 is "not implemented", 0xF an IMPLEMENTATION DEFINED non-PMUv3 PMU. */
static bool amupmu_pmuver_is_v3(unsigned int pmuver)
{
	return pmuver != ID_AA64DFR0_EL1_PMUVer_NI &&
	       pmuver != ID_AA64DFR0_EL1_PMUVer_IMP_DEF;
}

/* Read this CPU's registers; runs on the CPU being discovered. */
static void amupmu_read_this_cpu(struct amupmu_cpu_info *ci)
{
	const struct amupmu_backend *be = amupmu_dev.backend;
	u64 (*rd)(enum amupmu_reg reg) = be->read;
	unsigned int i;

	preempt_disable();
	ci->midr = rd(AMUPMU_REG_MIDR);
	ci->revidr = rd(AMUPMU_REG_REVIDR);
	ci->id_aa64dfr0 = rd(AMUPMU_REG_ID_AA64DFR0);
	ci->id_aa64pfr0 = rd(AMUPMU_REG_ID_AA64PFR0);

	ci->pmu_version = FIELD_GET(ID_AA64DFR0_EL1_PMUVer, ci->id_aa64dfr0);
	ci->spe_version = FIELD_GET(ID_AA64DFR0_EL1_PMSVer, ci->id_aa64dfr0);
	ci->amu_version = FIELD_GET(ID_AA64PFR0_EL1_AMU, ci->id_aa64pfr0);

	if (amupmu_pmuver_is_v3(ci->pmu_version)) {
		ci->flags |= AMUPMU_CPU_PMU;
		ci->pmcr = rd(AMUPMU_REG_PMCR);
		ci->pmu_num_counters = FIELD_GET(ARMV8_PMU_PMCR_N, ci->pmcr);
		ci->pmceid0 = rd(AMUPMU_REG_PMCEID0);
		ci->pmceid1 = rd(AMUPMU_REG_PMCEID1);
		/* PMCEID<n>[63:32] (events 0x4000-) exist from PMUv3p1 */
		if (ci->pmu_version >= ID_AA64DFR0_EL1_PMUVer_V3P1) {
			ci->flags |= AMUPMU_CPU_PMCEID_EXT;
		} else {
			ci->pmceid0 = lower_32_bits(ci->pmceid0);
			ci->pmceid1 = lower_32_bits(ci->pmceid1);
		}
		if (ci->pmu_version >= ID_AA64DFR0_EL1_PMUVer_V3P4) {
			ci->flags |= AMUPMU_CPU_PMMIR;
			ci->pmmir = rd(AMUPMU_REG_PMMIR);
		}
	}
	/* AMU, SPE: each only where it may be touched (the units decide) */
	for (i = 0; i < amupmu_nr_units; i++)
		if (amupmu_units[i]->discover)
			amupmu_units[i]->discover(ci);
	if (ci->flags & (AMUPMU_CPU_AMU | AMUPMU_CPU_SPE))
		ci->flags |= be->mock_flags;
	preempt_enable();
}

static int amupmu_cpu_online(unsigned int cpu)
{
	struct amupmu_cpu_info *c = &amupmu_dev.cpus[cpu];
	struct amupmu_cpu_info ci = {
		.cpu = cpu,
		.flags = AMUPMU_CPU_POSSIBLE | AMUPMU_CPU_ONLINE | AMUPMU_CPU_DISCOVERED,
	};
	unsigned int i;
	bool first;

	/* The ID registers do not change while the CPU is off: read them once. */
	mutex_lock(&amupmu_dev.lock);
	first = !(c->flags & AMUPMU_CPU_DISCOVERED);
	if (first) {
		amupmu_read_this_cpu(&ci);
		*c = ci;
	} else {
		c->flags |= AMUPMU_CPU_ONLINE;
		ci = *c;
	}
	mutex_unlock(&amupmu_dev.lock);

	for (i = 0; i < amupmu_nr_units; i++)
		if (amupmu_units[i]->cpu_online)
			amupmu_units[i]->cpu_online(cpu, &ci);
	for (i = 0; i < amupmu_nr_units; i++)
		if (amupmu_units[i]->cpu_changed)
			amupmu_units[i]->cpu_changed(cpu, true, first);
	if (first)
		pr_debug("cpu%u: MIDR 0x%08llx PMUVer %u N %u AMU %u PMSVer %u\n",
			 cpu, ci.midr, ci.pmu_version, ci.pmu_num_counters,
			 ci.amu_version, ci.spe_version);
	return 0;
}

static int amupmu_cpu_offline(unsigned int cpu)
{
	unsigned int i;

	for (i = amupmu_nr_units; i--; )
		if (amupmu_units[i]->cpu_offline)
			amupmu_units[i]->cpu_offline(cpu);
	mutex_lock(&amupmu_dev.lock);
	amupmu_dev.cpus[cpu].flags &= ~AMUPMU_CPU_ONLINE;
	mutex_unlock(&amupmu_dev.lock);
	for (i = 0; i < amupmu_nr_units; i++)
		if (amupmu_units[i]->cpu_changed)
			amupmu_units[i]->cpu_changed(cpu, false, false);
	return 0;
}

/**
 * amupmu_cpu_snapshot() - copy one CPU's entry
 * @cpu: CPU number below nr_cpu_ids
 * @out: filled with the entry as the ioctl reports it
 */
void amupmu_cpu_snapshot(unsigned int cpu, struct amupmu_cpu_info *out)
{
	mutex_lock(&amupmu_dev.lock);
	*out = amupmu_dev.cpus[cpu];
	mutex_unlock(&amupmu_dev.lock);
}

/* Allocate the per-CPU table; before anything can read it. */
int amupmu_cpus_alloc(void)
{
	unsigned int cpu;

	amupmu_dev.cpus = kcalloc(nr_cpu_ids, sizeof(*amupmu_dev.cpus), GFP_KERNEL);
	if (!amupmu_dev.cpus)
		return -ENOMEM;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		amupmu_dev.cpus[cpu].cpu = cpu;
		if (cpu_possible(cpu))
			amupmu_dev.cpus[cpu].flags = AMUPMU_CPU_POSSIBLE;
	}
	return 0;
}

void amupmu_cpus_free(void)
{
	kfree(amupmu_dev.cpus);
	amupmu_dev.cpus = NULL;
}

/**
 * amupmu_discovery_start() - discover the online CPUs now and every CPU
 *	that comes online later
 * @units: the units whose struct amupmu_unit_ops discovery runs, in order
 * @nr: how many
 *
 * Return: 0, or the errno of the hotplug state's setup.
 */
int amupmu_discovery_start(const struct amupmu_unit_ops *const *units, unsigned int nr)
{
	int ret;

	amupmu_units = units;
	amupmu_nr_units = nr;

	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "perf/amupmu:online",
				amupmu_cpu_online, amupmu_cpu_offline);
	if (ret < 0)
		return ret;
	amupmu_dev.hp_state = ret;
	return 0;
}

/* No teardown calls: they would only mark every CPU offline on the way out. */
void amupmu_discovery_stop(void)
{
	cpuhp_remove_state_nocalls(amupmu_dev.hp_state);
}
