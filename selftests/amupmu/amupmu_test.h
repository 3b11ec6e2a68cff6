/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the amupmu selftests: the kselftest harness, sysfs and
 * procfs readers, CPU list parsing, the AMUPMU_INFO request and the
 * architectural register fields (Arm ARM, DDI 0487) the tests decode.
 */
#ifndef AMUPMU_SELFTEST_H
#define AMUPMU_SELFTEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/amupmu.h>

/*
 * The 6.1 harness defines a signal handler with an unused parameter, which
 * -Wextra -Werror rejects; the tests themselves stay fully warning-checked.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

/*
 * Note: the harness's EXPECT_* / ASSERT_* expand to two statements (the check
 * and its optional { handler }), so they are always braced under if / for.
 */

#define AMUPMU_DEV		"/dev/amupmu"
#define AMUPMU_SYSFS		"/sys/class/misc/amupmu"
#define AMUPMU_CPU_SYSFS	"/sys/devices/system/cpu"
/* Largest CPU number the tests handle (arm64 NR_CPUS is 256 in Debian). */
#define AMUPMU_TEST_MAX_CPUS	4096

_Static_assert(sizeof(struct amupmu_info) >= AMUPMU_INFO_SIZE_VER0,
	       "struct amupmu_info shrank below its first version");
_Static_assert(sizeof(struct amupmu_cpu_info) >= AMUPMU_CPU_INFO_SIZE_VER0,
	       "struct amupmu_cpu_info shrank below its first version");
_Static_assert(sizeof(struct amupmu_info) == AMUPMU_INFO_SIZE_VER2,
	       "struct amupmu_info: the tests know ABI 2.2's layout (spe_owner)");
_Static_assert(offsetof(struct amupmu_info, spe_owner) == AMUPMU_INFO_SIZE_VER1,
	       "struct amupmu_info: the ABI 2.2 fields follow the VER1 struct");
_Static_assert(sizeof(struct amupmu_cpu_info) == AMUPMU_CPU_INFO_SIZE_VER2,
	       "struct amupmu_cpu_info: the tests know ABI 2.1's layout (AMU fields, ID frames)");
_Static_assert(offsetof(struct amupmu_cpu_info, amcr) == AMUPMU_CPU_INFO_SIZE_VER1,
	       "struct amupmu_cpu_info: the ABI 2.1 fields follow the VER1 struct");
_Static_assert(AMUPMU_ABI_MAJOR == 2, "these tests are written for ABI 2");

/* The ioctl type of ABI 1 (0xB7, taken by remoteproc and nsfs): ENOTTY now. */
#define AMUPMU_TYPE_ABI1	0xB7

/* ---------------------------------------------------------------- fields */

#ifndef NSEC_PER_SEC
#define NSEC_PER_SEC	1000000000ULL
#endif

/* CLOCK_MONOTONIC in ns (the vDSO: no system call). */
static inline __u64 amupmu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Spin at EL0 for @ns of CLOCK_MONOTONIC. */
static inline void amupmu_busy_ns(__u64 ns)
{
	__u64 end = amupmu_now_ns() + ns;

	while (amupmu_now_ns() < end)
		;
}

/*
 * The known loop, at EL0: @n iterations of "subs; b.ne", 2 * @n
 * instructions plus the compiler's few around it.
 */
static inline void amupmu_insn_loop(__u64 n)
{
#ifdef __aarch64__
	asm volatile("1:	subs	%0, %0, #1\n"
		     "	b.ne	1b\n"
		     : "+r" (n) : : "cc", "memory");
#else
	(void)n;
#endif
}

/* A -errno (or 0) as text, for TH_LOG(). */
static inline const char *amupmu_errstr(int ret)
{
	return ret ? strerror(-ret) : "success";
}

/* libc's affinity calls: in the programs that define _GNU_SOURCE first */
#ifdef __USE_GNU
/* Run the calling thread on @cpu only: 0 or -errno. */
static inline int amupmu_pin_cpu(unsigned int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/*
 * A child that spins on @cpu until amupmu_spin_stop() (and dies with its
 * parent), so that counters there have cycles to count and overflow on.
 * Returns its pid or -errno.
 */
static inline pid_t amupmu_spin_on(unsigned int cpu)
{
	pid_t pid = fork();

	if (pid)
		return pid < 0 ? -errno : pid;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || amupmu_pin_cpu(cpu))
		_exit(1);
	for (;;)
		amupmu_busy_ns(1000000);
}

