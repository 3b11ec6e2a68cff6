// SPDX-License-Identifier: GPL-2.0
/*
 * What amupmu reports per CPU (AMUPMU_INFO entries and the sysfs tree under
 * /sys/class/misc/amupmu) against what the rest of the system says about
 * the same CPUs: cpu hotplug state, the kernel's identification registers
 * in sysfs and /proc/cpuinfo, the ID registers as EL0 sees them through the
 * kernel's MRS emulation (HWCAP_CPUID), the devicetree (who owns the PMU)
 * and the events arm_pmu shows. Table driven, in the manner of
 * tools/testing/selftests/arm64/abi/hwcap.c.
 *
 * Backends: the PMU and the ID registers are always read from the CPU (QEMU
 * on the test board); with AMUPMU_FEAT_MOCK the AMU and SPE registers come
 * from the driver's mock register model, and the decode checks of the mock
 * test run as well.
 */
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#ifdef __aarch64__
#include <sys/auxv.h>
#include <asm/hwcap.h>
#endif

#include "amupmu_test.h"

#define ENTRY_SZ	sizeof(struct amupmu_cpu_info)
#define CAP_FLAGS	(AMUPMU_CPU_PMU | AMUPMU_CPU_PMCEID_EXT | AMUPMU_CPU_PMMIR | \
			 AMUPMU_CPU_AMU | AMUPMU_CPU_SPE)
/* Overridable (-D) to point the tests at a fake tree. */
#ifndef EVENT_SOURCE
#define EVENT_SOURCE	"/sys/bus/event_source/devices"
#endif
#ifndef DT_ROOT
#define DT_ROOT		"/proc/device-tree"
#endif

FIXTURE(caps) {
	int fd;
	struct amupmu_info info;
	struct amupmu_cpu_info *cpus;
	unsigned int nr;		/* nr_cpu_ids */
	struct amupmu_cpumask *possible;
};

FIXTURE_SETUP(caps)
{
	self->fd = -1;
	self->possible = calloc(1, sizeof(*self->possible));
	ASSERT_NE(NULL, self->possible);
	ASSERT_EQ(0, amupmu_possible_cpus(self->possible));
	self->nr = self->possible->nr;
	ASSERT_LT(0U, self->nr);

	AMUPMU_OPEN_DEVICE(self->fd);

	self->cpus = calloc(self->nr, ENTRY_SZ);
	ASSERT_NE(NULL, self->cpus);
	ASSERT_EQ(0, amupmu_query(self->fd, &self->info, self->cpus, self->nr));
	ASSERT_EQ(self->nr, self->info.nr_cpus);
}

FIXTURE_TEARDOWN(caps)
{
	free(self->cpus);
	free(self->possible);
	if (self->fd >= 0)
		close(self->fd);
}

static bool is_discovered(const struct amupmu_cpu_info *e)
{
	return e->flags & AMUPMU_CPU_DISCOVERED;
}

/* @e itself or the next discovered entry after it; the end if none. */
static const struct amupmu_cpu_info *
next_discovered(const FIXTURE_DATA(caps) *self, const struct amupmu_cpu_info *e)
{
	while (e < self->cpus + self->nr && !is_discovered(e))
		e++;
	return e;
}

#define for_each_entry(self, e)							\
	for (e = (self)->cpus; e < (self)->cpus + (self)->nr; e++)

#define for_each_discovered(self, e)						\
	for (e = next_discovered(self, (self)->cpus);				\
	     e < (self)->cpus + (self)->nr; e = next_discovered(self, e + 1))

/* ---------------------------------------------------------------- tables */

/* Capability flags as the driver must derive them from the raw ID fields. */
static bool cap_pmu(const struct amupmu_cpu_info *e)
{
	return amupmu_pmuver_has_pmu(DFR0_PMUVER(e->id_aa64dfr0));
}

static bool cap_pmceid_ext(const struct amupmu_cpu_info *e)
{
	return cap_pmu(e) && DFR0_PMUVER(e->id_aa64dfr0) >= PMUVER_V3P1;
}

static bool cap_pmmir(const struct amupmu_cpu_info *e)
{
	return cap_pmu(e) && DFR0_PMUVER(e->id_aa64dfr0) >= PMUVER_V3P4;
}

/* ABI 2.1: an AMU that amupmu does not use (amu=0, ...) is AMU_OFF instead */
static bool cap_amu(const struct amupmu_cpu_info *e)
{
	return PFR0_AMU(e->id_aa64pfr0) >= 1 && !(e->flags & AMUPMU_CPU_AMU_OFF);
}

static bool cap_spe(const struct amupmu_cpu_info *e)
{
	return DFR0_PMSVER(e->id_aa64dfr0) >= 1;
}

