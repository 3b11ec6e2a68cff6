// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: the hardware register backend. Discovery and the AMU unit read
 * their registers through amupmu_dev.backend (struct amupmu_backend in
 * amupmu.h): on a production build this one, the CPU's system registers
 * and the memory-mapped frames; on a test build the mock model
 * (amupmu_mock.c), which passes the registers it does not model on to
 * this one. The SPE unit has its own seam (struct amupmu_spe_ops).
 */
#include <linux/io.h>
#include <asm/cputype.h>
#include <asm/sysreg.h>

#include "amupmu.h"
#include "amupmu_compat.h"

/*
 * The AMU registers, read on this CPU (read_sysreg_s() needs the
 * register's encoding at build time, hence one case each).
 */
static u64 amupmu_hw_read_amu(enum amupmu_reg reg)
{
	/* the counters' entries are ranges: switch on the number */
	switch ((unsigned int)reg) {
	case AMUPMU_REG_AMCR:
		return read_sysreg_s(SYS_AMCR_EL0);
	case AMUPMU_REG_AMCNTENSET0:
		return read_sysreg_s(SYS_AMCNTENSET0_EL0);
	case AMUPMU_REG_AMCNTENSET1:
		return read_sysreg_s(SYS_AMCNTENSET1_EL0);
	case AMUPMU_REG_AMEVTYPER0 + 0:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(0));
	case AMUPMU_REG_AMEVTYPER0 + 1:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(1));
	case AMUPMU_REG_AMEVTYPER0 + 2:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(2));
	case AMUPMU_REG_AMEVTYPER0 + 3:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(3));
	case AMUPMU_REG_AMEVTYPER0 + 4:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(4));
	case AMUPMU_REG_AMEVTYPER0 + 5:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(5));
	case AMUPMU_REG_AMEVTYPER0 + 6:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(6));
	case AMUPMU_REG_AMEVTYPER0 + 7:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(7));
	case AMUPMU_REG_AMEVTYPER0 + 8:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(8));
	case AMUPMU_REG_AMEVTYPER0 + 9:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(9));
	case AMUPMU_REG_AMEVTYPER0 + 10:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(10));
	case AMUPMU_REG_AMEVTYPER0 + 11:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(11));
	case AMUPMU_REG_AMEVTYPER0 + 12:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(12));
	case AMUPMU_REG_AMEVTYPER0 + 13:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(13));
	case AMUPMU_REG_AMEVTYPER0 + 14:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(14));
	case AMUPMU_REG_AMEVTYPER0 + 15:
		return read_sysreg_s(SYS_AMEVTYPER0_EL0(15));
	case AMUPMU_REG_AMEVTYPER1 + 0:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(0));
	case AMUPMU_REG_AMEVTYPER1 + 1:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(1));
	case AMUPMU_REG_AMEVTYPER1 + 2:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(2));
	case AMUPMU_REG_AMEVTYPER1 + 3:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(3));
	case AMUPMU_REG_AMEVTYPER1 + 4:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(4));
	case AMUPMU_REG_AMEVTYPER1 + 5:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(5));
	case AMUPMU_REG_AMEVTYPER1 + 6:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(6));
	case AMUPMU_REG_AMEVTYPER1 + 7:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(7));
	case AMUPMU_REG_AMEVTYPER1 + 8:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(8));
	case AMUPMU_REG_AMEVTYPER1 + 9:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(9));
	case AMUPMU_REG_AMEVTYPER1 + 10:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(10));
	case AMUPMU_REG_AMEVTYPER1 + 11:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(11));
	case AMUPMU_REG_AMEVTYPER1 + 12:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(12));
	case AMUPMU_REG_AMEVTYPER1 + 13:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(13));
	case AMUPMU_REG_AMEVTYPER1 + 14:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(14));
	case AMUPMU_REG_AMEVTYPER1 + 15:
		return read_sysreg_s(SYS_AMEVTYPER1_EL0(15));
	case AMUPMU_REG_AMEVCNTR0 + 0:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(0));
	case AMUPMU_REG_AMEVCNTR0 + 1:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(1));
	case AMUPMU_REG_AMEVCNTR0 + 2:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(2));
	case AMUPMU_REG_AMEVCNTR0 + 3:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(3));
	case AMUPMU_REG_AMEVCNTR0 + 4:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(4));
	case AMUPMU_REG_AMEVCNTR0 + 5:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(5));
	case AMUPMU_REG_AMEVCNTR0 + 6:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(6));
	case AMUPMU_REG_AMEVCNTR0 + 7:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(7));
	case AMUPMU_REG_AMEVCNTR0 + 8:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(8));
	case AMUPMU_REG_AMEVCNTR0 + 9:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(9));
	case AMUPMU_REG_AMEVCNTR0 + 10:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(10));
	case AMUPMU_REG_AMEVCNTR0 + 11:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(11));
	case AMUPMU_REG_AMEVCNTR0 + 12:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(12));
	case AMUPMU_REG_AMEVCNTR0 + 13:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(13));
	case AMUPMU_REG_AMEVCNTR0 + 14:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(14));
	case AMUPMU_REG_AMEVCNTR0 + 15:
		return read_sysreg_s(SYS_AMEVCNTR0_EL0(15));
	case AMUPMU_REG_AMEVCNTR1 + 0:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(0));
	case AMUPMU_REG_AMEVCNTR1 + 1:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(1));
	case AMUPMU_REG_AMEVCNTR1 + 2:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(2));
	case AMUPMU_REG_AMEVCNTR1 + 3:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(3));
	case AMUPMU_REG_AMEVCNTR1 + 4:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(4));
	case AMUPMU_REG_AMEVCNTR1 + 5:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(5));
	case AMUPMU_REG_AMEVCNTR1 + 6:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(6));
	case AMUPMU_REG_AMEVCNTR1 + 7:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(7));
	case AMUPMU_REG_AMEVCNTR1 + 8:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(8));
	case AMUPMU_REG_AMEVCNTR1 + 9:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(9));
	case AMUPMU_REG_AMEVCNTR1 + 10:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(10));
	case AMUPMU_REG_AMEVCNTR1 + 11:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(11));
	case AMUPMU_REG_AMEVCNTR1 + 12:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(12));
	case AMUPMU_REG_AMEVCNTR1 + 13:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(13));
	case AMUPMU_REG_AMEVCNTR1 + 14:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(14));
	case AMUPMU_REG_AMEVCNTR1 + 15:
		return read_sysreg_s(SYS_AMEVCNTR1_EL0(15));
	default:
		return 0;
	}
}