static inline void amupmu_spin_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
#endif

static inline __u64 amupmu_field(__u64 reg, unsigned int shift, unsigned int width)
{
	return (reg >> shift) & ((width >= 64) ? ~0ULL : ((1ULL << width) - 1));
}

/* MIDR_EL1 */
#define MIDR_REVISION(m)	amupmu_field(m, 0, 4)
#define MIDR_PARTNUM(m)		amupmu_field(m, 4, 12)
#define MIDR_ARCHITECTURE(m)	amupmu_field(m, 16, 4)
#define MIDR_VARIANT(m)		amupmu_field(m, 20, 4)
#define MIDR_IMPLEMENTER(m)	amupmu_field(m, 24, 8)
#define MIDR_ARCH_BY_ID_REGS	0xF	/* features described by the ID registers */

/* ID_AA64PFR0_EL1 */
#define PFR0_FP_SHIFT		16
#define PFR0_ADVSIMD_SHIFT	20
#define PFR0_SVE_SHIFT		32
#define PFR0_AMU_SHIFT		44
#define PFR0_DIT_SHIFT		48
#define PFR0_FP(r)		amupmu_field(r, PFR0_FP_SHIFT, 4)
#define PFR0_ADVSIMD(r)		amupmu_field(r, PFR0_ADVSIMD_SHIFT, 4)
#define PFR0_SVE(r)		amupmu_field(r, PFR0_SVE_SHIFT, 4)
#define PFR0_AMU(r)		amupmu_field(r, PFR0_AMU_SHIFT, 4)
#define PFR0_DIT(r)		amupmu_field(r, PFR0_DIT_SHIFT, 4)
#define PFR0_NI			0xF	/* FP / AdvSIMD: not implemented */

/* ID_AA64DFR0_EL1 */
#define DFR0_PMUVER(r)		amupmu_field(r, 8, 4)
#define DFR0_PMSVER(r)		amupmu_field(r, 32, 4)
#define PMUVER_NI		0x0
#define PMUVER_V3P1		0x4
#define PMUVER_V3P4		0x5
#define PMUVER_IMPDEF		0xF

/* PMCR_EL0 */
#define PMCR_N(r)		amupmu_field(r, 11, 5)
#define PMCR_N_MAX		31

/* AMCFGR_EL0 / AMCGCR_EL0 */
#define AMCFGR_N(r)		amupmu_field(r, 0, 8)
#define AMCFGR_NCG(r)		amupmu_field(r, 28, 4)
#define AMCGCR_CG0NC(r)		amupmu_field(r, 0, 8)
#define AMCGCR_CG1NC(r)		amupmu_field(r, 8, 8)
#define AMU_CG0_ARCH_COUNTERS	4	/* AMUv1 / AMUv1p1 group 0 */

/* PMSIDR_EL1 */
#define PMSIDR_INTERVAL(r)	amupmu_field(r, 8, 4)

/* PMUv3 capability as the driver must derive it from DFR0.PMUVer. */
static inline bool amupmu_pmuver_has_pmu(__u64 ver)
{
	return ver != PMUVER_NI && ver != PMUVER_IMPDEF;
}

/* ---------------------------------------------------------------- files */

/* Write @s to @path in one write(). Returns 0, -errno, or -EIO when short. */
static inline int amupmu_write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != strlen(s))
		ret = -EIO;
	close(fd);
	return ret;
}

/*
 * Read a whole (small) file into @buf, NUL-terminated. Returns the number of
 * bytes read or -errno.
 */
static inline ssize_t amupmu_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd;

	if (!size)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		len += n;
	}
	buf[len] = '\0';
	close(fd);
	return len;
}

/* Read a one-line text file and strip the trailing newline. */
static inline int amupmu_read_line(const char *path, char *buf, size_t size)
{
	ssize_t len = amupmu_read_file(path, buf, size);

	if (len < 0)
		return (int)len;
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	return 0;
}

/* Parse an unsigned number ("0x..." hex or decimal) that fills @s. */
static inline int amupmu_parse_u64(const char *s, __u64 *val)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*val = v;
	return 0;
}

/* Read a sysfs file holding one hex or decimal number. */
static inline int amupmu_read_u64(const char *path, __u64 *val)
{
	char buf[64];
	int ret = amupmu_read_line(path, buf, sizeof(buf));

	return ret ? ret : amupmu_parse_u64(buf, val);
}

