// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: mock register model for AMU and SPE (test builds only,
 * CONFIG_AMUPMU_MOCK=y). QEMU's TCG CPUs hide both units, so the paths
 * that depend on them are exercised against this model; the PMU and
 * identification registers stay the real ones.
 *
 * The model is a CPU with FEAT_AMUv1 (4 architected group 0 counters,
 * 2 auxiliary group 1 counters, 64-bit) and FEAT_SPE (v1, Neoverse-N1-like
 * PMSIDR_EL1: all filters, 256-op minimum interval, 64-byte records).
 * Field layouts are those of the Arm ARM (DDI 0487).
 */
#include <linux/bitfield.h>
#include <linux/bits.h>
#include <asm/sysreg.h>

#include "amupmu.h"

/* AMCFGR_EL0 and AMCGCR_EL0 fields (Arm ARM D23.4) */
#define AMUPMU_AMCFGR_N		GENMASK(7, 0)	/* counters - 1 */
#define AMUPMU_AMCFGR_SIZE	GENMASK(13, 8)	/* counter width - 1 */
#define AMUPMU_AMCFGR_HDBG	BIT(24)
#define AMUPMU_AMCFGR_NCG	GENMASK(31, 28)	/* counter groups - 1 */
#define AMUPMU_AMCGCR_CG0NC	GENMASK(7, 0)
#define AMUPMU_AMCGCR_CG1NC	GENMASK(15, 8)

/* PMSIDR_EL1 fields (Arm ARM D24.7) */
#define AMUPMU_PMSIDR_FE	BIT(0)
#define AMUPMU_PMSIDR_FT	BIT(1)
#define AMUPMU_PMSIDR_FL	BIT(2)
#define AMUPMU_PMSIDR_ARCHINST	BIT(3)
#define AMUPMU_PMSIDR_LDS	BIT(4)
#define AMUPMU_PMSIDR_INTERVAL	GENMASK(11, 8)
#define AMUPMU_PMSIDR_MAXSIZE	GENMASK(15, 12)
#define AMUPMU_PMSIDR_COUNTSIZE	GENMASK(19, 16)

#define AMUPMU_MOCK_CG0NC	4
#define AMUPMU_MOCK_CG1NC	2

static u64 amupmu_mock_read(enum amupmu_reg reg)
{
	switch (reg) {
	case AMUPMU_REG_ID_AA64DFR0:
		return (amupmu_hw_backend.read(reg) & ~ID_AA64DFR0_EL1_PMSVer) |
		       FIELD_PREP(ID_AA64DFR0_EL1_PMSVer, ID_AA64DFR0_EL1_PMSVer_IMP);
	case AMUPMU_REG_ID_AA64PFR0:
		return (amupmu_hw_backend.read(reg) & ~ID_AA64PFR0_EL1_AMU) |
		       FIELD_PREP(ID_AA64PFR0_EL1_AMU, ID_AA64PFR0_EL1_AMU_IMP);
	case AMUPMU_REG_AMCFGR:
		return FIELD_PREP(AMUPMU_AMCFGR_N, AMUPMU_MOCK_CG0NC + AMUPMU_MOCK_CG1NC - 1) |
		       FIELD_PREP(AMUPMU_AMCFGR_SIZE, 63) | AMUPMU_AMCFGR_HDBG |
		       FIELD_PREP(AMUPMU_AMCFGR_NCG, 1);
	case AMUPMU_REG_AMCGCR:
		return FIELD_PREP(AMUPMU_AMCGCR_CG0NC, AMUPMU_MOCK_CG0NC) |
		       FIELD_PREP(AMUPMU_AMCGCR_CG1NC, AMUPMU_MOCK_CG1NC);
	case AMUPMU_REG_PMBIDR:
		return 0;	/* P = 0: EL1 may program the buffer */
	case AMUPMU_REG_PMSIDR:
		return AMUPMU_PMSIDR_FE | AMUPMU_PMSIDR_FT | AMUPMU_PMSIDR_FL |
		       AMUPMU_PMSIDR_ARCHINST | AMUPMU_PMSIDR_LDS |
		       FIELD_PREP(AMUPMU_PMSIDR_INTERVAL, 0) |	/* 256 */
		       FIELD_PREP(AMUPMU_PMSIDR_MAXSIZE, 6) |	/* 64 bytes */
		       FIELD_PREP(AMUPMU_PMSIDR_COUNTSIZE, 2);	/* 12-bit saturating */
	default:
		return amupmu_hw_backend.read(reg);
	}
}

const struct amupmu_backend amupmu_mock_backend = {
	.name = "mock",
	.mock_flags = AMUPMU_CPU_MOCK,
	.read = amupmu_mock_read,
	.frame_read = amupmu_mock_frame_read,
};
