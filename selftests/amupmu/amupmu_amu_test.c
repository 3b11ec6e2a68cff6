// SPDX-License-Identifier: GPL-2.0
/*
 * The Activity Monitors (ABI 2.1): AMUPMU_AMU_READ, the AMU fields of
 * AMUPMU_INFO's entries and the AMU files of /sys/class/misc/amupmu/cpuN/,
 * against include/uapi/linux/amupmu.h.
 *
 * Backends:
 *  - mock builds (CONFIG_AMUPMU_MOCK, AMUPMU_FEAT_MOCK): every CPU has the
 *    model's AMUv1 (4 architected group 0 counters, group 1 events 0x0300
 *    and 0x0301), driven through /sys/kernel/debug/amupmu/amu_model:
 *      "<cpu> key=value..."  freq (Hz), ipc and stall (per mille of
 *      CPU_CYCLES), active (per mille of the time, or "auto": from the
 *      kernel's idle time of that CPU), aux0/aux1 (group 1 counter n per
 *      mille of CPU_CYCLES), enable0/enable1 (AMCNTENSET0/1 masks);
 *    CNT_CYCLES advances at CNTFRQ while the CPU is active, CPU_CYCLES at
 *    freq while active; every counter stops while the CPU is offline and
 *    a disabled one holds its value; the debugfs cpu_pm power-down zeroes
 *    the model's counters (amupmu adds the old values back: "restarts").
 *    The tests set the model, measure the rates with two reads and compare
 *    (frequency within 0.1 %), take a CPU offline and back, power it down,
 *    disable counters, and read from several threads at once.
 *    The model computes each value when its register is read: its reads
 *    replace the hardware's mrs, so figures of time are the model's.
 *  - production builds on QEMU (no AMU: QEMU hides it, and an AMU
 *    register access is UNDEFINED there): AMUPMU_AMU_READ is refused with
 *    EOPNOTSUPP once the size, flags and reserved fields passed, no cpuN
 *    has an AMU file, and the whole request set runs without the kernel
 *    logging an oops or an undefined instruction (the last test).
 *  - the module parameter amu=0 (amupmu_modparam.sh loads it so and runs
 *    this program): every CPU with an AMU reports AMUPMU_CPU_AMU_OFF, none
 *    AMUPMU_CPU_AMU, and AMUPMU_AMU_READ is EOPNOTSUPP.
 *
 * Errno order of AMUPMU_AMU_READ (the kernel's, amupmu_amu_cmd_read(); the
 * header lists the errnos without an order): the dispatcher's size checks
 * (EINVAL, E2BIG, EFAULT), then the struct's own fields (flags, reserved,
 * entry_size, nr_cpus above the maximum: EINVAL), then CAP_PERFMON
 * (EACCES, amupmu_priv_test's rows), then a usable AMU (EOPNOTSUPP), then
 * the CPU set (EINVAL, ENODEV, EFAULT) and the entries' room (EINVAL,
 * EFAULT). Where no CPU has a usable AMU the sweep below therefore expects
 * EOPNOTSUPP for the CPU-set and room checks, and the field errno before.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <sched.h>
#include <sys/mman.h>

#include "amupmu_test.h"

#define MODEL_FILE	"/sys/kernel/debug/amupmu/amu_model"
#define CPU_PM_FILE	"/sys/kernel/debug/amupmu/cpu_pm"
#define AMU_PARAM	"/sys/module/amupmu/parameters/amu"
#define MAX_CPUS	64	/* the tests use CPUs below 64: one bitmap word */
#define NSEC_PER_MSEC	1000000ULL
#define ENTRY_SZ	sizeof(struct amupmu_amu_cpu)
#define READ_SZ		sizeof(struct amupmu_amu_read)

/* the model's defaults (the kernel's contract for the mock build) */
#define DEF_FREQ	2000000000ULL
#define DEF_IPC		1500U
#define DEF_STALL	250U
#define DEF_AUX0	500U
#define DEF_AUX1	250U
#define DEF_MODEL	"freq=2000000000 ipc=1500 stall=250 active=auto aux0=500 aux1=250 " \
			"enable0=0xf enable1=0x3 frozen=0"
#define MOCK_CG0NC	4
#define MOCK_CG1NC	2
static const __u16 mock_group0[MOCK_CG0NC] = {
	AMU_EV_CPU_CYCLES, AMU_EV_CNT_CYCLES, AMU_EV_INST_RETIRED, AMU_EV_STALL_BACKEND_MEM,
};
static const __u16 mock_group1[MOCK_CG1NC] = { 0x0300, 0x0301 };

/* The AMU files of cpuN/ (ABI 2.1 adds all but the first three). */
static const char * const amu_files[] = {
	"amu_version", "amcfgr_el0", "amcgcr_el0", "amcr_el0", "amcntenset0_el0",
	"amcntenset1_el0", "amu_group0_events", "amu_group1_events",
};

/* ---------------------------------------------------------------- helpers */

static __u64 mono_raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void sleep_ns(__u64 ns)
{
	struct timespec ts = { ns / NSEC_PER_SEC, ns % NSEC_PER_SEC };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* "<cpu> <settings>" to the model. Returns 0 or -errno. */
static int model_set(unsigned int cpu, const char *settings)
{
	char s[256];

	snprintf(s, sizeof(s), "%u %s\n", cpu, settings);
	return amupmu_write_str(MODEL_FILE, s);
}

struct model_cpu {
	bool seen;
	unsigned long long freq;
	unsigned int ipc, stall, aux0, aux1, enable0, enable1, frozen;
	int active;		/* -1: auto */
};

struct model {
	unsigned int lines;
	struct model_cpu cpu[MAX_CPUS];
	char bad[160];		/* the first line that does not parse */
};

/*
 * Parse the model file: one line per possible CPU, "cpu<N> freq=<Hz>
 * ipc=<n> stall=<n> active=<n>|auto aux0=<n> aux1=<n> enable0=0x<m>
 * enable1=0x<m>". Returns 0, -errno, or -EPROTO with m->bad set.
 */
static int model_get(struct model *m)
{
	char buf[16384], *line, *save;
	ssize_t len = amupmu_read_file(MODEL_FILE, buf, sizeof(buf));

	memset(m, 0, sizeof(*m));
	if (len < 0)
		return (int)len;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct model_cpu c = { .seen = true };
		char active[16];
		unsigned int cpu;
		int end = -1;

		if (sscanf(line, "cpu%u freq=%llu ipc=%u stall=%u active=%15s aux0=%u aux1=%u "
			   "enable0=0x%x enable1=0x%x frozen=%u%n", &cpu, &c.freq, &c.ipc,
			   &c.stall, active, &c.aux0, &c.aux1, &c.enable0, &c.enable1, &c.frozen,
			   &end) != 10 ||
		    end != (int)strlen(line) || cpu >= MAX_CPUS || m->cpu[cpu].seen) {
			snprintf(m->bad, sizeof(m->bad), "%.150s", line);
			return -EPROTO;
		}
		if (!strcmp(active, "auto")) {
			c.active = -1;
		} else {
			char *e;

			c.active = (int)strtol(active, &e, 10);
			if (*e) {
				snprintf(m->bad, sizeof(m->bad), "%.150s", line);
				return -EPROTO;
			}
		}
		m->cpu[cpu] = c;
		m->lines++;
	}
	return 0;
}

/* The CPUs below MAX_CPUS that are online, as a bitmap word, and their count. */
static __u64 online_word(unsigned int nr_cpu_ids, unsigned int *count)
{
	unsigned int cpu;
	__u64 w = 0;

	*count = 0;
	for (cpu = 0; cpu < nr_cpu_ids && cpu < MAX_CPUS; cpu++)
		if (amupmu_cpu_online(cpu) == 1) {
			w |= 1ULL << cpu;
			(*count)++;
		}
	return w;
}

/* Run the calling thread on every CPU again. */
static void unpin(void)
{
	cpu_set_t set;
	unsigned int cpu;

	CPU_ZERO(&set);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* a / b, with b 0 as NAN */
static double ratio(__u64 a, __u64 b)
{
	return b ? (double)a / (double)b : NAN;
}

/* |got - want| <= rel * |want| + abs */
static bool near(double got, double want, double rel, double abs_tol)
{
	return fabs(got - want) <= rel * fabs(want) + abs_tol;
}

/* ---------------------------------------------------------------- fixture */

FIXTURE(amu) {
	int fd;
	unsigned int nr_cpu_ids;
	struct amupmu_info info;
	struct amupmu_cpu_info *cpus;
	bool mock;		/* AMUPMU_FEAT_MOCK */
	bool usable;		/* AMUPMU_FEAT_AMU: some CPU's AMU is in use */
	bool param_off;		/* loaded with amu=0 */
	bool model;		/* the mock's amu_model file is there */
	bool model_touched;	/* put every online CPU back to the defaults */
	bool cpu1_offlined;
	bool icount;		/* INST_RETIRED implemented (QEMU: -icount, guest time) */
	char backend[384];
};

FIXTURE_SETUP(amu)
{
	static struct amupmu_cpumask possible;
	char board[192], param[8] = "";

	self->fd = -1;
	ASSERT_EQ(0, amupmu_possible_cpus(&possible));
	ASSERT_LT(0U, possible.nr);
	self->nr_cpu_ids = possible.nr;
	AMUPMU_OPEN_DEVICE(self->fd);
	self->cpus = calloc(self->nr_cpu_ids, sizeof(*self->cpus));
	ASSERT_NE(NULL, self->cpus);
	ASSERT_EQ(0, amupmu_query(self->fd, &self->info, self->cpus, self->nr_cpu_ids));
	ASSERT_EQ((__u32)AMUPMU_CPU_INFO_SIZE_VER2, self->info.cpu_entry_size);
	self->mock = self->info.features & AMUPMU_FEAT_MOCK;
	self->usable = self->info.features & AMUPMU_FEAT_AMU;
	if (!amupmu_read_line(AMU_PARAM, param, sizeof(param)))
		self->param_off = param[0] == 'N' || param[0] == 'n' || param[0] == '0';
	self->model = amupmu_path_exists(MODEL_FILE);
	self->icount = amupmu_event_implemented(&self->cpus[0], PMUV3_EV_INST_RETIRED);
	amupmu_board_line(board, sizeof(board));
	snprintf(self->backend, sizeof(self->backend),
		 "%s; module parameter amu=%s; board \"%s\"",
		 self->param_off ? "AMU not used (module parameter amu=0)" :
		 self->usable && self->mock ?
		 "mock AMU model (CONFIG_AMUPMU_MOCK: the model computes each register read, no mrs)" :
		 self->usable ? "hardware AMU" :
		 "no AMU (QEMU hides it): production paths, no AMU register touched",
		 param[0] ? param : "?", board[0] ? board : "unknown");
}

FIXTURE_TEARDOWN(amu)
{
	unsigned int cpu;

	if (self->cpu1_offlined && amupmu_set_online(1, true))
		TH_LOG("could not put cpu1 back online");
	if (self->model_touched)
		for (cpu = 0; cpu < self->nr_cpu_ids && cpu < MAX_CPUS; cpu++)
			if (amupmu_cpu_online(cpu) == 1 && model_set(cpu, DEF_MODEL))
				TH_LOG("could not reset the model of cpu%u", cpu);
	free(self->cpus);
	if (self->fd >= 0)
		close(self->fd);
}

/* First statement of every test: setup skipped, and the backend. */
#define AMU_BEGIN() do {							\
	AMUPMU_SKIPPED_IN_SETUP(self->fd);					\
	TH_LOG("backend: %s", self->backend);					\
} while (0)

/* The tests of the mock model: a usable mock AMU and its knobs. */
#define NEED_MODEL() do {							\
	if (!self->usable)							\
		SKIP(return, "no usable AMU (%s)", self->backend);		\
	if (!self->mock || !self->model)					\
		SKIP(return, "needs the mock build's %s", MODEL_FILE);		\
	if (geteuid() != 0)							\
		SKIP(return, "the model's knobs need root");			\
	self->model_touched = true;						\
} while (0)

#define NEED_CPU1_HOTPLUG() do {						\
	if (self->nr_cpu_ids < 2 ||						\
	    !amupmu_path_exists(AMUPMU_CPU_SYSFS "/cpu1/online"))		\
		SKIP(return, "no hot-pluggable cpu1");				\
	if (amupmu_cpu_online(1) != 1)						\
		SKIP(return, "cpu1 is offline already");			\
} while (0)

/* A successful AMU_READ of the CPUs in @word into @e (room for MAX_CPUS). */
static int read_word(int fd, __u64 word, struct amupmu_amu_cpu *e, struct amupmu_amu_read *rd)
{
	amupmu_amu_read_init(rd, &word, sizeof(word), e, MAX_CPUS, ENTRY_SZ);
	return amupmu_ioctl(fd, AMUPMU_AMU_READ, rd);
}

