// SPDX-License-Identifier: GPL-2.0
/*
 * The SPE filter defaults in /sys/kernel/debug/arm_spe/ and the mock
 * build's SPE identification file /sys/kernel/debug/amupmu/spe_model,
 * against Documentation/admin-guide/amupmu.rst ("SPE filter defaults" and
 * the mock SPE model):
 *
 *   pmsfcr_fe pmsfcr_ft pmsfcr_fl pmsfcr_fne pmsirr_rnd   0 or 1 (decimal)
 *   pmsfcr_type pmsfcr_type_mask                          0 to 0x1f (hex)
 *   pmsevfr pmsnevfr                                      64-bit (hex)
 *   pmslatfr_minlat       0 to 2^CountSize-1 (decimal)
 *   pmsirr_interval       a multiple of 256 from the CPUs' minimum (decimal)
 *   config (0400)         "pmsfcr=0x.. pmsevfr=0x.. pmsnevfr=0x.. pmslatfr=0x.. pmsirr=0x.."
 *   cpuN/pmsidr cpuN/pmbidr (0400)  the CPU's PMSIDR_EL1 / PMBIDR_EL1 (hex)
 *   cpuN/regs (0400)                 the live registers of a running session, or
 *                                    "none" 
 *
 * A write is one number (decimal, 0x hex, 0 octal, one trailing newline)
 * checked against every CPU with SPE, with the other knobs as they are:
 * bad input and CONSTRAINED UNPREDICTABLE combinations EINVAL, a filter
 * or event a CPU lacks EOPNOTSUPP, an event bit no SPE version defines
 * EINVAL; a refused write changes nothing (every knob and config are
 * compared before and after). Defaults: all 0 but pmsirr_interval, the
 * smallest interval every SPE CPU allows.
 *
 * spe_model: "<cpu> [pmsver=<0-5>] [pmsidr=<bits 26:0>] [pmbidr=<bits
 * 11:0>]" (each key at most once, all checked before any applies) or
 * "<cpu> reset"; bad input EINVAL, offline CPU ENODEV; reading prints
 * "cpu<N> pmsver=<n> pmsidr=0x.. pmbidr=0x.." per possible CPU. The model's
 * defaults: PMSVer 5 (FEAT_SPEv1p4), PMSIDR_EL1 FE FT FL ArchInst LDS ERnd
 * FnE EFT, Interval 0 (256), MaxSize 6, CountSize 2 (12 bits); PMBIDR 0.
 *
 * Backends:
 *  - mock builds (AMUPMU_FEAT_MOCK with AMUPMU_FEAT_SPE): everything; the
 *    tests change one CPU's model (cpu1 where there is one) to reach every
 *    "a CPU lacks it" path, and restore the model and the knobs.
 *  - production builds on QEMU (no SPE: QEMU hides it): the arm_spe
 *    directory must not exist; the rest skips.
 *  - hardware SPE (not testable here): the tests that need no model run
 *    against what the CPUs report.
 * Every test leaves the knobs and the model at their defaults (the fixture
 * teardown restores them also after a failure).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <sys/stat.h>

#include "amupmu_test.h"
#include "amupmu_priv.h"

#define SPE_DIR		"/sys/kernel/debug/arm_spe"
#define SPE_MODEL	"/sys/kernel/debug/amupmu/spe_model"
#define MAX_CPUS	64	/* the tests handle CPUs below 64 */

/* PMSIDR_EL1 (Arm ARM, DDI 0487) */
#define SPE_PMSIDR_FE		(1ULL << 0)
#define SPE_PMSIDR_FT		(1ULL << 1)
#define SPE_PMSIDR_FL		(1ULL << 2)
#define SPE_PMSIDR_ARCHINST	(1ULL << 3)
#define SPE_PMSIDR_LDS		(1ULL << 4)
#define SPE_PMSIDR_ERND		(1ULL << 5)
#define SPE_PMSIDR_FNE		(1ULL << 6)
#define SPE_PMSIDR_INTERVAL_SHIFT	8
#define SPE_PMSIDR_INTERVAL	(0xfULL << SPE_PMSIDR_INTERVAL_SHIFT)
#define SPE_PMSIDR_MAXSIZE_SHIFT	12
#define SPE_PMSIDR_COUNTSIZE_SHIFT	16
#define SPE_PMSIDR_COUNTSIZE	(0xfULL << SPE_PMSIDR_COUNTSIZE_SHIFT)
#define SPE_PMSIDR_EFT		(1ULL << 26)
#define SPE_PMSIDR_MODEL_BITS	((1ULL << 27) - 1)	/* what spe_model takes */
/* PMBIDR_EL1 */
#define SPE_PMBIDR_P		(1ULL << 4)
#define SPE_PMBIDR_MODEL_BITS	0xfffULL
/* PMSFCR_EL1 */
#define SPE_PMSFCR_FE		(1ULL << 0)
#define SPE_PMSFCR_FT		(1ULL << 1)
#define SPE_PMSFCR_FL		(1ULL << 2)
#define SPE_PMSFCR_FNE		(1ULL << 3)
#define SPE_PMSFCR_TYPE_SHIFT	16	/* B, LD, ST, FP, SIMD: bits 20:16 */
#define SPE_PMSFCR_TYPEM_SHIFT	48	/* TYPEm: bits 52:48 */
#define SPE_PMSFCR_FP		(1ULL << 19)
#define SPE_PMSFCR_SIMD		(1ULL << 20)
/* PMSIRR_EL1.INTERVAL: bits 31:8 */
#define SPE_INTERVAL_MAX	0xffffff00ULL

/* the mock model's defaults */
#define MOCK_PMSVER		5
#define MOCK_PMSIDR		(SPE_PMSIDR_FE | SPE_PMSIDR_FT | SPE_PMSIDR_FL |	\
				 SPE_PMSIDR_ARCHINST | SPE_PMSIDR_LDS | SPE_PMSIDR_ERND |	\
				 SPE_PMSIDR_FNE | SPE_PMSIDR_EFT |			\
				 (6ULL << SPE_PMSIDR_MAXSIZE_SHIFT) |			\
				 (2ULL << SPE_PMSIDR_COUNTSIZE_SHIFT))
#define MOCK_PMBIDR		0ULL
#define MOCK_INTERVAL		256

enum knob {
	K_FE, K_FT, K_FL, K_FNE, K_TYPE, K_TYPEM, K_EVFR, K_NEVFR, K_MINLAT, K_INTERVAL, K_RND,
	NR_KNOBS,
};

static const struct {
	const char *name;
	bool hex;		/* read as 0x.. (masks and event sets) */
} knobs[NR_KNOBS] = {
	[K_FE] = { "pmsfcr_fe", false },
	[K_FT] = { "pmsfcr_ft", false },
	[K_FL] = { "pmsfcr_fl", false },
	[K_FNE] = { "pmsfcr_fne", false },
	[K_TYPE] = { "pmsfcr_type", true },
	[K_TYPEM] = { "pmsfcr_type_mask", true },
	[K_EVFR] = { "pmsevfr", true },
	[K_NEVFR] = { "pmsnevfr", true },
	[K_MINLAT] = { "pmslatfr_minlat", false },
	[K_INTERVAL] = { "pmsirr_interval", false },
	[K_RND] = { "pmsirr_rnd", false },
};

/* ---------------------------------------------------------------- helpers */

/* @s with its newlines as \n, for the logs (one static buffer: one use per TH_LOG). */
static const char *esc(const char *s)
{
	static char buf[256];
	size_t o = 0;

	for (; *s && o < sizeof(buf) - 3; s++) {
		if (*s == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = *s;
		}
	}
	buf[o] = '\0';
	return buf;
}

static void knob_path(unsigned int k, char *path, size_t size)
{
	snprintf(path, size, SPE_DIR "/%s", knobs[k].name);
}

static int knob_write(unsigned int k, const char *s)
{
	char path[128];

	knob_path(k, path, sizeof(path));
	return amupmu_write_str(path, s);
}

static int knob_set(unsigned int k, __u64 v)
{
	char s[32];

	snprintf(s, sizeof(s), knobs[k].hex ? "0x%llx\n" : "%llu\n", (unsigned long long)v);
	return knob_write(k, s);
}

/* A number the way the files print it: "0x" and hex digits, or decimal digits. */
static int parse_printed(const char *s, bool hex, __u64 *v)
{
	const char *digits = hex ? "0123456789abcdefABCDEF" : "0123456789";
	size_t n;
	char *end;

	if (hex) {
		if (strncmp(s, "0x", 2))
			return -EINVAL;
		s += 2;
	}
	n = strspn(s, digits);
	if (!n || s[n])
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, hex ? 16 : 10);
	return errno || end != s + n ? -EINVAL : 0;
}

/* Read a file printing one number (@hex: "0x.."). 0, -errno, or -EPROTO. */
static int read_printed(const char *path, bool hex, __u64 *v, char *text, size_t size)
{
	int ret = amupmu_read_line(path, text, size);

	if (ret)
		return ret;
	return parse_printed(text, hex, v) ? -EPROTO : 0;
}

struct spe_config {
	__u64 pmsfcr, pmsevfr, pmsnevfr, pmslatfr, pmsirr;
};

/*
 * The config line, exactly "pmsfcr=0x.. pmsevfr=0x.. pmsnevfr=0x..
 * pmslatfr=0x.. pmsirr=0x..". 0 or -EPROTO.
 */
static int config_parse(const char *line, struct spe_config *c)
{
	static const char * const names[] = { "pmsfcr", "pmsevfr", "pmsnevfr", "pmslatfr",
					       "pmsirr" };
	__u64 *val[] = { &c->pmsfcr, &c->pmsevfr, &c->pmsnevfr, &c->pmslatfr, &c->pmsirr };
	const char *p = line;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		char tok[64];
		size_t len = strcspn(p, " ");

		if (strncmp(p, names[i], strlen(names[i])) || p[strlen(names[i])] != '=' ||
		    len >= sizeof(tok))
			return -EPROTO;
		memcpy(tok, p + strlen(names[i]) + 1, len - strlen(names[i]) - 1);
		tok[len - strlen(names[i]) - 1] = '\0';
		if (parse_printed(tok, true, val[i]))
			return -EPROTO;
		p += len;
		if (i + 1 < ARRAY_SIZE(names)) {
			if (*p != ' ')
				return -EPROTO;
			p++;
		}
	}
	return *p ? -EPROTO : 0;
}