static const struct cap_rule {
	const char *name;
	__u32 flag;
	bool (*expected)(const struct amupmu_cpu_info *e);
} cap_rules[] = {
	{ "PMU",	AMUPMU_CPU_PMU,		cap_pmu },
	{ "PMCEID_EXT",	AMUPMU_CPU_PMCEID_EXT,	cap_pmceid_ext },
	{ "PMMIR",	AMUPMU_CPU_PMMIR,	cap_pmmir },
	{ "AMU",	AMUPMU_CPU_AMU,		cap_amu },
	{ "SPE",	AMUPMU_CPU_SPE,		cap_spe },
};

/*
 * /proc/cpuinfo "Features" words that follow from one ID_AA64PFR0_EL1 field:
 * listed iff field >= min. FP and AdvSIMD are signed fields, 0xF (-1) is
 * "not implemented". one_way: the kernel may switch the feature off
 * (arm64.nosve), so only "listed => the CPU has it" holds.
 */
static const struct cpuinfo_feature {
	const char *word;
	unsigned int shift;
	bool is_signed;
	int min;
	bool one_way;
} cpuinfo_features[] = {
	{ "fp",		PFR0_FP_SHIFT,		true,	0, false },
	{ "fphp",	PFR0_FP_SHIFT,		true,	1, false },
	{ "asimd",	PFR0_ADVSIMD_SHIFT,	true,	0, false },
	{ "asimdhp",	PFR0_ADVSIMD_SHIFT,	true,	1, false },
	{ "sve",	PFR0_SVE_SHIFT,		false,	1, true },
	{ "dit",	PFR0_DIT_SHIFT,		false,	1, false },
};

static bool cpuinfo_feature_present(const struct cpuinfo_feature *f, __u64 pfr0)
{
	int v = (int)amupmu_field(pfr0, f->shift, 4);

	if (f->is_signed && v >= 8)
		v -= 16;
	return v >= f->min;
}

/* /proc/cpuinfo identification lines and the MIDR_EL1 field each shows. */
static const struct cpuinfo_midr {
	const char *key;
	unsigned int shift, width;
} cpuinfo_midr[] = {
	{ "CPU implementer",	24, 8 },
	{ "CPU variant",	20, 4 },
	{ "CPU part",		4, 12 },
	{ "CPU revision",	0, 4 },
};

/* Files of /sys/class/misc/amupmu/cpuN/ and the entry field each shows. */
enum cpu_file_fmt {
	FMT_FLAG,	/* "0\n" / "1\n" of flags & @flag, always present */
	FMT_DEC32,	/* "%u\n", present iff flags has @flag */
	FMT_HEX64,	/* "0x%016llx\n", present iff flags has @flag */
};

#define DEC32(n, f, need) { n, FMT_DEC32, offsetof(struct amupmu_cpu_info, f), need }
#define HEX64(n, f, need) { n, FMT_HEX64, offsetof(struct amupmu_cpu_info, f), need }

static const struct cpu_file {
	const char *name;
	enum cpu_file_fmt fmt;
	size_t offset;
	__u32 flag;
} cpu_files[] = {
	{ "online",	FMT_FLAG, 0, AMUPMU_CPU_ONLINE },
	{ "discovered",	FMT_FLAG, 0, AMUPMU_CPU_DISCOVERED },
	HEX64("midr_el1",	 midr,		 AMUPMU_CPU_DISCOVERED),
	HEX64("revidr_el1",	 revidr,	 AMUPMU_CPU_DISCOVERED),
	HEX64("id_aa64dfr0_el1", id_aa64dfr0,	 AMUPMU_CPU_DISCOVERED),
	HEX64("id_aa64pfr0_el1", id_aa64pfr0,	 AMUPMU_CPU_DISCOVERED),
	DEC32("pmu_version",	 pmu_version,	 AMUPMU_CPU_PMU),
	DEC32("pmu_counters",	 pmu_num_counters, AMUPMU_CPU_PMU),
	HEX64("pmcr_el0",	 pmcr,		 AMUPMU_CPU_PMU),
	HEX64("pmceid0_el0",	 pmceid0,	 AMUPMU_CPU_PMU),
	HEX64("pmceid1_el0",	 pmceid1,	 AMUPMU_CPU_PMU),
	HEX64("pmmir_el1",	 pmmir,		 AMUPMU_CPU_PMMIR),
	DEC32("amu_version",	 amu_version,	 AMUPMU_CPU_AMU),
	HEX64("amcfgr_el0",	 amcfgr,	 AMUPMU_CPU_AMU),
	HEX64("amcgcr_el0",	 amcgcr,	 AMUPMU_CPU_AMU),
	DEC32("spe_version",	 spe_version,	 AMUPMU_CPU_SPE),
	HEX64("pmsidr_el1",	 pmsidr,	 AMUPMU_CPU_SPE),
};

static const char *const feature_names[] = {
	"pmu", "pmu_exclusive", "amu", "spe", "mock", "pmu_shared",	/* bit 0, 1, ... */
};

static const char *const owner_names[] = {
	[AMUPMU_PMU_OWNER_NONE] = "none",
	[AMUPMU_PMU_OWNER_KERNEL] = "kernel",
	[AMUPMU_PMU_OWNER_AMUPMU] = "amupmu",
};

