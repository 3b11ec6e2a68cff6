// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu-workload-dyn: a dynamically linked workload whose time goes to
 * libc's shared library, for record/report of a dynamic program and of
 * the processes it forks.
 *
 *   amupmu-workload-dyn ROUNDS
 *
 * forks a child; the parent scans a 4 KiB string ROUNDS times with
 * strcspn(), and so does a thread it starts and names "dyn-thread" (a
 * thread's own name, as perf's comm is per thread); the child scans with
 * strspn() (both plain functions of libc.so.6's dynamic symbol table on
 * arm64, not IFUNCs whose implementations only the stripped .symtab
 * names). Prints one line to stderr; exits 0 when all three scanned what
 * they should have.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static char text[4096];

typedef size_t (*scan_fn)(const char *, const char *);

/* through a volatile pointer: the calls are not hoisted out of the loop */
static int scan(scan_fn volatile fn, const char *set, unsigned long rounds)
{
	unsigned long i;

	for (i = 0; i < rounds; i++)
		if (fn(text, set) != sizeof(text) - 1)
			return 1;
	return 0;
}

static unsigned long rounds;

static void *thread_main(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "dyn-thread", 0, 0, 0);
	return scan(strcspn, "xyz", rounds) ? (void *)1 : NULL;
}

int main(int argc, char **argv)
{
	char *end = NULL;
	pid_t child;
	pthread_t thread;
	void *thread_bad = (void *)1;
	int st = 0, bad;

	rounds = argc == 2 ? strtoul(argv[1], &end, 10) : 0;
	if (argc != 2 || !end || *end || end == argv[1]) {
		fputs("Usage: amupmu-workload-dyn ROUNDS\n", stderr);
		return 2;
	}
	memset(text, 'a', sizeof(text) - 1);
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0)
		_exit(scan(strspn, "a", rounds));
	if (pthread_create(&thread, NULL, thread_main, NULL) != 0) {
		fputs("dyn: pthread_create failed\n", stderr);
		return 1;
	}
	bad = scan(strcspn, "xyz", rounds);
	if (pthread_join(thread, &thread_bad) != 0 || thread_bad)
		bad = 1;
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		bad = 1;
	fprintf(stderr,
		"dyn: 2 processes x %lu rounds of 4 KiB in libc (strcspn, also in thread dyn-thread; strspn in a child)%s\n",
		rounds,
		bad ? ": FAILED" : "");
	return bad;
}
