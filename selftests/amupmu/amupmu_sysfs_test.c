// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input to every file amupmu exposes: /sys/class/misc/amupmu/ and its
 * cpuN/ directories, /sys/module/amupmu/parameters/, and its debugfs
 * directories when they exist (/sys/kernel/debug/amupmu, .../arm_spe).
 *
 * A writable file must be in the writable[] table below, with the range
 * its documentation gives (or, for a command file such as the mock's
 * debugfs cpu_pm, its accepted commands); a numeric one gets non-numeric text, negative,
 * overflowing and out-of-range numbers, reserved bits, a 1 MiB string and
 * partial writes, each refused with the documented errno, and the value
 * read back unchanged; a boolean one (pmu_shared) text that is no boolean. Every other file must be read-only by mode and
 * refuse to open for writing, also for root (EACCES: no store()), with its
 * value unchanged. A writable file that is not in the table fails the test
 * (document it first). A valid write must work (and is undone).
 *
 * Backend: none needed (sysfs, module parameters); run on every board.
 */
#include <dirent.h>
#include <limits.h>
#include <sys/mman.h>

#include "amupmu_test.h"

#define DEBUGFS		"/sys/kernel/debug"
#define VALUE_MAX	4096
#define MIB		(1024 * 1024)

/* A writable file: its path relative to its directory, and its contract. */
struct writable {
	const char *dir;
	const char *name;
	unsigned long long min, max;	/* accepted range */
	int err_range;			/* errno out of range */
	const char *command;		/* not a value: a harmless valid command */
	const char *undo;		/* the command that undoes it, or NULL */
	const char * const *bad;	/* more bad commands of this file, NULL-terminated */
	bool keeps;			/* the command may leave the contents as they were */
};

/* the mock AMU model's knobs: out of range, unknown keys, half-valid lines */
static const char * const amu_model_bad[] = {
	"0 ipc=8001", "0 stall=1001", "0 active=1001", "0 active=autos", "0 aux0=1001",
	"0 freq=999999", "0 freq=10000000001", "0 enable0=0x10", "0 enable1=0x4",
	"0 ipc", "0 ipc=", "0 =1", "0 ipc=1 x=2", "0 ipc=1 stall=2000", NULL,
};

/* the mock AMU's register-read count: only "0" (reset) */
static const char * const amu_reads_bad[] = { "1", "00", "0x0", "-0", "reset", "0 reset", NULL };

/* the mock SPE identification: out of range, unknown or repeated keys */
static const char * const spe_model_bad[] = {
	"0 pmsver=6", "0 pmsidr=0x8000000", "0 pmbidr=0x1000", "0 pmsver=1 pmsver=2", "0 foo=1",
	"0 pmsver", "0 pmsver=", "0 =1", "0 resets", "0 reset x", NULL,
};

/* the SPE event sets: bits no SPE version defines, not numbers */
static const char * const spe_evfr_bad[] = {
	"0x1", "0x4", "0x100", "0x100000000", "0x800000000000", "0x2 ", "2x", NULL,
};

/* the mock SPE stream, statistics and fault injection */
static const char * const spe_stream_bad[] = {
	"0 lat=0", "0 lat=1001", "0 ops_per_us=0", "0 ops_per_us=100001", "0 tick_us=9",
	"0 branch=900 load=200", "0 foo=1", "0 seed", "0 lat=9 lat=10", NULL,
};
static const char * const spe_stats_bad[] = { "0 resets", "0 reset x", "all", "al reset", NULL };
static const char * const spe_fault_bad[] = { "0 s3", "0 s1 s2", "0 none x", "0 S1", NULL };