/* ---------------------------------------------------------------- helpers */

/* Expected text of a cpuN file for entry @e, without the newline. */
static void cpu_file_expected(const struct cpu_file *f,
			      const struct amupmu_cpu_info *e,
			      char *buf, size_t size)
{
	const unsigned char *base = (const unsigned char *)e + f->offset;
	__u64 v64;
	__u32 v32;

	switch (f->fmt) {
	case FMT_FLAG:
		snprintf(buf, size, "%d", !!(e->flags & f->flag));
		break;
	case FMT_DEC32:
		memcpy(&v32, base, sizeof(v32));
		snprintf(buf, size, "%u", v32);
		break;
	case FMT_HEX64:
		memcpy(&v64, base, sizeof(v64));
		snprintf(buf, size, "0x%016llx", (unsigned long long)v64);
		break;
	}
}

static bool cpu_file_present(const struct cpu_file *f,
			     const struct amupmu_cpu_info *e)
{
	return f->fmt == FMT_FLAG || (e->flags & f->flag) == f->flag;
}

/* Read all of /proc/cpuinfo (size unknown in advance). NULL on failure. */
static char *read_cpuinfo(void)
{
	size_t size = 16384;
	char *buf = NULL;
	ssize_t len;

	for (;;) {
		free(buf);
		buf = malloc(size);
		if (!buf)
			return NULL;
		len = amupmu_read_file("/proc/cpuinfo", buf, size);
		if (len < 0) {
			free(buf);
			return NULL;
		}
		if ((size_t)len < size - 1)
			return buf;
		size *= 2;
	}
}

/*
 * The value of line "@key : value" in the "processor : @cpu" block of
 * @cpuinfo, copied to @val. Returns 0 or -ENOENT.
 */
static int cpuinfo_value(const char *cpuinfo, unsigned int cpu, const char *key,
			 char *val, size_t size)
{
	char head[32];
	const char *blk, *end, *line, *next;
	size_t klen = strlen(key), n;

	snprintf(head, sizeof(head), "processor\t: %u\n", cpu);
	blk = strstr(cpuinfo, head);
	if (!blk)
		return -ENOENT;
	end = strstr(blk, "\n\n");
	if (!end)
		end = blk + strlen(blk);
	for (line = blk; line < end; line = next) {
		const char *p, *nl = strchr(line, '\n');

		next = nl ? nl + 1 : end;
		if (strncmp(line, key, klen))
			continue;
		p = line + klen;
		p += strspn(p, " \t");
		if (*p != ':')
			continue;
		p++;
		p += strspn(p, " \t");
		n = strcspn(p, "\n");
		if (n >= size)
			n = size - 1;
		memcpy(val, p, n);
		val[n] = '\0';
		return 0;
	}
	return -ENOENT;
}

/* Is @word one of the space-separated words of @list? */
static bool has_word(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		if ((p == list || p[-1] == ' ') && (p[len] == ' ' || !p[len]))
			return true;
		p += len;
	}
	return false;
}

/* A devicetree node is enabled when it has no status or "okay"/"ok". */
static bool dt_node_enabled(const char *compatible_path)
{
	char dir[PATH_MAX], path[PATH_MAX + 8], status[32];

	snprintf(dir, sizeof(dir), "%s", compatible_path);
	snprintf(path, sizeof(path), "%s/status", dirname(dir));
	if (amupmu_read_file(path, status, sizeof(status)) < 0)
		return true;	/* no status property */
	return !strcmp(status, "okay") || !strcmp(status, "ok");
}

/*
 * Is there an enabled node whose compatible list holds @compat, within two
 * levels below the devicetree root?
 */
static bool dt_has_enabled(const char *compat)
{
	static const char *const patterns[] = {
		DT_ROOT "/*/compatible", DT_ROOT "/*/*/compatible",
	};
	bool found = false;
	char buf[1024];
	size_t i, j;
	glob_t g;

	for (i = 0; i < ARRAY_SIZE(patterns) && !found; i++) {
		if (glob(patterns[i], 0, NULL, &g))
			continue;
		for (j = 0; j < g.gl_pathc && !found; j++) {
			ssize_t len = amupmu_read_file(g.gl_pathv[j], buf, sizeof(buf));
			ssize_t off;

			/* a NUL-separated string list */
			for (off = 0; len > 0 && off < len; off += strlen(buf + off) + 1) {
				if (!strcmp(buf + off, compat) &&
				    dt_node_enabled(g.gl_pathv[j])) {
					found = true;
					break;
				}
			}
		}
		globfree(&g);
	}
	return found;
}

/* Map a PMUv3 common event number to its PMCEID bit. false if out of range. */
static bool pmceid_bit(const struct amupmu_cpu_info *e, __u64 event, bool *set)
{
	__u64 reg, bit;

	if (event >= 0x4000 && event < 0x4040) {
		bit = 32 + (event & 0x1f);
		event -= 0x4000;
	} else if (event < 0x40) {
		bit = event & 0x1f;
	} else {
		return false;
	}
	reg = event < 0x20 ? e->pmceid0 : e->pmceid1;
	*set = (reg >> bit) & 1;
	return true;
}

