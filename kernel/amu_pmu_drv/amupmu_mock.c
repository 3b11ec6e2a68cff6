// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: mock register model for AMU and SPE (test builds only,
 * CONFIG_AMUPMU_MOCK=y). QEMU's TCG CPUs hide both units, so the paths
 * that depend on them are exercised against this model; the PMU and
 * identification registers stay the real ones.
 *
 * The model is a CPU with FEAT_AMUv1 (4 architected group 0 counters,
 * 2 auxiliary group 1 counters, 64-bit; see "AMU model" below) and
 * FEAT_SPEv1p4 (its identification and profiling unit: amupmu_mock_spe.c).
 * Field layouts are those of the Arm ARM (DDI 0487).
 *
 * The driver reaches it through amupmu_mock_backend only (below: the
 * register reads, the AMU's power domain, its debugfs files, unload).
 *
 * cpu_pm, /sys/kernel/debug/amupmu/cpu_pm (0600): QEMU has no idle state
 * that powers the PMU down, so this file drives the CPU PM path on demand.
 * Writing "<cpu>" runs on that CPU, interrupts off, cpu_pm_enter(), a reset
 * of the PMU registers as a power-down leaves them
 * (amupmu_mock_pmu_power_loss()) and cpu_pm_exit(); "<cpu> fail" runs
 * cpu_pm_enter() and cpu_pm_exit() without the reset, as an idle entry
 * that a notifier refused; "<cpu> spin <us>" first spins <us> microseconds
 * (1 to 100000) with interrupts off, so that a counter can overflow with
 * its interrupt still pending when the CPU powers down. Bad input: EINVAL;
 * an offline CPU: ENODEV; cpu_pm_enter() refused: its errno. Reading
 * prints "cpu<N> enter=<n> exit=<n>" for each possible CPU. The reset also
 * restarts the AMU model's counters from zero
 * (amupmu_mock_amu_power_loss()), as a power-down firmware does not
 * restore.
 */
#include <linux/atomic.h>
#include <linux/bitfield.h>
#include <linux/bits.h>
#include <linux/cpu.h>
#include <linux/cpu_pm.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/tick.h>
#include <linux/uaccess.h>
#include <asm/sysreg.h>
#include <clocksource/arm_arch_timer.h>

#include "amupmu.h"
#include "amupmu_compat.h"
#include "amupmu_mock.h"

#define AMUPMU_MOCK_CG0NC	4
#define AMUPMU_MOCK_CG1NC	2

/*
 * AMU model.
 *
 * Each CPU's counters follow the machine: CNT_CYCLES advances at the system
 * counter's rate (CNTFRQ_EL0) while the CPU is active, i.e. not idle (the
 * architecture stops both cycle counters in WFI/WFE); CPU_CYCLES at "freq"
 * Hz of active time; INST_RETIRED at ipc/1000 per CPU cycle,
 * STALL_BACKEND_MEM at stall/1000, group 1 counter n (event type 0x0300 + n)
 * at aux<n>/1000. "active" is auto (the kernel's idle time of that CPU:
 * active = wall time - idle time) or a fixed share in 1/1000. The counters
 * start as if they had counted since boot at the default rates, are 64-bit
 * and monotonic, stop while the CPU is offline, and hold their value while
 * their AMCNTENSET bit (enable0/enable1) is clear. The debugfs cpu_pm file
 * resets them to zero as a power-down that firmware does not save and
 * restore would (amupmu_mock_amu_power_loss()).
 *
 * A knob change starts a new segment: the counters' values at that moment
 * become its base, and each counter is base + rate * active ticks since,
 * computed with 128-bit intermediates, so no rounding accumulates.
 *
 * Knobs, /sys/kernel/debug/amupmu/amu_model (0600):
 *   write "<cpu> key=value [key=value ...]": freq (1000000-10000000000 Hz),
 *   ipc (0-8000), stall (0-1000), active (0-1000 or auto), aux0, aux1
 *   (0-1000), enable0 (mask within 0xf), enable1 (within 0x3), frozen
 *   (0 or 1). All keys are checked before any applies: bad input EINVAL,
 *   an offline CPU ENODEV, and nothing changes.
 *   read: "cpu<N> freq=.. ipc=.. stall=.. active=.. aux0=.. aux1=..
 *   enable0=0x.. enable1=0x.. frozen=.." per possible CPU.
 * Defaults: freq=2000000000 ipc=1500 stall=250 active=auto aux0=500
 * aux1=250 enable0=0xf enable1=0x3 frozen=0.
 *
 * frozen=1 is a bench aid (tools/board/payloads/bench.sh): every counter
 * of that CPU holds the value it had (as if all were disabled, but
 * AMCNTENSET still reads enable0/enable1), and a counter read is a plain
 * load of that value: no model update, no division. What an AMUPMU_AMU_READ
 * then costs is the driver's path around the reads, not the model's
 * arithmetic that stands in for mrs. The values never go backwards;
 * frozen=0 goes on counting from them.
 *
 * /sys/kernel/debug/amupmu/amu_reads (0600) counts the AMU system register
 * reads the model served (AMCFGR, AMCGCR, AMCR, AMCNTENSET0/1, AMEVTYPER,
 * AMEVCNTR; not ID_AA64PFR0_EL1) on all CPUs since load or the last reset:
 * read: "<n>"; write "0": reset; anything else EINVAL, nothing changes.
 * With amu=0 it stays 0 (amupmu_modparam.sh).
 */
enum {
	AMUPMU_MOCK_CPU_CYCLES,		/* group 0 counter 0 */
	AMUPMU_MOCK_CNT_CYCLES,
	AMUPMU_MOCK_INST_RETIRED,
	AMUPMU_MOCK_STALL_BACKEND_MEM,
	AMUPMU_MOCK_AUX0,		/* group 1 counter 0 */
	AMUPMU_MOCK_AUX1,
	AMUPMU_MOCK_NR_CNT,
};

static const u16 amupmu_mock_types0[AMUPMU_MOCK_CG0NC] = { 0x0011, 0x4004, 0x0008, 0x4005 };
#define AMUPMU_MOCK_TYPE1_BASE	0x0300
#define AMUPMU_MOCK_ACTIVE_AUTO	U32_MAX

/**
 * struct amupmu_mock_knobs - the model's rates for one CPU
 * @freq: CPU_CYCLES per second of active time
 * @ipc: INST_RETIRED per 1000 CPU cycles
 * @stall: STALL_BACKEND_MEM per 1000 CPU cycles
 * @active: active share in 1/1000, or AMUPMU_MOCK_ACTIVE_AUTO
 * @aux: group 1 counters, per 1000 CPU cycles
 * @enable: AMCNTENSET0_EL0, AMCNTENSET1_EL0
 * @frozen: 1: every counter holds its value and reads as a plain load
 */
struct amupmu_mock_knobs {
	u64 freq;
	u32 ipc;
	u32 stall;
	u32 active;
	u32 aux[AMUPMU_MOCK_CG1NC];
	u32 enable[2];
	u32 frozen;
};

/**
 * struct amupmu_mock_amu - one CPU's model
 * @k: its knobs
 * @started: set up (at the first access on the CPU)
 * @live: the driver has the CPU's AMU up (amu_start to amu_stop of
 *	amupmu_mock_backend): a power-down (cpu_pm) resets its counters
 * @running: online: time advances the counters
 * @t_last: system counter at the last update
 * @idle_last: the CPU's idle time in us at the last update (auto)
 * @active: active system-counter ticks ever
 * @seg_active: @active when the segment started
 * @seg_base: the counters' values when the segment started
 *
 * Touched only on its CPU, with interrupts off.
 */
struct amupmu_mock_amu {
	struct amupmu_mock_knobs k;
	bool started;
	bool live;
	bool running;
	u64 t_last;
	u64 idle_last;
	u64 active;
	u64 seg_active;
	u64 seg_base[AMUPMU_MOCK_NR_CNT];
};

static DEFINE_PER_CPU(struct amupmu_mock_amu, amupmu_mock_amu);
/* AMU system register reads served, per CPU (debugfs amu_reads) */
static DEFINE_PER_CPU(u64, amupmu_mock_amu_nreads);

static const struct amupmu_mock_knobs amupmu_mock_defaults = {
	.freq = 2000000000, .ipc = 1500, .stall = 250, .active = AMUPMU_MOCK_ACTIVE_AUTO,
	.aux = { 500, 250 }, .enable = { GENMASK(AMUPMU_MOCK_CG0NC - 1, 0),
					 GENMASK(AMUPMU_MOCK_CG1NC - 1, 0) },
};

static u64 amupmu_mock_idle_us(void)
{
	return get_cpu_idle_time_us(smp_processor_id(), NULL);
}

/* Bring @m->active up to now. */
static void amupmu_mock_amu_update(struct amupmu_mock_amu *m)
{
	u64 now = arch_timer_read_counter(), dt, idle, didle;

	if (!m->running)
		return;
	dt = now - m->t_last;
	m->t_last = now;
	if (m->k.active != AMUPMU_MOCK_ACTIVE_AUTO) {
		m->active += div_u64(dt * m->k.active, 1000);
		return;
	}
	idle = amupmu_mock_idle_us();
	if (idle == (u64)-1) {		/* no NOHZ idle accounting: always active */
		m->active += dt;
		return;
	}
	didle = mul_u64_u64_div_u64(idle - m->idle_last, arch_timer_get_cntfrq(), USEC_PER_SEC);
	m->idle_last = idle;
	m->active += dt - min(dt, didle);
}

/* Counter @i now, from the segment's base and the active ticks since. */
static u64 amupmu_mock_amu_value(const struct amupmu_mock_amu *m, unsigned int i)
{
	u64 da = m->active - m->seg_active, freq = m->k.freq, hz = arch_timer_get_cntfrq();
	bool on = i < AMUPMU_MOCK_AUX0 ? m->k.enable[0] & BIT(i) :
					  m->k.enable[1] & BIT(i - AMUPMU_MOCK_AUX0);

	if (!on || m->k.frozen)
		return m->seg_base[i];
	switch (i) {
	case AMUPMU_MOCK_CPU_CYCLES:
		return m->seg_base[i] + mul_u64_u64_div_u64(da, freq, hz);
	case AMUPMU_MOCK_CNT_CYCLES:
		return m->seg_base[i] + da;
	case AMUPMU_MOCK_INST_RETIRED:
		return m->seg_base[i] + mul_u64_u64_div_u64(da, freq * m->k.ipc, hz * 1000);
	case AMUPMU_MOCK_STALL_BACKEND_MEM:
		return m->seg_base[i] + mul_u64_u64_div_u64(da, freq * m->k.stall, hz * 1000);
	default:
		return m->seg_base[i] +
		       mul_u64_u64_div_u64(da, freq * m->k.aux[i - AMUPMU_MOCK_AUX0], hz * 1000);
	}
}

/* Start a new segment (before a knob changes). */
static void amupmu_mock_amu_segment(struct amupmu_mock_amu *m)
{
	unsigned int i;

	amupmu_mock_amu_update(m);
	for (i = 0; i < AMUPMU_MOCK_NR_CNT; i++)
		m->seg_base[i] = amupmu_mock_amu_value(m, i);
	m->seg_active = m->active;
}

/* The model of this CPU, set up on first use: counting since boot. */
static struct amupmu_mock_amu *amupmu_mock_amu_this(void)
{
	struct amupmu_mock_amu *m = this_cpu_ptr(&amupmu_mock_amu);

	if (!m->started) {
		m->k = amupmu_mock_defaults;
		m->t_last = arch_timer_read_counter();
		m->idle_last = amupmu_mock_idle_us();
		m->active = m->t_last;
		m->running = true;
		m->started = true;
	}
	return m;
}

/* Is @reg entry n < @nr of the range at @base? */
static bool amupmu_reg_in(enum amupmu_reg reg, enum amupmu_reg base, unsigned int nr)
{
	return reg >= base && reg < base + nr;
}

/*
 * frozen=1, the bench aid: a counter or enable mask of this CPU is a plain
 * load of what the model holds. The caller runs on the CPU (as for every
 * AMU register read) and only amupmu_mock_apply(), on this CPU, changes
 * the values: an aligned 64-bit load sees the old or the new one.
 */
static __always_inline bool amupmu_mock_amu_frozen(enum amupmu_reg reg, u64 *val)
{
	const struct amupmu_mock_amu *m = this_cpu_ptr(&amupmu_mock_amu);
	unsigned int i0 = (unsigned int)reg - AMUPMU_REG_AMEVCNTR0;
	unsigned int i1 = (unsigned int)reg - AMUPMU_REG_AMEVCNTR1;

	if (!READ_ONCE(m->k.frozen))
		return false;
	if (i0 < AMUPMU_MOCK_CG0NC)
		*val = m->seg_base[i0];
	else if (i1 < AMUPMU_MOCK_CG1NC)
		*val = m->seg_base[AMUPMU_MOCK_AUX0 + i1];
	else if (reg == AMUPMU_REG_AMCNTENSET0 || reg == AMUPMU_REG_AMCNTENSET1)
		*val = m->k.enable[reg - AMUPMU_REG_AMCNTENSET0];
	else
		return false;
	return true;
}

static u64 amupmu_mock_amu_read(enum amupmu_reg reg)
{
	struct amupmu_mock_amu *m;
	unsigned long flags;
	u64 val = 0;

	this_cpu_inc(amupmu_mock_amu_nreads);
	if (amupmu_mock_amu_frozen(reg, &val))
		return val;
	local_irq_save(flags);
	m = amupmu_mock_amu_this();
	if (reg == AMUPMU_REG_AMCNTENSET0 || reg == AMUPMU_REG_AMCNTENSET1) {
		val = m->k.enable[reg - AMUPMU_REG_AMCNTENSET0];
	} else if (amupmu_reg_in(reg, AMUPMU_REG_AMEVTYPER0, AMUPMU_MOCK_CG0NC)) {
		val = amupmu_mock_types0[reg - AMUPMU_REG_AMEVTYPER0];
	} else if (amupmu_reg_in(reg, AMUPMU_REG_AMEVTYPER1, AMUPMU_MOCK_CG1NC)) {
		val = AMUPMU_MOCK_TYPE1_BASE + reg - AMUPMU_REG_AMEVTYPER1;
	} else if (amupmu_reg_in(reg, AMUPMU_REG_AMEVCNTR0, AMUPMU_MOCK_CG0NC)) {
		amupmu_mock_amu_update(m);
		val = amupmu_mock_amu_value(m, reg - AMUPMU_REG_AMEVCNTR0);
	} else if (amupmu_reg_in(reg, AMUPMU_REG_AMEVCNTR1, AMUPMU_MOCK_CG1NC)) {
		amupmu_mock_amu_update(m);
		val = amupmu_mock_amu_value(m, AMUPMU_MOCK_AUX0 + reg - AMUPMU_REG_AMEVCNTR1);
	}
	/* AMCR_EL0 and unimplemented counters read 0 */
	local_irq_restore(flags);
	return val;
}

/* This CPU goes offline: its counters stop. Interrupts off. */
static void amupmu_mock_amu_stop(void)
{
	struct amupmu_mock_amu *m = amupmu_mock_amu_this();

	m->live = false;
	amupmu_mock_amu_update(m);
	m->running = false;
}

/* This CPU is back online: its counters go on from where they stopped. */
static void amupmu_mock_amu_start(void)
{
	struct amupmu_mock_amu *m = amupmu_mock_amu_this();

	m->live = true;
	if (m->running)
		return;
	m->t_last = arch_timer_read_counter();
	m->idle_last = amupmu_mock_idle_us();
	m->running = true;
}

/*
 * A power-down nobody saved the counters across: they restart from zero.
 * Only while the driver has the AMU up (as the driver's own power-down
 * path runs only then). On the CPU, interrupts off.
 */
static void amupmu_mock_amu_power_loss(void)
{
	struct amupmu_mock_amu *m = this_cpu_ptr(&amupmu_mock_amu);

	if (!m->live)
		return;
	amupmu_mock_amu_update(m);
	memset(m->seg_base, 0, sizeof(m->seg_base));
	m->seg_active = m->active;
}

/* ------------------------------------------------------------ amu_model file */

/**
 * struct amupmu_mock_set - one write of amu_model: the knobs given
 * @k: the new values (only those in @given count)
 * @given: bit n: field n of enum amupmu_mock_key was given
 */
struct amupmu_mock_set {
	struct amupmu_mock_knobs k;
	u32 given;
};

enum amupmu_mock_key {
	AMUPMU_KEY_FREQ, AMUPMU_KEY_IPC, AMUPMU_KEY_STALL, AMUPMU_KEY_ACTIVE,
	AMUPMU_KEY_AUX0, AMUPMU_KEY_AUX1, AMUPMU_KEY_ENABLE0, AMUPMU_KEY_ENABLE1,
	AMUPMU_KEY_FROZEN, AMUPMU_KEY_NR,
};

static const char * const amupmu_mock_key_names[AMUPMU_KEY_NR] = {
	"freq", "ipc", "stall", "active", "aux0", "aux1", "enable0", "enable1", "frozen",
};

/* { min, max } of each key */
static const u64 amupmu_mock_key_range[AMUPMU_KEY_NR][2] = {
	{ 1000000, 10000000000ULL }, { 0, 8000 }, { 0, 1000 }, { 0, 1000 },
	{ 0, 1000 }, { 0, 1000 },
	{ 0, GENMASK(AMUPMU_MOCK_CG0NC - 1, 0) }, { 0, GENMASK(AMUPMU_MOCK_CG1NC - 1, 0) },
	{ 0, 1 },
};

static int amupmu_mock_parse_kv(struct amupmu_mock_set *set, char *tok)
{
	char *val = strchr(tok, '=');
	unsigned int key;
	u64 v;

	if (!val)
		return -EINVAL;
	*val++ = '\0';
	for (key = 0; key < AMUPMU_KEY_NR; key++)
		if (!strcmp(tok, amupmu_mock_key_names[key]))
			break;
	if (key == AMUPMU_KEY_NR || (set->given & BIT(key)))
		return -EINVAL;
	if (key == AMUPMU_KEY_ACTIVE && !strcmp(val, "auto"))
		v = AMUPMU_MOCK_ACTIVE_AUTO;
	else if (kstrtou64(val, 0, &v) || v < amupmu_mock_key_range[key][0] ||
		 v > amupmu_mock_key_range[key][1])
		return -EINVAL;
	set->given |= BIT(key);
	switch (key) {
	case AMUPMU_KEY_FREQ:
		set->k.freq = v;
		break;
	case AMUPMU_KEY_IPC:
		set->k.ipc = v;
		break;
	case AMUPMU_KEY_STALL:
		set->k.stall = v;
		break;
	case AMUPMU_KEY_ACTIVE:
		set->k.active = v;
		break;
	case AMUPMU_KEY_AUX0:
	case AMUPMU_KEY_AUX1:
		set->k.aux[key - AMUPMU_KEY_AUX0] = v;
		break;
	case AMUPMU_KEY_FROZEN:
		set->k.frozen = v;
		break;
	default:
		set->k.enable[key - AMUPMU_KEY_ENABLE0] = v;
		break;
	}
	return 0;
}

/* On the CPU (IPI): a new segment with the new knobs. */
static void amupmu_mock_apply(void *arg)
{
	const struct amupmu_mock_set *set = arg;
	struct amupmu_mock_amu *m = amupmu_mock_amu_this();
	struct amupmu_mock_knobs *k = &m->k;

	amupmu_mock_amu_segment(m);
	if (set->given & BIT(AMUPMU_KEY_ACTIVE) && set->k.active == AMUPMU_MOCK_ACTIVE_AUTO)
		m->idle_last = amupmu_mock_idle_us();	/* auto from now on */
	if (set->given & BIT(AMUPMU_KEY_FREQ))
		k->freq = set->k.freq;
	if (set->given & BIT(AMUPMU_KEY_IPC))
		k->ipc = set->k.ipc;
	if (set->given & BIT(AMUPMU_KEY_STALL))
		k->stall = set->k.stall;
	if (set->given & BIT(AMUPMU_KEY_ACTIVE))
		k->active = set->k.active;
	if (set->given & BIT(AMUPMU_KEY_AUX0))
		k->aux[0] = set->k.aux[0];
	if (set->given & BIT(AMUPMU_KEY_AUX1))
		k->aux[1] = set->k.aux[1];
	if (set->given & BIT(AMUPMU_KEY_ENABLE0))
		k->enable[0] = set->k.enable[0];
	if (set->given & BIT(AMUPMU_KEY_ENABLE1))
		k->enable[1] = set->k.enable[1];
	if (set->given & BIT(AMUPMU_KEY_FROZEN))
		k->frozen = set->k.frozen;
}

static ssize_t amupmu_mock_amu_write(struct file *file, const char __user *ubuf, size_t len,
				     loff_t *ppos)
{
	struct amupmu_mock_set set = { };
	char buf[256], *p, *tok;
	int cpu, ret;

	cpu = amupmu_mock_cpu_cmd(ubuf, len, buf, sizeof(buf), &p);
	if (cpu < 0)
		return cpu;
	while ((tok = strsep(&p, " "))) {
		if (!*tok)
			continue;
		ret = amupmu_mock_parse_kv(&set, tok);
		if (ret)
			return ret;
	}
	if (!set.given)
		return -EINVAL;

	cpus_read_lock();
	if (!cpu_online(cpu))
		ret = -ENODEV;
	else
		ret = smp_call_function_single(cpu, amupmu_mock_apply, &set, 1);
	cpus_read_unlock();
	return ret ?: len;
}

static int amupmu_mock_amu_show(struct seq_file *sf, void *v)
{
	const struct amupmu_mock_amu *m;
	struct amupmu_mock_knobs k;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		m = per_cpu_ptr(&amupmu_mock_amu, cpu);
		k = READ_ONCE(m->started) ? m->k : amupmu_mock_defaults;
		seq_printf(sf, "cpu%u freq=%llu ipc=%u stall=%u ", cpu, k.freq, k.ipc, k.stall);
		if (k.active == AMUPMU_MOCK_ACTIVE_AUTO)
			seq_puts(sf, "active=auto");
		else
			seq_printf(sf, "active=%u", k.active);
		seq_printf(sf, " aux0=%u aux1=%u enable0=0x%x enable1=0x%x frozen=%u\n",
			   k.aux[0], k.aux[1], k.enable[0], k.enable[1], k.frozen);
	}
	return 0;
}

