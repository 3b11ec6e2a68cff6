// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: /sys/kernel/debug/amupmu/.
 *
 * Test builds (CONFIG_AMUPMU_MOCK) add cpu_pm: QEMU has no idle state that
 * powers the PMU down, so this file drives the CPU PM path on demand.
 * Writing "<cpu>" runs on that CPU, interrupts off, cpu_pm_enter(), a reset
 * of the PMU registers as a power-down leaves them (amupmu_pmu_power_loss())
 * and cpu_pm_exit(); "<cpu> fail" runs cpu_pm_enter() and cpu_pm_exit()
 * without the reset, as an idle entry that a notifier refused;
 * "<cpu> spin <us>" first spins <us> microseconds (1 to 100000) with
 * interrupts off, so that a counter can overflow with its interrupt still
 * pending when the CPU powers down. Bad input: EINVAL; an offline CPU:
 * ENODEV; cpu_pm_enter() refused: its errno.
 * Reading prints "cpu<N> enter=<n> exit=<n>" for each possible CPU.
 * The reset also restarts the mock AMU's counters from zero
 * (amupmu_amu_power_loss()), as a power-down firmware does not restore.
 *
 * Test builds also add amu_model, the knobs of the mock AMU model
 * (amupmu_mock.c has the format).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/cpu_pm.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "amupmu.h"

static struct dentry *amupmu_debugfs_dir;

#ifdef CONFIG_AMUPMU_MOCK
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
			amupmu_pmu_power_loss();
			amupmu_amu_power_loss();
		}
		cpu_pm_exit();
		atomic_long_inc(this_cpu_ptr(&amupmu_cpu_pm_exits));
	}
	local_irq_enable();
	return 0;
}

/**
 * amupmu_debugfs_cpu_cmd() - a "<cpu> [REST]" write to a test file
 * @ubuf: the user's text
 * @len: its length
 * @buf: room for it, NUL-terminated here
 * @size: bytes at @buf
 * @rest: set to the text after the CPU number, or NULL without one
 *
 * Return: the CPU (a possible one); -EINVAL for an empty, too long or bad
 * write, -EFAULT.
 */
int amupmu_debugfs_cpu_cmd(const char __user *ubuf, size_t len, char *buf, size_t size,
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

	cpu = amupmu_debugfs_cpu_cmd(ubuf, len, buf, sizeof(buf), &p);
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
#endif /* CONFIG_AMUPMU_MOCK */

void amupmu_debugfs_init(void)
{
	amupmu_debugfs_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
#ifdef CONFIG_AMUPMU_MOCK
	debugfs_create_file("cpu_pm", 0600, amupmu_debugfs_dir, NULL, &amupmu_cpu_pm_fops);
	debugfs_create_file("amu_model", 0600, amupmu_debugfs_dir, NULL, &amupmu_mock_amu_fops);
#endif
}

void amupmu_debugfs_exit(void)
{
	debugfs_remove_recursive(amupmu_debugfs_dir);
	amupmu_debugfs_dir = NULL;
}
