// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: arm64 Activity Monitors, PMUv3 and SPE driver.
 *
 * Module entry, the /dev/amupmu character device with its ioctl dispatch,
 * and the platform driver for the "amupmu,pmuv3" devicetree node that hands
 * the PMU to amupmu (exclusive mode). Without that node the kernel's arm_pmu
 * owns the PMU and amupmu writes no PMU register.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/cpu.h>
#include <linux/fs.h>
#include <linux/interrupt.h>
#include <linux/irqdesc.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mod_devicetable.h>
#include <linux/of.h>
#include <linux/percpu.h>
#include <linux/platform_device.h>
#include <linux/poll.h>
#include <linux/uaccess.h>
#include <asm/virt.h>

#include "amupmu.h"
#include "amupmu_amu.h"
#include "amupmu_compat.h"
#include "amupmu_frames.h"
#include "amupmu_pmu.h"
#include "amupmu_spe.h"

/* the first published sizes are ABI */
static_assert(sizeof(struct amupmu_info) == AMUPMU_INFO_SIZE_VER2);
static_assert(sizeof(struct amupmu_cpu_info) == AMUPMU_CPU_INFO_SIZE_VER2);
static_assert(sizeof(struct amupmu_amu_read) == AMUPMU_AMU_READ_SIZE_VER0);
static_assert(sizeof(struct amupmu_amu_cpu) == AMUPMU_AMU_CPU_SIZE_VER0);
static_assert(sizeof(struct amupmu_pmu_config) == AMUPMU_PMU_CONFIG_SIZE_VER0);
static_assert(sizeof(struct amupmu_pmu_event) == AMUPMU_PMU_EVENT_SIZE_VER0);
static_assert(sizeof(struct amupmu_pmu_ctl) == AMUPMU_PMU_CTL_SIZE_VER0);
static_assert(sizeof(struct amupmu_pmu_read) == AMUPMU_PMU_READ_SIZE_VER3);
static_assert(sizeof(struct amupmu_spe_config) == AMUPMU_SPE_CONFIG_SIZE_VER0);
static_assert(sizeof(struct amupmu_spe_ctl) == AMUPMU_SPE_CTL_SIZE_VER0);
static_assert(sizeof(struct amupmu_spe_read) == AMUPMU_SPE_READ_SIZE_VER0);
static_assert(sizeof(struct amupmu_spe_cpu) == AMUPMU_SPE_CPU_SIZE_VER0);
static_assert(sizeof(struct amupmu_spe_buf_header) <= PAGE_SIZE);

struct amupmu_device amupmu_dev = {
	.lock = __MUTEX_INITIALIZER(amupmu_dev.lock),
};

/* ------------------------------------------------------------ features */

/* Feature bits: a unit is reported when at least one discovered CPU has it. */
u64 amupmu_features(void)
{
	u64 feat = 0;
	bool shared = false;
	unsigned int cpu;
	u32 fl;

	mutex_lock(&amupmu_dev.lock);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		fl = amupmu_dev.cpus[cpu].flags;
		if (fl & AMUPMU_CPU_PMU)
			feat |= AMUPMU_FEAT_PMU;
		if (fl & AMUPMU_CPU_AMU)
			feat |= AMUPMU_FEAT_AMU;
		if (fl & AMUPMU_CPU_SPE)
			feat |= AMUPMU_FEAT_SPE;
	}
	if (amupmu_dev.exclusive)
		feat |= AMUPMU_FEAT_PMU_EXCLUSIVE;
	else
		shared = (feat & AMUPMU_FEAT_PMU) && amupmu_perf_available();
	mutex_unlock(&amupmu_dev.lock);
	/* outside the lock: the probe creates a perf event */
	if (shared && amupmu_perf_has_pmu())
		feat |= AMUPMU_FEAT_PMU_SHARED;
	if (amupmu_dev.backend->mock_flags)
		feat |= AMUPMU_FEAT_MOCK;
	return feat;
}