/* What config must print for the knob values @v. */
static struct spe_config config_of(const __u64 *v)
{
	struct spe_config c = {
		.pmsfcr = v[K_FE] * SPE_PMSFCR_FE | v[K_FT] * SPE_PMSFCR_FT |
			  v[K_FL] * SPE_PMSFCR_FL | v[K_FNE] * SPE_PMSFCR_FNE |
			  v[K_TYPE] << SPE_PMSFCR_TYPE_SHIFT | v[K_TYPEM] << SPE_PMSFCR_TYPEM_SHIFT,
		.pmsevfr = v[K_EVFR],
		.pmsnevfr = v[K_NEVFR],
		.pmslatfr = v[K_MINLAT],
		.pmsirr = v[K_INTERVAL] | v[K_RND],
	};

	return c;
}

/* Every knob and config, as read. */
struct snap {
	__u64 v[NR_KNOBS];
	char text[NR_KNOBS][64];
	char config[256];
	struct spe_config cfg;
};

/* 0, -errno, or -EPROTO; @why says which file and what it printed. */
static int snap_take(struct snap *s, char *why, size_t size)
{
	char path[128];
	unsigned int k;
	int ret;

	memset(s, 0, sizeof(*s));
	for (k = 0; k < NR_KNOBS; k++) {
		knob_path(k, path, sizeof(path));
		ret = read_printed(path, knobs[k].hex, &s->v[k], s->text[k], sizeof(s->text[k]));
		if (ret) {
			snprintf(why, size, "%s: %s%s%s", knobs[k].name,
				 ret == -EPROTO ? "not a " : amupmu_errstr(ret),
				 ret == -EPROTO ? (knobs[k].hex ? "0x hex number: " :
						   "decimal number: ") : "",
				 ret == -EPROTO ? esc(s->text[k]) : "");
			return ret;
		}
	}
	ret = amupmu_read_line(SPE_DIR "/config", s->config, sizeof(s->config));
	if (ret) {
		snprintf(why, size, "config: %s", amupmu_errstr(ret));
		return ret;
	}
	if (config_parse(s->config, &s->cfg)) {
		snprintf(why, size, "config \"%s\" is not \"pmsfcr=0x.. pmsevfr=0x.. "
			 "pmsnevfr=0x.. pmslatfr=0x.. pmsirr=0x..\"", esc(s->config));
		return -EPROTO;
	}
	return 0;
}

/* Do @a and @b hold the same knobs and config? @why: the first difference. */
static bool snap_same(const struct snap *a, const struct snap *b, char *why, size_t size)
{
	unsigned int k;

	for (k = 0; k < NR_KNOBS; k++)
		if (strcmp(a->text[k], b->text[k])) {
			snprintf(why, size, "%s \"%s\" -> \"%s\"", knobs[k].name, a->text[k],
				 b->text[k]);
			return false;
		}
	if (strcmp(a->config, b->config)) {
		snprintf(why, size, "config \"%.120s\" -> \"%.120s\"", a->config, b->config);
		return false;
	}
	return true;
}

/* Does config print what the knobs hold? */
static bool snap_consistent(const struct snap *s, char *why, size_t size)
{
	struct spe_config c = config_of(s->v);

	if (!memcmp(&c, &s->cfg, sizeof(c)))
		return true;
	snprintf(why, size, "config \"%.120s\", the knobs say pmsfcr=0x%llx pmsevfr=0x%llx "
		 "pmsnevfr=0x%llx pmslatfr=0x%llx pmsirr=0x%llx", s->config,
		 (unsigned long long)c.pmsfcr, (unsigned long long)c.pmsevfr,
		 (unsigned long long)c.pmsnevfr, (unsigned long long)c.pmslatfr,
		 (unsigned long long)c.pmsirr);
	return false;
}

/*
 * PMSIDR_EL1.Interval: the smallest sampling interval (Arm ARM: 0b0000 256,
 * 0b0010 512, 0b0011 768, 0b0100 1024, 0b0101 1536, 0b0110 2048, 0b0111
 * 3072, 0b1000 4096); 0 for the reserved encodings.
 */
static __u64 interval_min(__u64 pmsidr)
{
	static const __u64 tab[16] = { 256, 0, 512, 768, 1024, 1536, 2048, 3072, 4096 };

	return tab[(pmsidr & SPE_PMSIDR_INTERVAL) >> SPE_PMSIDR_INTERVAL_SHIFT];
}

/* PMSIDR_EL1.CountSize: the counter width (0b0010 12, 0b0011 16 bits); 0 reserved. */
static unsigned int count_bits(__u64 pmsidr)
{
	switch ((pmsidr & SPE_PMSIDR_COUNTSIZE) >> SPE_PMSIDR_COUNTSIZE_SHIFT) {
	case 2:
		return 12;
	case 3:
		return 16;
	default:
		return 0;
	}
}

static __u64 with_interval(__u64 pmsidr, unsigned int field)
{
	return (pmsidr & ~SPE_PMSIDR_INTERVAL) | ((__u64)field << SPE_PMSIDR_INTERVAL_SHIFT);
}

static __u64 with_countsize(__u64 pmsidr, unsigned int field)
{
	return (pmsidr & ~SPE_PMSIDR_COUNTSIZE) | ((__u64)field << SPE_PMSIDR_COUNTSIZE_SHIFT);
}

/* ---------------------------------------------------------------- spe_model */

struct model_cpu {
	bool seen;
	unsigned int pmsver;
	unsigned long long pmsidr, pmbidr;
};

struct model {
	unsigned int lines;
	struct model_cpu cpu[MAX_CPUS];
	char text[8192];	/* the whole read-out */
	char bad[160];		/* the first line that does not parse */
};

/*
 * Parse spe_model: one line per possible CPU, "cpu<N> pmsver=<n>
 * pmsidr=0x<hex> pmbidr=0x<hex>". 0, -errno, or -EPROTO with m->bad set.
 */
static int model_get(struct model *m)
{
	char buf[8192], *line, *save;
	ssize_t len;

	memset(m, 0, sizeof(*m));
	len = amupmu_read_file(SPE_MODEL, buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	snprintf(m->text, sizeof(m->text), "%s", buf);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char sidr[32], bidr[32];
		struct model_cpu c = { .seen = true };
		unsigned int cpu;
		__u64 v;
		int end = -1;

		if (sscanf(line, "cpu%u pmsver=%u pmsidr=%31s pmbidr=%31s%n", &cpu, &c.pmsver,
			   sidr, bidr, &end) != 4 || end != (int)strlen(line) ||
		    cpu >= MAX_CPUS || m->cpu[cpu].seen || parse_printed(sidr, true, &v)) {
			snprintf(m->bad, sizeof(m->bad), "%.150s", line);
			return -EPROTO;
		}
		c.pmsidr = v;
		if (parse_printed(bidr, true, &v)) {
			snprintf(m->bad, sizeof(m->bad), "%.150s", line);
			return -EPROTO;
		}
		c.pmbidr = v;
		m->cpu[cpu] = c;
		m->lines++;
	}
	return 0;
}

/* "<cpu> <keys>\n" to spe_model. 0 or -errno. */
static int model_set(unsigned int cpu, const char *keys)
{
	char s[256];

	snprintf(s, sizeof(s), "%u %s\n", cpu, keys);
	return amupmu_write_str(SPE_MODEL, s);
}

/* ---------------------------------------------------------------- fixture */

/*
 * Every test of this file has 180 s, not the harness's 30: their hundreds
 * of debugfs writes, each a cross-CPU call, outlasted 30 s on the debug
 * kernel (KASAN, lockdep) beside a CPU hog of the host's size. The
 * tests are bounded by their loops; the timeout only catches a hang.
 */
FIXTURE(spe) {
	int fd;
	unsigned int nr_cpu_ids;
	struct amupmu_info info;
	struct amupmu_cpu_info *cpus;
	bool spe;		/* AMUPMU_FEAT_SPE */
	bool mock;		/* AMUPMU_FEAT_MOCK */
	bool touched;		/* the test may have changed knobs: restore them */
	__u64 model_touched;	/* CPUs whose spe_model the test changed */
	bool cpu1_offlined;
	unsigned int cpu;	/* the CPU whose model the tests change */
	char backend[384];
};

/* INFO again (the model changes what it reports). */
static int requery(FIXTURE_DATA(spe) *self)
{
	return amupmu_query(self->fd, &self->info, self->cpus, self->nr_cpu_ids);
}

/* The CPUs with SPE now, from INFO. */
static bool has_spe(FIXTURE_DATA(spe) *self, unsigned int cpu)
{
	return cpu < self->nr_cpu_ids && (self->cpus[cpu].flags & AMUPMU_CPU_SPE);
}

/* pmsirr_interval's default: the smallest interval every SPE CPU allows (INFO now). */
static __u64 default_interval(FIXTURE_DATA(spe) *self)
{
	__u64 min = 0, m;
	unsigned int cpu;

	if (requery(self))
		return 0;
	for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
		if (!has_spe(self, cpu))
			continue;
		m = interval_min(self->cpus[cpu].pmsidr);
		if (m > min)
			min = m;
	}
	return min;
}

/* Do all SPE CPUs have every bit of @bits in PMSIDR_EL1? */
static bool all_have(FIXTURE_DATA(spe) *self, __u64 bits)
{
	unsigned int cpu;

	for (cpu = 0; cpu < self->nr_cpu_ids; cpu++)
		if (has_spe(self, cpu) && (self->cpus[cpu].pmsidr & bits) != bits)
			return false;
	return true;
}

