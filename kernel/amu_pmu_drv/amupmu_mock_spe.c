// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: the mock Statistical Profiling Extension (test builds only,
 * CONFIG_AMUPMU_MOCK=y): a per-CPU model of the SPE identification and
 * register file and of the profiling unit, behind amupmu_spe_mock_ops
 * (the register seam of amupmu_spe.h). It follows the Arm ARM (DDI 0487,
 * chapter D10 and its SPE pseudocode); the pure parts, the record
 * encoding and the filters, are in amupmu_spe_model.h (host-tested).
 *
 * What runs where, and the locking:
 * - amupmu_spe_mock_ops.read/write/drain: on the CPU whose registers they
 *   access; they disable interrupts themselves, so they never interleave
 *   with that CPU's tick.
 * - The tick: a per-CPU pinned hrtimer in hard-IRQ mode, started by the
 *   register write that makes profiling possible (or sets PMBSR_EL1.S) on
 *   that CPU. Its callback runs the operations since the last tick, writes
 *   the records into the buffer and, while PMBSR_EL1.S is 1, calls
 *   amupmu_spe_irq_handle() (hard IRQ context, on the CPU), again at every
 *   tick while S stays 1 (a level-sensitive interrupt). The handler may
 *   write the registers again: a write from inside the callback never
 *   starts or cancels the timer (in_tick); the callback re-arms itself when
 *   profiling or S asks for it and otherwise returns HRTIMER_NORESTART. A
 *   write from outside the callback that leaves nothing to do cancels it
 *   with hrtimer_try_to_cancel() (never a synchronous cancel: the driver
 *   may call from interrupt context).
 * - Model state (registers, knobs, counters, PRNG) of a CPU is touched
 *   only on that CPU with interrupts off: the register ops, the tick, and
 *   the debugfs files' cross calls (smp_call_function_single). An offline
 *   CPU's state is read and reset directly (nothing runs there).
 * - amupmu_mock_spe_exit() (module unload, process context) cancels every
 *   CPU's timer synchronously; after it nothing restarts them.
 * - CPU offline: the driver disables profiling (PMBLIMITR_EL1.E = 0)
 *   before, which cancels the timer; a timer that still runs on another
 *   CPU (migrated by hotplug) stops at its next expiry without touching
 *   anything.
 *
 * The model (see Documentation/admin-guide/amupmu.rst, "Mock SPE model"):
 * operations run at ops_per_us per microsecond of the time since the
 * last tick, all in the context the tick interrupted (EL0 if it was user
 * mode, else the kernel: EL1, EL2 on a VHE host); none while the CPU is
 * idle. The interval counter (PMSICR_EL1.COUNT) counts the operations of
 * the ELs PMSCR enables; at zero the operation is selected and the
 * counter reloaded (PMSIRR_EL1.INTERVAL, its low 8 bits random with RND).
 * A selected operation gets synthetic attributes from a seeded per-CPU
 * PRNG (class, FP/SIMD, latencies, events, data address); it collides when
 * the previously selected one is still in flight (its total latency, in
 * operations, is more than the distance), else it goes through the type,
 * event and latency filters and its record is written at PMBPTR_EL1,
 * padded to 64 bytes. A record that does not fit below PMBLIMITR_EL1.LIMIT
 * raises the buffer full management event. PMSCR_EL1.PCT is not modelled:
 * timestamps are arch_timer_read_counter(), the kernel's choice (CNTVCT_EL0
 * at EL1, CNTPCT_EL0 on a VHE host).
 */
#include <linux/bitfield.h>
#include <linux/bits.h>
#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/irq_regs.h>
#include <asm/ptrace.h>
#include <asm/sysreg.h>
#include <asm/virt.h>
#include <clocksource/arm_arch_timer.h>

#include "amupmu.h"
#include "amupmu_compat.h"
#include "amupmu_mock.h"
#include "amupmu_spe.h"
#include "amupmu_spe_model.h"

/*
 * SPE identification.
 *
 * Each CPU reads as FEAT_SPEv1p4 with PMSIDR_EL1 = FE, FT, FL, ArchInst,
 * LDS, ERnd, FnE, EFT, Interval 0 (256 operations), MaxSize 6 (64-byte
 * records), CountSize 2 (12-bit saturating), and PMBIDR_EL1 = 0 (EL1 owns
 * the buffer, no alignment constraint), unless a test changed it:
 *
 * /sys/kernel/debug/amupmu/spe_model (0600):
 *   write "<cpu> key=value [key=value ...]" with pmsver (0-5, 0: no SPE),
 *   pmsidr (within bits 26:0), pmbidr (within bits 11:0), each at most
 *   once; or "<cpu> reset". All checked before any applies (EINVAL; an
 *   offline CPU ENODEV; nothing changes), then the CPU's SPE is discovered
 *   again (amupmu_spe_rediscover()).
 *   read: "cpu<N> pmsver=<n> pmsidr=0x.. pmbidr=0x.." per possible CPU.
 *
 * The profiling unit below follows it: the PMSFCR_EL1 and PMSEVFR_EL1 bits
 * of features the identification lacks are RES0, and so are the Events
 * packet's FEAT_SPEv1p4 events below that version.
 */
#define AMUPMU_MOCK_PMSIDR	(PMSIDR_EL1_FE | PMSIDR_EL1_FT | PMSIDR_EL1_FL |	\
				 PMSIDR_EL1_ARCHINST | PMSIDR_EL1_LDS | PMSIDR_EL1_ERND |	\
				 PMSIDR_EL1_FnE | PMSIDR_EL1_EFT |			\
				 FIELD_PREP(PMSIDR_EL1_INTERVAL, 0) |			\
				 FIELD_PREP(PMSIDR_EL1_MAXSIZE, 6) |			\
				 FIELD_PREP(PMSIDR_EL1_COUNTSIZE, 2))
#define AMUPMU_MOCK_PMSIDR_VALID	GENMASK_ULL(26, 0)
#define AMUPMU_MOCK_PMBIDR_VALID	GENMASK_ULL(11, 0)

struct amupmu_mock_spe_id {
	u64 pmsidr;
	u64 pmbidr;
	u8 pmsver;
	bool set;	/* a test changed it; else the defaults */
};

static DEFINE_PER_CPU(struct amupmu_mock_spe_id, amupmu_mock_spe);
static DEFINE_MUTEX(amupmu_mock_spe_lock);	/* writers of amupmu_mock_spe */

static struct amupmu_mock_spe_id amupmu_mock_spe_defaults(void)
{
	return (struct amupmu_mock_spe_id) {
		.pmsidr = AMUPMU_MOCK_PMSIDR,
		.pmbidr = 0,
		.pmsver = ID_AA64DFR0_EL1_PMSVer_V1P4,
	};
}

/*
 * A CPU's identification. Written under cpus_read_lock(), so never while
 * that CPU's discovery (its online callback) reads it; the cross call of
 * amupmu_spe_rediscover() orders the write before its own read.
 */
static struct amupmu_mock_spe_id amupmu_mock_spe_get(unsigned int cpu)
{
	struct amupmu_mock_spe_id id = *per_cpu_ptr(&amupmu_mock_spe, cpu);