#define READ_CPU(cpu, e) do {							\
	struct amupmu_amu_read _rd;						\
	int _ret = amupmu_amu_read_cpu(self->fd, (cpu), (e), &_rd);		\
	ASSERT_EQ(0, _ret) {							\
		TH_LOG("AMU_READ of cpu%u: %s", (cpu), amupmu_errstr(_ret));	\
	}									\
	ASSERT_EQ(1U, _rd.nr_cpus);						\
} while (0)

#define MODEL_SET(cpu, s) do {							\
	int _ret = model_set((cpu), (s));					\
	ASSERT_EQ(0, _ret) {							\
		TH_LOG("%s \"%u %s\": %s", MODEL_FILE, (cpu), (s),		\
		       amupmu_errstr(_ret));					\
	}									\
} while (0)

/* CNTFRQ as AMU_READ reports it. */
static __u64 timer_freq(int fd)
{
	struct amupmu_amu_read rd;
	struct amupmu_amu_cpu e;

	if (amupmu_amu_read_cpu(fd, 0, &e, &rd))
		return 0;
	return rd.timer_freq;
}

/* ---------------------------------------------------------------- INFO, sysfs */

/* The AMU fields of INFO: the architected group 0 and the model's group 1. */
TEST_F(amu, info_fields)
{
	unsigned int cpu, n, amu_cpus = 0, off_cpus = 0;

	AMU_BEGIN();
	for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
		const struct amupmu_cpu_info *e = &self->cpus[cpu];
		__u64 cg0 = AMCGCR_CG0NC(e->amcgcr), cg1 = AMCGCR_CG1NC(e->amcgcr);

		if (e->flags & AMUPMU_CPU_AMU_OFF)
			off_cpus++;
		if (!(e->flags & AMUPMU_CPU_AMU)) {
			EXPECT_EQ(0U, e->amcntenset0);
			EXPECT_TRUE(all_bytes(e->amevtyper0, sizeof(e->amevtyper0), 0));
			EXPECT_TRUE(all_bytes(e->amevtyper1, sizeof(e->amevtyper1), 0));
			continue;
		}
		amu_cpus++;
		EXPECT_LE(1U, e->amu_version);
		EXPECT_LE((__u64)AMU_CG0_ARCH_COUNTERS, cg0);
		EXPECT_GE((__u64)AMUPMU_AMU_MAX_COUNTERS, cg0);
		EXPECT_GE((__u64)AMUPMU_AMU_MAX_COUNTERS, cg1);
		/* AMUv1: the four architected events, in this order */
		for (n = 0; n < AMU_CG0_ARCH_COUNTERS; n++) {
			EXPECT_EQ(mock_group0[n], e->amevtyper0[n]) {
				TH_LOG("cpu%u: amevtyper0[%u] 0x%04x", cpu, n, e->amevtyper0[n]);
			}
		}
		for (n = cg0; n < AMUPMU_AMU_MAX_COUNTERS; n++) {
			EXPECT_EQ(0, e->amevtyper0[n]);
		}
		for (n = cg1; n < AMUPMU_AMU_MAX_COUNTERS; n++) {
			EXPECT_EQ(0, e->amevtyper1[n]);
		}
		/* counters beyond the group's are not enabled */
		EXPECT_EQ(0U, e->amcntenset0 & ~((1U << cg0) - 1));
		EXPECT_EQ(0U, e->amcntenset1 & ~(cg1 >= 32 ? ~0U : (1U << cg1) - 1));
		if (self->mock) {
			EXPECT_EQ((__u64)MOCK_CG0NC, cg0);
			EXPECT_EQ((__u64)MOCK_CG1NC, cg1);
			EXPECT_EQ(0, memcmp(e->amevtyper1, mock_group1, sizeof(mock_group1))) {
				TH_LOG("cpu%u: amevtyper1 0x%04x 0x%04x, the model has 0x0300 0x0301",
				       cpu, e->amevtyper1[0], e->amevtyper1[1]);
			}
			/* at discovery, with the model's defaults */
			EXPECT_EQ(0xfU, e->amcntenset0);
			EXPECT_EQ(0x3U, e->amcntenset1);
			EXPECT_TRUE(!!(e->flags & AMUPMU_CPU_MOCK));
		}
		TH_LOG("cpu%u: AMUv1%s amcr 0x%llx amcntenset0 0x%x amcntenset1 0x%x "
		       "group0 %llu group1 %llu%s", cpu, e->amu_version >= 2 ? "p1" : "",
		       (unsigned long long)e->amcr, e->amcntenset0, e->amcntenset1,
		       (unsigned long long)cg0, (unsigned long long)cg1,
		       e->flags & AMUPMU_CPU_AMU_ZERO ? " (AMU_ZERO)" : "");
	}
	EXPECT_EQ(amu_cpus != 0, self->usable) {
		TH_LOG("AMUPMU_FEAT_AMU %d, %u CPUs with AMUPMU_CPU_AMU", self->usable, amu_cpus);
	}
	if (self->param_off) {
		EXPECT_EQ(0U, amu_cpus);
		EXPECT_FALSE(self->usable);
	}
	/* amu=0 on a build whose CPUs have an AMU: every such CPU is AMU_OFF */
	if (self->param_off && self->mock) {
		for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
			const struct amupmu_cpu_info *e = &self->cpus[cpu];

			if (!(e->flags & AMUPMU_CPU_DISCOVERED))
				continue;
			EXPECT_TRUE(!!(e->flags & AMUPMU_CPU_AMU_OFF)) {
				TH_LOG("cpu%u: amu=0, flags 0x%x without AMU_OFF", cpu, e->flags);
			}
			EXPECT_LE(1U, e->amu_version);
		}
	}
	if (!self->mock && !self->usable) {
		EXPECT_EQ(0U, off_cpus) {
			TH_LOG("AMU_OFF on a board whose CPUs have no AMU");
		}
	}
	TH_LOG("%u CPUs with a usable AMU, %u with AMU_OFF", amu_cpus, off_cpus);
}

/* Parse "0x%04x 0x%04x ..." into @ev; returns the count or -1. */
static int parse_events(const char *s, __u16 *ev, unsigned int max)
{
	unsigned int n = 0, v;
	int used;

	while (*s) {
		if (n >= max || sscanf(s, "0x%4x%n", &v, &used) != 1 || used != 6)
			return -1;
		ev[n++] = v;
		s += used;
		if (*s == ' ' && s[1])
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

/*
 * cpuN/'s AMU files: there, read-only (0444) and equal to INFO on a CPU
 * with AMUPMU_CPU_AMU; no AMU file at all on the others (production
 * builds on QEMU, amu=0). Writes are refused (amupmu_sysfs_test sweeps
 * every file with bad input too).
 */
TEST_F(amu, sysfs_files)
{
	unsigned int cpu, checked = 0;
	char dir[128], path[192], buf[256];
	size_t i;

	AMU_BEGIN();
	for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
		const struct amupmu_cpu_info *e = &self->cpus[cpu];
		bool amu = e->flags & AMUPMU_CPU_AMU;

		snprintf(dir, sizeof(dir), AMUPMU_SYSFS "/cpu%u", cpu);
		if (!amupmu_path_exists(dir))
			continue;
		/* the flag files: always there, 0 or 1 */
		snprintf(path, sizeof(path), "%s/amu_off", dir);
		ASSERT_EQ(0, amupmu_read_line(path, buf, sizeof(buf)));
		EXPECT_STREQ(e->flags & AMUPMU_CPU_AMU_OFF ? "1" : "0", buf);
		snprintf(path, sizeof(path), "%s/amu_zero", dir);
		ASSERT_EQ(0, amupmu_read_line(path, buf, sizeof(buf)));
		EXPECT_STREQ(e->flags & AMUPMU_CPU_AMU_ZERO ? "1" : "0", buf);
		if (!amu) {
			for (i = 0; i < ARRAY_SIZE(amu_files); i++) {
				snprintf(path, sizeof(path), "%s/%s", dir, amu_files[i]);
				EXPECT_FALSE(amupmu_path_exists(path)) {
					TH_LOG("cpu%u has no usable AMU (flags 0x%x) but %s exists",
					       cpu, e->flags, path);
				}
			}
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(amu_files); i++) {
			struct stat st;
			__u64 v = 0;
			__u16 ev[AMUPMU_AMU_MAX_COUNTERS];
			int n, fd;

			snprintf(path, sizeof(path), "%s/%s", dir, amu_files[i]);
			ASSERT_EQ(0, stat(path, &st)) {
				TH_LOG("%s: %s", path, strerror(errno));
			}
			EXPECT_EQ(0444U, st.st_mode & 07777) {
				TH_LOG("%s: mode %o", path, st.st_mode & 07777);
			}
			ASSERT_EQ(0, amupmu_read_line(path, buf, sizeof(buf)));
			fd = open(path, O_WRONLY | O_CLOEXEC);
			EXPECT_EQ(-1, fd) {
				TH_LOG("%s opens for writing", path);
			}
			if (fd >= 0)
				close(fd);
			if (!strcmp(amu_files[i], "amu_group0_events") ||
			    !strcmp(amu_files[i], "amu_group1_events")) {
				bool g0 = amu_files[i][9] == '0';
				const __u16 *want = g0 ? e->amevtyper0 : e->amevtyper1;
				__u64 nc = g0 ? AMCGCR_CG0NC(e->amcgcr) : AMCGCR_CG1NC(e->amcgcr);

				n = parse_events(buf, ev, AMUPMU_AMU_MAX_COUNTERS);
				EXPECT_EQ((int)nc, n) {
					TH_LOG("%s: \"%s\": %d events, AMCGCR says %llu", path, buf,
					       n, (unsigned long long)nc);
				}
				if (n == (int)nc) {
					EXPECT_EQ(0, memcmp(ev, want, n * sizeof(*ev))) {
						TH_LOG("%s: \"%s\" differs from INFO", path, buf);
					}
				}
				continue;
			}
			EXPECT_EQ(0, amupmu_parse_u64(buf, &v)) {
				TH_LOG("%s: \"%s\" is not a number", path, buf);
			}
			switch (i) {
			case 0:
				EXPECT_EQ(e->amu_version, v);
				break;
			case 1:
				EXPECT_EQ(e->amcfgr, v);
				break;
			case 2:
				EXPECT_EQ(e->amcgcr, v);
				break;
			case 3:
				EXPECT_EQ(e->amcr, v);
				break;
			case 4:
				EXPECT_EQ(e->amcntenset0, v);
				break;
			default:
				EXPECT_EQ(e->amcntenset1, v);
				break;
			}
			checked++;
		}
		if (self->mock) {
			snprintf(path, sizeof(path), "%s/amu_group1_events", dir);
			ASSERT_EQ(0, amupmu_read_line(path, buf, sizeof(buf)));
			EXPECT_STREQ("0x0300 0x0301", buf);
			snprintf(path, sizeof(path), "%s/amu_group0_events", dir);
			ASSERT_EQ(0, amupmu_read_line(path, buf, sizeof(buf)));
			EXPECT_STREQ("0x0011 0x4004 0x0008 0x4005", buf);
		}
	}
	TH_LOG("%u AMU register files compared with INFO", checked);
}

/* Does /proc/device-tree hold a node compatible with @compat? */
static bool dt_has_compatible(const char *dir, const char *compat, int depth)
{
	char path[512], buf[1024];
	struct dirent *de;
	bool found = false;
	ssize_t len;
	DIR *d;

	snprintf(path, sizeof(path), "%s/compatible", dir);
	len = amupmu_read_file(path, buf, sizeof(buf));
	for (ssize_t o = 0; len > 0 && o < len; o += strlen(buf + o) + 1)
		if (!strcmp(buf + o, compat))
			return true;
	if (depth > 6)
		return false;
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		found = dt_has_compatible(path, compat, depth + 1);
	}
	closedir(d);
	return found;
}

/*
 * cpuN/<p>iidr, <p>devarch, <p>devid, <p>devtype (0x%08x), <p>pidr (5
 * registers), <p>cidr (4), space-separated: the frame's INFO fields.
 */
