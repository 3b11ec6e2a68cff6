// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: /sys/kernel/debug/amupmu/ and /sys/kernel/debug/arm_spe/.
 *
 * amupmu/ holds what the backend adds (struct amupmu_backend.debugfs_init):
 * on a test build the mock model's knobs and hooks, cpu_pm, amu_model,
 * amu_reads, spe_model, spe_stream, spe_stats, spe_fault (amupmu_mock.c
 * and amupmu_mock_spe.c have their formats); nothing on a production one.
 *
 * Every build with SPE on a CPU has /sys/kernel/debug/arm_spe/: the SPE
 * filter defaults of seed 002 (one register field per file, checked by
 * amupmu_spe_defaults_set()), "config" (the registers they make) and
 * cpuN/pmsidr, cpuN/pmbidr. Documentation/admin-guide/amupmu.rst has the
 * contract.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "amupmu.h"
#include "amupmu_compat.h"
#include "amupmu_spe.h"

static struct dentry *amupmu_debugfs_dir;
static struct dentry *amupmu_spe_debugfs_dir;

/* ------------------------------------------------------------ arm_spe knobs */

/**
 * struct amupmu_spe_knob - one arm_spe file: one field of one register
 * @name: the file's name
 * @reg: the register
 * @mask: the field's bits
 * @in_place: the value is the register's bits in place (pmsirr_interval:
 *	operations, a multiple of 256), not the field shifted down
 * @hex: print in hex (masks and event sets)
 */
struct amupmu_spe_knob {
	const char *name;
	enum amupmu_spe_reg reg;
	u64 mask;
	bool in_place;
	bool hex;
};

static const struct amupmu_spe_knob amupmu_spe_knobs[] = {
	{ "pmsfcr_fe",		AMUPMU_SPE_PMSFCR,	PMSFCR_EL1_FE },
	{ "pmsfcr_ft",		AMUPMU_SPE_PMSFCR,	PMSFCR_EL1_FT },
	{ "pmsfcr_fl",		AMUPMU_SPE_PMSFCR,	PMSFCR_EL1_FL },
	{ "pmsfcr_fne",		AMUPMU_SPE_PMSFCR,	PMSFCR_EL1_FnE },
	{ "pmsfcr_type",	AMUPMU_SPE_PMSFCR,	PMSFCR_EL1_TYPE, false, true },
	{ "pmsfcr_type_mask",	AMUPMU_SPE_PMSFCR,	PMSFCR_EL1_TYPEm, false, true },
	{ "pmsevfr",		AMUPMU_SPE_PMSEVFR,	U64_MAX, false, true },
	{ "pmsnevfr",		AMUPMU_SPE_PMSNEVFR,	U64_MAX, false, true },
	{ "pmslatfr_minlat",	AMUPMU_SPE_PMSLATFR,	PMSLATFR_EL1_MINLAT },
	{ "pmsirr_interval",	AMUPMU_SPE_PMSIRR,	PMSIRR_EL1_INTERVAL, true },
	{ "pmsirr_rnd",		AMUPMU_SPE_PMSIRR,	PMSIRR_EL1_RND },
};

static int amupmu_spe_knob_show(struct seq_file *m, void *v)
{
	const struct amupmu_spe_knob *k = m->private;
	struct amupmu_spe_filter f;
	u64 val;

	amupmu_spe_defaults_get(&f);
	val = *amupmu_spe_filter_reg(&f, k->reg) & k->mask;
	if (!k->in_place)
		val >>= __ffs64(k->mask);
	seq_printf(m, k->hex ? "0x%llx\n" : "%llu\n", val);
	return 0;
}

static int amupmu_spe_knob_open(struct inode *inode, struct file *file)
{
	return single_open(file, amupmu_spe_knob_show, inode->i_private);
}

