// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: the Statistical Profiling Extension.
 *
 * SPE discovery per CPU (on that CPU); the filter and interval
 * configuration an SPE session programs (PMSFCR_EL1, PMSEVFR_EL1,
 * PMSNEVFR_EL1, PMSLATFR_EL1, PMSIRR_EL1), checked against the CPUs'
 * PMSIDR_EL1 and SPE version as the Arm ARM (DDI 0487, D24 and the
 * SPEFilterBy* pseudocode) defines them. The defaults a session can ask
 * for are the arm_spe debugfs knobs (amupmu_debugfs.c), changed only
 * through amupmu_spe_defaults_set(), which checks the whole result first:
 * a refused change leaves them as they were.
 *
 * Sessions (below "sessions"): the profiling buffers, their programming,
 * the buffer management interrupt and CPU hotplug / power-down.
 *
 * Errors, in this order (so that the errno does not depend on which CPU
 * is looked at first): a value the architecture gives no meaning at any
 * SPE version, EINVAL; a feature a CPU lacks, EOPNOTSUPP; a value out of
 * that CPU's range (interval below PMSIDR_EL1.Interval's minimum, MINLAT
 * beyond PMSIDR_EL1.CountSize's width) or a CONSTRAINED UNPREDICTABLE
 * combination (FL with MINLAT 0; FT with no type without FEAT_SPE_EFT),
 * EINVAL.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/cpu_pm.h>
#include <linux/cpumask.h>
#include <linux/irq_work.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <asm/arch_timer.h>
#include <asm/barrier.h>
#include <asm/mmu.h>
#include <asm/sysreg.h>

#include "amupmu.h"
#include "amupmu_compat.h"
#include "amupmu_spe.h"
#include "amupmu_spe_model.h"

/* The PMSFCR_EL1 bits a configuration may set (FDS: no PMSDSFR_EL1 support yet). */
#define AMUPMU_PMSFCR_VALID	(PMSFCR_EL1_FE | PMSFCR_EL1_FT | PMSFCR_EL1_FL | \
				 PMSFCR_EL1_FnE | PMSFCR_EL1_TYPE | PMSFCR_EL1_TYPEm)
#define AMUPMU_PMSFCR_EFT	(PMSFCR_EL1_FP | PMSFCR_EL1_SIMD | PMSFCR_EL1_TYPEm)
#define AMUPMU_PMSIRR_VALID	(PMSIRR_EL1_INTERVAL | PMSIRR_EL1_RND)

static DEFINE_PER_CPU(u64, amupmu_spe_pmbidr_pcpu);

static DEFINE_MUTEX(amupmu_spe_lock);	/* amupmu_spe_defaults */
static struct amupmu_spe_filter amupmu_spe_defaults;

/*
 * Like the kernel's arm_spe_pmu, PMSIDR_EL1 is read only when
 * PMBIDR_EL1.P is 0: when firmware keeps the profiling buffer (P = 1)
 * the PMS* registers trap to EL3 and the CPU counts as one without SPE.
 */
static void amupmu_spe_read_ids(struct amupmu_cpu_info *ci, u64 *pmbidr)
{
	u64 (*rd)(enum amupmu_reg reg) = amupmu_dev.backend->read;

	*pmbidr = 0;
	ci->flags &= ~AMUPMU_CPU_SPE;
	ci->pmsidr = 0;
	if (!ci->spe_version)
		return;
	*pmbidr = rd(AMUPMU_REG_PMBIDR);
	if (*pmbidr & PMBIDR_EL1_P)
		return;
	ci->flags |= AMUPMU_CPU_SPE;
	ci->pmsidr = rd(AMUPMU_REG_PMSIDR);
}

/**
 * amupmu_spe_discover() - SPE of this CPU, into its discovery entry
 * @ci: the entry (spe_version set), on its CPU with preemption off
 */
static void amupmu_spe_discover(struct amupmu_cpu_info *ci)
{
	u64 pmbidr;

	amupmu_spe_read_ids(ci, &pmbidr);
	this_cpu_write(amupmu_spe_pmbidr_pcpu, pmbidr);
}

/* discovery only: the sessions' hotplug is a state of its own (amupmu_spe_init()) */
const struct amupmu_unit_ops amupmu_spe_unit = {
	.discover = amupmu_spe_discover,
};

/* PMBIDR_EL1 of @cpu as discovery read it (0: not discovered or no SPE). */
u64 amupmu_spe_pmbidr(unsigned int cpu)
{
	return READ_ONCE(per_cpu(amupmu_spe_pmbidr_pcpu, cpu));
}

#ifdef CONFIG_AMUPMU_MOCK
static void amupmu_spe_rediscover_fn(void *arg)
{
	struct amupmu_cpu_info *ci = arg;
	u64 dfr0 = amupmu_dev.backend->read(AMUPMU_REG_ID_AA64DFR0);

	ci->id_aa64dfr0 = dfr0;
	ci->spe_version = FIELD_GET(ID_AA64DFR0_EL1_PMSVer, dfr0);
	amupmu_spe_discover(ci);
}

/**
 * amupmu_spe_rediscover() - discover @cpu's SPE again (the mock's spe_model)
 * @cpu: an online CPU, under cpus_read_lock()
 *
 * Return: 0, or the errno of the cross call.
 */
int amupmu_spe_rediscover(unsigned int cpu)
{
	struct amupmu_cpu_info *c = &amupmu_dev.cpus[cpu], ci;
	int ret;

	mutex_lock(&amupmu_dev.lock);
	ci = *c;
	ret = smp_call_function_single(cpu, amupmu_spe_rediscover_fn, &ci, 1);
	if (!ret) {
		if (ci.flags & (AMUPMU_CPU_AMU | AMUPMU_CPU_SPE))
			ci.flags |= amupmu_dev.backend->mock_flags;
		else
			ci.flags &= ~amupmu_dev.backend->mock_flags;
		*c = ci;
	}
	mutex_unlock(&amupmu_dev.lock);
	return ret;
}
#endif

/* Smallest sampling interval PMSIDR_EL1.Interval allows, in operations. */
static u32 amupmu_spe_min_interval(u64 pmsidr)
{
	return amupmu_spe_min_interval_ops(FIELD_GET(PMSIDR_EL1_INTERVAL, pmsidr));
}

/* Largest PMSLATFR_EL1.MINLAT: the counters' width, PMSIDR_EL1.CountSize. */
static u32 amupmu_spe_max_minlat(u64 pmsidr)
{
	/* 0b0011: 16-bit saturating; 0b0010 (and reserved values): 12-bit */
	return FIELD_GET(PMSIDR_EL1_COUNTSIZE, pmsidr) == 3 ? 0xffff : 0xfff;
}

/* PMSEVFR_EL1/PMSNEVFR_EL1 bits that are RES0 at SPE version @pmsver. */
static u64 amupmu_spe_evfr_res0(unsigned int pmsver)
{
	switch (pmsver) {
	case ID_AA64DFR0_EL1_PMSVer_IMP:
		return PMSEVFR_EL1_RES0_IMP;
	case ID_AA64DFR0_EL1_PMSVer_V1P1:
		return PMSEVFR_EL1_RES0_V1P1;
	case ID_AA64DFR0_EL1_PMSVer_V1P2:
	case ID_AA64DFR0_EL1_PMSVer_V1P3:
		return PMSEVFR_EL1_RES0_V1P2;
	default:
		return PMSEVFR_EL1_RES0_V1P4;
	}
}

/* What the architecture defines at no version: EINVAL whatever the CPU. */
static int amupmu_spe_check_shape(const struct amupmu_spe_filter *f)
{
	if (f->pmsfcr & ~AMUPMU_PMSFCR_VALID)
		return -EINVAL;
	if ((f->pmsevfr | f->pmsnevfr) & PMSEVFR_EL1_RES0_V1P4)
		return -EINVAL;
	if (f->pmslatfr & ~PMSLATFR_EL1_MINLAT)
		return -EINVAL;
	if (f->pmsirr & ~AMUPMU_PMSIRR_VALID)
		return -EINVAL;
	return 0;
}

/* The checks that depend on one CPU's SPE version and PMSIDR_EL1. */
static int amupmu_spe_check_cpu(const struct amupmu_spe_filter *f, unsigned int pmsver,
				u64 pmsidr)
{
	u64 fcr = f->pmsfcr;
	bool eft = pmsidr & PMSIDR_EL1_EFT;

	/* features the CPU lacks */
	if (((fcr & PMSFCR_EL1_FE) && !(pmsidr & PMSIDR_EL1_FE)) ||
	    ((fcr & PMSFCR_EL1_FT) && !(pmsidr & PMSIDR_EL1_FT)) ||
	    ((fcr & PMSFCR_EL1_FL) && !(pmsidr & PMSIDR_EL1_FL)) ||
	    (((fcr & PMSFCR_EL1_FnE) || f->pmsnevfr) && !(pmsidr & PMSIDR_EL1_FnE)) ||
	    ((fcr & AMUPMU_PMSFCR_EFT) && !eft))
		return -EOPNOTSUPP;
	if ((f->pmsevfr | f->pmsnevfr) & amupmu_spe_evfr_res0(pmsver))
		return -EOPNOTSUPP;
	/* ranges */
	if ((f->pmsirr & PMSIRR_EL1_INTERVAL) < amupmu_spe_min_interval(pmsidr))
		return -EINVAL;
	if (FIELD_GET(PMSLATFR_EL1_MINLAT, f->pmslatfr) > amupmu_spe_max_minlat(pmsidr))
		return -EINVAL;
	/* CONSTRAINED UNPREDICTABLE */
	if ((fcr & PMSFCR_EL1_FL) && !FIELD_GET(PMSLATFR_EL1_MINLAT, f->pmslatfr))
		return -EINVAL;
	if ((fcr & PMSFCR_EL1_FT) && !(fcr & PMSFCR_EL1_TYPE) && !eft)
		return -EINVAL;
	return 0;
}

/**
 * amupmu_spe_filter_check() - is @f a configuration every CPU of @cpus can run?
 * @f: the configuration
 * @cpus: the CPUs, or NULL for every CPU with SPE
 *
 * CPUs without SPE in @cpus are the caller's business (a session refuses
 * them itself). Takes amupmu_dev.lock.
 *
 * Return: 0, -EINVAL or -EOPNOTSUPP (see the top of this file), -ENODEV
 * when no CPU considered has SPE.
 */