static void expect_frame_files(struct __test_metadata *_metadata, unsigned int cpu,
			       const char *p, const struct amupmu_id_frame *f)
{
	static const struct { const char *name; size_t off; unsigned int n; } files[] = {
		{ "iidr", offsetof(struct amupmu_id_frame, iidr), 1 },
		{ "devarch", offsetof(struct amupmu_id_frame, devarch), 1 },
		{ "devid", offsetof(struct amupmu_id_frame, devid), 1 },
		{ "devtype", offsetof(struct amupmu_id_frame, devtype), 1 },
		{ "pidr", offsetof(struct amupmu_id_frame, pidr), 5 },
		{ "cidr", offsetof(struct amupmu_id_frame, cidr), 4 },
	};
	char path[160], buf[128], want[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		const __u32 *v = (const __u32 *)((const unsigned char *)f + files[i].off);
		unsigned int k;
		int len = 0;

		for (k = 0; k < files[i].n; k++)
			len += snprintf(want + len, sizeof(want) - len, "%s0x%08x", k ? " " : "", v[k]);
		snprintf(path, sizeof(path), AMUPMU_SYSFS "/cpu%u/%s%s", cpu, p, files[i].name);
		ASSERT_EQ(0, amupmu_read_line(path, buf, sizeof(buf))) {
			TH_LOG("%s: %s", path, strerror(errno));
		}
		EXPECT_STREQ(want, buf);
	}
}

/*
 * The ID frames: AMUPMU_CPU_AMU_FRAME / PMU_FRAME only where the devicetree
 * has "amupmu,cpu-frames" nodes, and then on some CPU; a frame without its
 * flag is zero (amupmu_info_test), one with it has a CoreSight component
 * ID (CIDR0-3 0x0D, 0x?0, 0x05, 0xB1).
 */
TEST_F(amu, id_frames_follow_devicetree)
{
	bool dt = dt_has_compatible("/proc/device-tree", "amupmu,cpu-frames", 0);
	unsigned int cpu, framed = 0, off = 0, off_framed = 0;

	AMU_BEGIN();
	for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
		const struct amupmu_cpu_info *e = &self->cpus[cpu];
		const struct amupmu_id_frame *f[2] = { &e->amu_frame, &e->pmu_frame };
		const __u32 flag[2] = { AMUPMU_CPU_AMU_FRAME, AMUPMU_CPU_PMU_FRAME };
		int i;

		if (e->flags & AMUPMU_CPU_AMU_OFF) {
			off++;
			off_framed += !!(e->flags & AMUPMU_CPU_AMU_FRAME);
		}
		for (i = 0; i < 2; i++) {
			if (!(e->flags & flag[i])) {
				char path[128];

				snprintf(path, sizeof(path), AMUPMU_SYSFS "/cpu%u/%siidr", cpu,
					 i ? "pm" : "am");
				EXPECT_FALSE(amupmu_path_exists(path)) {
					TH_LOG("%s without the frame flag", path);
				}
				continue;
			}
			framed++;
			/*
			 * The UAPI contract (AMUPMU_CPU_AMU_OFF, amupmu.h): amu=0
			 * reads no AMU system register, but the memory-mapped AMU
			 * frame's ID registers are still read and reported: an
			 * AMU_OFF CPU of a devicetree with frames has the frame
			 * flag and a CoreSight component ID (checked below), and
			 * never AMUPMU_CPU_AMU
			 */
			if (i == 0 && (e->flags & AMUPMU_CPU_AMU_OFF)) {
				EXPECT_FALSE(!!(e->flags & AMUPMU_CPU_AMU)) {
					TH_LOG("cpu%u: AMU_OFF and AMU both set", cpu);
				}
				EXPECT_NE(0U, f[i]->iidr | f[i]->devarch) {
					TH_LOG("cpu%u: AMU_OFF, frame flag set, IIDR and DEVARCH 0",
					       cpu);
				}
				TH_LOG("cpu%u: AMU_OFF, its AMU frame read (the contract)", cpu);
			}
			EXPECT_TRUE(dt) {
				TH_LOG("cpu%u: %s frame flag without an amupmu,cpu-frames node",
				       cpu, i ? "PMU" : "AMU");
			}
			EXPECT_EQ(0x0DU, f[i]->cidr[0] & 0xff);
			EXPECT_EQ(0x05U, f[i]->cidr[2] & 0xff);
			EXPECT_EQ(0xB1U, f[i]->cidr[3] & 0xff);
			expect_frame_files(_metadata, cpu, i ? "pm" : "am", f[i]);
			TH_LOG("cpu%u %s frame: IIDR 0x%08x DEVARCH 0x%08x DEVTYPE 0x%x CIDR "
			       "%02x %02x %02x %02x", cpu, i ? "PMU" : "AMU", f[i]->iidr,
			       f[i]->devarch, f[i]->devtype, f[i]->cidr[0], f[i]->cidr[1],
			       f[i]->cidr[2], f[i]->cidr[3]);
		}
	}
	if (dt) {
		EXPECT_LT(0U, framed) {
			TH_LOG("the devicetree has amupmu,cpu-frames, no CPU reports a frame");
		}
		/* amu=0 does not stop the frame reads (AMUPMU_CPU_AMU_OFF's contract) */
		if (off) {
			EXPECT_LT(0U, off_framed) {
				TH_LOG("%u AMU_OFF CPUs, none reports its AMU frame", off);
			}
		}
	}
	TH_LOG("devicetree %s amupmu,cpu-frames; %u frames reported", dt ? "has" : "has no",
	       framed);
}

/* ---------------------------------------------------------------- no AMU */

/*
 * Production (no AMU anywhere, or amu=0): a valid request of every
 * possible CPU, of CPU 0 and of a larger entry are EOPNOTSUPP and write
 * nothing; the struct's own checks come first (the sweep below).
 */
TEST_F(amu, no_amu_eopnotsupp)
{
	unsigned int n = self->nr_cpu_ids < MAX_CPUS ? self->nr_cpu_ids : MAX_CPUS, cpu;
	struct amupmu_amu_read rd, before;
	unsigned char *buf, *copy;
	__u64 word = 0;
	int ret;

	AMU_BEGIN();
	if (self->usable)
		SKIP(return, "a usable AMU (the mock or the hardware's)");
	for (cpu = 0; cpu < n; cpu++)
		word |= 1ULL << cpu;
	buf = malloc(n * 2 * ENTRY_SZ);
	copy = malloc(n * 2 * ENTRY_SZ);
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, copy);
	memset(buf, AMUPMU_FILL_BYTE, n * 2 * ENTRY_SZ);
	memcpy(copy, buf, n * 2 * ENTRY_SZ);
	amupmu_amu_read_init(&rd, &word, sizeof(word), buf, n, ENTRY_SZ);
	before = rd;
	ret = amupmu_ioctl(self->fd, AMUPMU_AMU_READ, &rd);
	EXPECT_EQ(-EOPNOTSUPP, ret) {
		TH_LOG("AMU_READ of every CPU without an AMU: %s", amupmu_errstr(ret));
	}
	EXPECT_EQ(0, memcmp(&before, &rd, sizeof(rd)));
	EXPECT_EQ(0, memcmp(copy, buf, n * ENTRY_SZ));
	/* one CPU, an entry twice as large */
	word = 1;
	amupmu_amu_read_init(&rd, &word, sizeof(word), buf, 1, 2 * ENTRY_SZ);
	before = rd;
	ret = amupmu_ioctl(self->fd, AMUPMU_AMU_READ, &rd);
	EXPECT_EQ(-EOPNOTSUPP, ret);
	EXPECT_EQ(0, memcmp(&before, &rd, sizeof(rd)));
	EXPECT_EQ(0, memcmp(copy, buf, n * 2 * ENTRY_SZ));
	EXPECT_FALSE(!!(self->info.features & AMUPMU_FEAT_AMU));
	free(buf);
	free(copy);
}

/* ---------------------------------------------------------------- ABI sweep */

/*
 * Expect @rd to be refused with -@err, writing neither @rd nor @n bytes at
 * @entries. Without a usable AMU a request refused for what is checked
 * after the AMU (@before_amu false: the CPU set, the entries' room) is
 * EOPNOTSUPP instead.
 */
static void expect_refused(struct __test_metadata *_metadata, FIXTURE_DATA(amu) *self,
			   struct amupmu_amu_read *rd, void *entries, size_t n, int err,
			   bool before_amu, const char *what, unsigned int *cases)
{
	unsigned char before[AMUPMU_SIZE_MAX + 64];
	unsigned char *eb = NULL;
	size_t len = rd->size > READ_SZ && rd->size <= AMUPMU_SIZE_MAX ? rd->size : READ_SZ;
	int ret;

	memcpy(before, rd, len);
	if (n) {
		eb = malloc(n);
		ASSERT_NE(NULL, eb);
		memcpy(eb, entries, n);
	}
	ret = amupmu_ioctl(self->fd, AMUPMU_AMU_READ, rd);
	if (!self->usable && !before_amu)
		err = EOPNOTSUPP;
	EXPECT_EQ(-err, ret) {
		TH_LOG("AMU_READ %s: expected %s, got %s", what, strerror(err),
		       amupmu_errstr(ret));
	}
	EXPECT_EQ(0, memcmp(before, rd, len)) {
		TH_LOG("AMU_READ %s: the refused call wrote its argument", what);
	}
	if (n) {
		EXPECT_EQ(0, memcmp(eb, entries, n)) {
			TH_LOG("AMU_READ %s: the refused call wrote entries", what);
		}
		free(eb);
	}
	(*cases)++;
}

/*
 * The size, flags and reserved rules (before EOPNOTSUPP on every board),
 * and the fields': entry_size, nr_cpus, the CPU set, cpus_len; a refused
 * call writes nothing back.
 */