/**
 * amupmu_pmu_owner() - who owns the PMU
 * @features: one amupmu_features() snapshot, so owner and features agree
 */
u32 amupmu_pmu_owner(u64 features)
{
	if (!(features & AMUPMU_FEAT_PMU))
		return AMUPMU_PMU_OWNER_NONE;
	if (features & AMUPMU_FEAT_PMU_EXCLUSIVE)
		return AMUPMU_PMU_OWNER_AMUPMU;
	return AMUPMU_PMU_OWNER_KERNEL;
}

/* ------------------------------------------------------------ ioctl */

/**
 * struct amupmu_ucmd - one ioctl call
 * @ubuffer: the user's struct
 * @user_size: its size as the user stated it (the struct's first field)
 * @cmd: kernel copy, zero-extended or tail-checked by copy_struct_from_user()
 * @sess: the file's session
 */
struct amupmu_ucmd {
	void __user *ubuffer;
	u32 user_size;
	void *cmd;
	struct amupmu_session *sess;
};

/* Write the kernel copy back, for as many bytes as both sides know. */
/*
 * Write the struct back: min(user's size, kernel's) bytes. Inlined, so that
 * the usual case (the user's struct is at least the kernel's) copies a
 * constant size.
 */
static __always_inline int amupmu_ucmd_respond(struct amupmu_ucmd *ucmd, size_t cmd_len)
{
	unsigned long left;

	if (likely(ucmd->user_size >= cmd_len))
		left = copy_to_user(ucmd->ubuffer, ucmd->cmd, cmd_len);
	else
		left = copy_to_user(ucmd->ubuffer, ucmd->cmd, ucmd->user_size);
	return left ? -EFAULT : 0;
}

static int amupmu_copy_cpu_entries(const struct amupmu_info *info)
{
	u8 __user *dst = u64_to_user_ptr(info->cpus_uptr);
	u32 n = min_t(u32, info->nr_cpus, nr_cpu_ids);
	size_t esize = info->cpu_entry_size;
	size_t klen = min_t(size_t, esize, sizeof(struct amupmu_cpu_info));
	struct amupmu_cpu_info ci;
	unsigned int cpu;

	for (cpu = 0; cpu < n; cpu++, dst += esize) {
		amupmu_cpu_snapshot(cpu, &ci);
		ci.pmu_counters_free = amupmu_pmu_free_mask(cpu, ci.pmu_num_counters);
		if (copy_to_user(dst, &ci, klen))
			return -EFAULT;
		if (esize > klen && clear_user(dst + klen, esize - klen))
			return -EFAULT;
	}
	return 0;
}

static u64 amupmu_supported_ioctls(void);

static int amupmu_ioctl_info(struct amupmu_ucmd *ucmd)
{
	struct amupmu_info *info = ucmd->cmd;
	size_t total;
	int ret;

	if (info->flags || info->__reserved || info->__reserved2)
		return -EINVAL;
	if (info->nr_cpus) {
		/* entries keep their __aligned_u64 fields aligned: 8-byte stride */
		if (info->cpu_entry_size < AMUPMU_CPU_INFO_SIZE_VER0 ||
		    info->cpu_entry_size > AMUPMU_CPU_ENTRY_SIZE_MAX ||
		    !IS_ALIGNED(info->cpu_entry_size, sizeof(u64)))
			return -EINVAL;
		/* cannot overflow: both factors are bounded */
		total = (size_t)min_t(u32, info->nr_cpus, nr_cpu_ids) * info->cpu_entry_size;
		if (!info->cpus_uptr || !access_ok(u64_to_user_ptr(info->cpus_uptr), total))
			return -EFAULT;
		ret = amupmu_copy_cpu_entries(info);
		if (ret)
			return ret;
	}

	info->abi_major = AMUPMU_ABI_MAJOR;
	info->abi_minor = AMUPMU_ABI_MINOR;
	info->features = amupmu_features();
	info->supported_ioctls = amupmu_supported_ioctls();
	info->pmu_owner = amupmu_pmu_owner(info->features);
	info->nr_cpus = nr_cpu_ids;
	info->cpu_entry_size = sizeof(struct amupmu_cpu_info);
	/* a VHE host kernel runs at EL2 and its clocksource reads the physical count */
	info->kernel_el = is_kernel_in_hyp_mode() ? 2 : 1;
	info->clock = is_kernel_in_hyp_mode() ? AMUPMU_CLOCK_CNTPCT : AMUPMU_CLOCK_CNTVCT;
	info->spe_owner = amupmu_spe_owner();
	return amupmu_ucmd_respond(ucmd, sizeof(*info));
}