	return id.set ? id : amupmu_mock_spe_defaults();
}

/* ID_AA64DFR0_EL1.PMSVer, PMSIDR_EL1, PMBIDR_EL1 of @cpu (amupmu_mock.c) */
u8 amupmu_mock_spe_pmsver(unsigned int cpu)
{
	return amupmu_mock_spe_get(cpu).pmsver;
}

u64 amupmu_mock_spe_pmsidr(unsigned int cpu)
{
	return amupmu_mock_spe_get(cpu).pmsidr;
}

u64 amupmu_mock_spe_pmbidr(unsigned int cpu)
{
	return amupmu_mock_spe_get(cpu).pmbidr;
}

/* One "key=value" of an spe_model write into @id; @given: keys seen. */
static int amupmu_mock_spe_parse_kv(struct amupmu_mock_spe_id *id, unsigned int *given,
				    char *tok)
{
	static const char * const keys[] = { "pmsver", "pmsidr", "pmbidr" };
	char *val = strchr(tok, '=');
	unsigned int i;
	u64 v;

	if (!val)
		return -EINVAL;
	*val++ = '\0';
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (!strcmp(tok, keys[i]))
			break;
	if (i == ARRAY_SIZE(keys) || (*given & BIT(i)) || kstrtou64(val, 0, &v))
		return -EINVAL;
	*given |= BIT(i);
	switch (i) {
	case 0:
		if (v > ID_AA64DFR0_EL1_PMSVer_V1P4)
			return -EINVAL;
		id->pmsver = v;
		break;
	case 1:
		if (v & ~AMUPMU_MOCK_PMSIDR_VALID)
			return -EINVAL;
		id->pmsidr = v;
		break;
	default:
		if (v & ~AMUPMU_MOCK_PMBIDR_VALID)
			return -EINVAL;
		id->pmbidr = v;
		break;
	}
	return 0;
}

static ssize_t amupmu_mock_spe_write(struct file *file, const char __user *ubuf, size_t len,
				     loff_t *ppos)
{
	struct amupmu_mock_spe_id id, old;
	unsigned int given = 0;
	char buf[128], *p, *tok;
	int cpu, ret = 0;

	cpu = amupmu_mock_cpu_cmd(ubuf, len, buf, sizeof(buf), &p);
	if (cpu < 0)
		return cpu;
	id = amupmu_mock_spe_get(cpu);
	if (p && !strcmp(strim(p), "reset")) {
		id = amupmu_mock_spe_defaults();
		given = 1;
	} else {
		while (p && (tok = strsep(&p, " "))) {
			if (!*tok)
				continue;
			ret = amupmu_mock_spe_parse_kv(&id, &given, tok);
			if (ret)
				return ret;
		}
	}
	if (!given)
		return -EINVAL;
	id.set = true;

	cpus_read_lock();
	mutex_lock(&amupmu_mock_spe_lock);
	if (!cpu_online(cpu)) {
		ret = -ENODEV;
	} else {
		old = *per_cpu_ptr(&amupmu_mock_spe, cpu);
		*per_cpu_ptr(&amupmu_mock_spe, cpu) = id;
		ret = amupmu_spe_rediscover(cpu);
		if (ret)
			*per_cpu_ptr(&amupmu_mock_spe, cpu) = old;
	}
	mutex_unlock(&amupmu_mock_spe_lock);
	cpus_read_unlock();
	return ret ?: len;
}

static int amupmu_mock_spe_show(struct seq_file *sf, void *v)
{
	struct amupmu_mock_spe_id id;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		id = amupmu_mock_spe_get(cpu);
		seq_printf(sf, "cpu%u pmsver=%u pmsidr=0x%llx pmbidr=0x%llx\n", cpu, id.pmsver,
			   id.pmsidr, id.pmbidr);
	}
	return 0;
}

static int amupmu_mock_spe_open(struct inode *inode, struct file *file)
{
	return single_open(file, amupmu_mock_spe_show, inode->i_private);
}

static const struct file_operations amupmu_mock_spe_fops = {
	.owner = THIS_MODULE,
	.open = amupmu_mock_spe_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = amupmu_mock_spe_write,
};

/* ------------------------------------------------------------ the profiling unit */

/*
 * The stream's knobs (debugfs spe_stream), per CPU. Shares are per 1000:
 * of all operations for branch, load, store and atomic (a load-and-store
 * operation; "other" is what remains), of the "other" operations for fp
 * and simd (drawn independently), of the loads and stores for l1miss; lat
 * is the mean latency in cycles of an operation that hits in L1.
 */
enum {
	AMUPMU_SPE_KEY_SEED,
	AMUPMU_SPE_KEY_OPS_PER_US,
	AMUPMU_SPE_KEY_TICK_US,
	AMUPMU_SPE_KEY_BRANCH,
	AMUPMU_SPE_KEY_LOAD,
	AMUPMU_SPE_KEY_STORE,
	AMUPMU_SPE_KEY_ATOMIC,
	AMUPMU_SPE_KEY_FP,
	AMUPMU_SPE_KEY_SIMD,
	AMUPMU_SPE_KEY_LAT,
	AMUPMU_SPE_KEY_L1MISS,
	AMUPMU_SPE_KEY_NR,
};

static const char * const amupmu_spe_key_names[AMUPMU_SPE_KEY_NR] = {
	"seed", "ops_per_us", "tick_us", "branch", "load", "store", "atomic", "fp", "simd",
	"lat", "l1miss",
};

/* { min, max, default } of each key; the default seed is 1 + the CPU */
static const u64 amupmu_spe_key_range[AMUPMU_SPE_KEY_NR][3] = {
	{ 0, U64_MAX, 1 }, { 1, 100000, 1000 }, { 10, 1000000, 1000 },
	{ 0, 1000, 150 }, { 0, 1000, 250 }, { 0, 1000, 100 }, { 0, 1000, 20 },
	{ 0, 1000, 200 }, { 0, 1000, 100 }, { 1, 1000, 8 }, { 0, 1000, 100 },
};

/* The model's counters per CPU (debugfs spe_stats) */
enum {
	AMUPMU_SPE_ST_OPS_EL0,		/* operations counted at EL0 */
	AMUPMU_SPE_ST_OPS_KERNEL,	/* ... in the kernel (EL1, or EL2 with VHE) */
	AMUPMU_SPE_ST_SELECTED,		/* selected by the interval counter */
	AMUPMU_SPE_ST_COLLISIONS,	/* selected while the previous one was in flight */
	AMUPMU_SPE_ST_REJ_TYPE,		/* filtered out: by type (checked first) */
	AMUPMU_SPE_ST_REJ_EVENT,	/* ... by event */
	AMUPMU_SPE_ST_REJ_LATENCY,	/* ... by latency */
	AMUPMU_SPE_ST_MULTI_LOAD,	/* load-and-store operations recorded as a load */
	AMUPMU_SPE_ST_MULTI_STORE,	/* ... as a store */
	AMUPMU_SPE_ST_RECORDS,		/* records written whole */
	AMUPMU_SPE_ST_BYTES,		/* bytes written, padding and partial records included */
	AMUPMU_SPE_ST_EV_FULL,		/* management events: buffer full */
	AMUPMU_SPE_ST_EV_S1,		/* stage 1 fault */
	AMUPMU_SPE_ST_EV_S2,		/* stage 2 fault */
	AMUPMU_SPE_ST_EV_EA,		/* external abort */
	AMUPMU_SPE_ST_EV_DL,		/* buffer full with a partial record (DL) */
	AMUPMU_SPE_ST_EV_UNKNOWN,	/* an EC the driver does not know */
	AMUPMU_SPE_ST_IRQS,		/* amupmu_spe_irq_handle() calls */
	AMUPMU_SPE_ST_LOST_NS,		/* profiled time beyond two periods a tick dropped */
	AMUPMU_SPE_ST_IRQ_NS_MIN,	/* shortest amupmu_spe_irq_handle() call (0: none yet) */
	AMUPMU_SPE_ST_IRQ_NS_MAX,	/* longest: interrupts off all along */
	AMUPMU_SPE_ST_NR,
};