/* Parse an arm_pmu event file: "event=0xNNNN". */
static int parse_event_file(const char *path, __u64 *event)
{
	char buf[64];
	int ret = amupmu_read_line(path, buf, sizeof(buf));

	if (ret)
		return ret;
	if (strncmp(buf, "event=", 6))
		return -EINVAL;
	buf[6 + strcspn(buf + 6, ",")] = '\0';
	return amupmu_parse_u64(buf + 6, event);
}

/*
 * Say which backend the results come from. Flushed: a harness test child
 * ends with _exit(), which would drop a buffered stdout.
 */
static void print_backend(const struct amupmu_info *info)
{
	if (info->features & AMUPMU_FEAT_MOCK)
		ksft_print_msg("backend: mock AMU/SPE, PMU in %s\n", amupmu_pmu_mode_name(info));
	else
		ksft_print_msg("backend: QEMU PMU in %s, hardware ID registers\n",
			       amupmu_pmu_mode_name(info));
	fflush(stdout);
}

/* ---------------------------------------------------------------- tests */

TEST_F(caps, backend)
{
	char buf[64];

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	print_backend(&self->info);
	ASSERT_EQ(0, amupmu_read_line(AMUPMU_SYSFS "/backend", buf, sizeof(buf)));
	EXPECT_STREQ(self->info.features & AMUPMU_FEAT_MOCK ? "mock" : "hardware", buf);
}

TEST_F(caps, cpu_state_flags)
{
	const struct amupmu_cpu_info *e;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	for_each_entry(self, e) {
		unsigned int cpu = e - self->cpus;
		bool possible = self->possible->cpu[cpu];
		int online = possible ? amupmu_cpu_online(cpu) : 0;

		EXPECT_EQ(cpu, e->cpu);
		EXPECT_EQ(possible, !!(e->flags & AMUPMU_CPU_POSSIBLE)) {
			TH_LOG("cpu%u: POSSIBLE flag vs cpu_possible_mask", cpu);
		}
		ASSERT_LE(0, online);
		EXPECT_EQ(online, !!(e->flags & AMUPMU_CPU_ONLINE)) {
			TH_LOG("cpu%u: ONLINE flag vs sysfs online %d", cpu, online);
		}
		if (online) {
			EXPECT_TRUE(is_discovered(e)) {
				TH_LOG("cpu%u: online but not DISCOVERED", cpu);
			}
		}
		if (e->flags & AMUPMU_CPU_MOCK) {
			EXPECT_TRUE(!!(self->info.features & AMUPMU_FEAT_MOCK));
		}
		if (is_discovered(e))
			continue;
		/* never online since load: no capability, register fields 0 */
		EXPECT_EQ(0U, e->flags & (CAP_FLAGS | AMUPMU_CPU_MOCK));
		EXPECT_TRUE(!e->midr && !e->revidr && !e->id_aa64dfr0 &&
			    !e->id_aa64pfr0 && !e->pmcr && !e->pmceid0 &&
			    !e->pmceid1 && !e->pmmir && !e->amcfgr &&
			    !e->amcgcr && !e->pmsidr && !e->pmu_version &&
			    !e->pmu_num_counters && !e->amu_version &&
			    !e->spe_version) {
			TH_LOG("cpu%u: undiscovered CPU with non-zero registers", cpu);
		}
	}
}

TEST_F(caps, midr_revidr_match_sysfs)
{
	static const struct {
		const char *file;
		size_t offset;
	} regs[] = {
		{ "midr_el1", offsetof(struct amupmu_cpu_info, midr) },
		{ "revidr_el1", offsetof(struct amupmu_cpu_info, revidr) },
	};
	const struct amupmu_cpu_info *e;
	char path[128];
	size_t i;
	__u64 v, want;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	for_each_entry(self, e) {
		if (!(e->flags & AMUPMU_CPU_ONLINE))
			continue;
		for (i = 0; i < ARRAY_SIZE(regs); i++) {
			snprintf(path, sizeof(path),
				 AMUPMU_CPU_SYSFS "/cpu%u/regs/identification/%s",
				 e->cpu, regs[i].file);
			ASSERT_EQ(0, amupmu_read_u64(path, &v)) {
				TH_LOG("cannot read %s", path);
			}
			memcpy(&want, (const unsigned char *)e + regs[i].offset, sizeof(want));
			EXPECT_EQ(v, want) {
				TH_LOG("cpu%u %s: kernel 0x%llx, amupmu 0x%llx", e->cpu,
				       regs[i].file, (unsigned long long)v,
				       (unsigned long long)want);
			}
		}
	}
}