TEST_F(amu, abi_sweep)
{
	static unsigned char b[AMUPMU_SIZE_MAX + 64];
	static __u64 cpus[AMUPMU_AMU_CPUS_LEN_MAX / 8 + 1];
	struct amupmu_amu_read *rd = (void *)b;
	unsigned int n = self->nr_cpu_ids, cases = 0, bit, pos;
	size_t ebytes = 2 * (n + 2) * AMUPMU_AMU_ENTRY_SIZE_MAX;
	unsigned char *ent = malloc(ebytes);
	char what[96];
	__u32 size;
	size_t i;

	AMU_BEGIN();
	ASSERT_NE(NULL, ent);
	memset(ent, AMUPMU_FILL_BYTE, ebytes);
#define BUILD() do {								\
	memset(b, 0, sizeof(b));						\
	memset(cpus, 0, sizeof(cpus));						\
	cpus[0] = 1;								\
	amupmu_amu_read_init(rd, cpus, 8, ent, 1, ENTRY_SZ);			\
} while (0)
#define REFUSED(err, before_amu) \
	expect_refused(_metadata, self, rd, ent, ebytes, err, before_amu, what, &cases)

	/* every size below the first version */
	for (size = 0; size < AMUPMU_AMU_READ_SIZE_VER0; size++) {
		BUILD();
		rd->size = size;
		snprintf(what, sizeof(what), "size %u", size);
		REFUSED(EINVAL, true);
	}
	/* a non-zero unknown tail, and above the maximum */
	for (pos = READ_SZ; pos < READ_SZ + 8; pos++) {
		BUILD();
		rd->size = READ_SZ + 8;
		b[pos] = 0x40;
		snprintf(what, sizeof(what), "size %zu, tail byte %u non-zero", READ_SZ + 8, pos);
		REFUSED(E2BIG, true);
	}
	{
		static const __u32 big[] = { AMUPMU_SIZE_MAX + 1, AMUPMU_SIZE_MAX + 8, 0xffffffff };

		for (i = 0; i < ARRAY_SIZE(big); i++) {
			BUILD();
			rd->size = big[i];
			snprintf(what, sizeof(what), "size %u", big[i]);
			REFUSED(E2BIG, true);
		}
	}
	/* flags and __reserved, each bit */
	for (bit = 0; bit < 32; bit++) {
		BUILD();
		rd->flags = 1U << bit;
		snprintf(what, sizeof(what), "flags bit %u", bit);
		REFUSED(EINVAL, true);
		BUILD();
		rd->__reserved = 1U << bit;
		snprintf(what, sizeof(what), "__reserved bit %u", bit);
		REFUSED(EINVAL, true);
	}

	/* entry_size: below VER0, not a multiple of 8, above 4096 */
	for (size = 0; size < AMUPMU_AMU_CPU_SIZE_VER0; size += size < 64 ? 1 : 8) {
		BUILD();
		rd->entry_size = size;
		snprintf(what, sizeof(what), "entry_size %u", size);
		REFUSED(EINVAL, true);
	}
	{
		static const __u32 bad[] = {
			AMUPMU_AMU_CPU_SIZE_VER0 - 8, AMUPMU_AMU_CPU_SIZE_VER0 - 1,
			AMUPMU_AMU_CPU_SIZE_VER0 + 1, AMUPMU_AMU_CPU_SIZE_VER0 + 4,
			AMUPMU_AMU_CPU_SIZE_VER0 + 7, AMUPMU_AMU_ENTRY_SIZE_MAX - 4,
			AMUPMU_AMU_ENTRY_SIZE_MAX + 8, 1U << 20, 0xfffffff8,
		};

		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			BUILD();
			rd->entry_size = bad[i];
			snprintf(what, sizeof(what), "entry_size %u", bad[i]);
			REFUSED(EINVAL, true);
		}
	}
	/* nr_cpus: fewer than the set, above the maximum */
	BUILD();
	rd->nr_cpus = 0;
	snprintf(what, sizeof(what), "nr_cpus 0");
	REFUSED(EINVAL, false);
	if (n >= 2) {
		BUILD();
		cpus[0] = 3;
		rd->nr_cpus = 1;
		snprintf(what, sizeof(what), "nr_cpus 1 for CPUs 0-1");
		REFUSED(EINVAL, false);
	}
	BUILD();
	rd->nr_cpus = AMUPMU_AMU_READ_CPUS_MAX + 1;
	snprintf(what, sizeof(what), "nr_cpus %u", AMUPMU_AMU_READ_CPUS_MAX + 1);
	REFUSED(EINVAL, true);
	BUILD();
	rd->nr_cpus = 0xffffffff;
	snprintf(what, sizeof(what), "nr_cpus 0xffffffff");
	REFUSED(EINVAL, true);
	/* the CPU set: empty, a CPU that is not possible, cpus_len */
	BUILD();
	cpus[0] = 0;
	snprintf(what, sizeof(what), "empty CPU set");
	REFUSED(EINVAL, false);
	BUILD();
	memset(cpus, 0, sizeof(cpus));
	rd->cpus_len = AMUPMU_AMU_CPUS_LEN_MAX;
	snprintf(what, sizeof(what), "empty CPU set of %u bytes", AMUPMU_AMU_CPUS_LEN_MAX);
	REFUSED(EINVAL, false);
	if (n < AMUPMU_AMU_CPUS_LEN_MAX * 8) {
		BUILD();
		cpus[n / 64] |= 1ULL << (n % 64);
		rd->cpus_len = (n / 64 + 1) * 8;
		rd->nr_cpus = 2;
		snprintf(what, sizeof(what), "CPU %u (nr_cpu_ids %u)", n, n);
		REFUSED(ENODEV, false);
	}
	BUILD();
	cpus[AMUPMU_AMU_CPUS_LEN_MAX / 8 - 1] = 1ULL << 63;
	rd->cpus_len = AMUPMU_AMU_CPUS_LEN_MAX;
	rd->nr_cpus = 2;
	snprintf(what, sizeof(what), "CPU %u", AMUPMU_AMU_CPUS_LEN_MAX * 8 - 1);
	REFUSED(ENODEV, false);
	{
		static const __u32 lens[] = { 0, 1, 4, 7, 12, AMUPMU_AMU_CPUS_LEN_MAX + 8, 1U << 20 };

		for (i = 0; i < ARRAY_SIZE(lens); i++) {
			BUILD();
			rd->cpus_len = lens[i];
			snprintf(what, sizeof(what), "cpus_len %u", lens[i]);
			REFUSED(EINVAL, false);
		}
	}
	/* a bit beyond cpus_len is not read: the set is empty */
	BUILD();
	cpus[0] = 0;
	cpus[1] = 1;
	snprintf(what, sizeof(what), "CPU 64 beyond cpus_len 8");
	REFUSED(EINVAL, false);

	/* EFAULT: the CPU set and the entries where nothing can be read/written */
	{
		long page = sysconf(_SC_PAGESIZE);
		unsigned char *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *guard;
		const __u64 bad[] = { 0, 1, 0xffff800000000000ULL, 0 };

		ASSERT_NE(MAP_FAILED, map);
		guard = map + page;
		ASSERT_EQ(0, mprotect(guard, page, PROT_NONE));
		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			BUILD();
			rd->cpus_uptr = i == 3 ? (__u64)(uintptr_t)guard : bad[i];
			snprintf(what, sizeof(what), "cpus_uptr 0x%llx",
				 (unsigned long long)rd->cpus_uptr);
			REFUSED(EFAULT, false);
			BUILD();
			rd->entries_uptr = i == 3 ? (__u64)(uintptr_t)guard : bad[i];
			snprintf(what, sizeof(what), "entries_uptr 0x%llx",
				 (unsigned long long)rd->entries_uptr);
			REFUSED(EFAULT, false);
		}
		/* the bitmap's last word on the guard page */
		BUILD();
		memset(map, 0, page);
		((__u64 *)guard)[-1] = 1;
		rd->cpus_uptr = (__u64)(uintptr_t)(guard - 8);
		rd->cpus_len = 16;
		snprintf(what, sizeof(what), "CPU bitmap running into a PROT_NONE page");
		REFUSED(EFAULT, false);
		/* the second entry on the guard page: the first may be written */
		if (n >= 2 && self->usable) {
			int ret;

			BUILD();
			cpus[0] = 3;
			rd->nr_cpus = 2;
			rd->entries_uptr = (__u64)(uintptr_t)(guard - ENTRY_SZ);
			ret = amupmu_ioctl(self->fd, AMUPMU_AMU_READ, rd);
			EXPECT_EQ(-EFAULT, ret) {
				TH_LOG("entries running into a PROT_NONE page: %s",
				       amupmu_errstr(ret));
			}
			EXPECT_EQ(AMUPMU_SENTINEL64, rd->timer_freq);
			EXPECT_EQ(2U, rd->nr_cpus);
			cases++;
		}
		/* the struct itself ends on the guard page */
		memcpy(guard - 4, &(__u32){ READ_SZ }, 4);
		EXPECT_EQ(-EFAULT, amupmu_ioctl(self->fd, AMUPMU_AMU_READ, guard - 4));
		cases++;
		munmap(map, 2 * page);
	}
	/* ABI 1's type, direction and size bits: ENOTTY */
	BUILD();
	EXPECT_EQ(-ENOTTY, amupmu_ioctl(self->fd, _IO(AMUPMU_TYPE_ABI1, AMUPMU_CMD_AMU_READ), rd));
	EXPECT_EQ(-ENOTTY, amupmu_ioctl(self->fd, _IOWR(AMUPMU_TYPE, AMUPMU_CMD_AMU_READ,
							 struct amupmu_amu_read), rd));
	EXPECT_EQ(-ENOTTY, amupmu_ioctl(self->fd, _IO(AMUPMU_TYPE, AMUPMU_CMD_SPE_READ + 1), rd));
	cases += 3;
#undef BUILD
#undef REFUSED
	free(ent);
	TH_LOG("%u refused requests, none wrote anything back", cases);
	printf("# AMUPMU-FIGURE abi-AMUPMU_AMU_READ-fields cases=%u\n", cases);
	fflush(stdout);
}

/*
 * Accepted requests (a usable AMU): larger structs with a zero tail, larger
 * entries zero-filled beyond the kernel's, nr_cpus larger than the set
 * (entries beyond untouched), the set at any cpus_len up to 1024, and the
 * output fields.
 */
TEST_F(amu, abi_accepted)
{
	static unsigned char b[AMUPMU_SIZE_MAX];
	static __u64 cpus[AMUPMU_AMU_CPUS_LEN_MAX / 8];
	struct amupmu_amu_read *rd = (void *)b;
	unsigned int n = self->nr_cpu_ids < MAX_CPUS ? self->nr_cpu_ids : MAX_CPUS, cnt, k;
	const __u32 esizes[] = { ENTRY_SZ, ENTRY_SZ + 8, 2 * ENTRY_SZ, AMUPMU_AMU_ENTRY_SIZE_MAX };
	const __u32 sizes[] = { READ_SZ, READ_SZ + 1, READ_SZ + 8, AMUPMU_SIZE_MAX };
	__u64 word = online_word(self->nr_cpu_ids, &cnt);
	unsigned char *ent;
	size_t i;
	int ret;

	AMU_BEGIN();
	if (!self->usable)
		SKIP(return, "no usable AMU: every valid request is EOPNOTSUPP");
	ent = malloc((n + 2) * AMUPMU_AMU_ENTRY_SIZE_MAX);
	ASSERT_NE(NULL, ent);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		memset(b, 0, sizeof(b));
		amupmu_amu_read_init(rd, &word, 8, ent, cnt, ENTRY_SZ);
		rd->size = sizes[i];
		ret = amupmu_ioctl(self->fd, AMUPMU_AMU_READ, rd);
		EXPECT_EQ(0, ret) {
			TH_LOG("size %u, zero tail: %s", sizes[i], amupmu_errstr(ret));
		}
		EXPECT_TRUE(all_bytes(b + READ_SZ, sizeof(b) - READ_SZ, 0));
		EXPECT_EQ(cnt, rd->nr_cpus);
		EXPECT_EQ((__u32)ENTRY_SZ, rd->entry_size);
		EXPECT_NE(AMUPMU_SENTINEL64, rd->timer_freq);
		EXPECT_EQ(0U, rd->flags);
		EXPECT_EQ(0U, rd->__reserved);
	}
	for (i = 0; i < ARRAY_SIZE(esizes); i++) {
		/* room for two more entries than the set: untouched */
		memset(ent, AMUPMU_FILL_BYTE, (n + 2) * AMUPMU_AMU_ENTRY_SIZE_MAX);
		amupmu_amu_read_init(rd, &word, 8, ent, cnt + 2, esizes[i]);
		ret = amupmu_ioctl(self->fd, AMUPMU_AMU_READ, rd);
		ASSERT_EQ(0, ret) {
			TH_LOG("entry_size %u: %s", esizes[i], amupmu_errstr(ret));
		}
		EXPECT_EQ(cnt, rd->nr_cpus);
		EXPECT_EQ((__u32)ENTRY_SZ, rd->entry_size);
		for (k = 0; k < cnt + 2; k++) {
			const unsigned char *p = ent + k * esizes[i];
			const struct amupmu_amu_cpu *e = (const void *)p;

			if (k >= cnt) {
				EXPECT_TRUE(all_bytes(p, esizes[i], AMUPMU_FILL_BYTE)) {
					TH_LOG("entry_size %u: entry %u beyond the set written",
					       esizes[i], k);
				}
				continue;
			}
			EXPECT_TRUE(all_bytes(p + ENTRY_SZ, esizes[i] - ENTRY_SZ, 0)) {
				TH_LOG("entry_size %u: entry %u not zero-filled beyond %zu",
				       esizes[i], k, ENTRY_SZ);
			}
			EXPECT_TRUE(!!((word >> e->cpu) & 1));
			if (k) {
				EXPECT_LT(((const struct amupmu_amu_cpu *)(p - esizes[i]))->cpu,
					  e->cpu);
			}
			EXPECT_EQ(0U, e->state);
			EXPECT_EQ(0U, e->__reserved);
			EXPECT_EQ(AMCGCR_CG0NC(self->cpus[e->cpu].amcgcr), e->nr_group0);
			EXPECT_EQ(AMCGCR_CG1NC(self->cpus[e->cpu].amcgcr), e->nr_group1);
			EXPECT_LT(0ULL, e->time);
			for (unsigned int c = e->nr_group0; c < AMUPMU_AMU_MAX_COUNTERS; c++) {
				EXPECT_EQ(0ULL, e->group0[c]);
			}
			for (unsigned int c = e->nr_group1; c < AMUPMU_AMU_MAX_COUNTERS; c++) {
				EXPECT_EQ(0ULL, e->group1[c]);
			}
		}
	}
	/* the same CPU 0 at every cpus_len: a multiple of 8 up to 1024 */
	for (k = 8; k <= AMUPMU_AMU_CPUS_LEN_MAX; k *= 2) {
		memset(cpus, 0, sizeof(cpus));
		cpus[0] = 1;
		amupmu_amu_read_init(rd, cpus, k, ent, 1, ENTRY_SZ);
		ret = amupmu_ioctl(self->fd, AMUPMU_AMU_READ, rd);
		EXPECT_EQ(0, ret) {
			TH_LOG("cpus_len %u: %s", k, amupmu_errstr(ret));
		}
		EXPECT_EQ(1U, rd->nr_cpus);
	}
	/* nr_cpus at the maximum */
	free(ent);
	ent = calloc(AMUPMU_AMU_READ_CPUS_MAX, ENTRY_SZ);
	ASSERT_NE(NULL, ent);
	amupmu_amu_read_init(rd, &word, 8, ent, AMUPMU_AMU_READ_CPUS_MAX, ENTRY_SZ);
	EXPECT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_AMU_READ, rd));
	EXPECT_EQ(cnt, rd->nr_cpus);
	free(ent);
}

/* ---------------------------------------------------------------- the model */