/* Any register of enum amupmu_reg, read on this CPU. */
static u64 amupmu_hw_read(enum amupmu_reg reg)
{
	switch (reg) {
	case AMUPMU_REG_MIDR:
		return read_cpuid_id();
	case AMUPMU_REG_REVIDR:
		return read_sysreg_s(SYS_REVIDR_EL1);
	case AMUPMU_REG_ID_AA64DFR0:
		return read_sysreg_s(SYS_ID_AA64DFR0_EL1);
	case AMUPMU_REG_ID_AA64PFR0:
		return read_sysreg_s(SYS_ID_AA64PFR0_EL1);
	case AMUPMU_REG_PMCR:
		return read_sysreg_s(SYS_PMCR_EL0);
	case AMUPMU_REG_PMCEID0:
		return read_sysreg_s(SYS_PMCEID0_EL0);
	case AMUPMU_REG_PMCEID1:
		return read_sysreg_s(SYS_PMCEID1_EL0);
	case AMUPMU_REG_PMMIR:
		return read_sysreg_s(SYS_PMMIR_EL1);
	case AMUPMU_REG_AMCFGR:
		return read_sysreg_s(SYS_AMCFGR_EL0);
	case AMUPMU_REG_AMCGCR:
		return read_sysreg_s(SYS_AMCGCR_EL0);
	case AMUPMU_REG_PMBIDR:
		return read_sysreg_s(SYS_PMBIDR_EL1);
	case AMUPMU_REG_PMSIDR:
		return read_sysreg_s(SYS_PMSIDR_EL1);
	default:
		return amupmu_hw_read_amu(reg);
	}
}

static u32 amupmu_hw_frame_read(unsigned int cpu, enum amupmu_frame_unit unit,
				void __iomem *base, u32 offset)
{
	return readl(base + offset);
}

const struct amupmu_backend amupmu_hw_backend = {
	.name = "hardware",
	.read = amupmu_hw_read,
	.frame_read = amupmu_hw_frame_read,
};
