/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * amupmu: user-space ABI of /dev/amupmu, the arm64 AMU / PMUv3 / SPE driver.
 *
 * Conventions (iommufd style):
 *  - Every command is _IO(AMUPMU_TYPE, AMUPMU_CMD_BASE + n) and takes a
 *    pointer to a struct that starts with __u32 size (set by user space to
 *    sizeof the struct it was compiled with) and __u32 flags.
 *  - 64-bit values are __aligned_u64; reserved fields must be zero.
 *  - The struct may grow at its end. The kernel accepts a larger struct as
 *    long as the bytes it does not know are zero, and a smaller one as long
 *    as it covers the first version of the struct. Output is written back
 *    for min(size, kernel's size) bytes.
 *
 * Errno contract, for every command:
 *  ENOTTY      unknown command
 *  EFAULT      a user pointer could not be read or written
 *  EINVAL      size below the command's first version, unknown flags,
 *              non-zero reserved fields, values out of range
 *  E2BIG       size larger than the kernel knows with non-zero bytes in
 *              the part it does not know, or larger than AMUPMU_SIZE_MAX
 *  EOPNOTSUPP  the hardware lacks the unit or feature asked for
 *  EBUSY       in use now: too few free counters on a CPU of the set, or
 *              the session already holds a group (it may succeed later)
 *  ENXIO       owned by the kernel, permanently while this boots: the
 *              kernel's arm_pmu owns the PMU and shared mode is off
 *              (amupmu_info.features has no AMUPMU_FEAT_PMU_SHARED), or no
 *              perf PMU serves a CPU of the set; only a devicetree that
 *              hands the PMU to amupmu, or shared mode, changes it
 *  EACCES      the caller lacks the privilege (CAP_PERFMON) for the request
 *  ENODEV      the CPU is offline / not possible, or the unit is absent
 *  ENOMEM      out of memory, or the sample ring would take the caller
 *              beyond its RLIMIT_MEMLOCK (without CAP_IPC_LOCK)
 * A command that fails changes no driver state.
 *
 * ABI 2 (the ioctl type, the event filters, the READ of every CPU, the
 * sample's mode and clock) is not compatible with ABI 1: see
 * Documentation/userspace-api/amupmu.rst, "Incompatible changes".
 */
#ifndef _UAPI_LINUX_AMUPMU_H
#define _UAPI_LINUX_AMUPMU_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* ABI version: the major changes only on incompatible changes (once: 1 -> 2). */
#define AMUPMU_ABI_MAJOR	2
/*
 * 2.1: the AMU (AMUPMU_AMU_READ, the AMU fields of INFO); 2.2: SPE sessions, spe_owner;
 * 2.3: PMU shared mode (AMUPMU_FEAT_PMU_SHARED, AMUPMU_READ_SHARED/EVICTED,
 * AMUPMU_PMU_CONFIG_MULTIPLEX, AMUPMU_PMU_READ_TIMES);
 * 2.4: sample interrupts throttled in both modes, amupmu_pmu_read.throttled;
 * 2.5: netlink CPU_GET's AMUPMU_NL_A_LOST_TOTAL and AMUPMU_NL_A_THROTTLED_TOTAL
 */
#define AMUPMU_ABI_MINOR	5

/* Largest struct size any command accepts (larger: E2BIG). */
#define AMUPMU_SIZE_MAX		4096

/*
 * 0xB8 is free in Documentation/userspace-api/ioctl/ioctl-number.rst (make
 * check verifies it against linux-source); numbers 0x80-0x9F of it are ours.
 */
#define AMUPMU_TYPE		0xB8
#define AMUPMU_CMD_BASE		0x80

enum {
	AMUPMU_CMD_INFO = AMUPMU_CMD_BASE,
	AMUPMU_CMD_PMU_CONFIG,
	AMUPMU_CMD_PMU_CTL,
	AMUPMU_CMD_PMU_READ,
	AMUPMU_CMD_AMU_READ,
	AMUPMU_CMD_SPE_CONFIG,
	AMUPMU_CMD_SPE_CTL,
	AMUPMU_CMD_SPE_READ,
};

/**
 * enum amupmu_features - amupmu_info.features
 * @AMUPMU_FEAT_PMU: at least one discovered CPU implements PMUv3
 * @AMUPMU_FEAT_PMU_EXCLUSIVE: the devicetree handed the PMU to amupmu
 * @AMUPMU_FEAT_AMU: at least one discovered CPU implements FEAT_AMUv1
 * @AMUPMU_FEAT_SPE: at least one discovered CPU implements FEAT_SPE
 * @AMUPMU_FEAT_MOCK: test build: AMU and SPE registers come from the mock
 *	register model, not from hardware (never set in production builds)
 * @AMUPMU_FEAT_PMU_SHARED: shared mode: the kernel's arm_pmu owns the PMU
 *	and PMU sessions count and sample through the kernel's perf core
 *	(in-kernel counters, pinned), with the same ABI; module parameter
 *	pmu_shared (default on) turns it off, and new PMU_CONFIGs then fail
 *	with ENXIO
 */
enum amupmu_features {
	AMUPMU_FEAT_PMU			= 1 << 0,
	AMUPMU_FEAT_PMU_EXCLUSIVE	= 1 << 1,
	AMUPMU_FEAT_AMU			= 1 << 2,
	AMUPMU_FEAT_SPE			= 1 << 3,
	AMUPMU_FEAT_MOCK		= 1 << 4,
	AMUPMU_FEAT_PMU_SHARED		= 1 << 5,
};

/**
 * enum amupmu_pmu_owner - amupmu_info.pmu_owner
 * @AMUPMU_PMU_OWNER_NONE: no CPU implements PMUv3
 * @AMUPMU_PMU_OWNER_KERNEL: the kernel's arm_pmu (perf) owns the PMU; amupmu
 *	writes no PMU register: PMU sessions go through perf core (shared
 *	mode, AMUPMU_FEAT_PMU_SHARED), or are refused with ENXIO when shared
 *	mode is off
 * @AMUPMU_PMU_OWNER_AMUPMU: the devicetree node "amupmu,pmuv3" bound to
 *	amupmu, which owns the PMU registers and the overflow interrupt
 */
enum amupmu_pmu_owner {
	AMUPMU_PMU_OWNER_NONE	= 0,
	AMUPMU_PMU_OWNER_KERNEL	= 1,
	AMUPMU_PMU_OWNER_AMUPMU	= 2,
};

/**
 * enum amupmu_cpu_flags - amupmu_cpu_info.flags
 * @AMUPMU_CPU_POSSIBLE: the CPU number exists (cpu_possible_mask)
 * @AMUPMU_CPU_ONLINE: the CPU is online now
 * @AMUPMU_CPU_DISCOVERED: the registers below were read on this CPU (it has
 *	been online at least once since the module was loaded); all register
 *	fields are zero otherwise
 * @AMUPMU_CPU_PMU: PMUv3 implemented (ID_AA64DFR0_EL1.PMUVer not 0 nor 0xF)
 * @AMUPMU_CPU_PMCEID_EXT: pmceid0/1 bits [63:32] are valid (PMUv3p1 or later;
 *	they describe events 0x4000-0x403F)
 * @AMUPMU_CPU_PMMIR: pmmir is valid (PMUv3p4 or later)
 * @AMUPMU_CPU_AMU: FEAT_AMUv1 implemented; amcfgr/amcgcr are valid
 * @AMUPMU_CPU_SPE: FEAT_SPE implemented; pmsidr is valid
 * @AMUPMU_CPU_MOCK: AMU/SPE registers of this CPU come from the mock model
 * @AMUPMU_CPU_AMU_OFF: (ABI 2.1) the CPU implements the AMU but amupmu does
 *	not use it: the module parameter amu=0, or a kernel built without
 *	CONFIG_ARM64_AMU_EXTN (whose help says firmware may not have enabled
 *	AMU access at EL3). No AMU system register of the CPU is read;
 *	@amu_version still says what the ID register reports. The
 *	memory-mapped ID frame (@amu_frame), which cannot trap, is still
 *	read where the devicetree describes it.
 * @AMUPMU_CPU_AMU_ZERO: (ABI 2.1) the AMU is in use, but its core and
 *	constant cycle counters (group 0 counters 0 and 1) both read zero at
 *	discovery: firmware left them disabled or reset (see amcntenset0 and
 *	Documentation/admin-guide/amupmu.rst, "AMU and firmware")
 * @AMUPMU_CPU_AMU_FRAME: (ABI 2.1) @amu_frame holds the ID registers of the
 *	CPU's memory-mapped AMU frame (a devicetree "amupmu,cpu-frames" node)
 * @AMUPMU_CPU_PMU_FRAME: (ABI 2.1) likewise @pmu_frame, the PMU frame
 */
enum amupmu_cpu_flags {
	AMUPMU_CPU_POSSIBLE	= 1 << 0,
	AMUPMU_CPU_ONLINE	= 1 << 1,
	AMUPMU_CPU_DISCOVERED	= 1 << 2,
	AMUPMU_CPU_PMU		= 1 << 3,
	AMUPMU_CPU_PMCEID_EXT	= 1 << 4,
	AMUPMU_CPU_PMMIR	= 1 << 5,
	AMUPMU_CPU_AMU		= 1 << 6,
	AMUPMU_CPU_SPE		= 1 << 7,
	AMUPMU_CPU_MOCK		= 1 << 8,
	AMUPMU_CPU_AMU_OFF	= 1 << 9,
	AMUPMU_CPU_AMU_ZERO	= 1 << 10,
	AMUPMU_CPU_AMU_FRAME	= 1 << 11,
	AMUPMU_CPU_PMU_FRAME	= 1 << 12,
};

/* The AMU's counter groups have at most 16 counters each (Arm ARM D7). */
#define AMUPMU_AMU_MAX_COUNTERS	16

/**
 * struct amupmu_id_frame - identification registers of a memory-mapped
 *	AMU or PMU frame (Arm ARM, "External AMU register descriptions" and
 *	"External PMU register descriptions"), 0 where the frame does not
 *	implement one
 * @iidr: AMIIDR / PMIIDR (offset 0xE08): ProductID [31:20], Variant
 *	[19:16], Revision [15:12], Implementer [11:0] (JEP106: continuation
 *	code [11:8], identity [6:0]; Arm is 0x43B)
 * @devarch: AMDEVARCH / PMDEVARCH (0xFBC)
 * @devid: AMDEVID / PMDEVID (0xFC8)
 * @devtype: AMDEVTYPE / PMDEVTYPE (0xFCC)
 * @pidr: AMPIDR0-4 / PMPIDR0-4: [0..3] from 0xFE0-0xFEC, [4] from 0xFD0
 * @cidr: AMCIDR0-3 / PMCIDR0-3 (0xFF0-0xFFC)
 * @__reserved: 0
 */
struct amupmu_id_frame {
	__u32 iidr;
	__u32 devarch;
	__u32 devid;
	__u32 devtype;
	__u32 pidr[5];
	__u32 cidr[4];
	__u32 __reserved;
};

/**
 * struct amupmu_cpu_info - what one CPU reported, read on that CPU
 * @cpu: CPU number
 * @flags: enum amupmu_cpu_flags
 * @midr: MIDR_EL1
 * @revidr: REVIDR_EL1
 * @id_aa64dfr0: ID_AA64DFR0_EL1 (raw, not sanitised)
 * @id_aa64pfr0: ID_AA64PFR0_EL1 (raw, not sanitised)
 * @pmcr: PMCR_EL0 as read at discovery (N is bits [15:11])
 * @pmceid0: PMCEID0_EL0 (events 0x00-0x1F, and 0x4000-0x401F in [63:32])
 * @pmceid1: PMCEID1_EL0 (events 0x20-0x3F, and 0x4020-0x403F in [63:32])
 * @pmmir: PMMIR_EL1
 * @amcfgr: AMCFGR_EL0
 * @amcgcr: AMCGCR_EL0
 * @pmsidr: PMSIDR_EL1
 * @pmu_version: ID_AA64DFR0_EL1.PMUVer (1 = PMUv3, 4 = v3p1, ... 6 = v3p5)
 * @pmu_num_counters: PMCR_EL0.N, event counters besides the cycle counter
 * @amu_version: ID_AA64PFR0_EL1.AMU (1 = AMUv1, 2 = AMUv1p1)
 * @spe_version: ID_AA64DFR0_EL1.PMSVer (1 = SPE, 2 = SPEv1p1, ...)
 * @pmu_counters_free: (since AMUPMU_CPU_INFO_SIZE_VER1) the counters of
 *	this CPU no session holds now, as a mask: bit n event counter n
 *	(below pmu_num_counters), bit 31 the cycle counter. 0 unless amupmu
 *	owns the PMU. What AMUPMU_PMU_CONFIG can have, barring a race.
 * @__reserved: 0
 *
 * Since AMUPMU_CPU_INFO_SIZE_VER2 (ABI 2.1), valid with AMUPMU_CPU_AMU
 * (amupmu only reads these registers, never writes them):
 * @amcr: AMCR_EL0 (HDBG [10], CG1RZ [17] on AMUv1p1: group 1 counters read
 *	zero below the highest EL)
 * @amcntenset0: AMCNTENSET0_EL0 at discovery: group 0 counters enabled
 * @amcntenset1: AMCNTENSET1_EL0 at discovery: group 1 counters enabled
 * @amevtyper0: AMEVTYPER0<n>_EL0.evtCount of the group 0 counters
 *	(AMCGCR_EL0.CG0NC of them; 0x0011 CPU_CYCLES, 0x4004 CNT_CYCLES,
 *	0x0008 INST_RETIRED, 0x4005 STALL_BACKEND_MEM on AMUv1)
 * @amevtyper1: AMEVTYPER1<n>_EL0.evtCount of the group 1 (auxiliary)
 *	counters, AMCGCR_EL0.CG1NC of them (IMPLEMENTATION DEFINED events)
 * @amu_frame: with AMUPMU_CPU_AMU_FRAME, the external AMU frame's IDs
 * @pmu_frame: with AMUPMU_CPU_PMU_FRAME, the external PMU frame's IDs
 */
struct amupmu_cpu_info {
	__u32 cpu;
	__u32 flags;
	__aligned_u64 midr;
	__aligned_u64 revidr;
	__aligned_u64 id_aa64dfr0;
	__aligned_u64 id_aa64pfr0;
	__aligned_u64 pmcr;
	__aligned_u64 pmceid0;
	__aligned_u64 pmceid1;
	__aligned_u64 pmmir;
	__aligned_u64 amcfgr;
	__aligned_u64 amcgcr;
	__aligned_u64 pmsidr;
	__u32 pmu_version;
	__u32 pmu_num_counters;
	__u32 amu_version;
	__u32 spe_version;
	__u32 pmu_counters_free;
	__u32 __reserved;
	__aligned_u64 amcr;
	__u32 amcntenset0;
	__u32 amcntenset1;
	__u16 amevtyper0[AMUPMU_AMU_MAX_COUNTERS];
	__u16 amevtyper1[AMUPMU_AMU_MAX_COUNTERS];
	struct amupmu_id_frame amu_frame;
	struct amupmu_id_frame pmu_frame;
};

#define AMUPMU_CPU_INFO_SIZE_VER0	112	/* first published size */
#define AMUPMU_CPU_INFO_SIZE_VER1	120	/* adds pmu_counters_free */
#define AMUPMU_CPU_INFO_SIZE_VER2	312	/* adds the AMU fields and ID frames */
#define AMUPMU_CPU_ENTRY_SIZE_MAX	4096	/* largest cpu_entry_size */

/**
 * struct amupmu_info - AMUPMU_INFO: handshake and discovery
 * @size: sizeof(struct amupmu_info)
 * @flags: must be 0
 * @abi_major: out: AMUPMU_ABI_MAJOR of the running driver
 * @abi_minor: out: AMUPMU_ABI_MINOR of the running driver
 * @features: out: enum amupmu_features
 * @supported_ioctls: out: bit n set when command AMUPMU_CMD_BASE + n exists
 * @pmu_owner: out: enum amupmu_pmu_owner
 * @nr_cpus: in: entries available at @cpus_uptr (0 to ask only);
 *	out: number of possible CPU numbers (nr_cpu_ids)
 * @cpu_entry_size: in: sizeof(struct amupmu_cpu_info) as user space knows it;
 *	when @nr_cpus is not 0 a multiple of 8 from AMUPMU_CPU_INFO_SIZE_VER0
 *	to AMUPMU_CPU_ENTRY_SIZE_MAX (else EINVAL); out: the kernel's size.
 *	Each entry is written for min(in, kernel) bytes and zero-filled
 *	beyond that.
 * @__reserved: must be 0
 * @cpus_uptr: in: user pointer to an array of @nr_cpus entries of
 *	@cpu_entry_size bytes; entry i describes CPU i. May be 0 if @nr_cpus is 0.
 * @kernel_el: out (since AMUPMU_INFO_SIZE_VER1): the exception level the
 *	kernel runs at: 2 on a VHE host (the kernel is the hypervisor), else 1.
 *	It decides what the event filters program (enum amupmu_event_flags).
 * @clock: out (idem): enum amupmu_clock, the counter amupmu_sample.time reads
 * @spe_owner: out (since AMUPMU_INFO_SIZE_VER2): enum amupmu_spe_owner
 * @__reserved2: must be 0
 *
 * Entries are filled for CPUs 0 .. min(@nr_cpus, nr_cpu_ids) - 1.
 */
struct amupmu_info {
	__u32 size;
	__u32 flags;
	__u32 abi_major;
	__u32 abi_minor;
	__aligned_u64 features;
	__aligned_u64 supported_ioctls;
	__u32 pmu_owner;
	__u32 nr_cpus;
	__u32 cpu_entry_size;
	__u32 __reserved;
	__aligned_u64 cpus_uptr;
	__u32 kernel_el;
	__u32 clock;
	__u32 spe_owner;
	__u32 __reserved2;
};

#define AMUPMU_INFO_SIZE_VER0	56	/* first published size */
#define AMUPMU_INFO_SIZE_VER1	64	/* adds kernel_el, clock */
#define AMUPMU_INFO_SIZE_VER2	72	/* adds spe_owner */

/**
 * enum amupmu_clock - which generic-timer count amupmu_sample.time holds
 * @AMUPMU_CLOCK_CNTVCT: CNTVCT_EL0, the virtual count (the kernel at EL1)
 * @AMUPMU_CLOCK_CNTPCT: CNTPCT_EL0, the physical count (a VHE host kernel
 *	uses the EL2 physical timer: under VHE CNTVCT_EL0 read at EL0 is
 *	offset by CNTVOFF_EL2, so user space must not compare the two)
 *
 * Either is what the kernel's clocksource reads; amupmu_ring_header gives
 * the conversion to CLOCK_MONOTONIC_RAW nanoseconds.
 */
enum amupmu_clock {
	AMUPMU_CLOCK_CNTVCT	= 1,
	AMUPMU_CLOCK_CNTPCT	= 2,
};

#define AMUPMU_INFO		_IO(AMUPMU_TYPE, AMUPMU_CMD_INFO)

/*
 * PMU counting and sampling sessions.
 *
 * An open file of /dev/amupmu is a session. AMUPMU_PMU_CONFIG gives it a
 * group of events counted on each CPU of a CPU set; AMUPMU_PMU_CTL enables,
 * disables or resets the group; AMUPMU_PMU_READ returns one CPU's totals.
 * Closing the file frees the counters. A session holds one group; configure
 * again after AMUPMU_PMU_CTL_RELEASE to change it.
 *
 * Totals are 64-bit whatever the counter width: 64-bit counters where the
 * PMU has them (PMUv3p5 PMCR_EL0.LP/LC), otherwise overflows are
 * accumulated by the overflow interrupt. A CPU that goes offline keeps its
 * totals; reading it reports AMUPMU_READ_OFFLINE, and counting resumes when
 * it comes back.
 *
 * Two modes, one ABI. Exclusive mode (AMUPMU_FEAT_PMU_EXCLUSIVE): amupmu
 * programs the PMU itself. Shared mode (AMUPMU_FEAT_PMU_SHARED): the kernel's
 * arm_pmu owns the PMU and each event of a group is a pinned in-kernel perf
 * counter on each online CPU of the set, held from CONFIG to RELEASE, on the
 * PMU that serves that CPU; perf users share the counters through perf
 * core's scheduling (pinned CPU events come first, so theirs multiplex).
 * What differs in shared mode: amupmu_pmu_config.counters are
 * AMUPMU_COUNTER_PERF (perf core places the events and may move them);
 * pmu_counters_free is 0 (perf core decides); a sampling counter's period
 * restarts at ENABLE instead of resuming; amupmu_pmu_value.overflows counts
 * samples' overflows only; a pinned counter that perf core takes away (an
 * older pinned perf event enabled later) sets AMUPMU_READ_EVICTED and is
 * put back by the next ENABLE or RESET if it fits.
 *
 * Besides the general contract: ENXIO when the kernel's arm_pmu owns the
 * PMU and shared mode is off (every PMU command); EBUSY when a CPU has too
 * few free counters (amupmu_cpu_info.pmu_counters_free says which are free
 * in exclusive mode; in shared mode perf core could not schedule a pinned
 * counter); EACCES without CAP_PERFMON (the counters are per CPU:
 * system-wide); EOPNOTSUPP in shared mode for a sampling event on a PMU
 * without an overflow interrupt.
 */

#define AMUPMU_PMU_MAX_EVENTS		32	/* 31 event counters + cycle counter */

/**
 * enum amupmu_event_flags - amupmu_pmu_event.flags
 * @AMUPMU_EV_EXCL_USER: do not count user space (perf's exclude_user)
 * @AMUPMU_EV_EXCL_KERNEL: do not count the kernel (exclude_kernel)
 * @AMUPMU_EV_EXCL_HV: do not count the hypervisor (exclude_hv); ignored
 *	where the kernel is the hypervisor (VHE, amupmu_info.kernel_el 2)
 * @AMUPMU_EV_EXCL_HOST: do not count the host (exclude_host)
 * @AMUPMU_EV_EXCL_GUEST: do not count guests (exclude_guest)
 * @AMUPMU_EV_RAW: the event number is not checked against PMCEID0/1 (for
 *	IMPLEMENTATION DEFINED events such as 0x0160); without it an event
 *	the CPU does not implement is refused with EOPNOTSUPP
 *
 * No flag counts everything this kernel runs: user space and the kernel,
 * at whatever exception level the kernel runs. The filters are translated
 * into PMEVTYPER<n>_EL0 P (EL1), U (EL0) and NSH (EL2) the way the
 * kernel's armv8pmu_set_event_filter() does:
 *  - VHE (kernel at EL2): NSH unless EXCL_KERNEL or EXCL_HOST; P with
 *    EXCL_KERNEL or EXCL_GUEST (EL1 is only guest kernels); U with
 *    EXCL_USER or EXCL_HOST.
 *  - kernel at EL1: NSH (a hypervisor at EL2) unless EXCL_HV or EXCL_HOST,
 *    and only where the CPU implements EL2; P with EXCL_KERNEL; U with
 *    EXCL_USER.
 * The PMU cannot tell a guest's EL0/EL1 from the host's without KVM's
 * world-switch hooks, which amupmu does not have: under VHE EXCL_GUEST
 * excludes guest kernels (EL1) only, and EXCL_HOST also excludes guests'
 * user space (both run at EL0); at EL1 EXCL_GUEST changes nothing.
 * A combination that counts at no exception level is refused with EINVAL.
 */
enum amupmu_event_flags {
	AMUPMU_EV_EXCL_USER	= 1 << 0,
	AMUPMU_EV_EXCL_KERNEL	= 1 << 1,
	AMUPMU_EV_EXCL_HV	= 1 << 2,
	AMUPMU_EV_EXCL_HOST	= 1 << 3,
	AMUPMU_EV_EXCL_GUEST	= 1 << 4,
	AMUPMU_EV_RAW		= 1 << 5,
};

/**
 * struct amupmu_pmu_event - one event of a group
 * @event: event number (PMEVTYPER<n>_EL0.evtCount, 16 bits)
 * @flags: enum amupmu_event_flags
 * @sample_period: 0 to count only; otherwise sample: every @sample_period
 *	events the counter overflows and the interrupt writes a struct
 *	amupmu_sample into the session's ring. From the driver's minimum
 *	(sysfs sample_period_min, module parameter of the same name) to the
 *	counter's range (2^32 - 1 on 32-bit counters), else EINVAL.
 */
struct amupmu_pmu_event {
	__u32 event;
	__u32 flags;
	__aligned_u64 sample_period;
};

/**
 * enum amupmu_pmu_config_flags - amupmu_pmu_config.flags
 * @AMUPMU_PMU_CONFIG_MULTIPLEX: shared mode only (EOPNOTSUPP in exclusive
 *	mode): the events may multiplex instead of holding counters. They are
 *	perf's flexible CPU events, each scheduled on its own, rotated with
 *	perf's other flexible events while the group is enabled and not
 *	scheduled at all while it is disabled; CONFIG does not fail with
 *	EBUSY for want of counters. Each event has its own time enabled and
 *	time running, so AMUPMU_PMU_READ needs AMUPMU_PMU_READ_TIMES (EINVAL
 *	otherwise); the estimate of a full count is value * time_enabled /
 *	time_running, as perf's. Such a READ does not take the same-CPU fast
 *	path (perf core's times are read through perf_event_read_value()).
 */
enum amupmu_pmu_config_flags {
	AMUPMU_PMU_CONFIG_MULTIPLEX	= 1 << 0,
};

/**
 * struct amupmu_pmu_config - AMUPMU_PMU_CONFIG: give the session its group
 * @size: sizeof(struct amupmu_pmu_config)
 * @flags: enum amupmu_pmu_config_flags
 * @nr_events: in: entries at @events_uptr, 1 .. AMUPMU_PMU_MAX_EVENTS
 * @event_size: in: sizeof(struct amupmu_pmu_event), at least
 *	AMUPMU_PMU_EVENT_SIZE_VER0, a multiple of 8, at most 4096
 * @events_uptr: in: the events; CPU_CYCLES (0x11) without EL filters the
 *	cycle counter cannot express goes to the cycle counter when it is free
 * @cpus_uptr: in: CPU set as a bitmap of __u64 words (bit n of word w =
 *	CPU 64 * w + n); every CPU in it must be possible (else ENODEV)
 * @cpus_len: in: bytes at @cpus_uptr, a multiple of 8, at most 1024
 * @counters_free: out: the fewest free counters (cycle counter included)
 *	on a CPU of the set, before this request. A refused request writes
 *	nothing back: ask amupmu_cpu_info.pmu_counters_free before.
 * @counters: out: counter index of each event on the first CPU of the set
 *	(0..30 event counters, 31 the cycle counter); the same on every CPU
 *	of the set when their counters were equally free. Shared mode:
 *	AMUPMU_COUNTER_PERF for every event
 * @ring_pages: in: data pages of the sample ring, a power of two from 1
 *	to AMUPMU_RING_PAGES_MAX when an event has a sample_period, else 0
 *	(EINVAL otherwise)
 * @__reserved: must be 0
 *
 * EBUSY also when the session already has a group. Nothing is allocated,
 * and no counter changes, when the request fails.
 */
struct amupmu_pmu_config {
	__u32 size;
	__u32 flags;
	__u32 nr_events;
	__u32 event_size;
	__aligned_u64 events_uptr;
	__aligned_u64 cpus_uptr;
	__u32 cpus_len;
	__u32 counters_free;
	__u8 counters[AMUPMU_PMU_MAX_EVENTS];
	__u32 ring_pages;
	__u32 __reserved;
};

/* amupmu_pmu_config.counters in shared mode: perf core places the event */
#define AMUPMU_COUNTER_PERF		0xff

#define AMUPMU_PMU_EVENT_SIZE_VER0	16
#define AMUPMU_PMU_CONFIG_SIZE_VER0	80

/**
 * enum amupmu_pmu_ctl_op - amupmu_pmu_ctl.op
 * @AMUPMU_PMU_CTL_ENABLE: start counting on every CPU of the set
 * @AMUPMU_PMU_CTL_DISABLE: stop counting; totals are kept
 * @AMUPMU_PMU_CTL_RESET: zero the totals, overflow counts and times; the
 *	counters start over (a sampling counter's period restarts)
 *	(counting goes on if enabled)
 * @AMUPMU_PMU_CTL_RELEASE: free the group's counters
 */
enum amupmu_pmu_ctl_op {
	AMUPMU_PMU_CTL_ENABLE	= 1,
	AMUPMU_PMU_CTL_DISABLE	= 2,
	AMUPMU_PMU_CTL_RESET	= 3,
	AMUPMU_PMU_CTL_RELEASE	= 4,
};

/**
 * struct amupmu_pmu_ctl - AMUPMU_PMU_CTL
 * @size: sizeof(struct amupmu_pmu_ctl)
 * @flags: must be 0
 * @op: enum amupmu_pmu_ctl_op; ENODEV without a group
 * @__reserved: must be 0
 */
struct amupmu_pmu_ctl {
	__u32 size;
	__u32 flags;
	__u32 op;
	__u32 __reserved;
};

#define AMUPMU_PMU_CTL_SIZE_VER0	16

/**
 * struct amupmu_pmu_value - one event's total on one CPU
 * @value: 64-bit total since configuration or the last reset
 * @overflows: overflow interrupts taken for this counter (a 32-bit counter
 *	that only counts interrupts every 2^31 events)
 */
struct amupmu_pmu_value {
	__aligned_u64 value;
	__aligned_u64 overflows;
};

/**
 * struct amupmu_pmu_value_times - one event's total on one CPU, with its times
 *	(AMUPMU_PMU_READ_TIMES)
 * @value: as struct amupmu_pmu_value
 * @overflows: idem
 * @time_enabled: ns the event was enabled since configuration or the last
 *	reset (a group that does not multiplex: the group's time enabled)
 * @time_running: ns it was on a counter in that time (a group that does
 *	not multiplex: the CPU's time running)
 */
struct amupmu_pmu_value_times {
	__aligned_u64 value;
	__aligned_u64 overflows;
	__aligned_u64 time_enabled;
	__aligned_u64 time_running;
};

/**
 * enum amupmu_read_flags - amupmu_pmu_read.state
 * @AMUPMU_READ_ENABLED: the group is enabled
 * @AMUPMU_READ_OFFLINE: the CPU is offline: totals are those it had when
 *	it went down
 * @AMUPMU_READ_SHARED: the group counts through perf core (shared mode)
 * @AMUPMU_READ_EVICTED: shared mode: perf core took a pinned counter of
 *	this CPU away (error state), so the group's totals there are short of
 *	what ran since; the next ENABLE or RESET puts it back when it fits
 */
enum amupmu_read_flags {
	AMUPMU_READ_ENABLED	= 1 << 0,
	AMUPMU_READ_OFFLINE	= 1 << 1,
	AMUPMU_READ_SHARED	= 1 << 2,
	AMUPMU_READ_EVICTED	= 1 << 3,
};

/**
 * enum amupmu_pmu_read_op_flags - amupmu_pmu_read.flags
 * @AMUPMU_PMU_READ_ALL: every CPU of the session's set in one call, as an
 *	array of struct amupmu_pmu_read_cpu at @values_uptr
 * @AMUPMU_PMU_READ_TIMES: each value is a struct amupmu_pmu_value_times
 *	(32 bytes) instead of a struct amupmu_pmu_value, here and in the
 *	entries of AMUPMU_PMU_READ_ALL (whose stride grows to match); needed
 *	for a group configured with AMUPMU_PMU_CONFIG_MULTIPLEX
 */
enum amupmu_pmu_read_op_flags {
	AMUPMU_PMU_READ_ALL	= 1 << 0,
	AMUPMU_PMU_READ_TIMES	= 1 << 1,
};

/**
 * struct amupmu_pmu_read_cpu - one CPU's entry of an AMUPMU_PMU_READ_ALL
 * @cpu: the CPU
 * @state: enum amupmu_read_flags
 * @time_running: ns the group has counted on this CPU
 * @samples: sample records this CPU wrote into the ring
 * @lost: samples it dropped because the ring was full
 * @skid: samples it dropped because the interrupt came in the kernel while
 *	the counter excludes the kernel (as perf drops skid samples)
 * @values: the group's totals on this CPU, in event order
 */
struct amupmu_pmu_read_cpu {
	__u32 cpu;
	__u32 state;
	__aligned_u64 time_running;
	__aligned_u64 samples;
	__aligned_u64 lost;
	__aligned_u64 skid;
	struct amupmu_pmu_value values[];
};

/**
 * struct amupmu_pmu_read - AMUPMU_PMU_READ: the totals, in one call
 * @size: sizeof(struct amupmu_pmu_read)
 * @flags: 0 to read @cpu; AMUPMU_PMU_READ_ALL to read every CPU of the set
 * @cpu: in: without AMUPMU_PMU_READ_ALL a CPU of the session's set (else
 *	EINVAL); with it must be 0
 * @nr_values: in: values room per CPU, at least the group's size (else
 *	EINVAL); out: the group's size
 * @values_uptr: in: without AMUPMU_PMU_READ_ALL an array of @nr_values
 *	struct amupmu_pmu_value, in event order; with it an array of @nr_cpus
 *	entries of sizeof(struct amupmu_pmu_read_cpu) + @nr_values (as passed
 *	in: the entries' stride does not change when the kernel writes the
 *	group's size back) * sizeof(struct amupmu_pmu_value) bytes each,
 *	filled for the CPUs of the set in ascending order, each for its header
 *	and the group's values
 * @time_enabled: out: ns the group has been enabled
 * @time_running: out: ns it has counted on @cpu (enabled and online);
 *	0 with AMUPMU_PMU_READ_ALL (see the entries)
 * @state: out: enum amupmu_read_flags of @cpu; with AMUPMU_PMU_READ_ALL only
 *	the group's AMUPMU_READ_ENABLED and AMUPMU_READ_SHARED (each entry has
 *	its CPU's state)
 * @nr_cpus: in: with AMUPMU_PMU_READ_ALL the entries' room, at least the
 *	CPUs of the set (else EINVAL), at most 4096; out: entries written.
 *	Without it must be 0.
 * @samples: out (since size AMUPMU_PMU_READ_SIZE_VER1): sample records @cpu
 *	wrote into the ring since configuration or the last reset
 * @lost: out (idem): samples @cpu dropped because the ring was full
 * @skid: out (since AMUPMU_PMU_READ_SIZE_VER2): samples @cpu dropped as
 *	kernel context of a counter that excludes the kernel
 * @throttled: out (since AMUPMU_PMU_READ_SIZE_VER3, ABI 2.4): times the
 *	group's sample interrupts on @cpu were throttled since configuration
 *	or the last reset: the CPU took more overflow interrupts in a tick
 *	than the limit allows, so the group's sampling counters there gave
 *	no interrupt (and no sample) until the next tick. Exclusive mode: a
 *	budget per CPU and tick of DIV_ROUND_UP(sample_rate_max, HZ)
 *	interrupts (module parameter sample_rate_max, default 100000 per
 *	second, perf's default perf_event_max_sample_rate); the counters
 *	keep counting meanwhile. Shared mode: perf core's throttle
 *	(kernel.perf_event_max_sample_rate per event and tick, lowered by
 *	perf when its interrupts take too long), which also stops the
 *	sampling counter until the tick: in shared mode a sampling
 *	counter's value is a lower bound whenever @throttled is not 0, and
 *	ENABLE, which sets the period again, ends perf's throttle at once
 *	as PERF_EVENT_IOC_PERIOD does. With AMUPMU_PMU_READ_ALL: the sum
 *	over the set's CPUs (the entries have no room for it).
 */
struct amupmu_pmu_read {
	__u32 size;
	__u32 flags;
	__u32 cpu;
	__u32 nr_values;
	__aligned_u64 values_uptr;
	__aligned_u64 time_enabled;
	__aligned_u64 time_running;
	__u32 state;
	__u32 nr_cpus;
	__aligned_u64 samples;
	__aligned_u64 lost;
	__aligned_u64 skid;
	__aligned_u64 throttled;
};

#define AMUPMU_PMU_READ_SIZE_VER0	48
#define AMUPMU_PMU_READ_SIZE_VER1	64	/* adds samples, lost */
#define AMUPMU_PMU_READ_SIZE_VER2	72	/* adds skid */
#define AMUPMU_PMU_READ_SIZE_VER3	80	/* adds throttled (ABI 2.4) */
#define AMUPMU_PMU_READ_CPUS_MAX	4096

/*
 * Overflow sampling.
 *
 * A group with at least one sample_period has a ring of
 * amupmu_pmu_config.ring_pages data pages, allocated by AMUPMU_PMU_CONFIG.
 * AMUPMU_PMU_CTL_RELEASE keeps it (mapped or not) for the session's next
 * sampling group of the same size; it is freed when a group asks for
 * another size (unless mapped: EBUSY) and when the session is closed.
 * User space consumes it in either of two ways:
 *
 *  - mmap() of the session fd, offset 0, length (1 + ring_pages) pages,
 *    MAP_SHARED: page 0 is struct amupmu_ring_header, the data follows at
 *    data_offset. Read data_head with acquire semantics, consume records
 *    from data_tail to data_head (offsets modulo data_size; a record may
 *    wrap around the end), then store data_tail with release semantics.
 *    A mapping without PROT_WRITE can only watch; PROT_EXEC is refused.
 *  - read(): whole records, as many as fit in the buffer (EINVAL if the
 *    next record does not fit); blocks until one is there unless
 *    O_NONBLOCK (EAGAIN). poll() reports EPOLLIN while the ring holds a
 *    record.
 *
 * Both advance the same data_tail; use one reader at a time. Without a
 * ring, mmap(), read() and poll() fail with EINVAL (poll: EPOLLERR).
 *
 * The interrupt handler never blocks or allocates: when the ring is full
 * the sample is dropped and counted in amupmu_ring_header.lost and in
 * amupmu_pmu_read.lost of the CPU that dropped it.
 *
 * The ring's pages (1 + ring_pages) count against the locked memory of
 * the user that configured the group that allocated it (per user, as
 * perf's buffers; limited by the caller's RLIMIT_MEMLOCK, CAP_IPC_LOCK
 * lifts it) until the ring is freed and its last mapping is gone: a new
 * ring beyond it is refused with ENOMEM; a kept ring that is reused is not
 * charged again. The mappings are not inherited by fork() (VM_DONTCOPY).
 */
#define AMUPMU_RING_PAGES_MAX		256
#define AMUPMU_RING_VERSION		1

/**
 * struct amupmu_ring_header - page 0 of the mapped ring
 * @version: AMUPMU_RING_VERSION
 * @header_size: sizeof(struct amupmu_ring_header) as the kernel knows it
 * @data_offset: offset of the data area in the mapping (one page)
 * @data_size: bytes of the data area, a power of two
 * @data_head: bytes ever written (monotonic; written by the kernel)
 * @data_tail: bytes ever consumed (written by the reader, or by read())
 * @samples: records ever written
 * @lost: samples dropped because the ring was full
 * @timer_freq: CNTFRQ_EL0, Hz of amupmu_sample.time
 * @clock: enum amupmu_clock: the counter amupmu_sample.time reads
 * @time_shift: see @time_mult
 * @time_mult: with @time_shift and @time_zero, converts a sample's time to
 *	CLOCK_MONOTONIC_RAW nanoseconds as perf's mmap page does:
 *	  __s64 d = (__s64)(time - time_zero);
 *	  __u64 rem = (__u64)d & ((1ULL << time_shift) - 1);
 *	  ns = time_zero_ns + (d >> time_shift) * time_mult +
 *	       ((rem * time_mult) >> time_shift);
 *	(d >> time_shift must be a floor division for times before
 *	time_zero, where d is negative: an arithmetic shift, as GCC and
 *	Clang do, or -((-d - 1) >> time_shift) - 1)
 * @time_zero: a counter value ...
 * @time_zero_ns: ... and CLOCK_MONOTONIC_RAW in ns at the same instant,
 *	taken when the ring was set up (ktime_get_snapshot())
 */
struct amupmu_ring_header {
	__u32 version;
	__u32 header_size;
	__aligned_u64 data_offset;
	__aligned_u64 data_size;
	__aligned_u64 data_head;
	__aligned_u64 data_tail;
	__aligned_u64 samples;
	__aligned_u64 lost;
	__aligned_u64 timer_freq;
	__u32 clock;
	__u32 time_shift;
	__aligned_u64 time_mult;
	__aligned_u64 time_zero;
	__aligned_u64 time_zero_ns;
};

/**
 * enum amupmu_sample_type - amupmu_sample.type
 * @AMUPMU_SAMPLE_PMU_OVERFLOW: a sampling counter overflowed
 */
enum amupmu_sample_type {
	AMUPMU_SAMPLE_PMU_OVERFLOW	= 1,
};

/**
 * enum amupmu_sample_mode - amupmu_sample.mode, in perf's terms
 * @AMUPMU_MODE_USER: user space (EL0)
 * @AMUPMU_MODE_KERNEL: the kernel, at EL1 or, on a VHE host, at EL2
 * @AMUPMU_MODE_HV: a hypervisor below an EL1 kernel (never seen by Linux's
 *	interrupt, kept for the encoding)
 */
enum amupmu_sample_mode {
	AMUPMU_MODE_USER	= 0,
	AMUPMU_MODE_KERNEL	= 1,
	AMUPMU_MODE_HV		= 2,
};

/**
 * struct amupmu_sample - one record in the ring
 * @size: bytes of the record, values included; a multiple of 8
 * @type: enum amupmu_sample_type
 * @mode: enum amupmu_sample_mode of the interrupted context
 * @event: index in the group of the event whose counter overflowed
 * @cpu: CPU that took the interrupt
 * @nr_values: entries in @values (the group's size)
 * @pid: thread group id of the interrupted task in the pid namespace of
 *	the process that configured the group (0 if not visible there)
 * @tid: thread id of the interrupted task, likewise (0 for the idle task)
 * @time: the generic timer's count when the interrupt was handled
 *	(amupmu_ring_header.clock says which; convert with its time_*)
 * @pc: PC of the interrupted context
 * @values: the group's 64-bit totals on @cpu, in event order
 */
struct amupmu_sample {
	__u32 size;
	__u16 type;
	__u8 mode;
	__u8 event;
	__u32 cpu;
	__u32 nr_values;
	__u32 pid;
	__u32 tid;
	__aligned_u64 time;
	__aligned_u64 pc;
	__aligned_u64 values[];
};

/*
 * Activity Monitors (ABI 2.1).
 *
 * amupmu only reads the AMU: the counters free-run for the kernel's
 * frequency invariance and for firmware; no AMU register is ever written.
 * AMUPMU_AMU_READ reads the counters of every CPU of a set, each CPU's on
 * that CPU with interrupts off, together with the generic timer's count of
 * the same moment: take two reads and divide the differences.
 *
 * The values are 64-bit and monotonic while the module is loaded: a core
 * whose counters restart from zero after a power-down (CPU hotplug, or an
 * idle state whose firmware does not restore them) has the values it had
 * when it went down added back. An offline CPU reports those values with
 * AMUPMU_AMU_OFFLINE.
 *
 * Besides the general contract: EOPNOTSUPP when no CPU has a usable AMU
 * (none implements it, or amupmu_cpu_info.flags has AMUPMU_CPU_AMU_OFF);
 * EACCES without CAP_PERFMON (system-wide counters, like the PMU's).
 * Checked in this order: the struct (EINVAL: flags, reserved, entry_size,
 * nr_cpus above the maximum), the privilege (EACCES), an AMU to read
 * (EOPNOTSUPP), the CPU set (EINVAL, ENODEV, EFAULT), the room for the
 * entries (EINVAL, EFAULT). Unlike the PMU commands (where ENXIO, a fact
 * of the board, comes first), the privilege is checked before anything
 * about the hardware is said.
 */

/**
 * enum amupmu_amu_state - amupmu_amu_cpu.state
 * @AMUPMU_AMU_OFFLINE: the CPU is offline: the values it had when it went
 *	down, @time 0
 * @AMUPMU_AMU_NO_AMU: the CPU has no AMU, or amupmu does not use it
 *	(AMUPMU_CPU_AMU_OFF): no values
 * @AMUPMU_AMU_UNDISCOVERED: the CPU has not been online since the module
 *	was loaded: no values
 */
enum amupmu_amu_state {
	AMUPMU_AMU_OFFLINE		= 1 << 0,
	AMUPMU_AMU_NO_AMU		= 1 << 1,
	AMUPMU_AMU_UNDISCOVERED		= 1 << 2,
};

/**
 * struct amupmu_amu_cpu - one CPU's entry of AMUPMU_AMU_READ
 * @cpu: the CPU
 * @state: enum amupmu_amu_state (0: read now, on the CPU)
 * @time: the generic timer's count when the counters were read: the middle
 *	of the timer reads on either side of them, a reading that took over
 *	100 us (a preempted vCPU) taken again up to 4 times
 *	(amupmu_info.clock says which; amupmu_amu_read.timer_freq its Hz)
 * @nr_group0: group 0 counters (AMCGCR_EL0.CG0NC), valid in @group0
 * @nr_group1: group 1 counters (AMCGCR_EL0.CG1NC), valid in @group1
 * @enabled0: AMCNTENSET0_EL0 at the read: a counter whose bit is clear
 *	does not count (firmware did not enable it)
 * @enabled1: AMCNTENSET1_EL0 at the read
 * @restarts: times this CPU's counters were found restarted from zero
 *	after a power-down since the module was loaded (amupmu added their
 *	earlier values back each time)
 * @__reserved: 0
 * @group0: AMEVCNTR0<n>_EL0: [0] CPU_CYCLES, [1] CNT_CYCLES, [2]
 *	INST_RETIRED, [3] STALL_BACKEND_MEM on AMUv1
 *	(amupmu_cpu_info.amevtyper0 has the event of each)
 * @group1: AMEVCNTR1<n>_EL0 (amupmu_cpu_info.amevtyper1)
 */
struct amupmu_amu_cpu {
	__u32 cpu;
	__u32 state;
	__aligned_u64 time;
	__u32 nr_group0;
	__u32 nr_group1;
	__u32 enabled0;
	__u32 enabled1;
	__u32 restarts;
	__u32 __reserved;
	__aligned_u64 group0[AMUPMU_AMU_MAX_COUNTERS];
	__aligned_u64 group1[AMUPMU_AMU_MAX_COUNTERS];
};

#define AMUPMU_AMU_CPU_SIZE_VER0	296

/**
 * struct amupmu_amu_read - AMUPMU_AMU_READ: the AMU counters of a CPU set
 * @size: sizeof(struct amupmu_amu_read)
 * @flags: must be 0
 * @cpus_uptr: in: CPU set as a bitmap of __u64 words, as
 *	amupmu_pmu_config.cpus_uptr; every CPU in it must be possible (else
 *	ENODEV), and it must not be empty (else EINVAL)
 * @cpus_len: in: bytes at @cpus_uptr, a multiple of 8, from 8 to 1024
 * @nr_cpus: in: entries' room at @entries_uptr, at least the CPUs of the
 *	set (else EINVAL), at most AMUPMU_AMU_READ_CPUS_MAX; out: entries
 *	written (the CPUs of the set, in ascending order)
 * @entry_size: in: sizeof(struct amupmu_amu_cpu) as user space knows it, a
 *	multiple of 8 from AMUPMU_AMU_CPU_SIZE_VER0 to 4096 (else EINVAL);
 *	entries are written for min(in, kernel) bytes and zero-filled beyond;
 *	out: the kernel's size
 * @__reserved: must be 0
 * @entries_uptr: in: the array of @nr_cpus entries of @entry_size bytes
 * @timer_freq: out: CNTFRQ_EL0, the Hz of amupmu_amu_cpu.time and of the
 *	constant counter CNT_CYCLES
 */
struct amupmu_amu_read {
	__u32 size;
	__u32 flags;
	__aligned_u64 cpus_uptr;
	__u32 cpus_len;
	__u32 nr_cpus;
	__u32 entry_size;
	__u32 __reserved;
	__aligned_u64 entries_uptr;
	__aligned_u64 timer_freq;
};

#define AMUPMU_AMU_READ_SIZE_VER0	48
#define AMUPMU_AMU_READ_CPUS_MAX	4096

/*
 * SPE: profiling sessions (ABI 2.2).
 *
 * A session (the open file) may hold one SPE configuration on a set of
 * CPUs: AMUPMU_SPE_CONFIG programs the filters and allocates one profiling
 * buffer per CPU of the set, AMUPMU_SPE_CTL enables, disables or releases
 * it, AMUPMU_SPE_READ reports every CPU's buffer state in one call. The
 * CPUs write records in the Arm ARM's packet format (DDI 0487, D10) into
 * their buffer; user space maps each CPU's buffer and consumes it.
 *
 * Errno, in addition to the common contract:
 *  EOPNOTSUPP  a CPU of the set has no SPE (or firmware keeps the profiling
 *              buffer: PMBIDR_EL1.P), or lacks a filter asked for (see the
 *              arm_spe knobs in Documentation/admin-guide/amupmu.rst for the
 *              checks, which are the same); the kernel runs with KPTI
 *  EINVAL      a value the architecture leaves CONSTRAINED UNPREDICTABLE
 *              (FL with min_latency 0; FT with no type without
 *              FEAT_SPE_EFT), out of range, a reserved bit
 *  EACCES      without CAP_PERFMON (every configuration: SPE samples
 *              every task on its CPUs, as perf's CPU-wide events)
 *  ENXIO       the kernel's arm_spe_pmu owns SPE (amupmu_info.spe_owner);
 *              CONFIG while the claimed SPE device was unbound;
 *              CTL ENABLE/DISABLE of a configuration made before the
 *              claimed SPE device was unbound (stale: RELEASE it)
 *  ENODEV      a CPU of the set is not possible; on hardware, no SPE device
 *              claimed by amupmu serves a CPU of the set (spe_owner
 *              AMUPMU_SPE_OWNER_UNCLAIMED: "amupmu spe claim")
 *  EBUSY       another session profiles a CPU of the set, or this session
 *              already holds an SPE configuration
 *  ENOMEM      the buffers would take the caller's user beyond
 *              RLIMIT_MEMLOCK: each buffer counts (1 + buf_pages pages)
 *              until it is released and its last mapping is gone
 */

/**
 * enum amupmu_spe_owner - amupmu_info.spe_owner
 * @AMUPMU_SPE_OWNER_NONE: no CPU has SPE that EL1 may program
 * @AMUPMU_SPE_OWNER_KERNEL: the kernel's arm_spe_pmu driver holds the SPE
 *	device: SPE requests fail with ENXIO
 * @AMUPMU_SPE_OWNER_AMUPMU: amupmu holds it (claimed through
 *	driver_override), or the test build's mock model is the SPE
 * @AMUPMU_SPE_OWNER_UNCLAIMED: CPUs have SPE, but no driver holds the
 *	device: "amupmu spe claim" (admin guide) hands it to amupmu
 */
enum amupmu_spe_owner {
	AMUPMU_SPE_OWNER_NONE		= 0,
	AMUPMU_SPE_OWNER_KERNEL		= 1,
	AMUPMU_SPE_OWNER_AMUPMU		= 2,
	AMUPMU_SPE_OWNER_UNCLAIMED	= 3,
};

/**
 * enum amupmu_spe_config_flags - amupmu_spe_config.flags
 * @AMUPMU_SPE_CFG_DEFAULTS: take the filter (pmsfcr, pmsevfr, pmsnevfr,
 *	min_latency, interval, AMUPMU_SPE_CFG_JITTER) from the arm_spe debugfs
 *	knobs as they are now; those fields must then be 0
 * @AMUPMU_SPE_CFG_JITTER: PMSIRR_EL1.RND: the low 8 bits of each interval
 *	are random
 */
enum amupmu_spe_config_flags {
	AMUPMU_SPE_CFG_DEFAULTS	= 1 << 0,
	AMUPMU_SPE_CFG_JITTER	= 1 << 1,
};

/**
 * enum amupmu_spe_enables - amupmu_spe_config.enables (PMSCR_EL1 bits)
 * @AMUPMU_SPE_EN_USER: profile EL0 (E0SPE; E0HSPE on a VHE host)
 * @AMUPMU_SPE_EN_KERNEL: profile the kernel (E1SPE; E2SPE on a VHE host,
 *	where the kernel runs at EL2)
 * @AMUPMU_SPE_EN_CX: CONTEXT packets with CONTEXTIDR_EL1 (the pid with
 *	CONFIG_PID_IN_CONTEXTIDR; CONTEXTIDR_EL2 on a VHE host)
 * @AMUPMU_SPE_EN_PA: physical data addresses
 * @AMUPMU_SPE_EN_TS: TIMESTAMP packets (see @pct)
 *
 * At least one of USER and KERNEL. Every SPE configuration needs
 * CAP_PERFMON, whichever bits it sets.
 */
enum amupmu_spe_enables {
	AMUPMU_SPE_EN_USER	= 1 << 0,
	AMUPMU_SPE_EN_KERNEL	= 1 << 1,
	AMUPMU_SPE_EN_CX	= 1 << 3,
	AMUPMU_SPE_EN_PA	= 1 << 4,
	AMUPMU_SPE_EN_TS	= 1 << 5,
};

/**
 * enum amupmu_spe_pct - amupmu_spe_config.pct (PMSCR_EL1.PCT)
 * @AMUPMU_SPE_PCT_VIRTUAL: the virtual count (the kernel's clock at EL1)
 * @AMUPMU_SPE_PCT_PHYSICAL: the physical count
 * @AMUPMU_SPE_PCT_GUEST_PHYSICAL: the guest physical count (FEAT_ECV,
 *	SPEv1p2)
 */
enum amupmu_spe_pct {
	AMUPMU_SPE_PCT_VIRTUAL		= 0,
	AMUPMU_SPE_PCT_PHYSICAL		= 1,
	AMUPMU_SPE_PCT_GUEST_PHYSICAL	= 3,
};

/*
 * PMSFCR_EL1 as amupmu_spe_config.pmsfcr takes it: the Arm ARM's bits.
 * The TYPE bits select operation types (B, LD, ST; FP and SIMD with
 * FEAT_SPE_EFT); the TYPEm bits (FEAT_SPE_EFT) make a type a condition
 * that must hold instead of one that may.
 */
#define AMUPMU_SPE_PMSFCR_FE		0x1ULL
#define AMUPMU_SPE_PMSFCR_FT		0x2ULL
#define AMUPMU_SPE_PMSFCR_FL		0x4ULL
#define AMUPMU_SPE_PMSFCR_FNE		0x8ULL
#define AMUPMU_SPE_PMSFCR_B		0x10000ULL
#define AMUPMU_SPE_PMSFCR_LD		0x20000ULL
#define AMUPMU_SPE_PMSFCR_ST		0x40000ULL
#define AMUPMU_SPE_PMSFCR_FP		0x80000ULL
#define AMUPMU_SPE_PMSFCR_SIMD		0x100000ULL
#define AMUPMU_SPE_PMSFCR_BM		0x1000000000000ULL
#define AMUPMU_SPE_PMSFCR_LDM		0x2000000000000ULL
#define AMUPMU_SPE_PMSFCR_STM		0x4000000000000ULL
#define AMUPMU_SPE_PMSFCR_FPM		0x8000000000000ULL
#define AMUPMU_SPE_PMSFCR_SIMDM		0x10000000000000ULL

/**
 * struct amupmu_spe_config - AMUPMU_SPE_CONFIG: the session's SPE profiling
 * @size: sizeof(struct amupmu_spe_config)
 * @flags: enum amupmu_spe_config_flags
 * @enables: enum amupmu_spe_enables
 * @pct: enum amupmu_spe_pct, with AMUPMU_SPE_EN_TS (else 0)
 * @pmsfcr: PMSFCR_EL1 filter bits (AMUPMU_SPE_PMSFCR_*)
 * @pmsevfr: PMSEVFR_EL1: with FE, events a record must all have
 * @pmsnevfr: PMSNEVFR_EL1: with FnE, events a record must not have
 * @min_latency: PMSLATFR_EL1.MINLAT: with FL, the smallest total latency
 *	in cycles (1 to 2^CountSize - 1)
 * @interval: PMSIRR_EL1.INTERVAL: operations between samples, a multiple
 *	of 256, at least the minimum PMSIDR_EL1.Interval gives
 * @buf_pages: data pages of each CPU's buffer, a power of two from 2 to
 *	AMUPMU_SPE_BUF_PAGES_MAX (plus one header page)
 * @watermark: bytes: poll() reports EPOLLIN once a buffer holds this much
 *	unread; 0 for half the buffer; at most its size
 * @cpus_len: bytes at @cpus_uptr, a multiple of 8, at most 1024
 * @cpus_uptr: CPU set bitmap as for AMUPMU_PMU_CONFIG
 * @__reserved: must be 0
 *
 * Nothing is allocated and no register changes when it fails. The session
 * starts disabled.
 */
struct amupmu_spe_config {
	__u32 size;
	__u32 flags;
	__u32 enables;
	__u32 pct;
	__aligned_u64 pmsfcr;
	__aligned_u64 pmsevfr;
	__aligned_u64 pmsnevfr;
	__u32 min_latency;
	__u32 interval;
	__u32 buf_pages;
	__u32 watermark;
	__u32 cpus_len;
	__u32 __reserved;
	__aligned_u64 cpus_uptr;
};

#define AMUPMU_SPE_CONFIG_SIZE_VER0	72
#define AMUPMU_SPE_BUF_PAGES_MAX	1024

/**
 * enum amupmu_spe_ctl_op - amupmu_spe_ctl.op
 * @AMUPMU_SPE_CTL_ENABLE: start profiling on every CPU of the set
 * @AMUPMU_SPE_CTL_DISABLE: stop it; the buffers and their data stay
 * @AMUPMU_SPE_CTL_RELEASE: stop and free the configuration (the buffers
 *	are freed when the last mapping goes)
 */
enum amupmu_spe_ctl_op {
	AMUPMU_SPE_CTL_ENABLE	= 1,
	AMUPMU_SPE_CTL_DISABLE	= 2,
	AMUPMU_SPE_CTL_RELEASE	= 3,
};

/**
 * struct amupmu_spe_ctl - AMUPMU_SPE_CTL
 * @size: sizeof(struct amupmu_spe_ctl)
 * @flags: must be 0
 * @op: enum amupmu_spe_ctl_op; ENODEV without an SPE configuration
 * @__reserved: must be 0
 */
struct amupmu_spe_ctl {
	__u32 size;
	__u32 flags;
	__u32 op;
	__u32 __reserved;
};

#define AMUPMU_SPE_CTL_SIZE_VER0	16

/**
 * enum amupmu_spe_state - amupmu_spe_cpu.state and amupmu_spe_buf_header.flags
 * @AMUPMU_SPE_ENABLED: the session is enabled
 * @AMUPMU_SPE_OFFLINE: the CPU is offline (profiling resumes when it is back)
 * @AMUPMU_SPE_FAULT: a buffer fault or unknown syndrome stopped this CPU's
 *	profiling (see last_pmbsr); DISABLE then ENABLE starts it again
 * @AMUPMU_SPE_DISCARDING: the buffer is full: records go to a discard area
 *	and count as lost until the reader frees room
 */
enum amupmu_spe_state {
	AMUPMU_SPE_ENABLED	= 1 << 0,
	AMUPMU_SPE_OFFLINE	= 1 << 1,
	AMUPMU_SPE_FAULT	= 1 << 2,
	AMUPMU_SPE_DISCARDING	= 1 << 3,
};

/**
 * struct amupmu_spe_cpu - one CPU's entry of AMUPMU_SPE_READ
 * @cpu: the CPU
 * @state: enum amupmu_spe_state
 * @bytes: bytes of records published into the buffer
 * @records: records among them (the driver counts the packets that end a
 *	record)
 * @lost_bytes: bytes of records written into the discard area while the
 *	buffer was full
 * @truncations: buffer events with PMBSR_EL1.DL (a partial record lost)
 * @collisions: buffer events with PMBSR_EL1.COLL (samples lost to collisions)
 * @faults: buffer faults and unknown syndromes
 * @last_pmbsr: PMBSR_EL1 of the last fault (0 if none)
 * @events: buffer management events taken
 */
struct amupmu_spe_cpu {
	__u32 cpu;
	__u32 state;
	__aligned_u64 bytes;
	__aligned_u64 records;
	__aligned_u64 lost_bytes;
	__aligned_u64 truncations;
	__aligned_u64 collisions;
	__aligned_u64 faults;
	__aligned_u64 last_pmbsr;
	__aligned_u64 events;
};

#define AMUPMU_SPE_CPU_SIZE_VER0	72

/**
 * struct amupmu_spe_read - AMUPMU_SPE_READ: every CPU of the set in one call
 * @size: sizeof(struct amupmu_spe_read)
 * @flags: must be 0
 * @nr_cpus: in: entries at @cpus_uptr, at least the set's CPUs (else
 *	EINVAL), at most AMUPMU_SPE_READ_CPUS_MAX; out: entries written (the
 *	set's CPUs, ascending)
 * @entry_size: in: sizeof(struct amupmu_spe_cpu) as user space knows it, a
 *	multiple of 8 from AMUPMU_SPE_CPU_SIZE_VER0 to 4096; out: the kernel's
 * @cpus_uptr: in: the entries
 */
struct amupmu_spe_read {
	__u32 size;
	__u32 flags;
	__u32 nr_cpus;
	__u32 entry_size;
	__aligned_u64 cpus_uptr;
};

#define AMUPMU_SPE_READ_SIZE_VER0	24
#define AMUPMU_SPE_READ_CPUS_MAX	4096

/*
 * Each CPU's buffer is mapped from the session's file at
 * AMUPMU_SPE_MMAP_OFFSET(cpu), MAP_SHARED, 1 + buf_pages pages: page 0 is
 * struct amupmu_spe_buf_header, the data follows. Read data_head with
 * acquire semantics, consume bytes from data_tail to data_head (offsets
 * modulo data_size; records never wrap: the driver pads the end of the data
 * area with PAD packets (0x00) before it wraps, as the decoder skips them),
 * then store data_tail with release semantics. PROT_EXEC is refused; a
 * mapping without PROT_WRITE can only watch. The mapping holds the buffer
 * (and its RLIMIT_MEMLOCK charge) after RELEASE and close; fork() does not
 * copy it (VM_DONTCOPY). poll() on the file may start before the first
 * CONFIG: a configuration made later wakes it.
 */
#define AMUPMU_SPE_MMAP_OFFSET(cpu)	((1ULL << 40) + ((__u64)(cpu) << 32))
#define AMUPMU_SPE_BUF_VERSION		1

/**
 * struct amupmu_spe_buf_header - page 0 of a CPU's mapped SPE buffer
 * @version: AMUPMU_SPE_BUF_VERSION
 * @header_size: sizeof(struct amupmu_spe_buf_header) as the kernel knows it
 * @data_offset: offset of the data area in the mapping (one page)
 * @data_size: bytes of the data area, a power of two
 * @data_head: bytes ever published (monotonic; written by the kernel)
 * @data_tail: bytes ever consumed (written by the reader)
 * @lost_bytes: as amupmu_spe_cpu.lost_bytes
 * @flags: enum amupmu_spe_state of this CPU
 * @cpu: the CPU
 * @records: as amupmu_spe_cpu.records
 * @timer_freq: CNTFRQ_EL0, Hz of the TIMESTAMP packets' count
 */
struct amupmu_spe_buf_header {
	__u32 version;
	__u32 header_size;
	__aligned_u64 data_offset;
	__aligned_u64 data_size;
	__aligned_u64 data_head;
	__aligned_u64 data_tail;
	__aligned_u64 lost_bytes;
	__u32 flags;
	__u32 cpu;
	__aligned_u64 records;
	__aligned_u64 timer_freq;
};

#define AMUPMU_PMU_CONFIG	_IO(AMUPMU_TYPE, AMUPMU_CMD_PMU_CONFIG)
#define AMUPMU_PMU_CTL		_IO(AMUPMU_TYPE, AMUPMU_CMD_PMU_CTL)
#define AMUPMU_PMU_READ		_IO(AMUPMU_TYPE, AMUPMU_CMD_PMU_READ)
#define AMUPMU_AMU_READ		_IO(AMUPMU_TYPE, AMUPMU_CMD_AMU_READ)
#define AMUPMU_SPE_CONFIG	_IO(AMUPMU_TYPE, AMUPMU_CMD_SPE_CONFIG)
#define AMUPMU_SPE_CTL		_IO(AMUPMU_TYPE, AMUPMU_CMD_SPE_CTL)
#define AMUPMU_SPE_READ		_IO(AMUPMU_TYPE, AMUPMU_CMD_SPE_READ)

#endif /* _UAPI_LINUX_AMUPMU_H */