/* Documented writable files: Documentation/admin-guide/amupmu.rst. */
static const struct writable writable[] = {
	/* below the floor, above U32_MAX, not a number: EINVAL */
	{ "/sys/module/amupmu/parameters", "sample_period_min", 1000, 0xffffffffULL, EINVAL, NULL,
	  NULL, NULL, false },
	/* exclusive mode's throttle (ABI 2.4): 0, above U32_MAX, not a number: EINVAL */
	{ "/sys/module/amupmu/parameters", "sample_rate_max", 1, 0xffffffffULL, EINVAL, NULL,
	  NULL, NULL, false },
	/* shared mode (ABI 2.3): a bool (bool_files[]); what kstrtobool() refuses, EINVAL */
	{ "/sys/module/amupmu/parameters", "pmu_shared", 0, 1, EINVAL, NULL, NULL, NULL, false },
	/*
	 * mock builds: "<cpu>" power-cycles a CPU, "<cpu> fail" aborts the
	 * entry; anything else EINVAL (amupmu_cpupm_test has the rest)
	 */
	{ DEBUGFS "/amupmu", "cpu_pm", 0, 0, EINVAL, "0 fail", NULL, NULL, false },
	/*
	 * mock builds (ABI 2.1): "<cpu> key=value..." sets the AMU model of a
	 * CPU (amupmu_amu_info_test has the rest); the sweep moves aux1 of CPU 0
	 * off its default and back
	 */
	{ DEBUGFS "/amupmu", "amu_model", 0, 0, EINVAL, "0 aux1=249", "0 aux1=250",
	  amu_model_bad, false },
	/*
	 * mock builds: the AMU system register reads the model served; "0"
	 * resets the count (it may be 0 already: keeps)
	 */
	{ DEBUGFS "/amupmu", "amu_reads", 0, 0, EINVAL, "0", NULL, amu_reads_bad, true },
	/*
	 * mock builds (ABI 2.2): "<cpu> key=value..." sets a CPU's SPE
	 * identification (amupmu_spe_test has the rest); the sweep gives CPU 0
	 * a PMBIDR_EL1.Align of 1 and resets it
	 */
	{ DEBUGFS "/amupmu", "spe_model", 0, 0, EINVAL, "0 pmbidr=0x1", "0 reset",
	  spe_model_bad, false },
	/*
	 * the SPE filter defaults (Documentation/admin-guide/amupmu.rst, "SPE
	 * filter defaults"), at their load values: one field each; the event
	 * sets take any 64-bit value the CPUs define, so they get the command
	 * sweep (an event bit the architecture defines at no version is
	 * EINVAL: amupmu_spe_test has the rest)
	 */
	{ DEBUGFS "/arm_spe", "pmsfcr_fe", 0, 1, EINVAL, NULL, NULL, NULL, false },
	{ DEBUGFS "/arm_spe", "pmsfcr_ft", 0, 1, EINVAL, NULL, NULL, NULL, false },
	{ DEBUGFS "/arm_spe", "pmsfcr_fl", 0, 0, EINVAL, NULL, NULL, NULL, false },
	{ DEBUGFS "/arm_spe", "pmsfcr_fne", 0, 1, EINVAL, NULL, NULL, NULL, false },
	{ DEBUGFS "/arm_spe", "pmsfcr_type", 0, 0x1f, EINVAL, NULL, NULL, NULL, false },
	{ DEBUGFS "/arm_spe", "pmsfcr_type_mask", 0, 0x1f, EINVAL, NULL, NULL, NULL, false },
	/* the mock's 12-bit CountSize: arm_spe exists on mock boards only here */
	{ DEBUGFS "/arm_spe", "pmslatfr_minlat", 0, 0xfff, EINVAL, NULL, NULL, NULL, false },
	{ DEBUGFS "/arm_spe", "pmsirr_interval", 256, 0xffffff00, EINVAL, NULL, NULL, NULL, false },
	{ DEBUGFS "/arm_spe", "pmsirr_rnd", 0, 1, EINVAL, NULL, NULL, NULL, false },
	/* mock builds: the SPE model's stream knobs, statistics, fault injection */
	{ DEBUGFS "/amupmu", "spe_stream", 0, 0, EINVAL, "0 lat=9", "0 lat=8", spe_stream_bad, false },
	{ DEBUGFS "/amupmu", "spe_stats", 0, 0, EINVAL, "all reset", NULL, spe_stats_bad, true },
	{ DEBUGFS "/amupmu", "spe_fault", 0, 0, EINVAL, "0 s1", "0 none", spe_fault_bad, false },
	{ DEBUGFS "/arm_spe", "pmsevfr", 0, 0, EINVAL, "0x2", "0x0", spe_evfr_bad, false },
	{ DEBUGFS "/arm_spe", "pmsnevfr", 0, 0, EINVAL, "0x2", "0x0", spe_evfr_bad, false },
};