/* The knobs' file: its mode, its lines, the defaults, bad input refused. */
TEST_F(amu, model_knobs)
{
	static const char * const bad[] = {
		"", "\n", "0", "0 ", "abc", "-1 ipc=1", "0 ipc", "0 ipc=", "0 =1", "0 ipc=abc",
		"0 ipc=-1", "0 ipc=8001", "0 ipc=0x1f41", "0 stall=1001", "0 active=1001",
		"0 active=-1", "0 active=autox", "0 active=", "0 aux0=1001", "0 aux1=1001",
		"0 freq=999999", "0 freq=10000000001", "0 freq=18446744073709551616",
		"0 enable0=0x10", "0 enable0=0x1f", "0 enable1=0x4", "0 enable1=-1",
		"0 unknown=1", "0 ipc=1 bogus=2", "0 ipc=100 stall=2000", "0 ipc=100 ipc",
		"0,1 ipc=1", "0-1 ipc=1", "0 ipc=1,stall=1", "x0 ipc=1", "0x ipc=1",
		"4294967296 ipc=1", "0 frozen=2", "0 frozen=-1", "0 frozen=", "0 frozen=yes",
		"0 frozen=1 ipc=8001",
	};
	char before[16384], after[16384], s[64];
	struct model m;
	struct stat st;
	unsigned int cpu;
	size_t i;
	int ret;

	AMU_BEGIN();
	NEED_MODEL();
	ASSERT_EQ(0, stat(MODEL_FILE, &st));
	EXPECT_EQ(0600U, st.st_mode & 07777);
	for (cpu = 0; cpu < self->nr_cpu_ids && cpu < MAX_CPUS; cpu++)
		if (amupmu_cpu_online(cpu) == 1)
			MODEL_SET(cpu, DEF_MODEL);
	ret = model_get(&m);
	ASSERT_EQ(0, ret) {
		TH_LOG("%s: %s; line \"%s\"", MODEL_FILE, amupmu_errstr(ret), m.bad);
	}
	EXPECT_EQ(self->nr_cpu_ids < MAX_CPUS ? self->nr_cpu_ids : MAX_CPUS, m.lines);
	for (cpu = 0; cpu < self->nr_cpu_ids && cpu < MAX_CPUS; cpu++) {
		const struct model_cpu *c = &m.cpu[cpu];

		EXPECT_TRUE(c->seen);
		EXPECT_EQ(DEF_FREQ, c->freq);
		EXPECT_EQ(DEF_IPC, c->ipc);
		EXPECT_EQ(DEF_STALL, c->stall);
		EXPECT_EQ(-1, c->active);
		EXPECT_EQ(DEF_AUX0, c->aux0);
		EXPECT_EQ(DEF_AUX1, c->aux1);
		EXPECT_EQ(0xfU, c->enable0);
		EXPECT_EQ(0x3U, c->enable1);
		EXPECT_EQ(0U, c->frozen);
	}
	ASSERT_LT(0, amupmu_read_file(MODEL_FILE, before, sizeof(before)));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ret = amupmu_write_str(MODEL_FILE, bad[i]);
		if (!bad[i][0]) {
			/* a zero-length write() is no write at all */
			EXPECT_TRUE(ret == 0 || ret == -EINVAL);
		} else {
			EXPECT_EQ(-EINVAL, ret) {
				TH_LOG("\"%s\": %s", bad[i], amupmu_errstr(ret));
			}
		}
		ASSERT_LT(0, amupmu_read_file(MODEL_FILE, after, sizeof(after)));
		EXPECT_STREQ(before, after) {
			TH_LOG("\"%s\" refused, but the model changed", bad[i]);
		}
	}
	/* a CPU that is not possible */
	snprintf(s, sizeof(s), "%u ipc=1", self->nr_cpu_ids);
	ret = amupmu_write_str(MODEL_FILE, s);
	EXPECT_EQ(-EINVAL, ret) {
		TH_LOG("\"%s\" (nr_cpu_ids %u): %s", s, self->nr_cpu_ids, amupmu_errstr(ret));
	}
	/* the bounds are accepted and read back */
	MODEL_SET(0, "freq=1000000 ipc=0 stall=0 active=0 aux0=0 aux1=0 enable0=0x0 enable1=0x0");
	ASSERT_EQ(0, model_get(&m));
	EXPECT_EQ(1000000ULL, m.cpu[0].freq);
	EXPECT_EQ(0U, m.cpu[0].ipc);
	EXPECT_EQ(0, m.cpu[0].active);
	EXPECT_EQ(0U, m.cpu[0].enable0);
	EXPECT_EQ(0U, m.cpu[0].enable1);
	MODEL_SET(0, "freq=10000000000 ipc=8000 stall=1000 active=1000 aux0=1000 aux1=1000 "
		     "enable0=0xf enable1=0x3");
	ASSERT_EQ(0, model_get(&m));
	EXPECT_EQ(10000000000ULL, m.cpu[0].freq);
	EXPECT_EQ(8000U, m.cpu[0].ipc);
	EXPECT_EQ(1000U, m.cpu[0].stall);
	EXPECT_EQ(1000, m.cpu[0].active);
	EXPECT_EQ(1000U, m.cpu[0].aux0);
	EXPECT_EQ(1000U, m.cpu[0].aux1);
	/* one key changes only itself; the other CPUs keep theirs */
	MODEL_SET(0, DEF_MODEL);
	MODEL_SET(0, "ipc=1234");
	ASSERT_EQ(0, model_get(&m));
	EXPECT_EQ(1234U, m.cpu[0].ipc);
	EXPECT_EQ(DEF_FREQ, m.cpu[0].freq);
	EXPECT_EQ(-1, m.cpu[0].active);
	if (m.cpu[1].seen) {
		EXPECT_EQ(DEF_IPC, m.cpu[1].ipc);
	}
	MODEL_SET(0, "active=auto");
	ASSERT_EQ(0, model_get(&m));
	EXPECT_EQ(-1, m.cpu[0].active);
}

struct rates {
	__u64 cpu, cnt, inst, stall, aux0, aux1, time;
};

static struct rates delta(const struct amupmu_amu_cpu *a, const struct amupmu_amu_cpu *b)
{
	struct rates r = {
		b->group0[AMU_G0_CPU_CYCLES] - a->group0[AMU_G0_CPU_CYCLES],
		b->group0[AMU_G0_CNT_CYCLES] - a->group0[AMU_G0_CNT_CYCLES],
		b->group0[AMU_G0_INST_RETIRED] - a->group0[AMU_G0_INST_RETIRED],
		b->group0[AMU_G0_STALL_BACKEND_MEM] - a->group0[AMU_G0_STALL_BACKEND_MEM],
		b->group1[0] - a->group1[0], b->group1[1] - a->group1[1], b->time - a->time,
	};
	return r;
}

/* Every counter of @b at least that of @a (monotonic). */
static bool monotonic(const struct amupmu_amu_cpu *a, const struct amupmu_amu_cpu *b)
{
	unsigned int c;

	for (c = 0; c < AMUPMU_AMU_MAX_COUNTERS; c++)
		if (b->group0[c] < a->group0[c] || b->group1[c] < a->group1[c])
			return false;
	return true;
}

/*
 * Different frequencies per CPU (active fixed at 1000 so that idle does
 * not matter): ΔCPU_CYCLES / ΔCNT_CYCLES × timer_freq within 0.1 %.
 */
#define ATTEMPTS	3

TEST_F(amu, frequency_per_cpu)
{
	struct amupmu_amu_cpu a[MAX_CPUS], b[MAX_CPUS];
	struct amupmu_amu_read rd;
	unsigned int cnt, k, attempt;
	__u64 word, tf, freq[MAX_CPUS];
	char s[96];

	AMU_BEGIN();
	NEED_MODEL();
	word = online_word(self->nr_cpu_ids, &cnt);
	for (k = 0; k < MAX_CPUS; k++) {
		if (!((word >> k) & 1))
			continue;
		/* 1.0 to 9.4 GHz, within the knob's 1 MHz to 10 GHz for any k */
		freq[k] = 1000000000ULL + (k % 13) * 700000000ULL + 123457;
		snprintf(s, sizeof(s), "freq=%llu active=1000", (unsigned long long)freq[k]);
		MODEL_SET(k, s);
	}
	/*
	 * The model computes each counter when its register is read, so the
	 * counters of one read are some µs apart, more when the host
	 * preempts the vCPU in between (no -icount): up to ATTEMPTS tries.
	 */
	for (attempt = 1; attempt <= ATTEMPTS; attempt++) {
		bool all_ok = true, last = attempt == ATTEMPTS;

		ASSERT_EQ(0, read_word(self->fd, word, a, &rd));
		ASSERT_EQ(cnt, rd.nr_cpus);
		tf = rd.timer_freq;
		sleep_ns(150 * NSEC_PER_MSEC);
		ASSERT_EQ(0, read_word(self->fd, word, b, &rd));
		ASSERT_EQ(cnt, rd.nr_cpus);
		EXPECT_EQ(tf, rd.timer_freq);
		for (k = 0; k < cnt; k++) {
			struct rates r = delta(&a[k], &b[k]);
			unsigned int cpu = a[k].cpu;
			double f = ratio(r.cpu, r.cnt) * tf;
			bool ok = near(f, freq[cpu], 1e-3, 0);

			ASSERT_EQ(cpu, b[k].cpu);
			EXPECT_LT(0ULL, r.cnt);
			all_ok &= ok;
			if (last) {
				EXPECT_TRUE(ok) {
					TH_LOG("cpu%u: model %llu Hz, measured %.0f Hz", cpu,
					       (unsigned long long)freq[cpu], f);
				}
			}
			TH_LOG("try %u: cpu%u: model %llu Hz, measured %.0f Hz (%+.4f %%), "
			       "ΔCNT_CYCLES %llu at %llu Hz", attempt, cpu,
			       (unsigned long long)freq[cpu], f, 100.0 * (f - freq[cpu]) / freq[cpu],
			       (unsigned long long)r.cnt, (unsigned long long)tf);
		}
		if (all_ok)
			break;
	}
}

/*
 * The shares of CPU_CYCLES: INST_RETIRED (ipc / 1000), STALL_BACKEND_MEM
 * (stall / 1000) and the group 1 counters (aux0, aux1 / 1000), per CPU,
 * with different settings on each.
 */
TEST_F(amu, ipc_stall_aux_rates)
{
	static const struct { unsigned int ipc, stall, aux0, aux1; } set[2] = {
		{ 2345, 123, 777, 55 }, { 800, 900, 0, 1000 },
	};
	struct amupmu_amu_cpu a[MAX_CPUS], b[MAX_CPUS];
	struct amupmu_amu_read rd;
	unsigned int cnt, k, attempt;
	__u64 word;
	char s[128];

	AMU_BEGIN();
	NEED_MODEL();
	word = online_word(self->nr_cpu_ids, &cnt);
	for (k = 0; k < MAX_CPUS; k++) {
		if (!((word >> k) & 1))
			continue;
		snprintf(s, sizeof(s), "ipc=%u stall=%u aux0=%u aux1=%u active=1000",
			 set[k % 2].ipc, set[k % 2].stall, set[k % 2].aux0, set[k % 2].aux1);
		MODEL_SET(k, s);
	}
	for (attempt = 1; attempt <= ATTEMPTS; attempt++) {
		bool all_ok = true, last = attempt == ATTEMPTS;

		ASSERT_EQ(0, read_word(self->fd, word, a, &rd));
		sleep_ns(80 * NSEC_PER_MSEC);
		ASSERT_EQ(0, read_word(self->fd, word, b, &rd));
		for (k = 0; k < cnt; k++) {
			struct rates r = delta(&a[k], &b[k]);
			unsigned int cpu = a[k].cpu, i = cpu % 2;
			bool ok[4] = {
				near(r.inst, r.cpu * (set[i].ipc / 1000.0), 1e-3, 4),
				near(r.stall, r.cpu * (set[i].stall / 1000.0), 1e-3, 4),
				near(r.aux0, r.cpu * (set[i].aux0 / 1000.0), 1e-3, 4),
				near(r.aux1, r.cpu * (set[i].aux1 / 1000.0), 1e-3, 4),
			};

			ASSERT_LT(0ULL, r.cpu);
			all_ok &= ok[0] && ok[1] && ok[2] && ok[3];
			if (last) {
				EXPECT_TRUE(ok[0]) {
					TH_LOG("cpu%u: IPC %.4f, model %.3f", cpu,
					       ratio(r.inst, r.cpu), set[i].ipc / 1000.0);
				}
				EXPECT_TRUE(ok[1]) {
					TH_LOG("cpu%u: stall share %.4f, model %.3f", cpu,
					       ratio(r.stall, r.cpu), set[i].stall / 1000.0);
				}
				EXPECT_TRUE(ok[2]) {
					TH_LOG("cpu%u: aux0 share %.4f, model %.3f", cpu,
					       ratio(r.aux0, r.cpu), set[i].aux0 / 1000.0);
				}
				EXPECT_TRUE(ok[3]) {
					TH_LOG("cpu%u: aux1 share %.4f, model %.3f", cpu,
					       ratio(r.aux1, r.cpu), set[i].aux1 / 1000.0);
				}
			}
			TH_LOG("try %u: cpu%u: IPC %.4f (model %.3f), stall %.4f (%.3f), aux0 %.4f "
			       "(%.3f), aux1 %.4f (%.3f) over %llu cycles", attempt, cpu,
			       ratio(r.inst, r.cpu), set[i].ipc / 1000.0, ratio(r.stall, r.cpu),
			       set[i].stall / 1000.0, ratio(r.aux0, r.cpu), set[i].aux0 / 1000.0,
			       ratio(r.aux1, r.cpu), set[i].aux1 / 1000.0, (unsigned long long)r.cpu);
		}
		if (all_ok)
			break;
	}
}