static int amupmu_mock_amu_open(struct inode *inode, struct file *file)
{
	return single_open(file, amupmu_mock_amu_show, inode->i_private);
}

static const struct file_operations amupmu_mock_amu_fops = {
	.owner = THIS_MODULE,
	.open = amupmu_mock_amu_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = amupmu_mock_amu_write,
};

/* ------------------------------------------------------------ amu_reads file */

static int amupmu_mock_amu_reads_show(struct seq_file *sf, void *v)
{
	unsigned int cpu;
	u64 n = 0;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(*per_cpu_ptr(&amupmu_mock_amu_nreads, cpu));
	seq_printf(sf, "%llu\n", n);
	return 0;
}

static int amupmu_mock_amu_reads_open(struct inode *inode, struct file *file)
{
	return single_open(file, amupmu_mock_amu_reads_show, inode->i_private);
}

/* "0": reset (a read served meanwhile on another CPU may stay counted) */
static ssize_t amupmu_mock_amu_reads_write(struct file *file, const char __user *ubuf,
					   size_t len, loff_t *ppos)
{
	unsigned int cpu;
	char buf[8];

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (strcmp(strim(buf), "0"))
		return -EINVAL;
	for_each_possible_cpu(cpu)
		WRITE_ONCE(*per_cpu_ptr(&amupmu_mock_amu_nreads, cpu), 0);
	return len;
}