/* Files the driver core adds to every device: not amupmu's. */
static const char * const core_files[] = { "uevent", "dev", "power", "subsystem", "device" };

/* Writable files that are bool module parameters (Y/N): sweep_bool(). */
static const char * const bool_files[] = { "pmu_shared" };

/* Files whose value moves by itself (counters): not compared. */
static const char * const moving_files[] = { "pmu_counters_view" };

static bool in_list(const char *name, const char * const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

static const struct writable *find_writable(const char *dir, const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(writable); i++)
		if (writable[i].name && strstr(dir, writable[i].dir) &&
		    !strcmp(name, writable[i].name))
			return &writable[i];
	return NULL;
}

/* Write @len bytes of @s to @path in one write(). Returns 0 or -errno. */
static int write_file(const char *path, const char *s, size_t len)
{
	ssize_t n;
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	close(fd);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

struct counts {
	unsigned int files, writable, cases;
};

/* The bad inputs of a writable file, each refused, the value unchanged. */
static void sweep_writable(struct __test_metadata *_metadata, const char *path,
			   const struct writable *w, struct counts *c)
{
	static char big[MIB + 1];
	char before[VALUE_MAX], after[VALUE_MAX], s[64];
	const char *inputs[] = {
		"abc", "0x", "1a", "\n", " ", "-1", "-0x1", "18446744073709551616",
		"99999999999999999999999999", "4294967296", "1.5", "1e3", "1 2",
	};
	size_t i;
	int ret;

	ASSERT_LE(0, amupmu_read_file(path, before, sizeof(before)));
	memset(big, '7', MIB);
	for (i = 0; i <= ARRAY_SIZE(inputs) + 3; i++) {
		const char *in = s;
		size_t len;
		int want = -EINVAL;

		if (i < ARRAY_SIZE(inputs)) {
			in = inputs[i];
		} else if (i == ARRAY_SIZE(inputs)) {
			snprintf(s, sizeof(s), "%llu", w->max + 1);
			want = -w->err_range;
		} else if (i == ARRAY_SIZE(inputs) + 1 && w->min) {
			snprintf(s, sizeof(s), "%llu", w->min - 1);
			want = -w->err_range;
		} else if (i == ARRAY_SIZE(inputs) + 2) {
			in = big;	/* 1 MiB of digits: longer than a page */
		} else {
			snprintf(s, sizeof(s), "0x%llx", 1ULL << 63);	/* a reserved bit */
		}
		len = in == big ? MIB : strlen(in);
		ret = write_file(path, in, len);
		EXPECT_NE(0, ret) {
			TH_LOG("%s: '%.32s' (%zu bytes) accepted", path, in, len);
		}
		/* 1 MiB: sysfs itself refuses or truncates it; any error */
		if (in != big) {
			EXPECT_EQ(want, ret) {
				TH_LOG("%s: '%.32s': %s", path, in, strerror(-ret));
			}
		}
		ASSERT_LE(0, amupmu_read_file(path, after, sizeof(after)));
		EXPECT_STREQ(before, after);
		c->cases++;
	}
	/*
	 * A partial write: the first byte of a valid number is a whole write
	 * of its own in sysfs, refused when that number is out of range.
	 */
	snprintf(s, sizeof(s), "%llu", w->max);
	if ((unsigned long long)(s[0] - '0') < w->min) {
		ret = write_file(path, s, 1);
		EXPECT_EQ(-w->err_range, ret) {
			TH_LOG("%s: partial write '%c': %s", path, s[0],
			       ret ? strerror(-ret) : "accepted");
		}
		ASSERT_LE(0, amupmu_read_file(path, after, sizeof(after)));
		EXPECT_STREQ(before, after);
		c->cases++;
	}
	/* the file is writable for real: the minimum, read back, then undone */
	snprintf(s, sizeof(s), "%llu", w->min);
	EXPECT_EQ(0, write_file(path, s, strlen(s)));
	ASSERT_LE(0, amupmu_read_file(path, after, sizeof(after)));
	EXPECT_EQ(w->min, strtoull(after, NULL, 0));
	EXPECT_EQ(0, write_file(path, before, strlen(before)));
	ASSERT_LE(0, amupmu_read_file(path, after, sizeof(after)));
	EXPECT_STREQ(before, after);
	c->cases++;
}

/*
 * A bool parameter: text that is no boolean refused with EINVAL, the value
 * unchanged; Y, N, 1, 0, y, n accepted and read back as Y or N; then the
 * value it had.
 */
static void sweep_bool(struct __test_metadata *_metadata, const char *path,
		       struct counts *c)
{
	static const char * const bad[] = {
		"2", "9", "-1", "+1", "x", "abc", "maybe", "o", "\n", " ", "\t1",
	};
	static const struct {
		const char *in, *out;
	} good[] = {
		{ "N", "N" }, { "Y", "Y" }, { "0", "N" }, { "1", "Y" }, { "n\n", "N" }, { "y\n", "Y" },
	};
	static char big[MIB + 1];
	char before[VALUE_MAX], after[VALUE_MAX];
	size_t i;
	int ret;

	ASSERT_EQ(0, amupmu_read_line(path, before, sizeof(before)));
	EXPECT_TRUE(!strcmp(before, "Y") || !strcmp(before, "N")) {
		TH_LOG("%s reads '%s'", path, before);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ret = write_file(path, bad[i], strlen(bad[i]));
		EXPECT_EQ(-EINVAL, ret) {
			TH_LOG("%s: '%s': %s", path, bad[i], ret ? strerror(-ret) : "accepted");
		}
		ASSERT_EQ(0, amupmu_read_line(path, after, sizeof(after)));
		EXPECT_STREQ(before, after);
		c->cases++;
	}
	/* 1 MiB of '7': sysfs refuses or truncates it, kstrtobool() refuses '7' */
	memset(big, '7', MIB);
	EXPECT_NE(0, write_file(path, big, MIB));
	ASSERT_EQ(0, amupmu_read_line(path, after, sizeof(after)));
	EXPECT_STREQ(before, after);
	c->cases++;
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		ret = write_file(path, good[i].in, strlen(good[i].in));
		EXPECT_EQ(0, ret) {
			TH_LOG("%s: '%s': %s", path, good[i].in, strerror(-ret));
		}
		ASSERT_EQ(0, amupmu_read_line(path, after, sizeof(after)));
		EXPECT_STREQ(good[i].out, after);
		c->cases++;
	}
	EXPECT_EQ(0, write_file(path, before, strlen(before)));
	ASSERT_EQ(0, amupmu_read_line(path, after, sizeof(after)));
	EXPECT_STREQ(before, after);
	c->cases++;
}

