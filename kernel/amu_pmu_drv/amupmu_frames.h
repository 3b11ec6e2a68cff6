/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amupmu: the identification registers of a CPU's memory-mapped AMU and PMU
 * frames, as the Arm ARM (DDI 0487) lays them out ("External AMU register
 * descriptions", "External PMU register descriptions", and the CoreSight
 * management registers both frames implement). Offsets from the frame base.
 *
 * Seed 001 lists AMIIDR's fields in the wrong order and calls 0xFE0-0xFEC
 * "PMPIDR0-4": PIDR0-3 are at 0xFE0-0xFEC and PIDR4 at 0xFD0.
 *
 * And what the module calls in the unit that reads them (amupmu_frames.c,
 * the "amupmu,cpu-frames" devicetree nodes).
 */
#ifndef AMUPMU_FRAMES_H
#define AMUPMU_FRAMES_H

#include <linux/bits.h>

struct amupmu_unit_ops;

/* amupmu_frames.c */
extern const struct amupmu_unit_ops amupmu_frames_unit;
int amupmu_frames_init(void);
void amupmu_frames_exit(void);

#define AMUPMU_FRAME_SIZE	0x1000	/* one 4 KiB page per frame */

#define AMUPMU_FRAME_IIDR	0xE08	/* AMIIDR / PMIIDR */
#define AMUPMU_FRAME_DEVARCH	0xFBC	/* AMDEVARCH / PMDEVARCH */
#define AMUPMU_FRAME_DEVID	0xFC8	/* PMDEVID (the AMU frame has none) */
#define AMUPMU_FRAME_DEVTYPE	0xFCC	/* AMDEVTYPE / PMDEVTYPE */
#define AMUPMU_FRAME_PIDR4	0xFD0	/* AMPIDR4 / PMPIDR4 */
#define AMUPMU_FRAME_PIDR0	0xFE0	/* PIDR<n>: PIDR0 + 4 * n, n < 4 */
#define AMUPMU_FRAME_CIDR0	0xFF0	/* CIDR<n>: CIDR0 + 4 * n, n < 4 */

/* AMIIDR / PMIIDR */
#define AMUPMU_IIDR_PRODUCTID	GENMASK(31, 20)
#define AMUPMU_IIDR_VARIANT	GENMASK(19, 16)
#define AMUPMU_IIDR_REVISION	GENMASK(15, 12)
#define AMUPMU_IIDR_IMPLEMENTER	GENMASK(11, 0)	/* JEP106: bank - 1 [11:8], id [6:0] */

/* DEVARCH: ARCHITECT is JEP106 continuation [31:28] and identity [27:21] */
#define AMUPMU_DEVARCH_ARCHITECT	GENMASK(31, 21)
#define AMUPMU_DEVARCH_PRESENT		BIT(20)
#define AMUPMU_DEVARCH_REVISION		GENMASK(19, 16)
#define AMUPMU_DEVARCH_ARCHVER		GENMASK(15, 12)
#define AMUPMU_DEVARCH_ARCHPART		GENMASK(11, 0)
#define AMUPMU_DEVARCH_ARCHID		GENMASK(15, 0)
#define AMUPMU_ARCHITECT_ARM		0x23B	/* JEP106 bank 5 (code 4), 0x3B */
#define AMUPMU_ARCHID_AMU_EXT32		0x0A66	/* AMUv1, FEAT_AMU_EXT32 */
#define AMUPMU_ARCHID_AMU_EXT64		0x0A67	/* AMUv1, FEAT_AMU_EXT64 */
#define AMUPMU_ARCHPART_PMU		0xA16	/* PMUv3 */
#define AMUPMU_ARCHID_PMUV3		0x2A16	/* ARCHVER 2, ARCHPART 0xA16 */

/* DEVTYPE: SUB 1 (component within a PE), MAJOR 6 (performance monitor) */
#define AMUPMU_DEVTYPE_SUB		GENMASK(7, 4)
#define AMUPMU_DEVTYPE_MAJOR		GENMASK(3, 0)

/* PIDR0-4 */
#define AMUPMU_PIDR0_PART_0		GENMASK(7, 0)
#define AMUPMU_PIDR1_DES_0		GENMASK(7, 4)	/* JEP106 identity [3:0] */
#define AMUPMU_PIDR1_PART_1		GENMASK(3, 0)
#define AMUPMU_PIDR2_REVISION		GENMASK(7, 4)
#define AMUPMU_PIDR2_JEDEC		BIT(3)
#define AMUPMU_PIDR2_DES_1		GENMASK(2, 0)	/* JEP106 identity [6:4] */
#define AMUPMU_PIDR3_REVAND		GENMASK(7, 4)
#define AMUPMU_PIDR3_CMOD		GENMASK(3, 0)
#define AMUPMU_PIDR4_SIZE		GENMASK(7, 4)
#define AMUPMU_PIDR4_DES_2		GENMASK(3, 0)	/* JEP106 continuation code */

/* CIDR0-3: the CoreSight preamble, CIDR1.CLASS [7:4] = 0x9 (CoreSight) */
#define AMUPMU_CIDR0			0x0D
#define AMUPMU_CIDR1			0x90
#define AMUPMU_CIDR2			0x05
#define AMUPMU_CIDR3			0xB1

#endif /* AMUPMU_FRAMES_H */