TEST_F(caps, midr_match_cpuinfo)
{
	const struct amupmu_cpu_info *e;
	char *cpuinfo, val[64];
	__u64 v;
	size_t i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	cpuinfo = read_cpuinfo();
	ASSERT_NE(NULL, cpuinfo);
	for_each_entry(self, e) {
		if (!(e->flags & AMUPMU_CPU_ONLINE))
			continue;
		for (i = 0; i < ARRAY_SIZE(cpuinfo_midr); i++) {
			const struct cpuinfo_midr *m = &cpuinfo_midr[i];

			ASSERT_EQ(0, cpuinfo_value(cpuinfo, e->cpu, m->key, val, sizeof(val))) {
				TH_LOG("cpu%u: no \"%s\" in /proc/cpuinfo", e->cpu, m->key);
			}
			ASSERT_EQ(0, amupmu_parse_u64(val, &v));
			EXPECT_EQ(v, amupmu_field(e->midr, m->shift, m->width)) {
				TH_LOG("cpu%u %s: cpuinfo %s, MIDR 0x%llx", e->cpu,
				       m->key, val, (unsigned long long)e->midr);
			}
		}
		/* arm64 prints "8"; the MIDR says "see the ID registers" */
		ASSERT_EQ(0, cpuinfo_value(cpuinfo, e->cpu, "CPU architecture",
					   val, sizeof(val)));
		EXPECT_STREQ("8", val);
		EXPECT_EQ((__u64)MIDR_ARCH_BY_ID_REGS, MIDR_ARCHITECTURE(e->midr));
	}
	free(cpuinfo);
}

#ifdef __aarch64__
/*
 * The 16 fields of ID_AA64PFR0_EL1 and ID_AA64DFR0_EL1; el0 marks the ones
 * the kernel's MRS emulation shows to EL0 (FTR_VISIBLE in cpufeature.c,
 * Documentation/arch/arm64/cpu-feature-registers.rst). Hidden fields read
 * as the kernel's fixed "safe" value, which says nothing about the CPU.
 */
enum id_reg { ID_PFR0, ID_DFR0 };

static const struct id_field {
	enum id_reg reg;
	const char *name;
	unsigned int shift;
	bool el0;
} id_fields[] = {
	{ ID_PFR0, "EL0", 0, false },		{ ID_PFR0, "EL1", 4, false },
	{ ID_PFR0, "EL2", 8, false },		{ ID_PFR0, "EL3", 12, false },
	{ ID_PFR0, "FP", 16, true },		{ ID_PFR0, "AdvSIMD", 20, true },
	{ ID_PFR0, "GIC", 24, false },		{ ID_PFR0, "RAS", 28, false },
	{ ID_PFR0, "SVE", 32, true },		{ ID_PFR0, "SEL2", 36, false },
	{ ID_PFR0, "MPAM", 40, false },		{ ID_PFR0, "AMU", 44, false },
	{ ID_PFR0, "DIT", 48, true },		{ ID_PFR0, "RME", 52, false },
	{ ID_PFR0, "CSV2", 56, false },		{ ID_PFR0, "CSV3", 60, false },
	{ ID_DFR0, "DebugVer", 0, false },	{ ID_DFR0, "TraceVer", 4, false },
	{ ID_DFR0, "PMUVer", 8, false },	{ ID_DFR0, "BRPs", 12, false },
	{ ID_DFR0, "PMSS", 16, false },		{ ID_DFR0, "WRPs", 20, false },
	{ ID_DFR0, "SEBEP", 24, false },	{ ID_DFR0, "CTX_CMPs", 28, false },
	{ ID_DFR0, "PMSVer", 32, false },	{ ID_DFR0, "DoubleLock", 36, false },
	{ ID_DFR0, "TraceFilt", 40, false },	{ ID_DFR0, "TraceBuffer", 44, false },
	{ ID_DFR0, "MTPMU", 48, false },	{ ID_DFR0, "BRBE", 52, false },
	{ ID_DFR0, "ExtTrcBuff", 56, false },	{ ID_DFR0, "HPMN0", 60, false },
};

static __u64 id_reg_of(const struct amupmu_cpu_info *e, enum id_reg reg)
{
	return reg == ID_PFR0 ? e->id_aa64pfr0 : e->id_aa64dfr0;
}

static __u64 el0_id_aa64pfr0(void)
{
	__u64 v;

	asm volatile("mrs %0, ID_AA64PFR0_EL1" : "=r" (v));
	return v;
}

static __u64 el0_id_aa64dfr0(void)
{
	__u64 v;

	asm volatile("mrs %0, ID_AA64DFR0_EL1" : "=r" (v));
	return v;
}
#endif /* __aarch64__ */