int amupmu_spe_filter_check(const struct amupmu_spe_filter *f, const struct cpumask *cpus)
{
	unsigned int cpu, seen = 0;
	int ret, ret_range = 0;

	ret = amupmu_spe_check_shape(f);
	if (ret)
		return ret;
	mutex_lock(&amupmu_dev.lock);
	for_each_possible_cpu(cpu) {
		const struct amupmu_cpu_info *ci = &amupmu_dev.cpus[cpu];

		if ((cpus && !cpumask_test_cpu(cpu, cpus)) || !(ci->flags & AMUPMU_CPU_SPE))
			continue;
		seen++;
		ret = amupmu_spe_check_cpu(f, ci->spe_version, ci->pmsidr);
		if (ret == -EOPNOTSUPP)
			break;
		if (ret && !ret_range)
			ret_range = ret;
		ret = 0;
	}
	mutex_unlock(&amupmu_dev.lock);
	if (ret)
		return ret;
	if (!seen)
		return -ENODEV;
	return ret_range;
}

/* The defaults a session asks for (the arm_spe knobs). */
void amupmu_spe_defaults_get(struct amupmu_spe_filter *f)
{
	mutex_lock(&amupmu_spe_lock);
	*f = amupmu_spe_defaults;
	mutex_unlock(&amupmu_spe_lock);
}

/**
 * amupmu_spe_defaults_set() - change one field of the defaults
 * @reg: which register (enum amupmu_spe_reg)
 * @mask: the field's bits in it
 * @val: its new bits, in place (within @mask)
 * @old: gets the register's value before
 *
 * The result is checked against every CPU with SPE, the other fields as
 * they are; a refused change changes nothing.
 *
 * Return: 0, -EINVAL, -EOPNOTSUPP, -ENODEV (no CPU has SPE).
 */
int amupmu_spe_defaults_set(enum amupmu_spe_reg reg, u64 mask, u64 val, u64 *old)
{
	struct amupmu_spe_filter f;
	u64 *r;
	int ret;

	if (val & ~mask)
		return -EINVAL;
	mutex_lock(&amupmu_spe_lock);
	f = amupmu_spe_defaults;
	r = amupmu_spe_filter_reg(&f, reg);
	*old = *r;
	*r = (*r & ~mask) | val;
	ret = amupmu_spe_filter_check(&f, NULL);
	if (!ret)
		amupmu_spe_defaults = f;
	mutex_unlock(&amupmu_spe_lock);
	return ret;
}

/* ------------------------------------------------------------ registers */

static u64 amupmu_spe_hw_read(enum amupmu_spe_sysreg r)
{
	switch (r) {
	case AMUPMU_SPE_SR_PMSCR:
		return read_sysreg_s(SYS_PMSCR_EL1);
	case AMUPMU_SPE_SR_PMSICR:
		return read_sysreg_s(SYS_PMSICR_EL1);
	case AMUPMU_SPE_SR_PMSIRR:
		return read_sysreg_s(SYS_PMSIRR_EL1);
	case AMUPMU_SPE_SR_PMSFCR:
		return read_sysreg_s(SYS_PMSFCR_EL1);
	case AMUPMU_SPE_SR_PMSEVFR:
		return read_sysreg_s(SYS_PMSEVFR_EL1);
	case AMUPMU_SPE_SR_PMSNEVFR:
		return read_sysreg_s(SYS_PMSNEVFR_EL1);
	case AMUPMU_SPE_SR_PMSLATFR:
		return read_sysreg_s(SYS_PMSLATFR_EL1);
	case AMUPMU_SPE_SR_PMBLIMITR:
		return read_sysreg_s(SYS_PMBLIMITR_EL1);
	case AMUPMU_SPE_SR_PMBPTR:
		return read_sysreg_s(SYS_PMBPTR_EL1);
	case AMUPMU_SPE_SR_PMBSR:
		return read_sysreg_s(SYS_PMBSR_EL1);
	default:
		return 0;
	}
}

/*
 * On a VHE host the kernel runs at EL2 with HCR_EL2.E2H set, and its
 * accesses to PMSCR_EL1 go to PMSCR_EL2 (E0HSPE, E2SPE at the bits of
 * E0SPE, E1SPE): the kernel's arm_spe_pmu relies on the same redirection.
 */
static void amupmu_spe_hw_write(enum amupmu_spe_sysreg r, u64 val)
{
	switch (r) {
	case AMUPMU_SPE_SR_PMSCR:
		write_sysreg_s(val, SYS_PMSCR_EL1);
		break;
	case AMUPMU_SPE_SR_PMSICR:
		write_sysreg_s(val, SYS_PMSICR_EL1);
		break;
	case AMUPMU_SPE_SR_PMSIRR:
		write_sysreg_s(val, SYS_PMSIRR_EL1);
		break;
	case AMUPMU_SPE_SR_PMSFCR:
		write_sysreg_s(val, SYS_PMSFCR_EL1);
		break;
	case AMUPMU_SPE_SR_PMSEVFR:
		write_sysreg_s(val, SYS_PMSEVFR_EL1);
		break;
	case AMUPMU_SPE_SR_PMSNEVFR:
		write_sysreg_s(val, SYS_PMSNEVFR_EL1);
		break;
	case AMUPMU_SPE_SR_PMSLATFR:
		write_sysreg_s(val, SYS_PMSLATFR_EL1);
		break;
	case AMUPMU_SPE_SR_PMBLIMITR:
		write_sysreg_s(val, SYS_PMBLIMITR_EL1);
		break;
	case AMUPMU_SPE_SR_PMBPTR:
		write_sysreg_s(val, SYS_PMBPTR_EL1);
		break;
	case AMUPMU_SPE_SR_PMBSR:
		write_sysreg_s(val, SYS_PMBSR_EL1);
		break;
	default:
		break;
	}
}

/*
 * As arm_spe_pmu (and KVM's SPE save) before reading PMBPTR_EL1/PMBSR_EL1:
 * PSB CSYNC makes the CPU's sampling writes complete, DSB NSH waits for
 * them, ISB makes the later register reads see the updated values.
 */
static void amupmu_spe_hw_drain(void)
{
	psb_csync();
	dsb(nsh);
	isb();
}

const struct amupmu_spe_ops amupmu_spe_hw_ops = {
	.read = amupmu_spe_hw_read,
	.write = amupmu_spe_hw_write,
	.drain = amupmu_spe_hw_drain,
};

#ifdef CONFIG_AMUPMU_MOCK
static const struct amupmu_spe_ops *const amupmu_spe_regs = &amupmu_spe_mock_ops;
#else
static const struct amupmu_spe_ops *const amupmu_spe_regs = &amupmu_spe_hw_ops;
#endif

/* ------------------------------------------------------------ sessions */

#define AMUPMU_SPE_DISCARD_SIZE	(4 * PAGE_SIZE)	/* where records go while a buffer is full */

/**
 * struct amupmu_spe_buf - one CPU's profiling buffer
 * @mb: its memory (header page, data), references (configuration, mappings)
 * @hdr: the header page, shared with user space
 * @data: the data area; PMBPTR_EL1 points into it (a kernel address)
 * @size: bytes of @data, a power of two
 */
struct amupmu_spe_buf {
	struct amupmu_mbuf mb;
	struct amupmu_spe_buf_header *hdr;
	u8 *data;
	u64 size;
};

/**
 * struct amupmu_spe_pcs - a configuration's SPE on one CPU
 * @sess: the configuration
 * @cpu: the CPU
 * @buf: its buffer
 * @head: bytes published (the kernel's copy of hdr->data_head): walked,
 *	counted, a partial record at their end made PAD bytes
 * @written: bytes the CPU wrote into the buffer (@head up to here is not
 *	published yet: amupmu_spe_publish() does it, in process context)
 * @region: data offset PMBPTR_EL1 started at when last programmed
 * @running: programmed on the CPU (profiling, or stopped by a buffer event
 *	whose interrupt is pending)
 * @discarding: PMBPTR_EL1 points into the CPU's discard area
 * @pm_stopped: stopped for a CPU power-down (CPU_PM_ENTER)
 * @dl_pending: the bytes up to @written end with a partial record (DL):
 *	the CPU writes into the discard area until they are published
 * @state: AMUPMU_SPE_FAULT when a fault stopped it
 * @records: records published
 * @lost_bytes: bytes written to the discard area
 * @truncations: buffer events with PMBSR_EL1.DL
 * @collisions: buffer events with PMBSR_EL1.COLL
 * @faults: faults and unknown syndromes
 * @last_pmbsr: PMBSR_EL1 of the last fault
 * @events: buffer management events taken
 *
 * Everything but @sess, @cpu and @buf under the CPU's amupmu_spe_pcpu.lock,
 * changed on the CPU with interrupts off (or for an offline CPU), except
 * @head, @records and @dl_pending, which the publisher (process context,
 * under the configuration's @pub_lock) changes under that lock too.
 */
struct amupmu_spe_pcs {
	struct amupmu_spe_cfg *sess;
	unsigned int cpu;
	struct amupmu_spe_buf *buf;
	u64 head;
	u64 written;
	u64 region;
	bool running;
	bool discarding;
	bool pm_stopped;
	bool dl_pending;
	u32 state;
	u64 records;
	u64 lost_bytes;
	u64 truncations;
	u64 collisions;
	u64 faults;
	u64 last_pmbsr;
	u64 events;
};

/**
 * struct amupmu_spe_cfg - a session's SPE configuration (AMUPMU_SPE_CONFIG
 *	until RELEASE or the file's release)
 * @file: the file's SPE state, which outlives the configuration
 * @cpus: the CPU set
 * @nr: CPUs in it
 * @pcs: per CPU of the set, ascending
 * @f: the filter registers
 * @pmscr: PMSCR_EL1
 * @enabled: profiling was enabled (AMUPMU_SPE_CTL_ENABLE)
 * @gen: amupmu_spe_gen before CONFIG checked the device: stale (ENXIO)
 *	once the device went
 * @seq: the file's CONFIG it was made by (amupmu_spe_sess.seq)
 * @ref: references: the file's slot (amupmu_spe_sess.cfg) and READ or
 *	DISABLE publishing without amupmu_spe_sess_lock; the last one frees
 *	it, always while its file lives (the file's release drops the slot's)
 * @watermark: bytes unread that make poll() report EPOLLIN
 * @kick: from the buffer interrupt and the idle path: queues @pub
 * @pub: publishes the CPUs' written bytes (process context)
 * @pub_lock: serialises the publishers (@pub, READ, DISABLE, release)
 * @nl: the configuration as the netlink family reports it
 */
