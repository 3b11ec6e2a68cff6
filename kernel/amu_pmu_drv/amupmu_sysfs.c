// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: sysfs, under the misc device (/sys/class/misc/amupmu/).
 * Documented in Documentation/ABI/testing/sysfs-class-misc-amupmu.
 *
 *   abi_version features pmu_owner backend
 *   cpuN/{online,discovered,midr_el1,...,amcfgr_el0,amu_group0_events,...,
 *	   amiidr,ampidr,...,pmiidr,...}
 *
 * cpuN/ are named attribute groups of the misc device, so they exist when
 * its uevent goes out. online and discovered are always there; a register
 * file appears when the CPU has been discovered and has the unit the
 * register belongs to, and stays (files are only ever added, never removed
 * or re-created, so open files keep working).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/device.h>
#include <linux/cpu.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/sysfs.h>

#include "amupmu.h"
#include "amupmu_amu.h"
#include "amupmu_pmu.h"

/* ------------------------------------------------------------ top level */

static ssize_t abi_version_show(struct device *dev, struct device_attribute *attr,
				char *buf)
{
	return sysfs_emit(buf, "%u.%u\n", AMUPMU_ABI_MAJOR, AMUPMU_ABI_MINOR);
}
static DEVICE_ATTR_RO(abi_version);

static const char * const amupmu_feature_names[] = {
	"pmu", "pmu_exclusive", "amu", "spe", "mock", "pmu_shared",
};

static_assert(ARRAY_SIZE(amupmu_feature_names) == ilog2(AMUPMU_FEAT_PMU_SHARED) + 1);

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
 * enum amupmu_field_kind - how a cpuN/ file shows its field
 * @AMUPMU_FIELD_U32: a u32 in decimal
 * @AMUPMU_FIELD_U64: a 64-bit register, 0x%016llx
 * @AMUPMU_FIELD_HEX32: @count u32 registers, 0x%08x each, space-separated
 * @AMUPMU_FIELD_FLAG: a flag of amupmu_cpu_info.flags as 0/1, always visible
 * @AMUPMU_FIELD_VIEW: the exclusive-mode counter view (amupmu_show_pmu_view())
 * @AMUPMU_FIELD_EVTYPES0: the group 0 AMU event types, 0x%04x each
 * @AMUPMU_FIELD_EVTYPES1: the group 1 AMU event types, 0x%04x each
 */
enum amupmu_field_kind {
	AMUPMU_FIELD_U32,
	AMUPMU_FIELD_U64,
	AMUPMU_FIELD_HEX32,
	AMUPMU_FIELD_FLAG,
	AMUPMU_FIELD_VIEW,
	AMUPMU_FIELD_EVTYPES0,
	AMUPMU_FIELD_EVTYPES1,
};

/**
 * struct amupmu_cpu_field - one file of cpuN/: a field of amupmu_cpu_info
 * @name: file name
 * @offset: offsetof() the field in struct amupmu_cpu_info
 * @kind: enum amupmu_field_kind
 * @count: registers shown by an AMUPMU_FIELD_HEX32 file
 * @need: flags the CPU must all have for the file to exist (for a flag
 *	file: the flag it shows)
 */
struct amupmu_cpu_field {
	const char *name;
	size_t offset;
	enum amupmu_field_kind kind;
	unsigned int count;
	u32 need;
};

#define AMUPMU_FLAG_FIELD(_name, _flag) \
	{ .name = _name, .kind = AMUPMU_FIELD_FLAG, .need = (_flag) }

#define AMUPMU_REG_FIELD(_name, _member, _need) {				\
	.name = _name,								\
	.offset = offsetof(struct amupmu_cpu_info, _member),			\
	.kind = sizeof_field(struct amupmu_cpu_info, _member) == sizeof(u64) ?	\
		AMUPMU_FIELD_U64 : AMUPMU_FIELD_U32,				\
	.need = AMUPMU_CPU_DISCOVERED | (_need),				\
}

