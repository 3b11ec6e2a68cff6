// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: the SPE device and who owns it.
 *
 * The mock build's model is its own SPE device: every CPU with (mock) SPE
 * is served and amupmu owns it. The claim of a hardware SPE device through
 * driver_override is not implemented yet: on hardware, SPE sessions are
 * refused with ENODEV and the owner is reported as "unclaimed".
 */
#include <linux/types.h>

#include "amupmu.h"
#include "amupmu_spe.h"

int amupmu_spe_dev_init(void)
{
	return 0;
}

void amupmu_spe_dev_exit(void)
{
}

bool amupmu_spe_dev_serves(unsigned int cpu)
{
	return IS_ENABLED(CONFIG_AMUPMU_MOCK);
}

u32 amupmu_spe_owner(void)
{
	if (!(amupmu_features() & AMUPMU_FEAT_SPE))
		return AMUPMU_SPE_OWNER_NONE;
	if (IS_ENABLED(CONFIG_AMUPMU_MOCK))
		return AMUPMU_SPE_OWNER_AMUPMU;
	return AMUPMU_SPE_OWNER_UNCLAIMED;
}