struct amupmu_spe_cfg {
	struct amupmu_spe_sess *file;
	cpumask_var_t cpus;
	unsigned int nr;
	struct amupmu_spe_pcs *pcs;
	struct amupmu_spe_filter f;
	u64 pmscr;
	bool enabled;
	u64 gen;
	u64 seq;
	struct kref ref;
	u64 watermark;
	struct irq_work kick;
	struct work_struct pub;
	struct mutex pub_lock;	/* see @pub_lock above */
	struct amupmu_nl_sess nl;
};

/**
 * struct amupmu_spe_sess - a file's SPE state: what lives as long as the
 *	file (the slot of its amupmu_session), allocated at open
 * @cfg: the configuration, NULL without one (under amupmu_spe_sess_lock;
 *	set and cleared only by the file's own ioctls)
 * @seq: CONFIGs made (under amupmu_spe_sess_lock)
 * @wait: poll() and epoll wait here, from open on (an epoll entry added
 *	before the first CONFIG is woken by it). It is the file's, not the
 *	configuration's: a poller or an epoll entry may stay queued across
 *	RELEASE (and a CONFIG whose reply could not be copied back), and
 *	leaves it before the file's release (poll holds the file; epoll
 *	removes its entries before ->release), so it is never freed under
 *	them.
 * @map_lock: @cfg changes under it (and amupmu_spe_sess_lock);
 *	amupmu_spe_mmap() reads @cfg under it alone (the lock order below)
 */
struct amupmu_spe_sess {
	struct amupmu_spe_cfg *cfg;
	u64 seq;
	wait_queue_head_t wait;
	struct mutex map_lock;	/* see @map_lock above */
};

/**
 * struct amupmu_spe_pcpu - SPE of one CPU
 * @lock: guards @active and its amupmu_spe_pcs
 * @active: the configuration that holds this CPU's SPE, NULL when free
 * @discard: the discard area (allocated with the first session, kept)
 */
struct amupmu_spe_pcpu {
	raw_spinlock_t lock;
	struct amupmu_spe_pcs *active;
	u8 *discard;
};

static DEFINE_PER_CPU(struct amupmu_spe_pcpu, amupmu_spe_pcpu);
/*
 * amupmu_spe_sess_lock: the files' SPE slots (amupmu_spe_sess.cfg and
 * .seq), every amupmu_spe_pcpu.active change, amupmu_spe_gen, the discard
 * areas. Held only for O(CPUs) work: the publisher's O(bytes) walk runs
 * under the configuration's pub_lock alone (READ and DISABLE take a
 * reference on the configuration under amupmu_spe_sess_lock, drop it,
 * then publish).
 *
 * Lock order (outer first):
 *   amupmu_spe_sess_lock
 *     -> cpus_read_lock()
 *       -> amupmu_spe_pcpu.lock (raw, interrupts off)
 *     -> amupmu_spe_sess.map_lock (a leaf: nothing is taken under it)
 *   mmap_lock (amupmu_spe_mmap() is called under it)
 *     -> amupmu_spe_sess.map_lock
 *   amupmu_spe_cfg.pub_lock (never under amupmu_spe_sess_lock)
 *     -> amupmu_spe_pcpu.lock
 * amupmu_spe_dev.c's amupmu_spe_dev_lock is outside all of them (the
 * device's remove() calls amupmu_spe_dev_gone()).
 *
 * amupmu_spe_mmap() must not take amupmu_spe_sess_lock: the kernel has
 * cpu_hotplug_lock -> sched_domains_mutex -> (debugfs) i_rwsem -> mmap_lock
 * (CPU online rebuilds the sched domains' debugfs; readdir faults), so
 * mmap_lock -> amupmu_spe_sess_lock -> cpus_read_lock() closes a cycle
 * (lockdep on the 6.1-debug board). A file's @cfg therefore changes under
 * both amupmu_spe_sess_lock and its map_lock, and mmap reads it under the
 * map_lock alone.
 *
 * Nothing under amupmu_spe_sess_lock takes the mmap_lock: no
 * copy_{to,from}_user(), no mmdrop(). The buffers' RLIMIT_MEMLOCK charge
 * is atomic (amupmu_mbuf_init(), user_struct.locked_vm) and goes with the
 * buffer's last reference, possibly a mapping's close under the mmap_lock.
 * READ gathers into a kernel buffer and copies out after.
 */
static DEFINE_MUTEX(amupmu_spe_sess_lock);
/* the SPE device's binding: bumped when it goes (under amupmu_spe_sess_lock) */
static u64 amupmu_spe_gen = 1;
static enum cpuhp_state amupmu_spe_hp_state;

/* The configuration belongs to a binding of the SPE device that went away. */
static bool amupmu_spe_stale(const struct amupmu_spe_cfg *sess)
{
	return sess->gen != READ_ONCE(amupmu_spe_gen);
}

/* Largest record of @cpu: PMSIDR_EL1.MaxSize. */
static u64 amupmu_spe_max_record(unsigned int cpu)
{
	return 1ULL << FIELD_GET(PMSIDR_EL1_MAXSIZE, READ_ONCE(amupmu_dev.cpus[cpu].pmsidr));
}

/*
 * The SPE packet headers (Arm ARM D10.2): PAD 0x00 and END 0x01 are one
 * byte; an extended header 0b001000xx is followed by the real header; any
 * other header has a payload of 1 << hdr[5:4] bytes. A record ends with
 * END or with a TIMESTAMP packet (0x71).
 */
#define AMUPMU_SPE_PKT_PAD		0x00
#define AMUPMU_SPE_PKT_END		0x01
#define AMUPMU_SPE_PKT_TIMESTAMP	0x71
#define AMUPMU_SPE_PKT_EXT_MASK		0xfc
#define AMUPMU_SPE_PKT_EXT		0x20

/**
 * amupmu_spe_walk() - count the records in @len bytes at @p
 * @p: the bytes (starting at a record boundary)
 * @len: their length
 * @records: incremented per complete record
 *
 * Process context only (amupmu_spe_publish()): O(@len).
 *
 * Return: the offset just after the last complete record, or after
 * trailing PAD bytes (what can be published as is).
 */
static u64 amupmu_spe_walk(const u8 *p, u64 len, u64 *records)
{
	u64 i = 0, end = 0;

	while (i < len) {
		u8 hdr = p[i];
		u64 n;

		if (hdr == AMUPMU_SPE_PKT_PAD) {
			if (end == i)
				end = i + 1;
			i++;
			continue;
		}
		if (hdr == AMUPMU_SPE_PKT_END) {
			i++;
			end = i;
			(*records)++;
			continue;
		}
		n = 1;
		if ((hdr & AMUPMU_SPE_PKT_EXT_MASK) == AMUPMU_SPE_PKT_EXT) {
			if (i + 1 >= len)
				break;
			hdr = p[i + 1];
			n = 2;
		}
		n += 1ULL << ((hdr >> 4) & 3);
		if (i + n > len)
			break;
		i += n;
		if (hdr == AMUPMU_SPE_PKT_TIMESTAMP && n == 9) {
			end = i;
			(*records)++;
		}
	}
	return end;
}

/*
 * The bytes that are not free for the CPU to write: from what the reader
 * has not consumed (data_tail, but never beyond @head: unpublished bytes
 * are the publisher's until published) to @written. Under the lock.
 */
static u64 amupmu_spe_used(const struct amupmu_spe_pcs *pcs)
{
	/* pairs with the reader's release of data_tail */
	u64 tail = smp_load_acquire(&pcs->buf->hdr->data_tail);

	if ((s64)(tail - pcs->head) > 0)
		tail = pcs->head;
	return pcs->written - tail;
}

/*
 * The CPU wrote up to PMBPTR_EL1 @ptr: account for it (O(1): interrupts
 * are off, and this runs in hard IRQ and on the idle path). The bytes are
 * walked, counted and published by amupmu_spe_publish() in process
 * context; @dl says their last record may be partial. In discard mode the
 * bytes are counted as lost. On the CPU, under the lock.
 */
static void amupmu_spe_wrote(struct amupmu_spe_pcs *pcs, u64 ptr, bool dl)
{
	struct amupmu_spe_buf *b = pcs->buf;
	u8 *start = b->data + pcs->region;
	u64 len;

	if (pcs->discarding) {
		u8 *d = this_cpu_ptr(&amupmu_spe_pcpu)->discard;

		if (ptr > (u64)d && ptr <= (u64)d + AMUPMU_SPE_DISCARD_SIZE)
			pcs->lost_bytes += ptr - (u64)d;
		WRITE_ONCE(b->hdr->lost_bytes, pcs->lost_bytes);
		return;
	}
	if (ptr <= (u64)start || ptr > (u64)b->data + b->size)
		return;
	len = ptr - (u64)start;
	pcs->written += len;
	pcs->region += len;
	if (dl)
		pcs->dl_pending = true;
}

/* Have the publisher run (from hard IRQ or the idle path: irq_work). */
static void amupmu_spe_kick(struct amupmu_spe_pcs *pcs)
{
	irq_work_queue(&pcs->sess->kick);
}

static void amupmu_spe_kick_fn(struct irq_work *w)
{
	struct amupmu_spe_cfg *sess = container_of(w, struct amupmu_spe_cfg, kick);

	queue_work(system_wq, &sess->pub);
}

/*
 * Point the CPU's buffer registers at the next free region of the buffer,
 * or at the discard area when the reader has not made room for a record
 * (or a partial record waits for the publisher). PMBPTR_EL1 is aligned to
 * PMBIDR_EL1.Align: after a buffer event or a fault the CPU leaves it just
 * past the last record, so the bytes up to the alignment are padded (as
 * arm_spe_pmu's __arm_spe_pmu_next_off(); at most 1 << Align bytes; the
 * mock model reports Align 0 and does not model it, so only hardware with
 * Align > 0 takes this path). The end of the data area that cannot hold a
 * record is padded (at most MaxSize bytes), so that records never wrap.
 * On the CPU, under the lock, profiling stopped.
 */