/*
 * A command file: bad commands refused with EINVAL, the file's contents
 * unchanged; the harmless valid command works and changes them.
 */
static void sweep_command(struct __test_metadata *_metadata, const char *path,
			  const struct writable *w, struct counts *c)
{
	static const char * const inputs[] = {
		"\n", "abc", "-1", "0x", "1a", "0 0", "0 fails", "0 fail x", "0,1", "0-1", " ",
		"fail", "18446744073709551616",
	};
	char before[VALUE_MAX], after[VALUE_MAX];
	size_t i;
	int ret;

	ASSERT_LE(0, amupmu_read_file(path, before, sizeof(before)));
	for (i = 0; i < ARRAY_SIZE(inputs); i++) {
		ret = write_file(path, inputs[i], strlen(inputs[i]));
		EXPECT_EQ(-EINVAL, ret) {
			TH_LOG("%s: '%s': %s", path, inputs[i], ret ? strerror(-ret) : "accepted");
		}
		ASSERT_LE(0, amupmu_read_file(path, after, sizeof(after)));
		EXPECT_STREQ(before, after);
		c->cases++;
	}
	for (i = 0; w->bad && w->bad[i]; i++) {
		ret = write_file(path, w->bad[i], strlen(w->bad[i]));
		EXPECT_EQ(-EINVAL, ret) {
			TH_LOG("%s: '%s': %s", path, w->bad[i], ret ? strerror(-ret) : "accepted");
		}
		ASSERT_LE(0, amupmu_read_file(path, after, sizeof(after)));
		EXPECT_STREQ(before, after);
		c->cases++;
	}
	ret = write_file(path, w->command, strlen(w->command));
	EXPECT_EQ(0, ret) {
		TH_LOG("%s: '%s': %s", path, w->command, strerror(-ret));
	}
	ASSERT_LE(0, amupmu_read_file(path, after, sizeof(after)));
	if (!w->keeps) {
		EXPECT_STRNE(before, after) {
			TH_LOG("%s: '%s' accepted but nothing changed", path, w->command);
		}
	}
	c->cases++;
	if (!w->undo)
		return;
	ret = write_file(path, w->undo, strlen(w->undo));
	EXPECT_EQ(0, ret) {
		TH_LOG("%s: '%s': %s", path, w->undo, strerror(-ret));
	}
	ASSERT_LE(0, amupmu_read_file(path, after, sizeof(after)));
	EXPECT_STREQ(before, after) {
		TH_LOG("%s: '%s' did not undo '%s'", path, w->undo, w->command);
	}
	c->cases++;
}

