// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: the memory-mapped AMU and PMU ID frames of the devicetree's
 * "amupmu,cpu-frames" nodes (dts/bindings/perf/amupmu,cpu-frames.yaml).
 *
 * One node per CPU names the CPU (cpu = <&cpuN>) and maps its external AMU
 * frame, its external PMU frame or both (reg-names "amu", "pmu"). amupmu
 * reads the frames' identification registers (IIDR, DEVARCH, DEVID,
 * DEVTYPE, PIDR0-4, CIDR0-3) once per CPU, on that CPU while it is online
 * (a frame may sit in the CPU's Core power domain) and with the node's
 * power domain held up by runtime PM, and reports them in the CPU's entry
 * of AMUPMU_INFO (amu_frame, pmu_frame) and in sysfs. A CPU that is offline
 * when its node probes is read when it next comes online, from discovery's
 * hotplug callback, after discovery has written its entry.
 *
 * Locking: cpus_read_lock() (or the CPU's own hotplug callback), then
 * amupmu_frames_lock, then amupmu_dev.lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/cpu.h>
#include <linux/device.h>
#include <linux/io.h>
#include <linux/mod_devicetable.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/of.h>
#include <linux/percpu.h>
#include <linux/platform_device.h>
#include <linux/pm_runtime.h>
#include <linux/smp.h>
#include <linux/string.h>

#include "amupmu.h"
#include "amupmu_compat.h"
#include "amupmu_frames.h"

#define AMUPMU_NR_FRAME_UNITS	2

/* reg-names, by enum amupmu_frame_unit */
static const char * const amupmu_frame_reg_names[AMUPMU_NR_FRAME_UNITS] = {
	[AMUPMU_FRAME_AMU] = "amu",
	[AMUPMU_FRAME_PMU] = "pmu",
};

/* register name prefixes, by enum amupmu_frame_unit */
static const char * const amupmu_frame_prefix[AMUPMU_NR_FRAME_UNITS] = {
	[AMUPMU_FRAME_AMU] = "AM",
	[AMUPMU_FRAME_PMU] = "PM",
};

static const u32 amupmu_frame_flag[AMUPMU_NR_FRAME_UNITS] = {
	[AMUPMU_FRAME_AMU] = AMUPMU_CPU_AMU_FRAME,
	[AMUPMU_FRAME_PMU] = AMUPMU_CPU_PMU_FRAME,
};

/**
 * struct amupmu_frames - one "amupmu,cpu-frames" node, bound
 * @dev: its platform device
 * @cpu: the CPU it describes
 * @base: the mapped frames, by enum amupmu_frame_unit; NULL when absent
 * @pending: not read yet: read when @cpu next comes online
 * @announce: with @pending, @cpu was discovered already, so its sysfs files
 *	exist and the frames' files must be added after the read
 */
struct amupmu_frames {
	struct device *dev;
	unsigned int cpu;
	void __iomem *base[AMUPMU_NR_FRAME_UNITS];
	bool pending;
	bool announce;
};

/* guards amupmu_frames_of_cpu and the bound nodes' @pending/@announce */
static DEFINE_MUTEX(amupmu_frames_lock);
static DEFINE_PER_CPU(struct amupmu_frames *, amupmu_frames_of_cpu);

static struct amupmu_id_frame *amupmu_frame_of(struct amupmu_cpu_info *c,
					       enum amupmu_frame_unit unit)
{
	return unit == AMUPMU_FRAME_AMU ? &c->amu_frame : &c->pmu_frame;
}

/**
 * struct amupmu_frames_read - one read of a CPU's frames, on that CPU
 * @fr: the node
 * @units: BIT(unit) of each frame to read
 * @id: what was read, by enum amupmu_frame_unit
 */
struct amupmu_frames_read {
	const struct amupmu_frames *fr;
	unsigned int units;
	struct amupmu_id_frame id[AMUPMU_NR_FRAME_UNITS];
};

static void amupmu_frame_read_ids(unsigned int cpu, enum amupmu_frame_unit unit,
				  void __iomem *base, struct amupmu_id_frame *id)
{
	u32 (*rd)(unsigned int cpu, enum amupmu_frame_unit unit,
		  void __iomem *base, u32 offset) = amupmu_dev.backend->frame_read;
	unsigned int i;

	id->iidr = rd(cpu, unit, base, AMUPMU_FRAME_IIDR);
	id->devarch = rd(cpu, unit, base, AMUPMU_FRAME_DEVARCH);
	/* the external AMU register map has no DEVID: 0 in its entry */
	if (unit == AMUPMU_FRAME_PMU)
		id->devid = rd(cpu, unit, base, AMUPMU_FRAME_DEVID);
	id->devtype = rd(cpu, unit, base, AMUPMU_FRAME_DEVTYPE);
	for (i = 0; i < 4; i++)
		id->pidr[i] = rd(cpu, unit, base, AMUPMU_FRAME_PIDR0 + 4 * i);
	id->pidr[4] = rd(cpu, unit, base, AMUPMU_FRAME_PIDR4);
	for (i = 0; i < ARRAY_SIZE(id->cidr); i++)
		id->cidr[i] = rd(cpu, unit, base, AMUPMU_FRAME_CIDR0 + 4 * i);
}

/* smp_call_function_single() callback: runs on the frames' CPU */
static void amupmu_frames_read_this_cpu(void *arg)
{
	struct amupmu_frames_read *r = arg;
	unsigned int unit;

	for (unit = 0; unit < AMUPMU_NR_FRAME_UNITS; unit++)
		if (r->units & BIT(unit))
			amupmu_frame_read_ids(r->fr->cpu, unit, r->fr->base[unit],
					      &r->id[unit]);
}

/*
 * The IIDR the PIDRs imply: the Arm ARM has AMIIDR/PMIIDR.ProductID match
 * PIDR1.PART_1:PIDR0.PART_0, Variant PIDR2.REVISION, Revision
 * PIDR3.REVAND and Implementer PIDR4.DES_2:0:PIDR2.DES_1:PIDR1.DES_0.
 */
static u32 amupmu_frame_pidr_iidr(const struct amupmu_id_frame *id)
{
	u32 part = FIELD_GET(AMUPMU_PIDR0_PART_0, id->pidr[0]) |
		   FIELD_GET(AMUPMU_PIDR1_PART_1, id->pidr[1]) << 8;
	u32 des = FIELD_GET(AMUPMU_PIDR1_DES_0, id->pidr[1]) |
		  FIELD_GET(AMUPMU_PIDR2_DES_1, id->pidr[2]) << 4 |
		  FIELD_GET(AMUPMU_PIDR4_DES_2, id->pidr[4]) << 8;

	return FIELD_PREP(AMUPMU_IIDR_PRODUCTID, part) |
	       FIELD_PREP(AMUPMU_IIDR_VARIANT, FIELD_GET(AMUPMU_PIDR2_REVISION, id->pidr[2])) |
	       FIELD_PREP(AMUPMU_IIDR_REVISION, FIELD_GET(AMUPMU_PIDR3_REVAND, id->pidr[3])) |
	       FIELD_PREP(AMUPMU_IIDR_IMPLEMENTER, des);
}

static bool amupmu_frame_devarch_ok(enum amupmu_frame_unit unit, u32 devarch)
{
	u32 archid = FIELD_GET(AMUPMU_DEVARCH_ARCHID, devarch);

	if (!(devarch & AMUPMU_DEVARCH_PRESENT) ||
	    FIELD_GET(AMUPMU_DEVARCH_ARCHITECT, devarch) != AMUPMU_ARCHITECT_ARM)
		return false;
	if (unit == AMUPMU_FRAME_AMU)
		return archid == AMUPMU_ARCHID_AMU_EXT32 || archid == AMUPMU_ARCHID_AMU_EXT64;
	return FIELD_GET(AMUPMU_DEVARCH_ARCHPART, devarch) == AMUPMU_ARCHPART_PMU;
}

/* Log what a frame says, and where its registers disagree with each other. */
static void amupmu_frame_report(const struct amupmu_frames *fr, enum amupmu_frame_unit unit,
				const struct amupmu_id_frame *id)
{
	static const u8 preamble[] = {
		AMUPMU_CIDR0, AMUPMU_CIDR1, AMUPMU_CIDR2, AMUPMU_CIDR3,
	};
	const char *p = amupmu_frame_prefix[unit];
	u32 want;
	unsigned int i;

	dev_info(fr->dev, "cpu%u: %sIIDR 0x%08x (part 0x%03lx r%lup%lu, designer 0x%03lx), %sDEVARCH 0x%08x\n",
		 fr->cpu, p, id->iidr, FIELD_GET(AMUPMU_IIDR_PRODUCTID, id->iidr),
		 FIELD_GET(AMUPMU_IIDR_VARIANT, id->iidr),
		 FIELD_GET(AMUPMU_IIDR_REVISION, id->iidr),
		 FIELD_GET(AMUPMU_IIDR_IMPLEMENTER, id->iidr), p, id->devarch);

	for (i = 0; i < ARRAY_SIZE(preamble); i++) {
		if (id->cidr[i] != preamble[i]) {
			dev_warn(fr->dev, "cpu%u: %sCIDR0-3 0x%02x 0x%02x 0x%02x 0x%02x are not a CoreSight component's\n",
				 fr->cpu, p, id->cidr[0], id->cidr[1], id->cidr[2], id->cidr[3]);
			break;
		}
	}
	if (!amupmu_frame_devarch_ok(unit, id->devarch))
		dev_warn(fr->dev, "cpu%u: %sDEVARCH 0x%08x does not name an Arm %s frame\n",
			 fr->cpu, p, id->devarch, unit == AMUPMU_FRAME_AMU ? "AMU" : "PMUv3");
	if (!id->iidr) {
		/* 0 is no JEP106 code: not implemented, or access denied */
		dev_warn(fr->dev, "cpu%u: %sIIDR reads 0\n", fr->cpu, p);
		return;
	}
	/* unimplemented PIDRs read 0: then there is nothing to compare */
	if (!(id->pidr[1] & AMUPMU_PIDR1_DES_0) && !(id->pidr[2] & AMUPMU_PIDR2_JEDEC))
		return;
	want = amupmu_frame_pidr_iidr(id);
	if (id->iidr != want)
		dev_warn(fr->dev, "cpu%u: %sIIDR 0x%08x disagrees with %sPIDR0-4, which give 0x%08x\n",
			 fr->cpu, p, id->iidr, p, want);
}

/*
 * Read @fr's frames on its CPU into the CPU's entry, each frame once.
 * Called with amupmu_frames_lock held, with the CPU online and hotplug
 * excluded (cpus_read_lock(), or the CPU's own online callback).
 * Return: 1 when frames were read into the entry, 0 when there was none
 * to read (read before, or a unit the CPU lacks); -EAGAIN when discovery
 * has not written the entry yet (its online callback calls back), another
 * error when the read could not be done.
 */
static int amupmu_frames_read(struct amupmu_frames *fr)
{
	struct amupmu_cpu_info *c = &amupmu_dev.cpus[fr->cpu];
	struct amupmu_frames_read r = { .fr = fr };
	unsigned int unit;
	int ret = 0;

	mutex_lock(&amupmu_dev.lock);
	if (!(c->flags & AMUPMU_CPU_DISCOVERED)) {
		ret = -EAGAIN;
	} else {
		for (unit = 0; unit < AMUPMU_NR_FRAME_UNITS; unit++)
			if (fr->base[unit] && !(c->flags & amupmu_frame_flag[unit]))
				r.units |= BIT(unit);
		/* a unit the CPU does not implement has no frame to read */
		if ((r.units & BIT(AMUPMU_FRAME_AMU)) && !c->amu_version) {
			dev_warn(fr->dev, "cpu%u has no AMU (ID_AA64PFR0_EL1.AMU 0): AMU frame not read\n",
				 fr->cpu);
			r.units &= ~BIT(AMUPMU_FRAME_AMU);
		}
		if ((r.units & BIT(AMUPMU_FRAME_PMU)) && !(c->flags & AMUPMU_CPU_PMU)) {
			dev_warn(fr->dev, "cpu%u has no PMUv3: PMU frame not read\n", fr->cpu);
			r.units &= ~BIT(AMUPMU_FRAME_PMU);
		}
	}
	mutex_unlock(&amupmu_dev.lock);
	if (ret || !r.units)
		return ret;

	ret = pm_runtime_resume_and_get(fr->dev);
	if (ret) {
		dev_err(fr->dev, "cpu%u: cannot power the frames up: %d\n", fr->cpu, ret);
		return ret;
	}
	ret = smp_call_function_single(fr->cpu, amupmu_frames_read_this_cpu, &r, 1);
	pm_runtime_put(fr->dev);
	if (ret) {
		dev_err(fr->dev, "cpu%u: cannot read the frames: %d\n", fr->cpu, ret);
		return ret;
	}

	mutex_lock(&amupmu_dev.lock);
	for (unit = 0; unit < AMUPMU_NR_FRAME_UNITS; unit++) {
		if (!(r.units & BIT(unit)))
			continue;
		*amupmu_frame_of(c, unit) = r.id[unit];
		c->flags |= amupmu_frame_flag[unit];
	}
	mutex_unlock(&amupmu_dev.lock);

	for (unit = 0; unit < AMUPMU_NR_FRAME_UNITS; unit++)
		if (r.units & BIT(unit))
			amupmu_frame_report(fr, unit, &r.id[unit]);
	return 1;
}

/**
 * amupmu_frames_cpu_online() - read the frames of a CPU that was offline
 * @cpu: the CPU coming online; called on it from discovery's online
 *	callback, after discovery has written its entry and before sysfs
 *	adds the files of a newly discovered CPU (struct amupmu_unit_ops)
 * @ci: its entry
 */
static void amupmu_frames_cpu_online(unsigned int cpu, const struct amupmu_cpu_info *ci)
{
	struct amupmu_frames *fr;
	bool announce = false;
	int ret;

	mutex_lock(&amupmu_frames_lock);
	fr = per_cpu(amupmu_frames_of_cpu, cpu);
	if (fr && fr->pending) {
		ret = amupmu_frames_read(fr);
		if (ret >= 0)
			fr->pending = false;
		announce = ret > 0 && fr->announce;
	}
	mutex_unlock(&amupmu_frames_lock);
	if (announce)
		amupmu_sysfs_cpu_discovered(cpu);
}

const struct amupmu_unit_ops amupmu_frames_unit = {
	.cpu_online = amupmu_frames_cpu_online,
};

static bool amupmu_cpu_discovered(unsigned int cpu)
{
	bool ret;

	mutex_lock(&amupmu_dev.lock);
	ret = amupmu_dev.cpus[cpu].flags & AMUPMU_CPU_DISCOVERED;
	mutex_unlock(&amupmu_dev.lock);
	return ret;
}

/* Map each reg entry by its reg-names entry, "amu" or "pmu". */
static int amupmu_frames_map(struct platform_device *pdev, struct amupmu_frames *fr)
{
	struct device *dev = &pdev->dev;
	unsigned int i, nmem = 0;
	struct resource *res;
	const char *name;
	int n, unit;

	for (i = 0; i < pdev->num_resources; i++)
		if (resource_type(&pdev->resource[i]) == IORESOURCE_MEM)
			nmem++;
	n = of_property_count_strings(dev->of_node, "reg-names");
	if (n < 1 || n > AMUPMU_NR_FRAME_UNITS || n != nmem) {
		dev_err(dev, "needs one reg-names entry (\"amu\" or \"pmu\") per reg entry, 1 or 2 (%d names, %u reg)\n",
			n, nmem);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (of_property_read_string_index(dev->of_node, "reg-names", i, &name))
			return -EINVAL;
		unit = match_string(amupmu_frame_reg_names, AMUPMU_NR_FRAME_UNITS, name);
		if (unit < 0 || fr->base[unit]) {
			dev_err(dev, "reg-names \"%s\": not \"amu\" or \"pmu\", or twice\n", name);
			return -EINVAL;
		}
		res = platform_get_resource(pdev, IORESOURCE_MEM, i);
		if (!res || resource_size(res) < AMUPMU_FRAME_SIZE) {
			dev_err(dev, "%s frame %pR: a frame is 4 KiB\n", name, res);
			return -EINVAL;
		}
		fr->base[unit] = devm_ioremap_resource(dev, res);
		if (IS_ERR(fr->base[unit]))
			return PTR_ERR(fr->base[unit]);
	}
	return 0;
}

static int amupmu_frames_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct amupmu_frames *fr, **slot;
	struct device_node *cpu_np;
	bool announce = false;
	int cpu, ret;

	fr = devm_kzalloc(dev, sizeof(*fr), GFP_KERNEL);
	if (!fr)
		return -ENOMEM;
	fr->dev = dev;

	cpu_np = of_parse_phandle(dev->of_node, "cpu", 0);
	if (!cpu_np) {
		dev_err(dev, "no cpu property (a phandle of the CPU's node)\n");
		return -EINVAL;
	}
	cpu = of_cpu_node_to_id(cpu_np);
	if (cpu < 0) {
		/* a CPU node of a CPU this boot does not use (nr_cpus=) */
		ret = of_node_is_type(cpu_np, "cpu") ? -ENODEV : -EINVAL;
		if (ret == -ENODEV)
			dev_info(dev, "%pOF is not a possible CPU of this boot\n", cpu_np);
		else
			dev_err(dev, "cpu %pOF is not a CPU node\n", cpu_np);
		of_node_put(cpu_np);
		return ret;
	}
	of_node_put(cpu_np);
	fr->cpu = cpu;

	ret = amupmu_frames_map(pdev, fr);
	if (ret)
		return ret;
	/* the frames' power domain (power-domains), if any, is up only for reads */
	ret = devm_pm_runtime_enable(dev);
	if (ret)
		return ret;
	platform_set_drvdata(pdev, fr);

	cpus_read_lock();
	mutex_lock(&amupmu_frames_lock);
	slot = per_cpu_ptr(&amupmu_frames_of_cpu, cpu);
	if (*slot) {
		dev_err(dev, "cpu%d has frames in %pOF already\n", cpu, (*slot)->dev->of_node);
		ret = -EINVAL;
	} else {
		*slot = fr;
		ret = cpu_online(cpu) ? amupmu_frames_read(fr) : -EAGAIN;
		if (ret < 0) {
			fr->pending = true;
			fr->announce = amupmu_cpu_discovered(cpu);
		}
		announce = ret > 0;
		ret = 0;
	}
	mutex_unlock(&amupmu_frames_lock);
	/* under cpus_read_lock(), as amupmu_sysfs_cpu_discovered() wants */
	if (announce)
		amupmu_sysfs_cpu_discovered(cpu);
	cpus_read_unlock();
	return ret;
}

static void amupmu_frames_remove_device(struct platform_device *pdev)
{
	struct amupmu_frames *fr = platform_get_drvdata(pdev);

	/* what was read stays in the CPU's entry; the mapping goes (devm) */
	mutex_lock(&amupmu_frames_lock);
	per_cpu(amupmu_frames_of_cpu, fr->cpu) = NULL;
	mutex_unlock(&amupmu_frames_lock);
}

AMUPMU_DEFINE_PLATFORM_REMOVE(amupmu_frames_remove, amupmu_frames_remove_device)

static const struct of_device_id amupmu_frames_of_match[] = {
	{ .compatible = "amupmu,cpu-frames" },
	{ }
};
MODULE_DEVICE_TABLE(of, amupmu_frames_of_match);

static struct platform_driver amupmu_frames_driver = {
	.probe = amupmu_frames_probe,
	.remove = amupmu_frames_remove,
	.driver = {
		.name = "amupmu-frames",
		.of_match_table = amupmu_frames_of_match,
		/* read during load, before /dev/amupmu and sysfs appear */
		.probe_type = PROBE_FORCE_SYNCHRONOUS,
	},
};

/* after amupmu_discovery_start(), so the online CPUs are discovered */
int amupmu_frames_init(void)
{
	return platform_driver_register(&amupmu_frames_driver);
}

/*
 * Unbinds every node; the per-CPU slots are empty afterwards, so discovery's
 * online callback may still run amupmu_frames_cpu_online().
 */
void amupmu_frames_exit(void)
{
	platform_driver_unregister(&amupmu_frames_driver);
}