static void amupmu_spe_program_buffer(struct amupmu_spe_pcs *pcs)
{
	struct amupmu_spe_buf *b = pcs->buf;
	u64 max_rec = amupmu_spe_max_record(pcs->cpu), used, room, off, limit, want, pad;
	u64 align = 1ULL << FIELD_GET(PMBIDR_EL1_ALIGN, amupmu_spe_pmbidr(pcs->cpu));
	u8 *d;

	used = amupmu_spe_used(pcs);
	room = used <= b->size ? b->size - used : 0;
	off = pcs->written & (b->size - 1);
	/* @size is a multiple of the page, Align at most PAGE_SHIFT: no wrap */
	pad = ALIGN(off, align) - off;
	if (pad && !pcs->dl_pending && room >= pad) {
		memset(b->data + off, AMUPMU_SPE_PKT_PAD, pad);
		room -= pad;
		pcs->written += pad;
		used += pad;
		off = (off + pad) & (b->size - 1);
	}
	/* a misaligned @off (no room for the pad) ends in the discard area below */
	if (!pcs->dl_pending && b->size - off < max_rec && room >= b->size - off) {
		/* too little before the end: PAD to it and start over at 0 */
		memset(b->data + off, AMUPMU_SPE_PKT_PAD, b->size - off);
		room -= b->size - off;
		pcs->written += b->size - off;
		used += b->size - off;
		off = 0;
	}
	/*
	 * End the region where the unread bytes reach the watermark (or one
	 * watermark further once they have): its buffer event publishes them
	 * and wakes poll() there, not only when the buffer is full.
	 */
	want = used < pcs->sess->watermark ? pcs->sess->watermark - used : pcs->sess->watermark;
	limit = min(round_down(off + min(room, b->size - off), PAGE_SIZE),
		    round_up(off + max(want, max_rec), PAGE_SIZE));
	if (!pcs->dl_pending && limit >= off + max_rec) {
		pcs->discarding = false;
		pcs->region = off;
		amupmu_spe_regs->write(AMUPMU_SPE_SR_PMBPTR, (u64)b->data + off);
		amupmu_spe_regs->write(AMUPMU_SPE_SR_PMBLIMITR,
				       ((u64)b->data + limit) | PMBLIMITR_EL1_E);
	} else {
		d = this_cpu_ptr(&amupmu_spe_pcpu)->discard;
		pcs->discarding = true;
		amupmu_spe_regs->write(AMUPMU_SPE_SR_PMBPTR, (u64)d);
		amupmu_spe_regs->write(AMUPMU_SPE_SR_PMBLIMITR,
				       ((u64)d + AMUPMU_SPE_DISCARD_SIZE) | PMBLIMITR_EL1_E);
	}
	WRITE_ONCE(b->hdr->flags, pcs->state | AMUPMU_SPE_ENABLED |
		   (pcs->discarding ? AMUPMU_SPE_DISCARDING : 0));
}

/* Start profiling on this CPU: filters, buffer, then PMSCR_EL1. Under the lock. */
static void amupmu_spe_cpu_start(struct amupmu_spe_pcs *pcs)
{
	const struct amupmu_spe_cfg *sess = pcs->sess;
	const struct amupmu_spe_ops *r = amupmu_spe_regs;

	if (pcs->running || (pcs->state & AMUPMU_SPE_FAULT))
		return;
	r->write(AMUPMU_SPE_SR_PMSFCR, sess->f.pmsfcr);
	r->write(AMUPMU_SPE_SR_PMSEVFR, sess->f.pmsevfr);
	if (amupmu_dev.cpus[pcs->cpu].pmsidr & PMSIDR_EL1_FnE)
		r->write(AMUPMU_SPE_SR_PMSNEVFR, sess->f.pmsnevfr);
	r->write(AMUPMU_SPE_SR_PMSLATFR, sess->f.pmslatfr);
	r->write(AMUPMU_SPE_SR_PMSIRR, sess->f.pmsirr);
	r->write(AMUPMU_SPE_SR_PMSICR, 0);
	r->write(AMUPMU_SPE_SR_PMBSR, 0);
	isb();
	amupmu_spe_program_buffer(pcs);
	isb();
	r->write(AMUPMU_SPE_SR_PMSCR, sess->pmscr);
	isb();
	pcs->running = true;
}

/*
 * Stop profiling on this CPU and account for what it wrote (the sequence
 * of arm_spe_pmu: PMSCR_EL1 0, drain, buffer off). A buffer event that
 * came meanwhile is counted. The publisher runs when the unread bytes
 * reach the watermark (else at the next READ, DISABLE or buffer event).
 * Under the lock.
 */
static void amupmu_spe_cpu_stop(struct amupmu_spe_pcs *pcs)
{
	const struct amupmu_spe_ops *r = amupmu_spe_regs;
	u64 pmbsr;

	pcs->pm_stopped = false;
	if (!pcs->running)
		return;
	r->write(AMUPMU_SPE_SR_PMSCR, 0);
	isb();
	r->drain();
	r->write(AMUPMU_SPE_SR_PMBLIMITR, 0);
	isb();
	pmbsr = r->read(AMUPMU_SPE_SR_PMBSR);
	if (pmbsr & PMBSR_EL1_S) {
		pcs->events++;
		if (pmbsr & PMBSR_EL1_COLL)
			pcs->collisions++;
		if (pmbsr & PMBSR_EL1_DL)
			pcs->truncations++;
		r->write(AMUPMU_SPE_SR_PMBSR, 0);
		isb();
	}
	amupmu_spe_wrote(pcs, r->read(AMUPMU_SPE_SR_PMBPTR),
			 (pmbsr & PMBSR_EL1_S) && (pmbsr & PMBSR_EL1_DL));
	pcs->running = false;
	WRITE_ONCE(pcs->buf->hdr->flags, pcs->state);
	if (pcs->written != pcs->head && amupmu_spe_used(pcs) >= pcs->sess->watermark)
		amupmu_spe_kick(pcs);
}

/**
 * amupmu_spe_irq_handle() - the buffer management event of this CPU
 *
 * From the SPE PPI's handler (hardware) or the mock model's timer, in hard
 * interrupt context on the CPU. Decodes PMBSR_EL1: buffer full (account,
 * count DL and COLL, go on in the next free region or the discard area),
 * a stage-1 or stage-2 fault, an external abort or an unknown syndrome
 * (stop this CPU's profiling, report the syndrome, never restart by
 * itself). Clears PMBSR_EL1.S in every case, so the level interrupt drops.
 * O(1): the bytes are walked and published in process context.
 */
void amupmu_spe_irq_handle(void)
{
	struct amupmu_spe_pcpu *pp = this_cpu_ptr(&amupmu_spe_pcpu);
	const struct amupmu_spe_ops *r = amupmu_spe_regs;
	struct amupmu_spe_pcs *pcs;
	u64 pmbsr, ptr;
	bool fault;

	raw_spin_lock(&pp->lock);
	pcs = pp->active;
	/* PSB CSYNC, DSB NSH, ISB: PMBPTR_EL1 and PMBSR_EL1 cover every record */
	r->drain();
	pmbsr = r->read(AMUPMU_SPE_SR_PMBSR);
	if (!(pmbsr & PMBSR_EL1_S) || !pcs || !pcs->running) {
		/* not ours or nothing pending: make sure the line drops */
		r->write(AMUPMU_SPE_SR_PMBSR, 0);
		isb();
		raw_spin_unlock(&pp->lock);
		return;
	}
	ptr = r->read(AMUPMU_SPE_SR_PMBPTR);
	/* profiling stopped itself (S = 1); take the buffer away while we look */
	r->write(AMUPMU_SPE_SR_PMBLIMITR, 0);
	isb();
	pcs->events++;
	if (pmbsr & PMBSR_EL1_COLL) {
		pcs->collisions++;
		amupmu_nl_spe_buffer(pcs->sess->nl.id, pcs->cpu, AMUPMU_NL_SPE_COLLISION, pmbsr);
	}
	if (pmbsr & PMBSR_EL1_DL)
		pcs->truncations++;
	fault = (pmbsr & PMBSR_EL1_EA) ||
		FIELD_GET(PMBSR_EL1_EC, pmbsr) != PMBSR_EL1_EC_BUF ||
		FIELD_GET(AMUPMU_PMBSR_BSC, pmbsr) != PMBSR_EL1_BUF_BSC_FULL;
	amupmu_spe_wrote(pcs, ptr, pmbsr & PMBSR_EL1_DL);
	r->write(AMUPMU_SPE_SR_PMBSR, 0);
	isb();
	amupmu_nl_spe_buffer(pcs->sess->nl.id, pcs->cpu,
			     fault ? AMUPMU_NL_SPE_FAULT : AMUPMU_NL_SPE_FULL, pmbsr);
	if (fault) {
		pcs->faults++;
		pcs->last_pmbsr = pmbsr;
		pcs->state |= AMUPMU_SPE_FAULT;
		r->write(AMUPMU_SPE_SR_PMSCR, 0);
		isb();
		pcs->running = false;
		WRITE_ONCE(pcs->buf->hdr->flags, pcs->state);
	} else {
		amupmu_spe_program_buffer(pcs);
		isb();
	}
	/* publish, and wake poll() at the watermark or for the fault */
	amupmu_spe_kick(pcs);
	raw_spin_unlock(&pp->lock);
}

/*
 * Walk the written bytes of @pcs from @from, @len of them (segments that
 * end at the end of the data area are whole: the wrap PAD), counting the
 * records; a partial record at the end of a segment becomes PAD bytes.
 * Process context, under @pub_lock: nothing else writes these bytes but
 * a reader through its writable mapping (which only hurts itself: the
 * walk stays within the data area).
 */
