// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: sysfs, under the misc device (/sys/class/misc/amupmu/).
 * Documented in Documentation/ABI/testing/sysfs-class-misc-amupmu.
 *
 *   abi_version features pmu_owner backend
 *   cpuN/{online,discovered,midr_el1,...}
 *
 * cpuN/ are named attribute groups of the misc device, so they exist when
 * its uevent goes out. online and discovered are always there; a register
 * file appears when the CPU has been discovered and has the unit the
 * register belongs to, and stays (files are only ever added, never removed
 * or re-created, so open files keep working).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/cpu.h>
#include <linux/log2.h>
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

static_assert(ARRAY_SIZE(amupmu_feature_names) == ilog2(AMUPMU_FEAT_MOCK) + 1);

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
	return sysfs_emit(buf, "%s\n", amupmu_owner_name(amupmu_pmu_owner(amupmu_features())));
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

/* ------------------------------------------------------------ cpuN/ */

/**
 * struct amupmu_cpu_field - one file of cpuN/: a field of amupmu_cpu_info
 * @name: file name
 * @offset: offsetof() the field in struct amupmu_cpu_info
 * @is_u64: a 64-bit register, shown as 0x%016llx; else a u32 in decimal
 * @is_flag: a flag of amupmu_cpu_info.flags shown as 0/1, always visible
 * @is_view: the exclusive-mode counter view (amupmu_pmu_cpu_view())
 * @need: flags the CPU must all have for the file to exist (for a flag
 *	file: the flag it shows)
 */
struct amupmu_cpu_field {
	const char *name;
	size_t offset;
	bool is_u64;
	bool is_flag;
	bool is_view;
	u32 need;
};

#define AMUPMU_FLAG_FIELD(_name, _flag) { .name = _name, .is_flag = true, .need = (_flag) }
#define AMUPMU_REG_FIELD(_name, _member, _need) {				\
	.name = _name,								\
	.offset = offsetof(struct amupmu_cpu_info, _member),			\
	.is_u64 = sizeof_field(struct amupmu_cpu_info, _member) == sizeof(u64),	\
	.need = AMUPMU_CPU_DISCOVERED | (_need),				\
}

static const struct amupmu_cpu_field amupmu_cpu_fields[] = {
	AMUPMU_FLAG_FIELD("online", AMUPMU_CPU_ONLINE),
	AMUPMU_FLAG_FIELD("discovered", AMUPMU_CPU_DISCOVERED),
	AMUPMU_REG_FIELD("midr_el1", midr, 0),
	AMUPMU_REG_FIELD("revidr_el1", revidr, 0),
	AMUPMU_REG_FIELD("id_aa64dfr0_el1", id_aa64dfr0, 0),
	AMUPMU_REG_FIELD("id_aa64pfr0_el1", id_aa64pfr0, 0),
	AMUPMU_REG_FIELD("pmu_version", pmu_version, AMUPMU_CPU_PMU),
	AMUPMU_REG_FIELD("pmu_counters", pmu_num_counters, AMUPMU_CPU_PMU),
	AMUPMU_REG_FIELD("pmcr_el0", pmcr, AMUPMU_CPU_PMU),
	AMUPMU_REG_FIELD("pmceid0_el0", pmceid0, AMUPMU_CPU_PMU),
	AMUPMU_REG_FIELD("pmceid1_el0", pmceid1, AMUPMU_CPU_PMU),
	AMUPMU_REG_FIELD("pmmir_el1", pmmir, AMUPMU_CPU_PMMIR),
	AMUPMU_REG_FIELD("amu_version", amu_version, AMUPMU_CPU_AMU),
	AMUPMU_REG_FIELD("amcfgr_el0", amcfgr, AMUPMU_CPU_AMU),
	AMUPMU_REG_FIELD("amcgcr_el0", amcgcr, AMUPMU_CPU_AMU),
	AMUPMU_REG_FIELD("spe_version", spe_version, AMUPMU_CPU_SPE),
	AMUPMU_REG_FIELD("pmsidr_el1", pmsidr, AMUPMU_CPU_SPE),
	{ .name = "pmu_counters_view", .is_view = true,
	  .need = AMUPMU_CPU_DISCOVERED | AMUPMU_CPU_PMU },
};

#define AMUPMU_NR_CPU_FIELDS	ARRAY_SIZE(amupmu_cpu_fields)

/**
 * struct amupmu_cpu_attr - a cpuN/ file: the field and its CPU
 * @dattr: the device attribute
 * @field: what it shows
 * @cpu: of which CPU
 */
struct amupmu_cpu_attr {
	struct device_attribute dattr;
	const struct amupmu_cpu_field *field;
	unsigned int cpu;
};

#define to_amupmu_cpu_attr(a) container_of(a, struct amupmu_cpu_attr, dattr)

/**
 * struct amupmu_cpu_sysfs - the cpuN/ group of one possible CPU
 * @group: named attribute group of the misc device
 * @name: "cpuN"
 * @attrs: NULL-terminated pointers into @cattrs
 * @cattrs: one per amupmu_cpu_fields entry
 */
struct amupmu_cpu_sysfs {
	struct attribute_group group;
	char name[16];
	struct attribute *attrs[AMUPMU_NR_CPU_FIELDS + 1];
	struct amupmu_cpu_attr cattrs[AMUPMU_NR_CPU_FIELDS];
};

