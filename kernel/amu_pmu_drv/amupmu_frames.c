// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: the memory-mapped AMU and PMU ID frames of the devicetree's
 * "amupmu,cpu-frames" nodes (dts/bindings/perf/amupmu,cpu-frames.yaml).
 * IN PROGRESS (helper): filled in before this lands.
 */
#include "amupmu.h"

int amupmu_frames_init(void)
{
	return 0;
}

void amupmu_frames_exit(void)
{
}

void amupmu_frames_cpu_online(unsigned int cpu)
{
}