static const char * const amupmu_spe_st_names[AMUPMU_SPE_ST_NR] = {
	"ops_el0", "ops_kernel", "selected", "collisions", "rej_type", "rej_event",
	"rej_latency", "multi_load", "multi_store", "records", "bytes", "ev_full", "ev_s1",
	"ev_s2", "ev_ea", "ev_dl", "ev_unknown", "irqs", "lost_ns", "irq_ns_min", "irq_ns_max",
};

/* Injected faults (debugfs spe_fault), taken by the next record write */
enum {
	AMUPMU_SPE_FAULT_NONE,
	AMUPMU_SPE_FAULT_S1,
	AMUPMU_SPE_FAULT_S2,
	AMUPMU_SPE_FAULT_EA,
	AMUPMU_SPE_FAULT_DL,
	AMUPMU_SPE_FAULT_UNKNOWN,
	AMUPMU_SPE_FAULT_NR,
};

static const char * const amupmu_spe_fault_names[AMUPMU_SPE_FAULT_NR] = {
	"none", "s1", "s2", "ea", "dl", "unknown",
};

#define AMUPMU_MOCK_SPE_FSC		0x07	/* translation fault, level 3 */
#define AMUPMU_MOCK_SPE_EC_UNKNOWN	0x1f
#define AMUPMU_MOCK_SPE_HOT		4	/* hot cache lines */
#define AMUPMU_MOCK_SPE_SPAN		(16U << 20)	/* the other data addresses */
/* Synthetic data addresses: user, kernel (a linear-map shape), physical */
#define AMUPMU_MOCK_SPE_VA_USER		0x0000ffff80000000ULL
#define AMUPMU_MOCK_SPE_VA_KERNEL	(PAGE_OFFSET + 0x40000000ULL)
#define AMUPMU_MOCK_SPE_PA		0x80000000ULL
/* Data Source values (IMPLEMENTATION DEFINED; these are Neoverse's) */
#define AMUPMU_MOCK_SPE_DS_L1		0x0
#define AMUPMU_MOCK_SPE_DS_L2		0x8
#define AMUPMU_MOCK_SPE_DS_LLC		0xb
#define AMUPMU_MOCK_SPE_DS_DRAM		0xe

/**
 * struct amupmu_mock_spe_cpu - one CPU's profiling unit
 * @reg: the registers, RES0 bits clear
 * @k: the knobs
 * @st: the counters
 * @timer: the tick
 * @rng: xorshift64* state
 * @t_last: ktime_get_ns() of the last tick, or of when profiling started
 * @op_frac: operations not yet run, in 1/1000 (of ops_per_us * ns)
 * @pos: operations counted
 * @busy_until: @pos at which the last selected operation completes
 * @cpu: the CPU
 * @fault: the injected fault pending (AMUPMU_SPE_FAULT_*)
 * @started: set up (at the first access on the CPU)
 * @in_tick: the tick's callback is running (on this CPU)
 * @dead: module unload: never start the timer again
 */
struct amupmu_mock_spe_cpu {
	u64 reg[AMUPMU_SPE_SR_NR];
	u64 k[AMUPMU_SPE_KEY_NR];
	u64 st[AMUPMU_SPE_ST_NR];
	struct hrtimer timer;
	u64 rng;
	u64 t_last;
	u64 op_frac;
	u64 pos;
	u64 busy_until;
	unsigned int cpu;
	u8 fault;
	bool started;
	bool in_tick;
	bool dead;
};

static DEFINE_PER_CPU(struct amupmu_mock_spe_cpu, amupmu_mock_spe_cpu);
static DEFINE_MUTEX(amupmu_mock_spe_knob_lock);	/* writers of the debugfs files */

static void amupmu_mock_spe_defaults_k(u64 *k, unsigned int cpu)
{
	unsigned int i;

	for (i = 0; i < AMUPMU_SPE_KEY_NR; i++)
		k[i] = amupmu_spe_key_range[i][2];
	k[AMUPMU_SPE_KEY_SEED] += cpu;
}

/* splitmix64 of the seed: a non-zero xorshift state */
static void amupmu_mock_spe_seed(struct amupmu_mock_spe_cpu *m)
{
	u64 z = m->k[AMUPMU_SPE_KEY_SEED] + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	m->rng = z ?: 1;
}

