/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amupmu: the driver's core, shared by all its files: the registers and
 * their backend, the device, discovery and the units' hotplug table, the
 * generic session, the mappable buffers and the sample ring, and what the
 * interfaces (sysfs, debugfs, netlink) offer the units. Each unit has its
 * own header for what the module and the interfaces call in it:
 * amupmu_amu.h, amupmu_pmu.h, amupmu_spe.h, amupmu_frames.h.
 */
#ifndef AMUPMU_H
#define AMUPMU_H

#include <linux/bits.h>
#include <linux/atomic.h>
#include <linux/cpuhotplug.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/amupmu.h>
#include <linux/amupmu_netlink.h>

/**
 * enum amupmu_reg - the registers discovery reads, one backend call each
 */
enum amupmu_reg {
	AMUPMU_REG_MIDR,
	AMUPMU_REG_REVIDR,
	AMUPMU_REG_ID_AA64DFR0,
	AMUPMU_REG_ID_AA64PFR0,
	AMUPMU_REG_PMCR,
	AMUPMU_REG_PMCEID0,
	AMUPMU_REG_PMCEID1,
	AMUPMU_REG_PMMIR,
	AMUPMU_REG_AMCFGR,
	AMUPMU_REG_AMCGCR,
	AMUPMU_REG_PMBIDR,
	AMUPMU_REG_PMSIDR,
	/* AMU: only read, and only on a CPU discovery found it usable on */
	AMUPMU_REG_AMCR,
	AMUPMU_REG_AMCNTENSET0,
	AMUPMU_REG_AMCNTENSET1,
	AMUPMU_REG_AMEVTYPER0,		/* + n, n < 16 */
	AMUPMU_REG_AMEVTYPER1 = AMUPMU_REG_AMEVTYPER0 + AMUPMU_AMU_MAX_COUNTERS,
	AMUPMU_REG_AMEVCNTR0 = AMUPMU_REG_AMEVTYPER1 + AMUPMU_AMU_MAX_COUNTERS,
	AMUPMU_REG_AMEVCNTR1 = AMUPMU_REG_AMEVCNTR0 + AMUPMU_AMU_MAX_COUNTERS,
	AMUPMU_REG_NR = AMUPMU_REG_AMEVCNTR1 + AMUPMU_AMU_MAX_COUNTERS,
};

/* AMCFGR_EL0 and AMCGCR_EL0 fields (Arm ARM D23.4; the kernel has no definitions) */
#define AMUPMU_AMCFGR_N		GENMASK(7, 0)	/* counters - 1 */
#define AMUPMU_AMCFGR_SIZE	GENMASK(13, 8)	/* counter width - 1 */
#define AMUPMU_AMCFGR_HDBG	BIT(24)
#define AMUPMU_AMCFGR_NCG	GENMASK(31, 28)	/* counter groups - 1 */
#define AMUPMU_AMCGCR_CG0NC	GENMASK(7, 0)
#define AMUPMU_AMCGCR_CG1NC	GENMASK(15, 8)

/**
 * enum amupmu_frame_unit - which memory-mapped frame of a CPU
 * @AMUPMU_FRAME_AMU: the external AMU register frame
 * @AMUPMU_FRAME_PMU: the external PMU register frame
 */
enum amupmu_frame_unit {
	AMUPMU_FRAME_AMU,
	AMUPMU_FRAME_PMU,
};

struct dentry;

/**
 * struct amupmu_backend - where register values come from
 * @name: "hardware" or "mock", shown in sysfs
 * @mock_flags: AMUPMU_CPU_MOCK when AMU/SPE registers come from the model
 * @read: read @reg on the calling CPU; called with preemption disabled,
 *	only for registers whose unit the ID registers report as present
 * @frame_read: read the 32-bit register at @offset of @cpu's @unit frame,
 *	mapped at @base; called on @cpu, with its power domain up
 * @amu_start: the calling CPU's AMU is up (it came online, its AMU
 *	usable): what the registers' power domain does then; interrupts off.
 *	NULL: nothing (the hardware's counters run by themselves)
 * @amu_stop: the calling CPU's AMU goes down (it goes offline);
 *	interrupts off. NULL: nothing
 * @debugfs_init: add the backend's own files (a model's knobs and test
 *	hooks) to the driver's debugfs directory @dir. NULL: none
 * @exit: module unload, after the last session: stop whatever the backend
 *	runs by itself. NULL: nothing
 */
struct amupmu_backend {
	const char *name;
	u32 mock_flags;
	u64 (*read)(enum amupmu_reg reg);
	u32 (*frame_read)(unsigned int cpu, enum amupmu_frame_unit unit,
			  void __iomem *base, u32 offset);
	void (*amu_start)(void);
	void (*amu_stop)(void);
	void (*debugfs_init)(struct dentry *dir);
	void (*exit)(void);
};