static u64 amupmu_spe_walk_range(struct amupmu_spe_buf *b, u64 from, u64 len)
{
	u64 records = 0, off = from & (b->size - 1);

	while (len) {
		u64 seg = min(len, b->size - off), end;

		end = amupmu_spe_walk(b->data + off, seg, &records);
		if (end < seg)
			memset(b->data + off + end, AMUPMU_SPE_PKT_PAD, seg - end);
		len -= seg;
		off = 0;
		cond_resched();
	}
	return records;
}

/*
 * Publish what the CPUs of @sess wrote: walk it (count the records, PAD a
 * partial record), then move data_head. Process context: the walk is
 * O(bytes) and preemptible. Wakes poll() when a buffer holds its
 * watermark or a CPU faulted. Takes @pub_lock and the CPUs' locks.
 */
static void amupmu_spe_publish(struct amupmu_spe_cfg *sess)
{
	bool wake = false;
	unsigned int i;

	mutex_lock(&sess->pub_lock);
	for (i = 0; i < sess->nr; i++) {
		struct amupmu_spe_pcs *pcs = &sess->pcs[i];
		struct amupmu_spe_pcpu *pp = per_cpu_ptr(&amupmu_spe_pcpu, pcs->cpu);
		struct amupmu_spe_buf *b = pcs->buf;
		u64 head, written, records = 0;
		unsigned long flags;
		bool dl;

		raw_spin_lock_irqsave(&pp->lock, flags);
		head = pcs->head;
		written = pcs->written;
		dl = pcs->dl_pending;
		raw_spin_unlock_irqrestore(&pp->lock, flags);
		if (written != head)
			records = amupmu_spe_walk_range(b, head, written - head);
		raw_spin_lock_irqsave(&pp->lock, flags);
		/* @written only grows; with @dl_pending it does not move */
		pcs->head = written;
		pcs->records += records;
		if (dl)
			pcs->dl_pending = false;
		WRITE_ONCE(b->hdr->records, pcs->records);
		/* the records are in place before the head moves past them */
		smp_store_release(&b->hdr->data_head, pcs->head);
		if (amupmu_spe_used(pcs) >= sess->watermark || (pcs->state & AMUPMU_SPE_FAULT))
			wake = true;
		raw_spin_unlock_irqrestore(&pp->lock, flags);
	}
	mutex_unlock(&sess->pub_lock);
	if (wake)
		wake_up_all(&sess->file->wait);
}

static void amupmu_spe_pub_fn(struct work_struct *work)
{
	amupmu_spe_publish(container_of(work, struct amupmu_spe_cfg, pub));
}

static void amupmu_spe_start_fn(void *arg)
{
	struct amupmu_spe_pcs *pcs = arg;
	struct amupmu_spe_pcpu *pp = this_cpu_ptr(&amupmu_spe_pcpu);

	raw_spin_lock(&pp->lock);
	if (pp->active == pcs)
		amupmu_spe_cpu_start(pcs);
	raw_spin_unlock(&pp->lock);
}

/* Stop @arg on this CPU if it holds it; NULL: whatever holds this CPU. */
static void amupmu_spe_stop_fn(void *arg)
{
	struct amupmu_spe_pcs *pcs = arg;
	struct amupmu_spe_pcpu *pp = this_cpu_ptr(&amupmu_spe_pcpu);

	raw_spin_lock(&pp->lock);
	if (pp->active && (!pcs || pp->active == pcs))
		amupmu_spe_cpu_stop(pp->active);
	raw_spin_unlock(&pp->lock);
}

/* Start or stop every online CPU of @sess. Under amupmu_spe_sess_lock and cpus_read_lock(). */
static void amupmu_spe_each_online(struct amupmu_spe_cfg *sess, smp_call_func_t fn)
{
	unsigned int i;

	for (i = 0; i < sess->nr; i++)
		if (cpu_online(sess->pcs[i].cpu))
			smp_call_function_single(sess->pcs[i].cpu, fn, &sess->pcs[i], 1);
}

/*
 * CPU hotplug: a CPU of an enabled configuration profiles while it is
 * online, unless the SPE device it was configured with went away.
 */
static int amupmu_spe_cpu_online(unsigned int cpu)
{
	struct amupmu_spe_pcpu *pp = this_cpu_ptr(&amupmu_spe_pcpu);
	struct amupmu_spe_pcs *pcs;
	unsigned long flags;

	raw_spin_lock_irqsave(&pp->lock, flags);
	pcs = pp->active;
	if (pcs && READ_ONCE(pcs->sess->enabled) && !amupmu_spe_stale(pcs->sess))
		amupmu_spe_cpu_start(pcs);
	raw_spin_unlock_irqrestore(&pp->lock, flags);
	return 0;
}

static int amupmu_spe_cpu_offline(unsigned int cpu)
{
	struct amupmu_spe_pcpu *pp = this_cpu_ptr(&amupmu_spe_pcpu);
	unsigned long flags;

	raw_spin_lock_irqsave(&pp->lock, flags);
	if (pp->active)
		amupmu_spe_cpu_stop(pp->active);
	raw_spin_unlock_irqrestore(&pp->lock, flags);
	return 0;
}

/*
 * A core that powers down in idle loses its SPE registers: stop before,
 * start again after (the buffer state is the driver's). O(1): the bytes
 * are published in process context.
 */
static int amupmu_spe_cpu_pm_notify(struct notifier_block *nb, unsigned long action, void *v)
{
	struct amupmu_spe_pcpu *pp = this_cpu_ptr(&amupmu_spe_pcpu);
	struct amupmu_spe_pcs *pcs;

	raw_spin_lock(&pp->lock);
	pcs = pp->active;
	if (pcs) {
		switch (action) {
		case CPU_PM_ENTER:
			if (pcs->running) {
				amupmu_spe_cpu_stop(pcs);
				pcs->pm_stopped = true;
			}
			break;
		case CPU_PM_EXIT:
		case CPU_PM_ENTER_FAILED:
			if (pcs->pm_stopped) {
				pcs->pm_stopped = false;
				amupmu_spe_cpu_start(pcs);
			}
			break;
		}
	}
	raw_spin_unlock(&pp->lock);
	return NOTIFY_OK;
}

static struct notifier_block amupmu_spe_cpu_pm_nb = {
	.notifier_call = amupmu_spe_cpu_pm_notify,
};

static void amupmu_spe_buf_free(struct amupmu_mbuf *mb)
{
	kfree(container_of(mb, struct amupmu_spe_buf, mb));
}

static struct amupmu_spe_buf *amupmu_spe_buf_alloc(unsigned int cpu, unsigned int pages)
{
	struct amupmu_spe_buf *b = kzalloc(sizeof(*b), GFP_KERNEL);

	if (!b)
		return NULL;
	if (amupmu_mbuf_init(&b->mb, pages, amupmu_spe_buf_free)) {
		kfree(b);
		return NULL;
	}
	b->hdr = b->mb.base;
	b->data = (u8 *)b->mb.base + PAGE_SIZE;
	b->size = (u64)pages << PAGE_SHIFT;
	b->hdr->version = AMUPMU_SPE_BUF_VERSION;
	b->hdr->header_size = sizeof(*b->hdr);
	b->hdr->data_offset = PAGE_SIZE;
	b->hdr->data_size = b->size;
	b->hdr->cpu = cpu;
	b->hdr->timer_freq = arch_timer_get_cntfrq();
	return b;
}

/*
 * Free a configuration no CPU holds any more (amupmu_spe_pcpu.active
 * cleared, or never set): after its last kick and publication. Without
 * amupmu_spe_sess_lock or @pub_lock (it waits for the publisher). The
 * buffers (and their RLIMIT_MEMLOCK charge) go with their last mapping.
 */
static void amupmu_spe_sess_free(struct amupmu_spe_cfg *sess)
{
	unsigned int i;

	if (!sess)
		return;
	irq_work_sync(&sess->kick);
	cancel_work_sync(&sess->pub);
	for (i = 0; sess->pcs && i < sess->nr; i++)
		amupmu_mbuf_put(sess->pcs[i].buf ? &sess->pcs[i].buf->mb : NULL);
	kfree(sess->pcs);
	free_cpumask_var(sess->cpus);
	kfree(sess);
}

/* The discard area of every CPU of @cpus (kept until unload). */
static int amupmu_spe_discard_alloc(const struct cpumask *cpus)
{
	unsigned int cpu;

	for_each_cpu(cpu, cpus) {
		struct amupmu_spe_pcpu *pp = per_cpu_ptr(&amupmu_spe_pcpu, cpu);

		if (!pp->discard) {
			pp->discard = vmalloc(AMUPMU_SPE_DISCARD_SIZE);
			if (!pp->discard)
				return -ENOMEM;
		}
	}
	return 0;
}

/*
 * The CPUs of the set, checked: every one has SPE that amupmu may program
 * and can hold a buffer (MaxSize and Align as arm_spe_pmu accepts them,
 * the guest physical count only from SPEv1p2), and, on hardware, a claimed
 * SPE device serves it. Under amupmu_dev.lock.
 */
static int amupmu_spe_check_cpus(const struct cpumask *cpus, u32 pct)
{
	unsigned int cpu, maxsize, align;

	for_each_cpu(cpu, cpus) {
		const struct amupmu_cpu_info *ci = &amupmu_dev.cpus[cpu];

		if (!(ci->flags & AMUPMU_CPU_SPE))
			return -EOPNOTSUPP;
		maxsize = FIELD_GET(PMSIDR_EL1_MAXSIZE, ci->pmsidr);
		align = FIELD_GET(PMBIDR_EL1_ALIGN, amupmu_spe_pmbidr(cpu));
		if (maxsize < 4 || maxsize > 11 || align > PAGE_SHIFT)
			return -EOPNOTSUPP;
		if (pct == AMUPMU_SPE_PCT_GUEST_PHYSICAL &&
		    ci->spe_version < ID_AA64DFR0_EL1_PMSVer_V1P2)
			return -EOPNOTSUPP;
	}
	for_each_cpu(cpu, cpus)
		if (!amupmu_spe_dev_serves(cpu))
			return -ENODEV;
	return 0;
}

#define AMUPMU_SPE_EN_ALL	(AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_KERNEL | AMUPMU_SPE_EN_CX | \
				 AMUPMU_SPE_EN_PA | AMUPMU_SPE_EN_TS)