static u64 amupmu_mock_spe_rand(struct amupmu_mock_spe_cpu *m)
{
	u64 x = m->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	m->rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* A random number below @n (> 0) */
static u32 amupmu_mock_spe_below(struct amupmu_mock_spe_cpu *m, u32 n)
{
	return (u32)(amupmu_mock_spe_rand(m) >> 32) % n;
}

/* True with probability @per_mille / 1000 */
static bool amupmu_mock_spe_chance(struct amupmu_mock_spe_cpu *m, u64 per_mille)
{
	return amupmu_mock_spe_below(m, 1000) < per_mille;
}

static enum hrtimer_restart amupmu_mock_spe_tick(struct hrtimer *t);

/* This CPU's unit, set up on first use. Interrupts off. */
static struct amupmu_mock_spe_cpu *amupmu_mock_spe_this(void)
{
	struct amupmu_mock_spe_cpu *m = this_cpu_ptr(&amupmu_mock_spe_cpu);

	if (!m->started) {
		m->cpu = smp_processor_id();
		amupmu_mock_spe_defaults_k(m->k, m->cpu);
		amupmu_mock_spe_seed(m);
		hrtimer_init(&m->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
		m->timer.function = amupmu_mock_spe_tick;
		m->started = true;
	}
	return m;
}

/* PMSEVFR_EL1/PMSNEVFR_EL1 bits that are RES0 at SPE version @pmsver */
static u64 amupmu_mock_spe_evfr_res0(unsigned int pmsver)
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

/* The bits of @r that this CPU's identification implements (the rest RES0) */
static u64 amupmu_mock_spe_wmask(unsigned int cpu, enum amupmu_spe_sysreg r)
{
	struct amupmu_mock_spe_id id = amupmu_mock_spe_get(cpu);
	u64 fcr = 0;

	switch (r) {
	case AMUPMU_SPE_SR_PMSCR:
		return PMSCR_EL1_E0SPE | PMSCR_EL1_E1SPE | PMSCR_EL1_CX | PMSCR_EL1_PA |
		       PMSCR_EL1_TS | PMSCR_EL1_PCT;
	case AMUPMU_SPE_SR_PMSICR:
		return PMSICR_EL1_COUNT;
	case AMUPMU_SPE_SR_PMSIRR:
		return PMSIRR_EL1_INTERVAL | PMSIRR_EL1_RND;
	case AMUPMU_SPE_SR_PMSFCR:
		if (id.pmsidr & PMSIDR_EL1_FE)
			fcr |= PMSFCR_EL1_FE;
		if (id.pmsidr & PMSIDR_EL1_FT)
			fcr |= PMSFCR_EL1_FT | PMSFCR_EL1_B | PMSFCR_EL1_LD | PMSFCR_EL1_ST;
		if (id.pmsidr & PMSIDR_EL1_FL)
			fcr |= PMSFCR_EL1_FL;
		if (id.pmsidr & PMSIDR_EL1_FnE)
			fcr |= PMSFCR_EL1_FnE;
		if (id.pmsidr & PMSIDR_EL1_EFT)
			fcr |= PMSFCR_EL1_FP | PMSFCR_EL1_SIMD | PMSFCR_EL1_TYPEm;
		return fcr;
	case AMUPMU_SPE_SR_PMSEVFR:
		return ~amupmu_mock_spe_evfr_res0(id.pmsver);
	case AMUPMU_SPE_SR_PMSNEVFR:
		return id.pmsidr & PMSIDR_EL1_FnE ? ~amupmu_mock_spe_evfr_res0(id.pmsver) : 0;
	case AMUPMU_SPE_SR_PMSLATFR:
		return FIELD_GET(PMSIDR_EL1_COUNTSIZE, id.pmsidr) == 3 ? 0xffff : 0xfff;
	case AMUPMU_SPE_SR_PMBLIMITR:
		return PMBLIMITR_EL1_LIMIT | PMBLIMITR_EL1_FM | PMBLIMITR_EL1_E;
	case AMUPMU_SPE_SR_PMBPTR:
		return ~0ULL;
	case AMUPMU_SPE_SR_PMBSR:
		return PMBSR_EL1_EC | PMBSR_EL1_DL | PMBSR_EL1_EA | PMBSR_EL1_S |
		       PMBSR_EL1_COLL | PMBSR_EL1_MSS;
	default:
		return 0;
	}
}

/* Buffer enabled and not stopped by a management event, some EL enabled */
static bool amupmu_mock_spe_armed(const struct amupmu_mock_spe_cpu *m)
{
	return (m->reg[AMUPMU_SPE_SR_PMBLIMITR] & PMBLIMITR_EL1_E) &&
	       !(m->reg[AMUPMU_SPE_SR_PMBSR] & PMBSR_EL1_S) &&
	       (m->reg[AMUPMU_SPE_SR_PMSCR] & (PMSCR_EL1_E0SPE | PMSCR_EL1_E1SPE));
}

/* Does the tick have something to do: profile, or raise the interrupt? */
static bool amupmu_mock_spe_busy(const struct amupmu_mock_spe_cpu *m)
{
	return amupmu_mock_spe_armed(m) || (m->reg[AMUPMU_SPE_SR_PMBSR] & PMBSR_EL1_S);
}

static ktime_t amupmu_mock_spe_period(const struct amupmu_mock_spe_cpu *m)
{
	return ns_to_ktime(m->k[AMUPMU_SPE_KEY_TICK_US] * NSEC_PER_USEC);
}

/* After a register write, outside the tick: start or cancel the timer. */
static void amupmu_mock_spe_kick(struct amupmu_mock_spe_cpu *m)
{
	if (m->in_tick)
		return;		/* the callback decides when it returns */
	if (amupmu_mock_spe_busy(m) && !READ_ONCE(m->dead)) {
		if (!hrtimer_is_queued(&m->timer))
			hrtimer_start(&m->timer, amupmu_mock_spe_period(m),
				      HRTIMER_MODE_REL_PINNED_HARD);
	} else {
		hrtimer_try_to_cancel(&m->timer);
	}
}

static u64 amupmu_mock_spe_read(enum amupmu_spe_sysreg r)
{
	unsigned long flags;
	u64 val = 0;

	if (r >= AMUPMU_SPE_SR_NR)
		return 0;
	local_irq_save(flags);
	val = amupmu_mock_spe_this()->reg[r];
	local_irq_restore(flags);
	return val;
}

static void amupmu_mock_spe_wr(enum amupmu_spe_sysreg r, u64 val)
{
	struct amupmu_mock_spe_cpu *m;
	unsigned long flags;
	bool was;

	if (r >= AMUPMU_SPE_SR_NR)
		return;
	local_irq_save(flags);
	m = amupmu_mock_spe_this();
	was = amupmu_mock_spe_armed(m);
	m->reg[r] = val & amupmu_mock_spe_wmask(m->cpu, r);
	if (!was && amupmu_mock_spe_armed(m)) {
		m->t_last = ktime_get_ns();	/* operations count from now */
		m->op_frac = 0;
	}
	amupmu_mock_spe_kick(m);
	local_irq_restore(flags);
}

/*
 * PSB CSYNC; DSB NSH: the model writes every record synchronously, in the
 * tick, on the CPU, so when the driver (on that CPU, interrupts or
 * preemption off) drains, everything sampled so far is in memory and
 * PMBPTR_EL1 covers it already. Nothing is pending.
 */
static void amupmu_mock_spe_drain(void)
{
	barrier();
}

const struct amupmu_spe_ops amupmu_spe_mock_ops = {
	.read = amupmu_mock_spe_read,
	.write = amupmu_mock_spe_wr,
	.drain = amupmu_mock_spe_drain,
};

/* A management event: stop profiling (PMBSR_EL1.S), COLL kept. */
static void amupmu_mock_spe_event(struct amupmu_mock_spe_cpu *m, u64 syndrome, unsigned int st)
{
	m->reg[AMUPMU_SPE_SR_PMBSR] = (m->reg[AMUPMU_SPE_SR_PMBSR] & PMBSR_EL1_COLL) |
				      PMBSR_EL1_S | syndrome;
	m->st[st]++;
}

#define AMUPMU_MOCK_SPE_FULL	(FIELD_PREP(PMBSR_EL1_EC, PMBSR_EL1_EC_BUF) |	\
				 FIELD_PREP(PMBSR_EL1_MSS, PMBSR_EL1_BUF_BSC_FULL))

/* Take the injected fault, if any, for the record about to be written. */
static bool amupmu_mock_spe_fault(struct amupmu_mock_spe_cpu *m)
{
	u8 fault = m->fault;

	m->fault = AMUPMU_SPE_FAULT_NONE;
	switch (fault) {
	case AMUPMU_SPE_FAULT_S1:
		amupmu_mock_spe_event(m, FIELD_PREP(PMBSR_EL1_EC, PMBSR_EL1_EC_FAULT_S1) |
				      FIELD_PREP(PMBSR_EL1_MSS, AMUPMU_MOCK_SPE_FSC),
				      AMUPMU_SPE_ST_EV_S1);
		return true;
	case AMUPMU_SPE_FAULT_S2:
		amupmu_mock_spe_event(m, FIELD_PREP(PMBSR_EL1_EC, PMBSR_EL1_EC_FAULT_S2) |
				      FIELD_PREP(PMBSR_EL1_MSS, AMUPMU_MOCK_SPE_FSC),
				      AMUPMU_SPE_ST_EV_S2);
		return true;
	case AMUPMU_SPE_FAULT_EA:
		amupmu_mock_spe_event(m, PMBSR_EL1_EA, AMUPMU_SPE_ST_EV_EA);
		return true;
	case AMUPMU_SPE_FAULT_UNKNOWN:
		amupmu_mock_spe_event(m, FIELD_PREP(PMBSR_EL1_EC, AMUPMU_MOCK_SPE_EC_UNKNOWN),
				      AMUPMU_SPE_ST_EV_UNKNOWN);
		return true;
	default:
		m->fault = fault;	/* DL: taken by the write itself */
		return false;
	}
}

/*
 * Write a record of @len bytes at PMBPTR_EL1: PADs so that it does not
 * cross 64 bytes, the record, PADs to the end of its 64-byte block. If
 * that does not fit below PMBLIMITR_EL1.LIMIT, the buffer full event.
 *
 * Return: the record was written whole.
 */
static bool amupmu_mock_spe_put(struct amupmu_mock_spe_cpu *m, const u8 *rec, unsigned int len)
{
	u64 ptr = m->reg[AMUPMU_SPE_SR_PMBPTR];
	u64 limit = m->reg[AMUPMU_SPE_SR_PMBLIMITR] & PMBLIMITR_EL1_LIMIT;
	unsigned int pre = amupmu_spe_pad_before(ptr, len);
	unsigned int post = amupmu_spe_pad_after(ptr + pre + len);
	u8 *p = (u8 *)(uintptr_t)ptr;

	if (amupmu_mock_spe_fault(m))
		return false;
	if (ptr >= limit || limit - ptr < pre + len + post) {
		amupmu_mock_spe_event(m, AMUPMU_MOCK_SPE_FULL, AMUPMU_SPE_ST_EV_FULL);
		return false;
	}
	memset(p, AMUPMU_SPE_HDR_PAD, pre);
	if (m->fault == AMUPMU_SPE_FAULT_DL) {
		/* the first half of the record made it, then the buffer was full */
		m->fault = AMUPMU_SPE_FAULT_NONE;
		memcpy(p + pre, rec, len / 2);
		m->reg[AMUPMU_SPE_SR_PMBPTR] = ptr + pre + len / 2;
		m->st[AMUPMU_SPE_ST_BYTES] += pre + len / 2;
		amupmu_mock_spe_event(m, PMBSR_EL1_DL | AMUPMU_MOCK_SPE_FULL,
				      AMUPMU_SPE_ST_EV_DL);
		return false;
	}
	memcpy(p + pre, rec, len);
	memset(p + pre + len, AMUPMU_SPE_HDR_PAD, post);
	m->reg[AMUPMU_SPE_SR_PMBPTR] = ptr + pre + len + post;
	m->st[AMUPMU_SPE_ST_RECORDS]++;
	m->st[AMUPMU_SPE_ST_BYTES] += pre + len + post;
	return true;
}

/* A synthetic data address of @el0 or the kernel: hot lines or random */
static void amupmu_mock_spe_data(struct amupmu_mock_spe_cpu *m, bool el0, u64 *va, u64 *pa)
{
	u64 off;

	if (amupmu_mock_spe_chance(m, 500))
		off = 0x1000 * (1 + amupmu_mock_spe_below(m, AMUPMU_MOCK_SPE_HOT)) +
		      8 * amupmu_mock_spe_below(m, 8);
	else
		off = amupmu_mock_spe_below(m, AMUPMU_MOCK_SPE_SPAN) & ~7U;
	*va = (el0 ? AMUPMU_MOCK_SPE_VA_USER : AMUPMU_MOCK_SPE_VA_KERNEL) + off;
	*pa = AMUPMU_MOCK_SPE_PA + off;
}

/*
 * The selected operation's synthetic attributes, from the PRNG only (so
 * that a seed gives the same sequence whatever the timing). Returns its
 * AMUPMU_SPE_TYPE_* flags, multi-access resolved.
 */
static u32 amupmu_mock_spe_gen(struct amupmu_mock_spe_cpu *m, bool el0, u64 pc,
			       struct amupmu_spe_op *op)
{
	const u64 *k = m->k;
	u32 lat = k[AMUPMU_SPE_KEY_LAT], r = amupmu_mock_spe_below(m, 1000), flags = 0;
	u64 b = k[AMUPMU_SPE_KEY_BRANCH], ld = b + k[AMUPMU_SPE_KEY_LOAD];
	u64 st = ld + k[AMUPMU_SPE_KEY_STORE], at = st + k[AMUPMU_SPE_KEY_ATOMIC];

	op->events = AMUPMU_SPE_EV_RETIRED;
	op->total = lat / 2 + amupmu_mock_spe_below(m, lat + 1);
	op->issue = amupmu_mock_spe_below(m, lat / 4 + 1);
	if (r < b) {
		op->op_class = AMUPMU_SPE_OP_BRANCH;
		flags = AMUPMU_SPE_TYPE_B;
		if (amupmu_mock_spe_chance(m, 600)) {
			op->subclass |= AMUPMU_SPE_OP_BR_COND;
			if (amupmu_mock_spe_chance(m, 400))
				op->events |= AMUPMU_SPE_EV_NOT_TAKEN;
		} else if (amupmu_mock_spe_chance(m, 250)) {
			op->subclass |= AMUPMU_SPE_OP_BR_INDIRECT;
		}
		if (amupmu_mock_spe_chance(m, 50))
			op->events |= AMUPMU_SPE_EV_MISPRED;
		op->target = pc + 4 * ((u64)amupmu_mock_spe_below(m, 2048) - 1024);
	} else if (r < at) {
		op->op_class = AMUPMU_SPE_OP_LDST;
		if (r < ld) {
			flags = AMUPMU_SPE_TYPE_LD;
		} else if (r < st) {
			flags = AMUPMU_SPE_TYPE_ST;
		} else {
			flags = amupmu_spe_multi_access(AMUPMU_SPE_TYPE_LD | AMUPMU_SPE_TYPE_ST,
							amupmu_mock_spe_below(m, 2));
			op->subclass = AMUPMU_SPE_OP_LDST_EXT | AMUPMU_SPE_OP_LDST_AT;
		}
		if (flags & AMUPMU_SPE_TYPE_ST)
			op->subclass |= AMUPMU_SPE_OP_LDST_ST;
		op->events |= AMUPMU_SPE_EV_L1D_ACCESS | AMUPMU_SPE_EV_TLB_ACCESS;
		op->xlat = 1 + amupmu_mock_spe_below(m, 3);
		if (amupmu_mock_spe_chance(m, 20)) {
			op->events |= AMUPMU_SPE_EV_TLB_WALK;
			op->xlat += 20 + amupmu_mock_spe_below(m, 4 * lat + 1);
		}
		op->total += op->xlat;
		op->data_source = AMUPMU_MOCK_SPE_DS_L1;
		if (amupmu_mock_spe_chance(m, k[AMUPMU_SPE_KEY_L1MISS])) {
			op->events |= AMUPMU_SPE_EV_L1D_REFILL | AMUPMU_SPE_EV_L2D_ACCESS;
			op->total += 4 * lat + amupmu_mock_spe_below(m, 4 * lat + 1);
			op->data_source = AMUPMU_MOCK_SPE_DS_L2;
			if (amupmu_mock_spe_chance(m, 500)) {
				op->events |= AMUPMU_SPE_EV_L2D_MISS | AMUPMU_SPE_EV_LLC_ACCESS;
				op->total += 8 * lat + amupmu_mock_spe_below(m, 8 * lat + 1);
				op->data_source = AMUPMU_MOCK_SPE_DS_LLC;
				if (amupmu_mock_spe_chance(m, 500)) {
					op->events |= AMUPMU_SPE_EV_LLC_MISS;
					op->total += 32 * lat +
						     amupmu_mock_spe_below(m, 32 * lat + 1);
					op->data_source = AMUPMU_MOCK_SPE_DS_DRAM;
				}
			}
		}
		amupmu_mock_spe_data(m, el0, &op->va, &op->pa);
	} else {
		op->op_class = AMUPMU_SPE_OP_OTHER;
		if (amupmu_mock_spe_chance(m, k[AMUPMU_SPE_KEY_FP])) {
			op->subclass |= AMUPMU_SPE_OP_OTHER_FP;
			flags |= AMUPMU_SPE_TYPE_FP;
		}
		if (amupmu_mock_spe_chance(m, k[AMUPMU_SPE_KEY_SIMD])) {
			op->subclass |= AMUPMU_SPE_OP_OTHER_ASE;
			flags |= AMUPMU_SPE_TYPE_SIMD;
		}
		if (flags)
			op->total += lat;
	}
	if (amupmu_mock_spe_get(m->cpu).pmsver < ID_AA64DFR0_EL1_PMSVer_V1P4)
		op->events &= ~AMUPMU_SPE_EV_V1P4;
	return flags;
}

/* The operation the interval counter selected (at m->pos): collide, filter, record */
static void amupmu_mock_spe_sample(struct amupmu_mock_spe_cpu *m, struct pt_regs *regs,
				   bool el0)
{
	u64 fcr = m->reg[AMUPMU_SPE_SR_PMSFCR], pmscr = m->reg[AMUPMU_SPE_SR_PMSCR];
	u64 pmsidr = amupmu_mock_spe_get(m->cpu).pmsidr;
	u32 count_max = FIELD_GET(PMSIDR_EL1_COUNTSIZE, pmsidr) == 3 ? 0xffff : 0xfff;
	struct amupmu_spe_rec_cfg cfg = {
		.pa = pmscr & PMSCR_EL1_PA, .cx = pmscr & PMSCR_EL1_CX,
		.cx_el2 = is_kernel_in_hyp_mode(), .ts = pmscr & PMSCR_EL1_TS,
		.lds = pmsidr & PMSIDR_EL1_LDS, .count_max = count_max,
	};
	struct amupmu_spe_op op = { .pc = instruction_pointer(regs) };
	u8 rec[AMUPMU_SPE_REC_MAX];
	unsigned int len;
	u32 flags;

	m->st[AMUPMU_SPE_ST_SELECTED]++;
	flags = amupmu_mock_spe_gen(m, el0, op.pc, &op);
	if (m->pos < m->busy_until) {
		m->st[AMUPMU_SPE_ST_COLLISIONS]++;
		m->reg[AMUPMU_SPE_SR_PMBSR] |= PMBSR_EL1_COLL;
		return;
	}
	m->busy_until = m->pos + op.total;
	if (!amupmu_spe_filter_type(fcr & PMSFCR_EL1_FT, pmsidr & PMSIDR_EL1_EFT,
				    FIELD_GET(PMSFCR_EL1_TYPE, fcr),
				    FIELD_GET(PMSFCR_EL1_TYPEm, fcr), flags)) {
		m->st[AMUPMU_SPE_ST_REJ_TYPE]++;
		return;
	}
	if (!amupmu_spe_filter_event(fcr & PMSFCR_EL1_FE, m->reg[AMUPMU_SPE_SR_PMSEVFR],
				     fcr & PMSFCR_EL1_FnE, m->reg[AMUPMU_SPE_SR_PMSNEVFR],
				     op.events)) {
		m->st[AMUPMU_SPE_ST_REJ_EVENT]++;
		return;
	}
	if (!amupmu_spe_filter_latency(fcr & PMSFCR_EL1_FL,
				       FIELD_GET(PMSLATFR_EL1_MINLAT,
						 m->reg[AMUPMU_SPE_SR_PMSLATFR]),
				       amupmu_spe_saturate(op.total, count_max))) {
		m->st[AMUPMU_SPE_ST_REJ_LATENCY]++;
		return;
	}
	op.el = el0 ? 0 : is_kernel_in_hyp_mode() ? 2 : 1;
	op.context = task_pid_nr(current);
	op.ts = arch_timer_read_counter();
	len = amupmu_spe_record(rec, &op, &cfg);
	if (!amupmu_mock_spe_put(m, rec, len))
		return;
	if (op.op_class == AMUPMU_SPE_OP_LDST && (op.subclass & AMUPMU_SPE_OP_LDST_AT))
		m->st[(flags & AMUPMU_SPE_TYPE_ST) ? AMUPMU_SPE_ST_MULTI_STORE :
						     AMUPMU_SPE_ST_MULTI_LOAD]++;
}

/* The interval counter's reload value */
static u32 amupmu_mock_spe_reload(struct amupmu_mock_spe_cpu *m)
{
	u64 irr = m->reg[AMUPMU_SPE_SR_PMSIRR];
	u32 min = amupmu_spe_min_interval_ops(FIELD_GET(PMSIDR_EL1_INTERVAL,
							amupmu_mock_spe_get(m->cpu).pmsidr));

	return amupmu_spe_interval(irr & PMSIRR_EL1_INTERVAL, irr & PMSIRR_EL1_RND,
				   irr & PMSIRR_EL1_RND ? amupmu_mock_spe_below(m, 256) : 0, min);
}

/* The operations since the last tick, in the interrupted context. */
static void amupmu_mock_spe_run(struct amupmu_mock_spe_cpu *m, u64 now)
{
	struct pt_regs *regs = get_irq_regs();
	u64 elapsed, cap, ops, count;
	bool el0;

	if (!regs || is_idle_task(current))
		return;
	el0 = user_mode(regs);
	if (!(m->reg[AMUPMU_SPE_SR_PMSCR] & (el0 ? PMSCR_EL1_E0SPE : PMSCR_EL1_E1SPE)))
		return;
	/*
	 * At most two periods: a tick that came late (or a model slower than
	 * the time it simulates, under TCG) must not run ever longer ones.
	 */
	elapsed = now - m->t_last;
	cap = 2 * m->k[AMUPMU_SPE_KEY_TICK_US] * NSEC_PER_USEC;
	if (elapsed > cap) {
		m->st[AMUPMU_SPE_ST_LOST_NS] += elapsed - cap;
		elapsed = cap;
	}
	ops = elapsed * m->k[AMUPMU_SPE_KEY_OPS_PER_US] + m->op_frac;
	m->op_frac = do_div(ops, 1000);
	count = m->reg[AMUPMU_SPE_SR_PMSICR] & PMSICR_EL1_COUNT;
	while (ops) {
		u64 n;

		if (!count)
			count = amupmu_mock_spe_reload(m);	/* a 0 written by software */
		n = min(ops, count);
		ops -= n;
		count -= n;
		m->pos += n;
		m->st[el0 ? AMUPMU_SPE_ST_OPS_EL0 : AMUPMU_SPE_ST_OPS_KERNEL] += n;
		if (count)
			break;
		count = amupmu_mock_spe_reload(m);
		amupmu_mock_spe_sample(m, regs, el0);
		if (!amupmu_mock_spe_armed(m))
			break;	/* a management event stopped profiling */
	}
	m->reg[AMUPMU_SPE_SR_PMSICR] = count;
}

static enum hrtimer_restart amupmu_mock_spe_tick(struct hrtimer *t)
{
	struct amupmu_mock_spe_cpu *m = container_of(t, struct amupmu_mock_spe_cpu, timer);
	u64 now = ktime_get_ns();

	/* unloading, or migrated by CPU offline: touch nothing */
	if (READ_ONCE(m->dead) || smp_processor_id() != m->cpu)
		return HRTIMER_NORESTART;
	m->in_tick = true;
	if (amupmu_mock_spe_armed(m))
		amupmu_mock_spe_run(m, now);
	m->t_last = now;
	if (m->reg[AMUPMU_SPE_SR_PMBSR] & PMBSR_EL1_S) {
		u64 t0 = ktime_get_ns(), d;

		m->st[AMUPMU_SPE_ST_IRQS]++;
		amupmu_spe_irq_handle();
		/* the driver's buffer interrupt, all of it with interrupts off */
		d = ktime_get_ns() - t0;
		if (!m->st[AMUPMU_SPE_ST_IRQ_NS_MIN] || d < m->st[AMUPMU_SPE_ST_IRQ_NS_MIN])
			m->st[AMUPMU_SPE_ST_IRQ_NS_MIN] = d;
		m->st[AMUPMU_SPE_ST_IRQ_NS_MAX] = max(m->st[AMUPMU_SPE_ST_IRQ_NS_MAX], d);
	}
	m->in_tick = false;
	if (READ_ONCE(m->dead) || !amupmu_mock_spe_busy(m))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, amupmu_mock_spe_period(m));
	return HRTIMER_RESTART;
}