#define AMUPMU_HEX_FIELD(_name, _member, _count, _need) {			\
	.name = _name,								\
	.offset = offsetof(struct amupmu_cpu_info, _member),			\
	.kind = AMUPMU_FIELD_HEX32,						\
	.count = (_count),							\
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
	AMUPMU_REG_FIELD("amcr_el0", amcr, AMUPMU_CPU_AMU),
	AMUPMU_HEX_FIELD("amcntenset0_el0", amcntenset0, 1, AMUPMU_CPU_AMU),
	AMUPMU_HEX_FIELD("amcntenset1_el0", amcntenset1, 1, AMUPMU_CPU_AMU),
	{ .name = "amu_group0_events", .kind = AMUPMU_FIELD_EVTYPES0,
	  .offset = offsetof(struct amupmu_cpu_info, amevtyper0),
	  .need = AMUPMU_CPU_DISCOVERED | AMUPMU_CPU_AMU },
	{ .name = "amu_group1_events", .kind = AMUPMU_FIELD_EVTYPES1,
	  .offset = offsetof(struct amupmu_cpu_info, amevtyper1),
	  .need = AMUPMU_CPU_DISCOVERED | AMUPMU_CPU_AMU },
	AMUPMU_FLAG_FIELD("amu_off", AMUPMU_CPU_AMU_OFF),
	AMUPMU_FLAG_FIELD("amu_zero", AMUPMU_CPU_AMU_ZERO),
	AMUPMU_HEX_FIELD("amiidr", amu_frame.iidr, 1, AMUPMU_CPU_AMU_FRAME),
	AMUPMU_HEX_FIELD("amdevarch", amu_frame.devarch, 1, AMUPMU_CPU_AMU_FRAME),
	AMUPMU_HEX_FIELD("amdevid", amu_frame.devid, 1, AMUPMU_CPU_AMU_FRAME),
	AMUPMU_HEX_FIELD("amdevtype", amu_frame.devtype, 1, AMUPMU_CPU_AMU_FRAME),
	AMUPMU_HEX_FIELD("ampidr", amu_frame.pidr, 5, AMUPMU_CPU_AMU_FRAME),
	AMUPMU_HEX_FIELD("amcidr", amu_frame.cidr, 4, AMUPMU_CPU_AMU_FRAME),
	AMUPMU_HEX_FIELD("pmiidr", pmu_frame.iidr, 1, AMUPMU_CPU_PMU_FRAME),
	AMUPMU_HEX_FIELD("pmdevarch", pmu_frame.devarch, 1, AMUPMU_CPU_PMU_FRAME),
	AMUPMU_HEX_FIELD("pmdevid", pmu_frame.devid, 1, AMUPMU_CPU_PMU_FRAME),
	AMUPMU_HEX_FIELD("pmdevtype", pmu_frame.devtype, 1, AMUPMU_CPU_PMU_FRAME),
	AMUPMU_HEX_FIELD("pmpidr", pmu_frame.pidr, 5, AMUPMU_CPU_PMU_FRAME),
	AMUPMU_HEX_FIELD("pmcidr", pmu_frame.cidr, 4, AMUPMU_CPU_PMU_FRAME),
	AMUPMU_REG_FIELD("spe_version", spe_version, AMUPMU_CPU_SPE),
	AMUPMU_REG_FIELD("pmsidr_el1", pmsidr, AMUPMU_CPU_SPE),
	{ .name = "pmu_counters_view", .kind = AMUPMU_FIELD_VIEW,
	  .need = AMUPMU_CPU_DISCOVERED | AMUPMU_CPU_PMU },
};

#define AMUPMU_NR_CPU_FIELDS	ARRAY_SIZE(amupmu_cpu_fields)

/**
 * struct amupmu_cpu_attr - a cpuN/ file: the field and its CPU
 * @dattr: the device attribute
 * @field: what it shows
 * @cpu: of which CPU
 * @present: the file exists (created visible, or added since); under
 *	amupmu_sysfs_lock
 */
struct amupmu_cpu_attr {
	struct device_attribute dattr;
	const struct amupmu_cpu_field *field;
	unsigned int cpu;
	bool present;
};

/* orders the adding of files (hotplug callbacks, frame probes) */
static DEFINE_MUTEX(amupmu_sysfs_lock);

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

/* The AMU event types of a group, as many as the CPU has counters. */
static ssize_t amupmu_show_evtypes(const struct amupmu_cpu_info *ci, bool group1, char *buf)
{
	const u16 *types = group1 ? ci->amevtyper1 : ci->amevtyper0;
	unsigned int i, n = amupmu_amu_nr_counters(ci, group1);
	int len = 0;

	for (i = 0; i < n; i++)
		len += sysfs_emit_at(buf, len, "%s0x%04x", i ? " " : "", types[i]);
	return len + sysfs_emit_at(buf, len, "\n");
}

/**
 * amupmu_show_pmu_view() - cpuN/pmu_counters_view: the CPU's allocated counters
 * @cpu: the CPU
 * @buf: sysfs page
 *
 * One line per allocated counter: "<n> type=0x<PMEVTYPER> total=<u64>
 * overflows=<u64>", n 0..30 event counters, 31 the cycle counter; the
 * totals are read on the CPU when it is online. Empty when amupmu does not
 * own the PMU or nothing is allocated. Live counters of CAP_PERFMON
 * sessions: the reader needs CAP_PERFMON too (else EACCES).
 */
static ssize_t amupmu_show_pmu_view(unsigned int cpu, char *buf)
{
	struct amupmu_pmu_counter_view cnt[AMUPMU_PMU_MAX_EVENTS];
	unsigned long used;
	unsigned int idx;
	int len = 0;

	if (!perfmon_capable())
		return -EACCES;
	used = amupmu_pmu_cpu_counters(cpu, cnt);
	for_each_set_bit(idx, &used, AMUPMU_PMU_MAX_EVENTS)
		len += sysfs_emit_at(buf, len, "%u type=0x%08x total=%llu overflows=%llu\n",
				     idx, cnt[idx].evtyper, cnt[idx].total, cnt[idx].overflows);
	return len;
}

