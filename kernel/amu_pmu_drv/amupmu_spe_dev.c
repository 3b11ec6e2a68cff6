// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: the SPE platform device ("amupmu-spe"), claimed by hand.
 *
 * The stock SPE device (devicetree "arm,statistical-profiling-extension-v1",
 * ACPI "arm,spe-v1": a platform device whose interrupt 0 is the profiling
 * buffer's PPI) is the kernel's arm_spe_pmu driver's, a module in distro
 * kernels. amupmu never takes it on its own: this driver has no match
 * table, so it binds only where an administrator asks for it,
 *   echo amupmu-spe > /sys/bus/platform/devices/DEV/driver_override
 *   echo DEV > /sys/bus/platform/drivers/amupmu-spe/bind
 * and only while arm_spe_pmu does not hold the device (a bound device
 * refuses a second driver: EBUSY). Unbinding ("echo DEV > .../unbind"),
 * or unloading amupmu, gives it back.
 *
 * Probe refuses, leaving the device unbound: an interrupt that is not a
 * PPI (ENXIO); served CPUs (the PPI's affinity, as arm_spe_pmu reads it)
 * none of which has SPE by amupmu's discovery (ENODEV); a second device
 * while one is bound (EBUSY).
 *
 * The PPI is enabled on each served CPU while it is online, by a dynamic
 * CPU hotplug state of this file (CPUHP_AP_ONLINE_DYN) that exists while
 * the device is bound. It is set up at probe, after the states of
 * discovery and of the SPE sessions (amupmu_spe.c, at load), so a CPU
 * coming online is discovered and has its session started before its PPI
 * is enabled (a buffer event meanwhile stays pending: the interrupt is
 * level-sensitive), and a CPU going offline has its PPI disabled before its
 * session stops, which reads PMBSR_EL1 itself (amupmu_spe_cpu_stop()).
 *
 * The mock build's SPE model is its own device: it calls
 * amupmu_spe_irq_handle() itself, so without a bound device every CPU
 * counts as served and amupmu as the owner. A device may still be claimed
 * there (its CPUs report SPE through the model), which tests the claim.
 *
 * Locking: amupmu_spe_dev_lock guards the bound device, taken in probe and
 * remove only (under the device's lock, which the driver core holds), then
 * amupmu_dev.lock or the CPU hotplug lock inside it. The hotplug callbacks
 * and amupmu_spe_dev_serves() read amupmu_spe_dev's fields without a lock:
 * they are written before the hotplug state exists (probe) and after it is
 * gone (remove).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/device.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irqdesc.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/of.h>
#include <linux/percpu.h>
#include <linux/platform_device.h>
#include <linux/string.h>

#include "amupmu.h"
#include "amupmu_compat.h"
#include "amupmu_spe.h"

#define AMUPMU_SPE_DRV_NAME	"amupmu-spe"
/* the stock device: devicetree compatible, and the ACPI platform device's name */
#define AMUPMU_SPE_OF_COMPAT	"arm,statistical-profiling-extension-v1"
#define AMUPMU_SPE_ACPI_NAME	"arm,spe-v1"

/**
 * struct amupmu_spe_dev - the bound SPE device (at most one)
 * @pdev: the device; NULL while none is bound. Written under
 *	amupmu_spe_dev_lock; read with READ_ONCE() elsewhere.
 * @irq: its buffer management PPI (Linux IRQ number)
 * @cpus: the CPUs the PPI serves (its per-CPU affinity)
 * @hp_state: the dynamic hotplug state that enables the PPI, while bound
 */
struct amupmu_spe_dev {
	struct platform_device *pdev;
	int irq;
	cpumask_t cpus;
	enum cpuhp_state hp_state;
};

static DEFINE_MUTEX(amupmu_spe_dev_lock);	/* see the top of this file */
static struct amupmu_spe_dev amupmu_spe_dev;
static DEFINE_PER_CPU(u8, amupmu_spe_irq_cookie);

static irqreturn_t amupmu_spe_dev_irq(int irq, void *dev_id)
{
	amupmu_spe_irq_handle();
	return IRQ_HANDLED;
}

static int amupmu_spe_dev_cpu_online(unsigned int cpu)
{
	if (cpumask_test_cpu(cpu, &amupmu_spe_dev.cpus))
		enable_percpu_irq(amupmu_spe_dev.irq, IRQ_TYPE_NONE);
	return 0;
}

static int amupmu_spe_dev_cpu_offline(unsigned int cpu)
{
	if (cpumask_test_cpu(cpu, &amupmu_spe_dev.cpus))
		disable_percpu_irq(amupmu_spe_dev.irq);
	return 0;
}

/* Does a CPU of @cpus have SPE, by discovery? */
static bool amupmu_spe_dev_any_spe(const struct cpumask *cpus)
{
	bool found = false;
	unsigned int cpu;

	mutex_lock(&amupmu_dev.lock);
	for_each_cpu(cpu, cpus) {
		if (amupmu_dev.cpus[cpu].flags & AMUPMU_CPU_SPE) {
			found = true;
			break;
		}
	}
	mutex_unlock(&amupmu_dev.lock);
	return found;
}

static int amupmu_spe_dev_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	cpumask_t cpus;
	int irq, ret;

	irq = platform_get_irq(pdev, 0);
	if (irq < 0)
		return irq;
	if (!irq_is_percpu_devid(irq)) {
		dev_err(dev, "interrupt %d is not a per-CPU PPI: not an SPE device\n", irq);
		return -ENXIO;
	}
	/* the CPUs the PPI serves: all possible ones unless it is partitioned */
	if (irq_get_percpu_devid_partition(irq, &cpus)) {
		dev_err(dev, "no CPU affinity for the PPI %d\n", irq);
		return -ENXIO;
	}
	cpumask_and(&cpus, &cpus, cpu_possible_mask);
	if (!amupmu_spe_dev_any_spe(&cpus)) {
		dev_err(dev, "none of the CPUs %*pbl of its PPI has SPE usable at EL1 (discovery)\n",
			cpumask_pr_args(&cpus));
		return -ENODEV;
	}

	mutex_lock(&amupmu_spe_dev_lock);
	if (amupmu_spe_dev.pdev) {
		dev_err(dev, "%s is amupmu's SPE device already: one at a time\n",
			dev_name(&amupmu_spe_dev.pdev->dev));
		ret = -EBUSY;
		goto out_unlock;
	}
	/* fails if another driver (arm_spe_pmu) requested the PPI */
	ret = request_percpu_irq(irq, amupmu_spe_dev_irq, AMUPMU_SPE_DRV_NAME,
				 &amupmu_spe_irq_cookie);
	if (ret) {
		dev_err(dev, "cannot take the PPI %d: %d\n", irq, ret);
		goto out_unlock;
	}
	amupmu_spe_dev.irq = irq;
	cpumask_copy(&amupmu_spe_dev.cpus, &cpus);
	/* enables the PPI on each online CPU it serves, and on later ones */
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "perf/amupmu/spe:online",
				amupmu_spe_dev_cpu_online, amupmu_spe_dev_cpu_offline);
	if (ret < 0) {
		dev_err(dev, "no CPU hotplug state: %d\n", ret);
		goto out_irq;
	}
	amupmu_spe_dev.hp_state = ret;
	WRITE_ONCE(amupmu_spe_dev.pdev, pdev);
	mutex_unlock(&amupmu_spe_dev_lock);

	dev_info(dev, "owns SPE: buffer interrupt %d for CPUs %*pbl\n", irq,
		 cpumask_pr_args(&cpus));
	amupmu_nl_owner_event(AMUPMU_NL_UNIT_SPE, AMUPMU_SPE_OWNER_AMUPMU);
	return 0;

out_irq:
	free_percpu_irq(irq, &amupmu_spe_irq_cookie);
	amupmu_spe_dev.irq = 0;
	cpumask_clear(&amupmu_spe_dev.cpus);
out_unlock:
	mutex_unlock(&amupmu_spe_dev_lock);
	return ret;
}

static void amupmu_spe_dev_remove_device(struct platform_device *pdev)
{
	mutex_lock(&amupmu_spe_dev_lock);
	/* new sessions see no SPE device from here on */
	WRITE_ONCE(amupmu_spe_dev.pdev, NULL);
	/* every SPE session stops profiling while the PPI still works */
	amupmu_spe_dev_gone();
	cpuhp_remove_state(amupmu_spe_dev.hp_state);
	free_percpu_irq(amupmu_spe_dev.irq, &amupmu_spe_irq_cookie);
	amupmu_spe_dev.irq = 0;
	cpumask_clear(&amupmu_spe_dev.cpus);
	mutex_unlock(&amupmu_spe_dev_lock);
	dev_info(&pdev->dev, "SPE released\n");
	amupmu_nl_owner_event(AMUPMU_NL_UNIT_SPE, amupmu_spe_owner());
}

AMUPMU_DEFINE_PLATFORM_REMOVE(amupmu_spe_dev_remove, amupmu_spe_dev_remove_device)

/*
 * No of_match_table, acpi_match_table or id_table: the driver core matches
 * it only to a device whose driver_override is "amupmu-spe".
 */
static struct platform_driver amupmu_spe_driver = {
	.probe = amupmu_spe_dev_probe,
	.remove = amupmu_spe_dev_remove,
	.driver = {
		.name = AMUPMU_SPE_DRV_NAME,
		/* the bind's errno is the probe's: no asynchronous probe */
		.probe_type = PROBE_FORCE_SYNCHRONOUS,
	},
};

/**
 * amupmu_spe_dev_serves() - is @cpu's SPE buffer interrupt amupmu's?
 * @cpu: a CPU number
 *
 * Return: true while an SPE device is bound to amupmu and its PPI serves
 * @cpu; in the mock build, also for every CPU while none is bound (the
 * model is its own device). A snapshot: the device may be unbound right
 * after; the session code learns that through amupmu_spe_dev_gone(),
 * called before the PPI goes.
 */
bool amupmu_spe_dev_serves(unsigned int cpu)
{
	if (cpu >= nr_cpu_ids)
		return false;
	if (!READ_ONCE(amupmu_spe_dev.pdev))
		return amupmu_dev.backend->mock_flags;	/* SPE from the model */
	return cpumask_test_cpu(cpu, &amupmu_spe_dev.cpus);
}

static bool amupmu_spe_is_stock_dev(struct device *dev)
{
	return of_device_is_compatible(dev->of_node, AMUPMU_SPE_OF_COMPAT) ||
	       !strcmp(to_platform_device(dev)->name, AMUPMU_SPE_ACPI_NAME);
}

/* bus_for_each_dev() callback: an SPE device bound to a driver not amupmu's */
static int amupmu_spe_dev_other_driver(struct device *dev, void *unused)
{
	const struct device_driver *drv = READ_ONCE(dev->driver);

	/* the pointer is compared, never followed: no lock needed */
	return amupmu_spe_is_stock_dev(dev) && drv && drv != &amupmu_spe_driver.driver;
}

/**
 * amupmu_spe_owner() - who owns SPE now
 *
 * Takes amupmu_dev.lock: not to be called with it held. A snapshot.
 *
 * Return: AMUPMU_SPE_OWNER_AMUPMU while an SPE device is bound to
 * "amupmu-spe"; else AMUPMU_SPE_OWNER_NONE when no discovered CPU has SPE;
 * else AMUPMU_SPE_OWNER_AMUPMU in the mock build (the model); else
 * AMUPMU_SPE_OWNER_KERNEL when a stock SPE device is bound to another
 * driver (the kernel's arm_spe_pmu); else AMUPMU_SPE_OWNER_UNCLAIMED.
 */
u32 amupmu_spe_owner(void)
{
	if (READ_ONCE(amupmu_spe_dev.pdev))
		return AMUPMU_SPE_OWNER_AMUPMU;
	if (!amupmu_spe_dev_any_spe(cpu_possible_mask))
		return AMUPMU_SPE_OWNER_NONE;
	if (amupmu_dev.backend->mock_flags)	/* SPE from the model */
		return AMUPMU_SPE_OWNER_AMUPMU;
	if (bus_for_each_dev(&platform_bus_type, NULL, NULL, amupmu_spe_dev_other_driver))
		return AMUPMU_SPE_OWNER_KERNEL;
	return AMUPMU_SPE_OWNER_UNCLAIMED;
}

/* After discovery and the SPE defaults (amupmu_spe_init()): probe reads both. */
int amupmu_spe_dev_init(void)
{
	return platform_driver_register(&amupmu_spe_driver);
}

/* Unbinds the device if bound (amupmu_spe_dev_gone() first). */
void amupmu_spe_dev_exit(void)
{
	platform_driver_unregister(&amupmu_spe_driver);
}