/*
 * Knobs and model back to the defaults, in an order every write of which is
 * valid: the knobs but the interval to 0 (FL before MINLAT, FT before TYPE)
 * while the model still allows the interval they hold, then the model, then
 * the interval (its default follows from the model). 0 or the first -errno,
 * with @why saying which write.
 */
static int restore_all(FIXTURE_DATA(spe) *self, char *why, size_t size)
{
	static const unsigned int order[] = {
		K_FL, K_FE, K_FNE, K_FT, K_TYPEM, K_TYPE, K_EVFR, K_NEVFR, K_MINLAT, K_RND,
	};
	unsigned int i, cpu;
	int ret, first = 0;

	why[0] = '\0';
	if (self->cpu1_offlined) {
		ret = amupmu_set_online(1, true);
		if (ret) {
			snprintf(why, size, "cpu1 online: %s", amupmu_errstr(ret));
			return ret;
		}
		self->cpu1_offlined = false;
	}
	if (!self->touched && !self->model_touched)
		return 0;
	for (i = 0; i < ARRAY_SIZE(order); i++)
		knob_set(order[i], 0);		/* again below if refused */
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (!(self->model_touched & (1ULL << cpu)))
			continue;
		ret = model_set(cpu, "reset");
		if (ret && !first) {
			snprintf(why, size, "spe_model \"%u reset\": %s", cpu, amupmu_errstr(ret));
			first = ret;
		}
		if (!ret)
			self->model_touched &= ~(1ULL << cpu);
	}
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		ret = knob_set(order[i], 0);
		if (ret && !first) {
			snprintf(why, size, "%s 0: %s", knobs[order[i]].name, amupmu_errstr(ret));
			first = ret;
		}
	}
	ret = knob_set(K_INTERVAL, default_interval(self));
	if (ret && !first) {
		snprintf(why, size, "%s %llu: %s", knobs[K_INTERVAL].name,
			 (unsigned long long)default_interval(self), amupmu_errstr(ret));
		first = ret;
	}
	return first;
}

FIXTURE_SETUP(spe)
{
	static struct amupmu_cpumask possible;
	char board[192];
	int ret;

	self->fd = -1;
	ASSERT_EQ(0, amupmu_possible_cpus(&possible));
	ASSERT_LT(0U, possible.nr);
	self->nr_cpu_ids = possible.nr;
	AMUPMU_OPEN_DEVICE(self->fd);
	self->cpus = calloc(self->nr_cpu_ids, sizeof(*self->cpus));
	ASSERT_NE(NULL, self->cpus);
	ret = requery(self);
	ASSERT_EQ(0, ret) {
		TH_LOG("AMUPMU_INFO: %s", amupmu_errstr(ret));
	}
	ASSERT_EQ((__u32)AMUPMU_CPU_INFO_SIZE_VER2, self->info.cpu_entry_size);
	self->spe = self->info.features & AMUPMU_FEAT_SPE;
	self->mock = self->info.features & AMUPMU_FEAT_MOCK;
	self->cpu = self->nr_cpu_ids > 1 && has_spe(self, 1) && amupmu_cpu_online(1) == 1 ? 1 : 0;
	amupmu_board_line(board, sizeof(board));
	snprintf(self->backend, sizeof(self->backend), "%s; features 0x%llx; board \"%s\"",
		 self->spe && self->mock ? "mock SPE model (test build)" :
		 self->spe ? "hardware SPE (no spe_model: the model's tests skip)" :
		 MIDR_IMPLEMENTER(self->cpus[0].midr) == 0 ? "QEMU, no SPE" :
		 "no SPE (production build)",
		 (unsigned long long)self->info.features, board[0] ? board : "unknown");
}

FIXTURE_TEARDOWN(spe)
{
	char why[256];
	int ret = restore_all(self, why, sizeof(why));

	if (ret) {
		TH_LOG("could not restore the SPE defaults: %s", why);
		_metadata->passed = 0;
	}
	free(self->cpus);
	if (self->fd >= 0)
		close(self->fd);
}

static bool debugfs_mounted(void)
{
	char buf[16384];

	if (amupmu_read_file("/proc/mounts", buf, sizeof(buf)) < 0)
		return false;
	return !!strstr(buf, " /sys/kernel/debug debugfs ");
}

/*
 * First statement of every test: the backend; without SPE the directory
 * must be absent and the test skips (@_fig: the suite whose figure line
 * to print then, or NULL).
 */
#define SPE_BEGIN_FIG(_fig) do {						\
	const char *_f = (_fig);						\
	AMUPMU_SKIPPED_IN_SETUP(self->fd);					\
	TH_LOG("backend: %s", self->backend);					\
	if (geteuid() != 0)							\
		SKIP(return, "debugfs needs root");				\
	if (!debugfs_mounted())							\
		SKIP(return, "debugfs is not mounted on /sys/kernel/debug");	\
	if (!self->spe) {							\
		ASSERT_FALSE(amupmu_path_exists(SPE_DIR)) {			\
			TH_LOG("%s exists, but features has no spe", SPE_DIR);	\
		}								\
		if (_f) {							\
			printf("# AMUPMU-FIGURE %s spe=absent cases=0\n", _f);	\
			fflush(stdout);						\
		}								\
		SKIP(return, "no SPE (QEMU hides it): %s is absent as documented; "	\
		     "the knobs need SPE (a mock build)", SPE_DIR);		\
	}									\
	ASSERT_TRUE(amupmu_path_exists(SPE_DIR)) {				\
		TH_LOG("features has spe, but there is no %s", SPE_DIR);	\
	}									\
	self->touched = true;							\
} while (0)
#define SPE_BEGIN()	SPE_BEGIN_FIG(NULL)

/* The tests that change the model: mock builds only. */
#define NEED_MODEL() do {							\
	if (!self->mock)							\
		SKIP(return, "needs the mock build's %s", SPE_MODEL);		\
	ASSERT_TRUE(amupmu_path_exists(SPE_MODEL)) {				\
		TH_LOG("mock build without %s", SPE_MODEL);			\
	}									\
	ASSERT_EQ(1, amupmu_cpu_online(self->cpu));				\
} while (0)

#define SNAP(_s) do {								\
	char _why[320] = "";							\
	int _r = snap_take((_s), _why, sizeof(_why));				\
	ASSERT_EQ(0, _r) {							\
		TH_LOG("%s", _why);						\
	}									\
} while (0)

#define MODEL_GET(_m) do {							\
	int _r = model_get(_m);							\
	ASSERT_EQ(0, _r) {							\
		TH_LOG("%s: %s%s%s", SPE_MODEL, amupmu_errstr(_r),		\
		       (_m)->bad[0] ? ", line: " : "", (_m)->bad);		\
	}									\
} while (0)

#define REQUERY() do {								\
	int _r = requery(self);							\
	ASSERT_EQ(0, _r) {							\
		TH_LOG("AMUPMU_INFO: %s", amupmu_errstr(_r));			\
	}									\
} while (0)

/*
 * Write @s to knob @k and expect @want (0 or -errno). A refused write
 * changes no knob nor config; after any write config prints what the
 * knobs hold. @after: the state after the write (may be NULL).
 */
static void expect_write(struct __test_metadata *_metadata, unsigned int k, const char *s,
			 int want, struct snap *after)
{
	struct snap a, b;
	char why[320];
	int ret;

	SNAP(&a);
	ret = knob_write(k, s);
	EXPECT_EQ(want, ret) {
		TH_LOG("write \"%s\" to %s: %s, documented: %s", esc(s), knobs[k].name,
		       amupmu_errstr(ret), amupmu_errstr(want));
	}
	SNAP(&b);
	if (ret) {
		EXPECT_TRUE(snap_same(&a, &b, why, sizeof(why))) {
			TH_LOG("refused \"%s\" to %s (%s) changed %s", esc(s), knobs[k].name,
			       amupmu_errstr(ret), why);
		}
	}
	EXPECT_TRUE(snap_consistent(&b, why, sizeof(why))) {
		TH_LOG("after \"%s\" to %s: %s", esc(s), knobs[k].name, why);
	}
	if (after)
		*after = b;
}

/* Write @v (as the file prints it) to knob @k: expect @want; read back @v when accepted. */
static void expect_set(struct __test_metadata *_metadata, unsigned int k, __u64 v, int want)
{
	struct snap b;
	char s[32];

	snprintf(s, sizeof(s), knobs[k].hex ? "0x%llx\n" : "%llu\n", (unsigned long long)v);
	expect_write(_metadata, k, s, want, &b);
	if (!want) {
		EXPECT_EQ(v, b.v[k]) {
			TH_LOG("%s reads \"%s\" after writing \"%s\"", knobs[k].name, b.text[k],
			       esc(s));
		}
	}
}

/* The knobs hold their defaults (interval @interval) and config says so. */
static void expect_defaults(struct __test_metadata *_metadata, __u64 interval)
{
	struct snap s;
	unsigned int k;

	SNAP(&s);
	for (k = 0; k < NR_KNOBS; k++) {
		__u64 want = k == K_INTERVAL ? interval : 0;

		EXPECT_EQ(want, s.v[k]) {
			TH_LOG("%s reads \"%s\", its default is %llu", knobs[k].name, s.text[k],
			       (unsigned long long)want);
		}
	}
	EXPECT_EQ(0ULL, s.cfg.pmsfcr);
	EXPECT_EQ(0ULL, s.cfg.pmsevfr);
	EXPECT_EQ(0ULL, s.cfg.pmsnevfr);
	EXPECT_EQ(0ULL, s.cfg.pmslatfr);
	EXPECT_EQ(interval, s.cfg.pmsirr) {
		TH_LOG("config \"%s\"", s.config);
	}
}

/* Restore knobs and model, and check they are the defaults (last statement of a test). */
#define SPE_END() do {								\
	char _why[256];								\
	int _r = restore_all(self, _why, sizeof(_why));				\
	ASSERT_EQ(0, _r) {							\
		TH_LOG("restoring the defaults: %s", _why);			\
	}									\
	expect_defaults(_metadata, default_interval(self));			\
} while (0)