/* The number in environment variable @name, or @def when unset or not a number. */
static inline unsigned long long amupmu_env_u64(const char *name, unsigned long long def)
{
	const char *s = getenv(name);
	__u64 v;

	return s && !amupmu_parse_u64(s, &v) ? v : def;
}

static inline bool amupmu_path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/*
 * The module file that the tests which unload and load amupmu load:
 * $AMUPMU_KO (the board harness sets /amupmu.ko), else the module installed
 * for the running kernel as modinfo finds it (amupmu-dkms: /lib/modules/
 * RELEASE/updates/dkms/amupmu.ko), when it is an uncompressed .ko (they
 * call finit_module() without flags); NULL when there is none.
 */
static inline const char *amupmu_module_file(void)
{
	static char path[4096];
	const char *ko = getenv("AMUPMU_KO");
	size_t n;
	FILE *p;

	if (ko && *ko)
		return amupmu_path_exists(ko) ? ko : NULL;
	p = popen("modinfo -n amupmu 2>/dev/null", "r");
	if (!p)
		return NULL;
	if (!fgets(path, sizeof(path), p))
		path[0] = '\0';
	pclose(p);
	n = strcspn(path, "\n");
	path[n] = '\0';
	if (n < 3 || strcmp(path + n - 3, ".ko") || !amupmu_path_exists(path))
		return NULL;
	return path;
}

/* ---------------------------------------------------------------- CPUs */

struct amupmu_cpumask {
	unsigned int nr;	/* highest CPU in the list + 1 */
	bool cpu[AMUPMU_TEST_MAX_CPUS];
};

/* Parse a kernel CPU list ("0-3,5,7-8"). Returns 0 or -EINVAL. */
static inline int amupmu_cpulist_parse(const char *s, struct amupmu_cpumask *mask)
{
	unsigned long first, last, c;
	char *end;

	memset(mask, 0, sizeof(*mask));
	while (*s && *s != '\n') {
		first = strtoul(s, &end, 10);
		if (end == s)
			return -EINVAL;
		last = first;
		s = end;
		if (*s == '-') {
			last = strtoul(s + 1, &end, 10);
			if (end == s + 1)
				return -EINVAL;
			s = end;
		}
		if (last < first || last >= AMUPMU_TEST_MAX_CPUS)
			return -EINVAL;
		for (c = first; c <= last; c++)
			mask->cpu[c] = true;
		if (last + 1 > mask->nr)
			mask->nr = last + 1;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return 0;
}

static inline int amupmu_read_cpulist(const char *path, struct amupmu_cpumask *mask)
{
	char buf[4096];
	int ret = amupmu_read_line(path, buf, sizeof(buf));

	return ret ? ret : amupmu_cpulist_parse(buf, mask);
}

/* cpu_possible_mask; mask->nr is then nr_cpu_ids. */
static inline int amupmu_possible_cpus(struct amupmu_cpumask *mask)
{
	return amupmu_read_cpulist(AMUPMU_CPU_SYSFS "/possible", mask);
}

/*
 * Is @cpu online? cpuN/online is absent for CPUs that cannot be offlined
 * (often cpu0); fall back to the global online list for those.
 * Returns 1, 0 or -errno.
 */
static inline int amupmu_cpu_online(unsigned int cpu)
{
	static struct amupmu_cpumask online;
	char path[128];
	__u64 v;
	int ret;

	snprintf(path, sizeof(path), AMUPMU_CPU_SYSFS "/cpu%u/online", cpu);
	ret = amupmu_read_u64(path, &v);
	if (!ret)
		return v != 0;
	if (ret != -ENOENT)
		return ret;
	ret = amupmu_read_cpulist(AMUPMU_CPU_SYSFS "/online", &online);
	if (ret)
		return ret;
	return cpu < AMUPMU_TEST_MAX_CPUS && online.cpu[cpu];
}

/* Write cpuN/online. Returns 0 or -errno. */
static inline int amupmu_set_online(unsigned int cpu, bool on)
{
	char path[128];
	ssize_t n;
	int fd, ret;

	snprintf(path, sizeof(path), AMUPMU_CPU_SYSFS "/cpu%u/online", cpu);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, on ? "1" : "0", 1);
	ret = n == 1 ? 0 : (n < 0 ? -errno : -EIO);
	close(fd);
	return ret;
}

/* ---------------------------------------------------------------- ioctl */

