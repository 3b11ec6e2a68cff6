/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the board benchmarks. */
#ifndef AMUPMU_BENCH_UTIL_H
#define AMUPMU_BENCH_UTIL_H

#include <errno.h>
#include <linux/amupmu.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

static const char *bench_name;	/* set by main() for messages */

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static inline void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", bench_name, what, strerror(errno));
	exit(1);
}

/* Run on CPU 0 only: both drivers are measured on the same CPU. */
static inline void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

/* AMUPMU_INFO's features of an open /dev/amupmu (enum amupmu_features). */
static inline uint64_t amupmu_features(int fd)
{
	struct amupmu_info info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (ioctl(fd, AMUPMU_INFO, &info))
		die("AMUPMU_INFO");
	return info.features;
}

/*
 * The PMU mode a figure is for, checked before it is taken: shared (the
 * kernel's arm_pmu owns the PMU, amupmu counts through perf core) or
 * exclusive (amupmu owns it); a board in the other mode is an error.
 */
static inline void require_pmu_mode(int fd, int shared)
{
	uint64_t want = shared ? AMUPMU_FEAT_PMU_SHARED : AMUPMU_FEAT_PMU_EXCLUSIVE;

	if (!(amupmu_features(fd) & want)) {
		fprintf(stderr, "%s: amupmu is not in %s mode here\n", bench_name,
			shared ? "shared" : "exclusive");
		exit(1);
	}
}

#endif
