// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu_runas UID CMD [ARG...]: run CMD as UID (and gid UID) without any
 * capability, for the shell parts of the privilege checks (the board's
 * busybox has no user database, su or setpriv).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "amupmu_priv.h"

int main(int argc, char **argv)
{
	unsigned long uid = 0;
	char *end = NULL;
	int ret;

	if (argc >= 3)
		uid = strtoul(argv[1], &end, 10);
	if (argc < 3 || end == argv[1] || *end || uid > 0xfffffffe) {
		fprintf(stderr, "usage: amupmu_runas UID CMD [ARG...]\n");
		return 2;
	}
	ret = amupmu_drop_privileges(uid, uid, 0);
	if (ret) {
		fprintf(stderr, "amupmu_runas: %s\n", strerror(-ret));
		return 2;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "amupmu_runas: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
