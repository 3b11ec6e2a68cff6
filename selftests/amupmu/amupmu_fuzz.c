// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl fuzzer of /dev/amupmu. From AMUPMU_FUZZ_THREADS threads (default
 * 4) sharing a pool of open files that they close and reopen at random, it
 * issues AMUPMU_FUZZ_CALLS calls (default 200000; `make soak` 10000000):
 *
 *  - the driver's commands (AMUPMU_AMU_READ too: the mock AMU model in
 *    mock builds, EOPNOTSUPP where no CPU has a usable AMU) with a
 *    valid-looking struct that has exactly one
 *    field mutated (random value, one bit flipped, a boundary value, or for
 *    pointers NULL / a kernel address / the guard page / misaligned);
 *  - the driver's commands with random bytes of a random size 0 .. 4 KiB,
 *    a few huge sizes, and structs that end on a guard page;
 *  - random commands of the driver's type (every nr, direction and size
 *    bits) and of any type (except the few the VFS itself serves before the
 *    driver sees them: FIONBIO, FIFREEZE, FICLONE, ...);
 *  - read(), poll() and mmap() of random sizes and protections (the sample
 *    ring's interface);
 *  - in shared mode (the kernel's arm_pmu owns the PMU, sessions go through
 *    perf core), as root: the module parameter pmu_shared turned off and on
 *    now and then, so that CONFIGs race the switch (ENXIO while off);
 *    AMUPMU_FUZZ_TOGGLE_SHARED=0 leaves it alone. It is on again at the end.
 *
 * Every answer must be in the errno contract of include/uapi/linux/amupmu.h
 * (plus EBADF for a file another thread has just closed); only a valid
 * command may succeed. Afterwards nothing is left allocated: a new session
 * gets every counter of every CPU (in shared mode: a group of as many
 * pinned events as the CPU has counters fits, one more is EBUSY), and INFO
 * answers as before. The board
 * payload checks the kernel log (no oops/WARN/BUG), the unload and memory.
 * AMUPMU_FUZZ_SEED makes a run repeatable; the seed is printed.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <sys/mman.h>

#include "amupmu_test.h"

#define FUZZ_POOL		8
#define FUZZ_MAX_THREADS	64U
#define FUZZ_BUF		(2 * AMUPMU_SIZE_MAX)
#define FUZZ_MAX_ERRNO		160
#define KERNEL_ADDR		0xffff800000000000ULL
#define MAX_CPUS_BYTES		1024

enum fuzz_kind {
	KIND_MUTATED,	/* valid struct, one field mutated */
	KIND_RANDOM,	/* driver command, random bytes and size */
	KIND_NR,	/* random command of AMUPMU_TYPE */
	KIND_ANY,	/* random command of any type */
	KIND_FILE,	/* read / poll / mmap */
	KIND_OPEN,	/* close and reopen a pool file */
	KIND_SHARED,	/* turn pmu_shared off or on (shared mode, root) */
	KIND_NR_KINDS,
};

static const char * const kind_names[] = {
	"mutated-struct", "random-bytes", "random-nr", "random-cmd", "read/poll/mmap",
	"close+reopen", "pmu_shared-toggle",
};

/* The driver's commands and their structs. */
enum { C_INFO, C_CONFIG, C_CTL, C_READ, C_AMU_READ, C_SPE_CONFIG, C_SPE_CTL, C_SPE_READ, C_NR };

static const unsigned long cmds[C_NR] = {
	AMUPMU_INFO, AMUPMU_PMU_CONFIG, AMUPMU_PMU_CTL, AMUPMU_PMU_READ, AMUPMU_AMU_READ,
	AMUPMU_SPE_CONFIG, AMUPMU_SPE_CTL, AMUPMU_SPE_READ,
};

static const size_t cmd_size[C_NR] = {
	sizeof(struct amupmu_info), sizeof(struct amupmu_pmu_config),
	sizeof(struct amupmu_pmu_ctl), sizeof(struct amupmu_pmu_read),
	sizeof(struct amupmu_amu_read), sizeof(struct amupmu_spe_config),
	sizeof(struct amupmu_spe_ctl), sizeof(struct amupmu_spe_read),
};

/* A field of a command's struct: what a mutation may hit. */
struct field {
	unsigned short off;
	unsigned char len;	/* 1, 4 or 8 */
	bool ptr;
};

#define F(type, member, isptr) \
	{ offsetof(type, member), sizeof(((type *)0)->member), isptr }

static const struct field info_fields[] = {
	F(struct amupmu_info, size, false), F(struct amupmu_info, flags, false),
	F(struct amupmu_info, abi_major, false), F(struct amupmu_info, abi_minor, false),
	F(struct amupmu_info, features, false), F(struct amupmu_info, supported_ioctls, false),
	F(struct amupmu_info, pmu_owner, false), F(struct amupmu_info, nr_cpus, false),
	F(struct amupmu_info, cpu_entry_size, false), F(struct amupmu_info, __reserved, false),
	F(struct amupmu_info, cpus_uptr, true), F(struct amupmu_info, kernel_el, false),
	F(struct amupmu_info, clock, false), F(struct amupmu_info, spe_owner, false),
	F(struct amupmu_info, __reserved2, false),
};

static const struct field config_fields[] = {
	F(struct amupmu_pmu_config, size, false), F(struct amupmu_pmu_config, flags, false),
	F(struct amupmu_pmu_config, nr_events, false),
	F(struct amupmu_pmu_config, event_size, false),
	F(struct amupmu_pmu_config, events_uptr, true),
	F(struct amupmu_pmu_config, cpus_uptr, true),
	F(struct amupmu_pmu_config, cpus_len, false),
	F(struct amupmu_pmu_config, counters_free, false),
	{ offsetof(struct amupmu_pmu_config, counters), 1, false },
	F(struct amupmu_pmu_config, ring_pages, false),
	F(struct amupmu_pmu_config, __reserved, false),
	/* the first event, through events_uptr */
	{ 0x1000 + offsetof(struct amupmu_pmu_event, event), 4, false },
	{ 0x1000 + offsetof(struct amupmu_pmu_event, flags), 4, false },
	{ 0x1000 + offsetof(struct amupmu_pmu_event, sample_period), 8, false },
	/* the CPU bitmap */
	{ 0x2000, 8, false },
};

static const struct field ctl_fields[] = {
	F(struct amupmu_pmu_ctl, size, false), F(struct amupmu_pmu_ctl, flags, false),
	F(struct amupmu_pmu_ctl, op, false), F(struct amupmu_pmu_ctl, __reserved, false),
};

static const struct field read_fields[] = {
	F(struct amupmu_pmu_read, size, false), F(struct amupmu_pmu_read, flags, false),
	F(struct amupmu_pmu_read, cpu, false), F(struct amupmu_pmu_read, nr_values, false),
	F(struct amupmu_pmu_read, values_uptr, true),
	F(struct amupmu_pmu_read, time_enabled, false),
	F(struct amupmu_pmu_read, time_running, false),
	F(struct amupmu_pmu_read, state, false), F(struct amupmu_pmu_read, nr_cpus, false),
	F(struct amupmu_pmu_read, samples, false), F(struct amupmu_pmu_read, lost, false),
	F(struct amupmu_pmu_read, skid, false),
};

static const struct field amu_read_fields[] = {
	F(struct amupmu_amu_read, size, false), F(struct amupmu_amu_read, flags, false),
	F(struct amupmu_amu_read, cpus_uptr, true),
	F(struct amupmu_amu_read, cpus_len, false), F(struct amupmu_amu_read, nr_cpus, false),
	F(struct amupmu_amu_read, entry_size, false),
	F(struct amupmu_amu_read, __reserved, false),
	F(struct amupmu_amu_read, entries_uptr, true),
	F(struct amupmu_amu_read, timer_freq, false),
	/* the CPU bitmap */
	{ 0x2000, 8, false },
};

static const struct field spe_config_fields[] = {
	F(struct amupmu_spe_config, size, false), F(struct amupmu_spe_config, flags, false),
	F(struct amupmu_spe_config, enables, false), F(struct amupmu_spe_config, pct, false),
	F(struct amupmu_spe_config, pmsfcr, false), F(struct amupmu_spe_config, pmsevfr, false),
	F(struct amupmu_spe_config, pmsnevfr, false),
	F(struct amupmu_spe_config, min_latency, false),
	F(struct amupmu_spe_config, interval, false),
	F(struct amupmu_spe_config, buf_pages, false),
	F(struct amupmu_spe_config, watermark, false),
	F(struct amupmu_spe_config, cpus_len, false),
	F(struct amupmu_spe_config, __reserved, false),
	F(struct amupmu_spe_config, cpus_uptr, true),
	/* the CPU bitmap */
	{ 0x2000, 8, false },
};

static const struct field spe_ctl_fields[] = {
	F(struct amupmu_spe_ctl, size, false), F(struct amupmu_spe_ctl, flags, false),
	F(struct amupmu_spe_ctl, op, false), F(struct amupmu_spe_ctl, __reserved, false),
};

static const struct field spe_read_fields[] = {
	F(struct amupmu_spe_read, size, false), F(struct amupmu_spe_read, flags, false),
	F(struct amupmu_spe_read, nr_cpus, false), F(struct amupmu_spe_read, entry_size, false),
	F(struct amupmu_spe_read, cpus_uptr, true),
};

static const struct {
	const struct field *f;
	size_t n;
} fields[C_NR] = {
	{ info_fields, ARRAY_SIZE(info_fields) },
	{ config_fields, ARRAY_SIZE(config_fields) },
	{ ctl_fields, ARRAY_SIZE(ctl_fields) },
	{ read_fields, ARRAY_SIZE(read_fields) },
	{ amu_read_fields, ARRAY_SIZE(amu_read_fields) },
	{ spe_config_fields, ARRAY_SIZE(spe_config_fields) },
	{ spe_ctl_fields, ARRAY_SIZE(spe_ctl_fields) },
	{ spe_read_fields, ARRAY_SIZE(spe_read_fields) },
};

/* Shared by the threads. */
static struct {
	int pool[FUZZ_POOL];	/* file descriptors, -1 while being reopened */
	unsigned int nr_cpu_ids;
	long page;
	unsigned long long per_thread;
	bool toggle_shared;	/* KIND_SHARED calls happen */
} fz;

/* What one thread did. */
struct fuzz_thread {
	pthread_t tid;
	unsigned int id;
	unsigned long long rng;
	unsigned long long calls[KIND_NR_KINDS];
	unsigned long long ok;
	unsigned long long err[FUZZ_MAX_ERRNO];
	unsigned long long unexpected;
	char first_bad[160];
	unsigned char *map;	/* FUZZ_BUF + 2 pages, the last one PROT_NONE */
	unsigned char *guard;
};

static unsigned long long rnd(struct fuzz_thread *t)
{
	/* xorshift64* */
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 2685821657736338717ULL;
}

static unsigned int rnd_below(struct fuzz_thread *t, unsigned int n)
{
	return (unsigned int)((rnd(t) >> 32) % n);
}

/* A boundary value for a field of @len bytes. */
static __u64 boundary(struct fuzz_thread *t, unsigned int len)
{
	static const __u64 v[] = {
		0, 1, 2, 7, 8, 15, 16, 31, 32, 33, 63, 64, 255, 256, 1023, 1024, 4095, 4096,
		4097, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL, ~0ULL,
		0x8000000000000000ULL, KERNEL_ADDR,
	};
	__u64 x = v[rnd_below(t, ARRAY_SIZE(v))];

	return len == 8 ? x : x & ((1ULL << (8 * len)) - 1);
}

static void put_field(unsigned char *p, unsigned int len, __u64 v)
{
	__u8 b = v;
	__u32 w = v;

	if (len == 1)
		memcpy(p, &b, 1);
	else if (len == 4)
		memcpy(p, &w, 4);
	else
		memcpy(p, &v, 8);
}

static __u64 get_field(const unsigned char *p, unsigned int len)
{
	__u8 b;
	__u32 w;
	__u64 v;

	if (len == 1) {
		memcpy(&b, p, 1);
		return b;
	}
	if (len == 4) {
		memcpy(&w, p, 4);
		return w;
	}
	memcpy(&v, p, 8);
	return v;
}

/*
 * Layout of a thread's buffer: the struct at offset 0 (or moved so that it
 * ends on the guard page), the CONFIG events at 0x1000, the CPU bitmap at
 * 0x2000, INFO's entries / READ's values at 0x2400.
 */
#define OFF_EVENTS	0x1000
#define OFF_CPUS	0x2000
#define OFF_OUT		0x2400
#define OUT_BYTES	(FUZZ_BUF + 0x1000 - OFF_OUT)

static __u64 uptr(const void *p)
{
	return (__u64)(uintptr_t)p;
}

/* A valid-looking request of command @c in @b; returns the struct's size. */
static size_t build_valid(struct fuzz_thread *t, unsigned int c, unsigned char *b)
{
	static const __u32 events[] = {
		PMUV3_EV_CPU_CYCLES, PMUV3_EV_SW_INCR, PMUV3_EV_INST_RETIRED, 0x0001, 0x0003,
		0x0004, 0x0010, 0x0012,
	};
	unsigned int i, nr, cpu = rnd_below(t, fz.nr_cpu_ids);
	struct amupmu_pmu_event *ev = (void *)(b + OFF_EVENTS);
	__u64 *cpus = (void *)(b + OFF_CPUS);

	memset(b, 0, OFF_EVENTS);
	switch (c) {
	case C_INFO: {
		struct amupmu_info *in = (void *)b;
		__u32 n = rnd_below(t, 2) ? fz.nr_cpu_ids : 0;

		amupmu_info_init(in, b + OFF_OUT, n, sizeof(struct amupmu_cpu_info));
		break;
	}
	case C_CONFIG: {
		struct amupmu_pmu_config *cfg = (void *)b;

		nr = 1 + rnd_below(t, 4);
		for (i = 0; i < nr; i++) {
			/* the filters (some count nothing: EINVAL), RAW, one unknown bit */
			amupmu_pmu_event_set(&ev[i], events[rnd_below(t, ARRAY_SIZE(events))],
					     rnd_below(t, 4) ? 0 : rnd_below(t, 128));
			/* sampling: refused before the ring lands, then a ring */
			if (!rnd_below(t, 8))
				ev[i].sample_period = 1ULL << (10 + rnd_below(t, 20));
		}
		memset(cpus, 0, MAX_CPUS_BYTES);
		if (rnd_below(t, 2)) {
			for (i = 0; i < fz.nr_cpu_ids; i++)
				cpus[i / 64] |= 1ULL << (i % 64);
		} else {
			cpus[cpu / 64] |= 1ULL << (cpu % 64);
		}
		amupmu_pmu_config_init(cfg, ev, nr, cpus, ((fz.nr_cpu_ids + 63) / 64) * 8);
		for (i = 0; i < nr; i++)
			if (ev[i].sample_period)
				cfg->ring_pages = 1U << rnd_below(t, 4);
		break;
	}
	case C_CTL:
		amupmu_pmu_ctl_init((void *)b, AMUPMU_PMU_CTL_ENABLE + rnd_below(t, 4));
		break;
	case C_AMU_READ: {
		/* one CPU or every CPU; entries of the kernel's size or larger */
		__u32 esz = rnd_below(t, 4) ? sizeof(struct amupmu_amu_cpu) :
			    sizeof(struct amupmu_amu_cpu) + 8 * rnd_below(t, 16);
		__u32 room = OUT_BYTES / esz;

		memset(cpus, 0, MAX_CPUS_BYTES);
		if (rnd_below(t, 2)) {
			for (i = 0; i < fz.nr_cpu_ids && i < room; i++)
				cpus[i / 64] |= 1ULL << (i % 64);
		} else {
			cpus[cpu / 64] |= 1ULL << (cpu % 64);
		}
		amupmu_amu_read_init((void *)b, cpus, ((fz.nr_cpu_ids + 63) / 64) * 8,
				     b + OFF_OUT, fz.nr_cpu_ids < room ? fz.nr_cpu_ids : room, esz);
		break;
	}
	case C_SPE_CONFIG: {
		/* user space (and the kernel), a small buffer, one CPU or all */
		struct amupmu_spe_config *sc = (void *)b;

		memset(cpus, 0, MAX_CPUS_BYTES);
		if (rnd_below(t, 2)) {
			for (i = 0; i < fz.nr_cpu_ids; i++)
				cpus[i / 64] |= 1ULL << (i % 64);
		} else {
			cpus[cpu / 64] |= 1ULL << (cpu % 64);
		}
		*sc = (struct amupmu_spe_config) {
			.size = sizeof(*sc),
			.flags = rnd_below(t, 4) ? 0 : AMUPMU_SPE_CFG_DEFAULTS,
			.enables = AMUPMU_SPE_EN_USER | (rnd_below(t, 2) ? AMUPMU_SPE_EN_KERNEL : 0),
			.buf_pages = 2U << rnd_below(t, 3),
			.cpus_len = ((fz.nr_cpu_ids + 63) / 64) * 8,
			.cpus_uptr = uptr(cpus),
		};
		if (!sc->flags)
			sc->interval = 256U << rnd_below(t, 8);
		break;
	}
	case C_SPE_CTL:
		*(struct amupmu_spe_ctl *)b = (struct amupmu_spe_ctl) {
			.size = sizeof(struct amupmu_spe_ctl),
			.op = AMUPMU_SPE_CTL_ENABLE + rnd_below(t, 3),
		};
		break;
	case C_SPE_READ:
		*(struct amupmu_spe_read *)b = (struct amupmu_spe_read) {
			.size = sizeof(struct amupmu_spe_read),
			.nr_cpus = fz.nr_cpu_ids < OUT_BYTES / sizeof(struct amupmu_spe_cpu) ?
				   fz.nr_cpu_ids : OUT_BYTES / sizeof(struct amupmu_spe_cpu),
			.entry_size = sizeof(struct amupmu_spe_cpu),
			.cpus_uptr = uptr(b + OFF_OUT),
		};
		break;
	default:
		if (rnd_below(t, 4)) {
			amupmu_pmu_read_init((void *)b, cpu, (void *)(b + OFF_OUT),
					     AMUPMU_PMU_MAX_EVENTS);
		} else {
			/* every CPU: 4 values each, as many entries as fit (at least one) */
			__u32 room = OUT_BYTES / amupmu_read_all_stride(4);

			amupmu_pmu_read_all_init((void *)b, b + OFF_OUT,
						 fz.nr_cpu_ids < room ? fz.nr_cpu_ids : room, 4);
		}
		break;
	}
	return cmd_size[c];
}

/* Mutate one field of the valid request in @b. */
static void mutate(struct fuzz_thread *t, unsigned int c, unsigned char *b)
{
	const struct field *f = &fields[c].f[rnd_below(t, fields[c].n)];
	unsigned char *p = b + f->off;
	__u64 v = get_field(p, f->len);

	if (f->ptr) {
		switch (rnd_below(t, 5)) {
		case 0:
			v = 0;
			break;
		case 1:
			v = KERNEL_ADDR + rnd_below(t, 0x10000);
			break;
		case 2:
			v = uptr(t->guard) - rnd_below(t, 64);
			break;
		case 3:
			v += 1 + rnd_below(t, 7);
			break;
		default:
			v = rnd(t);
			break;
		}
	} else {
		switch (rnd_below(t, 4)) {
		case 0:
			v ^= 1ULL << rnd_below(t, 8 * f->len);
			break;
		case 1:
			v = boundary(t, f->len);
			break;
		case 2:
			v += rnd_below(t, 2) ? 1 : -1;
			break;
		default:
			v = rnd(t);
			break;
		}
	}
	put_field(p, f->len, v);
}

/* Commands the VFS answers itself (do_vfs_ioctl) are never the driver's. */
static bool vfs_cmd(unsigned long cmd)
{
	switch (_IOC_TYPE(cmd)) {
	case 0x00:	/* FIBMAP, FIGETBSZ */
	case 'T':	/* FIONBIO, FIOASYNC, FIOCLEX, FIONCLEX, FIOQSIZE, FIONREAD */
	case 'X':	/* FIFREEZE, FITHAW, FITRIM */
	case 'f':	/* FS_IOC_* */
	case 0x94:	/* FICLONE, FICLONERANGE, FIDEDUPERANGE */
	case 0x15:	/* FS_IOC_GETFSUUID, FS_IOC_GETFSSYSFSPATH */
		return true;
	}
	return false;
}

static bool driver_cmd(unsigned long cmd)
{
	unsigned int c;

	for (c = 0; c < C_NR; c++)
		if (cmd == cmds[c])
			return true;
	return false;
}

static void record(struct fuzz_thread *t, const char *what, unsigned long cmd, int ret,
		   bool may_succeed, const int *allowed)
{
	int err = ret < 0 ? -ret : 0;
	bool ok = false;

	if (!ret) {
		t->ok++;
		ok = may_succeed;
	} else {
		if (err < FUZZ_MAX_ERRNO)
			t->err[err]++;
		for (; *allowed; allowed++)
			if (*allowed == err)
				ok = true;
	}
	if (ok)
		return;
	if (!t->unexpected++)
		snprintf(t->first_bad, sizeof(t->first_bad), "%s cmd 0x%lx: %s", what, cmd,
			 ret ? strerror(err) : "success");
}

/* The errno contract of every command, and EBADF for a just-closed file. */
static const int ioctl_errnos[] = {
	ENOTTY, EFAULT, EINVAL, E2BIG, EOPNOTSUPP, EBUSY, ENXIO, EACCES, ENODEV, ENOMEM, EBADF, 0
};
static const int notty_errnos[] = { ENOTTY, EBADF, 0 };
static const int read_errnos[] = { EINVAL, EAGAIN, EFAULT, EBADF, 0 };
/* ENODEV: no mmap() (no ring yet); EACCES / EPERM: protection refused */
static const int mmap_errnos[] = { ENODEV, EINVAL, EACCES, EPERM, EBADF, ENOMEM, 0 };

static int pool_fd(struct fuzz_thread *t)
{
	return __atomic_load_n(&fz.pool[rnd_below(t, FUZZ_POOL)], __ATOMIC_RELAXED);
}

static int do_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static void fuzz_one(struct fuzz_thread *t)
{
	unsigned int k = rnd_below(t, 100), c = rnd_below(t, C_NR);
	unsigned char *b = t->map;
	unsigned long cmd;
	size_t len;
	int fd = pool_fd(t), ret;

	if (k < 45) {
		t->calls[KIND_MUTATED]++;
		len = build_valid(t, c, b);
		if (rnd_below(t, 8))
			mutate(t, c, b);
		if (!rnd_below(t, 16)) {
			/* the same request, ending on the guard page */
			unsigned char *end = t->guard - len + rnd_below(t, (unsigned int)len);

			memmove(end, b, t->guard - end);
			b = end;
		}
		ret = do_ioctl(fd, cmds[c], b);
		record(t, "mutated", cmds[c], ret, true, ioctl_errnos);
		if (!ret && c == C_CONFIG && rnd_below(t, 2))
			amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_ENABLE + rnd_below(t, 4));
	} else if (k < 70) {
		__u32 size;

		t->calls[KIND_RANDOM]++;
		size = rnd_below(t, 8) ? rnd_below(t, AMUPMU_SIZE_MAX + 1) :
					 (__u32)boundary(t, 4) + (rnd_below(t, 2) ? 0 : 1U << 20);
		len = size < FUZZ_BUF ? size : FUZZ_BUF;
		for (size_t i = 0; i < len; i += 8) {
			__u64 r = rnd(t);

			memcpy(b + i, &r, i + 8 <= len ? 8 : len - i);
		}
		/* mostly zero tails, so that the kernel gets past the size checks */
		if (len > sizeof(__u32) && rnd_below(t, 2))
			memset(b + cmd_size[c], 0, len > cmd_size[c] ? len - cmd_size[c] : 0);
		memcpy(b, &size, sizeof(size));
		if (len < 8 || !rnd_below(t, 8)) {
			/* the struct ends right at the guard page */
			b = t->guard - (len < 4 ? 4 : len);
			memcpy(b, &size, sizeof(size));
		}
		ret = do_ioctl(fd, cmds[c], b);
		record(t, "random", cmds[c], ret, true, ioctl_errnos);
	} else if (k < 82) {
		t->calls[KIND_NR]++;
		cmd = _IOC(rnd_below(t, 4), AMUPMU_TYPE, rnd_below(t, 256),
			   rnd_below(t, 4) ? rnd_below(t, 256) : rnd_below(t, 1U << 14));
		memset(b, 0, 64);
		build_valid(t, c, b);
		ret = do_ioctl(fd, cmd, rnd_below(t, 8) ? (void *)b : NULL);
		record(t, "nr", cmd, ret, driver_cmd(cmd),
		       driver_cmd(cmd) ? ioctl_errnos : notty_errnos);
	} else if (k < 92) {
		t->calls[KIND_ANY]++;
		do
			cmd = (unsigned long)(__u32)rnd(t);
		while (vfs_cmd(cmd));
		ret = do_ioctl(fd, cmd, b);
		record(t, "any", cmd, ret, driver_cmd(cmd),
		       driver_cmd(cmd) ? ioctl_errnos : notty_errnos);
	} else if (k < 99) {
		t->calls[KIND_FILE]++;
		switch (rnd_below(t, 3)) {
		case 0: {
			size_t n = rnd_below(t, 4) ? rnd_below(t, FUZZ_BUF) : rnd_below(t, 64);
			ssize_t r = read(fd, b, n);

			record(t, "read", 0, r < 0 ? -errno : 0, true, read_errnos);
			break;
		}
		case 1: {
			struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT | POLLPRI };
			int r = poll(&p, 1, 0);

			/* poll() itself fails only on its own arguments */
			record(t, "poll", 0, r < 0 ? -errno : 0, true, notty_errnos + 1);
			break;
		}
		default: {
			static const int prots[] = {
				PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE, PROT_NONE,
				PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE | PROT_EXEC,
			};
			size_t pages = rnd_below(t, 4) ? 1 + rnd_below(t, 17) :
					 1 + rnd_below(t, AMUPMU_RING_PAGES_MAX + 2);
			off_t off = rnd_below(t, 4) ? 0 : (off_t)rnd_below(t, 4) * fz.page;
			int prot = prots[rnd_below(t, ARRAY_SIZE(prots))];
			void *m = mmap(NULL, pages * fz.page, prot,
				       rnd_below(t, 8) ? MAP_SHARED : MAP_PRIVATE, fd, off);

			if (m == MAP_FAILED) {
				record(t, "mmap", 0, -errno, true, mmap_errnos);
				break;
			}
			record(t, "mmap", 0, 0, true, mmap_errnos);
			if (prot & PROT_READ)
				(void)*(volatile unsigned char *)m;
			munmap(m, pages * fz.page);
			break;
		}
		}
	} else if (fz.toggle_shared && !rnd_below(t, 4)) {
		bool on = rnd_below(t, 2);

		t->calls[KIND_SHARED]++;
		ret = amupmu_set_pmu_shared(on, NULL);
		record(t, on ? "pmu_shared=Y" : "pmu_shared=N", 0, ret, true, notty_errnos + 2);
	} else {
		unsigned int slot = rnd_below(t, FUZZ_POOL);
		int old = __atomic_exchange_n(&fz.pool[slot], -1, __ATOMIC_ACQ_REL);

		t->calls[KIND_OPEN]++;
		if (old >= 0)
			close(old);
		fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC | O_NONBLOCK);
		record(t, "open", 0, fd < 0 ? -errno : 0, true, notty_errnos + 2);
		old = __atomic_exchange_n(&fz.pool[slot], fd, __ATOMIC_ACQ_REL);
		if (old >= 0)
			close(old);
	}
}

