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

/*
 * SPE register fields: generated names (PMSFCR_EL1_FE, ...) from 6.3, only
 * SYS_<reg>_<field>_SHIFT before; the same positions (Arm ARM D24). The
 * FEAT_SPE_EFT, FEAT_SPE_FDS and FEAT_SPEv1p4 fields are in neither
 * kernel: from the Arm ARM (DDI 0487 K.a), PMSFCR_EL1.TYPE [20:16]
 * (B, LD, ST, FP, SIMD), TYPEm [52:48], FDS [4]; PMSIDR_EL1.FDS [7],
 * EFT [26]; PMSEVFR_EL1.E[19..23] (level 2 cache access and miss, cache
 * data modified, recently fetched, data snooped) from FEAT_SPEv1p4.
 */
#ifndef PMSFCR_EL1_FE
#define PMSCR_EL1_E0SPE		BIT(SYS_PMSCR_EL1_E0SPE_SHIFT)
#define PMSCR_EL1_E1SPE		BIT(SYS_PMSCR_EL1_E1SPE_SHIFT)
#define PMSCR_EL1_CX		BIT(SYS_PMSCR_EL1_CX_SHIFT)
#define PMSCR_EL1_PA		BIT(SYS_PMSCR_EL1_PA_SHIFT)
#define PMSCR_EL1_TS		BIT(SYS_PMSCR_EL1_TS_SHIFT)
#define PMSCR_EL1_PCT		GENMASK(7, SYS_PMSCR_EL1_PCT_SHIFT)
#define PMSFCR_EL1_FE		BIT(SYS_PMSFCR_EL1_FE_SHIFT)
#define PMSFCR_EL1_FT		BIT(SYS_PMSFCR_EL1_FT_SHIFT)
#define PMSFCR_EL1_FL		BIT(SYS_PMSFCR_EL1_FL_SHIFT)
#define PMSFCR_EL1_FnE		BIT(3)
#define PMSFCR_EL1_B		BIT(SYS_PMSFCR_EL1_B_SHIFT)
#define PMSFCR_EL1_LD		BIT(SYS_PMSFCR_EL1_LD_SHIFT)
#define PMSFCR_EL1_ST		BIT(SYS_PMSFCR_EL1_ST_SHIFT)
#define PMSIDR_EL1_FE		BIT(SYS_PMSIDR_EL1_FE_SHIFT)
#define PMSIDR_EL1_FT		BIT(SYS_PMSIDR_EL1_FT_SHIFT)
#define PMSIDR_EL1_FL		BIT(SYS_PMSIDR_EL1_FL_SHIFT)
#define PMSIDR_EL1_ARCHINST	BIT(SYS_PMSIDR_EL1_ARCHINST_SHIFT)
#define PMSIDR_EL1_LDS		BIT(SYS_PMSIDR_EL1_LDS_SHIFT)
#define PMSIDR_EL1_ERND		BIT(SYS_PMSIDR_EL1_ERND_SHIFT)
#define PMSIDR_EL1_FnE		BIT(6)
#define PMSIDR_EL1_INTERVAL	GENMASK(11, SYS_PMSIDR_EL1_INTERVAL_SHIFT)
#define PMSIDR_EL1_MAXSIZE	GENMASK(15, SYS_PMSIDR_EL1_MAXSIZE_SHIFT)
#define PMSIDR_EL1_COUNTSIZE	GENMASK(19, SYS_PMSIDR_EL1_COUNTSIZE_SHIFT)
#define PMSIDR_EL1_FORMAT	GENMASK(23, 20)
#define PMSIDR_EL1_PBT		BIT(24)
#define PMSIRR_EL1_RND		BIT(SYS_PMSIRR_EL1_RND_SHIFT)
#define PMSIRR_EL1_INTERVAL	GENMASK(31, SYS_PMSIRR_EL1_INTERVAL_SHIFT)
#define PMSLATFR_EL1_MINLAT	GENMASK(15, SYS_PMSLATFR_EL1_MINLAT_SHIFT)
#define PMBIDR_EL1_ALIGN	GENMASK(3, SYS_PMBIDR_EL1_ALIGN_SHIFT)
#define PMBIDR_EL1_P		BIT(SYS_PMBIDR_EL1_P_SHIFT)
#define PMBIDR_EL1_F		BIT(SYS_PMBIDR_EL1_F_SHIFT)
#define PMSEVFR_EL1_RES0_IMP	SYS_PMSEVFR_EL1_RES0_8_2
#define PMSEVFR_EL1_RES0_V1P1	SYS_PMSEVFR_EL1_RES0_8_3
#define PMSEVFR_EL1_RES0_V1P2	(PMSEVFR_EL1_RES0_V1P1 & ~BIT_ULL(6))
#endif
/*
 * PMBSR_EL1.MSS[5:0]: BSC of a buffer event, FSC of a fault. (The kernels'
 * PMBSR_EL1_BUF_BSC_MASK is the whole MSS in 6.12 and unshifted in 6.1.)
 */