/*
 * Knobs and model to the defaults, then (@interval not 0) pmsirr_interval
 * to @interval, then "<cpu> <keys>" to spe_model.
 */
static void model_change(struct __test_metadata *_metadata, FIXTURE_DATA(spe) *self,
			 unsigned int cpu, const char *keys, __u64 interval)
{
	char why[256];
	int ret = restore_all(self, why, sizeof(why));

	ASSERT_EQ(0, ret) {
		TH_LOG("restoring the defaults: %s", why);
	}
	if (interval) {
		ret = knob_set(K_INTERVAL, interval);
		ASSERT_EQ(0, ret) {
			TH_LOG("pmsirr_interval %llu: %s", (unsigned long long)interval,
			       amupmu_errstr(ret));
		}
	}
	self->model_touched |= 1ULL << cpu;
	ret = model_set(cpu, keys);
	ASSERT_EQ(0, ret) {
		TH_LOG("spe_model \"%u %s\": %s", cpu, keys, amupmu_errstr(ret));
	}
	ret = requery(self);
	ASSERT_EQ(0, ret);
}

/* Also on another CPU, without resetting anything (a second CPU of the same change). */
static void model_add(struct __test_metadata *_metadata, FIXTURE_DATA(spe) *self,
		      unsigned int cpu, const char *keys)
{
	int ret;

	self->model_touched |= 1ULL << cpu;
	ret = model_set(cpu, keys);
	ASSERT_EQ(0, ret) {
		TH_LOG("spe_model \"%u %s\": %s", cpu, keys, amupmu_errstr(ret));
	}
	ret = requery(self);
	ASSERT_EQ(0, ret);
}

/* CPU @cpu's SPE as INFO, spe_model and arm_spe/cpuN report it now. */
static void expect_cpu_model(struct __test_metadata *_metadata, FIXTURE_DATA(spe) *self,
			     unsigned int cpu, unsigned int pmsver, __u64 pmsidr, __u64 pmbidr)
{
	const struct amupmu_cpu_info *e = &self->cpus[cpu];
	char path[128], text[64];
	struct model m;
	__u64 v;
	int ret;

	REQUERY();
	MODEL_GET(&m);
	EXPECT_TRUE(m.cpu[cpu].seen);
	EXPECT_EQ(pmsver, m.cpu[cpu].pmsver);
	EXPECT_EQ(pmsidr, m.cpu[cpu].pmsidr);
	EXPECT_EQ(pmbidr, m.cpu[cpu].pmbidr) {
		TH_LOG("spe_model:\n%s", m.text);
	}
	if (pmbidr & SPE_PMBIDR_P) {
		/* firmware keeps the buffer: PMS* trap to EL3, reported without SPE */
		EXPECT_FALSE(!!(e->flags & AMUPMU_CPU_SPE)) {
			TH_LOG("cpu%u: INFO flags 0x%x have SPE with PMBIDR_EL1.P set", cpu,
			       e->flags);
		}
		return;
	}
	EXPECT_EQ(pmsver, e->spe_version) {
		TH_LOG("INFO cpu%u spe_version %u, the model's PMSVer %u", cpu, e->spe_version,
		       pmsver);
	}
	if (!pmsver) {
		EXPECT_FALSE(!!(e->flags & AMUPMU_CPU_SPE)) {
			TH_LOG("cpu%u: INFO flags 0x%x have SPE with PMSVer 0", cpu, e->flags);
		}
		return;
	}
	EXPECT_TRUE(!!(e->flags & AMUPMU_CPU_SPE)) {
		TH_LOG("cpu%u: INFO flags 0x%x", cpu, e->flags);
	}
	EXPECT_EQ(pmsidr, e->pmsidr) {
		TH_LOG("cpu%u: INFO pmsidr 0x%llx, the model's 0x%llx", cpu,
		       (unsigned long long)e->pmsidr, (unsigned long long)pmsidr);
	}
	snprintf(path, sizeof(path), SPE_DIR "/cpu%u", cpu);
	if (!amupmu_path_exists(path))
		return;		/* gained SPE after the directory was made */
	snprintf(path, sizeof(path), SPE_DIR "/cpu%u/pmsidr", cpu);
	ret = read_printed(path, true, &v, text, sizeof(text));
	EXPECT_EQ(0, ret) {
		TH_LOG("%s: %s \"%s\"", path, amupmu_errstr(ret), text);
	}
	EXPECT_EQ(pmsidr, v) {
		TH_LOG("%s \"%s\", the model's 0x%llx", path, text, (unsigned long long)pmsidr);
	}
	snprintf(path, sizeof(path), SPE_DIR "/cpu%u/pmbidr", cpu);
	ret = read_printed(path, true, &v, text, sizeof(text));
	EXPECT_EQ(0, ret) {
		TH_LOG("%s: %s \"%s\"", path, amupmu_errstr(ret), text);
	}
	EXPECT_EQ(pmbidr, v) {
		TH_LOG("%s \"%s\", the model's 0x%llx", path, text, (unsigned long long)pmbidr);
	}
}

static void expect_mode(struct __test_metadata *_metadata, const char *path, mode_t mode)
{
	struct stat st;

	ASSERT_EQ(0, stat(path, &st)) {
		TH_LOG("%s: %s", path, strerror(errno));
	}
	EXPECT_TRUE(S_ISREG(st.st_mode)) {
		TH_LOG("%s is not a regular file", path);
	}
	EXPECT_EQ((unsigned int)mode, (unsigned int)(st.st_mode & 07777)) {
		TH_LOG("%s: mode 0%o, documented 0%o", path, st.st_mode & 07777, mode);
	}
	EXPECT_EQ(0U, (unsigned int)st.st_uid) {
		TH_LOG("%s: owner uid %u, documented root", path, st.st_uid);
	}
}

/* ---------------------------------------------------------------- the tests */

/*
 * The directory: the documented files and one cpuN per SPE CPU, with their
 * modes; every knob at its default (0, pmsirr_interval the CPUs' minimum:
 * 256 on the default mock); config in its format, saying the same;
 * cpuN/pmsidr what INFO reports; on the mock, the model's defaults.
 */
TEST_F_TIMEOUT(spe, defaults, 180)
{
	bool seen[NR_KNOBS] = { false }, config_seen = false, dir_seen[MAX_CPUS] = { false };
	unsigned int k, cpu, dirs = 0;
	char path[300];
	struct dirent *d;
	__u64 interval;
	struct model m;
	DIR *dir;

	SPE_BEGIN();
	memset(&m, 0, sizeof(m));
	dir = opendir(SPE_DIR);
	ASSERT_NE(NULL, dir) {
		TH_LOG("%s: %s", SPE_DIR, strerror(errno));
	}
	while ((d = readdir(dir))) {
		bool known = false;
		unsigned int n;
		int end = -1;

		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		for (k = 0; k < NR_KNOBS; k++) {
			if (!strcmp(d->d_name, knobs[k].name)) {
				seen[k] = true;
				known = true;
			}
		}
		if (!strcmp(d->d_name, "config")) {
			config_seen = true;
			known = true;
		}
		if (sscanf(d->d_name, "cpu%u%n", &n, &end) == 1 && end == (int)strlen(d->d_name)) {
			known = true;
			EXPECT_GT(self->nr_cpu_ids, n) {
				TH_LOG("%s/%s: not a possible CPU", SPE_DIR, d->d_name);
			}
			if (n < MAX_CPUS)
				dir_seen[n] = true;
			dirs++;
		}
		EXPECT_TRUE(known) {
			TH_LOG("%s/%s is not documented", SPE_DIR, d->d_name);
		}
	}
	closedir(dir);
	for (k = 0; k < NR_KNOBS; k++) {
		EXPECT_TRUE(seen[k]) {
			TH_LOG("no %s/%s", SPE_DIR, knobs[k].name);
		}
		if (!seen[k])
			continue;
		knob_path(k, path, sizeof(path));
		expect_mode(_metadata, path, 0600);
	}
	ASSERT_TRUE(config_seen) {
		TH_LOG("no %s/config", SPE_DIR);
	}
	expect_mode(_metadata, SPE_DIR "/config", 0400);
	EXPECT_LT(0U, dirs) {
		TH_LOG("no cpuN directory, but features has spe");
	}

	/* one cpuN per SPE CPU: PMSIDR_EL1 as INFO reports it, PMBIDR_EL1 */
	if (self->mock)
		MODEL_GET(&m);
	for (cpu = 0; cpu < self->nr_cpu_ids && cpu < MAX_CPUS; cpu++) {
		const struct amupmu_cpu_info *e = &self->cpus[cpu];
		char text[64];
		__u64 v;
		int ret;

		if (!has_spe(self, cpu))
			continue;
		EXPECT_TRUE(dir_seen[cpu]) {
			TH_LOG("cpu%u has SPE (INFO flags 0x%x) but no %s/cpu%u", cpu, e->flags,
			       SPE_DIR, cpu);
		}
		if (!dir_seen[cpu])
			continue;
		snprintf(path, sizeof(path), SPE_DIR "/cpu%u/pmsidr", cpu);
		expect_mode(_metadata, path, 0400);
		ret = read_printed(path, true, &v, text, sizeof(text));
		EXPECT_EQ(0, ret) {
			TH_LOG("%s: %s \"%s\" (hex documented)", path, amupmu_errstr(ret), text);
		}
		EXPECT_EQ(e->pmsidr, v) {
			TH_LOG("%s \"%s\", INFO pmsidr 0x%llx", path, text,
			       (unsigned long long)e->pmsidr);
		}
		snprintf(path, sizeof(path), SPE_DIR "/cpu%u/pmbidr", cpu);
		expect_mode(_metadata, path, 0400);
		ret = read_printed(path, true, &v, text, sizeof(text));
		EXPECT_EQ(0, ret) {
			TH_LOG("%s: %s \"%s\" (hex documented)", path, amupmu_errstr(ret), text);
		}
		EXPECT_EQ(0ULL, v & SPE_PMBIDR_P) {
			TH_LOG("%s \"%s\": P set, yet the CPU is reported with SPE", path, text);
		}
		/* the live registers: none without a session (nothing is read) */
		snprintf(path, sizeof(path), SPE_DIR "/cpu%u/regs", cpu);
		expect_mode(_metadata, path, 0400);
		EXPECT_LT(0, amupmu_read_file(path, text, sizeof(text)));
		EXPECT_STREQ("none\n", text);
		TH_LOG("cpu%u: PMSVer %u pmsidr 0x%llx pmbidr 0x%llx, minimum interval %llu, "
		       "%u-bit counters", cpu, e->spe_version, (unsigned long long)e->pmsidr,
		       (unsigned long long)v, (unsigned long long)interval_min(e->pmsidr),
		       count_bits(e->pmsidr));
		if (!self->mock)
			continue;
		/* the mock model's defaults */
		EXPECT_TRUE(!!(e->flags & AMUPMU_CPU_MOCK));
		EXPECT_EQ((__u32)MOCK_PMSVER, e->spe_version);
		EXPECT_EQ(MOCK_PMSIDR, e->pmsidr) {
			TH_LOG("cpu%u: pmsidr 0x%llx, the mock's default is 0x%llx", cpu,
			       (unsigned long long)e->pmsidr, (unsigned long long)MOCK_PMSIDR);
		}
		EXPECT_EQ(MOCK_PMBIDR, v);
		EXPECT_EQ(m.cpu[cpu].pmbidr, v) {
			TH_LOG("%s \"%s\", spe_model pmbidr 0x%llx", path, text, m.cpu[cpu].pmbidr);
		}
	}

	/* the knobs: all 0 but the interval, the smallest every SPE CPU allows */
	interval = default_interval(self);
	ASSERT_NE(0ULL, interval) {
		TH_LOG("a reserved PMSIDR_EL1.Interval encoding");
	}
	if (self->mock) {
		EXPECT_EQ((__u64)MOCK_INTERVAL, interval);
	}
	expect_defaults(_metadata, interval);
	SPE_END();
}