/**
 * amupmu_mock_spe_exit() - stop every CPU's tick for good (module unload)
 *
 * Process context; the SPE sessions are gone. Afterwards nothing starts a
 * timer again.
 */
void amupmu_mock_spe_exit(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct amupmu_mock_spe_cpu *m = per_cpu_ptr(&amupmu_mock_spe_cpu, cpu);

		WRITE_ONCE(m->dead, true);
		if (READ_ONCE(m->started))
			hrtimer_cancel(&m->timer);
	}
}

/* ------------------------------------------------------------ debugfs files */

/**
 * struct amupmu_mock_spe_xcall - a debugfs file's request, run on the CPU
 * @k: spe_stream: the CPU's knobs as they will be
 * @st: spe_stats: the CPU's counters, read there
 * @given: spe_stream: the keys given (bit n: key n)
 * @fault: spe_fault: the fault to inject
 * @ret: the answer: 0, or -EBUSY (spe_stream while profiling)
 */
struct amupmu_mock_spe_xcall {
	u64 k[AMUPMU_SPE_KEY_NR];
	u64 st[AMUPMU_SPE_ST_NR];
	u32 given;
	u8 fault;
	int ret;
};

/* Run @fn(@x) on @cpu with interrupts off: -ENODEV if it is offline */
static int amupmu_mock_spe_on(unsigned int cpu, smp_call_func_t fn,
			      struct amupmu_mock_spe_xcall *x)
{
	int ret;