/* Set by the output fields before a call, to see what the driver wrote. */
#define AMUPMU_SENTINEL32	0xA5A5A5A5U
#define AMUPMU_SENTINEL64	0xA5A5A5A5A5A5A5A5ULL
#define AMUPMU_FILL_BYTE	0xAA

/* Build an AMUPMU_INFO request with every output field set to a sentinel. */
static inline void amupmu_info_init(struct amupmu_info *info, void *cpus,
				    __u32 nr_cpus, __u32 entry_size)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->abi_major = AMUPMU_SENTINEL32;
	info->abi_minor = AMUPMU_SENTINEL32;
	info->features = AMUPMU_SENTINEL64;
	info->supported_ioctls = AMUPMU_SENTINEL64;
	info->pmu_owner = AMUPMU_SENTINEL32;
	info->kernel_el = AMUPMU_SENTINEL32;
	info->clock = AMUPMU_SENTINEL32;
	info->nr_cpus = nr_cpus;
	info->cpu_entry_size = entry_size;
	info->cpus_uptr = (__u64)(uintptr_t)cpus;
}

/* ioctl() returning 0 or -errno. */
static inline int amupmu_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/*
 * One AMUPMU_INFO call filling @nr entries of the current layout at @cpus
 * (may be NULL with @nr 0). Returns 0 or -errno.
 */
static inline int amupmu_query(int fd, struct amupmu_info *info,
			       struct amupmu_cpu_info *cpus, __u32 nr)
{
	amupmu_info_init(info, cpus, nr, sizeof(*cpus));
	return amupmu_ioctl(fd, AMUPMU_INFO, info);
}

/*
 * One past the highest command INFO says the driver has (the header has no
 * AMUPMU_CMD_LAST since ABI 2): the first nr of the type that must be
 * ENOTTY above the commands.
 */
static inline unsigned int amupmu_cmd_end(const struct amupmu_info *info)
{
	__u64 s = info->supported_ioctls;

	return AMUPMU_CMD_BASE + (s ? 64 - __builtin_clzll(s) : 0);
}

/* AMUPMU_ALLOW_SKIP=1: a missing device is a skip, not a failure. */
static inline bool amupmu_allow_skip(void)
{
	const char *s = getenv("AMUPMU_ALLOW_SKIP");

	return s && !strcmp(s, "1");
}

/*
 * Open /dev/amupmu in a FIXTURE_SETUP. A missing device fails the test
 * unless AMUPMU_ALLOW_SKIP=1; then it skips and leaves @fd at -1.
 */
#define AMUPMU_OPEN_DEVICE(_fd) do {						\
	_fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);				\
	if (_fd < 0 && (errno == ENOENT || errno == ENODEV ||			\
			errno == ENXIO) && amupmu_allow_skip())			\
		SKIP(return, "%s: %s (module not loaded?)", AMUPMU_DEV,	\
		     strerror(errno));						\
	ASSERT_LE(0, _fd) {							\
		TH_LOG("open %s: %s (load amupmu.ko, or set "			\
		       "AMUPMU_ALLOW_SKIP=1)", AMUPMU_DEV, strerror(errno));	\
	}									\
} while (0)

/*
 * First statement of every TEST_F: the 6.1 harness still runs the test body
 * after FIXTURE_SETUP called SKIP(); the skip is reported as such anyway.
 */
#define AMUPMU_SKIPPED_IN_SETUP(_fd) do {					\
	if ((_fd) < 0)								\
		return;								\
} while (0)

/* ---------------------------------------------------------------- board */

/*
 * The kernel log (klogctl READ_ALL: needs root or dmesg_restrict 0), in a
 * malloc'ed NUL-terminated buffer, or NULL.
 */
static inline char *amupmu_kernel_log(void)
{
	int len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0), n;
	char *buf;

	if (len <= 0)
		len = 1 << 20;
	buf = malloc(len + 1);
	if (!buf)
		return NULL;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, len);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/*
 * The board line the harness passes (AMUPMU_BOARD, else amupmu_board= of
 * the kernel command line) into @buf; "" when neither is there.
 */
static inline void amupmu_board_line(char *buf, size_t size)
{
	const char *env = getenv("AMUPMU_BOARD");
	char cmdline[4096], *p, *end;

	buf[0] = '\0';
	if (env && *env) {
		snprintf(buf, size, "%s", env);
		return;
	}
	if (amupmu_read_line("/proc/cmdline", cmdline, sizeof(cmdline)))
		return;
	p = strstr(cmdline, "amupmu_board=");
	if (!p)
		return;
	p += strlen("amupmu_board=");
	end = strchr(p, ' ');
	if (end)
		*end = '\0';
	snprintf(buf, size, "%s", p);
}