/* Allocated by amupmu_sysfs_init(), freed by amupmu_sysfs_exit(). */
static struct amupmu_cpu_sysfs *amupmu_cpu_sysfs;	/* nr_cpu_ids entries */
static const struct attribute_group **amupmu_groups;	/* misc.groups */

static ssize_t amupmu_cpu_attr_show(struct device *dev, struct device_attribute *attr,
				    char *buf)
{
	struct amupmu_cpu_attr *ca = to_amupmu_cpu_attr(attr);
	const struct amupmu_cpu_field *f = ca->field;
	struct amupmu_cpu_info ci;
	const void *val;

	if (f->is_view)
		return amupmu_pmu_cpu_view(ca->cpu, buf);
	amupmu_cpu_snapshot(ca->cpu, &ci);
	if (f->is_flag)
		return sysfs_emit(buf, "%d\n", !!(ci.flags & f->need));
	if ((ci.flags & f->need) != f->need)	/* not reached: the file exists */
		return -ENODEV;
	val = (const u8 *)&ci + f->offset;
	if (f->is_u64)
		return sysfs_emit(buf, "0x%016llx\n", *(const u64 *)val);
	return sysfs_emit(buf, "%u\n", *(const u32 *)val);
}

static bool amupmu_cpu_attr_shown(const struct amupmu_cpu_attr *ca)
{
	struct amupmu_cpu_info ci;

	if (ca->field->is_flag)
		return true;
	if (ca->field->is_view && !amupmu_dev.exclusive)
		return false;
	amupmu_cpu_snapshot(ca->cpu, &ci);
	return (ci.flags & ca->field->need) == ca->field->need;
}

static umode_t amupmu_cpu_attr_visible(struct kobject *kobj, struct attribute *attr, int n)
{
	struct device_attribute *da = container_of(attr, struct device_attribute, attr);

	return amupmu_cpu_attr_shown(to_amupmu_cpu_attr(da)) ? attr->mode : 0;
}

/**
 * amupmu_sysfs_cpu_discovered() - add the register files of a CPU
 * @cpu: a CPU discovery has just read
 *
 * Called from the hotplug callback, under the hotplug lock, which orders it
 * against misc_register()/misc_deregister() (done under cpus_read_lock()):
 * before registration the group's is_visible() shows the files itself.
 */
void amupmu_sysfs_cpu_discovered(unsigned int cpu)
{
	struct amupmu_cpu_sysfs *cs = &amupmu_cpu_sysfs[cpu];
	struct kobject *kobj = &amupmu_dev.misc.this_device->kobj;
	unsigned int i;

	if (!amupmu_dev.sysfs_live)
		return;
	for (i = 0; i < AMUPMU_NR_CPU_FIELDS; i++) {
		if (cs->cattrs[i].field->is_flag || !amupmu_cpu_attr_shown(&cs->cattrs[i]))
			continue;
		if (sysfs_add_file_to_group(kobj, &cs->cattrs[i].dattr.attr, cs->name))
			pr_warn("cpu%u: cannot add sysfs file %s\n", cpu,
				cs->cattrs[i].field->name);
	}
}

/**
 * amupmu_sysfs_init() - build the misc device's attribute groups
 *
 * Return: 0, or -ENOMEM. Sets amupmu_dev.misc.groups.
 */
int amupmu_sysfs_init(void)
{
	struct amupmu_cpu_sysfs *cs;
	struct amupmu_cpu_attr *ca;
	unsigned int cpu, i, g = 0;

	amupmu_cpu_sysfs = kcalloc(nr_cpu_ids, sizeof(*amupmu_cpu_sysfs), GFP_KERNEL);
	amupmu_groups = kcalloc(num_possible_cpus() + 2, sizeof(*amupmu_groups), GFP_KERNEL);
	if (!amupmu_cpu_sysfs || !amupmu_groups) {
		amupmu_sysfs_exit();
		return -ENOMEM;
	}
	amupmu_groups[g++] = &amupmu_dev_group;
	for_each_possible_cpu(cpu) {
		cs = &amupmu_cpu_sysfs[cpu];
		snprintf(cs->name, sizeof(cs->name), "cpu%u", cpu);
		for (i = 0; i < AMUPMU_NR_CPU_FIELDS; i++) {
			ca = &cs->cattrs[i];
			ca->field = &amupmu_cpu_fields[i];
			ca->cpu = cpu;
			sysfs_attr_init(&ca->dattr.attr);
			ca->dattr.attr.name = ca->field->name;
			/* live counters of CAP_PERFMON sessions: root reads, and checks it again */
			ca->dattr.attr.mode = ca->field->is_view ? 0400 : 0444;
			ca->dattr.show = amupmu_cpu_attr_show;
			cs->attrs[i] = &ca->dattr.attr;
		}
		cs->group.name = cs->name;
		cs->group.attrs = cs->attrs;
		cs->group.is_visible = amupmu_cpu_attr_visible;
		amupmu_groups[g++] = &cs->group;
	}
	amupmu_dev.misc.groups = amupmu_groups;
	return 0;
}

void amupmu_sysfs_exit(void)
{
	amupmu_dev.misc.groups = NULL;
	kfree(amupmu_groups);
	amupmu_groups = NULL;
	kfree(amupmu_cpu_sysfs);
	amupmu_cpu_sysfs = NULL;
}