static void *fuzz_thread_fn(void *arg)
{
	struct fuzz_thread *t = arg;
	unsigned long long i;

	for (i = 0; i < fz.per_thread; i++)
		fuzz_one(t);
	return NULL;
}

static unsigned long long kind_total(const struct fuzz_thread *th, unsigned int n,
				     unsigned int k)
{
	unsigned long long s = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		s += th[i].calls[k];
	return s;
}

/*
 * Shared mode: a group of @nr CPU_CYCLES events, each pinned on @cpu (perf
 * core puts the first on the cycle counter, the others on event counters),
 * configured and released. 0, or -EBUSY when they do not all fit.
 */
static int pinned_fit_on(int fd, unsigned int cpu, unsigned int nr)
{
	struct amupmu_pmu_event ev[AMUPMU_PMU_MAX_EVENTS];
	struct amupmu_pmu_config cfg;
	__u64 cpus[MAX_CPUS_BYTES / 8] = { 0 };
	unsigned int i;
	int ret;

	cpus[cpu / 64] = 1ULL << (cpu % 64);
	for (i = 0; i < nr && i < AMUPMU_PMU_MAX_EVENTS; i++)
		amupmu_pmu_event_set(&ev[i], PMUV3_EV_CPU_CYCLES, 0);
	amupmu_pmu_config_init(&cfg, ev, i, cpus, ((cpu / 64) + 1) * 8);
	ret = amupmu_ioctl(fd, AMUPMU_PMU_CONFIG, &cfg);
	if (!ret)
		ret = amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_RELEASE);
	return ret;
}