/*
 * The exception level the kernel runs at, as the boot says it: 2 when
 * KVM initialised in VHE mode ("kvm [1]: VHE mode initialized
 * successfully"), 1 when all CPUs started at EL1 or KVM runs nVHE / hVHE
 * at EL2 below an EL1 kernel; else from the board line (QEMU's
 * "virtualization=on" is the VHE board, a machine without it EL1). 0 when
 * nothing tells. @how says where the answer came from.
 */
static inline unsigned int amupmu_boot_kernel_el(char *how, size_t size)
{
	char board[512];
	char *log = amupmu_kernel_log();
	unsigned int el = 0;

	snprintf(how, size, "undetermined");
	if (log) {
		if (strstr(log, "VHE mode initialized successfully") &&
		    !strstr(log, "nVHE mode initialized")) {
			el = 2;
			snprintf(how, size, "kernel log: KVM in VHE mode");
		} else if (strstr(log, "CPU: All CPU(s) started at EL1")) {
			el = 1;
			snprintf(how, size, "kernel log: all CPUs started at EL1");
		} else if (strstr(log, "Hyp mode initialized successfully") ||
			   strstr(log, "nVHE mode initialized")) {
			el = 1;
			snprintf(how, size, "kernel log: KVM in nVHE mode, kernel at EL1");
		}
		free(log);
		if (el)
			return el;
	}
	amupmu_board_line(board, sizeof(board));
	if (strstr(board, "virtualization=on") || strstr(board, "virtualization=true")) {
		snprintf(how, size, "board line \"%.200s\"", board);
		return 2;
	}
	if (strstr(board, "machine=") || strstr(board, "virt")) {
		snprintf(how, size, "board line \"%.200s\" (no virtualization=on)", board);
		return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------- PMU */

_Static_assert(sizeof(struct amupmu_pmu_config) >= AMUPMU_PMU_CONFIG_SIZE_VER0,
	       "struct amupmu_pmu_config shrank below its first version");
_Static_assert(sizeof(struct amupmu_pmu_event) >= AMUPMU_PMU_EVENT_SIZE_VER0,
	       "struct amupmu_pmu_event shrank below its first version");
_Static_assert(sizeof(struct amupmu_pmu_ctl) >= AMUPMU_PMU_CTL_SIZE_VER0,
	       "struct amupmu_pmu_ctl shrank below its first version");
_Static_assert(sizeof(struct amupmu_pmu_read) >= AMUPMU_PMU_READ_SIZE_VER0,
	       "struct amupmu_pmu_read shrank below its first version");
_Static_assert(sizeof(struct amupmu_pmu_read) == AMUPMU_PMU_READ_SIZE_VER3,
	       "struct amupmu_pmu_read: the tests know ABI 2.4's layout (throttled)");
_Static_assert(sizeof(struct amupmu_pmu_read_cpu) == 40,
	       "struct amupmu_pmu_read_cpu layout");

/* perf's modifiers: ":u" (user only) and ":k" (kernel only) */
#define AMUPMU_EV_USER_ONLY	(AMUPMU_EV_EXCL_KERNEL | AMUPMU_EV_EXCL_HV)
#define AMUPMU_EV_KERNEL_ONLY	AMUPMU_EV_EXCL_USER
/* every exception-level filter bit */
#define AMUPMU_EV_EXCL_ALL	(AMUPMU_EV_EXCL_USER | AMUPMU_EV_EXCL_KERNEL | \
				 AMUPMU_EV_EXCL_HV | AMUPMU_EV_EXCL_HOST | \
				 AMUPMU_EV_EXCL_GUEST)
/* every flag this ABI knows */
#define AMUPMU_EV_KNOWN		(AMUPMU_EV_EXCL_ALL | AMUPMU_EV_RAW)

/* ID_AA64PFR0_EL1.EL2: 0 when the CPU has no EL2 */
#define PFR0_EL2(r)		amupmu_field(r, 8, 4)

/*
 * What the header's filter table programs for @flags (PMEVTYPER<n>_EL0
 * P, U, NSH, the way armv8pmu_set_event_filter() does), and whether that
 * counts at any exception level: the kernel at @kernel_el (2 = VHE host),
 * the CPU with or without EL2.
 */
struct amupmu_filter_bits {
	bool p, u, nsh;
};

static inline struct amupmu_filter_bits amupmu_filter_model(__u32 flags, unsigned int kernel_el,
							    bool has_el2)
{
	struct amupmu_filter_bits b;
	bool eu = flags & AMUPMU_EV_EXCL_USER, ek = flags & AMUPMU_EV_EXCL_KERNEL;
	bool eh = flags & AMUPMU_EV_EXCL_HV, eho = flags & AMUPMU_EV_EXCL_HOST;
	bool eg = flags & AMUPMU_EV_EXCL_GUEST;

	if (kernel_el == 2) {
		b.nsh = !(ek || eho);
		b.p = ek || eg;
		b.u = eu || eho;
	} else {
		b.nsh = has_el2 && !(eh || eho);
		b.p = ek;
		b.u = eu;
	}
	return b;
}

static inline bool amupmu_filter_counts(__u32 flags, unsigned int kernel_el, bool has_el2)
{
	struct amupmu_filter_bits b = amupmu_filter_model(flags, kernel_el, has_el2);

	return !b.p || !b.u || b.nsh;
}

/* PMUv3 common events (Arm ARM, "Common event numbers") */
#define PMUV3_EV_SW_INCR	0x0000
#define PMUV3_EV_INST_RETIRED	0x0008
#define PMUV3_EV_CPU_CYCLES	0x0011
#define PMUV3_EV_STALL_SLOT	0x003F
#define PMUV3_EV_MAX		0xFFFF	/* PMEVTYPER<n>_EL0.evtCount is 16 bits */

/* amupmu_pmu_config.counters: the index of the cycle counter */
#define AMUPMU_PMU_CYCLE_COUNTER	31
/* amupmu_pmu_config.cpus_len and event_size: the largest accepted */
#define AMUPMU_PMU_CPUS_LEN_MAX		1024
#define AMUPMU_PMU_EVENT_SIZE_MAX	4096

/*
 * Does @ci say the CPU implements common event @ev? PMCEID0/1 bits [31:0]
 * are events 0x00-0x3F; bits [63:32] are 0x4000-0x403F from PMUv3p1.
 */
static inline bool amupmu_event_implemented(const struct amupmu_cpu_info *ci, __u32 ev)
{
	bool ext = ci->flags & AMUPMU_CPU_PMCEID_EXT;

	if (ev < 0x20)
		return (ci->pmceid0 >> ev) & 1;
	if (ev < 0x40)
		return (ci->pmceid1 >> (ev - 0x20)) & 1;
	if (ext && ev >= 0x4000 && ev < 0x4020)
		return (ci->pmceid0 >> (32 + ev - 0x4000)) & 1;
	if (ext && ev >= 0x4020 && ev < 0x4040)
		return (ci->pmceid1 >> (32 + ev - 0x4020)) & 1;
	return false;
}

static inline void amupmu_pmu_event_set(struct amupmu_pmu_event *e, __u32 event, __u32 flags)
{
	memset(e, 0, sizeof(*e));
	e->event = event;
	e->flags = flags;
}

/*
 * Build an AMUPMU_PMU_CONFIG request for @nr events of the current layout
 * at @events and a CPU bitmap of @cpus_len bytes at @cpus, with the output
 * fields set to sentinels.
 */
static inline void amupmu_pmu_config_init(struct amupmu_pmu_config *cfg,
					  const struct amupmu_pmu_event *events,
					  __u32 nr, const __u64 *cpus, __u32 cpus_len)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	cfg->nr_events = nr;
	cfg->event_size = sizeof(*events);
	cfg->events_uptr = (__u64)(uintptr_t)events;
	cfg->cpus_uptr = (__u64)(uintptr_t)cpus;
	cfg->cpus_len = cpus_len;
	cfg->counters_free = AMUPMU_SENTINEL32;
	memset(cfg->counters, AMUPMU_FILL_BYTE, sizeof(cfg->counters));
}