/*
 * Seed 002's sequence on a CPU with FEAT_SPE_EFT: type FP|SIMD, FT, MINLAT
 * 200, FL, each accepted in this order, read back as written, and config
 * programming FT, FL, FP, SIMD and MINLAT 0xc8.
 */
TEST_F_TIMEOUT(spe, seed_sequence, 180)
{
	static const struct {
		unsigned int k;
		const char *write, *reads;
	} seq[] = {
		{ K_TYPE, "0x18\n", "0x18" },
		{ K_FT, "1\n", "1" },
		{ K_MINLAT, "200\n", "200" },
		{ K_FL, "1\n", "1" },
	};
	unsigned int i;
	struct snap s;

	SPE_BEGIN();
	if (!all_have(self, SPE_PMSIDR_EFT | SPE_PMSIDR_FT | SPE_PMSIDR_FL))
		SKIP(return, "an SPE CPU lacks FEAT_SPE_EFT, FT or FL (the sequence needs them)");
	for (i = 0; i < ARRAY_SIZE(seq); i++) {
		expect_write(_metadata, seq[i].k, seq[i].write, 0, &s);
		EXPECT_STREQ(seq[i].reads, s.text[seq[i].k]);
	}
	SNAP(&s);
	TH_LOG("config: %s", s.config);
	EXPECT_EQ(SPE_PMSFCR_FT | SPE_PMSFCR_FL | SPE_PMSFCR_FP | SPE_PMSFCR_SIMD, s.cfg.pmsfcr) {
		TH_LOG("pmsfcr 0x%llx: FT (bit 1), FL (bit 2), FP (bit 19), SIMD (bit 20) only",
		       (unsigned long long)s.cfg.pmsfcr);
	}
	EXPECT_EQ(0xc8ULL, s.cfg.pmslatfr);
	EXPECT_EQ(0ULL, s.cfg.pmsevfr);
	EXPECT_EQ(0ULL, s.cfg.pmsnevfr);
	EXPECT_EQ(default_interval(self), s.cfg.pmsirr);
	SPE_END();
}

/* What every knob refuses with EINVAL whatever the CPUs: not one number. */
static const char * const not_a_number[] = {
	"x", "\n", "-1", "-0", " 1", "1 ", "1x", "0x", "1\n\n", "\n1", "1\n2", "0b1", "08",
	"1.0", "1,2", "0x1g", "18446744073709551616", "0x10000000000000000",
	"99999999999999999999999",
};

/*
 * The out-of-range writes of knob @k (@minlat_max: the largest MINLAT every
 * SPE CPU counts; @interval: the current minimum), into @out; their count.
 */
static unsigned int out_of_range(unsigned int k, __u64 minlat_max, __u64 interval,
				 char out[][32], unsigned int max)
{
	static const char * const flag[] = { "2", "3", "256", "4294967297", "0x100000001",
					     "9223372036854775809" };
	static const char * const type[] = { "0x20", "32", "0x3f", "0xff", "0x100000001",
					     "4294967297" };
	static const char * const ival[] = { "0", "1", "128", "255", "257", "300", "4097",
					     "4294967296", "0x1ffffff00", "0x100000100",
					     "18446744073709551360" };
	unsigned int n = 0, i;

#define ADD(...) do { if (n < max) snprintf(out[n++], 32, __VA_ARGS__); } while (0)
	switch (k) {
	case K_FE: case K_FT: case K_FL: case K_FNE: case K_RND:
		for (i = 0; i < ARRAY_SIZE(flag); i++)
			ADD("%s", flag[i]);
		break;
	case K_TYPE: case K_TYPEM:
		for (i = 0; i < ARRAY_SIZE(type); i++)
			ADD("%s", type[i]);
		break;
	case K_MINLAT:
		if (minlat_max)
			ADD("%llu", (unsigned long long)minlat_max + 1);
		ADD("65536");
		ADD("0x10000");
		ADD("%llu", (1ULL << 32) + 200);
		ADD("0x100000000000000c8");
		break;
	case K_INTERVAL:
		for (i = 0; i < ARRAY_SIZE(ival); i++)
			ADD("%s", ival[i]);
		ADD("%llu", (unsigned long long)SPE_INTERVAL_MAX + 256);
		if (interval > 256)
			ADD("%llu", (unsigned long long)interval - 256);
		break;
	default:	/* the 64-bit event sets: only not-a-number */
		break;
	}
#undef ADD
	return n;
}

/* Every knob's refusals of bad input in the current state: EINVAL, nothing changed. */
static void bad_input_sweep(struct __test_metadata *_metadata, FIXTURE_DATA(spe) *self,
			    unsigned int *cases)
{
	unsigned int k, i, n, cpu, bits = 0;
	char range[24][32];
	struct snap a, b;
	char why[320];
	int ret;

	for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
		unsigned int c = has_spe(self, cpu) ? count_bits(self->cpus[cpu].pmsidr) : 0;

		if (c && (!bits || c < bits))
			bits = c;
	}
	for (k = 0; k < NR_KNOBS; k++) {
		for (i = 0; i < ARRAY_SIZE(not_a_number); i++)
			expect_write(_metadata, k, not_a_number[i], -EINVAL, NULL);
		n = out_of_range(k, bits ? (1ULL << bits) - 1 : 0, default_interval(self), range,
				 ARRAY_SIZE(range));
		for (i = 0; i < n; i++)
			expect_write(_metadata, k, range[i], -EINVAL, NULL);
		*cases += ARRAY_SIZE(not_a_number) + n;
		/* an empty write (write() of 0 bytes): not a number either */
		SNAP(&a);
		ret = knob_write(k, "");
		EXPECT_EQ(-EINVAL, ret) {
			TH_LOG("empty write to %s: %s", knobs[k].name, amupmu_errstr(ret));
		}
		SNAP(&b);
		EXPECT_TRUE(snap_same(&a, &b, why, sizeof(why))) {
			TH_LOG("empty write to %s changed %s", knobs[k].name, why);
		}
		(*cases)++;
	}
}

/*
 * Bad input for every knob, at the defaults and with every knob set:
 * not a number, empty, negative, overflow, trailing garbage, out of the
 * field's range (TYPE 0x20, a flag 2, MINLAT beyond CountSize, the
 * interval 0, 255, 257, not a multiple of 256, beyond PMSIRR.INTERVAL's 24
 * bits, truncations): EINVAL and no knob changed. And the number forms
 * the documentation allows (hex, octal, one newline).
 */
TEST_F_TIMEOUT(spe, bad_input, 180)
{
	unsigned int cases = 0;
	struct snap s;

	SPE_BEGIN_FIG("spe-knobs");
	bad_input_sweep(_metadata, self, &cases);

	/* the documented number forms */
	expect_write(_metadata, K_MINLAT, "0xc8", 0, &s);
	EXPECT_EQ(200ULL, s.v[K_MINLAT]);
	expect_write(_metadata, K_MINLAT, "010\n", 0, &s);
	EXPECT_EQ(8ULL, s.v[K_MINLAT]);
	expect_write(_metadata, K_MINLAT, "200", 0, &s);
	EXPECT_STREQ("200", s.text[K_MINLAT]);
	expect_write(_metadata, K_EVFR, "2", 0, &s);
	EXPECT_STREQ("0x2", s.text[K_EVFR]);
	expect_write(_metadata, K_EVFR, "0", 0, NULL);
	expect_write(_metadata, K_INTERVAL, "0x400\n", 0, &s);
	EXPECT_EQ(1024ULL, s.v[K_INTERVAL]);
	EXPECT_STREQ("1024", s.text[K_INTERVAL]);
	expect_write(_metadata, K_INTERVAL, "4294967040", 0, &s);	/* INTERVAL 0xffffff */
	EXPECT_EQ(SPE_INTERVAL_MAX, s.cfg.pmsirr);

	/* every knob set (where the CPUs have every filter): the same refusals */
	if (all_have(self, SPE_PMSIDR_FE | SPE_PMSIDR_FT | SPE_PMSIDR_FL | SPE_PMSIDR_FNE |
		     SPE_PMSIDR_EFT)) {
		expect_set(_metadata, K_INTERVAL, 4096, 0);
		expect_set(_metadata, K_RND, 1, 0);
		expect_set(_metadata, K_TYPE, 0x3, 0);
		expect_set(_metadata, K_TYPEM, 0x1, 0);
		expect_set(_metadata, K_FT, 1, 0);
		expect_set(_metadata, K_MINLAT, 100, 0);
		expect_set(_metadata, K_FL, 1, 0);
		expect_set(_metadata, K_EVFR, 0x2, 0);
		expect_set(_metadata, K_FE, 1, 0);
		expect_set(_metadata, K_NEVFR, 0x80, 0);
		expect_set(_metadata, K_FNE, 1, 0);
		SNAP(&s);
		TH_LOG("every knob set: %s", s.config);
		bad_input_sweep(_metadata, self, &cases);
	} else {
		TH_LOG("an SPE CPU lacks a filter: the sweep ran at the defaults only");
	}
	TH_LOG("%u refused writes, none changed a knob", cases);
	printf("# AMUPMU-FIGURE spe-knobs spe=%s cases=%u\n", self->mock ? "mock" : "hardware",
	       cases);
	fflush(stdout);
	SPE_END();
}