/*
 * PMU commands: the session does the work; all write their struct back.
 * Inlined into each command's handler: @len is a constant there, so the
 * struct goes back in a constant-size copy.
 */
static __always_inline int amupmu_ioctl_pmu(struct amupmu_ucmd *ucmd, unsigned int cmd,
					    size_t len)
{
	int ret = cmd == AMUPMU_CMD_PMU_READ ? amupmu_pmu_cmd_read(ucmd->sess, ucmd->cmd) :
					      amupmu_pmu_cmd(ucmd->sess, cmd, ucmd->cmd);

	if (ret)
		return ret;
	ret = amupmu_ucmd_respond(ucmd, len);
	/* a group the caller never heard of would leak until close: undo it */
	if (ret && cmd == AMUPMU_CMD_PMU_CONFIG)
		amupmu_pmu_release_group(ucmd->sess);
	return ret;
}

static int amupmu_ioctl_pmu_config(struct amupmu_ucmd *ucmd)
{
	return amupmu_ioctl_pmu(ucmd, AMUPMU_CMD_PMU_CONFIG, sizeof(struct amupmu_pmu_config));
}

static int amupmu_ioctl_pmu_ctl(struct amupmu_ucmd *ucmd)
{
	return amupmu_ioctl_pmu(ucmd, AMUPMU_CMD_PMU_CTL, sizeof(struct amupmu_pmu_ctl));
}

static int amupmu_ioctl_pmu_read(struct amupmu_ucmd *ucmd)
{
	return amupmu_ioctl_pmu(ucmd, AMUPMU_CMD_PMU_READ, sizeof(struct amupmu_pmu_read));
}

static int amupmu_ioctl_amu_read(struct amupmu_ucmd *ucmd)
{
	int ret = amupmu_amu_cmd_read(ucmd->sess, ucmd->cmd);

	return ret ?: amupmu_ucmd_respond(ucmd, sizeof(struct amupmu_amu_read));
}

/* SPE commands: amupmu_spe.c does the work; all write their struct back. */
static __always_inline int amupmu_ioctl_spe(struct amupmu_ucmd *ucmd, unsigned int cmd,
					    size_t len)
{
	struct amupmu_spe_sess **slot = amupmu_session_spe(ucmd->sess);
	u64 seq = 0;
	int ret = amupmu_spe_cmd(slot, cmd, ucmd->cmd, &seq);

	if (ret)
		return ret;
	ret = amupmu_ucmd_respond(ucmd, len);
	/*
	 * A configuration the caller never heard of would hold its CPUs until
	 * close: this one (not one another thread made meanwhile).
	 */
	if (ret && cmd == AMUPMU_CMD_SPE_CONFIG)
		amupmu_spe_release(slot, seq);
	return ret;
}

static int amupmu_ioctl_spe_config(struct amupmu_ucmd *ucmd)
{
	return amupmu_ioctl_spe(ucmd, AMUPMU_CMD_SPE_CONFIG, sizeof(struct amupmu_spe_config));
}

static int amupmu_ioctl_spe_ctl(struct amupmu_ucmd *ucmd)
{
	return amupmu_ioctl_spe(ucmd, AMUPMU_CMD_SPE_CTL, sizeof(struct amupmu_spe_ctl));
}

static int amupmu_ioctl_spe_read(struct amupmu_ucmd *ucmd)
{
	return amupmu_ioctl_spe(ucmd, AMUPMU_CMD_SPE_READ, sizeof(struct amupmu_spe_read));
}