	cpus_read_lock();
	ret = cpu_online(cpu) ? smp_call_function_single(cpu, fn, x, 1) : -ENODEV;
	cpus_read_unlock();
	return ret ?: x->ret;
}

/* spe_stream: a "key=value" into @x */
static int amupmu_mock_spe_parse_knob(struct amupmu_mock_spe_xcall *x, char *tok)
{
	char *val = strchr(tok, '=');
	unsigned int key;
	u64 v;

	if (!val)
		return -EINVAL;
	*val++ = '\0';
	for (key = 0; key < AMUPMU_SPE_KEY_NR; key++)
		if (!strcmp(tok, amupmu_spe_key_names[key]))
			break;
	if (key == AMUPMU_SPE_KEY_NR || (x->given & BIT(key)) || kstrtou64(val, 0, &v) ||
	    v < amupmu_spe_key_range[key][0] || v > amupmu_spe_key_range[key][1])
		return -EINVAL;
	x->given |= BIT(key);
	x->k[key] = v;
	return 0;
}

static void amupmu_mock_spe_stream_apply(void *arg)
{
	struct amupmu_mock_spe_xcall *x = arg;
	struct amupmu_mock_spe_cpu *m = amupmu_mock_spe_this();
	unsigned int key;
	u64 mix = 0;

	if (m->reg[AMUPMU_SPE_SR_PMBLIMITR] & PMBLIMITR_EL1_E) {
		x->ret = -EBUSY;
		return;
	}
	for (key = 0; key < AMUPMU_SPE_KEY_NR; key++)
		if (!(x->given & BIT(key)))
			x->k[key] = m->k[key];
	for (key = AMUPMU_SPE_KEY_BRANCH; key <= AMUPMU_SPE_KEY_ATOMIC; key++)
		mix += x->k[key];
	if (mix > 1000) {
		x->ret = -EINVAL;
		return;
	}
	memcpy(m->k, x->k, sizeof(m->k));
	if (x->given & BIT(AMUPMU_SPE_KEY_SEED))
		amupmu_mock_spe_seed(m);
}