/* amupmu_hw.c */
extern const struct amupmu_backend amupmu_hw_backend;
#ifdef CONFIG_AMUPMU_MOCK
/* amupmu_mock.c: the test builds' backend (amupmu_mock.h has the rest) */
extern const struct amupmu_backend amupmu_mock_backend;
#endif

/**
 * struct amupmu_device - the driver instance (there is one)
 * @lock: guards @cpus[], @exclusive and @pmu_irq; taken in process
 *	context only (ioctl, sysfs, hotplug callbacks, probe/remove)
 * @cpus: nr_cpu_ids entries indexed by CPU number: what discovery read on
 *	each CPU and its online state; allocated first at load, freed last
 * @hp_state: dynamic CPU hotplug state of the discovery callbacks
 * @misc: /dev/amupmu and its sysfs directory
 * @sysfs_live: @misc is registered, so sysfs adds the register files of a
 *	newly discovered CPU itself (from discovery's hotplug callback).
 *	Written under cpus_read_lock(), read in hotplug callbacks (which run
 *	under the hotplug write lock).
 * @backend: register backend, fixed at build time
 * @exclusive: the "amupmu,pmuv3" devicetree node bound: amupmu owns the
 *	PMU registers and the per-CPU overflow PPI @pmu_irq
 * @pmu_irq: Linux IRQ number of the PMU PPI when @exclusive, else 0
 */
struct amupmu_device {
	struct mutex lock; /* see @lock above */
	struct amupmu_cpu_info *cpus;
	enum cpuhp_state hp_state;
	struct miscdevice misc;
	bool sysfs_live;
	const struct amupmu_backend *backend;
	bool exclusive;
	int pmu_irq;
};

extern struct amupmu_device amupmu_dev;

/* amupmu_main.c: what INFO, sysfs and netlink report */
u64 amupmu_features(void);
u32 amupmu_pmu_owner(u64 features);

/**
 * struct amupmu_unit_ops - what a unit does when a CPU is discovered,
 *	comes online or goes offline
 * @discover: fill the unit's fields of the CPU's entry from its registers
 *	(amupmu_dev.backend); on the CPU, preemption off, under
 *	amupmu_dev.lock (must not take it or sleep), at its first online
 *	after load
 * @cpu_online: the CPU came online (@ci: a copy of its entry, online,
 *	taken before the first @cpu_online ran: what an earlier unit's
 *	@cpu_online changes in the entry is not in it); on the CPU, from its
 *	hotplug callback
 * @cpu_offline: the CPU goes offline; on the CPU, from its hotplug
 *	callback, its entry still online
 * @cpu_changed: the CPU's online (@online) or offline is complete: every
 *	unit's @cpu_online or @cpu_offline has run and its entry says which;
 *	@first: its first online since load (the entry was just discovered)
 *
 * Any member may be NULL. Discovery runs them from one CPU hotplug state,
 * in the order of the table amupmu_main.c gives amupmu_discovery_start()
 * (which says why that order):
 *  - online: the entry is read (first time: each @discover in table
 *    order) and marked online; then each @cpu_online in table order; then
 *    each @cpu_changed in table order;
 *  - offline: each @cpu_offline in reverse table order; then the entry is
 *    marked offline; then each @cpu_changed in table order.
 */
struct amupmu_unit_ops {
	void (*discover)(struct amupmu_cpu_info *ci);
	void (*cpu_online)(unsigned int cpu, const struct amupmu_cpu_info *ci);
	void (*cpu_offline)(unsigned int cpu);
	void (*cpu_changed)(unsigned int cpu, bool online, bool first);
};

/* amupmu_discovery.c */
int amupmu_cpus_alloc(void);
void amupmu_cpus_free(void);
int amupmu_discovery_start(const struct amupmu_unit_ops *const *units, unsigned int nr);
void amupmu_discovery_stop(void);
void amupmu_cpu_snapshot(unsigned int cpu, struct amupmu_cpu_info *out);

/* amupmu_session.c: the generic session (an open file) */
struct amupmu_session;
struct amupmu_spe_sess;
struct cpumask;
struct file;
struct poll_table_struct;
struct vm_area_struct;

#define AMUPMU_CPUS_LEN_MAX	1024	/* bytes of a CPU set bitmap */
int amupmu_cpuset_from_user(struct cpumask *mask, u64 uptr, u32 len);
struct amupmu_session *amupmu_session_alloc(void);
void amupmu_session_free(struct amupmu_session *s);
struct amupmu_spe_sess **amupmu_session_spe(struct amupmu_session *s);
bool *amupmu_session_amu_perfmon(struct amupmu_session *s);
ssize_t amupmu_session_read(struct amupmu_session *s, char __user *buf, size_t count,
			    bool nonblock);
__poll_t amupmu_session_poll(struct amupmu_session *s, struct file *filp,
			     struct poll_table_struct *wait);
int amupmu_session_mmap(struct amupmu_session *s, struct vm_area_struct *vma);

