// SPDX-License-Identifier: GPL-2.0
/*
 * pmu_read_bench: cost of one batch read of the cycle counter plus six
 * event counters on CPU 0, through amupmu (AMUPMU_PMU_READ, amupmu
 * devicetree board) or through perf (read() of a perf_event_open group,
 * stock board). Prints the median of N reads in guest ns as
 *   BENCH pmu_read.<mode>_ns <median> (n=<N>, min <min>, p90 <p90>)
 * Under -icount shift=0 guest time is a deterministic function of the
 * instructions executed, so two boots compare.
 *
 *   pmu_read_bench amupmu|shared|perf|null|null-shared|amupmu-all|shared-all|perf-all|
 *                  amupmu-remote|shared-remote|perf-remote|shared-mux|perf-mux [N]
 *
 * amupmu is exclusive mode (amupmu devicetree: amupmu owns the PMU);
 * shared is the same READ in shared mode (stock devicetree, ABI 2.3: the
 * kernel's arm_pmu owns the PMU and amupmu's counters are pinned in-kernel
 * perf counters, read on their CPU), printed as pmu_read.shared_ns; each
 * checks the mode (AMUPMU_INFO's features) and refuses to run in the other.
 *
 * null: an AMUPMU_PMU_CTL the driver refuses (EINVAL), i.e. the cost of the
 * system call and the ioctl dispatch alone, for reference (null-shared: the
 * same with the group configured in shared mode, pmu_read.null_shared_ns).
 *
 * *-remote: the 7 events counted on CPU 1 only, read from CPU 0: one
 * AMUPMU_PMU_READ of CPU 1 (the driver's IPI to it) against one read() of a
 * perf group bound to CPU 1 (perf's IPI to it). Printed as
 *   BENCH pmu_read_remote.<amupmu|shared|perf>_ns <median> (n=<N>, ...)
 *
 * shared-mux / perf-mux: the 7 events as a multiplexed group (shared mode,
 * AMUPMU_PMU_CONFIG_MULTIPLEX: each event a flexible perf event of its own)
 * read with AMUPMU_PMU_READ_TIMES, each value with its time enabled and
 * running, against what perf offers for the same thing: 7 events opened
 * on their own (not a group, so each multiplexes on its own), one read()
 * of each with PERF_FORMAT_TOTAL_TIME_ENABLED and _RUNNING. Printed as
 *   BENCH pmu_read_mux.<shared|perf>_ns <median> (n=<N>, ...)
 *
 * amupmu-all / perf-all: the same seven events counted system-wide on every
 * online CPU (CPUs 0 .. online - 1), and one read of all of them: amupmu's
 * single AMUPMU_PMU_READ with AMUPMU_PMU_READ_ALL against one read() of
 * each CPU's perf group (a group per CPU). Printed as
 *   BENCH pmu_read_all.<amupmu|perf>_ns <median> (cpus=<vCPUs>, n=<N>, min <min>, p90 <p90>)
 * (the reader stays on CPU 0: the other CPUs' counters are remote to it).
 *
 * amu / amupmu4 (ABI 2.1; a mock build on the amupmu devicetree): one
 * AMUPMU_AMU_READ of CPU 0's AMU (every group 0 and group 1 counter and
 * the time, read on the CPU), and for comparison one AMUPMU_PMU_READ of
 * four PMU counters (CPU_CYCLES on the cycle counter, INST_RETIRED,
 * SW_INCR, CPU_CYCLES). Printed as
 *   BENCH amu_read.<amu|pmu4>_ns <median> (backend=<mock|hardware>, n=<N>, ...)
 * On the mock build the AMU registers are the model's: each read is a
 * function call computing the value from the model's time and rates where
 * hardware runs an mrs, so the figure is the ioctl's path around them.
 * amu-min: the same read, printed as amu_read.amu_min_ns, for a run where
 * the payload has set the model to its cheapest arithmetic (active fixed,
 * every counter disabled: no idle-time lookup, no 128-bit division), which
 * bounds what the model itself costs.
 * amu-bare: the same read, printed as amu_read.amu_bare_ns, for a run where
 * the payload has frozen CPU 0's model (amu_model "frozen=1": a counter
 * read is a plain load of a held value), so that the figure is the
 * driver's path around the eight register reads: the "driver path" figure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/amupmu.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define NR_EVENTS 7
#define MAX_CPUS 1024
/* CPU_CYCLES (cycle counter) + six event counters QEMU implements under icount */
static const unsigned int events[NR_EVENTS] = { 0x11, 0x08, 0x00, 0x23, 0x24, 0x3c, 0x11 };