static ssize_t amupmu_spe_knob_write(struct file *file, const char __user *ubuf, size_t len,
				     loff_t *ppos)
{
	const struct amupmu_spe_knob *k = file_inode(file)->i_private;
	unsigned int shift = k->in_place ? 0 : __ffs64(k->mask);
	char buf[32];
	u64 val, old;
	int ret;

	/* one number, base 0, one trailing newline allowed; nothing cut off */
	if (!len || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	ret = kstrtou64(buf, 0, &val);
	if (ret)
		return -EINVAL;
	if (val > (k->mask >> shift))
		return -EINVAL;
	ret = amupmu_spe_defaults_set(k->reg, k->mask, val << shift, &old);
	if (ret)
		return ret;
	amupmu_nl_knob_event(k->name, (old & k->mask) >> shift, val);
	return len;
}

static const struct file_operations amupmu_spe_knob_fops = {
	.owner = THIS_MODULE,
	.open = amupmu_spe_knob_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = amupmu_spe_knob_write,
};

/*
 * The read-only files (0400) refuse to open for writing, also for root
 * (whom debugfs lets past the mode), as sysfs does: EACCES.
 */
#define AMUPMU_DEBUGFS_RO(name)							\
static int name##_open(struct inode *inode, struct file *file)			\
{										\
	if (file->f_mode & FMODE_WRITE)						\
		return -EACCES;							\
	return single_open(file, name##_show, inode->i_private);		\
}										\
static const struct file_operations name##_fops = {				\
	.owner = THIS_MODULE,							\
	.open = name##_open,							\
	.read = seq_read,							\
	.llseek = seq_lseek,							\
	.release = single_release,						\
}

static int amupmu_spe_config_show(struct seq_file *m, void *v)
{
	struct amupmu_spe_filter f;

	amupmu_spe_defaults_get(&f);
	seq_printf(m, "pmsfcr=0x%llx pmsevfr=0x%llx pmsnevfr=0x%llx pmslatfr=0x%llx pmsirr=0x%llx\n",
		   f.pmsfcr, f.pmsevfr, f.pmsnevfr, f.pmslatfr, f.pmsirr);
	return 0;
}

AMUPMU_DEBUGFS_RO(amupmu_spe_config);

/* cpuN/pmsidr: the discovery entry's PMSIDR_EL1 */
static int amupmu_spe_pmsidr_show(struct seq_file *m, void *v)
{
	unsigned int cpu = (uintptr_t)m->private;
	u64 val;

	mutex_lock(&amupmu_dev.lock);
	val = amupmu_dev.cpus[cpu].pmsidr;
	mutex_unlock(&amupmu_dev.lock);
	seq_printf(m, "0x%llx\n", val);
	return 0;
}

AMUPMU_DEBUGFS_RO(amupmu_spe_pmsidr);

static int amupmu_spe_pmbidr_show(struct seq_file *m, void *v)
{
	seq_printf(m, "0x%llx\n", amupmu_spe_pmbidr((uintptr_t)m->private));
	return 0;
}

AMUPMU_DEBUGFS_RO(amupmu_spe_pmbidr);

/*
 * cpuN/regs: the live SPE registers of the session profiling on that CPU,
 * read there; "none" when no session profiles on it (nothing is read).
 */
static int amupmu_spe_regs_show(struct seq_file *m, void *v)
{
	static const char * const names[AMUPMU_SPE_SR_NR] = {
		[AMUPMU_SPE_SR_PMSCR] = "pmscr", [AMUPMU_SPE_SR_PMSICR] = "pmsicr",
		[AMUPMU_SPE_SR_PMSIRR] = "pmsirr", [AMUPMU_SPE_SR_PMSFCR] = "pmsfcr",
		[AMUPMU_SPE_SR_PMSEVFR] = "pmsevfr", [AMUPMU_SPE_SR_PMSNEVFR] = "pmsnevfr",
		[AMUPMU_SPE_SR_PMSLATFR] = "pmslatfr", [AMUPMU_SPE_SR_PMBLIMITR] = "pmblimitr",
		[AMUPMU_SPE_SR_PMBPTR] = "pmbptr", [AMUPMU_SPE_SR_PMBSR] = "pmbsr",
	};
	u64 regs[AMUPMU_SPE_SR_NR];
	unsigned int r;
	int ret = amupmu_spe_live_regs((uintptr_t)m->private, regs);

	if (ret == -ENODATA || ret == -ENODEV) {
		seq_puts(m, ret == -ENODEV ? "offline\n" : "none\n");
		return 0;
	}
	for (r = 0; r < AMUPMU_SPE_SR_NR; r++)
		seq_printf(m, "%s%s=0x%llx", r ? " " : "", names[r], regs[r]);
	seq_putc(m, '\n');
	return 0;
}

AMUPMU_DEBUGFS_RO(amupmu_spe_regs);

/* arm_spe/, when a CPU has SPE: the knobs, config, a directory per SPE CPU */
static void amupmu_spe_debugfs_init(void)
{
	struct dentry *dir;
	unsigned int cpu, i;
	char name[16];
	bool any = false;

	mutex_lock(&amupmu_dev.lock);
	for_each_possible_cpu(cpu)
		any |= !!(amupmu_dev.cpus[cpu].flags & AMUPMU_CPU_SPE);
	mutex_unlock(&amupmu_dev.lock);
	if (!any)
		return;
	amupmu_spe_debugfs_dir = debugfs_create_dir("arm_spe", NULL);
	for (i = 0; i < ARRAY_SIZE(amupmu_spe_knobs); i++)
		debugfs_create_file(amupmu_spe_knobs[i].name, 0600, amupmu_spe_debugfs_dir,
				    (void *)&amupmu_spe_knobs[i], &amupmu_spe_knob_fops);
	debugfs_create_file("config", 0400, amupmu_spe_debugfs_dir, NULL,
			    &amupmu_spe_config_fops);
	for_each_possible_cpu(cpu) {
		if (!(READ_ONCE(amupmu_dev.cpus[cpu].flags) & AMUPMU_CPU_SPE))
			continue;
		snprintf(name, sizeof(name), "cpu%u", cpu);
		dir = debugfs_create_dir(name, amupmu_spe_debugfs_dir);
		debugfs_create_file("pmsidr", 0400, dir, (void *)(uintptr_t)cpu,
				    &amupmu_spe_pmsidr_fops);
		debugfs_create_file("pmbidr", 0400, dir, (void *)(uintptr_t)cpu,
				    &amupmu_spe_pmbidr_fops);
		debugfs_create_file("regs", 0400, dir, (void *)(uintptr_t)cpu,
				    &amupmu_spe_regs_fops);
	}
}

void amupmu_debugfs_init(void)
{
	amupmu_debugfs_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	/* a test build's model adds its knobs and hooks */
	if (amupmu_dev.backend->debugfs_init)
		amupmu_dev.backend->debugfs_init(amupmu_debugfs_dir);
	amupmu_spe_debugfs_init();
}

void amupmu_debugfs_exit(void)
{
	debugfs_remove_recursive(amupmu_spe_debugfs_dir);
	amupmu_spe_debugfs_dir = NULL;
	debugfs_remove_recursive(amupmu_debugfs_dir);
	amupmu_debugfs_dir = NULL;
}