/* A read-only file: no write bit, and no open for writing, even for root. */
static void check_readonly(struct __test_metadata *_metadata, const char *path,
			   const char *name, struct counts *c)
{
	static const int modes[] = { O_WRONLY, O_RDWR, O_WRONLY | O_TRUNC, O_WRONLY | O_APPEND };
	char before[VALUE_MAX], after[VALUE_MAX];
	bool moving = in_list(name, moving_files, ARRAY_SIZE(moving_files));
	size_t i;
	int fd;

	ASSERT_LE(0, amupmu_read_file(path, before, sizeof(before))) {
		TH_LOG("%s: not readable", path);
	}
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		fd = open(path, modes[i] | O_CLOEXEC);
		EXPECT_EQ(-1, fd) {
			TH_LOG("%s opens for writing (flags 0x%x)", path, modes[i]);
		}
		if (fd >= 0) {
			EXPECT_GT(0, write(fd, "abc", 3));
			close(fd);
		} else {
			EXPECT_EQ(EACCES, errno) {
				TH_LOG("%s: open for writing: %s", path, strerror(errno));
			}
		}
		c->cases++;
	}
	ASSERT_LE(0, amupmu_read_file(path, after, sizeof(after)));
	if (!moving) {
		EXPECT_STREQ(before, after);
	}
}

static void walk(struct __test_metadata *_metadata, const char *dir, bool recurse,
		 struct counts *c)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	ASSERT_NE(NULL, d) {
		TH_LOG("%s: %s", dir, strerror(errno));
	}
	while ((de = readdir(d))) {
		const struct writable *w;

		if (de->d_name[0] == '.' ||
		    in_list(de->d_name, core_files, ARRAY_SIZE(core_files)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (recurse)
				walk(_metadata, path, false, c);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		c->files++;
		w = find_writable(dir, de->d_name);
		if (st.st_mode & 0222) {
			c->writable++;
			EXPECT_NE(NULL, w) {
				TH_LOG("%s: writable (mode %o) but not documented in writable[]",
				       path, st.st_mode & 0777);
			}
			EXPECT_EQ(0U, st.st_mode & 0022) {
				TH_LOG("%s: writable by group or others (mode %o)", path,
				       st.st_mode & 0777);
			}
			if (w && w->command)
				sweep_command(_metadata, path, w, c);
			else if (w && in_list(de->d_name, bool_files, ARRAY_SIZE(bool_files)))
				sweep_bool(_metadata, path, c);
			else if (w)
				sweep_writable(_metadata, path, w, c);
		} else {
			EXPECT_EQ(NULL, w) {
				TH_LOG("%s: documented as writable, mode %o", path,
				       st.st_mode & 0777);
			}
			check_readonly(_metadata, path, de->d_name, c);
		}
	}
	closedir(d);
}

FIXTURE(sysfs) {
	int unused;
};

FIXTURE_SETUP(sysfs)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(sysfs)
{
}

TEST_F(sysfs, bad_input)
{
	static const char * const dirs[] = {
		AMUPMU_SYSFS, "/sys/module/amupmu/parameters", DEBUGFS "/amupmu",
		DEBUGFS "/arm_spe",
	};
	struct counts c = { 0 };
	size_t i;

	if (geteuid() != 0)
		SKIP(return, "needs root (writes as root must fail too)");
	if (!amupmu_path_exists(AMUPMU_SYSFS) && amupmu_allow_skip())
		SKIP(return, "amupmu not loaded");
	TH_LOG("backend: sysfs / module parameters / debugfs of the loaded module");
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		if (i >= 2 && !amupmu_path_exists(dirs[i]))
			continue;
		walk(_metadata, dirs[i], i == 0, &c);
	}
	EXPECT_LT(10U, c.files);
	TH_LOG("%u files, %u writable, %u cases", c.files, c.writable, c.cases);
	printf("# AMUPMU-FIGURE sysfs files=%u writable=%u cases=%u\n", c.files, c.writable,
	       c.cases);
	fflush(stdout);
}