static inline void amupmu_pmu_ctl_init(struct amupmu_pmu_ctl *ctl, __u32 op)
{
	memset(ctl, 0, sizeof(*ctl));
	ctl->size = sizeof(*ctl);
	ctl->op = op;
}

/* One AMUPMU_PMU_CTL call. Returns 0 or -errno. */
static inline int amupmu_pmu_ctl(int fd, __u32 op)
{
	struct amupmu_pmu_ctl ctl;

	amupmu_pmu_ctl_init(&ctl, op);
	return amupmu_ioctl(fd, AMUPMU_PMU_CTL, &ctl);
}

/* Build an AMUPMU_PMU_READ request with the output fields set to sentinels. */
static inline void amupmu_pmu_read_init(struct amupmu_pmu_read *rd, __u32 cpu,
					struct amupmu_pmu_value *values, __u32 nr)
{
	memset(rd, 0, sizeof(*rd));
	rd->size = sizeof(*rd);
	rd->cpu = cpu;
	rd->nr_values = nr;
	rd->values_uptr = (__u64)(uintptr_t)values;
	rd->time_enabled = AMUPMU_SENTINEL64;
	rd->time_running = AMUPMU_SENTINEL64;
	rd->state = AMUPMU_SENTINEL32;
	rd->samples = AMUPMU_SENTINEL64;
	rd->lost = AMUPMU_SENTINEL64;
	rd->skid = AMUPMU_SENTINEL64;
}

