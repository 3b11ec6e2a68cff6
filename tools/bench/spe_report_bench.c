// SPDX-License-Identifier: GPL-2.0
/*
 * spe_report_bench RECORDS RUNS -- amupmu spe report -i FILE ...: runs the
 * report command RUNS times on CPU 0 (its output to /dev/null) and prints
 * the median wall time and the records decoded per second, given the
 * RECORDS the recording holds (the driver's count, from the recording's
 * "cpu" lines):
 *   BENCH spe_report.records_per_s <n> (records=<r> median_ns=<t> runs=<k>)
 * End to end: exec, reading the file, decoding every record, symbols and
 * the aggregation of the report.
 */
#define _GNU_SOURCE
#include "bench_util.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t run_once(char **argv)
{
	uint64_t t0 = now_ns();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (!pid) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "%s: %s failed (status 0x%x)\n", bench_name, argv[0], status);
		exit(1);
	}
	return now_ns() - t0;
}

int main(int argc, char **argv)
{
	unsigned long long records;
	uint64_t *t, median;
	int runs, i;

	bench_name = "spe_report_bench";
	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: spe_report_bench RECORDS RUNS -- COMMAND [ARGS...]\n");
		return 2;
	}
	records = strtoull(argv[1], NULL, 0);
	runs = atoi(argv[2]);
	if (!records || runs < 1 || runs > 1000) {
		fprintf(stderr, "%s: RECORDS must be > 0 and RUNS 1..1000\n", bench_name);
		return 2;
	}
	pin_cpu0();
	t = calloc(runs, sizeof(*t));
	if (!t)
		die("calloc");
	for (i = 0; i < runs; i++)
		t[i] = run_once(argv + 4);
	qsort(t, runs, sizeof(*t), cmp_u64);
	median = t[runs / 2];
	printf("BENCH spe_report.records_per_s %llu (records=%llu median_ns=%llu runs=%d)\n",
	       (unsigned long long)(records * 1000000000ull / (median ? median : 1)), records,
	       (unsigned long long)median, runs);
	free(t);
	return 0;
}