/* The struct alone: EINVAL for what no CPU could mean. */
static int amupmu_spe_config_shape(const struct amupmu_spe_config *c)
{
	bool defaults = c->flags & AMUPMU_SPE_CFG_DEFAULTS;

	if (c->flags & ~(AMUPMU_SPE_CFG_DEFAULTS | AMUPMU_SPE_CFG_JITTER) || c->__reserved)
		return -EINVAL;
	if (c->enables & ~AMUPMU_SPE_EN_ALL ||
	    !(c->enables & (AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_KERNEL)))
		return -EINVAL;
	if (c->pct != AMUPMU_SPE_PCT_VIRTUAL &&
	    (!(c->enables & AMUPMU_SPE_EN_TS) || (c->pct != AMUPMU_SPE_PCT_PHYSICAL &&
						  c->pct != AMUPMU_SPE_PCT_GUEST_PHYSICAL)))
		return -EINVAL;
	if (defaults && (c->pmsfcr || c->pmsevfr || c->pmsnevfr || c->min_latency ||
			 c->interval || (c->flags & AMUPMU_SPE_CFG_JITTER)))
		return -EINVAL;
	if (!defaults && (c->interval & ~PMSIRR_EL1_INTERVAL || c->min_latency > U16_MAX))
		return -EINVAL;
	if (c->buf_pages < 2 || c->buf_pages > AMUPMU_SPE_BUF_PAGES_MAX ||
	    !is_power_of_2(c->buf_pages))
		return -EINVAL;
	if (c->watermark > (u64)c->buf_pages << PAGE_SHIFT)
		return -EINVAL;
	return 0;
}

/* PMSCR_EL1 of @c: the enables and PCT in the register's layout. */
static u64 amupmu_spe_pmscr(const struct amupmu_spe_config *c)
{
	u64 v = 0;

	if (c->enables & AMUPMU_SPE_EN_USER)
		v |= PMSCR_EL1_E0SPE;
	if (c->enables & AMUPMU_SPE_EN_KERNEL)
		v |= PMSCR_EL1_E1SPE;
	if (c->enables & AMUPMU_SPE_EN_CX)
		v |= PMSCR_EL1_CX;
	if (c->enables & AMUPMU_SPE_EN_PA)
		v |= PMSCR_EL1_PA;
	if (c->enables & AMUPMU_SPE_EN_TS)
		v |= PMSCR_EL1_TS | FIELD_PREP(PMSCR_EL1_PCT, c->pct);
	return v;
}

/*
 * A configuration and its buffers, one reference (the file's slot). Each
 * buffer is charged to the caller's RLIMIT_MEMLOCK before it is allocated
 * (amupmu_mbuf_init()): a caller beyond its limit never makes the kernel
 * allocate it. Without amupmu_spe_sess_lock.
 */
static struct amupmu_spe_cfg *amupmu_spe_sess_alloc(const struct amupmu_spe_config *c,
						    const struct cpumask *cpus)
{
	struct amupmu_spe_cfg *sess = kzalloc(sizeof(*sess), GFP_KERNEL);
	unsigned int cpu, i = 0;

	if (!sess)
		return NULL;
	kref_init(&sess->ref);
	init_irq_work(&sess->kick, amupmu_spe_kick_fn);
	INIT_WORK(&sess->pub, amupmu_spe_pub_fn);
	mutex_init(&sess->pub_lock);
	if (!zalloc_cpumask_var(&sess->cpus, GFP_KERNEL))
		goto fail;
	cpumask_copy(sess->cpus, cpus);
	sess->nr = cpumask_weight(cpus);
	sess->pcs = kcalloc(sess->nr, sizeof(*sess->pcs), GFP_KERNEL);
	if (!sess->pcs)
		goto fail;
	for_each_cpu(cpu, cpus) {
		struct amupmu_spe_pcs *pcs = &sess->pcs[i++];

		pcs->sess = sess;
		pcs->cpu = cpu;
		pcs->buf = amupmu_spe_buf_alloc(cpu, c->buf_pages);
		if (!pcs->buf)
			goto fail;
	}
	sess->watermark = c->watermark ?: (u64)c->buf_pages << (PAGE_SHIFT - 1);
	sess->pmscr = amupmu_spe_pmscr(c);
	return sess;
fail:
	amupmu_spe_sess_free(sess);
	return NULL;
}

static void amupmu_spe_cfg_free_ref(struct kref *ref)
{
	amupmu_spe_sess_free(container_of(ref, struct amupmu_spe_cfg, ref));
}

/* Drop a reference: without amupmu_spe_sess_lock and @pub_lock, the file alive. */
static void amupmu_spe_cfg_put(struct amupmu_spe_cfg *sess)
{
	if (sess)
		kref_put(&sess->ref, amupmu_spe_cfg_free_ref);
}

/*
 * Can @file take a configuration on @cpus? EBUSY when it holds one or
 * another configuration holds a CPU of the set. Under amupmu_spe_sess_lock.
 */
static int amupmu_spe_busy(struct amupmu_spe_sess *file, const struct cpumask *cpus)
{
	unsigned int cpu;

	if (file && file->cfg)
		return -EBUSY;
	for_each_cpu(cpu, cpus)
		if (READ_ONCE(per_cpu_ptr(&amupmu_spe_pcpu, cpu)->active))
			return -EBUSY;
	return 0;
}

/*
 * AMUPMU_SPE_CONFIG. The errno order: the struct (EINVAL), privilege
 * (EACCES: CAP_PERFMON for every configuration), ownership (ENXIO), the CPU
 * set (EINVAL/ENODEV/EFAULT), the CPUs (EOPNOTSUPP, ENODEV unclaimed), the
 * filter (EINVAL/EOPNOTSUPP), KPTI (EOPNOTSUPP), in use (EBUSY), memory
 * (ENOMEM: RLIMIT_MEMLOCK, each buffer charged before it is allocated), in
 * use again (EBUSY: another CONFIG won the race meanwhile), the device
 * went meanwhile (ENXIO: amupmu_spe_gen moved since before the checks).
 * On success *@seq is the configuration's (amupmu_spe_release()).
 */
static int amupmu_spe_config(struct amupmu_spe_sess **slot, struct amupmu_spe_config *c,
			     u64 *seq)
{
	struct amupmu_spe_cfg *sess = NULL;
	struct amupmu_spe_sess *file = *slot;
	struct amupmu_spe_filter f;
	cpumask_var_t cpus;
	unsigned int i;
	u64 gen;
	int ret;

	ret = amupmu_spe_config_shape(c);
	if (ret)
		return ret;
	/*
	 * SPE samples every task on the CPUs of the set, other users' and
	 * setuid programs' EL0 included (PCs, data addresses, latencies):
	 * CPU-wide, like perf's CPU-wide events, so CAP_PERFMON whatever the
	 * enables.
	 */
	if (!perfmon_capable())
		return -EACCES;
	/*
	 * The binding the checks below see: the device's remove() makes
	 * amupmu_spe_dev_serves() false before amupmu_spe_dev_gone() bumps the
	 * gen under the lock, so a device that goes after this point makes
	 * the commit below fail (ENXIO), never a configuration of a binding
	 * that is gone look fresh.
	 */
	mutex_lock(&amupmu_spe_sess_lock);
	gen = amupmu_spe_gen;
	mutex_unlock(&amupmu_spe_sess_lock);
	if (amupmu_spe_owner() == AMUPMU_SPE_OWNER_KERNEL)
		return -ENXIO;
	if (!current->mm)
		return -EINVAL;
	if (!zalloc_cpumask_var(&cpus, GFP_KERNEL))
		return -ENOMEM;
	ret = amupmu_cpuset_from_user(cpus, c->cpus_uptr, c->cpus_len);
	if (ret)
		goto out;
	mutex_lock(&amupmu_dev.lock);
	ret = amupmu_spe_check_cpus(cpus, c->pct);
	mutex_unlock(&amupmu_dev.lock);
	if (ret)
		goto out;
	if (c->flags & AMUPMU_SPE_CFG_DEFAULTS) {
		amupmu_spe_defaults_get(&f);
	} else {
		f = (struct amupmu_spe_filter) {
			.pmsfcr = c->pmsfcr,
			.pmsevfr = c->pmsevfr,
			.pmsnevfr = c->pmsnevfr,
			.pmslatfr = FIELD_PREP(PMSLATFR_EL1_MINLAT, c->min_latency),
			.pmsirr = c->interval |
				  (c->flags & AMUPMU_SPE_CFG_JITTER ? PMSIRR_EL1_RND : 0),
		};
	}
	ret = amupmu_spe_filter_check(&f, cpus);
	if (ret)
		goto out;
	/*
	 * Under KPTI the kernel is unmapped at EL0: the buffer (a kernel
	 * address) faults for a sample taken there, and a sample taken on
	 * the way in or out of the kernel (the trampoline) the same way: the
	 * kernel's arm_spe_pmu does not probe at all under KPTI.
	 */
	if (arm64_kernel_unmapped_at_el0()) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	mutex_lock(&amupmu_spe_sess_lock);
	ret = amupmu_spe_busy(file, cpus);
	mutex_unlock(&amupmu_spe_sess_lock);
	if (ret)
		goto out;

	/* charged and allocated (each buffer in that order) without the lock */
	sess = amupmu_spe_sess_alloc(c, cpus);
	if (!sess) {
		ret = -ENOMEM;
		goto out;
	}
	sess->f = f;
	sess->file = file;

	mutex_lock(&amupmu_spe_sess_lock);
	ret = amupmu_spe_busy(file, cpus);
	if (!ret && amupmu_spe_discard_alloc(cpus))
		ret = -ENOMEM;
	if (!ret && amupmu_spe_gen != gen)
		ret = -ENXIO;
	if (ret) {
		mutex_unlock(&amupmu_spe_sess_lock);
		goto out;
	}
	sess->gen = gen;
	sess->seq = ++file->seq;
	*seq = sess->seq;
	for (i = 0; i < sess->nr; i++) {
		struct amupmu_spe_pcpu *pp = per_cpu_ptr(&amupmu_spe_pcpu, sess->pcs[i].cpu);
		unsigned long flags;

		raw_spin_lock_irqsave(&pp->lock, flags);
		pp->active = &sess->pcs[i];
		raw_spin_unlock_irqrestore(&pp->lock, flags);
	}
	sess->nl = (struct amupmu_nl_sess) {
		.kind = AMUPMU_NL_SESSION_SPE,
		.cpus = sess->cpus,
		.pmsfcr = sess->f.pmsfcr,
		.pmsirr = sess->f.pmsirr,
	};
	amupmu_nl_session_start(&sess->nl);
	mutex_lock(&file->map_lock);
	WRITE_ONCE(file->cfg, sess);
	mutex_unlock(&file->map_lock);
	sess = NULL;
	mutex_unlock(&amupmu_spe_sess_lock);
out:
	amupmu_spe_sess_free(sess);
	free_cpumask_var(cpus);
	return ret;
}