/*
 * ABI 2.1: the AMU register files of cpuN/ follow AMUPMU_CPU_AMU (the mock
 * build's model on every CPU; none on production builds on QEMU, nor with
 * amu=0); the flag files amu_off and amu_zero are always there; all
 * read-only; bad_input above writes to each.
 */
TEST_F(sysfs, amu_files)
{
	static const char * const names[] = {
		"amu_version", "amcfgr_el0", "amcgcr_el0", "amcr_el0", "amcntenset0_el0",
		"amcntenset1_el0", "amu_group0_events", "amu_group1_events",
	};
	struct amupmu_cpu_info *cpus;
	static struct amupmu_cpumask possible;
	struct amupmu_info info;
	unsigned int cpu, files = 0;
	char path[160];
	struct stat st;
	size_t i;
	int fd;

	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0 && amupmu_allow_skip())
		SKIP(return, "amupmu not loaded");
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, amupmu_possible_cpus(&possible));
	cpus = calloc(possible.nr, sizeof(*cpus));
	ASSERT_NE(NULL, cpus);
	ASSERT_EQ(0, amupmu_query(fd, &info, cpus, possible.nr));
	TH_LOG("backend: %s", info.features & AMUPMU_FEAT_AMU ?
	       (info.features & AMUPMU_FEAT_MOCK ? "mock AMU model" : "hardware AMU") :
	       "no usable AMU");
	for (cpu = 0; cpu < possible.nr; cpu++) {
		bool amu = cpus[cpu].flags & AMUPMU_CPU_AMU;

		if (!(cpus[cpu].flags & AMUPMU_CPU_POSSIBLE))
			continue;
		for (i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), AMUPMU_SYSFS "/cpu%u/%s", cpu,
				 i ? "amu_zero" : "amu_off");
			ASSERT_EQ(0, stat(path, &st)) {
				TH_LOG("%s: %s", path, strerror(errno));
			}
			EXPECT_EQ(0444U, st.st_mode & 07777);
		}
		for (i = 0; i < ARRAY_SIZE(names); i++) {
			snprintf(path, sizeof(path), AMUPMU_SYSFS "/cpu%u/%s", cpu, names[i]);
			if (!amu) {
				EXPECT_FALSE(amupmu_path_exists(path)) {
					TH_LOG("%s without AMUPMU_CPU_AMU (flags 0x%x)", path,
					       cpus[cpu].flags);
				}
				continue;
			}
			ASSERT_EQ(0, stat(path, &st)) {
				TH_LOG("%s: %s", path, strerror(errno));
			}
			EXPECT_EQ(0444U, st.st_mode & 07777);
			files++;
		}
	}
	TH_LOG("%u AMU files", files);
	free(cpus);
	close(fd);
}

TEST_HARNESS_MAIN
