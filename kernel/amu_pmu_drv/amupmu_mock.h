/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amupmu: what the files of the mock model (test builds only,
 * CONFIG_AMUPMU_MOCK=y) share. The driver reaches the model only through
 * the register seams: amupmu_mock_backend (amupmu.h) and
 * amupmu_spe_mock_ops (amupmu_spe.h).
 */
#ifndef AMUPMU_MOCK_H
#define AMUPMU_MOCK_H

#include <linux/compiler.h>
#include <linux/types.h>

#include "amupmu.h"

struct dentry;

/* amupmu_mock.c: a "<cpu> [REST]" write to a test file */
int amupmu_mock_cpu_cmd(const char __user *ubuf, size_t len, char *buf, size_t size,
			char **rest);

/* amupmu_mock_frames.c: the frames' identification registers */
u32 amupmu_mock_frame_read(unsigned int cpu, enum amupmu_frame_unit unit,
			   void __iomem *base, u32 offset);

/* amupmu_mock_spe.c: the SPE model */
/* the identification of a CPU, for the mock backend's ID register reads */
u8 amupmu_mock_spe_pmsver(unsigned int cpu);
u64 amupmu_mock_spe_pmsidr(unsigned int cpu);
u64 amupmu_mock_spe_pmbidr(unsigned int cpu);
/* debugfs spe_model (identification), spe_stream (knobs), spe_stats, spe_fault */
void amupmu_mock_spe_debugfs_init(struct dentry *dir);
/* module unload: stop every CPU's tick for good (process context) */
void amupmu_mock_spe_exit(void);

#endif /* AMUPMU_MOCK_H */