#define AMUPMU_PMBSR_BSC	GENMASK(5, 0)
#ifndef ID_AA64DFR0_EL1_PMSVer_V1P4
#define ID_AA64DFR0_EL1_PMSVer_V1P4	UL(0b0101)
#endif
#ifndef PMSFCR_EL1_FP
#define PMSFCR_EL1_FP		BIT(19)
#define PMSFCR_EL1_SIMD		BIT(20)
#endif
#ifndef PMSFCR_EL1_TYPE
#define PMSFCR_EL1_TYPE		GENMASK(20, 16)
#endif
#ifndef PMSFCR_EL1_TYPEm
#define PMSFCR_EL1_TYPEm	GENMASK_ULL(52, 48)
#endif
#ifndef PMSFCR_EL1_FDS
#define PMSFCR_EL1_FDS		BIT(4)
#endif
#ifndef PMSIDR_EL1_FDS
#define PMSIDR_EL1_FDS		BIT(7)
#endif
#ifndef PMSIDR_EL1_EFT
#define PMSIDR_EL1_EFT		BIT(26)
#endif
#ifndef PMSEVFR_EL1_RES0_V1P4
#define PMSEVFR_EL1_RES0_V1P4	(PMSEVFR_EL1_RES0_V1P2 & ~GENMASK_ULL(23, 19))
#endif

/*
 * SPE profiling buffer and interval counter fields: generated names from
 * 6.3 (PMBSR_EL1_EC_BUF... in asm/sysreg.h), SYS_<reg>_<field>_SHIFT
 * before; the same positions (Arm ARM D24): PMSICR_EL1.COUNT [31:0],
 * PMBLIMITR_EL1 LIMIT [63:12], FM [2:1], E [0], PMBSR_EL1 EC [31:26],
 * DL [19], EA [18], S [17], COLL [16], MSS [15:0] (BSC or FSC [5:0]).
 */
#ifndef PMBSR_EL1_S
#define PMSICR_EL1_COUNT	GENMASK(31, 0)
#define PMBLIMITR_EL1_LIMIT	GENMASK_ULL(63, 12)
#define PMBLIMITR_EL1_FM	GENMASK(2, SYS_PMBLIMITR_EL1_FM_SHIFT)
#define PMBLIMITR_EL1_E		BIT(SYS_PMBLIMITR_EL1_E_SHIFT)
#define PMBSR_EL1_EC		GENMASK(31, SYS_PMBSR_EL1_EC_SHIFT)
#define PMBSR_EL1_DL		BIT(SYS_PMBSR_EL1_DL_SHIFT)
#define PMBSR_EL1_EA		BIT(SYS_PMBSR_EL1_EA_SHIFT)
#define PMBSR_EL1_S		BIT(SYS_PMBSR_EL1_S_SHIFT)
#define PMBSR_EL1_COLL		BIT(SYS_PMBSR_EL1_COLL_SHIFT)
#define PMBSR_EL1_MSS		GENMASK(15, 0)
#define PMBSR_EL1_EC_BUF	UL(0b000000)
#define PMBSR_EL1_EC_FAULT_S1	UL(0b100100)
#define PMBSR_EL1_EC_FAULT_S2	UL(0b100101)
#define PMBSR_EL1_BUF_BSC_FULL	0x1UL
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
#define amupmu_vm_flags_set(vma, flags)		vm_flags_set(vma, flags)
#else
#define amupmu_vm_flags_clear(vma, flags)	((vma)->vm_flags &= ~(flags))
#define amupmu_vm_flags_set(vma, flags)		((vma)->vm_flags |= (flags))
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