TEST_F(caps, id_regs_match_el0_view)
{
#ifdef __aarch64__
	const struct amupmu_cpu_info *e;
	__u64 el0[2];
	unsigned int checked = 0;
	size_t i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	if (!(getauxval(AT_HWCAP) & HWCAP_CPUID))
		SKIP(return, "no HWCAP_CPUID: the kernel does not emulate MRS at EL0");
	el0[ID_PFR0] = el0_id_aa64pfr0();
	el0[ID_DFR0] = el0_id_aa64dfr0();
	TH_LOG("EL0 view: ID_AA64PFR0_EL1 0x%016llx ID_AA64DFR0_EL1 0x%016llx",
	       (unsigned long long)el0[ID_PFR0], (unsigned long long)el0[ID_DFR0]);

	for (i = 0; i < ARRAY_SIZE(id_fields); i++) {
		const struct id_field *f = &id_fields[i];
		__u64 want = amupmu_field(el0[f->reg], f->shift, 4);

		if (!f->el0 || !want)
			continue;
		checked++;
		for_each_discovered(self, e) {
			EXPECT_EQ(want, amupmu_field(id_reg_of(e, f->reg), f->shift, 4)) {
				TH_LOG("cpu%u %s.%s: EL0 view %llu, amupmu raw %llu",
				       e->cpu, f->reg == ID_PFR0 ? "PFR0" : "DFR0",
				       f->name, (unsigned long long)want,
				       (unsigned long long)amupmu_field(id_reg_of(e, f->reg),
									f->shift, 4));
			}
		}
	}
	TH_LOG("%u EL0-visible non-zero fields compared", checked);
#else
	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	SKIP(return, "MRS emulation check needs arm64");
#endif
}

TEST_F(caps, pfr0_matches_cpuinfo_features)
{
	const struct amupmu_cpu_info *e;
	char *cpuinfo, features[4096];
	size_t i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	cpuinfo = read_cpuinfo();
	ASSERT_NE(NULL, cpuinfo);
	for_each_discovered(self, e) {
		if (!(e->flags & AMUPMU_CPU_ONLINE))
			continue;
		ASSERT_EQ(0, cpuinfo_value(cpuinfo, e->cpu, "Features", features,
					   sizeof(features)));
		for (i = 0; i < ARRAY_SIZE(cpuinfo_features); i++) {
			const struct cpuinfo_feature *f = &cpuinfo_features[i];
			bool listed = has_word(features, f->word);
			bool has = cpuinfo_feature_present(f, e->id_aa64pfr0);

			if (f->one_way && !listed)
				continue;
			EXPECT_EQ(listed, has) {
				TH_LOG("cpu%u \"%s\": cpuinfo %s, ID_AA64PFR0 0x%016llx says %s",
				       e->cpu, f->word, listed ? "lists it" : "does not",
				       (unsigned long long)e->id_aa64pfr0,
				       has ? "present" : "absent");
			}
		}
	}
	free(cpuinfo);
}

TEST_F(caps, unit_flags_match_id_regs)
{
	const struct amupmu_cpu_info *e;
	size_t i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	for_each_discovered(self, e) {
		for (i = 0; i < ARRAY_SIZE(cap_rules); i++) {
			const struct cap_rule *r = &cap_rules[i];

			EXPECT_EQ(r->expected(e), !!(e->flags & r->flag)) {
				TH_LOG("cpu%u flag %s vs DFR0 0x%016llx PFR0 0x%016llx",
				       e->cpu, r->name,
				       (unsigned long long)e->id_aa64dfr0,
				       (unsigned long long)e->id_aa64pfr0);
			}
		}
		EXPECT_EQ(PMCR_N(e->pmcr), e->pmu_num_counters);
		EXPECT_GE((__u32)PMCR_N_MAX, e->pmu_num_counters);
		if (e->flags & AMUPMU_CPU_PMU) {
			EXPECT_EQ(DFR0_PMUVER(e->id_aa64dfr0), e->pmu_version);
		}
		if (e->flags & (AMUPMU_CPU_AMU | AMUPMU_CPU_AMU_OFF)) {
			EXPECT_EQ(PFR0_AMU(e->id_aa64pfr0), e->amu_version);
		}
		/* AMU_OFF: the CPU implements an AMU that amupmu leaves alone */
		if (e->flags & AMUPMU_CPU_AMU_OFF) {
			EXPECT_LE(1ULL, PFR0_AMU(e->id_aa64pfr0)) {
				TH_LOG("cpu%u: AMU_OFF but ID_AA64PFR0_EL1 0x%llx has no AMU",
				       e->cpu, (unsigned long long)e->id_aa64pfr0);
			}
		}
		if (e->flags & AMUPMU_CPU_SPE) {
			EXPECT_EQ(DFR0_PMSVER(e->id_aa64dfr0), e->spe_version);
		}
	}
}

TEST_F(caps, features_summarise_cpus)
{
	static const struct {
		const char *name;
		__u64 feature;
		__u32 cpu_flag;
	} map[] = {
		{ "pmu", AMUPMU_FEAT_PMU, AMUPMU_CPU_PMU },
		{ "amu", AMUPMU_FEAT_AMU, AMUPMU_CPU_AMU },
		{ "spe", AMUPMU_FEAT_SPE, AMUPMU_CPU_SPE },
	};
	const struct amupmu_cpu_info *e;
	__u32 any = 0;
	size_t i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	for_each_discovered(self, e)
		any |= e->flags;
	for (i = 0; i < ARRAY_SIZE(map); i++) {
		EXPECT_EQ(!!(any & map[i].cpu_flag), !!(self->info.features & map[i].feature)) {
			TH_LOG("feature %s vs the flags of the discovered CPUs",
			       map[i].name);
		}
	}
	EXPECT_EQ(self->info.pmu_owner != AMUPMU_PMU_OWNER_NONE,
		  !!(self->info.features & AMUPMU_FEAT_PMU));
}