/*
 * active=auto: a CPU running a pinned busy loop is active nearly all the
 * time (ΔCNT_CYCLES / Δtime close to 1); a fixed knob is the share
 * whatever the CPU does (busy or idle), and CPU_CYCLES follows it.
 */
/* One measurement of @cpu over @ns: busy on it (pinned there) or asleep. */
static int measure(int fd, unsigned int cpu, __u64 ns, bool busy, struct rates *r)
{
	struct amupmu_amu_cpu a, b;
	struct amupmu_amu_read rd;
	int ret = busy ? amupmu_pin_cpu(cpu) : 0;

	if (ret)
		return ret;
	ret = amupmu_amu_read_cpu(fd, cpu, &a, &rd);
	if (!ret) {
		if (busy)
			amupmu_busy_ns(ns);
		else
			sleep_ns(ns);
		ret = amupmu_amu_read_cpu(fd, cpu, &b, &rd);
	}
	if (busy)
		unpin();
	if (!ret)
		*r = delta(&a, &b);
	return ret;
}

TEST_F(amu, active_share)
{
	static const struct {
		const char *knob;
		bool busy;
		unsigned int ms;
		double lo, hi;		/* the active share ΔCNT_CYCLES / Δtime */
	} cases[] = {
		/* auto: a pinned busy loop keeps the CPU out of idle */
		{ "active=auto", true, 150, 0.95, 1.001 },
		/* fixed: the knob, busy or idle */
		{ "active=250", true, 60, 0.25 * (1 - 5e-3), 0.25 * (1 + 5e-3) },
		{ "active=600", false, 60, 0.6 * (1 - 5e-3), 0.6 * (1 + 5e-3) },
	};
	unsigned int cnt, cpu, attempt;
	__u64 word, tf;
	struct rates r;
	size_t i;

	AMU_BEGIN();
	NEED_MODEL();
	tf = timer_freq(self->fd);
	ASSERT_LT(0ULL, tf);
	word = online_word(self->nr_cpu_ids, &cnt);
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (!((word >> cpu) & 1))
			continue;
		MODEL_SET(cpu, "freq=2000000000");
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			MODEL_SET(cpu, cases[i].knob);
			/* retried: the model computes CNT_CYCLES after the time is read */
			for (attempt = 1; attempt <= ATTEMPTS; attempt++) {
				double share, cyc;
				bool ok_share, ok_cyc;

				ASSERT_EQ(0, measure(self->fd, cpu, cases[i].ms * NSEC_PER_MSEC,
						     cases[i].busy, &r));
				share = ratio(r.cnt, r.time);
				cyc = ratio(r.cpu, r.time);
				ok_share = share >= cases[i].lo && share <= cases[i].hi;
				/* CPU_CYCLES: freq over the active time */
				ok_cyc = near(cyc, 2e9 / tf * share, 2e-3, 0);
				TH_LOG("try %u: cpu%u %s %s: active share %.4f, CPU_CYCLES per tick "
				       "%.3f (%.3f)", attempt, cpu, cases[i].knob,
				       cases[i].busy ? "busy" : "idle", share, cyc, 2e9 / tf * share);
				if (ok_share && ok_cyc)
					break;
				if (attempt < ATTEMPTS)
					continue;
				EXPECT_TRUE(ok_share) {
					TH_LOG("cpu%u %s: active share %.4f outside [%.4f, %.4f]", cpu,
					       cases[i].knob, share, cases[i].lo, cases[i].hi);
				}
				EXPECT_TRUE(ok_cyc);
			}
		}
		MODEL_SET(cpu, "active=auto");
	}
}

/*
 * Two reads bracketed by CLOCK_MONOTONIC_RAW (the clocksource's own count):
 * amupmu_amu_cpu.time is taken inside the call, moves forward, and at
 * active=1000 CNT_CYCLES moves exactly with it (read at the same moment);
 * timer_freq is the rate time moves at. In a read of several CPUs their
 * times all fall within the call.
 */
TEST_F(amu, time_consistent)
{
	struct amupmu_amu_cpu a, b, all[MAX_CPUS];
	struct amupmu_amu_read rd;
	__u64 t0, t1, t2, t3, tf, word, lo, hi, dt_ns;
	unsigned int cnt, k, attempt;
	struct rates r;

	AMU_BEGIN();
	NEED_MODEL();
	word = online_word(self->nr_cpu_ids, &cnt);
	for (k = 0; k < MAX_CPUS; k++)
		if ((word >> k) & 1)
			MODEL_SET(k, "active=1000");
	/* retried: the model's counters are computed after the time is read */
	for (attempt = 1; attempt <= ATTEMPTS; attempt++) {
		ASSERT_EQ(0, amupmu_pin_cpu(0));
		t0 = mono_raw_ns();
		ASSERT_EQ(0, amupmu_amu_read_cpu(self->fd, 0, &a, &rd));
		t1 = mono_raw_ns();
		tf = rd.timer_freq;
		sleep_ns(50 * NSEC_PER_MSEC);
		t2 = mono_raw_ns();
		ASSERT_EQ(0, amupmu_amu_read_cpu(self->fd, 0, &b, &rd));
		t3 = mono_raw_ns();
		unpin();
		r = delta(&a, &b);
		if (near(r.cnt, r.time, 1e-3, 4))
			break;
		TH_LOG("try %u: ΔCNT_CYCLES %llu, Δtime %llu", attempt, (unsigned long long)r.cnt,
		       (unsigned long long)r.time);
	}
	ASSERT_LT(1000000ULL, tf);
	ASSERT_GT(10000000000ULL, tf);
	ASSERT_LT(a.time, b.time);
	dt_ns = (__u64)((double)r.time * 1e9 / tf);
	lo = t2 - t1;
	hi = t3 - t0;
	/* two ticks of slack for the conversion */
	EXPECT_TRUE(dt_ns + 2 * 1e9 / tf >= lo && dt_ns <= hi + 2 * 1e9 / tf) {
		TH_LOG("Δtime %llu ticks = %llu ns, the calls were %llu..%llu ns apart",
		       (unsigned long long)r.time, (unsigned long long)dt_ns,
		       (unsigned long long)lo, (unsigned long long)hi);
	}
	EXPECT_TRUE(near(r.cnt, r.time, 1e-3, 4)) {
		TH_LOG("active=1000: ΔCNT_CYCLES %llu, Δtime %llu", (unsigned long long)r.cnt,
		       (unsigned long long)r.time);
	}
	TH_LOG("timer_freq %llu Hz; Δtime %llu ns within [%llu, %llu]; ΔCNT_CYCLES %llu, "
	       "Δtime %llu ticks", (unsigned long long)tf, (unsigned long long)dt_ns,
	       (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)r.cnt,
	       (unsigned long long)r.time);
	/* every CPU in one call: their times within the call's duration */
	t0 = mono_raw_ns();
	ASSERT_EQ(0, read_word(self->fd, word, all, &rd));
	t1 = mono_raw_ns();
	lo = ~0ULL;
	hi = 0;
	for (k = 0; k < rd.nr_cpus; k++) {
		lo = all[k].time < lo ? all[k].time : lo;
		hi = all[k].time > hi ? all[k].time : hi;
		EXPECT_LE(b.time, all[k].time);
	}
	EXPECT_TRUE((double)(hi - lo) * 1e9 / tf <= (double)(t1 - t0) + 2e9 / tf) {
		TH_LOG("the CPUs' times span %llu ticks, the call took %llu ns",
		       (unsigned long long)(hi - lo), (unsigned long long)(t1 - t0));
	}
}

/*
 * A disabled counter (the model's enable0/enable1, as firmware leaves
 * AMCNTENSET) holds its value while the others count; enabled0/enabled1
 * of the read say so; enabled again it counts on from where it stood.
 */
TEST_F(amu, disabled_counter_holds)
{
	struct amupmu_amu_cpu a, b, c;
	struct amupmu_cpu_info ci;
	struct amupmu_info info;
	unsigned int attempt;
	struct rates r;
	bool ok = false;

	AMU_BEGIN();
	NEED_MODEL();
	MODEL_SET(0, "active=1000 enable0=0xb enable1=0x1");
	READ_CPU(0, &a);
	EXPECT_EQ(0xbU, a.enabled0);
	EXPECT_EQ(0x1U, a.enabled1);
	sleep_ns(40 * NSEC_PER_MSEC);
	READ_CPU(0, &b);
	EXPECT_EQ(0xbU, b.enabled0);
	EXPECT_EQ(0x1U, b.enabled1);
	r = delta(&a, &b);
	EXPECT_EQ(0ULL, r.inst) {
		TH_LOG("INST_RETIRED disabled moved by %llu", (unsigned long long)r.inst);
	}
	EXPECT_EQ(0ULL, r.aux1) {
		TH_LOG("group 1 counter 1 disabled moved by %llu", (unsigned long long)r.aux1);
	}
	EXPECT_LT(0ULL, r.cpu);
	EXPECT_LT(0ULL, r.cnt);
	EXPECT_LT(0ULL, r.stall);
	EXPECT_LT(0ULL, r.aux0);
	/* INFO's amcntenset0/1 are those of discovery */
	ASSERT_EQ(0, amupmu_query(self->fd, &info, &ci, 1));
	EXPECT_EQ(self->cpus[0].amcntenset0, ci.amcntenset0);
	EXPECT_EQ(self->cpus[0].amcntenset1, ci.amcntenset1);
	/* everything disabled: nothing moves */
	MODEL_SET(0, "enable0=0x0 enable1=0x0");
	READ_CPU(0, &a);
	sleep_ns(20 * NSEC_PER_MSEC);
	READ_CPU(0, &b);
	EXPECT_EQ(0U, b.enabled0);
	EXPECT_EQ(0U, b.enabled1);
	EXPECT_EQ(0, memcmp(a.group0, b.group0, sizeof(a.group0)));
	EXPECT_EQ(0, memcmp(a.group1, b.group1, sizeof(a.group1)));
	EXPECT_LT(a.time, b.time);
	/* enabled again: on from the held values */
	MODEL_SET(0, "enable0=0xf enable1=0x3");
	sleep_ns(20 * NSEC_PER_MSEC);
	READ_CPU(0, &c);
	EXPECT_EQ(0xfU, c.enabled0);
	EXPECT_EQ(0x3U, c.enabled1);
	EXPECT_TRUE(monotonic(&b, &c));
	r = delta(&b, &c);
	EXPECT_LT(0ULL, r.inst);
	EXPECT_LT(0ULL, r.aux1);
	/*
	 * re-enabled: counting at the model's rate again, measured from a
	 * read after the knob's write (from b, INST_RETIRED would miss the
	 * time between b and the write, which a host without -icount can
	 * make as long as it likes). The model computes each register at its
	 * own read, microseconds apart under TCG without -icount, more when
	 * the host preempts the vCPU in between, so over this short interval
	 * 1 %, up to ATTEMPTS tries (the rate tests: 0.1 % over longer ones)
	 */
	for (attempt = 1; attempt <= ATTEMPTS; attempt++) {
		READ_CPU(0, &b);
		sleep_ns(20 * NSEC_PER_MSEC);
		READ_CPU(0, &c);
		r = delta(&b, &c);
		ok = near(r.inst, r.cpu * DEF_IPC / 1000.0, 1e-2, 4);
		TH_LOG("try %u: re-enabled: IPC %.4f over %llu cycles, model %.3f", attempt,
		       ratio(r.inst, r.cpu), (unsigned long long)r.cpu, DEF_IPC / 1000.0);
		if (ok)
			break;
	}
	EXPECT_TRUE(ok);
}

