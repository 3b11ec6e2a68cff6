// SPDX-License-Identifier: GPL-2.0
/*
 * A PMU session for the shell tests (amupmu_hotplug.sh, amupmu_modparam.sh),
 * which cannot issue ioctls themselves:
 *
 *   amupmu_session info
 *	AMUPMU_INFO in one line: "features=0x<hex> pmu_owner=<n> mode=<m>",
 *	m one of exclusive, shared, off (arm_pmu owns the PMU, shared mode
 *	off), none (no PMU)
 *   amupmu_session count CPULIST
 *	CONFIG CPU_CYCLES on the CPUs of CPULIST ("0-1,3"), ENABLE, print
 *	"counting" and wait for SIGINT, SIGTERM or SIGUSR1; then READ each
 *	CPU of the list: "cpu<n> value=<count> state=0x<hex>" per line
 *
 * Exit status: 0; 2 usage; 3 CONFIG refused (its errno's name on stderr:
 * "CONFIG: ENXIO"); 4 another call failed.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>

/* the tests' helpers; their harness (test_harness_run()) is not used here */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "amupmu_test.h"
#pragma GCC diagnostic pop

static int usage(void)
{
	fprintf(stderr, "usage: amupmu_session info | count CPULIST\n");
	return 2;
}

static const char *errname(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "?";
}

static int info(int fd)
{
	struct amupmu_info info;
	const char *mode = "none";
	int ret = amupmu_query(fd, &info, NULL, 0);

	if (ret) {
		fprintf(stderr, "INFO: %s\n", errname(-ret));
		return 4;
	}
	if (info.features & AMUPMU_FEAT_PMU_EXCLUSIVE)
		mode = "exclusive";
	else if (info.features & AMUPMU_FEAT_PMU_SHARED)
		mode = "shared";
	else if (info.pmu_owner == AMUPMU_PMU_OWNER_KERNEL)
		mode = "off";
	printf("features=0x%llx pmu_owner=%u mode=%s\n", (unsigned long long)info.features,
	       info.pmu_owner, mode);
	return 0;
}

static int count(int fd, const char *list)
{
	static struct amupmu_cpumask mask;
	__u64 cpus[AMUPMU_PMU_CPUS_LEN_MAX / 8] = { 0 };
	struct amupmu_pmu_value v;
	struct amupmu_pmu_event ev;
	struct amupmu_pmu_config cfg;
	struct amupmu_pmu_read rd;
	unsigned int cpu;
	sigset_t set;
	int ret, sig;

	if (amupmu_cpulist_parse(list, &mask) || !mask.nr || mask.nr > AMUPMU_PMU_CPUS_LEN_MAX * 8)
		return usage();
	for (cpu = 0; cpu < mask.nr; cpu++)
		if (mask.cpu[cpu])
			cpus[cpu / 64] |= 1ULL << (cpu % 64);
	/* the signals wait for sigwait() from here on */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);

	amupmu_pmu_event_set(&ev, PMUV3_EV_CPU_CYCLES, 0);
	amupmu_pmu_config_init(&cfg, &ev, 1, cpus, ((mask.nr + 63) / 64) * 8);
	ret = amupmu_ioctl(fd, AMUPMU_PMU_CONFIG, &cfg);
	if (ret) {
		fprintf(stderr, "CONFIG: %s\n", errname(-ret));
		return 3;
	}
	ret = amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_ENABLE);
	if (ret) {
		fprintf(stderr, "ENABLE: %s\n", errname(-ret));
		return 4;
	}
	printf("counting\n");
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 4;
	for (cpu = 0; cpu < mask.nr; cpu++) {
		if (!mask.cpu[cpu])
			continue;
		ret = amupmu_pmu_read(fd, cpu, &v, 1, &rd);
		if (ret) {
			fprintf(stderr, "READ cpu%u: %s\n", cpu, errname(-ret));
			return 4;
		}
		printf("cpu%u value=%llu state=0x%x\n", cpu, (unsigned long long)v.value, rd.state);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int fd, ret;

	if (argc < 2 || (strcmp(argv[1], "info") && strcmp(argv[1], "count")) ||
	    (!strcmp(argv[1], "count") && argc != 3) || (!strcmp(argv[1], "info") && argc != 2))
		return usage();
	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", AMUPMU_DEV, errname(errno));
		return 4;
	}
	ret = !strcmp(argv[1], "info") ? info(fd) : count(fd, argv[2]);
	close(fd);
	return ret;
}