/* A fresh session gets every counter of @cpu: nothing leaked there. */
static int counters_free_on(int fd, unsigned int cpu, __u32 *free_out)
{
	struct amupmu_pmu_event ev;
	struct amupmu_pmu_config cfg;
	__u64 cpus[MAX_CPUS_BYTES / 8] = { 0 };
	int ret;

	cpus[cpu / 64] = 1ULL << (cpu % 64);
	amupmu_pmu_event_set(&ev, PMUV3_EV_CPU_CYCLES, 0);
	amupmu_pmu_config_init(&cfg, &ev, 1, cpus, ((cpu / 64) + 1) * 8);
	ret = amupmu_ioctl(fd, AMUPMU_PMU_CONFIG, &cfg);
	*free_out = cfg.counters_free;
	if (!ret)
		ret = amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_RELEASE);
	return ret;
}

FIXTURE(fuzz) {
	int fd;
	struct amupmu_info info;
	struct amupmu_cpu_info *cpus;
	const char *backend;
};

FIXTURE_SETUP(fuzz)
{
	static struct amupmu_cpumask possible;

	self->fd = -1;
	ASSERT_EQ(0, amupmu_possible_cpus(&possible));
	AMUPMU_OPEN_DEVICE(self->fd);
	fz.nr_cpu_ids = possible.nr;
	fz.page = sysconf(_SC_PAGESIZE);
	self->cpus = calloc(possible.nr, sizeof(*self->cpus));
	ASSERT_NE(NULL, self->cpus);
	ASSERT_EQ(0, amupmu_query(self->fd, &self->info, self->cpus, possible.nr));
	self->backend = amupmu_pmu_mode_name(&self->info);
	fz.toggle_shared = amupmu_pmu_shared(&self->info) && geteuid() == 0 &&
			   amupmu_env_u64("AMUPMU_FUZZ_TOGGLE_SHARED", 1);
}