/* One cpu_pm power-down cycle of @cpu. */
static int power_down(unsigned int cpu, bool aborted)
{
	char s[32];

	snprintf(s, sizeof(s), "%u%s\n", cpu, aborted ? " fail" : "");
	return amupmu_write_str(CPU_PM_FILE, s);
}

/*
 * A power-down (the mock's cpu_pm: the model's counters restart from 0):
 * the values stay monotonic, restarts grows by one per power-down of that
 * CPU only, and an aborted idle entry ("<cpu> fail") is not a restart.
 */
TEST_F(amu, power_loss_monotonic)
{
	struct amupmu_amu_cpu a[MAX_CPUS], b[MAX_CPUS];
	struct amupmu_amu_read rd;
	unsigned int cnt, k, i, cpu;
	__u64 word, t, pm_ns, in_pm, lost;
	int ret;

	AMU_BEGIN();
	NEED_MODEL();
	if (!amupmu_path_exists(CPU_PM_FILE))
		SKIP(return, "no %s", CPU_PM_FILE);
	word = online_word(self->nr_cpu_ids, &cnt);
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		if ((word >> cpu) & 1)
			MODEL_SET(cpu, "active=1000");
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (!((word >> cpu) & 1))
			continue;
		ASSERT_EQ(0, read_word(self->fd, word, a, &rd));
		pm_ns = 0;
		for (i = 0; i < 3; i++) {
			sleep_ns(5 * NSEC_PER_MSEC);
			t = mono_raw_ns();
			ret = power_down(cpu, false);
			pm_ns += mono_raw_ns() - t;
			ASSERT_EQ(0, ret) {
				TH_LOG("cpu_pm of cpu%u: %s", cpu, amupmu_errstr(ret));
			}
		}
		t = mono_raw_ns();
		ret = power_down(cpu, true);
		pm_ns += mono_raw_ns() - t;
		ASSERT_EQ(0, ret);
		sleep_ns(5 * NSEC_PER_MSEC);
		ASSERT_EQ(0, read_word(self->fd, word, b, &rd));
		for (k = 0; k < cnt; k++) {
			unsigned int c = a[k].cpu;

			EXPECT_TRUE(monotonic(&a[k], &b[k])) {
				TH_LOG("cpu%u after 3 power-downs of cpu%u: CNT_CYCLES %llu -> %llu, "
				       "CPU_CYCLES %llu -> %llu", c, cpu,
				       (unsigned long long)a[k].group0[1],
				       (unsigned long long)b[k].group0[1],
				       (unsigned long long)a[k].group0[0],
				       (unsigned long long)b[k].group0[0]);
			}
			EXPECT_LT(a[k].group0[AMU_G0_CNT_CYCLES], b[k].group0[AMU_G0_CNT_CYCLES]);
			EXPECT_EQ(a[k].restarts + (c == cpu ? 3 : 0), b[k].restarts) {
				TH_LOG("cpu%u restarts %u -> %u after 3 power-downs of cpu%u",
				       c, a[k].restarts, b[k].restarts, cpu);
			}
		}
		/*
		 * The counts before each power-down are kept: ΔCNT_CYCLES is the
		 * elapsed time (active=1000) less what the CPU counted between
		 * the CPU_PM_ENTER save and the power loss, which is lost as on
		 * hardware (the rest of the notifiers; ~0.2 ms each under TCG).
		 * Not keeping the old values would lose everything before the
		 * power-down (the values would also go backwards). At least 80 %
		 * kept; without -icount the host may preempt the vCPU between
		 * the save and the power loss for as long as it likes (and the
		 * loss is that long): there the loss is at most the time the
		 * cpu_pm writes took, the save and the loss being inside them,
		 * plus the two reads' pairing of counts and time (100 us each,
		 * AMUPMU_AMU_READ).
		 */
		in_pm = (__u64)((double)pm_ns * rd.timer_freq / NSEC_PER_SEC) +
			rd.timer_freq / 5000 + 16;
		for (k = 0; k < cnt; k++) {
			struct rates r = delta(&a[k], &b[k]);

			if (a[k].cpu != cpu)
				continue;
			lost = r.time > r.cnt ? r.time - r.cnt : 0;
			EXPECT_TRUE(r.cnt <= r.time + 16 &&
				    (r.cnt >= r.time * 0.8 || (!self->icount && lost <= in_pm))) {
				TH_LOG("cpu%u: ΔCNT_CYCLES %llu over %llu ticks across power-downs "
				       "(%llu ticks: the cpu_pm writes, the reads' pairing)", cpu,
				       (unsigned long long)r.cnt, (unsigned long long)r.time,
				       (unsigned long long)in_pm);
			}
			TH_LOG("cpu%u: restarts %u -> %u; ΔCNT_CYCLES %llu of %llu ticks (%.2f %% lost "
			       "around 3 power-downs)", cpu, a[k].restarts, b[k].restarts,
			       (unsigned long long)r.cnt, (unsigned long long)r.time,
			       100.0 * (1.0 - ratio(r.cnt, r.time)));
		}
	}
}

/*
 * frozen=1, the bench aid (pmu_read_bench amu-bare): the counters hold
 * their values (equal across reads, the time moving on), the enable masks
 * still read back, the model's file says so; frozen=0 counts on from the
 * held values: never backwards.
 */
TEST_F(amu, model_frozen_holds)
{
	struct amupmu_amu_cpu a, b, c, d;
	struct model m;

	AMU_BEGIN();
	NEED_MODEL();
	MODEL_SET(0, "active=1000");
	sleep_ns(10 * NSEC_PER_MSEC);
	READ_CPU(0, &a);
	MODEL_SET(0, "frozen=1");
	ASSERT_EQ(0, model_get(&m));
	EXPECT_EQ(1U, m.cpu[0].frozen);
	READ_CPU(0, &b);
	sleep_ns(30 * NSEC_PER_MSEC);
	READ_CPU(0, &c);
	EXPECT_TRUE(monotonic(&a, &b));
	EXPECT_EQ(0, memcmp(b.group0, c.group0, sizeof(b.group0))) {
		TH_LOG("frozen cpu0: CNT_CYCLES %llu -> %llu", (unsigned long long)b.group0[1],
		       (unsigned long long)c.group0[1]);
	}
	EXPECT_EQ(0, memcmp(b.group1, c.group1, sizeof(b.group1)));
	EXPECT_LT(b.time, c.time);
	EXPECT_EQ(0xfU, c.enabled0);
	EXPECT_EQ(0x3U, c.enabled1);
	EXPECT_EQ(b.restarts, c.restarts);
	MODEL_SET(0, "frozen=0");
	sleep_ns(20 * NSEC_PER_MSEC);
	READ_CPU(0, &d);
	EXPECT_TRUE(monotonic(&c, &d));
	EXPECT_LT(c.group0[AMU_G0_CNT_CYCLES], d.group0[AMU_G0_CNT_CYCLES]);
	EXPECT_LT(c.group0[AMU_G0_CPU_CYCLES], d.group0[AMU_G0_CPU_CYCLES]);
	/*
	 * counting on from the held value (at most the ticks since, plus a
	 * quarter for the read's own skew), not from where it would be had
	 * it counted the 30 ms frozen (about 2.5 times the ticks since)
	 */
	EXPECT_LE(d.group0[AMU_G0_CNT_CYCLES] - c.group0[AMU_G0_CNT_CYCLES],
		  (d.time - c.time) + (d.time - c.time) / 4);
	TH_LOG("cpu0 CNT_CYCLES %llu, frozen %llu for %llu ticks, then %llu",
	       (unsigned long long)a.group0[1], (unsigned long long)c.group0[1],
	       (unsigned long long)(c.time - b.time), (unsigned long long)d.group0[1]);
}

/*
 * CPU hotplug: an offline CPU reports AMUPMU_AMU_OFFLINE, time 0 and the
 * values it had; they do not move while it is down; its knobs cannot be
 * set (ENODEV); back online it counts on, monotonically.
 */
TEST_F(amu, hotplug_offline_resumes)
{
	struct amupmu_amu_cpu a, b, c, d, pair[2];
	struct amupmu_amu_read rd;
	char before[16384], after[16384];
	int ret;

	AMU_BEGIN();
	NEED_MODEL();
	NEED_CPU1_HOTPLUG();
	MODEL_SET(1, "active=1000");
	sleep_ns(10 * NSEC_PER_MSEC);
	READ_CPU(1, &a);
	EXPECT_EQ(0U, a.state);
	ret = amupmu_set_online(1, false);
	ASSERT_EQ(0, ret) {
		TH_LOG("offlining cpu1: %s", amupmu_errstr(ret));
	}
	self->cpu1_offlined = true;
	READ_CPU(1, &b);
	EXPECT_EQ((__u32)AMUPMU_AMU_OFFLINE, b.state);
	EXPECT_EQ(0ULL, b.time);
	EXPECT_EQ(1U, b.cpu);
	EXPECT_TRUE(monotonic(&a, &b));
	EXPECT_EQ(a.nr_group0, b.nr_group0);
	EXPECT_EQ(a.nr_group1, b.nr_group1);
	sleep_ns(40 * NSEC_PER_MSEC);
	READ_CPU(1, &c);
	EXPECT_EQ((__u32)AMUPMU_AMU_OFFLINE, c.state);
	EXPECT_EQ(0, memcmp(b.group0, c.group0, sizeof(b.group0))) {
		TH_LOG("offline cpu1's group 0 moved: CNT_CYCLES %llu -> %llu",
		       (unsigned long long)b.group0[1], (unsigned long long)c.group0[1]);
	}
	EXPECT_EQ(0, memcmp(b.group1, c.group1, sizeof(b.group1)));
	/* with an online CPU in the same set: both entries, in order */
	ASSERT_EQ(0, read_word(self->fd, 3, pair, &rd));
	ASSERT_EQ(2U, rd.nr_cpus);
	EXPECT_EQ(0U, pair[0].cpu);
	EXPECT_EQ(0U, pair[0].state);
	EXPECT_EQ(1U, pair[1].cpu);
	EXPECT_EQ((__u32)AMUPMU_AMU_OFFLINE, pair[1].state);
	/* the knobs of an offline CPU: ENODEV, nothing changes */
	ASSERT_LT(0, amupmu_read_file(MODEL_FILE, before, sizeof(before)));
	ret = model_set(1, "ipc=1000");
	EXPECT_EQ(-ENODEV, ret) {
		TH_LOG("knob of offline cpu1: %s", amupmu_errstr(ret));
	}
	ASSERT_LT(0, amupmu_read_file(MODEL_FILE, after, sizeof(after)));
	EXPECT_STREQ(before, after);

	ret = amupmu_set_online(1, true);
	ASSERT_EQ(0, ret) {
		TH_LOG("onlining cpu1: %s", amupmu_errstr(ret));
	}
	self->cpu1_offlined = false;
	MODEL_SET(1, "active=1000");
	sleep_ns(20 * NSEC_PER_MSEC);
	READ_CPU(1, &d);
	EXPECT_EQ(0U, d.state);
	EXPECT_LT(0ULL, d.time);
	EXPECT_TRUE(monotonic(&c, &d)) {
		TH_LOG("cpu1 back online: CNT_CYCLES %llu -> %llu, CPU_CYCLES %llu -> %llu",
		       (unsigned long long)c.group0[1], (unsigned long long)d.group0[1],
		       (unsigned long long)c.group0[0], (unsigned long long)d.group0[0]);
	}
	EXPECT_LT(c.group0[AMU_G0_CNT_CYCLES], d.group0[AMU_G0_CNT_CYCLES]);
	EXPECT_LT(c.group0[AMU_G0_CPU_CYCLES], d.group0[AMU_G0_CPU_CYCLES]);
	TH_LOG("cpu1: CNT_CYCLES %llu online, %llu offline, %llu back; restarts %u -> %u",
	       (unsigned long long)a.group0[1], (unsigned long long)c.group0[1],
	       (unsigned long long)d.group0[1], a.restarts, d.restarts);
}

/* ---------------------------------------------------------------- threads */

#define READERS		4
#define READS		300

struct reader {
	int fd;
	unsigned int id;
	__u64 word;
	unsigned int cnt;
	unsigned int reads, errors, backwards;
	int first_err;
	char first_bad[160];
};

static volatile bool stop_pm;