static ssize_t amupmu_mock_spe_stream_write(struct file *file, const char __user *ubuf,
					    size_t len, loff_t *ppos)
{
	struct amupmu_mock_spe_xcall x = { };
	char buf[384], *p, *tok;
	int cpu, ret;

	cpu = amupmu_mock_cpu_cmd(ubuf, len, buf, sizeof(buf), &p);
	if (cpu < 0)
		return cpu;
	while (p && (tok = strsep(&p, " "))) {
		if (!*tok)
			continue;
		ret = amupmu_mock_spe_parse_knob(&x, tok);
		if (ret)
			return ret;
	}
	if (!x.given)
		return -EINVAL;
	mutex_lock(&amupmu_mock_spe_knob_lock);
	ret = amupmu_mock_spe_on(cpu, amupmu_mock_spe_stream_apply, &x);
	mutex_unlock(&amupmu_mock_spe_knob_lock);
	return ret ?: len;
}

static int amupmu_mock_spe_stream_show(struct seq_file *sf, void *v)
{
	const struct amupmu_mock_spe_cpu *m;
	u64 k[AMUPMU_SPE_KEY_NR];
	unsigned int cpu, key;

	mutex_lock(&amupmu_mock_spe_knob_lock);	/* knobs change only under it */
	for_each_possible_cpu(cpu) {
		m = per_cpu_ptr(&amupmu_mock_spe_cpu, cpu);
		if (READ_ONCE(m->started))
			memcpy(k, m->k, sizeof(k));
		else
			amupmu_mock_spe_defaults_k(k, cpu);
		seq_printf(sf, "cpu%u", cpu);
		for (key = 0; key < AMUPMU_SPE_KEY_NR; key++)
			seq_printf(sf, " %s=%llu", amupmu_spe_key_names[key], k[key]);
		seq_putc(sf, '\n');
	}
	mutex_unlock(&amupmu_mock_spe_knob_lock);
	return 0;
}