/* Bytes of one AMUPMU_PMU_READ_ALL entry with room for @nr_values values. */
static inline size_t amupmu_read_all_stride(__u32 nr_values)
{
	return sizeof(struct amupmu_pmu_read_cpu) + nr_values * sizeof(struct amupmu_pmu_value);
}

/* Entry @i of a READ_ALL array at @buf of @nr_values values each. */
static inline struct amupmu_pmu_read_cpu *amupmu_read_all_entry(void *buf, __u32 nr_values,
								unsigned int i)
{
	return (struct amupmu_pmu_read_cpu *)((unsigned char *)buf +
					      i * amupmu_read_all_stride(nr_values));
}

/*
 * Build an AMUPMU_PMU_READ_ALL request: @nr_cpus entries of @nr_values
 * values at @buf; output fields set to sentinels.
 */
static inline void amupmu_pmu_read_all_init(struct amupmu_pmu_read *rd, void *buf,
					    __u32 nr_cpus, __u32 nr_values)
{
	amupmu_pmu_read_init(rd, 0, buf, nr_values);
	rd->flags = AMUPMU_PMU_READ_ALL;
	rd->nr_cpus = nr_cpus;
}

/* INFO's pmu_counters_free of every CPU into @free (nr entries). 0 or -errno. */
static inline int amupmu_counters_free(int fd, __u32 *free_mask, unsigned int nr)
{
	struct amupmu_cpu_info *cpus = calloc(nr, sizeof(*cpus));
	struct amupmu_info info;
	unsigned int i;
	int ret;

	if (!cpus)
		return -ENOMEM;
	ret = amupmu_query(fd, &info, cpus, nr);
	for (i = 0; !ret && i < nr; i++)
		free_mask[i] = cpus[i].pmu_counters_free;
	free(cpus);
	return ret;
}

/* All counters of a CPU with @n event counters: bits 0..n-1 and the cycle counter's 31. */
static inline __u32 amupmu_all_counters_mask(unsigned int n)
{
	return (n >= 31 ? 0x7fffffffU : ((1U << n) - 1)) | (1U << 31);
}

/* One AMUPMU_PMU_READ of @nr values of @cpu. Returns 0 or -errno. */
static inline int amupmu_pmu_read(int fd, __u32 cpu, struct amupmu_pmu_value *values,
				  __u32 nr, struct amupmu_pmu_read *rd)
{
	amupmu_pmu_read_init(rd, cpu, values, nr);
	return amupmu_ioctl(fd, AMUPMU_PMU_READ, rd);
}

/* ---------------------------------------------------------------- PMU modes */

/* Shared mode's switch (bool, 0644; new CONFIGs only): "Y" or "N". */
#define AMUPMU_PMU_SHARED_PARAM	"/sys/module/amupmu/parameters/pmu_shared"

/*
 * PMU sessions work: exclusive mode (amupmu owns the PMU) or shared mode
 * (the kernel's arm_pmu owns it, sessions go through perf core).
 */
static inline bool amupmu_pmu_sessions_work(const struct amupmu_info *info)
{
	return info->features & (AMUPMU_FEAT_PMU_EXCLUSIVE | AMUPMU_FEAT_PMU_SHARED);
}

/* Shared mode: perf core counts the sessions' events. */
static inline bool amupmu_pmu_shared(const struct amupmu_info *info)
{
	return info->features & AMUPMU_FEAT_PMU_SHARED;
}

