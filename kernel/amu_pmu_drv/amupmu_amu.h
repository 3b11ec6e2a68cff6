/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amupmu: the Activity Monitors unit (amupmu_amu.c, read only): what the
 * module and the interfaces call in it.
 */
#ifndef AMUPMU_AMU_H
#define AMUPMU_AMU_H

#include "amupmu.h"

struct amupmu_amu_read;
struct amupmu_session;

extern const struct amupmu_unit_ops amupmu_amu_unit;
int amupmu_amu_init(void);
void amupmu_amu_exit(void);
unsigned int amupmu_amu_nr_counters(const struct amupmu_cpu_info *ci, unsigned int group);
int amupmu_amu_cmd_read(struct amupmu_session *s, struct amupmu_amu_read *rd);
int amupmu_amu_read_fast(struct amupmu_session *s, struct amupmu_amu_read __user *u);

#endif /* AMUPMU_AMU_H */