static int amupmu_mock_spe_stream_open(struct inode *inode, struct file *file)
{
	return single_open(file, amupmu_mock_spe_stream_show, inode->i_private);
}

static const struct file_operations amupmu_mock_spe_stream_fops = {
	.owner = THIS_MODULE,
	.open = amupmu_mock_spe_stream_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = amupmu_mock_spe_stream_write,
};

static void amupmu_mock_spe_stats_get(void *arg)
{
	struct amupmu_mock_spe_xcall *x = arg;

	memcpy(x->st, this_cpu_ptr(&amupmu_mock_spe_cpu)->st, sizeof(x->st));
}

static void amupmu_mock_spe_stats_reset(void *arg)
{
	memset(this_cpu_ptr(&amupmu_mock_spe_cpu)->st, 0,
	       sizeof(this_cpu_ptr(&amupmu_mock_spe_cpu)->st));
}

/* On @cpu if online, else directly (nothing runs on an offline CPU) */
static void amupmu_mock_spe_stats_do(unsigned int cpu, smp_call_func_t fn,
				     struct amupmu_mock_spe_xcall *x)
{
	struct amupmu_mock_spe_cpu *m = per_cpu_ptr(&amupmu_mock_spe_cpu, cpu);

	cpus_read_lock();
	if (cpu_online(cpu))
		smp_call_function_single(cpu, fn, x, 1);
	else if (fn == amupmu_mock_spe_stats_get)
		memcpy(x->st, m->st, sizeof(x->st));
	else
		memset(m->st, 0, sizeof(m->st));
	cpus_read_unlock();
}

static ssize_t amupmu_mock_spe_stats_write(struct file *file, const char __user *ubuf,
					   size_t len, loff_t *ppos)
{
	char buf[32], *p, *word;
	unsigned int cpu;
	bool all;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	p = strim(buf);
	word = strsep(&p, " ");
	all = !strcmp(word, "all");
	if (!all && (kstrtouint(word, 10, &cpu) || cpu >= nr_cpu_ids || !cpu_possible(cpu)))
		return -EINVAL;
	if (!p || strcmp(skip_spaces(p), "reset"))
		return -EINVAL;
	mutex_lock(&amupmu_mock_spe_knob_lock);
	if (all) {
		for_each_possible_cpu(cpu)
			amupmu_mock_spe_stats_do(cpu, amupmu_mock_spe_stats_reset, NULL);
	} else {
		amupmu_mock_spe_stats_do(cpu, amupmu_mock_spe_stats_reset, NULL);
	}
	mutex_unlock(&amupmu_mock_spe_knob_lock);
	return len;
}

static int amupmu_mock_spe_stats_show(struct seq_file *sf, void *v)
{
	struct amupmu_mock_spe_xcall x;
	unsigned int cpu, i;

	mutex_lock(&amupmu_mock_spe_knob_lock);
	for_each_possible_cpu(cpu) {
		memset(&x, 0, sizeof(x));
		amupmu_mock_spe_stats_do(cpu, amupmu_mock_spe_stats_get, &x);
		seq_printf(sf, "cpu%u", cpu);
		for (i = 0; i < AMUPMU_SPE_ST_NR; i++)
			seq_printf(sf, " %s=%llu", amupmu_spe_st_names[i], x.st[i]);
		seq_putc(sf, '\n');
	}
	mutex_unlock(&amupmu_mock_spe_knob_lock);
	return 0;
}

static int amupmu_mock_spe_stats_open(struct inode *inode, struct file *file)
{
	return single_open(file, amupmu_mock_spe_stats_show, inode->i_private);
}

static const struct file_operations amupmu_mock_spe_stats_fops = {
	.owner = THIS_MODULE,
	.open = amupmu_mock_spe_stats_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = amupmu_mock_spe_stats_write,
};

static void amupmu_mock_spe_fault_set(void *arg)
{
	struct amupmu_mock_spe_xcall *x = arg;

	amupmu_mock_spe_this()->fault = x->fault;
}

static ssize_t amupmu_mock_spe_fault_write(struct file *file, const char __user *ubuf,
					   size_t len, loff_t *ppos)
{
	struct amupmu_mock_spe_xcall x = { };
	char buf[32], *p;
	int cpu, ret;

	cpu = amupmu_mock_cpu_cmd(ubuf, len, buf, sizeof(buf), &p);
	if (cpu < 0)
		return cpu;
	if (!p)
		return -EINVAL;
	p = skip_spaces(p);
	for (x.fault = 0; x.fault < AMUPMU_SPE_FAULT_NR; x.fault++)
		if (!strcmp(p, amupmu_spe_fault_names[x.fault]))
			break;
	if (x.fault == AMUPMU_SPE_FAULT_NR)
		return -EINVAL;
	mutex_lock(&amupmu_mock_spe_knob_lock);
	ret = amupmu_mock_spe_on(cpu, amupmu_mock_spe_fault_set, &x);
	mutex_unlock(&amupmu_mock_spe_knob_lock);
	return ret ?: len;
}

static int amupmu_mock_spe_fault_show(struct seq_file *sf, void *v)
{
	unsigned int cpu;
	u8 fault;

	for_each_possible_cpu(cpu) {
		fault = READ_ONCE(per_cpu_ptr(&amupmu_mock_spe_cpu, cpu)->fault);
		seq_printf(sf, "cpu%u fault=%s\n", cpu,
			   amupmu_spe_fault_names[min_t(u8, fault, AMUPMU_SPE_FAULT_NR - 1)]);
	}
	return 0;
}

static int amupmu_mock_spe_fault_open(struct inode *inode, struct file *file)
{
	return single_open(file, amupmu_mock_spe_fault_show, inode->i_private);
}

static const struct file_operations amupmu_mock_spe_fault_fops = {
	.owner = THIS_MODULE,
	.open = amupmu_mock_spe_fault_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = amupmu_mock_spe_fault_write,
};

/* spe_model, spe_stream, spe_stats, spe_fault in the driver's debugfs directory */
void amupmu_mock_spe_debugfs_init(struct dentry *dir)
{
	debugfs_create_file("spe_model", 0600, dir, NULL, &amupmu_mock_spe_fops);
	debugfs_create_file("spe_stream", 0600, dir, NULL, &amupmu_mock_spe_stream_fops);
	debugfs_create_file("spe_stats", 0600, dir, NULL, &amupmu_mock_spe_stats_fops);
	debugfs_create_file("spe_fault", 0600, dir, NULL, &amupmu_mock_spe_fault_fops);
}