/* The PMU mode INFO reports, for the tests' backend lines. */
static inline const char *amupmu_pmu_mode_name(const struct amupmu_info *info)
{
	if (info->features & AMUPMU_FEAT_PMU_EXCLUSIVE)
		return "exclusive mode (amupmu owns the PMU)";
	if (info->features & AMUPMU_FEAT_PMU_SHARED)
		return "shared mode (arm_pmu owns the PMU, sessions through perf core)";
	if (info->pmu_owner == AMUPMU_PMU_OWNER_KERNEL)
		return "kernel-owned, shared mode off (PMU commands ENXIO)";
	return "no PMU";
}

/*
 * Set pmu_shared to @on; its value before into @was (may be NULL).
 * Returns 0 or -errno.
 */
static inline int amupmu_set_pmu_shared(bool on, bool *was)
{
	char buf[8];
	int ret;

	if (was) {
		ret = amupmu_read_line(AMUPMU_PMU_SHARED_PARAM, buf, sizeof(buf));
		if (ret)
			return ret;
		*was = buf[0] == 'Y';
	}
	return amupmu_write_str(AMUPMU_PMU_SHARED_PARAM, on ? "Y" : "N");
}

/* @len bytes at @p all equal @byte. */
static inline bool all_bytes(const void *p, size_t len, unsigned char byte)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != byte)
			return false;
	return true;
}

/* ---------------------------------------------------------------- AMU */

_Static_assert(sizeof(struct amupmu_amu_read) == AMUPMU_AMU_READ_SIZE_VER0,
	       "struct amupmu_amu_read: the tests know ABI 2.1's layout");
_Static_assert(sizeof(struct amupmu_amu_cpu) == AMUPMU_AMU_CPU_SIZE_VER0,
	       "struct amupmu_amu_cpu: the tests know ABI 2.1's layout");
_Static_assert(sizeof(struct amupmu_id_frame) == 56, "struct amupmu_id_frame layout");

/* AMUv1 group 0 (Arm ARM, "Activity monitors architected events") */
#define AMU_EV_CPU_CYCLES		0x0011
#define AMU_EV_CNT_CYCLES		0x4004
#define AMU_EV_INST_RETIRED		0x0008
#define AMU_EV_STALL_BACKEND_MEM	0x4005
/* amupmu_amu_cpu.group0 index of each on AMUv1 */
#define AMU_G0_CPU_CYCLES		0
#define AMU_G0_CNT_CYCLES		1
#define AMU_G0_INST_RETIRED		2
#define AMU_G0_STALL_BACKEND_MEM	3
/* amupmu_amu_read.cpus_len and entry_size: the largest accepted */
#define AMUPMU_AMU_CPUS_LEN_MAX		1024
#define AMUPMU_AMU_ENTRY_SIZE_MAX	4096

/*
 * Build an AMUPMU_AMU_READ request: a CPU bitmap of @cpus_len bytes at
 * @cpus, @nr entries of @entry_size bytes at @entries; output fields set
 * to sentinels.
 */
static inline void amupmu_amu_read_init(struct amupmu_amu_read *rd, const __u64 *cpus,
					__u32 cpus_len, void *entries, __u32 nr,
					__u32 entry_size)
{
	memset(rd, 0, sizeof(*rd));
	rd->size = sizeof(*rd);
	rd->cpus_uptr = (__u64)(uintptr_t)cpus;
	rd->cpus_len = cpus_len;
	rd->nr_cpus = nr;
	rd->entry_size = entry_size;
	rd->entries_uptr = (__u64)(uintptr_t)entries;
	rd->timer_freq = AMUPMU_SENTINEL64;
}

/* One AMUPMU_AMU_READ of @cpu alone into @e. Returns 0 or -errno. */
static inline int amupmu_amu_read_cpu(int fd, unsigned int cpu, struct amupmu_amu_cpu *e,
				      struct amupmu_amu_read *rd)
{
	__u64 cpus[AMUPMU_AMU_CPUS_LEN_MAX / 8] = { 0 };

	if (cpu >= AMUPMU_AMU_CPUS_LEN_MAX * 8)
		return -EINVAL;
	cpus[cpu / 64] = 1ULL << (cpu % 64);
	amupmu_amu_read_init(rd, cpus, (cpu / 64 + 1) * 8, e, 1, sizeof(*e));
	return amupmu_ioctl(fd, AMUPMU_AMU_READ, rd);
}

#endif /* AMUPMU_SELFTEST_H */
