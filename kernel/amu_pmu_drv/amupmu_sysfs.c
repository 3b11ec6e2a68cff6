// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: sysfs, under the misc device (/sys/class/misc/amupmu/).
 * Documented in Documentation/ABI/testing/sysfs-class-misc-amupmu.
 *
 *   abi_version features pmu_owner backend
 *   cpuN/{online,discovered,midr_el1,...}
 *
 * A register file is visible only when the CPU has been discovered and has
 * the unit the register belongs to.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/sysfs.h>

#include "amupmu.h"

/* ------------------------------------------------------------ top level */

static ssize_t abi_version_show(struct device *dev, struct device_attribute *attr,
				char *buf)
{
	return sysfs_emit(buf, "%u.%u\n", AMUPMU_ABI_MAJOR, AMUPMU_ABI_MINOR);
}
static DEVICE_ATTR_RO(abi_version);

static const char * const amupmu_feature_names[] = {
	"pmu", "pmu_exclusive", "amu", "spe", "mock",
};

static ssize_t features_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	u64 feat = amupmu_features();
	const char *sep = "";
	int len = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(amupmu_feature_names); i++) {
		if (!(feat & BIT_ULL(i)))
			continue;
		len += sysfs_emit_at(buf, len, "%s%s", sep, amupmu_feature_names[i]);
		sep = " ";
	}
	return len + sysfs_emit_at(buf, len, "\n");
}
static DEVICE_ATTR_RO(features);

const char *amupmu_owner_name(u32 owner)
{
	switch (owner) {
	case AMUPMU_PMU_OWNER_KERNEL:
		return "kernel";
	case AMUPMU_PMU_OWNER_AMUPMU:
		return "amupmu";
	default:
		return "none";
	}
}

static ssize_t pmu_owner_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%s\n", amupmu_owner_name(amupmu_pmu_owner()));
}
static DEVICE_ATTR_RO(pmu_owner);

static ssize_t backend_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", amupmu_dev.backend->name);
}
static DEVICE_ATTR_RO(backend);

static struct attribute *amupmu_dev_attrs[] = {
	&dev_attr_abi_version.attr,
	&dev_attr_features.attr,
	&dev_attr_pmu_owner.attr,
	&dev_attr_backend.attr,
	NULL,
};

static const struct attribute_group amupmu_dev_group = {
	.attrs = amupmu_dev_attrs,
};

const struct attribute_group *amupmu_dev_groups[] = {
	&amupmu_dev_group,
	NULL,
};

/* ------------------------------------------------------------ cpuN/ */

/**
 * struct amupmu_cpu_kobj - the cpuN directory
 * @kobj: the directory
 * @cpu: its CPU number
 */
struct amupmu_cpu_kobj {
	struct kobject kobj;
	unsigned int cpu;
};

#define to_amupmu_cpu_kobj(k) container_of(k, struct amupmu_cpu_kobj, kobj)

/**
 * struct amupmu_cpu_attr - one file of cpuN/: a field of amupmu_cpu_info
 * @attr: the sysfs attribute
 * @offset: offsetof() the field in struct amupmu_cpu_info
 * @is_u64: the field is a 64-bit register, shown as 0x%016llx; else decimal
 * @need: flags the CPU's entry must all have for the file to exist
 */
struct amupmu_cpu_attr {
	struct attribute attr;
	size_t offset;
	bool is_u64;
	u32 need;
};

#define to_amupmu_cpu_attr(a) container_of(a, struct amupmu_cpu_attr, attr)

#define AMUPMU_CPU_ATTR(_name, _field, _need)				\
static struct amupmu_cpu_attr amupmu_cpu_attr_##_name = {		\
	.attr = { .name = __stringify(_name), .mode = 0444 },		\
	.offset = offsetof(struct amupmu_cpu_info, _field),		\
	.is_u64 = sizeof_field(struct amupmu_cpu_info, _field) == 8,	\
	.need = (_need),						\
}

#define DISC	AMUPMU_CPU_DISCOVERED
AMUPMU_CPU_ATTR(midr_el1, midr, DISC);
AMUPMU_CPU_ATTR(revidr_el1, revidr, DISC);
AMUPMU_CPU_ATTR(id_aa64dfr0_el1, id_aa64dfr0, DISC);
AMUPMU_CPU_ATTR(id_aa64pfr0_el1, id_aa64pfr0, DISC);
AMUPMU_CPU_ATTR(pmu_version, pmu_version, DISC | AMUPMU_CPU_PMU);
AMUPMU_CPU_ATTR(pmu_counters, pmu_num_counters, DISC | AMUPMU_CPU_PMU);
AMUPMU_CPU_ATTR(pmcr_el0, pmcr, DISC | AMUPMU_CPU_PMU);
AMUPMU_CPU_ATTR(pmceid0_el0, pmceid0, DISC | AMUPMU_CPU_PMU);
AMUPMU_CPU_ATTR(pmceid1_el0, pmceid1, DISC | AMUPMU_CPU_PMU);
AMUPMU_CPU_ATTR(pmmir_el1, pmmir, DISC | AMUPMU_CPU_PMMIR);
AMUPMU_CPU_ATTR(amu_version, amu_version, DISC | AMUPMU_CPU_AMU);
AMUPMU_CPU_ATTR(amcfgr_el0, amcfgr, DISC | AMUPMU_CPU_AMU);
AMUPMU_CPU_ATTR(amcgcr_el0, amcgcr, DISC | AMUPMU_CPU_AMU);
AMUPMU_CPU_ATTR(spe_version, spe_version, DISC | AMUPMU_CPU_SPE);
AMUPMU_CPU_ATTR(pmsidr_el1, pmsidr, DISC | AMUPMU_CPU_SPE);
#undef DISC