static void *reader_fn(void *arg)
{
	struct reader *r = arg;
	struct amupmu_amu_cpu prev[MAX_CPUS], cur[MAX_CPUS];
	struct amupmu_amu_read rd;
	unsigned int i, k;
	bool have = false;

	amupmu_pin_cpu(r->id % r->cnt);
	for (i = 0; i < READS; i++) {
		int ret = read_word(r->fd, r->word, cur, &rd);

		if (ret || rd.nr_cpus != r->cnt) {
			if (!r->errors++)
				r->first_err = ret;
			continue;
		}
		r->reads++;
		for (k = 0; have && k < r->cnt; k++) {
			if (monotonic(&prev[k], &cur[k]) && cur[k].time >= prev[k].time &&
			    cur[k].restarts >= prev[k].restarts)
				continue;
			if (!r->backwards++)
				snprintf(r->first_bad, sizeof(r->first_bad),
					 "read %u cpu%u: CNT_CYCLES %llu -> %llu, time %llu -> %llu",
					 i, cur[k].cpu, (unsigned long long)prev[k].group0[1],
					 (unsigned long long)cur[k].group0[1],
					 (unsigned long long)prev[k].time,
					 (unsigned long long)cur[k].time);
		}
		memcpy(prev, cur, sizeof(cur));
		have = true;
	}
	return NULL;
}

static void *power_fn(void *arg)
{
	__u64 word = *(__u64 *)arg;
	unsigned int cpu;

	while (!stop_pm) {
		for (cpu = 0; cpu < MAX_CPUS; cpu++)
			if ((word >> cpu) & 1)
				power_down(cpu, false);
		sleep_ns(2 * NSEC_PER_MSEC);
	}
	return NULL;
}

/*
 * READERS threads, each pinned to a CPU, read every online CPU READS
 * times while another thread power-cycles the CPUs (cpu_pm): each reader
 * sees every counter, the time and restarts monotonic.
 */
TEST_F(amu, concurrent_readers)
{
	struct reader r[READERS];
	pthread_t th[READERS], pm;
	unsigned int i, cnt, total = 0;
	bool with_pm = amupmu_path_exists(CPU_PM_FILE);
	__u64 word;

	AMU_BEGIN();
	NEED_MODEL();
	word = online_word(self->nr_cpu_ids, &cnt);
	ASSERT_LT(0U, cnt);
	stop_pm = false;
	if (with_pm)
		ASSERT_EQ(0, pthread_create(&pm, NULL, power_fn, &word));
	for (i = 0; i < READERS; i++) {
		r[i] = (struct reader){ .fd = self->fd, .id = i, .word = word, .cnt = cnt };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, reader_fn, &r[i]));
	}
	for (i = 0; i < READERS; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	stop_pm = true;
	if (with_pm)
		ASSERT_EQ(0, pthread_join(pm, NULL));
	for (i = 0; i < READERS; i++) {
		total += r[i].reads;
		EXPECT_EQ(0U, r[i].errors) {
			TH_LOG("reader %u: %u failed reads (first: %s)", i, r[i].errors,
			       amupmu_errstr(r[i].first_err));
		}
		EXPECT_EQ(0U, r[i].backwards) {
			TH_LOG("reader %u: %u reads went backwards, first: %s", i,
			       r[i].backwards, r[i].first_bad);
		}
	}
	TH_LOG("%u readers, %u reads of %u CPUs, %s", READERS, total, cnt,
	       with_pm ? "CPUs power-cycled meanwhile" : "no cpu_pm file");
}

/*
 * Hotplug while reading: READERS threads read the CPUs online at the start
 * (cpu1 among them) without pause while another thread takes cpu1 offline
 * and back HP_TOGGLES times, ~5 ms apart. Every read succeeds; each
 * entry's state is 0 (read on the CPU: time set) or AMUPMU_AMU_OFFLINE
 * (time 0); per CPU, every counter and restarts never go backwards, and
 * the time of the online reads neither; cpu1 was seen both ways.
 */
#define HP_TOGGLES	20		/* 10 offline/online cycles */
#define HP_MAX_READS	2000000		/* per reader: a bound if the toggler hangs */
#define HP_MAX_NS	(60 * NSEC_PER_SEC)

struct hp_reader {
	int fd;
	unsigned int id;
	__u64 word;
	unsigned int cnt;
	unsigned int reads, offline, online1, errors, bad_state, backwards;
	int first_err;
	char first_bad[200];
};

static volatile bool stop_hp;
/* reads of all readers that saw cpu1 offline [0], online [1] */
static unsigned int hp_seen[2];

/*
 * After a toggle of cpu1: 5 ms, and on until a reader has seen the new
 * state (or @end). Without -icount a loaded host can keep the readers'
 * vCPU off its CPU for all of the 5 ms, and the test would prove nothing.
 */
static void hp_wait_seen(bool online, __u64 end)
{
	unsigned int base = __atomic_load_n(&hp_seen[online], __ATOMIC_RELAXED);

	sleep_ns(5 * NSEC_PER_MSEC);
	while (__atomic_load_n(&hp_seen[online], __ATOMIC_RELAXED) == base && mono_raw_ns() < end)
		sleep_ns(NSEC_PER_MSEC);
}

static void hp_bad(struct hp_reader *r, unsigned int *what, const char *fmt, ...)
{
	va_list ap;

	if (!r->bad_state && !r->backwards && !r->errors) {
		va_start(ap, fmt);
		vsnprintf(r->first_bad, sizeof(r->first_bad), fmt, ap);
		va_end(ap);
	}
	(*what)++;
}

static void *hp_reader_fn(void *arg)
{
	struct hp_reader *r = arg;
	struct amupmu_amu_cpu prev[MAX_CPUS], cur[MAX_CPUS];
	__u64 last_time[MAX_CPUS] = { 0 };
	struct amupmu_amu_read rd;
	unsigned int i, k;
	bool have = false;

	amupmu_pin_cpu(0);	/* cpu0 stays online: the readers never migrate */
	for (i = 0; !stop_hp && i < HP_MAX_READS; i++) {
		int ret = read_word(r->fd, r->word, cur, &rd);

		if (ret || rd.nr_cpus != r->cnt) {
			if (!r->errors++)
				r->first_err = ret ? ret : -EPROTO;
			continue;
		}
		r->reads++;
		for (k = 0; k < r->cnt; k++) {
			const struct amupmu_amu_cpu *c = &cur[k], *p = &prev[k];

			if (c->state == AMUPMU_AMU_OFFLINE) {
				r->offline++;
				__atomic_add_fetch(&hp_seen[0], 1, __ATOMIC_RELAXED);
				if (c->time)
					hp_bad(r, &r->bad_state, "read %u cpu%u: offline, time %llu",
					       i, c->cpu, (unsigned long long)c->time);
			} else if (c->state) {
				hp_bad(r, &r->bad_state, "read %u cpu%u: state 0x%x", i, c->cpu,
				       c->state);
			} else if (!c->time || c->time < last_time[k]) {
				hp_bad(r, &r->backwards, "read %u cpu%u: time %llu after %llu", i,
				       c->cpu, (unsigned long long)c->time,
				       (unsigned long long)last_time[k]);
			} else {
				last_time[k] = c->time;
				r->online1 += c->cpu == 1;
				if (c->cpu == 1)
					__atomic_add_fetch(&hp_seen[1], 1, __ATOMIC_RELAXED);
			}
			if (have && (!monotonic(p, c) || c->restarts < p->restarts))
				hp_bad(r, &r->backwards,
				       "read %u cpu%u (state 0x%x after 0x%x): CNT_CYCLES %llu -> %llu, "
				       "CPU_CYCLES %llu -> %llu, restarts %u -> %u", i, c->cpu,
				       c->state, p->state, (unsigned long long)p->group0[1],
				       (unsigned long long)c->group0[1],
				       (unsigned long long)p->group0[0],
				       (unsigned long long)c->group0[0], p->restarts, c->restarts);
		}
		memcpy(prev, cur, sizeof(cur));
		have = true;
	}
	return NULL;
}

struct hp_toggler {
	unsigned int toggles, failures;
	int first_err;
};

static void *hp_toggle_fn(void *arg)
{
	struct hp_toggler *t = arg;
	__u64 end = mono_raw_ns() + HP_MAX_NS;

	while (t->toggles < HP_TOGGLES && mono_raw_ns() < end) {
		bool online = t->toggles & 1;	/* even: offline it, odd: online it */
		int ret = amupmu_set_online(1, online);

		if (ret) {
			if (!t->failures++)
				t->first_err = ret;
			if (t->failures > 20)
				break;
			sleep_ns(5 * NSEC_PER_MSEC);
		} else {
			t->toggles++;
			hp_wait_seen(online, end);
		}
	}
	/* back online whatever happened, then the readers stop */
	if (amupmu_cpu_online(1) != 1 && amupmu_set_online(1, true) && !t->failures++)
		t->first_err = -EIO;
	hp_wait_seen(true, end + HP_MAX_NS);	/* some reads of cpu1 back online */
	stop_hp = true;
	return NULL;
}

TEST_F_TIMEOUT(amu, readers_during_hotplug, 180)
{
	struct hp_reader r[READERS];
	struct hp_toggler tog = { 0 };
	pthread_t th[READERS], hp;
	unsigned int i, cnt, reads = 0, offline = 0, online1 = 0, bad = 0, backwards = 0;
	unsigned int errors = 0;
	__u64 word;

	AMU_BEGIN();
	NEED_MODEL();
	NEED_CPU1_HOTPLUG();
	word = online_word(self->nr_cpu_ids, &cnt);
	ASSERT_TRUE((word & 3) == 3);
	self->cpu1_offlined = true;	/* the teardown puts it back if need be */
	stop_hp = false;
	hp_seen[0] = hp_seen[1] = 0;
	for (i = 0; i < READERS; i++) {
		r[i] = (struct hp_reader){ .fd = self->fd, .id = i, .word = word, .cnt = cnt };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, hp_reader_fn, &r[i]));
	}
	ASSERT_EQ(0, pthread_create(&hp, NULL, hp_toggle_fn, &tog));
	ASSERT_EQ(0, pthread_join(hp, NULL));
	stop_hp = true;
	for (i = 0; i < READERS; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	unpin();
	EXPECT_EQ(1, amupmu_cpu_online(1));
	if (amupmu_cpu_online(1) == 1)
		self->cpu1_offlined = false;
	EXPECT_EQ(0U, tog.failures) {
		TH_LOG("%u failed online/offline writes (first: %s)", tog.failures,
		       amupmu_errstr(tog.first_err));
	}
	EXPECT_EQ((unsigned int)HP_TOGGLES, tog.toggles);
	for (i = 0; i < READERS; i++) {
		reads += r[i].reads;
		offline += r[i].offline;
		online1 += r[i].online1;
		bad += r[i].bad_state;
		backwards += r[i].backwards;
		errors += r[i].errors;
		EXPECT_EQ(0U, r[i].errors) {
			TH_LOG("reader %u: %u failed reads (first: %s)", i, r[i].errors,
			       amupmu_errstr(r[i].first_err));
		}
		EXPECT_EQ(0U, r[i].bad_state + r[i].backwards) {
			TH_LOG("reader %u: %u bad states, %u backwards; first: %s", i,
			       r[i].bad_state, r[i].backwards, r[i].first_bad);
		}
	}
	/* the reads must have seen cpu1 both ways, or the test proved nothing */
	EXPECT_LT(0U, offline);
	EXPECT_LT(0U, online1);
	printf("# AMUPMU-FIGURE amu-hotplug-read readers=%u reads=%u cpus=%u toggles=%u "
	       "offline_entries=%u cpu1_online_entries=%u errors=%u bad_state=%u backwards=%u\n",
	       READERS, reads, cnt, tog.toggles, offline, online1, errors, bad, backwards);
	fflush(stdout);
}

/* ---------------------------------------------------------------- last */

/* The kernel log's length when the program started: the last test looks past it. */
static size_t log_start;

__attribute__((constructor)) static void note_log_start(void)
{
	char *log = amupmu_kernel_log();

	log_start = log ? strlen(log) : 0;
	free(log);
}

/*
 * Every AMU request of this program ran without the kernel logging an
 * oops, a BUG or an undefined instruction (on QEMU an AMU register access
 * is UNDEFINED: a production build must never make one).
 */
TEST_F(amu, kernel_log_clean)
{
	static const char * const bad[] = {
		"Undefined instruction", "Oops", "BUG:", "WARNING:", "Unable to handle kernel",
	};
	char *log, *start;
	size_t i;

	AMU_BEGIN();
	log = amupmu_kernel_log();
	if (!log)
		SKIP(return, "cannot read the kernel log (%s)", strerror(errno));
	/* what this program's requests made the kernel say (the ring may have wrapped) */
	start = strlen(log) >= log_start ? log + log_start : log;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char *p = strstr(start, bad[i]);

		EXPECT_EQ(NULL, p) {
			char line[200];
			char *s = p, *e;

			while (s > log && s[-1] != '\n')
				s--;
			e = strchr(p, '\n');
			snprintf(line, sizeof(line), "%.*s", e ? (int)(e - s) : 150, s);
			TH_LOG("kernel log: %s", line);
		}
	}
	free(log);
}

TEST_HARNESS_MAIN
