// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: mock model of the CPUs' memory-mapped AMU and PMU ID frames (test
 * builds only, CONFIG_AMUPMU_MOCK=y). QEMU's virt board has no such frames:
 * the mock boards describe them in the devicetree ("amupmu,cpu-frames"
 * nodes at an unused address, tools/board/run.sh), the driver maps them as
 * on hardware, and this model answers the reads instead. It never touches
 * the mapped address: QEMU has nothing there, and an access would abort.
 *
 * Every CPU that has a node gets frames from the model:
 *  - even CPUs: a consistent Cortex-X2 r2p0 (part 0xD48; designer Arm,
 *    JEP106 continuation code 4 and identity 0x3B, so IIDR Implementer
 *    0x43B): AMIIDR and PMIIDR 0xD482043B, and PIDR0-4 that say the same;
 *  - odd CPUs: the cross-check variant. Their AMIIDR says r2p1
 *    (0xD482143B) while their AMPIDR3.REVAND says p0, so the driver's
 *    AMIIDR/AMPIDR cross-check reports the disagreement. Their PMU frame
 *    is consistent, as on the even CPUs.
 * Both frames: CoreSight class 0x9 CIDR0-3 (0x0D 0x90 0x05 0xB1), DEVTYPE
 * 0x16 (a performance monitor within a PE); AMDEVARCH ARCHID 0x0A66 (AMUv1,
 * FEAT_AMU_EXT32), PMDEVARCH ARCHID 0x2A16 (PMUv3), PMDEVID PCSample 1
 * (FEAT_PCSRv8p2 in the PMU frame). Every other offset reads as zero.
 * Field layouts are those of the Arm ARM (DDI 0487), amupmu_frames.h.
 */
#include <linux/bitfield.h>

#include "amupmu.h"
#include "amupmu_frames.h"
#include "amupmu_mock.h"

#define AMUPMU_MOCK_PART	0xD48	/* Cortex-X2 */
#define AMUPMU_MOCK_VARIANT	2
#define AMUPMU_MOCK_REVISION	0
#define AMUPMU_MOCK_JEP106_CONT	0x4	/* continuation code: bank 5 */
#define AMUPMU_MOCK_JEP106_ID	0x3B	/* Arm */

#define AMUPMU_MOCK_IIDR(rev)						\
	(FIELD_PREP(AMUPMU_IIDR_PRODUCTID, AMUPMU_MOCK_PART) |		\
	 FIELD_PREP(AMUPMU_IIDR_VARIANT, AMUPMU_MOCK_VARIANT) |		\
	 FIELD_PREP(AMUPMU_IIDR_REVISION, rev) |			\
	 FIELD_PREP(AMUPMU_IIDR_IMPLEMENTER,				\
		    AMUPMU_MOCK_JEP106_CONT << 8 | AMUPMU_MOCK_JEP106_ID))

#define AMUPMU_MOCK_DEVARCH(archid)					\
	(FIELD_PREP(AMUPMU_DEVARCH_ARCHITECT, AMUPMU_ARCHITECT_ARM) |	\
	 AMUPMU_DEVARCH_PRESENT | FIELD_PREP(AMUPMU_DEVARCH_ARCHID, archid))

#define AMUPMU_MOCK_PMDEVID_PCSAMPLE	GENMASK(3, 0)

static u32 amupmu_mock_pidr(unsigned int n)
{
	switch (n) {
	case 0:
		return FIELD_PREP(AMUPMU_PIDR0_PART_0, AMUPMU_MOCK_PART & 0xff);
	case 1:
		return FIELD_PREP(AMUPMU_PIDR1_DES_0, AMUPMU_MOCK_JEP106_ID & 0xf) |
		       FIELD_PREP(AMUPMU_PIDR1_PART_1, AMUPMU_MOCK_PART >> 8);
	case 2:
		return FIELD_PREP(AMUPMU_PIDR2_REVISION, AMUPMU_MOCK_VARIANT) |
		       AMUPMU_PIDR2_JEDEC |
		       FIELD_PREP(AMUPMU_PIDR2_DES_1, AMUPMU_MOCK_JEP106_ID >> 4);
	case 3:
		return FIELD_PREP(AMUPMU_PIDR3_REVAND, AMUPMU_MOCK_REVISION);
	default:	/* 4: SIZE 0, one 4 KiB page */
		return FIELD_PREP(AMUPMU_PIDR4_DES_2, AMUPMU_MOCK_JEP106_CONT);
	}
}

/**
 * amupmu_mock_frame_read() - the mock backend's frame_read
 * @cpu: the CPU whose frame is read (and the CPU this runs on)
 * @unit: its AMU or its PMU frame
 * @base: where the driver mapped it; not accessed
 * @offset: register offset in the frame
 *
 * Return: the model's value of the register.
 */
u32 amupmu_mock_frame_read(unsigned int cpu, enum amupmu_frame_unit unit,
			   void __iomem *base, u32 offset)
{
	static const u8 cidr[] = {
		AMUPMU_CIDR0, AMUPMU_CIDR1, AMUPMU_CIDR2, AMUPMU_CIDR3,
	};
	bool amu = unit == AMUPMU_FRAME_AMU;

	switch (offset) {
	case AMUPMU_FRAME_IIDR:
		/* the variant: AMIIDR says p1, AMPIDR3.REVAND p0 */
		if (amu && (cpu & 1))
			return AMUPMU_MOCK_IIDR(AMUPMU_MOCK_REVISION + 1);
		return AMUPMU_MOCK_IIDR(AMUPMU_MOCK_REVISION);
	case AMUPMU_FRAME_DEVARCH:
		return AMUPMU_MOCK_DEVARCH(amu ? AMUPMU_ARCHID_AMU_EXT32 :
					   AMUPMU_ARCHID_PMUV3);
	case AMUPMU_FRAME_DEVID:
		return amu ? 0 : FIELD_PREP(AMUPMU_MOCK_PMDEVID_PCSAMPLE, 1);
	case AMUPMU_FRAME_DEVTYPE:
		return FIELD_PREP(AMUPMU_DEVTYPE_SUB, 1) | FIELD_PREP(AMUPMU_DEVTYPE_MAJOR, 6);
	case AMUPMU_FRAME_PIDR4:
		return amupmu_mock_pidr(4);
	case AMUPMU_FRAME_PIDR0 ... AMUPMU_FRAME_PIDR0 + 12:
		if (offset % 4)
			return 0;
		return amupmu_mock_pidr((offset - AMUPMU_FRAME_PIDR0) / 4);
	case AMUPMU_FRAME_CIDR0 ... AMUPMU_FRAME_CIDR0 + 12:
		if (offset % 4)
			return 0;
		return cidr[(offset - AMUPMU_FRAME_CIDR0) / 4];
	default:
		return 0;
	}
}