/*
 * The CONSTRAINED UNPREDICTABLE combinations: FL 1 with MINLAT 0 (either
 * write that makes it) EINVAL; without FEAT_SPE_EFT (the model's PMSIDR
 * without bit 26) FT 1 with TYPE 0 (either write) EINVAL, with it allowed.
 */
TEST_F_TIMEOUT(spe, constrained_unpredictable, 180)
{
	char keys[64];
	struct snap s;

	SPE_BEGIN();
	if (!all_have(self, SPE_PMSIDR_FL))
		SKIP(return, "an SPE CPU lacks FL");
	expect_write(_metadata, K_FL, "1\n", -EINVAL, NULL);	/* MINLAT 0 */
	expect_write(_metadata, K_MINLAT, "200\n", 0, NULL);
	expect_write(_metadata, K_FL, "1\n", 0, NULL);
	expect_write(_metadata, K_MINLAT, "0\n", -EINVAL, NULL);
	expect_write(_metadata, K_MINLAT, "0x0", -EINVAL, NULL);
	expect_write(_metadata, K_MINLAT, "00", -EINVAL, &s);
	EXPECT_EQ(200ULL, s.v[K_MINLAT]);
	EXPECT_EQ(1ULL, s.v[K_FL]);
	expect_write(_metadata, K_MINLAT, "1\n", 0, NULL);	/* any MINLAT but 0 */
	expect_write(_metadata, K_FL, "0\n", 0, NULL);
	expect_write(_metadata, K_MINLAT, "0\n", 0, NULL);

	/* FEAT_SPE_EFT: FT with no type is defined */
	if (all_have(self, SPE_PMSIDR_FT | SPE_PMSIDR_EFT)) {
		expect_write(_metadata, K_FT, "1\n", 0, NULL);
		expect_write(_metadata, K_FT, "0\n", 0, NULL);
	}

	NEED_MODEL();
	snprintf(keys, sizeof(keys), "pmsidr=0x%llx", MOCK_PMSIDR & ~SPE_PMSIDR_EFT);
	model_change(_metadata, self, self->cpu, keys, 0);
	TH_LOG("cpu%u: spe_model \"%s\" (no FEAT_SPE_EFT)", self->cpu, keys);
	expect_cpu_model(_metadata, self, self->cpu, MOCK_PMSVER, MOCK_PMSIDR & ~SPE_PMSIDR_EFT,
			 MOCK_PMBIDR);
	expect_write(_metadata, K_FT, "1\n", -EINVAL, NULL);	/* TYPE 0 */
	expect_write(_metadata, K_TYPE, "0x1\n", 0, NULL);
	expect_write(_metadata, K_FT, "1\n", 0, NULL);
	expect_write(_metadata, K_TYPE, "0\n", -EINVAL, NULL);
	expect_write(_metadata, K_TYPE, "0x0", -EINVAL, &s);
	EXPECT_EQ(1ULL, s.v[K_TYPE]);
	EXPECT_EQ(1ULL, s.v[K_FT]);
	expect_write(_metadata, K_TYPE, "0x7\n", 0, NULL);	/* B, LD, ST: not extended */
	expect_write(_metadata, K_TYPE, "0x2\n", 0, NULL);
	expect_write(_metadata, K_FT, "0\n", 0, NULL);
	expect_write(_metadata, K_TYPE, "0\n", 0, NULL);
	SPE_END();
}

/*
 * A filter a CPU lacks: FE, FT, FL, FnE removed from one CPU's PMSIDR_EL1
 * make that knob's 1 EOPNOTSUPP (its 0 still accepted), pmsnevfr not 0
 * too without FnE; and the knobs follow the CPUs that have SPE now (a
 * CPU whose model says PMSVer 0 no longer counts).
 */
TEST_F_TIMEOUT(spe, filter_refusals, 180)
{
	static const struct {
		__u64 bit;
		unsigned int k;
		const char *what;
	} rows[] = {
		{ SPE_PMSIDR_FE, K_FE, "FE" },
		{ SPE_PMSIDR_FT, K_FT, "FT" },
		{ SPE_PMSIDR_FL, K_FL, "FL" },
		{ SPE_PMSIDR_FNE, K_FNE, "FnE" },
	};
	unsigned int i, cpu, others = 0;
	char keys[96];

	SPE_BEGIN();
	NEED_MODEL();
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		/* the model's defaults have it */
		expect_write(_metadata, K_MINLAT, "200", 0, NULL);
		expect_write(_metadata, K_TYPE, "0x1", 0, NULL);
		expect_write(_metadata, rows[i].k, "1", 0, NULL);

		snprintf(keys, sizeof(keys), "pmsidr=0x%llx", MOCK_PMSIDR & ~rows[i].bit);
		model_change(_metadata, self, self->cpu, keys, 0);
		TH_LOG("cpu%u without %s: spe_model \"%s\"", self->cpu, rows[i].what, keys);
		expect_cpu_model(_metadata, self, self->cpu, MOCK_PMSVER,
				 MOCK_PMSIDR & ~rows[i].bit, MOCK_PMBIDR);
		/* what FL and FT need besides (MINLAT not 0; a TYPE) */
		expect_write(_metadata, K_MINLAT, "200", 0, NULL);
		expect_write(_metadata, K_TYPE, "0x1", 0, NULL);
		expect_write(_metadata, rows[i].k, "1", -EOPNOTSUPP, NULL);
		expect_write(_metadata, rows[i].k, "1\n", -EOPNOTSUPP, NULL);
		expect_write(_metadata, rows[i].k, "0", 0, NULL);
		if (rows[i].bit == SPE_PMSIDR_FNE) {
			expect_write(_metadata, K_NEVFR, "0x2", -EOPNOTSUPP, NULL);
			expect_write(_metadata, K_NEVFR, "0x80\n", -EOPNOTSUPP, NULL);
			expect_write(_metadata, K_NEVFR, "0", 0, NULL);
			/* pmsevfr does not need FnE */
			expect_write(_metadata, K_EVFR, "0x2", 0, NULL);
		}
		model_change(_metadata, self, self->cpu, "reset", 0);
	}

	/* a CPU without SPE now: not checked (needs another SPE CPU) */
	for (cpu = 0; cpu < self->nr_cpu_ids; cpu++)
		if (cpu != self->cpu && has_spe(self, cpu))
			others++;
	if (!others) {
		TH_LOG("cpu%u is the only SPE CPU: the PMSVer 0 row does not run", self->cpu);
		SPE_END();
		return;
	}
	snprintf(keys, sizeof(keys), "pmsver=0 pmsidr=0x%llx", MOCK_PMSIDR & ~SPE_PMSIDR_FE);
	model_change(_metadata, self, self->cpu, keys, 0);
	expect_cpu_model(_metadata, self, self->cpu, 0, MOCK_PMSIDR & ~SPE_PMSIDR_FE, MOCK_PMBIDR);
	TH_LOG("cpu%u without SPE (\"%s\"), %u other SPE CPUs with FE", self->cpu, keys, others);
	expect_write(_metadata, K_FE, "1", 0, NULL);
	SPE_END();
}

/*
 * Without FEAT_SPE_EFT (PMSIDR_EL1 bit 26): FP or SIMD in pmsfcr_type and
 * any pmsfcr_type_mask bit EOPNOTSUPP; B, LD, ST accepted.
 */
TEST_F_TIMEOUT(spe, eft_refusals, 180)
{
	static const __u64 ext_types[] = { 0x8, 0x10, 0x18, 0x1f, 0x9 };
	static const __u64 masks[] = { 0x1, 0x2, 0x4, 0x8, 0x10, 0x1f };
	char keys[64];
	unsigned int i;

	SPE_BEGIN();
	NEED_MODEL();
	/* with EFT (the model's defaults) */
	expect_set(_metadata, K_TYPE, 0x1f, 0);
	expect_set(_metadata, K_TYPEM, 0x1f, 0);

	snprintf(keys, sizeof(keys), "pmsidr=0x%llx", MOCK_PMSIDR & ~SPE_PMSIDR_EFT);
	model_change(_metadata, self, self->cpu, keys, 0);
	TH_LOG("cpu%u without FEAT_SPE_EFT: spe_model \"%s\"", self->cpu, keys);
	for (i = 0; i < ARRAY_SIZE(ext_types); i++)
		expect_set(_metadata, K_TYPE, ext_types[i], -EOPNOTSUPP);
	for (i = 0; i < ARRAY_SIZE(masks); i++)
		expect_set(_metadata, K_TYPEM, masks[i], -EOPNOTSUPP);
	expect_set(_metadata, K_TYPE, 0x7, 0);
	expect_set(_metadata, K_TYPE, 0x1, 0);
	expect_set(_metadata, K_TYPEM, 0, 0);
	expect_set(_metadata, K_TYPE, 0, 0);
	SPE_END();
}