static int nr_cpus = 1;	/* CPUs counted: 1 (CPU 0), or every online one for *-all */
static int remote_cpu;		/* *-remote: the one CPU counted (1); else 0 */
static int shared_mode;		/* the amupmu figure is shared mode's, not exclusive's */
static int mux;			/* *-mux: a multiplexed group, values with their times */

/* CPUs 0 .. nr_cpus - 1 as an amupmu CPU bitmap */
static uint64_t cpu_mask[MAX_CPUS / 64];

static int amupmu_setup(void)
{
	struct amupmu_pmu_event evs[NR_EVENTS];
	struct amupmu_pmu_config cfg = { .size = sizeof(cfg) };
	struct amupmu_pmu_ctl ctl = { .size = sizeof(ctl), .op = AMUPMU_PMU_CTL_ENABLE };
	int fd, i;

	fd = open("/dev/amupmu", O_RDWR);
	if (fd < 0)
		die("/dev/amupmu");
	memset(evs, 0, sizeof(evs));
	for (i = 0; i < NR_EVENTS; i++)
		evs[i].event = events[i];
	cfg.nr_events = NR_EVENTS;
	cfg.event_size = sizeof(evs[0]);
	cfg.events_uptr = (uintptr_t)evs;
	cfg.flags = mux ? AMUPMU_PMU_CONFIG_MULTIPLEX : 0;
	if (remote_cpu) {
		cpu_mask[remote_cpu / 64] |= 1ULL << (remote_cpu % 64);
		cfg.cpus_len = (remote_cpu / 64 + 1) * sizeof(uint64_t);
	} else {
		for (i = 0; i < nr_cpus; i++)
			cpu_mask[i / 64] |= 1ULL << (i % 64);
		cfg.cpus_len = ((nr_cpus + 63) / 64) * sizeof(uint64_t);
	}
	cfg.cpus_uptr = (uintptr_t)cpu_mask;
	require_pmu_mode(fd, shared_mode);
	if (ioctl(fd, AMUPMU_PMU_CONFIG, &cfg))
		die("AMUPMU_PMU_CONFIG");
	/* shared mode: perf core places the events, no counter index */
	if ((cfg.counters[0] == AMUPMU_COUNTER_PERF) != shared_mode) {
		fprintf(stderr, "pmu_read_bench: counter %u of event 0 in %s mode\n", cfg.counters[0],
			shared_mode ? "shared" : "exclusive");
		exit(1);
	}
	if (ioctl(fd, AMUPMU_PMU_CTL, &ctl))
		die("AMUPMU_PMU_CTL");
	return fd;
}

static void amupmu_read_once(int fd)
{
	static struct amupmu_pmu_value vals[NR_EVENTS];
	struct amupmu_pmu_read rd = {
		.size = sizeof(rd), .cpu = remote_cpu, .nr_values = NR_EVENTS,
		.values_uptr = (uintptr_t)vals,
	};

	if (ioctl(fd, AMUPMU_PMU_READ, &rd))
		die("AMUPMU_PMU_READ");
}

