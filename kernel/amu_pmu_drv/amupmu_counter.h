/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amupmu: PMU counter arithmetic and the PMEVTYPER encoding, as pure
 * functions of their arguments. The module uses them (amupmu_pmu.c,
 * amupmu_pmu_cmd.c), and the host tests
 * (lib/libamupmu/tests/host/test_counter.cpp) check the same code against
 * golden tables and simulate wraps with late interrupts.
 *
 * Whoever includes it provides u32, u64 and bool (the kernel's
 * linux/types.h, or the host test's typedefs) and the UAPI header's
 * AMUPMU_EV_* flags.
 */
#ifndef AMUPMU_COUNTER_H
#define AMUPMU_COUNTER_H

/*
 * PMEVTYPER<n>_EL0 / PMCCFILTR_EL0 filter bits (Arm ARM DDI 0487,
 * D24.5): P[31] excludes EL1, U[30] excludes EL0, NSH[27] includes EL2;
 * evtCount is [15:0]. The module checks them against the kernel's
 * ARMV8_PMU_EXCLUDE_EL1/EL0 and ARMV8_PMU_INCLUDE_EL2 at build time.
 */
#define AMUPMU_PMEVTYPER_P	0x80000000U
#define AMUPMU_PMEVTYPER_U	0x40000000U
#define AMUPMU_PMEVTYPER_NSH	0x08000000U

/* The 32-bit counter width mask; re-armed 2^31 below overflow when counting */
#define AMUPMU_COUNTER_MASK32	0xffffffffULL
#define AMUPMU_COUNTER_HALF32	0x80000000ULL

/*
 * The AMUPMU_EV_EXCL_* filters as PMEVTYPER bits, with the meaning perf's
 * exclude_* have (the kernel's armv8pmu_set_event_filter()):
 * @flags: AMUPMU_EV_EXCL_* (AMUPMU_EV_RAW and unknown bits are the caller's)
 * @event: the event number
 * @vhe: the kernel runs at EL2 (is_kernel_in_hyp_mode())
 * @has_el2: the CPU implements EL2 (ID_AA64PFR0_EL1.EL2); NSH is RES0
 *	without it
 */
static inline u32 amupmu_evtyper(u32 flags, u32 event, bool vhe, bool has_el2)
{
	u32 type = event;

	if (vhe) {
		/* the kernel is the hypervisor: EL2 is the host kernel, EL1 guests */
		if (!(flags & (AMUPMU_EV_EXCL_KERNEL | AMUPMU_EV_EXCL_HOST)))
			type |= AMUPMU_PMEVTYPER_NSH;
		if (flags & AMUPMU_EV_EXCL_GUEST)
			type |= AMUPMU_PMEVTYPER_P;
		if (flags & AMUPMU_EV_EXCL_HOST)
			type |= AMUPMU_PMEVTYPER_U;
	} else if (!(flags & (AMUPMU_EV_EXCL_HV | AMUPMU_EV_EXCL_HOST)) && has_el2) {
		type |= AMUPMU_PMEVTYPER_NSH;
	}
	if (flags & AMUPMU_EV_EXCL_KERNEL)
		type |= AMUPMU_PMEVTYPER_P;
	if (flags & AMUPMU_EV_EXCL_USER)
		type |= AMUPMU_PMEVTYPER_U;
	return type;
}

/* Does a PMEVTYPER value count at some exception level? */
static inline bool amupmu_evtyper_counts(u32 type, bool has_el2)
{
	return !(type & AMUPMU_PMEVTYPER_U) || !(type & AMUPMU_PMEVTYPER_P) ||
	       ((type & AMUPMU_PMEVTYPER_NSH) && has_el2);
}

/* Does it count the kernel (EL2 under VHE, else EL1)? */
static inline bool amupmu_evtyper_counts_kernel(u32 type, bool vhe)
{
	return vhe ? !!(type & AMUPMU_PMEVTYPER_NSH) : !(type & AMUPMU_PMEVTYPER_P);
}

/**
 * amupmu_counter_span() - events from one re-arm of a counter to its next
 *	overflow
 * @period: its sample period, 0 when it only counts
 * @mask: its width mask
 *
 * A sampling counter overflows every @period events. A 32-bit counter that
 * only counts is re-armed every 2^31 events, so that its interrupt folds it
 * 2^31 events before a second wrap could make the delta ambiguous, however
 * late the interrupt is taken. A 64-bit one is never re-armed (0).
 */
static inline u64 amupmu_counter_span(u64 period, u64 mask)
{
	if (period)
		return period;
	return mask == AMUPMU_COUNTER_MASK32 ? AMUPMU_COUNTER_HALF32 : 0;
}

/**
 * amupmu_counter_delta() - events between two hardware values
 * @now: the value now
 * @prev: the value at the last fold
 * @mask: the counter's width mask
 *
 * Exact while fewer than 2^width events pass between two folds.
 */
static inline u64 amupmu_counter_delta(u64 now, u64 prev, u64 mask)
{
	return (now - prev) & mask;
}

/**
 * amupmu_counter_next() - value to load after an overflow
 * @now: the hardware value, masked: the events counted since the overflow
 * @span: amupmu_counter_span()
 * @mask: the counter's width mask
 *
 * The counter then overflows one span after the last overflow, the events
 * since kept; when they already exceed a span, one span from now.
 */
static inline u64 amupmu_counter_next(u64 now, u64 span, u64 mask)
{
	return (now < span ? now - span : -span) & mask;
}

#endif /* AMUPMU_COUNTER_H */