FIXTURE_TEARDOWN(fuzz)
{
	if (fz.toggle_shared && amupmu_set_pmu_shared(true, NULL))
		TH_LOG("could not turn %s back on", AMUPMU_PMU_SHARED_PARAM);
	free(self->cpus);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(fuzz, ioctl, 3600)
{
	static struct fuzz_thread th[FUZZ_MAX_THREADS];
	unsigned long long calls = amupmu_env_u64("AMUPMU_FUZZ_CALLS", 200000);
	unsigned long long seed = amupmu_env_u64("AMUPMU_FUZZ_SEED", (unsigned long long)time(NULL));
	unsigned int nthreads = amupmu_env_u64("AMUPMU_FUZZ_THREADS", 4), i, k, cpu;
	unsigned long long total = 0, ok = 0, bad = 0, err[FUZZ_MAX_ERRNO] = { 0 };
	struct amupmu_info after;
	struct amupmu_amu_read amu_rd;
	struct amupmu_amu_cpu amu_e;
	int amu_ret;
	char hist[1024];
	int len = 0;
	__u32 nfree;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	ASSERT_LT(0U, nthreads);
	ASSERT_GE(FUZZ_MAX_THREADS, nthreads);
	TH_LOG("backend: QEMU/CPU PMUv3 in %s, features 0x%llx (%s)", self->backend,
	       (unsigned long long)self->info.features,
	       self->info.features & AMUPMU_FEAT_MOCK ? "AMU/SPE from the mock model" :
							"hardware registers");
	TH_LOG("seed %llu (AMUPMU_FUZZ_SEED), %llu calls from %u threads%s", seed, calls, nthreads,
	       fz.toggle_shared ? ", pmu_shared toggled now and then" : "");

	for (i = 0; i < FUZZ_POOL; i++) {
		fz.pool[i] = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC | O_NONBLOCK);
		ASSERT_LE(0, fz.pool[i]);
	}
	fz.per_thread = (calls + nthreads - 1) / nthreads;
	for (i = 0; i < nthreads; i++) {
		struct fuzz_thread *t = &th[i];

		memset(t, 0, sizeof(*t));
		t->id = i;
		t->rng = (seed + 1) * 0x9E3779B97F4A7C15ULL + i;
		t->map = mmap(NULL, FUZZ_BUF + 2 * fz.page, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, t->map);
		t->guard = t->map + FUZZ_BUF + fz.page;
		ASSERT_EQ(0, mprotect(t->guard, fz.page, PROT_NONE));
	}
	for (i = 0; i < nthreads; i++)
		ASSERT_EQ(0, pthread_create(&th[i].tid, NULL, fuzz_thread_fn, &th[i]));
	for (i = 0; i < nthreads; i++)
		ASSERT_EQ(0, pthread_join(th[i].tid, NULL));
	for (i = 0; i < FUZZ_POOL; i++)
		if (fz.pool[i] >= 0)
			close(fz.pool[i]);
	if (fz.toggle_shared)
		ASSERT_EQ(0, amupmu_set_pmu_shared(true, NULL));

	for (i = 0; i < nthreads; i++) {
		ok += th[i].ok;
		bad += th[i].unexpected;
		for (k = 0; k < FUZZ_MAX_ERRNO; k++)
			err[k] += th[i].err[k];
		if (th[i].unexpected)
			TH_LOG("thread %u: %llu answers outside the contract, first: %s", i,
			       th[i].unexpected, th[i].first_bad);
		munmap(th[i].map, FUZZ_BUF + 2 * fz.page);
	}
	for (k = 0; k < KIND_NR_KINDS; k++) {
		TH_LOG("  %-15s %llu", kind_names[k], kind_total(th, nthreads, k));
		total += kind_total(th, nthreads, k);
	}
	for (k = 0; k < FUZZ_MAX_ERRNO; k++)
		if (err[k])
			len += snprintf(hist + len, sizeof(hist) - len, " %s=%llu",
					strerrorname_np(k) ?: "?", err[k]);
	TH_LOG("answers: success=%llu%s", ok, hist);
	printf("# AMUPMU-FIGURE fuzz calls=%llu unexpected=%llu threads=%u seed=%llu\n",
	       total, bad, nthreads, seed);
	fflush(stdout);
	EXPECT_EQ(0ULL, bad);
	EXPECT_LE(calls, total);
	/* the fuzzer reached past the size checks, into the commands */
	EXPECT_LT(0ULL, ok);
	EXPECT_LT(0ULL, err[EINVAL]);
	EXPECT_LT(0ULL, err[E2BIG]);
	EXPECT_LT(0ULL, err[EFAULT]);
	EXPECT_LT(0ULL, err[ENOTTY]);

	/* nothing left behind: INFO as before, every counter of every CPU free */
	ASSERT_EQ(0, amupmu_query(self->fd, &after, NULL, 0));
	EXPECT_EQ(self->info.features, after.features);
	EXPECT_EQ(self->info.pmu_owner, after.pmu_owner);
	/* the AMU answers as before: read where usable, else EOPNOTSUPP */
	amu_ret = amupmu_amu_read_cpu(self->fd, 0, &amu_e, &amu_rd);
	EXPECT_EQ(self->info.features & AMUPMU_FEAT_AMU ? 0 : -EOPNOTSUPP, amu_ret) {
		TH_LOG("AMU_READ of cpu0 after the fuzz: %s", amupmu_errstr(amu_ret));
	}
	if (fz.toggle_shared) {
		EXPECT_LT(0ULL, kind_total(th, nthreads, KIND_SHARED));
	}
	if (amupmu_pmu_shared(&self->info)) {
		/* every counter of every CPU can be pinned again: no perf event left */
		for (cpu = 0; cpu < fz.nr_cpu_ids; cpu++) {
			unsigned int n = self->cpus[cpu].pmu_num_counters + 1;
			int ret;

			if (amupmu_cpu_online(cpu) != 1)
				continue;
			ret = pinned_fit_on(self->fd, cpu, n);
			EXPECT_EQ(0, ret) {
				TH_LOG("cpu%u: %u pinned events after the fuzz: %s", cpu, n,
				       amupmu_errstr(ret));
			}
			ret = pinned_fit_on(self->fd, cpu, n + 1);
			EXPECT_EQ(-EBUSY, ret) {
				TH_LOG("cpu%u: %u pinned events, one more than its counters: %s",
				       cpu, n + 1, amupmu_errstr(ret));
			}
		}
		return;
	}
	if (self->info.pmu_owner != AMUPMU_PMU_OWNER_AMUPMU)
		return;
	{
		__u32 *mask = calloc(fz.nr_cpu_ids, sizeof(*mask));

		ASSERT_NE(NULL, mask);
		ASSERT_EQ(0, amupmu_counters_free(self->fd, mask, fz.nr_cpu_ids));
		for (cpu = 0; cpu < fz.nr_cpu_ids; cpu++) {
			if (!(self->cpus[cpu].flags & AMUPMU_CPU_DISCOVERED))
				continue;
			EXPECT_EQ(amupmu_all_counters_mask(self->cpus[cpu].pmu_num_counters),
				  mask[cpu]) {
				TH_LOG("cpu%u: INFO pmu_counters_free 0x%x after the fuzz", cpu,
				       mask[cpu]);
			}
		}
		free(mask);
	}
	for (cpu = 0; cpu < fz.nr_cpu_ids; cpu++) {
		if (amupmu_cpu_online(cpu) != 1)
			continue;
		ASSERT_EQ(0, counters_free_on(self->fd, cpu, &nfree));
		EXPECT_EQ(self->cpus[cpu].pmu_num_counters + 1, nfree) {
			TH_LOG("cpu%u: %u counters free after the fuzz, expected %u", cpu, nfree,
			       self->cpus[cpu].pmu_num_counters + 1);
		}
	}
}

TEST_HARNESS_MAIN