/*
 * The event bits by SPE version (PMSVer of one CPU's model, 1 to 5): a bit
 * RES0 at that version but defined by a later one EOPNOTSUPP, a bit no
 * version defines (0, 2, 4, 8-10, 32-47) EINVAL at every version, the
 * IMPLEMENTATION DEFINED ones (12-15, 24-31, 48-63) accepted at every
 * version; pmsevfr at every version, pmsnevfr (FEAT_SPEv1p2) from 3.
 */
TEST_F_TIMEOUT(spe, event_versions, 180)
{
	/* the version that defines each bit (0: none, 1: every version) */
	static const struct {
		unsigned int bit, since;
	} bits[] = {
		{ 1, 1 }, { 3, 1 }, { 5, 1 }, { 7, 1 },		/* SPE */
		{ 11, 2 }, { 17, 2 }, { 18, 2 },			/* SPEv1p1 */
		{ 6, 3 },						/* SPEv1p2 */
		{ 19, 5 }, { 20, 5 }, { 21, 5 }, { 22, 5 }, { 23, 5 },	/* SPEv1p4 */
		{ 12, 1 }, { 15, 1 }, { 24, 1 }, { 31, 1 }, { 48, 1 }, { 63, 1 }, /* IMP DEF */
		{ 0, 0 }, { 2, 0 }, { 4, 0 }, { 8, 0 }, { 9, 0 }, { 10, 0 }, { 32, 0 },
		{ 40, 0 }, { 47, 0 },					/* RES0 */
	};
	unsigned int ver, i, cases = 0;
	char keys[32];

	SPE_BEGIN();
	NEED_MODEL();
	for (ver = 1; ver <= MOCK_PMSVER; ver++) {
		snprintf(keys, sizeof(keys), "pmsver=%u", ver);
		model_change(_metadata, self, self->cpu, keys, 0);
		expect_cpu_model(_metadata, self, self->cpu, ver, MOCK_PMSIDR, MOCK_PMBIDR);
		for (i = 0; i < ARRAY_SIZE(bits); i++) {
			__u64 v = 1ULL << bits[i].bit;
			int want = !bits[i].since ? -EINVAL :
				   bits[i].since > ver ? -EOPNOTSUPP : 0;

			expect_set(_metadata, K_EVFR, v, want);
			expect_set(_metadata, K_EVFR, 0, 0);
			cases++;
			if (ver < 3)
				continue;
			expect_set(_metadata, K_NEVFR, v, want);
			expect_set(_metadata, K_NEVFR, 0, 0);
			cases++;
		}
		/* a later version's bit with a defined one: still refused */
		if (ver < 3)
			expect_set(_metadata, K_EVFR, (1ULL << 6) | (1ULL << 1), -EOPNOTSUPP);
		if (ver < 5)
			expect_set(_metadata, K_EVFR, (1ULL << 19) | (1ULL << 1), -EOPNOTSUPP);
		/* every bit this version defines, at once */
		{
			__u64 all = 0;

			for (i = 0; i < ARRAY_SIZE(bits); i++)
				if (bits[i].since && bits[i].since <= ver)
					all |= 1ULL << bits[i].bit;
			expect_set(_metadata, K_EVFR, all, 0);
			expect_set(_metadata, K_EVFR, 0, 0);
		}
	}
	TH_LOG("%u event bits checked at PMSVer 1 to 5", cases);
	SPE_END();
}

/*
 * PMSIDR_EL1.Interval of one CPU raises the minimum every write checks:
 * below it EINVAL, it and any multiple of 256 above it accepted (the knob
 * first set to 4096, valid at every encoding, before the model changes).
 * The encoding is the Arm ARM's (the kernel's PMSIDR_EL1_INTERVAL_*):
 * 0b0000 256, 0b0001 reserved, 0b0010 512, 0b0011 768, 0b0100 1024,
 * 0b0101 1536, 0b0110 2048, 0b0111 3072, 0b1000 4096.
 */
TEST_F_TIMEOUT(spe, interval_minimum, 180)
{
	static const unsigned int fields[] = { 4, 3, 2, 5, 6, 7, 8 };
	unsigned int i;
	char keys[64];

	SPE_BEGIN();
	NEED_MODEL();
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		__u64 pmsidr = with_interval(MOCK_PMSIDR, fields[i]), min = interval_min(pmsidr);

		snprintf(keys, sizeof(keys), "pmsidr=0x%llx", (unsigned long long)pmsidr);
		model_change(_metadata, self, self->cpu, keys, 4096);
		expect_cpu_model(_metadata, self, self->cpu, MOCK_PMSVER, pmsidr, MOCK_PMBIDR);
		TH_LOG("cpu%u: PMSIDR_EL1.Interval 0x%x: minimum %llu (Arm ARM encoding, "
		       "0b0001 reserved)", self->cpu, fields[i], (unsigned long long)min);
		expect_set(_metadata, K_INTERVAL, 256, -EINVAL);
		expect_set(_metadata, K_INTERVAL, min - 256, -EINVAL);
		expect_set(_metadata, K_INTERVAL, min + 1, -EINVAL);
		expect_set(_metadata, K_INTERVAL, min, 0);
		expect_set(_metadata, K_INTERVAL, min + 256, 0);
		expect_set(_metadata, K_INTERVAL, 4096, 0);
		/* the minimum applies to the other knobs' writes too: they pass */
		expect_set(_metadata, K_RND, 1, 0);
		expect_set(_metadata, K_RND, 0, 0);
	}
	SPE_END();
}

/*
 * PMSIDR_EL1.CountSize 3 (16-bit counters) on every SPE CPU: MINLAT up to
 * 65535; on one CPU only (when there are others) the 12-bit ones still
 * bound it.
 */
TEST_F_TIMEOUT(spe, count_size, 180)
{
	__u64 pmsidr = with_countsize(MOCK_PMSIDR, 3);
	unsigned int cpu, spe_cpus = 0;
	char keys[64];
	bool first = true;

	SPE_BEGIN();
	NEED_MODEL();
	for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
		if (!has_spe(self, cpu))
			continue;
		if (cpu >= MAX_CPUS || amupmu_cpu_online(cpu) != 1)
			SKIP(return, "SPE cpu%u is offline: its model cannot change", cpu);
		spe_cpus++;
	}
	expect_set(_metadata, K_MINLAT, 4095, 0);
	expect_set(_metadata, K_MINLAT, 4096, -EINVAL);	/* 12 bits */

	snprintf(keys, sizeof(keys), "pmsidr=0x%llx", (unsigned long long)pmsidr);
	for (cpu = 0; cpu < self->nr_cpu_ids && cpu < MAX_CPUS; cpu++) {
		if (!has_spe(self, cpu))
			continue;
		if (first)
			model_change(_metadata, self, cpu, keys, 0);
		else
			model_add(_metadata, self, cpu, keys);
		first = false;
	}
	for (cpu = 0; cpu < self->nr_cpu_ids && cpu < MAX_CPUS; cpu++)
		if (self->model_touched & (1ULL << cpu))
			expect_cpu_model(_metadata, self, cpu, MOCK_PMSVER, pmsidr, MOCK_PMBIDR);
	TH_LOG("%u SPE CPUs with CountSize 3: \"%s\"", spe_cpus, keys);
	expect_set(_metadata, K_MINLAT, 65535, 0);
	expect_set(_metadata, K_MINLAT, 4096, 0);
	expect_set(_metadata, K_MINLAT, 65536, -EINVAL);
	expect_write(_metadata, K_MINLAT, "0x10000", -EINVAL, NULL);

	if (spe_cpus > 1) {
		/* one CPU only: the others' 12 bits bound it */
		model_change(_metadata, self, self->cpu, keys, 0);
		expect_set(_metadata, K_MINLAT, 4096, -EINVAL);
		expect_set(_metadata, K_MINLAT, 4095, 0);
	}
	SPE_END();
}

/*
 * The spe_model file: its read-out (one line per possible CPU, the
 * model's defaults); accepted writes (any subset of the keys, in any order,
 * "reset") change that CPU only and what INFO and cpuN report; a CPU that
 * keeps its buffer (PMBIDR.P) or has PMSVer 0 is reported without SPE; bad
 * writes EINVAL with nothing changed (all keys checked before any
 * applies); an offline CPU ENODEV.
 */