static const struct file_operations amupmu_mock_amu_reads_fops = {
	.owner = THIS_MODULE,
	.open = amupmu_mock_amu_reads_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = amupmu_mock_amu_reads_write,
};

/* ------------------------------------------------------------ cpu_pm file */

/*
 * What a core power-down does to its PMU (the real registers: the model
 * has no PMU): every register reset, so that cpu_pm_exit() must restore
 * every counter. On the CPU, interrupts off.
 */
#define AMUPMU_MOCK_ZERO_EVCNTR(n)	write_sysreg(0, pmevcntr##n##_el0)
#define AMUPMU_MOCK_ZERO_EVTYPER(n)	write_sysreg(0, pmevtyper##n##_el0)

static void amupmu_mock_pmu_power_loss(void)
{
	unsigned int idx, n, pmuver;

	pmuver = FIELD_GET(ID_AA64DFR0_EL1_PMUVer, read_sysreg_s(SYS_ID_AA64DFR0_EL1));
	if (pmuver == ID_AA64DFR0_EL1_PMUVer_NI || pmuver == ID_AA64DFR0_EL1_PMUVer_IMP_DEF)
		return;
	n = FIELD_GET(ARMV8_PMU_PMCR_N, read_sysreg(pmcr_el0));
	write_sysreg(0, pmcr_el0);
	write_sysreg(U32_MAX, pmcntenclr_el0);
	write_sysreg(U32_MAX, pmintenclr_el1);
	write_sysreg(U32_MAX, pmovsclr_el0);
	for (idx = 0; idx < n; idx++) {
		PMEVN_SWITCH(idx, AMUPMU_MOCK_ZERO_EVCNTR);
		PMEVN_SWITCH(idx, AMUPMU_MOCK_ZERO_EVTYPER);
	}
	write_sysreg(0, pmccntr_el0);
	isb();
}