TEST_F(caps, sysfs_cpu_files)
{
	const struct amupmu_cpu_info *e;
	char path[128], want[64], got[64];
	size_t i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	for_each_entry(self, e) {
		snprintf(path, sizeof(path), AMUPMU_SYSFS "/cpu%u", e->cpu);
		EXPECT_EQ(!!(e->flags & AMUPMU_CPU_POSSIBLE), amupmu_path_exists(path)) {
			TH_LOG("%s present only for possible CPUs", path);
		}
		if (!(e->flags & AMUPMU_CPU_POSSIBLE))
			continue;
		for (i = 0; i < ARRAY_SIZE(cpu_files); i++) {
			const struct cpu_file *f = &cpu_files[i];
			bool present = cpu_file_present(f, e);
			ssize_t len;

			snprintf(path, sizeof(path), AMUPMU_SYSFS "/cpu%u/%s",
				 e->cpu, f->name);
			len = amupmu_read_file(path, got, sizeof(got));
			EXPECT_EQ(present, len >= 0) {
				TH_LOG("%s: should be %s (flags 0x%x)", path,
				       present ? "present" : "absent", e->flags);
			}
			if (!present || len < 0)
				continue;
			EXPECT_TRUE(len > 0 && got[len - 1] == '\n') {
				TH_LOG("%s: no trailing newline", path);
			}
			if (len > 0 && got[len - 1] == '\n')
				got[len - 1] = '\0';
			cpu_file_expected(f, e, want, sizeof(want));
			EXPECT_STREQ(want, got) {
				TH_LOG("%s differs from AMUPMU_INFO", path);
			}
		}
	}
	snprintf(path, sizeof(path), AMUPMU_SYSFS "/cpu%u", self->nr);
	EXPECT_FALSE(amupmu_path_exists(path));
}