/* Every command's struct, so the dispatcher can copy any of them. */
union amupmu_ucmd_buffer {
	struct amupmu_info info;
	struct amupmu_pmu_config pmu_config;
	struct amupmu_pmu_ctl pmu_ctl;
	struct amupmu_pmu_read pmu_read;
	struct amupmu_amu_read amu_read;
	struct amupmu_spe_config spe_config;
	struct amupmu_spe_ctl spe_ctl;
	struct amupmu_spe_read spe_read;
};

/**
 * struct amupmu_ioctl_op - a command in the dispatch table
 * @size: sizeof the struct this kernel knows
 * @min_size: the struct's first published size (smaller -> EINVAL)
 * @execute: the handler; returns 0 or -errno, changes no state on error
 */
struct amupmu_ioctl_op {
	size_t size;
	size_t min_size;
	int (*execute)(struct amupmu_ucmd *ucmd);
};

#define AMUPMU_IOCTL_OP(_nr, _fn, _struct, _min)			\
	[(_nr) - AMUPMU_CMD_BASE] = {					\
		.size = sizeof(_struct) +				\
			BUILD_BUG_ON_ZERO(sizeof(union amupmu_ucmd_buffer) <	\
					  sizeof(_struct)),		\
		.min_size = (_min),					\
		.execute = (_fn),					\
	}

static const struct amupmu_ioctl_op amupmu_ioctl_ops[] = {
	AMUPMU_IOCTL_OP(AMUPMU_CMD_INFO, amupmu_ioctl_info, struct amupmu_info,
			AMUPMU_INFO_SIZE_VER0),
	AMUPMU_IOCTL_OP(AMUPMU_CMD_PMU_CONFIG, amupmu_ioctl_pmu_config,
			struct amupmu_pmu_config, AMUPMU_PMU_CONFIG_SIZE_VER0),
	AMUPMU_IOCTL_OP(AMUPMU_CMD_PMU_CTL, amupmu_ioctl_pmu_ctl,
			struct amupmu_pmu_ctl, AMUPMU_PMU_CTL_SIZE_VER0),
	AMUPMU_IOCTL_OP(AMUPMU_CMD_PMU_READ, amupmu_ioctl_pmu_read,
			struct amupmu_pmu_read, AMUPMU_PMU_READ_SIZE_VER0),
	AMUPMU_IOCTL_OP(AMUPMU_CMD_AMU_READ, amupmu_ioctl_amu_read,
			struct amupmu_amu_read, AMUPMU_AMU_READ_SIZE_VER0),
	AMUPMU_IOCTL_OP(AMUPMU_CMD_SPE_CONFIG, amupmu_ioctl_spe_config,
			struct amupmu_spe_config, AMUPMU_SPE_CONFIG_SIZE_VER0),
	AMUPMU_IOCTL_OP(AMUPMU_CMD_SPE_CTL, amupmu_ioctl_spe_ctl,
			struct amupmu_spe_ctl, AMUPMU_SPE_CTL_SIZE_VER0),
	AMUPMU_IOCTL_OP(AMUPMU_CMD_SPE_READ, amupmu_ioctl_spe_read,
			struct amupmu_spe_read, AMUPMU_SPE_READ_SIZE_VER0),
};

static u64 amupmu_supported_ioctls(void)
{
	u64 mask = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(amupmu_ioctl_ops); i++)
		if (amupmu_ioctl_ops[i].execute)
			mask |= BIT_ULL(i);
	return mask;
}