#define AMUPMU_CPU_PM_SPIN_MAX_US	100000

/**
 * struct amupmu_cpu_pm_req - one cpu_pm cycle, run on its CPU
 * @power_loss: reset the PMU between entry and exit
 * @spin_us: microseconds spent with interrupts off before the entry
 * @ret: 0, or the errno of cpu_pm_enter()
 */
struct amupmu_cpu_pm_req {
	bool power_loss;
	unsigned int spin_us;
	int ret;
};

static DEFINE_PER_CPU(atomic_long_t, amupmu_cpu_pm_enters);
static DEFINE_PER_CPU(atomic_long_t, amupmu_cpu_pm_exits);

/*
 * On the CPU, in task context (smp_call_on_cpu()), interrupts off as
 * cpuidle has them. Not from an IPI: a CPU spinning in the IPI handler
 * while its peer waits for it in smp_call_function_many_cond() locked up
 * both (soft lockups, RCU stalls).
 */
static int amupmu_cpu_pm_cycle(void *arg)
{
	struct amupmu_cpu_pm_req *req = arg;
	unsigned int us;

	local_irq_disable();
	for (us = req->spin_us; us; us -= min(us, 1000U))
		udelay(min(us, 1000U));
	req->ret = cpu_pm_enter();
	if (!req->ret) {
		atomic_long_inc(this_cpu_ptr(&amupmu_cpu_pm_enters));
		if (req->power_loss) {
			amupmu_mock_pmu_power_loss();
			amupmu_mock_amu_power_loss();
		}
		cpu_pm_exit();
		atomic_long_inc(this_cpu_ptr(&amupmu_cpu_pm_exits));
	}
	local_irq_enable();
	return 0;
}