/* online and discovered are flags, shown as 0/1 */
static struct amupmu_cpu_attr amupmu_cpu_attr_online = {
	.attr = { .name = "online", .mode = 0444 },
	.need = AMUPMU_CPU_ONLINE,
};

static struct amupmu_cpu_attr amupmu_cpu_attr_discovered = {
	.attr = { .name = "discovered", .mode = 0444 },
	.need = AMUPMU_CPU_DISCOVERED,
};

static bool amupmu_cpu_attr_is_flag(const struct amupmu_cpu_attr *ca)
{
	return ca == &amupmu_cpu_attr_online || ca == &amupmu_cpu_attr_discovered;
}

static struct attribute *amupmu_cpu_attrs[] = {
	&amupmu_cpu_attr_online.attr,
	&amupmu_cpu_attr_discovered.attr,
	&amupmu_cpu_attr_midr_el1.attr,
	&amupmu_cpu_attr_revidr_el1.attr,
	&amupmu_cpu_attr_id_aa64dfr0_el1.attr,
	&amupmu_cpu_attr_id_aa64pfr0_el1.attr,
	&amupmu_cpu_attr_pmu_version.attr,
	&amupmu_cpu_attr_pmu_counters.attr,
	&amupmu_cpu_attr_pmcr_el0.attr,
	&amupmu_cpu_attr_pmceid0_el0.attr,
	&amupmu_cpu_attr_pmceid1_el0.attr,
	&amupmu_cpu_attr_pmmir_el1.attr,
	&amupmu_cpu_attr_amu_version.attr,
	&amupmu_cpu_attr_amcfgr_el0.attr,
	&amupmu_cpu_attr_amcgcr_el0.attr,
	&amupmu_cpu_attr_spe_version.attr,
	&amupmu_cpu_attr_pmsidr_el1.attr,
	NULL,
};

static umode_t amupmu_cpu_attr_visible(struct kobject *kobj, struct attribute *attr,
				       int n)
{
	struct amupmu_cpu_attr *ca = to_amupmu_cpu_attr(attr);
	struct amupmu_cpu_info ci;

	if (amupmu_cpu_attr_is_flag(ca))
		return attr->mode;
	amupmu_cpu_snapshot(to_amupmu_cpu_kobj(kobj)->cpu, &ci);
	return (ci.flags & ca->need) == ca->need ? attr->mode : 0;
}

static const struct attribute_group amupmu_cpu_group = {
	.attrs = amupmu_cpu_attrs,
	.is_visible = amupmu_cpu_attr_visible,
};

static ssize_t amupmu_cpu_attr_show(struct kobject *kobj, struct attribute *attr,
				    char *buf)
{
	struct amupmu_cpu_attr *ca = to_amupmu_cpu_attr(attr);
	struct amupmu_cpu_info ci;
	const void *field;

	amupmu_cpu_snapshot(to_amupmu_cpu_kobj(kobj)->cpu, &ci);
	if (amupmu_cpu_attr_is_flag(ca))
		return sysfs_emit(buf, "%d\n", !!(ci.flags & ca->need));
	/* the CPU state cannot regress: discovered stays set once set */
	if ((ci.flags & ca->need) != ca->need)
		return -ENODEV;
	field = (const u8 *)&ci + ca->offset;
	if (ca->is_u64)
		return sysfs_emit(buf, "0x%016llx\n", *(const u64 *)field);
	return sysfs_emit(buf, "%u\n", *(const u32 *)field);
}

static const struct sysfs_ops amupmu_cpu_sysfs_ops = {
	.show = amupmu_cpu_attr_show,
};

static void amupmu_cpu_kobj_release(struct kobject *kobj)
{
	kfree(to_amupmu_cpu_kobj(kobj));
}

static const struct kobj_type amupmu_cpu_ktype = {
	.release = amupmu_cpu_kobj_release,
	.sysfs_ops = &amupmu_cpu_sysfs_ops,
};

/**
 * amupmu_sysfs_update_cpu() - re-evaluate which files cpuN/ shows
 * @cpu: a CPU that has just been discovered
 */
void amupmu_sysfs_update_cpu(unsigned int cpu)
{
	struct kobject *kobj = amupmu_dev.cpus[cpu].kobj;

	if (kobj && sysfs_update_group(kobj, &amupmu_cpu_group))
		pr_warn("cpu%u: cannot update sysfs\n", cpu);
}

int amupmu_sysfs_add_cpus(void)
{
	struct kobject *parent = &amupmu_dev.misc.this_device->kobj;
	struct amupmu_cpu_kobj *ck;
	unsigned int cpu;
	int ret;

	for_each_possible_cpu(cpu) {
		ck = kzalloc(sizeof(*ck), GFP_KERNEL);
		if (!ck) {
			ret = -ENOMEM;
			goto err;
		}
		ck->cpu = cpu;
		ret = kobject_init_and_add(&ck->kobj, &amupmu_cpu_ktype, parent, "cpu%u", cpu);
		if (!ret)
			ret = sysfs_create_group(&ck->kobj, &amupmu_cpu_group);
		if (ret) {
			kobject_put(&ck->kobj);
			goto err;
		}
		amupmu_dev.cpus[cpu].kobj = &ck->kobj;
	}
	return 0;

err:
	amupmu_sysfs_del_cpus();
	return ret;
}

void amupmu_sysfs_del_cpus(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		if (!amupmu_dev.cpus[cpu].kobj)
			continue;
		sysfs_remove_group(amupmu_dev.cpus[cpu].kobj, &amupmu_cpu_group);
		kobject_put(amupmu_dev.cpus[cpu].kobj);
		amupmu_dev.cpus[cpu].kobj = NULL;
	}
}
