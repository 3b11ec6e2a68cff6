/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * amupmu: the generic netlink family "amupmu" (events and dumps).
 *
 * Documentation/netlink/specs/amupmu.yaml describes the same family for
 * generic clients (the kernel's ynl); make check compares the two. See
 * Documentation/userspace-api/amupmu-netlink.rst.
 *
 * Conventions:
 *  - Resolve the family by AMUPMU_NL_FAMILY_NAME (CTRL_CMD_GETFAMILY);
 *    AMUPMU_NL_FAMILY_VERSION is the genlmsghdr.version the kernel sends
 *    and the one requests should carry. New commands and attributes are
 *    added at the ends of their enums; numbers never change.
 *  - Validation is strict: an attribute a command does not take, a wrong
 *    type or length, a value out of range are refused with EINVAL and an
 *    extended ACK that names the attribute.
 *  - Events are not netlink multicast: a socket sends
 *    AMUPMU_NL_CMD_SUBSCRIBE with the groups it wants (enum
 *    amupmu_nl_group); the kernel then sends each event of those groups to
 *    that socket until it subscribes again or closes. Groups that name
 *    processes or describe counters need CAP_PERFMON (EACCES otherwise),
 *    checked on the socket's opener and on the sender, also for a request
 *    sent to an explicit address.
 *  - Every event carries AMUPMU_NL_A_SEQ, a 64-bit sequence number of its
 *    group: consecutive events of a group have consecutive numbers, so a
 *    listener sees what it missed (a full receive buffer, ENOBUFS, or the
 *    kernel's own event queue overflowing).
 */
#ifndef _UAPI_LINUX_AMUPMU_NETLINK_H
#define _UAPI_LINUX_AMUPMU_NETLINK_H

#define AMUPMU_NL_FAMILY_NAME		"amupmu"
#define AMUPMU_NL_FAMILY_VERSION	1

/**
 * enum amupmu_nl_group - event groups, AMUPMU_NL_A_GROUPS bit n = group n
 * @AMUPMU_NL_GROUP_CPU: CPU online/offline with the discovery summary, PMU
 *	and SPE ownership changes. Open to every user (like AMUPMU_INFO).
 * @AMUPMU_NL_GROUP_SESSION: sessions start and end (owner pid, kind), SPE
 *	debugfs knob changes (knob, old, new, writer pid). CAP_PERFMON.
 * @AMUPMU_NL_GROUP_BUFFER: a sample ring losing records, sample interrupts
 *	throttled, SPE buffer full, fault or collision with the PMBSR_EL1
 *	syndrome. CAP_PERFMON.
 */
enum amupmu_nl_group {
	AMUPMU_NL_GROUP_CPU,
	AMUPMU_NL_GROUP_SESSION,
	AMUPMU_NL_GROUP_BUFFER,

	/* private: */
	__AMUPMU_NL_GROUP_MAX,
	AMUPMU_NL_GROUP_MAX = __AMUPMU_NL_GROUP_MAX - 1
};

#define AMUPMU_NL_GROUPS_ALL	((1U << __AMUPMU_NL_GROUP_MAX) - 1)

/**
 * enum amupmu_nl_session_kind - AMUPMU_NL_A_SESSION_KIND
 * @AMUPMU_NL_SESSION_PMU: a PMU counting/sampling group (AMUPMU_PMU_CONFIG)
 * @AMUPMU_NL_SESSION_SPE: an SPE configuration (AMUPMU_SPE_CONFIG)
 */
enum amupmu_nl_session_kind {
	AMUPMU_NL_SESSION_PMU = 1,
	AMUPMU_NL_SESSION_SPE = 2,
};

/**
 * enum amupmu_nl_unit - AMUPMU_NL_A_UNIT of an ownership change
 * @AMUPMU_NL_UNIT_PMU: the PMU (AMUPMU_NL_A_OWNER: enum amupmu_pmu_owner)
 * @AMUPMU_NL_UNIT_SPE: SPE (AMUPMU_NL_A_OWNER: enum amupmu_spe_owner)
 */
enum amupmu_nl_unit {
	AMUPMU_NL_UNIT_PMU = 1,
	AMUPMU_NL_UNIT_SPE = 2,
};

/**
 * enum amupmu_nl_spe_event - AMUPMU_NL_A_SPE_EVENT
 * @AMUPMU_NL_SPE_FULL: the profiling buffer filled (PMBSR_EL1 BSC full)
 * @AMUPMU_NL_SPE_FAULT: a fault or external abort stopped profiling on the
 *	CPU until the session is configured again (PMBSR_EL1 in the event)
 * @AMUPMU_NL_SPE_COLLISION: records were lost to a collision (PMBSR_EL1.COLL)
 */
enum amupmu_nl_spe_event {
	AMUPMU_NL_SPE_FULL = 1,
	AMUPMU_NL_SPE_FAULT = 2,
	AMUPMU_NL_SPE_COLLISION = 3,
};

/**
 * enum amupmu_nl_attrs - attributes of every command and event
 * @AMUPMU_NL_A_PAD: padding of the 64-bit attributes
 * @AMUPMU_NL_A_SEQ: u64, event sequence number within its group
 * @AMUPMU_NL_A_TIME: u64, CLOCK_MONOTONIC nanoseconds when the event happened
 * @AMUPMU_NL_A_CPU: u32, CPU number (in CPU_GET: which CPU)
 * @AMUPMU_NL_A_CPU_FLAGS: u32, enum amupmu_cpu_flags
 * @AMUPMU_NL_A_MIDR: u64, MIDR_EL1
 * @AMUPMU_NL_A_REVIDR: u64, REVIDR_EL1
 * @AMUPMU_NL_A_PMU_VERSION: u32, ID_AA64DFR0_EL1.PMUVer
 * @AMUPMU_NL_A_PMU_COUNTERS: u32, PMCR_EL0.N
 * @AMUPMU_NL_A_PMU_COUNTERS_FREE: u32, as amupmu_cpu_info.pmu_counters_free
 * @AMUPMU_NL_A_AMU_VERSION: u32, ID_AA64PFR0_EL1.AMU
 * @AMUPMU_NL_A_SPE_VERSION: u32, ID_AA64DFR0_EL1.PMSVer
 * @AMUPMU_NL_A_PMSIDR: u64, PMSIDR_EL1 (with AMUPMU_CPU_SPE)
 * @AMUPMU_NL_A_AMCFGR: u64, AMCFGR_EL0 (with AMUPMU_CPU_AMU)
 * @AMUPMU_NL_A_PMU_OWNER: u32, enum amupmu_pmu_owner
 * @AMUPMU_NL_A_SPE_OWNER: u32, enum amupmu_spe_owner
 * @AMUPMU_NL_A_PMU_SESSIONS: u32, PMU sessions whose CPU set has the CPU
 * @AMUPMU_NL_A_SPE_SESSIONS: u32, SPE sessions whose CPU set has the CPU
 *	(at most 1: SPE is exclusive per CPU)
 * @AMUPMU_NL_A_FEATURES: u64, enum amupmu_features
 * @AMUPMU_NL_A_NR_CPUS: u32, possible CPU numbers (nr_cpu_ids)
 * @AMUPMU_NL_A_GENERATION: u32, bumped by every CPU hotplug, ownership and
 *	session change (dumps are marked NLM_F_DUMP_INTR when it moved)
 * @AMUPMU_NL_A_EVENTS_DROPPED: u64, events lost because the kernel's event
 *	queue was full (their sequence numbers are skipped)
 * @AMUPMU_NL_A_EVENTS_UNDELIVERED: u64, events one subscriber did not get
 *	because its receive buffer was full (it read ENOBUFS)
 * @AMUPMU_NL_A_SUBSCRIBERS: u32, sockets subscribed now
 * @AMUPMU_NL_A_GROUPS: u32, bitmap of enum amupmu_nl_group
 * @AMUPMU_NL_A_SESSION_ID: u64, a session's number, unique while the module
 *	stays loaded
 * @AMUPMU_NL_A_SESSION_KIND: u32, enum amupmu_nl_session_kind
 * @AMUPMU_NL_A_PID: u32, a process (thread group) id in the pid namespace
 *	of the receiving socket's opener; 0 when not visible there
 * @AMUPMU_NL_A_CPUS: binary, CPU set: __u64 words, CPU n is bit n % 64 of
 *	word n / 64 (as the ioctls' CPU sets)
 * @AMUPMU_NL_A_EVENT: nest, multi: one per event of a PMU session
 *	(enum amupmu_nl_event_attrs)
 * @AMUPMU_NL_A_UNIT: u32, enum amupmu_nl_unit
 * @AMUPMU_NL_A_OWNER: u32, the unit's new owner
 * @AMUPMU_NL_A_KNOB: string, name of an SPE debugfs knob (arm_spe/<name>)
 * @AMUPMU_NL_A_OLD: u64, the knob's value before
 * @AMUPMU_NL_A_NEW: u64, the knob's value after
 * @AMUPMU_NL_A_LOST: u64, records the CPU's part of the ring lost so far
 * @AMUPMU_NL_A_SPE_EVENT: u32, enum amupmu_nl_spe_event
 * @AMUPMU_NL_A_PMBSR: u64, PMBSR_EL1 of an SPE buffer event
 * @AMUPMU_NL_A_PMSFCR: u64, PMSFCR_EL1 of an SPE session
 * @AMUPMU_NL_A_PMSIRR: u64, PMSIRR_EL1 of an SPE session
 * @AMUPMU_NL_A_THROTTLED: u64, times the session's sample interrupts were
 *	throttled on the CPU so far (as amupmu_pmu_read.throttled)
 * @AMUPMU_NL_A_LOST_TOTAL: u64, sample records lost on the CPU because a
 *	session's ring was full, summed over every session of every user
 *	since the module loaded (each session's amupmu_pmu_read.lost on the
 *	CPU adds to it, a RESET of the session does not take it back);
 *	unchanged by CPU hotplug (ABI 2.5). CPU_GET, CAP_PERFMON only.
 * @AMUPMU_NL_A_THROTTLED_TOTAL: u64, throttles of a session's sample
 *	interrupts on the CPU, idem (each session's
 *	amupmu_pmu_read.throttled on the CPU adds to it; ABI 2.5). CPU_GET,
 *	CAP_PERFMON only.
 */
enum amupmu_nl_attrs {
	AMUPMU_NL_A_UNSPEC,
	AMUPMU_NL_A_PAD,
	AMUPMU_NL_A_SEQ,
	AMUPMU_NL_A_TIME,
	AMUPMU_NL_A_CPU,
	AMUPMU_NL_A_CPU_FLAGS,
	AMUPMU_NL_A_MIDR,
	AMUPMU_NL_A_REVIDR,
	AMUPMU_NL_A_PMU_VERSION,
	AMUPMU_NL_A_PMU_COUNTERS,
	AMUPMU_NL_A_PMU_COUNTERS_FREE,
	AMUPMU_NL_A_AMU_VERSION,
	AMUPMU_NL_A_SPE_VERSION,
	AMUPMU_NL_A_PMSIDR,
	AMUPMU_NL_A_AMCFGR,
	AMUPMU_NL_A_PMU_OWNER,
	AMUPMU_NL_A_SPE_OWNER,
	AMUPMU_NL_A_PMU_SESSIONS,
	AMUPMU_NL_A_SPE_SESSIONS,
	AMUPMU_NL_A_FEATURES,
	AMUPMU_NL_A_NR_CPUS,
	AMUPMU_NL_A_GENERATION,
	AMUPMU_NL_A_EVENTS_DROPPED,
	AMUPMU_NL_A_EVENTS_UNDELIVERED,
	AMUPMU_NL_A_SUBSCRIBERS,
	AMUPMU_NL_A_GROUPS,
	AMUPMU_NL_A_SESSION_ID,
	AMUPMU_NL_A_SESSION_KIND,
	AMUPMU_NL_A_PID,
	AMUPMU_NL_A_CPUS,
	AMUPMU_NL_A_EVENT,
	AMUPMU_NL_A_UNIT,
	AMUPMU_NL_A_OWNER,
	AMUPMU_NL_A_KNOB,
	AMUPMU_NL_A_OLD,
	AMUPMU_NL_A_NEW,
	AMUPMU_NL_A_LOST,
	AMUPMU_NL_A_SPE_EVENT,
	AMUPMU_NL_A_PMBSR,
	AMUPMU_NL_A_PMSFCR,
	AMUPMU_NL_A_PMSIRR,
	AMUPMU_NL_A_THROTTLED,
	AMUPMU_NL_A_LOST_TOTAL,
	AMUPMU_NL_A_THROTTLED_TOTAL,

	/* private: */
	__AMUPMU_NL_A_MAX,
	AMUPMU_NL_A_MAX = __AMUPMU_NL_A_MAX - 1
};

/**
 * enum amupmu_nl_event_attrs - inside AMUPMU_NL_A_EVENT
 * @AMUPMU_NL_EVENT_A_PAD: padding
 * @AMUPMU_NL_EVENT_A_TYPE: u32, the PMEVTYPER<n>_EL0 value programmed
 * @AMUPMU_NL_EVENT_A_PERIOD: u64, sample period (0: counting only)
 */
enum amupmu_nl_event_attrs {
	AMUPMU_NL_EVENT_A_UNSPEC,
	AMUPMU_NL_EVENT_A_PAD,
	AMUPMU_NL_EVENT_A_TYPE,
	AMUPMU_NL_EVENT_A_PERIOD,

	/* private: */
	__AMUPMU_NL_EVENT_A_MAX,
	AMUPMU_NL_EVENT_A_MAX = __AMUPMU_NL_EVENT_A_MAX - 1
};

/**
 * enum amupmu_nl_cmds - commands (requests) and events (kernel to user)
 * @AMUPMU_NL_CMD_STATUS_GET: do: the family's state (FEATURES, NR_CPUS,
 *	PMU_OWNER, SPE_OWNER, GENERATION, EVENTS_DROPPED, EVENTS_UNDELIVERED,
 *	SUBSCRIBERS). Takes no attribute. Open to every user.
 * @AMUPMU_NL_CMD_CPU_GET: do (AMUPMU_NL_A_CPU required) or dump (every
 *	possible CPU): the CPU's INFO entry summary, owners and session
 *	counts. Open to every user. A caller with CAP_PERFMON (or
 *	CAP_SYS_ADMIN; checked as for SESSION_GET, a dump when it starts)
 *	also gets LOST_TOTAL and THROTTLED_TOTAL, every session's lost
 *	samples and throttles on the CPU; any other caller does not (they
 *	describe other users' sampling). ENODEV for a CPU number that is not
 *	possible.
 * @AMUPMU_NL_CMD_SESSION_GET: dump: the sessions (SESSION_ID,
 *	SESSION_KIND, PID, CPUS, then EVENT nests or PMSFCR/PMSIRR); pids are
 *	translated. Every session for a caller with CAP_PERFMON (or
 *	CAP_SYS_ADMIN), checked on both the socket's opener and the process
 *	that starts the dump (also for a request sent to an explicit address);
 *	any other caller gets only the sessions configured by its own
 *	effective uid (when the socket's opener has that uid too; else none).
 * @AMUPMU_NL_CMD_SUBSCRIBE: do: AMUPMU_NL_A_GROUPS (required) replaces the
 *	sending socket's subscription; 0 ends it. EACCES for a group that
 *	needs CAP_PERFMON without it; EBUSY when AMUPMU_NL_SUBSCRIBERS_MAX
 *	sockets are subscribed.
 * @AMUPMU_NL_CMD_CPU_ONLINE: event (GROUP_CPU): SEQ, TIME, CPU, CPU_FLAGS,
 *	MIDR, PMU_VERSION, PMU_COUNTERS, AMU_VERSION, SPE_VERSION
 * @AMUPMU_NL_CMD_CPU_OFFLINE: event (GROUP_CPU): SEQ, TIME, CPU, CPU_FLAGS
 * @AMUPMU_NL_CMD_OWNER_CHANGE: event (GROUP_CPU): SEQ, TIME, UNIT, OWNER
 * @AMUPMU_NL_CMD_SESSION_START: event (GROUP_SESSION): SEQ, TIME,
 *	SESSION_ID, SESSION_KIND, PID
 * @AMUPMU_NL_CMD_SESSION_END: event (GROUP_SESSION): idem
 * @AMUPMU_NL_CMD_KNOB_CHANGE: event (GROUP_SESSION): SEQ, TIME, KNOB, OLD,
 *	NEW, PID (the writer)
 * @AMUPMU_NL_CMD_RING_LOST: event (GROUP_BUFFER): SEQ, TIME, SESSION_ID,
 *	CPU, LOST; sent when a CPU's lost count reaches 1, 2, 4, 8, ...
 * @AMUPMU_NL_CMD_SPE_BUFFER: event (GROUP_BUFFER): SEQ, TIME, SESSION_ID,
 *	CPU, SPE_EVENT, PMBSR
 * @AMUPMU_NL_CMD_THROTTLE: event (GROUP_BUFFER): SEQ, TIME, SESSION_ID, CPU,
 *	THROTTLED; a session's sample interrupts on the CPU were throttled
 *	until the next tick, sent when its throttled count reaches 1, 2, 4,
 *	8, ... (unthrottling is at the next tick, always: no event of its own)
 */
enum amupmu_nl_cmds {
	AMUPMU_NL_CMD_UNSPEC,
	AMUPMU_NL_CMD_STATUS_GET,
	AMUPMU_NL_CMD_CPU_GET,
	AMUPMU_NL_CMD_SESSION_GET,
	AMUPMU_NL_CMD_SUBSCRIBE,
	AMUPMU_NL_CMD_CPU_ONLINE,
	AMUPMU_NL_CMD_CPU_OFFLINE,
	AMUPMU_NL_CMD_OWNER_CHANGE,
	AMUPMU_NL_CMD_SESSION_START,
	AMUPMU_NL_CMD_SESSION_END,
	AMUPMU_NL_CMD_KNOB_CHANGE,
	AMUPMU_NL_CMD_RING_LOST,
	AMUPMU_NL_CMD_SPE_BUFFER,
	AMUPMU_NL_CMD_THROTTLE,

	/* private: */
	__AMUPMU_NL_CMD_MAX,
	AMUPMU_NL_CMD_MAX = __AMUPMU_NL_CMD_MAX - 1
};

/* Sockets that may be subscribed at once. */
#define AMUPMU_NL_SUBSCRIBERS_MAX	64

#endif /* _UAPI_LINUX_AMUPMU_NETLINK_H */