TEST_F(caps, sysfs_top_level)
{
	char buf[256], want[32], *tok, *save;
	__u64 mask = 0;
	size_t i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	ASSERT_EQ(0, amupmu_read_line(AMUPMU_SYSFS "/abi_version", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%u.%u", self->info.abi_major, self->info.abi_minor);
	EXPECT_STREQ(want, buf);

	ASSERT_GT(ARRAY_SIZE(owner_names), self->info.pmu_owner);
	ASSERT_EQ(0, amupmu_read_line(AMUPMU_SYSFS "/pmu_owner", buf, sizeof(buf)));
	EXPECT_STREQ(owner_names[self->info.pmu_owner], buf);

	ASSERT_EQ(0, amupmu_read_line(AMUPMU_SYSFS "/features", buf, sizeof(buf)));
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		for (i = 0; i < ARRAY_SIZE(feature_names); i++)
			if (!strcmp(tok, feature_names[i]))
				break;
		EXPECT_GT(ARRAY_SIZE(feature_names), i) {
			TH_LOG("unknown feature \"%s\" in %s/features", tok, AMUPMU_SYSFS);
		}
		if (i < ARRAY_SIZE(feature_names))
			mask |= 1ULL << i;
	}
	EXPECT_EQ(self->info.features, mask);
}

TEST_F(caps, pmu_owner_matches_devicetree)
{
	bool amupmu_node = dt_has_enabled("amupmu,pmuv3");
	bool armpmu_node = dt_has_enabled("arm,armv8-pmuv3");
	bool exclusive = self->info.features & AMUPMU_FEAT_PMU_EXCLUSIVE;
	__u32 want;
	glob_t g;
	bool arm_pmu;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	arm_pmu = !glob(EVENT_SOURCE "/armv8_pmuv3*", 0, NULL, &g);
	if (arm_pmu)
		globfree(&g);

	if (amupmu_node)
		want = AMUPMU_PMU_OWNER_AMUPMU;
	else if (self->info.features & AMUPMU_FEAT_PMU)
		want = AMUPMU_PMU_OWNER_KERNEL;
	else
		want = AMUPMU_PMU_OWNER_NONE;
	TH_LOG("devicetree: amupmu,pmuv3 %s, arm,armv8-pmuv3 %s; arm_pmu %s; PMU in %s",
	       amupmu_node ? "enabled" : "absent",
	       armpmu_node ? "enabled" : "absent",
	       arm_pmu ? "registered" : "not registered", amupmu_pmu_mode_name(&self->info));

	EXPECT_EQ(want, self->info.pmu_owner);
	EXPECT_EQ(self->info.pmu_owner == AMUPMU_PMU_OWNER_AMUPMU, exclusive);
	/* shared mode only where arm_pmu owns the PMU (and serves perf events) */
	if (amupmu_pmu_shared(&self->info)) {
		EXPECT_EQ((__u32)AMUPMU_PMU_OWNER_KERNEL, self->info.pmu_owner);
		EXPECT_TRUE(arm_pmu) {
			TH_LOG("shared mode but no %s/armv8_pmuv3*", EVENT_SOURCE);
		}
	}
	if (want == AMUPMU_PMU_OWNER_AMUPMU) {
		EXPECT_FALSE(arm_pmu) {
			TH_LOG("the devicetree gives the PMU to amupmu but %s/armv8_pmuv3* exists",
			       EVENT_SOURCE);
		}
	} else if (armpmu_node) {
		EXPECT_TRUE(arm_pmu) {
			TH_LOG("arm,armv8-pmuv3 is enabled but arm_pmu is not registered");
		}
	}
}

TEST_F(caps, arm_pmu_events_in_pmceid)
{
	static struct amupmu_cpumask pmu_cpus;
	const struct amupmu_cpu_info *e;
	char path[PATH_MAX];
	unsigned int checked = 0;
	size_t p, i;
	glob_t pmus, events;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	if (self->info.pmu_owner != AMUPMU_PMU_OWNER_KERNEL)
		SKIP(return, "the kernel's arm_pmu does not own the PMU");
	if (glob(EVENT_SOURCE "/armv8_pmuv3*", 0, NULL, &pmus))
		SKIP(return, "no %s/armv8_pmuv3*", EVENT_SOURCE);

	for (p = 0; p < pmus.gl_pathc; p++) {
		snprintf(path, sizeof(path), "%s/cpus", pmus.gl_pathv[p]);
		if (amupmu_read_cpulist(path, &pmu_cpus))
			pmu_cpus = *self->possible;	/* no cpus file: all CPUs */
		snprintf(path, sizeof(path), "%s/events/*", pmus.gl_pathv[p]);
		if (glob(path, 0, NULL, &events))
			continue;
		for (i = 0; i < events.gl_pathc; i++) {
			__u64 event;
			bool set;

			ASSERT_EQ(0, parse_event_file(events.gl_pathv[i], &event)) {
				TH_LOG("cannot parse %s", events.gl_pathv[i]);
			}
			for_each_discovered(self, e) {
				if (!(e->flags & AMUPMU_CPU_PMU) || !pmu_cpus.cpu[e->cpu])
					continue;
				if (!pmceid_bit(e, event, &set))
					break;
				checked++;
				EXPECT_TRUE(set) {
					TH_LOG("cpu%u: arm_pmu shows %s (0x%llx), PMCEID 0x%016llx 0x%016llx lacks it",
					       e->cpu,
					       events.gl_pathv[i], (unsigned long long)event,
					       (unsigned long long)e->pmceid0,
					       (unsigned long long)e->pmceid1);
				}
			}
		}
		globfree(&events);
	}
	globfree(&pmus);
	TH_LOG("%u (event, CPU) pairs checked", checked);
}

TEST_F(caps, mock_amu_spe_decode)
{
	static const bool interval_valid[16] = {
		[0] = true, [2] = true, [3] = true, [4] = true,	/* 256, 512, 768, 1024 */
		[5] = true, [6] = true, [7] = true, [8] = true,	/* 1536 ... 4096 */
	};
	const struct amupmu_cpu_info *e;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	if (!(self->info.features & AMUPMU_FEAT_MOCK))
		SKIP(return, "backend: QEMU PMU, hardware ID registers (no mock AMU/SPE)");
	print_backend(&self->info);

	for_each_discovered(self, e) {
		if (e->flags & AMUPMU_CPU_AMU) {
			__u64 cg0 = AMCGCR_CG0NC(e->amcgcr), cg1 = AMCGCR_CG1NC(e->amcgcr);

			EXPECT_LE(cg0 + cg1, AMCFGR_N(e->amcfgr) + 1) {
				TH_LOG("cpu%u: AMCFGR 0x%llx counts fewer counters than AMCGCR 0x%llx",
				       e->cpu,
				       (unsigned long long)e->amcfgr,
				       (unsigned long long)e->amcgcr);
			}
			EXPECT_EQ((__u64)AMU_CG0_ARCH_COUNTERS, cg0);
			if (cg1) {
				EXPECT_LE(1ULL, AMCFGR_NCG(e->amcfgr));
			}
		}
		if (e->flags & AMUPMU_CPU_SPE) {
			EXPECT_TRUE(interval_valid[PMSIDR_INTERVAL(e->pmsidr)]) {
				TH_LOG("cpu%u: PMSIDR 0x%llx Interval %llu reserved", e->cpu,
				       (unsigned long long)e->pmsidr,
				       (unsigned long long)PMSIDR_INTERVAL(e->pmsidr));
			}
		}
	}
}

TEST_HARNESS_MAIN
