/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Dropping privileges in a child, for the selftests that check what an
 * unprivileged caller may do. Needs _GNU_SOURCE (setresuid) before any
 * include.
 */
#ifndef AMUPMU_PRIV_H
#define AMUPMU_PRIV_H

#include <errno.h>
#include <grp.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/types.h>

/* The uid / gid tests drop to: "nobody" (the board has no user database). */
#define AMUPMU_NOBODY		65534

/*
 * Drop the calling process to @uid/@gid with exactly the capabilities in
 * @caps (a bit mask of CAP_* numbers below 64) effective and permitted.
 * @uid 0 keeps root's uid and only narrows the capabilities.
 * Returns 0 or -errno.
 */
static inline int amupmu_drop_privileges(uid_t uid, gid_t gid, __u64 caps)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return -errno;
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
		return -errno;
	memset(data, 0, sizeof(data));
	data[0].effective = data[0].permitted = (__u32)caps;
	data[1].effective = data[1].permitted = (__u32)(caps >> 32);
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

/*
 * Run @fn(@arg) in a child dropped to @uid/@gid/@caps. The child's return
 * value (0 or -errno, as a small negative number) comes back; -ECHILD when
 * the child could not drop its privileges or died.
 */
static inline int amupmu_run_as(uid_t uid, gid_t gid, __u64 caps, int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		if (amupmu_drop_privileges(uid, gid, caps))
			_exit(255);
		_exit((unsigned char)-fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) == 255)
		return -ECHILD;
	return -WEXITSTATUS(status);
}

#endif /* AMUPMU_PRIV_H */
