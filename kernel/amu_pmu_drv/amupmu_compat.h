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

/*
 * PMEVN_SWITCH(): PMEVCNTR<n>_EL0/PMEVTYPER<n>_EL0 by number. A header
 * macro from 6.4 (linux/perf/arm_pmuv3.h); before, private to
 * arch/arm64/kernel/perf_event.c, so here is the same definition.
 */
#ifndef PMEVN_SWITCH
#define PMEVN_CASE(n, case_macro) \
	case n: case_macro(n); break

#define PMEVN_SWITCH(x, case_macro)				\
	do {							\
		switch (x) {					\
		PMEVN_CASE(0,  case_macro);			\
		PMEVN_CASE(1,  case_macro);			\
		PMEVN_CASE(2,  case_macro);			\
		PMEVN_CASE(3,  case_macro);			\
		PMEVN_CASE(4,  case_macro);			\
		PMEVN_CASE(5,  case_macro);			\
		PMEVN_CASE(6,  case_macro);			\
		PMEVN_CASE(7,  case_macro);			\
		PMEVN_CASE(8,  case_macro);			\
		PMEVN_CASE(9,  case_macro);			\
		PMEVN_CASE(10, case_macro);			\
		PMEVN_CASE(11, case_macro);			\
		PMEVN_CASE(12, case_macro);			\
		PMEVN_CASE(13, case_macro);			\
		PMEVN_CASE(14, case_macro);			\
		PMEVN_CASE(15, case_macro);			\
		PMEVN_CASE(16, case_macro);			\
		PMEVN_CASE(17, case_macro);			\
		PMEVN_CASE(18, case_macro);			\
		PMEVN_CASE(19, case_macro);			\
		PMEVN_CASE(20, case_macro);			\
		PMEVN_CASE(21, case_macro);			\
		PMEVN_CASE(22, case_macro);			\
		PMEVN_CASE(23, case_macro);			\
		PMEVN_CASE(24, case_macro);			\
		PMEVN_CASE(25, case_macro);			\
		PMEVN_CASE(26, case_macro);			\
		PMEVN_CASE(27, case_macro);			\
		PMEVN_CASE(28, case_macro);			\
		PMEVN_CASE(29, case_macro);			\
		PMEVN_CASE(30, case_macro);			\
		default: WARN(1, "Invalid PMEV* index\n");	\
		}						\
	} while (0)
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
