/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amupmu: every difference between the kernels amupmu builds for (Debian's
 * 6.1 and 6.12 and the versions in between) lives here.
 */
#ifndef AMUPMU_COMPAT_H
#define AMUPMU_COMPAT_H

#include <linux/version.h>
#include <linux/bits.h>
#include <linux/platform_device.h>
#include <asm/sysreg.h>

/*
 * PMUv3 definitions: asm/perf_event.h until 6.3, linux/perf/arm_pmuv3.h
 * from 6.4; PMCR_EL0.N as one mask only from 6.7.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#include <linux/perf/arm_pmuv3.h>
#else
#include <asm/perf_event.h>
#endif
#ifndef ARMV8_PMU_PMCR_N
#define ARMV8_PMU_PMCR_N	GENMASK(15, 11)
#endif

/* PMBIDR_EL1.P (EL1 may not program SPE): generated name from 6.3 */
#ifndef PMBIDR_EL1_P
#define PMBIDR_EL1_P		BIT(SYS_PMBIDR_EL1_P_SHIFT)
#endif

/*
 * platform_driver.remove returns void from 6.11 (int before):
 * AMUPMU_DEFINE_PLATFORM_REMOVE(name, fn) defines name() with the signature
 * this kernel wants, calling void fn(struct platform_device *).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define AMUPMU_DEFINE_PLATFORM_REMOVE(name, fn)				\
static void name(struct platform_device *pdev)				\
{									\
	fn(pdev);							\
}
#else
#define AMUPMU_DEFINE_PLATFORM_REMOVE(name, fn)				\
static int name(struct platform_device *pdev)				\
{									\
	fn(pdev);							\
	return 0;							\
}
#endif

/* vm_flags may only be changed through helpers from 6.3 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define amupmu_vm_flags_clear(vma, flags)	vm_flags_clear(vma, flags)
#else
#define amupmu_vm_flags_clear(vma, flags)	((vma)->vm_flags &= ~(flags))
#endif

/*
 * Several stores to user memory in one access window: arm64 has its own
 * user_access_begin()/unsafe_put_user() (sttr between the two) from 6.12.
 * Before, linux/uaccess.h supplies a fallback that makes each
 * unsafe_put_user() a complete __put_user() (and defines unsafe_op_wrap for
 * it); there one copy_to_user() of the whole buffer costs less.
 */
#include <linux/uaccess.h>
#ifdef unsafe_op_wrap
#define AMUPMU_HAVE_UACCESS_WINDOW	0
#else
#define AMUPMU_HAVE_UACCESS_WINDOW	1
#endif

#endif /* AMUPMU_COMPAT_H */