static ssize_t amupmu_cpu_attr_show(struct device *dev, struct device_attribute *attr,
				    char *buf)
{
	struct amupmu_cpu_attr *ca = to_amupmu_cpu_attr(attr);
	const struct amupmu_cpu_field *f = ca->field;
	struct amupmu_cpu_info ci;
	const void *val;
	unsigned int i;
	int len = 0;

	if (f->kind == AMUPMU_FIELD_VIEW)
		return amupmu_show_pmu_view(ca->cpu, buf);
	amupmu_cpu_snapshot(ca->cpu, &ci);
	if (f->kind == AMUPMU_FIELD_FLAG)
		return sysfs_emit(buf, "%d\n", !!(ci.flags & f->need));
	if ((ci.flags & f->need) != f->need)	/* not reached: the file exists */
		return -ENODEV;
	val = (const u8 *)&ci + f->offset;
	switch (f->kind) {
	case AMUPMU_FIELD_U64:
		return sysfs_emit(buf, "0x%016llx\n", *(const u64 *)val);
	case AMUPMU_FIELD_HEX32:
		for (i = 0; i < f->count; i++)
			len += sysfs_emit_at(buf, len, "%s0x%08x", i ? " " : "",
					     ((const u32 *)val)[i]);
		return len + sysfs_emit_at(buf, len, "\n");
	case AMUPMU_FIELD_EVTYPES0:
	case AMUPMU_FIELD_EVTYPES1:
		return amupmu_show_evtypes(&ci, f->kind == AMUPMU_FIELD_EVTYPES1, buf);
	default:
		return sysfs_emit(buf, "%u\n", *(const u32 *)val);
	}
}

static bool amupmu_cpu_attr_shown(const struct amupmu_cpu_attr *ca)
{
	struct amupmu_cpu_info ci;

	if (ca->field->kind == AMUPMU_FIELD_FLAG)
		return true;
	if (ca->field->kind == AMUPMU_FIELD_VIEW && !amupmu_dev.exclusive)
		return false;
	amupmu_cpu_snapshot(ca->cpu, &ci);
	return (ci.flags & ca->field->need) == ca->field->need;
}

static umode_t amupmu_cpu_attr_visible(struct kobject *kobj, struct attribute *attr, int n)
{
	struct device_attribute *da = container_of(attr, struct device_attribute, attr);
	struct amupmu_cpu_attr *ca = to_amupmu_cpu_attr(da);
	bool shown = amupmu_cpu_attr_shown(ca);

	mutex_lock(&amupmu_sysfs_lock);
	ca->present = shown;
	mutex_unlock(&amupmu_sysfs_lock);
	return shown ? attr->mode : 0;
}

/**
 * amupmu_sysfs_cpu_discovered() - add the files a CPU now has
 * @cpu: a CPU discovery has just read, or whose frames were just read
 *
 * Adds each file that should exist and does not yet; may be called again.
 * Called from the hotplug callback, under the hotplug lock, or with
 * cpus_read_lock() held, which orders it against misc_register() and
 * misc_deregister() (done under cpus_read_lock()): before registration
 * the group's is_visible() shows the files itself.
 */
void amupmu_sysfs_cpu_discovered(unsigned int cpu)
{
	struct amupmu_cpu_sysfs *cs = &amupmu_cpu_sysfs[cpu];
	struct kobject *kobj;
	struct amupmu_cpu_attr *ca;
	unsigned int i;

	if (!amupmu_dev.sysfs_live)
		return;
	kobj = &amupmu_dev.misc.this_device->kobj;
	mutex_lock(&amupmu_sysfs_lock);
	for (i = 0; i < AMUPMU_NR_CPU_FIELDS; i++) {
		ca = &cs->cattrs[i];
		if (ca->present || !amupmu_cpu_attr_shown(ca))
			continue;
		if (sysfs_add_file_to_group(kobj, &ca->dattr.attr, cs->name))
			pr_warn("cpu%u: cannot add sysfs file %s\n", cpu, ca->field->name);
		else
			ca->present = true;
	}
	mutex_unlock(&amupmu_sysfs_lock);
}

/* A CPU's first online: the files discovery just made possible. */
static void amupmu_sysfs_cpu_changed(unsigned int cpu, bool online, bool first)
{
	if (first)
		amupmu_sysfs_cpu_discovered(cpu);
}

const struct amupmu_unit_ops amupmu_sysfs_unit = {
	.cpu_changed = amupmu_sysfs_cpu_changed,
};

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
			ca->dattr.attr.mode = ca->field->kind == AMUPMU_FIELD_VIEW ? 0400 : 0444;
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