TEST_F_TIMEOUT(spe, model_file, 180)
{
	static const char * const bad[] = {
		"\n", "pmsver=3", "%u foo=1", "%u pmsver=3 pmsver=3", "%u pmsver=3 pmsver=4",
		"%u pmsidr=0x1 pmsidr=0x1", "%u pmbidr=0x0 pmbidr=0x0", "%u pmsver=6",
		"%u pmsver=15", "%u pmsver=-1", "%u pmsver=", "%u pmsver", "%u pmsver=x",
		"%u pmsver=3x", "%u pmsidr=0x8000000", "%u pmsidr=0xffffffff",
		"%u pmsidr=0x10000000000000000", "%u pmbidr=0x1000", "%u pmbidr=0xffff",
		"%u pmsver=3 pmsidr=0x8000000", "%u pmsidr=0x8000000 pmsver=3",
		"%u pmsver=3 pmbidr=0x1000", "%u pmsver=3 foo=1", "%u foo=1 pmsver=3",
		"%u pmsver=3 bogus", "%u pmsver=3,pmbidr=0x0", "x pmsver=3", "-1 pmsver=3",
		"%u pmsver=3 pmsidr=0x2017 pmbidr=0x0 pmsver=3",
	};
	struct amupmu_cpu_info *before;
	struct model m, m2;
	unsigned int cpu, i, c;
	char s[128];
	int ret;

	SPE_BEGIN();
	NEED_MODEL();
	c = self->cpu;
	expect_mode(_metadata, SPE_MODEL, 0600);
	MODEL_GET(&m);
	TH_LOG("spe_model:\n%s", m.text);
	for (cpu = 0; cpu < self->nr_cpu_ids && cpu < MAX_CPUS; cpu++) {
		EXPECT_TRUE(m.cpu[cpu].seen) {
			TH_LOG("no line for possible cpu%u", cpu);
		}
		EXPECT_EQ((unsigned int)MOCK_PMSVER, m.cpu[cpu].pmsver);
		EXPECT_EQ(MOCK_PMSIDR, m.cpu[cpu].pmsidr);
		EXPECT_EQ(MOCK_PMBIDR, m.cpu[cpu].pmbidr);
	}
	EXPECT_EQ(self->nr_cpu_ids < MAX_CPUS ? self->nr_cpu_ids : MAX_CPUS, m.lines);

	/* the documentation's example, then reset */
	self->model_touched |= 1ULL << c;
	snprintf(s, sizeof(s), "%u pmsver=3 pmsidr=0x2017 pmbidr=0x0\n", c);
	ret = amupmu_write_str(SPE_MODEL, s);
	ASSERT_EQ(0, ret) {
		TH_LOG("\"%s\": %s", esc(s), amupmu_errstr(ret));
	}
	expect_cpu_model(_metadata, self, c, 3, 0x2017, 0);
	MODEL_GET(&m2);
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (cpu == c)
			continue;
		EXPECT_EQ(0, memcmp(&m.cpu[cpu], &m2.cpu[cpu], sizeof(m.cpu[cpu]))) {
			TH_LOG("\"%s\" changed cpu%u's model", esc(s), cpu);
		}
	}
	ASSERT_EQ(0, model_set(c, "reset"));
	expect_cpu_model(_metadata, self, c, MOCK_PMSVER, MOCK_PMSIDR, MOCK_PMBIDR);

	/* a subset of the keys changes only those; any order */
	ASSERT_EQ(0, model_set(c, "pmbidr=0x5"));
	expect_cpu_model(_metadata, self, c, MOCK_PMSVER, MOCK_PMSIDR, 0x5);
	ASSERT_EQ(0, model_set(c, "pmsidr=0x7f"));
	expect_cpu_model(_metadata, self, c, MOCK_PMSVER, 0x7f, 0x5);
	ASSERT_EQ(0, model_set(c, "pmbidr=0x0 pmsver=4"));
	expect_cpu_model(_metadata, self, c, 4, 0x7f, 0);
	snprintf(s, sizeof(s), "%u reset", c);		/* no newline */
	ASSERT_EQ(0, amupmu_write_str(SPE_MODEL, s));
	expect_cpu_model(_metadata, self, c, MOCK_PMSVER, MOCK_PMSIDR, MOCK_PMBIDR);

	/* firmware keeps the buffer (PMBIDR_EL1.P): no SPE; PMSVer 0: no SPE */
	ASSERT_EQ(0, model_set(c, "pmbidr=0x10"));
	expect_cpu_model(_metadata, self, c, MOCK_PMSVER, MOCK_PMSIDR, SPE_PMBIDR_P);
	ASSERT_EQ(0, model_set(c, "reset"));
	ASSERT_EQ(0, model_set(c, "pmsver=0"));
	expect_cpu_model(_metadata, self, c, 0, MOCK_PMSIDR, MOCK_PMBIDR);
	ASSERT_EQ(0, model_set(c, "reset"));
	expect_cpu_model(_metadata, self, c, MOCK_PMSVER, MOCK_PMSIDR, MOCK_PMBIDR);

	/* bad writes: EINVAL, no CPU's model changed, INFO the same */
	before = calloc(self->nr_cpu_ids, sizeof(*before));
	ASSERT_NE(NULL, before);
	REQUERY();
	memcpy(before, self->cpus, self->nr_cpu_ids * sizeof(*before));
	MODEL_GET(&m);
	for (i = 0; i < ARRAY_SIZE(bad) + 4; i++) {
		if (i < ARRAY_SIZE(bad)) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
			snprintf(s, sizeof(s), bad[i], c);
#pragma GCC diagnostic pop
		} else {
			/* CPUs that are not possible */
			static const unsigned long long none[] = { 0, 4096, 4294967296ULL, 0 };

			if (i - ARRAY_SIZE(bad) == 0)
				snprintf(s, sizeof(s), "%u pmsver=3", self->nr_cpu_ids);
			else if (i - ARRAY_SIZE(bad) == 3)
				snprintf(s, sizeof(s), "%u reset", self->nr_cpu_ids);
			else
				snprintf(s, sizeof(s), "%llu pmsver=3", none[i - ARRAY_SIZE(bad)]);
		}
		ret = amupmu_write_str(SPE_MODEL, s);
		EXPECT_EQ(-EINVAL, ret) {
			TH_LOG("spe_model \"%s\": %s", esc(s), amupmu_errstr(ret));
		}
		MODEL_GET(&m2);
		EXPECT_STREQ(m.text, m2.text) {
			TH_LOG("refused \"%s\" changed the model", esc(s));
		}
		REQUERY();
		for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
			EXPECT_TRUE(before[cpu].spe_version == self->cpus[cpu].spe_version &&
				    before[cpu].pmsidr == self->cpus[cpu].pmsidr &&
				    before[cpu].flags == self->cpus[cpu].flags) {
				TH_LOG("refused \"%s\" changed INFO of cpu%u", esc(s), cpu);
			}
		}
	}
	/* an empty write (write() of 0 bytes) */
	ret = amupmu_write_str(SPE_MODEL, "");
	EXPECT_EQ(-EINVAL, ret) {
		TH_LOG("empty write: %s", amupmu_errstr(ret));
	}
	MODEL_GET(&m2);
	EXPECT_STREQ(m.text, m2.text);
	free(before);

	/* an offline CPU: ENODEV, nothing changed */
	if (self->nr_cpu_ids < 2 || !amupmu_path_exists(AMUPMU_CPU_SYSFS "/cpu1/online") ||
	    amupmu_cpu_online(1) != 1) {
		TH_LOG("no hot-pluggable cpu1: the offline row does not run");
	} else {
		ret = amupmu_set_online(1, false);
		ASSERT_EQ(0, ret) {
			TH_LOG("cpu1 offline: %s", amupmu_errstr(ret));
		}
		self->cpu1_offlined = true;
		MODEL_GET(&m);
		ret = model_set(1, "pmsver=3");
		EXPECT_EQ(-ENODEV, ret) {
			TH_LOG("\"1 pmsver=3\" with cpu1 offline: %s", amupmu_errstr(ret));
		}
		ret = model_set(1, "reset");
		EXPECT_EQ(-ENODEV, ret) {
			TH_LOG("\"1 reset\" with cpu1 offline: %s", amupmu_errstr(ret));
		}
		MODEL_GET(&m2);
		EXPECT_STREQ(m.text, m2.text) {
			TH_LOG("refused writes for offline cpu1 changed the model");
		}
		ret = amupmu_set_online(1, true);
		ASSERT_EQ(0, ret) {
			TH_LOG("cpu1 online: %s", amupmu_errstr(ret));
		}
		self->cpu1_offlined = false;
		expect_cpu_model(_metadata, self, 1, MOCK_PMSVER, MOCK_PMSIDR, MOCK_PMBIDR);
	}
	SPE_END();
}

struct nobody_write {
	const char *path, *s;
};

static int nobody_write_fn(void *arg)
{
	const struct nobody_write *w = arg;

	return amupmu_write_str(w->path, w->s);
}

static int nobody_read_fn(void *arg)
{
	const struct nobody_write *w = arg;
	char buf[64];
	ssize_t n = amupmu_read_file(w->path, buf, sizeof(buf));

	return n < 0 ? (int)n : 0;
}

/* uid 65534 can neither write nor read a knob (nor spe_model): EACCES or EPERM. */
TEST_F_TIMEOUT(spe, privilege, 180)
{
	struct nobody_write w;
	struct snap a, b;
	char path[128], why[320];
	struct model m, m2;
	unsigned int k;
	int ret;

	SPE_BEGIN();
	SNAP(&a);
	for (k = 0; k < NR_KNOBS; k++) {
		knob_path(k, path, sizeof(path));
		w.path = path;
		w.s = k == K_INTERVAL ? "512\n" : k == K_MINLAT ? "100\n" : "1\n";
		ret = amupmu_run_as(AMUPMU_NOBODY, AMUPMU_NOBODY, 0, nobody_write_fn, &w);
		EXPECT_TRUE(ret == -EACCES || ret == -EPERM) {
			TH_LOG("uid 65534 writing \"%s\" to %s: %s", esc(w.s), knobs[k].name,
			       amupmu_errstr(ret));
		}
		ret = amupmu_run_as(AMUPMU_NOBODY, AMUPMU_NOBODY, 0, nobody_read_fn, &w);
		EXPECT_TRUE(ret == -EACCES || ret == -EPERM) {
			TH_LOG("uid 65534 reading %s: %s", knobs[k].name, amupmu_errstr(ret));
		}
	}
	SNAP(&b);
	EXPECT_TRUE(snap_same(&a, &b, why, sizeof(why))) {
		TH_LOG("uid 65534's writes changed %s", why);
	}
	if (self->mock && amupmu_path_exists(SPE_MODEL)) {
		MODEL_GET(&m);
		snprintf(path, sizeof(path), "%u pmsver=3\n", self->cpu);
		w.path = SPE_MODEL;
		w.s = path;
		ret = amupmu_run_as(AMUPMU_NOBODY, AMUPMU_NOBODY, 0, nobody_write_fn, &w);
		EXPECT_TRUE(ret == -EACCES || ret == -EPERM) {
			TH_LOG("uid 65534 writing \"%s\" to spe_model: %s", esc(w.s),
			       amupmu_errstr(ret));
		}
		MODEL_GET(&m2);
		EXPECT_STREQ(m.text, m2.text);
	}
	SPE_END();
}

TEST_HARNESS_MAIN