/**
 * amupmu_mock_cpu_cmd() - a "<cpu> [REST]" write to a test file
 * @ubuf: the user's text
 * @len: its length
 * @buf: room for it, NUL-terminated here
 * @size: bytes at @buf
 * @rest: set to the text after the CPU number, or NULL without one
 *
 * Return: the CPU (a possible one); -EINVAL for an empty, too long or bad
 * write, -EFAULT.
 */
int amupmu_mock_cpu_cmd(const char __user *ubuf, size_t len, char *buf, size_t size,
			char **rest)
{
	unsigned int cpu;
	char *p, *tok;

	if (len == 0 || len >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	p = strim(buf);
	tok = strsep(&p, " ");
	if (kstrtouint(tok, 10, &cpu) || cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return -EINVAL;
	*rest = p;
	return cpu;
}

static ssize_t amupmu_cpu_pm_write(struct file *file, const char __user *ubuf, size_t len,
				   loff_t *ppos)
{
	struct amupmu_cpu_pm_req req = { .power_loss = true };
	char buf[32], *p;
	int cpu, ret;

	cpu = amupmu_mock_cpu_cmd(ubuf, len, buf, sizeof(buf), &p);
	if (cpu < 0)
		return cpu;
	if (p) {
		char *word;

		p = skip_spaces(p);
		word = strsep(&p, " ");
		if (p)
			p = skip_spaces(p);
		if (!strcmp(word, "fail") && !p) {
			req.power_loss = false;
		} else if (!strcmp(word, "spin") && p) {
			if (kstrtouint(p, 10, &req.spin_us) || !req.spin_us ||
			    req.spin_us > AMUPMU_CPU_PM_SPIN_MAX_US)
				return -EINVAL;
		} else {
			return -EINVAL;
		}
	}

	cpus_read_lock();
	if (!cpu_online(cpu))
		ret = -ENODEV;
	else
		ret = smp_call_on_cpu(cpu, amupmu_cpu_pm_cycle, &req, false) ?: req.ret;
	cpus_read_unlock();
	return ret ?: len;
}

static int amupmu_cpu_pm_show(struct seq_file *m, void *v)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		seq_printf(m, "cpu%u enter=%ld exit=%ld\n", cpu,
			   atomic_long_read(per_cpu_ptr(&amupmu_cpu_pm_enters, cpu)),
			   atomic_long_read(per_cpu_ptr(&amupmu_cpu_pm_exits, cpu)));
	return 0;
}

static int amupmu_cpu_pm_open(struct inode *inode, struct file *file)
{
	return single_open(file, amupmu_cpu_pm_show, inode->i_private);
}

static const struct file_operations amupmu_cpu_pm_fops = {
	.owner = THIS_MODULE,
	.open = amupmu_cpu_pm_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = amupmu_cpu_pm_write,
};

/* ------------------------------------------------------------ the backend */

static u64 amupmu_mock_read(enum amupmu_reg reg)
{
	/* the AMU registers, numbered from AMUPMU_REG_AMCR on: the read path */
	if (likely(reg >= AMUPMU_REG_AMCR))
		return amupmu_mock_amu_read(reg);
	switch (reg) {
	case AMUPMU_REG_ID_AA64DFR0:
		return (amupmu_hw_backend.read(reg) & ~ID_AA64DFR0_EL1_PMSVer) |
		       FIELD_PREP(ID_AA64DFR0_EL1_PMSVer,
				  amupmu_mock_spe_pmsver(smp_processor_id()));
	case AMUPMU_REG_ID_AA64PFR0:
		return (amupmu_hw_backend.read(reg) & ~ID_AA64PFR0_EL1_AMU) |
		       FIELD_PREP(ID_AA64PFR0_EL1_AMU, ID_AA64PFR0_EL1_AMU_IMP);
	case AMUPMU_REG_AMCFGR:
		this_cpu_inc(amupmu_mock_amu_nreads);
		return FIELD_PREP(AMUPMU_AMCFGR_N, AMUPMU_MOCK_CG0NC + AMUPMU_MOCK_CG1NC - 1) |
		       FIELD_PREP(AMUPMU_AMCFGR_SIZE, 63) | AMUPMU_AMCFGR_HDBG |
		       FIELD_PREP(AMUPMU_AMCFGR_NCG, 1);
	case AMUPMU_REG_AMCGCR:
		this_cpu_inc(amupmu_mock_amu_nreads);
		return FIELD_PREP(AMUPMU_AMCGCR_CG0NC, AMUPMU_MOCK_CG0NC) |
		       FIELD_PREP(AMUPMU_AMCGCR_CG1NC, AMUPMU_MOCK_CG1NC);
	case AMUPMU_REG_PMBIDR:
		return amupmu_mock_spe_pmbidr(smp_processor_id());
	case AMUPMU_REG_PMSIDR:
		return amupmu_mock_spe_pmsidr(smp_processor_id());
	default:
		return amupmu_hw_backend.read(reg);
	}
}

/* the model's files in the driver's debugfs directory */
static void amupmu_mock_debugfs_init(struct dentry *dir)
{
	debugfs_create_file("cpu_pm", 0600, dir, NULL, &amupmu_cpu_pm_fops);
	debugfs_create_file("amu_model", 0600, dir, NULL, &amupmu_mock_amu_fops);
	debugfs_create_file("amu_reads", 0600, dir, NULL, &amupmu_mock_amu_reads_fops);
	amupmu_mock_spe_debugfs_init(dir);
}

const struct amupmu_backend amupmu_mock_backend = {
	.name = "mock",
	.mock_flags = AMUPMU_CPU_MOCK,
	.read = amupmu_mock_read,
	.frame_read = amupmu_mock_frame_read,
	.amu_start = amupmu_mock_amu_start,
	.amu_stop = amupmu_mock_amu_stop,
	.debugfs_init = amupmu_mock_debugfs_init,
	.exit = amupmu_mock_spe_exit,
};