/**
 * struct amupmu_mbuf - a mappable, reference-counted buffer (amupmu_ring.c)
 * @ref: references: its owner, each mapping, readers
 * @mmaps: live mappings (VMAs)
 * @base: header page, then @pages data pages (vmalloc_user())
 * @pages: data pages
 * @cred: its creator's credentials, a reference held: their user
 *	(cred->user) is charged 1 + @pages pages (RLIMIT_MEMLOCK,
 *	user_struct.locked_vm), uncharged when the last reference goes, with
 *	the memory
 * @free: frees the owner's struct after the memory
 */
struct amupmu_mbuf {
	struct kref ref;
	atomic_t mmaps;
	void *base;
	unsigned int pages;
	const struct cred *cred;
	void (*free)(struct amupmu_mbuf *mb);
};

int amupmu_mbuf_init(struct amupmu_mbuf *mb, unsigned int pages,
		     void (*free)(struct amupmu_mbuf *mb));
void amupmu_mbuf_get(struct amupmu_mbuf *mb);
void amupmu_mbuf_put(struct amupmu_mbuf *mb);
bool amupmu_mbuf_mapped(const struct amupmu_mbuf *mb);
int amupmu_mbuf_mmap(struct amupmu_mbuf *mb, struct vm_area_struct *vma, unsigned long pgoff);

/* amupmu_ring.c: the sample ring */
struct amupmu_ring;
struct amupmu_ring *amupmu_ring_alloc(unsigned int pages);
void amupmu_ring_get(struct amupmu_ring *r);
void amupmu_ring_put(struct amupmu_ring *r);
unsigned int amupmu_ring_pages(const struct amupmu_ring *r);
bool amupmu_ring_mapped(const struct amupmu_ring *r);
void amupmu_ring_reset(struct amupmu_ring *r);
bool amupmu_ring_write(struct amupmu_ring *r, const void *rec, u32 len);
bool amupmu_ring_empty(struct amupmu_ring *r);
ssize_t amupmu_ring_read(struct amupmu_ring *r, char __user *buf, size_t count);
int amupmu_ring_mmap(struct amupmu_ring *r, struct vm_area_struct *vma);

/* amupmu_debugfs.c: the debugfs directory (test hooks in the mock build) */
#ifdef CONFIG_DEBUG_FS
void amupmu_debugfs_init(void);
void amupmu_debugfs_exit(void);
#else
static inline void amupmu_debugfs_init(void) { }
static inline void amupmu_debugfs_exit(void) { }
#endif

/* amupmu_sysfs.c */
extern const struct amupmu_unit_ops amupmu_sysfs_unit;
int amupmu_sysfs_init(void);
void amupmu_sysfs_exit(void);
void amupmu_sysfs_cpu_discovered(unsigned int cpu);
const char *amupmu_owner_name(u32 owner);

/* amupmu_netlink.c: the generic netlink family (events and dumps) */
#define AMUPMU_NL_KNOB_LEN	24	/* longest debugfs knob name + 1 */

/**
 * struct amupmu_nl_sess - a session as the netlink family reports it
 * @node: in the family's registry (amupmu_netlink.c's lock)
 * @id: its number, given by amupmu_nl_session_start()
 * @owner: thread group of the configuring process (a reference)
 * @uid: effective uid of the configuring process: who sees it in a
 *	SESSION_GET dump without CAP_PERFMON
 * @kind: enum amupmu_nl_session_kind
 * @cpus: its CPU set; unchanged while registered
 * @nr_events: PMU events (0 for SPE)
 * @evtyper: their PMEVTYPER values; unchanged while registered
 * @period: their sample periods; idem
 * @pmsfcr: SPE: PMSFCR_EL1
 * @pmsirr: SPE: PMSIRR_EL1
 */
struct amupmu_nl_sess {
	struct list_head node;
	u64 id;
	struct pid *owner;
	kuid_t uid;
	u32 kind;
	const struct cpumask *cpus;
	u32 nr_events;
	const u32 *evtyper;
	const u64 *period;
	u64 pmsfcr;
	u64 pmsirr;
};

extern const struct amupmu_unit_ops amupmu_nl_unit;
int amupmu_nl_init(void);
void amupmu_nl_exit(void);
void amupmu_nl_session_start(struct amupmu_nl_sess *ns);
void amupmu_nl_session_end(struct amupmu_nl_sess *ns);
void amupmu_nl_owner_event(u32 unit, u32 owner);
void amupmu_nl_knob_event(const char *name, u64 old, u64 new);
void amupmu_nl_ring_lost(u64 id, unsigned int cpu, u64 lost);
void amupmu_nl_spe_buffer(u64 id, unsigned int cpu, u32 what, u64 pmbsr);
void amupmu_nl_throttle(u64 id, unsigned int cpu, u64 throttled);

#endif /* AMUPMU_H */