/* a multiplexed group's READ: each value with its time enabled and running */
static void amupmu_read_mux_once(int fd)
{
	static struct amupmu_pmu_value_times vals[NR_EVENTS];
	struct amupmu_pmu_read rd = {
		.size = sizeof(rd), .flags = AMUPMU_PMU_READ_TIMES, .nr_values = NR_EVENTS,
		.values_uptr = (uintptr_t)vals,
	};

	if (ioctl(fd, AMUPMU_PMU_READ, &rd))
		die("AMUPMU_PMU_READ with AMUPMU_PMU_READ_TIMES");
}

/* AMUPMU_PMU_READ_ALL: every CPU's entry (struct amupmu_pmu_read_cpu and
 * NR_EVENTS values) in one call */
static void amupmu_read_all_once(int fd)
{
	static uint64_t buf[MAX_CPUS * (sizeof(struct amupmu_pmu_read_cpu) +
					NR_EVENTS * sizeof(struct amupmu_pmu_value)) / 8];
	struct amupmu_pmu_read rd = {
		.size = sizeof(rd), .flags = AMUPMU_PMU_READ_ALL, .nr_values = NR_EVENTS,
		.values_uptr = (uintptr_t)buf, .nr_cpus = nr_cpus,
	};

	if (ioctl(fd, AMUPMU_PMU_READ, &rd))
		die("AMUPMU_PMU_READ_ALL");
	if (rd.nr_cpus != (uint32_t)nr_cpus)
		fprintf(stderr, "pmu_read_bench: READ_ALL wrote %u entries, not %d\n", rd.nr_cpus, nr_cpus);
}

static int perf_leaders[MAX_CPUS];

/* one perf group of the NR_EVENTS events on cpu; returns its leader */
static int perf_group(int cpu)
{
	struct perf_event_attr attr;
	int leader = -1, fd, i;

	for (i = 0; i < NR_EVENTS; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_RAW;
		attr.config = events[i];
		attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
				   PERF_FORMAT_TOTAL_TIME_RUNNING;
		attr.disabled = i == 0;
		fd = syscall(SYS_perf_event_open, &attr, -1, cpu, leader, 0);
		if (fd < 0)
			die("perf_event_open");
		if (i == 0)
			leader = fd;
	}
	if (ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP))
		die("PERF_EVENT_IOC_ENABLE");
	return leader;
}

/* perf-mux: the NR_EVENTS events each on its own on CPU 0, in perf_leaders[] */
static int perf_solo_setup(void)
{
	struct perf_event_attr attr;
	int i;

	for (i = 0; i < NR_EVENTS; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_RAW;
		attr.config = events[i];
		attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		perf_leaders[i] = syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0);
		if (perf_leaders[i] < 0)
			die("perf_event_open");
	}
	return perf_leaders[0];
}