static long amupmu_fops_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	const struct amupmu_ioctl_op *op;
	/*
	 * Not zeroed (INIT_STACK_ALL_ZERO would clear the whole union on every
	 * call): the copy below fills the command's op->size bytes, zero-extended,
	 * and no handler looks past its own struct.
	 */
	union amupmu_ucmd_buffer buf __uninitialized;
	struct amupmu_ucmd ucmd = {
		.ubuffer = (void __user *)arg,
		.cmd = &buf,
		.sess = filp->private_data,
	};
	unsigned int nr = _IOC_NR(cmd);
	int ret;

	/* the hot commands first; anything but their common case comes back EAGAIN */
	if (cmd == AMUPMU_PMU_READ) {
		ret = amupmu_pmu_read_fast(ucmd.sess, ucmd.ubuffer);
		if (ret != -EAGAIN)
			return ret;
	} else if (cmd == AMUPMU_AMU_READ) {
		ret = amupmu_amu_read_fast(ucmd.sess, ucmd.ubuffer);
		if (ret != -EAGAIN)
			return ret;
	}

	/* only _IO(AMUPMU_TYPE, nr) commands: no direction or size bits */
	if (cmd != _IO(AMUPMU_TYPE, nr) || nr < AMUPMU_CMD_BASE ||
	    nr - AMUPMU_CMD_BASE >= ARRAY_SIZE(amupmu_ioctl_ops))
		return -ENOTTY;
	op = &amupmu_ioctl_ops[nr - AMUPMU_CMD_BASE];
	if (!op->execute)
		return -ENOTTY;

	if (get_user(ucmd.user_size, (u32 __user *)ucmd.ubuffer))
		return -EFAULT;
	if (ucmd.user_size < op->min_size)
		return -EINVAL;
	if (ucmd.user_size > AMUPMU_SIZE_MAX)
		return -E2BIG;
	ret = copy_struct_from_user(ucmd.cmd, op->size, ucmd.ubuffer, ucmd.user_size);
	if (ret)
		return ret;
	return op->execute(&ucmd);
}

static int amupmu_fops_open(struct inode *inode, struct file *filp)
{
	filp->private_data = amupmu_session_alloc();
	if (!filp->private_data)
		return -ENOMEM;
	/* the SPE wait queue from open on: poll()/epoll before the first CONFIG */
	if (amupmu_spe_file_init(amupmu_session_spe(filp->private_data))) {
		amupmu_session_free(filp->private_data);
		return -ENOMEM;
	}
	/* read() returns sample records: a stream, no file position */
	return stream_open(inode, filp);
}

static ssize_t amupmu_fops_read(struct file *filp, char __user *buf, size_t count, loff_t *ppos)
{
	return amupmu_session_read(filp->private_data, buf, count, filp->f_flags & O_NONBLOCK);
}

/*
 * With an SPE configuration, poll() reports its buffers (EPOLLIN at a
 * watermark, EPOLLPRI on a fault) and the sample ring's EPOLLIN if there is
 * one; without, the sample ring's state (EPOLLERR without a ring). It
 * always waits on both queues: a configuration made later wakes a poll()
 * or an epoll entry that began before it.
 */
static __poll_t amupmu_fops_poll(struct file *filp, struct poll_table_struct *wait)
{
	struct amupmu_spe_sess **spe = amupmu_session_spe(filp->private_data);
	__poll_t ring = amupmu_session_poll(filp->private_data, filp, wait);
	__poll_t mask = amupmu_spe_poll(spe, filp, wait);

	if (!amupmu_spe_configured(spe))
		return ring | mask;
	return mask | (ring & ~EPOLLERR);
}

/* The sample ring at offset 0; the SPE buffers at AMUPMU_SPE_MMAP_OFFSET(cpu). */
static int amupmu_fops_mmap(struct file *filp, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff >= AMUPMU_SPE_MMAP_OFFSET(0) >> PAGE_SHIFT)
		return amupmu_spe_mmap(amupmu_session_spe(filp->private_data), vma);
	return amupmu_session_mmap(filp->private_data, vma);
}

static int amupmu_fops_release(struct inode *inode, struct file *filp)
{
	amupmu_spe_file_release(amupmu_session_spe(filp->private_data));
	amupmu_pmu_file_release(filp->private_data);
	amupmu_session_free(filp->private_data);
	return 0;
}