/*
 * Take the configuration from its file: stop every CPU and give them
 * back. Under amupmu_spe_sess_lock; after dropping it the caller publishes
 * the last bytes and drops the slot's reference (amupmu_spe_publish_put()).
 * The buffers go with their last mapping.
 */
static struct amupmu_spe_cfg *amupmu_spe_unconfig_locked(struct amupmu_spe_sess *file)
{
	struct amupmu_spe_cfg *sess = file ? file->cfg : NULL;
	unsigned int i;

	if (!sess)
		return NULL;
	cpus_read_lock();
	amupmu_spe_each_online(sess, amupmu_spe_stop_fn);
	for (i = 0; i < sess->nr; i++) {
		struct amupmu_spe_pcpu *pp = per_cpu_ptr(&amupmu_spe_pcpu, sess->pcs[i].cpu);
		unsigned long flags;

		raw_spin_lock_irqsave(&pp->lock, flags);
		pp->active = NULL;
		raw_spin_unlock_irqrestore(&pp->lock, flags);
	}
	cpus_read_unlock();
	/*
	 * No CPU reaches it from here on: the interrupt handler, the hotplug
	 * and CPU PM callbacks find it through amupmu_spe_pcpu.active under
	 * the CPU's lock, which was just cleared under that lock.
	 */
	mutex_lock(&file->map_lock);
	WRITE_ONCE(file->cfg, NULL);
	mutex_unlock(&file->map_lock);
	amupmu_nl_session_end(&sess->nl);
	/* pollers see the configuration gone (no EPOLLIN/EPOLLPRI from it) */
	wake_up_all(&file->wait);
	return sess;
}

/*
 * Publish what the CPUs wrote by now, then drop the reference taken for
 * it: without amupmu_spe_sess_lock (the walk is O(bytes)).
 */
static void amupmu_spe_publish_put(struct amupmu_spe_cfg *sess)
{
	if (!sess)
		return;
	irq_work_sync(&sess->kick);
	amupmu_spe_publish(sess);
	amupmu_spe_cfg_put(sess);
}

static int amupmu_spe_ctl(struct amupmu_spe_sess **slot, const struct amupmu_spe_ctl *ctl)
{
	struct amupmu_spe_cfg *sess, *pub = NULL;
	struct amupmu_spe_sess *file;
	int ret = 0;
	unsigned int i;

	if (ctl->flags || ctl->__reserved || ctl->op < AMUPMU_SPE_CTL_ENABLE ||
	    ctl->op > AMUPMU_SPE_CTL_RELEASE)
		return -EINVAL;
	mutex_lock(&amupmu_spe_sess_lock);
	file = *slot;
	sess = file ? file->cfg : NULL;
	if (!sess) {
		ret = -ENODEV;
		goto out;
	}
	/* the SPE device it was made with went away: only RELEASE */
	if (ctl->op != AMUPMU_SPE_CTL_RELEASE && amupmu_spe_stale(sess)) {
		ret = -ENXIO;
		goto out;
	}
	switch (ctl->op) {
	case AMUPMU_SPE_CTL_ENABLE:
		/* as the gen: never program a CPU whose SPE is not amupmu's */
		for (i = 0; i < sess->nr; i++) {
			if (!amupmu_spe_dev_serves(sess->pcs[i].cpu)) {
				ret = -ENXIO;
				goto out;
			}
		}
		cpus_read_lock();
		for (i = 0; i < sess->nr; i++) {
			struct amupmu_spe_pcs *pcs = &sess->pcs[i];
			struct amupmu_spe_pcpu *pp = per_cpu_ptr(&amupmu_spe_pcpu, pcs->cpu);
			unsigned long flags;

			/* a fault stopped it: ENABLE starts it again */
			raw_spin_lock_irqsave(&pp->lock, flags);
			if (!pcs->running)
				pcs->state &= ~AMUPMU_SPE_FAULT;
			raw_spin_unlock_irqrestore(&pp->lock, flags);
		}
		WRITE_ONCE(sess->enabled, true);
		amupmu_spe_each_online(sess, amupmu_spe_start_fn);
		cpus_read_unlock();
		break;
	case AMUPMU_SPE_CTL_DISABLE:
		cpus_read_lock();
		WRITE_ONCE(sess->enabled, false);
		amupmu_spe_each_online(sess, amupmu_spe_stop_fn);
		cpus_read_unlock();
		/* published after the lock */
		kref_get(&sess->ref);
		pub = sess;
		break;
	default:
		/* the slot's reference: published and dropped after the lock */
		pub = amupmu_spe_unconfig_locked(file);
		break;
	}
out:
	mutex_unlock(&amupmu_spe_sess_lock);
	amupmu_spe_publish_put(pub);
	return ret;
}

static int amupmu_spe_read(struct amupmu_spe_sess **slot, struct amupmu_spe_read *rd)
{
	struct amupmu_spe_cfg *sess;
	struct amupmu_spe_sess *file;
	struct amupmu_spe_cpu *ents;
	u8 __user *dst = u64_to_user_ptr(rd->cpus_uptr);
	size_t klen = min_t(size_t, rd->entry_size, sizeof(*ents));
	unsigned int i, nr = 0, room;
	int ret = 0;

	if (rd->flags || rd->entry_size < AMUPMU_SPE_CPU_SIZE_VER0 || rd->entry_size > 4096 ||
	    !IS_ALIGNED(rd->entry_size, sizeof(u64)) || rd->nr_cpus > AMUPMU_SPE_READ_CPUS_MAX)
		return -EINVAL;
	/* gathered under the lock into a kernel buffer, copied out after it */
	room = min_t(unsigned int, rd->nr_cpus, nr_cpu_ids);
	ents = kvcalloc(max(room, 1U), sizeof(*ents), GFP_KERNEL);
	if (!ents)
		return -ENOMEM;
	mutex_lock(&amupmu_spe_sess_lock);
	file = *slot;
	sess = file ? file->cfg : NULL;
	if (!sess)
		ret = -ENODEV;
	else if (rd->nr_cpus < sess->nr)
		ret = -EINVAL;
	else
		kref_get(&sess->ref);
	mutex_unlock(&amupmu_spe_sess_lock);
	if (ret)
		goto out;
	/*
	 * The records and data_head up to what the CPUs wrote by now: under
	 * the reference alone (a RELEASE meanwhile publishes and frees after
	 * the last reference is dropped; its counts stay readable here).
	 */
	irq_work_sync(&sess->kick);
	amupmu_spe_publish(sess);
	nr = sess->nr;
	for (i = 0; i < nr; i++) {
		struct amupmu_spe_pcs *pcs = &sess->pcs[i];
		struct amupmu_spe_pcpu *pp = per_cpu_ptr(&amupmu_spe_pcpu, pcs->cpu);
		unsigned long flags;

		raw_spin_lock_irqsave(&pp->lock, flags);
		ents[i] = (struct amupmu_spe_cpu) {
			.cpu = pcs->cpu,
			.state = pcs->state | (READ_ONCE(sess->enabled) ? AMUPMU_SPE_ENABLED : 0) |
				 (pcs->discarding && pcs->running ? AMUPMU_SPE_DISCARDING : 0),
			.bytes = pcs->head,
			.records = pcs->records,
			.lost_bytes = pcs->lost_bytes,
			.truncations = pcs->truncations,
			.collisions = pcs->collisions,
			.faults = pcs->faults,
			.last_pmbsr = pcs->last_pmbsr,
			.events = pcs->events,
		};
		raw_spin_unlock_irqrestore(&pp->lock, flags);
		if (!cpu_online(pcs->cpu))
			ents[i].state |= AMUPMU_SPE_OFFLINE;
	}
	amupmu_spe_cfg_put(sess);
out:
	for (i = 0; !ret && i < nr; i++, dst += rd->entry_size)
		if (copy_to_user(dst, &ents[i], klen) ||
		    (rd->entry_size > klen && clear_user(dst + klen, rd->entry_size - klen)))
			ret = -EFAULT;
	if (!ret) {
		rd->nr_cpus = nr;
		rd->entry_size = sizeof(*ents);
	}
	kvfree(ents);
	return ret;
}

/**
 * amupmu_spe_cmd() - AMUPMU_SPE_CONFIG, _CTL and _READ of a session
 * @slot: the session's SPE state (amupmu_session_spe())
 * @cmd: AMUPMU_CMD_SPE_*
 * @arg: the command's struct (kernel copy)
 * @seq: CONFIG: the configuration it made, for amupmu_spe_release()
 *
 * Return: 0 or -errno; a failed command changes nothing.
 */
int amupmu_spe_cmd(struct amupmu_spe_sess **slot, unsigned int cmd, void *arg, u64 *seq)
{
	switch (cmd) {
	case AMUPMU_CMD_SPE_CONFIG:
		return amupmu_spe_config(slot, arg, seq);
	case AMUPMU_CMD_SPE_CTL:
		return amupmu_spe_ctl(slot, arg);
	case AMUPMU_CMD_SPE_READ:
		return amupmu_spe_read(slot, arg);
	default:
		return -ENOTTY;
	}
}

/*
 * Stop and free the configuration CONFIG @seq made (its reply could not be
 * copied back), if the file still holds that one: another thread of the
 * file may have released it and configured its own meanwhile. The file's
 * SPE state (its wait queue) stays.
 */