/* one read() per event: value, time enabled, time running */
static void perf_read_solo_once(int fd)
{
	uint64_t buf[3];
	int i;

	(void)fd;
	for (i = 0; i < NR_EVENTS; i++)
		if (read(perf_leaders[i], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			die("read of a perf event");
}

static int perf_setup(void)
{
	int cpu;

	if (mux)
		return perf_solo_setup();
	if (remote_cpu)
		return perf_group(remote_cpu);
	for (cpu = 0; cpu < nr_cpus; cpu++)
		perf_leaders[cpu] = perf_group(cpu);
	return perf_leaders[0];
}

static void perf_read_once(int fd)
{
	static uint64_t buf[3 + NR_EVENTS];

	if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		die("read of the perf group");
	if (buf[1] != buf[2])
		fprintf(stderr, "pmu_read_bench: perf group multiplexed\n");
}

/* one read() of every CPU's group: what perf stat -a does each interval */
static void perf_read_all_once(int fd)
{
	int cpu;

	(void)fd;
	for (cpu = 0; cpu < nr_cpus; cpu++)
		perf_read_once(perf_leaders[cpu]);
}

/* ---------------------------------------------------------------- AMU */

static uint64_t amu_cpus = 1;	/* CPU 0 */
static struct amupmu_amu_cpu amu_entry;

static int amu_setup(void)
{
	int fd = open("/dev/amupmu", O_RDWR);

	if (fd < 0)
		die("/dev/amupmu");
	return fd;
}

static void amu_read_once(int fd)
{
	struct amupmu_amu_read rd = {
		.size = sizeof(rd), .cpus_uptr = (uintptr_t)&amu_cpus, .cpus_len = 8,
		.nr_cpus = 1, .entry_size = sizeof(amu_entry),
		.entries_uptr = (uintptr_t)&amu_entry,
	};

	if (ioctl(fd, AMUPMU_AMU_READ, &rd))
		die("AMUPMU_AMU_READ");
}

/* four PMU counters on CPU 0, as amupmu_setup() with the first four events */
static int pmu4_setup(void)
{
	static const unsigned int ev4[4] = { 0x11, 0x08, 0x00, 0x11 };
	struct amupmu_pmu_event evs[4];
	struct amupmu_pmu_config cfg = { .size = sizeof(cfg) };
	struct amupmu_pmu_ctl ctl = { .size = sizeof(ctl), .op = AMUPMU_PMU_CTL_ENABLE };
	int fd = amu_setup(), i;

	memset(evs, 0, sizeof(evs));
	for (i = 0; i < 4; i++)
		evs[i].event = ev4[i];
	cpu_mask[0] = 1;
	cfg.nr_events = 4;
	cfg.event_size = sizeof(evs[0]);
	cfg.events_uptr = (uintptr_t)evs;
	cfg.cpus_uptr = (uintptr_t)cpu_mask;
	cfg.cpus_len = sizeof(uint64_t);
	if (ioctl(fd, AMUPMU_PMU_CONFIG, &cfg))
		die("AMUPMU_PMU_CONFIG");
	if (ioctl(fd, AMUPMU_PMU_CTL, &ctl))
		die("AMUPMU_PMU_CTL");
	return fd;
}

static void pmu4_read_once(int fd)
{
	static struct amupmu_pmu_value vals[4];
	struct amupmu_pmu_read rd = {
		.size = sizeof(rd), .cpu = 0, .nr_values = 4, .values_uptr = (uintptr_t)vals,
	};

	if (ioctl(fd, AMUPMU_PMU_READ, &rd))
		die("AMUPMU_PMU_READ");
}

/* "mock" or "hardware", from sysfs */
static const char *amu_backend(void)
{
	static char buf[32];
	FILE *f = fopen("/sys/class/misc/amupmu/backend", "r");

	if (!f || !fgets(buf, sizeof(buf), f))
		snprintf(buf, sizeof(buf), "unknown");
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void null_read_once(int fd)
{
	struct amupmu_pmu_ctl ctl = { .size = sizeof(ctl), .op = 0 };

	if (!ioctl(fd, AMUPMU_PMU_CTL, &ctl) || errno != EINVAL)
		die("AMUPMU_PMU_CTL op 0 not refused with EINVAL");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int all = !strcmp(mode, "amupmu-all") || !strcmp(mode, "perf-all") || !strcmp(mode, "shared-all");
	int remote = !strcmp(mode, "amupmu-remote") || !strcmp(mode, "perf-remote") ||
		     !strcmp(mode, "shared-remote");
	int is_mux = !strcmp(mode, "shared-mux") || !strcmp(mode, "perf-mux");
	int perf = !strcmp(mode, "perf") || !strcmp(mode, "perf-all") || !strcmp(mode, "perf-remote") ||
		   !strcmp(mode, "perf-mux");
	int null = !strcmp(mode, "null") || !strcmp(mode, "null-shared");
	int shared = !strcmp(mode, "shared") || !strcmp(mode, "shared-all") || !strcmp(mode, "shared-remote") ||
		     !strcmp(mode, "null-shared") || !strcmp(mode, "shared-mux");
	/* the figure's name: amupmu (exclusive), shared, perf, null, null_shared */
	const char *who = perf ? "perf" : !null ? (shared ? "shared" : "amupmu") : shared ? "null_shared" : "null";
	int amu_min = !strcmp(mode, "amu-min"), amu_bare = !strcmp(mode, "amu-bare");
	int amu = !strcmp(mode, "amu") || amu_min || amu_bare, pmu4 = !strcmp(mode, "amupmu4");
	long n = argc > 2 ? strtol(argv[2], NULL, 0) : 10000;
	void (*read_once)(int fd);
	uint64_t *t, t0;
	long i;
	int fd;

	if ((!perf && !null && !all && !remote && !shared && !amu && !pmu4 && strcmp(mode, "amupmu")) || n < 1) {
		fprintf(stderr, "usage: pmu_read_bench amupmu|shared|perf|null|null-shared|amupmu-all|shared-all|"
			"perf-all|amupmu-remote|shared-remote|perf-remote|shared-mux|perf-mux|amu|amu-min|amu-bare|"
			"amupmu4 [N]\n");
		return 2;
	}
	bench_name = "pmu_read_bench";
	shared_mode = shared;
	mux = is_mux;
	if (all) {
		nr_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
		if (nr_cpus < 1 || nr_cpus > MAX_CPUS)
			die("sysconf(_SC_NPROCESSORS_ONLN)");
	}
	if (remote) {
		if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
			fprintf(stderr, "pmu_read_bench: %s needs CPU 1 online\n", mode);
			return 1;
		}
		remote_cpu = 1;
	}
	pin_cpu0();
	fd = perf ? perf_setup() : amu ? amu_setup() : pmu4 ? pmu4_setup() : amupmu_setup();
	if (amu || pmu4)
		read_once = amu ? amu_read_once : pmu4_read_once;
	else if (all)
		read_once = perf ? perf_read_all_once : amupmu_read_all_once;
	else if (mux)
		read_once = perf ? perf_read_solo_once : amupmu_read_mux_once;
	else
		read_once = perf ? perf_read_once : null ? null_read_once : amupmu_read_once;
	t = calloc(n, sizeof(*t));
	if (!t)
		die("calloc");
	for (i = 0; i < 100; i++)	/* warm up */
		read_once(fd);
	/*
	 * One sleep, i.e. one context switch, before timing. glibc's memcpy
	 * uses SVE on this CPU; from 6.2 the kernel keeps a task's SVE state
	 * live across system calls until it is switched out, flushing it on
	 * every call meanwhile (sve_flush_live(), about 60 instructions). That
	 * cost belongs to the process, not to either driver, and would land
	 * in whichever run happened not to be switched out (a perf read() may
	 * reschedule, amupmu's READ never does): after the switch neither
	 * pays it, the loop below uses no SVE.
	 */
	usleep(1000);
	for (i = 0; i < n; i++) {
		t0 = now_ns();
		read_once(fd);
		t[i] = now_ns() - t0;
	}
	qsort(t, n, sizeof(*t), cmp_u64);
	if (amu || pmu4)
		printf("BENCH amu_read.%s_ns %llu (backend=%s, n=%ld, min %llu, p90 %llu)\n",
		       amu_min ? "amu_min" : amu_bare ? "amu_bare" : amu ? "amu" : "pmu4",
		       (unsigned long long)t[n / 2],
		       amu_backend(), n,
		       (unsigned long long)t[0], (unsigned long long)t[n * 9 / 10]);
	else if (all)
		printf("BENCH pmu_read_all.%s_ns %llu (cpus=%d, n=%ld, min %llu, p90 %llu)\n",
		       who, (unsigned long long)t[n / 2], nr_cpus, n,
		       (unsigned long long)t[0], (unsigned long long)t[n * 9 / 10]);
	else
		printf("BENCH pmu_read%s.%s_ns %llu (n=%ld, min %llu, p90 %llu)\n",
		       remote ? "_remote" : mux ? "_mux" : "", who,
		       (unsigned long long)t[n / 2], n, (unsigned long long)t[0],
		       (unsigned long long)t[n * 9 / 10]);
	return 0;
}