static const struct file_operations amupmu_fops = {
	.owner = THIS_MODULE,
	.open = amupmu_fops_open,
	.release = amupmu_fops_release,
	.read = amupmu_fops_read,
	.poll = amupmu_fops_poll,
	.mmap = amupmu_fops_mmap,
	.unlocked_ioctl = amupmu_fops_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/* ------------------------------------------------------------ platform driver */

static int amupmu_probe(struct platform_device *pdev)
{
	int irq, ret;

	irq = platform_get_irq(pdev, 0);
	if (irq < 0)
		return irq;
	if (!irq_is_percpu_devid(irq)) {
		dev_err(&pdev->dev, "interrupt %d is not a per-CPU PPI\n", irq);
		return -EINVAL;
	}
	if (READ_ONCE(amupmu_dev.pmu_irq)) {
		dev_err(&pdev->dev, "a second amupmu,pmuv3 node is not supported\n");
		return -EBUSY;
	}
	ret = amupmu_pmu_claim(&pdev->dev, irq);
	if (ret)
		return ret;

	dev_info(&pdev->dev, "owns the PMU (per-CPU interrupt %d)\n", irq);
	amupmu_nl_owner_event(AMUPMU_NL_UNIT_PMU, AMUPMU_PMU_OWNER_AMUPMU);
	return 0;
}

static void amupmu_remove_device(struct platform_device *pdev)
{
	amupmu_pmu_release();
	amupmu_nl_owner_event(AMUPMU_NL_UNIT_PMU, amupmu_pmu_owner(amupmu_features()));
}

AMUPMU_DEFINE_PLATFORM_REMOVE(amupmu_remove, amupmu_remove_device)

static const struct of_device_id amupmu_of_match[] = {
	{ .compatible = "amupmu,pmuv3" },
	{ }
};
MODULE_DEVICE_TABLE(of, amupmu_of_match);

static struct platform_driver amupmu_platform_driver = {
	.probe = amupmu_probe,
	.remove = amupmu_remove,
	.driver = {
		.name = "amupmu",
		.of_match_table = amupmu_of_match,
		/* probe during load: sessions exist only after misc_register() */
		.probe_type = PROBE_FORCE_SYNCHRONOUS,
	},
};

/* ------------------------------------------------------------ module */

/*
 * The units in the order discovery runs their struct amupmu_unit_ops when
 * a CPU comes online: each unit's registers are read (AMU, then SPE) and
 * its per-CPU part started before the interfaces announce the CPU. Offline
 * runs the units' stops in reverse, then the announcements in this order
 * again: a CPU_OFFLINE event comes after every unit let the CPU go and its
 * entry says offline, a CPU_ONLINE event after every unit took it up. No
 * unit depends on another's per-CPU state (the AMU's bookkeeping, the
 * frames and the PMU are apart, and the PMU's two modes never count on
 * the same PMU at once). The SPE sessions' own hotplug state is set up
 * after this one (amupmu_spe_init()): they start after all of these and
 * stop before.
 */
static const struct amupmu_unit_ops *const amupmu_units[] = {
	&amupmu_amu_unit,	/* discover; online: the counters' bookkeeping */
	&amupmu_spe_unit,	/* discover */
	&amupmu_frames_unit,	/* online: the ID frames of a CPU offline at probe */
	&amupmu_pmu_unit,	/* exclusive mode: the CPU's PMU and its PPI */
	&amupmu_perf_unit,	/* shared mode: the groups' perf counters */
	&amupmu_nl_unit,	/* changed: CPU_ONLINE, CPU_OFFLINE events */
	&amupmu_sysfs_unit,	/* changed, first online: the CPU's register files */
};

/*
 * Registering /dev/amupmu is the last step of load and the first of unload:
 * nothing can open it while the module is half set up. Under
 * cpus_read_lock() so that no CPU is discovered while its sysfs group is
 * being created or removed (see amupmu_sysfs_cpu_discovered()).
 */
static int amupmu_misc_register(void)
{
	int ret;

	cpus_read_lock();
	ret = misc_register(&amupmu_dev.misc);
	amupmu_dev.sysfs_live = !ret;
	cpus_read_unlock();
	return ret;
}

static void amupmu_misc_deregister(void)
{
	cpus_read_lock();
	amupmu_dev.sysfs_live = false;
	cpus_read_unlock();
	misc_deregister(&amupmu_dev.misc);
}

static int __init amupmu_init(void)
{
	int ret;

#ifdef CONFIG_AMUPMU_MOCK
	amupmu_dev.backend = &amupmu_mock_backend;
	pr_warn("test build: AMU and SPE registers come from the mock model\n");
#else
	amupmu_dev.backend = &amupmu_hw_backend;
#endif
	amupmu_dev.misc = (struct miscdevice) {
		.minor = MISC_DYNAMIC_MINOR,
		.name = "amupmu",
		.fops = &amupmu_fops,
		.mode = 0666,
	};

	ret = amupmu_cpus_alloc();
	if (ret)
		return ret;

	ret = amupmu_pmu_init();
	if (ret)
		goto out_cpus_free;

	ret = amupmu_amu_init();
	if (ret)
		goto out_cpus;

	ret = amupmu_sysfs_init();
	if (ret)
		goto out_amu;

	/*
	 * Discovery's hotplug callbacks first: once the platform driver owns
	 * the PMU, every CPU that goes offline must pass through them.
	 */
	ret = amupmu_discovery_start(amupmu_units, ARRAY_SIZE(amupmu_units));
	if (ret)
		goto out_sysfs;

	ret = amupmu_spe_init();
	if (ret)
		goto out_discovery;

	ret = amupmu_spe_dev_init();
	if (ret)
		goto out_spe;

	ret = amupmu_frames_init();
	if (ret)
		goto out_spe_dev;

	ret = platform_driver_register(&amupmu_platform_driver);
	if (ret)
		goto out_frames;

	amupmu_debugfs_init();

	ret = amupmu_nl_init();
	if (ret)
		goto out_debugfs;

	/* last: a file opened now keeps a module that loaded */
	ret = amupmu_misc_register();
	if (ret)
		goto out_nl;

	pr_info("ABI %u.%u, %s backend, PMU owner: %s\n", AMUPMU_ABI_MAJOR,
		AMUPMU_ABI_MINOR, amupmu_dev.backend->name,
		amupmu_owner_name(amupmu_pmu_owner(amupmu_features())));
	return 0;

out_nl:
	amupmu_nl_exit();
out_debugfs:
	amupmu_debugfs_exit();
	if (amupmu_dev.backend->exit)
		amupmu_dev.backend->exit();
	platform_driver_unregister(&amupmu_platform_driver);
out_frames:
	amupmu_frames_exit();
out_spe_dev:
	amupmu_spe_dev_exit();
out_spe:
	amupmu_spe_exit();
out_discovery:
	amupmu_discovery_stop();
out_sysfs:
	amupmu_sysfs_exit();
out_amu:
	amupmu_amu_exit();
out_cpus:
	amupmu_pmu_exit();
out_cpus_free:
	amupmu_cpus_free();
	return ret;
}

static void __exit amupmu_exit(void)
{
	amupmu_misc_deregister();
	amupmu_nl_exit();
	amupmu_debugfs_exit();
	/* no session is left: what the backend runs by itself (mock SPE ticks) stops */
	if (amupmu_dev.backend->exit)
		amupmu_dev.backend->exit();
	platform_driver_unregister(&amupmu_platform_driver);
	amupmu_frames_exit();
	amupmu_spe_dev_exit();
	amupmu_spe_exit();
	amupmu_discovery_stop();
	amupmu_sysfs_exit();
	amupmu_amu_exit();
	amupmu_pmu_exit();
	amupmu_cpus_free();
}

module_init(amupmu_init);
module_exit(amupmu_exit);

MODULE_AUTHOR("The amupmu authors");
MODULE_DESCRIPTION("arm64 Activity Monitors, PMUv3 and SPE driver");
MODULE_LICENSE("GPL");