void amupmu_spe_release(struct amupmu_spe_sess **slot, u64 seq)
{
	struct amupmu_spe_cfg *gone = NULL;
	struct amupmu_spe_sess *file = *slot;

	mutex_lock(&amupmu_spe_sess_lock);
	if (file->cfg && file->cfg->seq == seq)
		gone = amupmu_spe_unconfig_locked(file);
	mutex_unlock(&amupmu_spe_sess_lock);
	amupmu_spe_publish_put(gone);
}

/**
 * amupmu_spe_file_init() - the file's SPE state, at open
 * @slot: the session's slot
 *
 * Its wait queue exists from open on, so that poll() and epoll_ctl(ADD)
 * before the first CONFIG queue on it and are woken.
 *
 * Return: 0 or -ENOMEM.
 */
int amupmu_spe_file_init(struct amupmu_spe_sess **slot)
{
	struct amupmu_spe_sess *file = kzalloc(sizeof(*file), GFP_KERNEL);

	if (!file)
		return -ENOMEM;
	init_waitqueue_head(&file->wait);
	mutex_init(&file->map_lock);
	*slot = file;
	return 0;
}

/*
 * The session's file goes (->release): the configuration, then the file's
 * SPE state. No poller is left (poll() holds the file, epoll removed its
 * entries before ->release), and no ioctl of the file runs: only those
 * set file->cfg, so a file without a configuration goes without
 * amupmu_spe_sess_lock.
 */
void amupmu_spe_file_release(struct amupmu_spe_sess **slot)
{
	struct amupmu_spe_sess *file = *slot;
	struct amupmu_spe_cfg *gone;

	if (!file)
		return;
	if (READ_ONCE(file->cfg)) {
		mutex_lock(&amupmu_spe_sess_lock);
		gone = amupmu_spe_unconfig_locked(file);
		mutex_unlock(&amupmu_spe_sess_lock);
		amupmu_spe_publish_put(gone);
	}
	*slot = NULL;
	mutex_destroy(&file->map_lock);
	kfree(file);
}

/**
 * amupmu_spe_mmap() - map one CPU's buffer (offset AMUPMU_SPE_MMAP_OFFSET(cpu))
 * @slot: the session's SPE state
 * @vma: the mapping: 1 + buf_pages pages, shared, not executable
 *
 * Called under the mmap_lock: takes only the file's map_lock inside it (the
 * lock order above). The mapping holds a reference on the buffer (struct
 * amupmu_mbuf: vm_ops open/close), as perf's mappings hold the ring
 * buffer: it outlives RELEASE, and its file (vm_file) the file's release.
 *
 * Return: 0; -EINVAL without a configuration, for a CPU not in its set or
 * another shape of mapping.
 */
int amupmu_spe_mmap(struct amupmu_spe_sess **slot, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	struct amupmu_spe_cfg *sess;
	unsigned int i;
	int ret = -EINVAL;

	if (off < AMUPMU_SPE_MMAP_OFFSET(0) || (off - AMUPMU_SPE_MMAP_OFFSET(0)) & U32_MAX)
		return -EINVAL;
	if (!*slot)
		return -EINVAL;
	/* the map_lock, not amupmu_spe_sess_lock: see the lock order */
	mutex_lock(&(*slot)->map_lock);
	sess = (*slot)->cfg;
	for (i = 0; sess && i < sess->nr; i++)
		if (AMUPMU_SPE_MMAP_OFFSET(sess->pcs[i].cpu) == off)
			ret = amupmu_mbuf_mmap(&sess->pcs[i].buf->mb, vma, vma->vm_pgoff);
	mutex_unlock(&(*slot)->map_lock);
	return ret;
}

/*
 * poll(): EPOLLIN when a CPU's buffer holds its watermark, EPOLLPRI on a
 * fault, EPOLLHUP once the SPE device the configuration was made with is
 * gone. Waits on the file's queue, which outlives the configuration.
 */
__poll_t amupmu_spe_poll(struct amupmu_spe_sess **slot, struct file *filp,
			 struct poll_table_struct *wait)
{
	struct amupmu_spe_sess *file;
	struct amupmu_spe_cfg *sess;
	__poll_t mask = 0;
	unsigned int i;

	file = *slot;
	poll_wait(filp, &file->wait, wait);
	/* queued before looking: pairs with the publisher's wake_up_all() */
	smp_mb();
	/*
	 * A file without SPE configuration does not contend for the global
	 * lock (an SPE mmap() waits for it holding its mmap_lock): a CONFIG
	 * that races this look wakes the queue when it has data
	 */
	if (!READ_ONCE(file->cfg))
		return 0;
	mutex_lock(&amupmu_spe_sess_lock);
	sess = file->cfg;
	for (i = 0; sess && i < sess->nr; i++) {
		const struct amupmu_spe_pcs *pcs = &sess->pcs[i];

		/* the kernel's head, not the mapped header's (user-writable) */
		if (READ_ONCE(pcs->head) - READ_ONCE(pcs->buf->hdr->data_tail) >=
		    sess->watermark)
			mask |= EPOLLIN | EPOLLRDNORM;
		if (READ_ONCE(pcs->state) & AMUPMU_SPE_FAULT)
			mask |= EPOLLPRI;
	}
	if (sess && amupmu_spe_stale(sess))
		mask |= EPOLLHUP;
	mutex_unlock(&amupmu_spe_sess_lock);
	return mask;
}

struct amupmu_spe_live_req {
	u64 *regs;
	int ret;
};

static void amupmu_spe_live_fn(void *arg)
{
	struct amupmu_spe_pcpu *pp = this_cpu_ptr(&amupmu_spe_pcpu);
	struct amupmu_spe_live_req *req = arg;
	unsigned int r;

	raw_spin_lock(&pp->lock);
	if (!pp->active || !pp->active->running) {
		req->ret = -ENODATA;
	} else {
		for (r = 0; r < AMUPMU_SPE_SR_NR; r++)
			req->regs[r] = amupmu_spe_regs->read(r);
		req->ret = 0;
	}
	raw_spin_unlock(&pp->lock);
}

/**
 * amupmu_spe_live_regs() - the SPE registers of @cpu's running session
 * @cpu: the CPU
 * @regs: AMUPMU_SPE_SR_NR values, in enum amupmu_spe_sysreg order
 *
 * Read on the CPU, so only while a session profiles there: a CPU no
 * session programs is not touched.
 *
 * Return: 0; -ENODATA when no session profiles on @cpu; -ENODEV offline.
 */
int amupmu_spe_live_regs(unsigned int cpu, u64 *regs)
{
	struct amupmu_spe_live_req req = { .regs = regs, .ret = -ENODEV };

	cpus_read_lock();
	if (cpu_online(cpu))
		smp_call_function_single(cpu, amupmu_spe_live_fn, &req, 1);
	cpus_read_unlock();
	return req.ret;
}

bool amupmu_spe_configured(struct amupmu_spe_sess **slot)
{
	struct amupmu_spe_sess *file = READ_ONCE(*slot);

	/* the file's SPE state lives as long as the file */
	return file && READ_ONCE(file->cfg);
}

/**
 * amupmu_spe_dev_gone() - the claimed SPE device is going (unbind, unload):
 *	stop every configuration's profiling before its interrupt is freed
 *
 * The configurations keep their buffers and data (READ, the mappings),
 * and go stale: CTL ENABLE and DISABLE fail with ENXIO, CPUs coming online
 * do not start them, poll() reports EPOLLHUP; RELEASE frees them.
 */
void amupmu_spe_dev_gone(void)
{
	unsigned int cpu;

	mutex_lock(&amupmu_spe_sess_lock);
	WRITE_ONCE(amupmu_spe_gen, amupmu_spe_gen + 1);
	cpus_read_lock();
	/* amupmu_spe_pcpu.active is read on the CPU, under its lock */
	for_each_online_cpu(cpu)
		smp_call_function_single(cpu, amupmu_spe_stop_fn, NULL, 1);
	cpus_read_unlock();
	/* .active changes only under amupmu_spe_sess_lock, held */
	for_each_possible_cpu(cpu) {
		struct amupmu_spe_pcs *pcs = per_cpu_ptr(&amupmu_spe_pcpu, cpu)->active;

		if (pcs) {
			WRITE_ONCE(pcs->sess->enabled, false);
			wake_up_all(&pcs->sess->file->wait);
		}
	}
	mutex_unlock(&amupmu_spe_sess_lock);
}

/**
 * amupmu_spe_init() - the defaults at load (no filter, the smallest interval
 *	every CPU with SPE allows), the hotplug and CPU PM callbacks
 *
 * Return: 0 or -errno.
 */
int amupmu_spe_init(void)
{
	unsigned int cpu;
	u32 interval = 0;
	int ret;

	for_each_possible_cpu(cpu)
		raw_spin_lock_init(&per_cpu_ptr(&amupmu_spe_pcpu, cpu)->lock);
	mutex_lock(&amupmu_dev.lock);
	for_each_possible_cpu(cpu) {
		const struct amupmu_cpu_info *ci = &amupmu_dev.cpus[cpu];

		if (ci->flags & AMUPMU_CPU_SPE)
			interval = max(interval, amupmu_spe_min_interval(ci->pmsidr));
	}
	mutex_unlock(&amupmu_dev.lock);
	mutex_lock(&amupmu_spe_lock);
	amupmu_spe_defaults = (struct amupmu_spe_filter) { .pmsirr = interval };
	mutex_unlock(&amupmu_spe_lock);

	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "amupmu/spe:online",
					amupmu_spe_cpu_online, amupmu_spe_cpu_offline);
	if (ret < 0)
		return ret;
	amupmu_spe_hp_state = ret;
	ret = cpu_pm_register_notifier(&amupmu_spe_cpu_pm_nb);
	if (ret) {
		cpuhp_remove_state_nocalls(amupmu_spe_hp_state);
		return ret;
	}
	return 0;
}

/* At unload: no session is left (their files hold the module). */
void amupmu_spe_exit(void)
{
	unsigned int cpu;

	cpu_pm_unregister_notifier(&amupmu_spe_cpu_pm_nb);
	cpuhp_remove_state_nocalls(amupmu_spe_hp_state);
	for_each_possible_cpu(cpu) {
		vfree(per_cpu_ptr(&amupmu_spe_pcpu, cpu)->discard);
		per_cpu_ptr(&amupmu_spe_pcpu, cpu)->discard = NULL;
	}
}
