// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu_hostile: a concurrency fuzzer that behaves like hostile local
 * users of /dev/amupmu (issue 24).
 *
 *   amupmu_hostile [-t SECONDS] [-n CALLS] [-s SEED] [-p PROCS] [-f FDS]
 *                  [-T THREADS] [-x WHAT[,WHAT...]] [-P] [-v]
 *
 * PROCS worker processes (default 4): root, root that drops to uid/gid
 * 65534 after opening its files, one that drops to 65534 before opening,
 * root again (and so on in turn). Each has FDS files of /dev/amupmu
 * (default 3) and THREADS threads per file (default 2). A thread makes
 * random valid and invalid requests of every command of
 * include/uapi/linux/amupmu.h (INFO; PMU CONFIG / CTL ENABLE, DISABLE,
 * RESET, RELEASE / READ / READ_ALL / READ_TIMES; AMU_READ; SPE CONFIG /
 * CTL / READ), with random and boundary CPU sets, sizes, flags and user
 * pointers; poll() and epoll_wait() on the files, with short timeouts and
 * unbounded ones; read() of the sample ring; mmap()/munmap()/mprotect() of
 * the sample ring (offset 0), of every CPU's SPE buffer
 * (AMUPMU_SPE_MMAP_OFFSET(cpu)) and of random offsets and lengths, with
 * stores into the mapped headers; fork() with the files inherited (the
 * child uses them, then closes them; the mappings are VM_DONTCOPY, and the
 * child checks it has none); close()/reopen, dup()
 * and dup2() over a file other threads are using; requests to the "amupmu"
 * generic netlink family (status, CPU and session dumps, subscriptions,
 * unknown commands and attributes).
 *
 * A controller process (root) meanwhile takes CPUs offline and online,
 * unbinds and binds the "amupmu-spe" platform driver (only when the board
 * has an SPE devicetree node: otherwise it says so and skips the action),
 * writes valid and invalid values to the arm_spe debugfs knobs, and turns
 * the pmu_shared module parameter off and on (shared mode). At the end it
 * puts every CPU online, the knobs, pmu_shared and the SPE binding back.
 *
 * Bounded: the run ends after SECONDS (default 60) or CALLS calls in all
 * (default 0: no count bound), whichever comes first. A wait that is meant
 * to be unbounded (poll/epoll with no timeout, a blocking read(), a
 * netlink reply) is interrupted by a per-process kicker (SIGUSR1, no
 * SA_RESTART) when nothing woke it within a random limit of up to 2 s.
 *
 * Seeded: "# seed: N" is printed first; -s N replays the same decision
 * sequence in every thread (each thread's PRNG is derived from the seed and
 * its process, file and thread numbers; the controller's likewise).
 * Concurrency makes the interleavings, and so the answers and the paths the
 * later decisions take, differ from run to run: a seed reproduces the mix
 * of calls, not the schedule.
 *
 * Checks: every errno is in the header's contract for that call (for an
 * ioctl: the common contract, plus EBADF for a file another thread just
 * closed and EINTR for a kicked thread); requests that are invalid by
 * construction (size below the first version or above AMUPMU_SIZE_MAX,
 * unknown flag bits, non-zero reserved fields) never succeed; uid 65534
 * never gets PMU_CONFIG or AMU_READ (CAP_PERFMON), nor SPE with kernel
 * sampling, physical addresses, CONTEXTIDR or physical timestamps (with
 * -P also no SPE at all: CPU-wide SPE needs CAP_PERFMON once defect 3 of
 * issue 24 is fixed); the controller's writes get 0 or their documented
 * errnos; every worker exits by itself with status 0 (no signal: a SIGSEGV
 * or SIGBUS of a mapping is a failure); no thread stays 30 s in one call
 * (its wchan and kernel stack are printed); the kernel log (/dev/kmsg)
 * gains no Oops, BUG, WARNING, KASAN/KFENCE/UBSAN report, lockdep report,
 * hung task or RCU stall. A violation prints the call, the seed, process
 * and thread.
 *
 * -x excludes actions: spe (every SPE command, SPE mapping offset,
 * unbind/bind and knob writes), hotplug, unbind, knobs, shared, netlink,
 * fork, mmap, poll (poll and epoll), controller (all of its actions).
 *
 * Output: KTAP, one result "hostile", and the figure line
 * "# AMUPMU-FIGURE hostile calls=N seconds=S processes=P threads=T
 * unexpected=U splats=K seed=N" (Documentation/dev-tools/amupmu-reliability.rst).
 * Exit status 0 when it passed, 1 when not, 4 (KSFT_SKIP) without the device.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/time.h>

/* the tests' helpers; their harness (test_harness_run()) is not used here */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "amupmu_test.h"
#include "amupmu_priv.h"
#include "amupmu_nl.h"
#pragma GCC diagnostic pop

#define MAX_PROCS	16
#define MAX_FDS		8
#define MAX_THREADS	8	/* per file */
#define MAX_TH		(MAX_FDS * MAX_THREADS)
#define MAX_MAPS	6
#define BUF_BYTES	(64 * 1024)
#define OFF_EVENTS	0x1000
#define OFF_CPUS	0x2000	/* up to 1024 bytes, then a spare word */
#define OFF_OUT		0x4000
#define OUT_BYTES	(BUF_BYTES - OFF_OUT)
#define KERNEL_ADDR	0xffff800000000000ULL
#define STUCK_SECONDS	30.0
#define NOBODY		AMUPMU_NOBODY

enum {
	X_SPE = 1 << 0, X_HOTPLUG = 1 << 1, X_UNBIND = 1 << 2, X_KNOBS = 1 << 3,
	X_SHARED = 1 << 4, X_NETLINK = 1 << 5, X_FORK = 1 << 6, X_MMAP = 1 << 7,
	X_POLL = 1 << 8, X_CONTROLLER = 1 << 9,
};

static const char * const x_names[] = {
	"spe", "hotplug", "unbind", "knobs", "shared", "netlink", "fork", "mmap", "poll",
	"controller",
};

/* the workers' kinds, in turn */
enum { P_ROOT, P_DROP_AFTER_OPEN, P_NOBODY_OPEN, P_KINDS };
static const char * const p_names[] = {
	"root", "uid 65534 after open", "uid 65534 from the start",
};

enum op {
	OP_INFO, OP_PMU_CONFIG, OP_PMU_CTL, OP_PMU_READ, OP_PMU_READ_ALL, OP_AMU_READ,
	OP_SPE_CONFIG, OP_SPE_CTL, OP_SPE_READ, OP_BADCMD, OP_POLL, OP_EPOLL, OP_MMAP,
	OP_TOUCH, OP_MUNMAP, OP_READ, OP_FORK, OP_CLOSE, OP_DUP, OP_NETLINK, OP_NR,
};

static const char * const op_names[OP_NR] = {
	"INFO", "PMU_CONFIG", "PMU_CTL", "PMU_READ", "PMU_READ_ALL", "AMU_READ",
	"SPE_CONFIG", "SPE_CTL", "SPE_READ", "bad-cmd", "poll", "epoll", "mmap",
	"mapping-store", "munmap", "read", "fork", "close+reopen", "dup", "netlink",
};

/* relative weights of the operations */
static const unsigned int op_weight[OP_NR] = {
	[OP_INFO] = 3, [OP_PMU_CONFIG] = 10, [OP_PMU_CTL] = 10, [OP_PMU_READ] = 6,
	[OP_PMU_READ_ALL] = 4, [OP_AMU_READ] = 3, [OP_SPE_CONFIG] = 8, [OP_SPE_CTL] = 8,
	[OP_SPE_READ] = 4, [OP_BADCMD] = 2, [OP_POLL] = 6, [OP_EPOLL] = 5, [OP_MMAP] = 8,
	[OP_TOUCH] = 4, [OP_MUNMAP] = 4, [OP_READ] = 4, [OP_FORK] = 1, [OP_CLOSE] = 3,
	[OP_DUP] = 2, [OP_NETLINK] = 4,
};

/* What every thread shows the others (shared memory, across processes). */
struct th_stat {
	int tid;
	int op;			/* OP_* in progress, -1 between calls */
	long long since;	/* CLOCK_MONOTONIC ms the call started */
	long long kick_after;	/* ms; 0: never kick (not an interruptible wait) */
	unsigned long long calls;
	int stuck_reported;
};

struct proc_stat {
	int pid;
	int kind;
	int done;
	unsigned int nthreads;
	unsigned long long calls, violations, kicks, forks, maps, polls_woken;
	unsigned long long per_op[OP_NR];
	struct th_stat th[MAX_TH];
};

struct ctl_stat {
	int pid;
	int done;
	unsigned long long actions, violations, offline, online, unbind, bind, knob, shared;
};

struct shared {
	struct proc_stat p[MAX_PROCS];
	struct ctl_stat c;
};

static struct {
	unsigned long long seed, calls;
	double seconds, t0, deadline;
	unsigned int procs, fds, threads, excl;
	bool strict_priv, verbose;
	unsigned int nr_cpu_ids;
	long page;
	struct amupmu_info info;
	__u16 nl_family;
	struct shared *sh;
} g;

/* one worker process's files */
static struct {
	int pool[MAX_FDS];
	unsigned int ring_pages[MAX_FDS];	/* hints: the last CONFIGs' sizes */
	unsigned int spe_pages[MAX_FDS];
	bool nobody;
	unsigned int proc;
	struct proc_stat *ps;
	unsigned long long per_thread;
	/*
	 * Held while a file number changes hands (close+open of a slot, dup2()
	 * over a slot, a new epoll instance), so that a slot's number names an
	 * amupmu file when dup2() replaces it. Not taken in a fork child (one
	 * thread; another thread may have held it at fork()).
	 */
	pthread_mutex_t fdlock;
} w = { .fdlock = PTHREAD_MUTEX_INITIALIZER };


struct map {
	void *addr;
	size_t len;
	int prot;
};

struct th {
	pthread_t pt;
	unsigned int id, slot;
	unsigned long long rng, calls, violations;
	struct th_stat *st;
	unsigned char *buf, *guard;
	struct map maps[MAX_MAPS];
	int epfd;
	struct nl nl;
	bool nl_ok, child;
	char *nlbuf;
};

static void fd_lock(struct th *t)
{
	if (!t->child)
		pthread_mutex_lock(&w.fdlock);
}

static void fd_unlock(struct th *t)
{
	if (!t->child)
		pthread_mutex_unlock(&w.fdlock);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* one line to stdout in one write(): processes and threads do not mix lines */
static void __attribute__((format(printf, 1, 2))) out(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDOUT_FILENO, line, n) < 0)
		return;
}

static unsigned long long splitmix(unsigned long long x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

static unsigned long long rnd(unsigned long long *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static unsigned int below(unsigned long long *s, unsigned int n)
{
	return n ? (unsigned int)((rnd(s) >> 32) % n) : 0;
}

static bool chance(unsigned long long *s, unsigned int pct)
{
	return below(s, 100) < pct;
}

static const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "success";

	return n ?: "?";
}

static bool in(int e, const int *list)
{
	for (; *list; list++)
		if (*list == e)
			return true;
	return false;
}

static __u64 uptr(const void *p)
{
	return (__u64)(uintptr_t)p;
}

/* ------------------------------------------------------------ contracts */

static const int ioctl_errnos[] = {
	ENOTTY, EFAULT, EINVAL, E2BIG, EOPNOTSUPP, EBUSY, ENXIO, EACCES, ENODEV, ENOMEM,
	EBADF, EINTR, 0
};
static const int notty_errnos[] = { ENOTTY, EBADF, EINTR, 0 };
static const int read_errnos[] = { EINVAL, EAGAIN, EINTR, EIO, EFAULT, ENXIO, EBADF, 0 };
static const int mmap_errnos[] = {
	EINVAL, EACCES, EPERM, ENOMEM, ENODEV, EBADF, EOVERFLOW, EAGAIN, EINTR, 0
};
static const int mprotect_errnos[] = { EACCES, EINVAL, ENOMEM, 0 };
static const int poll_errnos[] = { EINTR, 0 };
/*
 * EINVAL and ELOOP: a slot's number read before another thread's close may
 * name an epoll instance by the time of the call (the file numbers are
 * reused); the other calls' lists already hold what such a file answers
 * (ENOTTY, ENODEV, EINVAL).
 */
static const int epoll_ctl_errnos[] = {
	EEXIST, ENOENT, EBADF, ENOMEM, EINTR, EINVAL, ELOOP, EPERM, 0
};
static const int open_errnos[] = { EINTR, ENOMEM, 0 };
static const int nl_req_errnos[] = {
	EINVAL, EACCES, EPERM, ENODEV, EBUSY, EOPNOTSUPP, ERANGE, EMSGSIZE, ENOBUFS, EINTR,
	EAGAIN, 0
};

/* The calling thread's violation: counted, the first few printed. */
static void violation(struct th *t, const char *what, const char *detail)
{
	if (t->violations++ < 5)
		out("# VIOLATION seed=%llu proc=%u (%s) thread=%u%s call=%llu: %s: %s", g.seed,
		    w.proc, p_names[g.sh->p[w.proc].kind], t->id, t->child ? " (fork child)" : "",
		    t->calls, what, detail);
}

/* @ret 0 or -errno against @allowed; a success only when @may_succeed. */
static void check(struct th *t, const char *what, int ret, const int *allowed, bool may_succeed)
{
	char d[96];

	if (!ret) {
		if (may_succeed)
			return;
		violation(t, what, "succeeded, must fail");
		return;
	}
	if (in(-ret, allowed))
		return;
	snprintf(d, sizeof(d), "%s outside the errno contract", ename(-ret));
	violation(t, what, d);
}

/* ------------------------------------------------------------ call wrappers */

/* the call in progress, for the kicker and the hang report */
static void begin(struct th *t, int op, double kick_after)
{
	__atomic_store_n(&t->st->kick_after, (long long)(kick_after * 1000), __ATOMIC_RELAXED);
	__atomic_store_n(&t->st->since, (long long)(now_s() * 1000), __ATOMIC_RELAXED);
	__atomic_store_n(&t->st->op, op, __ATOMIC_RELEASE);
}

static void end(struct th *t)
{
	__atomic_store_n(&t->st->op, -1, __ATOMIC_RELEASE);
	__atomic_store_n(&t->st->kick_after, 0LL, __ATOMIC_RELAXED);
}

/* how long an unbounded wait may last before the kicker interrupts it */
static double wait_limit(struct th *t)
{
	return t->child ? 0 : 0.1 + below(&t->rng, 1900) / 1000.0;
}

static int xioctl(struct th *t, int op, int fd, unsigned long cmd, void *arg)
{
	int ret;

	begin(t, op, 0);
	ret = ioctl(fd, cmd, arg) ? -errno : 0;
	end(t);
	return ret;
}

static int slot_fd(struct th *t)
{
	unsigned int s = chance(&t->rng, 75) ? t->slot : below(&t->rng, g.fds);

	return __atomic_load_n(&w.pool[s], __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ requests */

/*
 * A CPU set at OFF_CPUS; its byte length into @len. Mostly valid (one CPU,
 * every possible CPU, a random subset), sometimes empty, beyond nr_cpu_ids,
 * a length that is not a multiple of 8, 0 or above 1024.
 */
static __u64 *cpuset(struct th *t, __u32 *len)
{
	__u64 *c = (void *)(t->buf + OFF_CPUS);
	unsigned int i, n = g.nr_cpu_ids, words = (n + 63) / 64;

	memset(c, 0, 1024 + 8);
	*len = words * 8;
	switch (below(&t->rng, 12)) {
	case 0: case 1: case 2: case 3:
		i = below(&t->rng, n);
		c[i / 64] |= 1ULL << (i % 64);
		break;
	case 4: case 5: case 6:
		for (i = 0; i < n; i++)
			c[i / 64] |= 1ULL << (i % 64);
		break;
	case 7:
		c[0] = rnd(&t->rng);
		if (n < 64)
			c[0] &= (1ULL << n) - 1;
		break;
	case 8:
		break;	/* empty */
	case 9:
		/* the first CPU number that is not possible, or the last the ABI allows */
		i = chance(&t->rng, 50) ? n : 8191;
		c[i / 64] |= 1ULL << (i % 64);
		*len = (i / 64 + 1) * 8;
		break;
	case 10:
		c[0] = 1;
		*len = below(&t->rng, 2) ? 1 + below(&t->rng, 7) : 0;
		break;
	default:
		c[0] = 1;
		*len = chance(&t->rng, 50) ? 1024 : 1032;
		break;
	}
	return c;
}

/* a pointer the kernel must refuse, or @p */
static __u64 bad_ptr(struct th *t, const void *p)
{
	switch (below(&t->rng, 20)) {
	case 0:
		return 0;
	case 1:
		return KERNEL_ADDR + below(&t->rng, 0x10000);
	case 2:
		return uptr(t->guard) - below(&t->rng, 16);
	default:
		return uptr(p);
	}
}

/*
 * The struct's size: the kernel's mostly; else below the first version,
 * a zero tail, a non-zero tail (E2BIG), above AMUPMU_SIZE_MAX. The bytes
 * after the struct in the buffer are zero unless a non-zero tail is asked.
 */
static __u32 size_of(struct th *t, unsigned char *b, __u32 size, __u32 ver0, bool *must_fail)
{
	memset(b + size, 0, 64);
	switch (below(&t->rng, 40)) {
	case 0:
		*must_fail = true;
		return below(&t->rng, ver0);
	case 1:
		return size + 8 * (1 + below(&t->rng, 4));	/* zero tail: accepted */
	case 2:
		b[size + below(&t->rng, 8)] = 1 + below(&t->rng, 255);
		*must_fail = true;
		return size + 8;
	case 3:
		*must_fail = true;
		return AMUPMU_SIZE_MAX + 1 + below(&t->rng, 2) * 0x10000;
	case 4:
		return ver0;
	default:
		return size;
	}
}

/* an unknown flag or a non-zero reserved field, now and then */
static void poison(struct th *t, __u32 *flags, __u32 known, __u32 *reserved, bool *must_fail)
{
	unsigned int r = below(&t->rng, 30);

	if (r == 0 && flags) {
		*flags |= ~known & (1U << (8 + below(&t->rng, 24)));
		*must_fail = true;
	} else if (r == 1 && reserved) {
		*reserved = 1 + below(&t->rng, 0xffff);
		*must_fail = true;
	}
}

static void op_info(struct th *t, int fd)
{
	struct amupmu_info *in = (void *)t->buf;
	bool must_fail = false;
	__u32 n = chance(&t->rng, 50) ? g.nr_cpu_ids : 0;
	__u32 esz = chance(&t->rng, 80) ? sizeof(struct amupmu_cpu_info) :
		    AMUPMU_CPU_INFO_SIZE_VER0 + 8 * below(&t->rng, 500);
	int ret;

	if (n && (__u64)n * esz > OUT_BYTES)
		n = OUT_BYTES / esz;
	amupmu_info_init(in, t->buf + OFF_OUT, n, esz);
	in->cpus_uptr = bad_ptr(t, t->buf + OFF_OUT);
	in->size = size_of(t, t->buf, sizeof(*in), AMUPMU_INFO_SIZE_VER0, &must_fail);
	poison(t, &in->flags, 0, &in->__reserved, &must_fail);
	ret = xioctl(t, OP_INFO, fd, AMUPMU_INFO, in);
	check(t, "INFO", ret, ioctl_errnos, !must_fail);
}

static void op_pmu_config(struct th *t, int fd, unsigned int slot)
{
	static const __u32 events[] = {
		PMUV3_EV_CPU_CYCLES, PMUV3_EV_INST_RETIRED, PMUV3_EV_SW_INCR, 0x0001, 0x0003,
		0x0004, 0x0010, 0x0012, 0x0160, 0xffff,
	};
	struct amupmu_pmu_config *cfg = (void *)t->buf;
	struct amupmu_pmu_event *ev = (void *)(t->buf + OFF_EVENTS);
	bool must_fail = false, sampling = false;
	unsigned int i, nr = 1 + below(&t->rng, 4);
	__u32 len;
	__u64 *cpus = cpuset(t, &len);
	int ret;

	if (chance(&t->rng, 3))
		nr = chance(&t->rng, 50) ? 0 : AMUPMU_PMU_MAX_EVENTS + 1;
	memset(ev, 0, sizeof(*ev) * (AMUPMU_PMU_MAX_EVENTS + 1));
	for (i = 0; i < nr; i++) {
		amupmu_pmu_event_set(&ev[i], events[below(&t->rng, ARRAY_SIZE(events))],
				     chance(&t->rng, 80) ? 0 : below(&t->rng, 128));
		if (chance(&t->rng, 25)) {
			ev[i].sample_period = chance(&t->rng, 90) ? 1ULL << (12 + below(&t->rng, 18)) :
					      rnd(&t->rng) >> below(&t->rng, 64);
			sampling = true;
		}
	}
	amupmu_pmu_config_init(cfg, ev, nr, cpus, len);
	if (chance(&t->rng, 10))
		cfg->flags |= AMUPMU_PMU_CONFIG_MULTIPLEX;
	if (sampling)
		cfg->ring_pages = chance(&t->rng, 90) ? 1U << below(&t->rng, 4) :
				  (chance(&t->rng, 50) ? 3 : AMUPMU_RING_PAGES_MAX * 2);
	else if (chance(&t->rng, 3))
		cfg->ring_pages = 1;
	if (chance(&t->rng, 5))
		cfg->event_size = chance(&t->rng, 50) ? 8 : 4104;
	cfg->events_uptr = bad_ptr(t, ev);
	cfg->cpus_uptr = bad_ptr(t, cpus);
	cfg->size = size_of(t, t->buf, sizeof(*cfg), AMUPMU_PMU_CONFIG_SIZE_VER0, &must_fail);
	poison(t, &cfg->flags, AMUPMU_PMU_CONFIG_MULTIPLEX, &cfg->__reserved, &must_fail);
	ret = xioctl(t, OP_PMU_CONFIG, fd, AMUPMU_PMU_CONFIG, cfg);
	/* system-wide counters: CAP_PERFMON */
	check(t, "PMU_CONFIG", ret, ioctl_errnos, !must_fail && !w.nobody);
	if (!ret) {
		if (sampling)
			__atomic_store_n(&w.ring_pages[slot], cfg->ring_pages, __ATOMIC_RELAXED);
		if (chance(&t->rng, 60)) {
			struct amupmu_pmu_ctl c;

			amupmu_pmu_ctl_init(&c, AMUPMU_PMU_CTL_ENABLE);
			ret = xioctl(t, OP_PMU_CTL, fd, AMUPMU_PMU_CTL, &c);
			check(t, "PMU_CTL ENABLE after CONFIG", ret, ioctl_errnos, true);
		}
	}
}

static void op_pmu_ctl(struct th *t, int fd)
{
	struct amupmu_pmu_ctl *c = (void *)t->buf;
	bool must_fail = false;
	int ret;

	amupmu_pmu_ctl_init(c, AMUPMU_PMU_CTL_ENABLE + below(&t->rng, 4));
	if (chance(&t->rng, 5)) {
		c->op = chance(&t->rng, 50) ? 0 : 5 + below(&t->rng, 1000);
		must_fail = true;
	}
	c->size = size_of(t, t->buf, sizeof(*c), AMUPMU_PMU_CTL_SIZE_VER0, &must_fail);
	poison(t, &c->flags, 0, &c->__reserved, &must_fail);
	ret = xioctl(t, OP_PMU_CTL, fd, AMUPMU_PMU_CTL, chance(&t->rng, 2) ? NULL : c);
	check(t, "PMU_CTL", ret, ioctl_errnos, !must_fail);
}

static void op_pmu_read(struct th *t, int fd, bool all)
{
	struct amupmu_pmu_read *rd = (void *)t->buf;
	bool must_fail = false, times = chance(&t->rng, 25);
	__u32 nv = chance(&t->rng, 80) ? AMUPMU_PMU_MAX_EVENTS : below(&t->rng, 34);
	int ret;

	if (all) {
		size_t stride = sizeof(struct amupmu_pmu_read_cpu) +
				(size_t)nv * (times ? sizeof(struct amupmu_pmu_value_times) :
						      sizeof(struct amupmu_pmu_value));
		__u32 room = OUT_BYTES / stride;
		__u32 n = g.nr_cpu_ids < room ? g.nr_cpu_ids : room;

		if (chance(&t->rng, 10))
			n = below(&t->rng, n + 1);
		amupmu_pmu_read_all_init(rd, t->buf + OFF_OUT, n, nv);
	} else {
		amupmu_pmu_read_init(rd, below(&t->rng, g.nr_cpu_ids + (chance(&t->rng, 5) ? 64 : 0)),
				     (void *)(t->buf + OFF_OUT), nv);
	}
	if (times)
		rd->flags |= AMUPMU_PMU_READ_TIMES;
	rd->values_uptr = bad_ptr(t, t->buf + OFF_OUT);
	rd->size = size_of(t, t->buf, sizeof(*rd), AMUPMU_PMU_READ_SIZE_VER0, &must_fail);
	poison(t, &rd->flags, AMUPMU_PMU_READ_ALL | AMUPMU_PMU_READ_TIMES, NULL, &must_fail);
	ret = xioctl(t, all ? OP_PMU_READ_ALL : OP_PMU_READ, fd, AMUPMU_PMU_READ, rd);
	check(t, all ? "PMU_READ_ALL" : "PMU_READ", ret, ioctl_errnos, !must_fail);
}

static void op_amu_read(struct th *t, int fd)
{
	struct amupmu_amu_read *rd = (void *)t->buf;
	bool must_fail = false;
	__u32 len, esz = chance(&t->rng, 80) ? sizeof(struct amupmu_amu_cpu) :
			 AMUPMU_AMU_CPU_SIZE_VER0 + 8 * below(&t->rng, 600) - 8 * chance(&t->rng, 10);
	__u64 *cpus = cpuset(t, &len);
	__u32 room = OUT_BYTES / (esz ? esz : 1), n = g.nr_cpu_ids < room ? g.nr_cpu_ids : room;
	int ret;

	amupmu_amu_read_init(rd, cpus, len, t->buf + OFF_OUT, n, esz);
	rd->cpus_uptr = bad_ptr(t, cpus);
	rd->entries_uptr = bad_ptr(t, t->buf + OFF_OUT);
	rd->size = size_of(t, t->buf, sizeof(*rd), AMUPMU_AMU_READ_SIZE_VER0, &must_fail);
	poison(t, &rd->flags, 0, &rd->__reserved, &must_fail);
	ret = xioctl(t, OP_AMU_READ, fd, AMUPMU_AMU_READ, rd);
	check(t, "AMU_READ", ret, ioctl_errnos, !must_fail && !w.nobody);
}

static void op_spe_config(struct th *t, int fd, unsigned int slot)
{
	struct amupmu_spe_config *sc = (void *)t->buf;
	bool must_fail = false, privileged = false;
	__u32 len;
	__u64 *cpus = cpuset(t, &len);
	int ret;

	*sc = (struct amupmu_spe_config) {
		.size = sizeof(*sc),
		.enables = AMUPMU_SPE_EN_USER,
		.buf_pages = 2U << below(&t->rng, 3),
		.cpus_len = len,
		.cpus_uptr = uptr(cpus),
	};
	if (chance(&t->rng, 30))
		sc->flags = AMUPMU_SPE_CFG_DEFAULTS;
	else
		sc->interval = 256U << below(&t->rng, 6);
	if (chance(&t->rng, 10))
		sc->flags |= AMUPMU_SPE_CFG_JITTER;
	switch (below(&t->rng, 12)) {
	case 0:
		sc->enables |= AMUPMU_SPE_EN_KERNEL;
		privileged = true;
		break;
	case 1:
		sc->enables |= AMUPMU_SPE_EN_TS;
		sc->pct = chance(&t->rng, 50) ? AMUPMU_SPE_PCT_VIRTUAL : AMUPMU_SPE_PCT_PHYSICAL;
		privileged = sc->pct != AMUPMU_SPE_PCT_VIRTUAL;
		break;
	case 2:
		sc->enables |= chance(&t->rng, 50) ? AMUPMU_SPE_EN_CX : AMUPMU_SPE_EN_PA;
		privileged = true;
		break;
	case 3:
		sc->enables = chance(&t->rng, 50) ? 0 : 1U << (6 + below(&t->rng, 26));
		must_fail = true;
		break;
	case 4:
		if (!(sc->flags & AMUPMU_SPE_CFG_DEFAULTS)) {
			sc->pmsfcr = AMUPMU_SPE_PMSFCR_FL;
			sc->min_latency = below(&t->rng, 3);
		}
		break;
	case 5:
		sc->buf_pages = chance(&t->rng, 50) ? AMUPMU_SPE_BUF_PAGES_MAX :
			       (chance(&t->rng, 50) ? 1 : 3);
		must_fail = sc->buf_pages != AMUPMU_SPE_BUF_PAGES_MAX;
		break;
	case 6:
		sc->watermark = below(&t->rng, 4) * g.page + below(&t->rng, 2);
		break;
	case 7:
		if (!(sc->flags & AMUPMU_SPE_CFG_DEFAULTS)) {
			sc->interval = 1 + below(&t->rng, 255);
			must_fail = true;
		}
		break;
	default:
		break;
	}
	sc->cpus_uptr = bad_ptr(t, cpus);
	sc->size = size_of(t, t->buf, sizeof(*sc), AMUPMU_SPE_CONFIG_SIZE_VER0, &must_fail);
	poison(t, &sc->flags, AMUPMU_SPE_CFG_DEFAULTS | AMUPMU_SPE_CFG_JITTER, &sc->__reserved,
	       &must_fail);
	ret = xioctl(t, OP_SPE_CONFIG, fd, AMUPMU_SPE_CONFIG, sc);
	check(t, privileged ? "SPE_CONFIG (privileged enables)" : "SPE_CONFIG", ret, ioctl_errnos,
	      !must_fail && !(w.nobody && (privileged || g.strict_priv)));
	if (!ret) {
		__atomic_store_n(&w.spe_pages[slot], sc->buf_pages, __ATOMIC_RELAXED);
		if (chance(&t->rng, 60)) {
			struct amupmu_spe_ctl c = {
				.size = sizeof(c), .op = AMUPMU_SPE_CTL_ENABLE,
			};

			ret = xioctl(t, OP_SPE_CTL, fd, AMUPMU_SPE_CTL, &c);
			check(t, "SPE_CTL ENABLE after CONFIG", ret, ioctl_errnos, true);
		}
	}
}

static void op_spe_ctl(struct th *t, int fd)
{
	struct amupmu_spe_ctl *c = (void *)t->buf;
	bool must_fail = false;
	int ret;

	*c = (struct amupmu_spe_ctl) {
		.size = sizeof(*c),
		.op = AMUPMU_SPE_CTL_ENABLE + below(&t->rng, 3),
	};
	/* RELEASE more often: the window defect 1 of issue 24 is about */
	if (chance(&t->rng, 20))
		c->op = AMUPMU_SPE_CTL_RELEASE;
	if (chance(&t->rng, 5)) {
		c->op = chance(&t->rng, 50) ? 0 : 4 + below(&t->rng, 1000);
		must_fail = true;
	}
	c->size = size_of(t, t->buf, sizeof(*c), AMUPMU_SPE_CTL_SIZE_VER0, &must_fail);
	poison(t, &c->flags, 0, &c->__reserved, &must_fail);
	ret = xioctl(t, OP_SPE_CTL, fd, AMUPMU_SPE_CTL, chance(&t->rng, 2) ? NULL : c);
	check(t, "SPE_CTL", ret, ioctl_errnos, !must_fail);
}

static void op_spe_read(struct th *t, int fd)
{
	struct amupmu_spe_read *rd = (void *)t->buf;
	bool must_fail = false;
	__u32 esz = chance(&t->rng, 85) ? sizeof(struct amupmu_spe_cpu) :
		    AMUPMU_SPE_CPU_SIZE_VER0 + 8 * below(&t->rng, 520) - 8 * chance(&t->rng, 10);
	__u32 room = OUT_BYTES / (esz ? esz : 1);
	int ret;

	*rd = (struct amupmu_spe_read) {
		.size = sizeof(*rd),
		.nr_cpus = g.nr_cpu_ids < room ? g.nr_cpu_ids : room,
		.entry_size = esz,
		.cpus_uptr = bad_ptr(t, t->buf + OFF_OUT),
	};
	if (chance(&t->rng, 5))
		rd->nr_cpus = chance(&t->rng, 50) ? 0 : AMUPMU_SPE_READ_CPUS_MAX + 1;
	rd->size = size_of(t, t->buf, sizeof(*rd), AMUPMU_SPE_READ_SIZE_VER0, &must_fail);
	poison(t, &rd->flags, 0, NULL, &must_fail);
	ret = xioctl(t, OP_SPE_READ, fd, AMUPMU_SPE_READ, rd);
	check(t, "SPE_READ", ret, ioctl_errnos, !must_fail);
}

/* a command number of the driver's type it does not have: ENOTTY */
static void op_badcmd(struct th *t, int fd)
{
	unsigned int nr = below(&t->rng, 256);
	unsigned long cmd;
	int ret;

	if (nr >= AMUPMU_CMD_INFO && nr <= AMUPMU_CMD_SPE_READ)
		nr += 0x20;
	cmd = _IOC(below(&t->rng, 4), AMUPMU_TYPE, nr, below(&t->rng, 256));
	ret = xioctl(t, OP_BADCMD, fd, cmd, t->buf);
	check(t, "unknown command", ret, notty_errnos, false);
}

/* poll() of up to 3 of the files: no wait, a short one, or an unbounded one */
static void op_poll(struct th *t)
{
	struct pollfd p[3];
	unsigned int i, n = 1 + below(&t->rng, 3);
	int timeout, ret;
	double lim = 0;

	for (i = 0; i < n; i++)
		p[i] = (struct pollfd) {
			.fd = slot_fd(t), .events = POLLIN | POLLPRI | POLLOUT | POLLRDNORM,
		};
	switch (below(&t->rng, 3)) {
	case 0:
		timeout = 0;
		break;
	case 1:
		timeout = 1 + below(&t->rng, 50);
		break;
	default:
		/* unbounded: a RELEASE, a sample or the kicker ends it */
		timeout = t->child ? 20 : -1;
		lim = wait_limit(t);
		break;
	}
	begin(t, OP_POLL, lim);
	ret = poll(p, n, timeout);
	ret = ret < 0 ? -errno : 0;
	end(t);
	check(t, "poll", ret, poll_errnos, true);
}

static void op_epoll(struct th *t)
{
	struct epoll_event ev[4];
	int ret, fd, timeout;
	double lim = 0;

	if (t->epfd < 0 || chance(&t->rng, 5)) {
		/* a new instance; closing the old one takes its entries off the files' queues */
		fd_lock(t);
		if (t->epfd >= 0)
			close(t->epfd);
		t->epfd = epoll_create1(EPOLL_CLOEXEC);
		ret = t->epfd < 0 ? -errno : 0;
		fd_unlock(t);
		if (ret) {
			check(t, "epoll_create1", ret, open_errnos, true);
			return;
		}
	}
	switch (below(&t->rng, 4)) {
	case 0:
	case 1:
		fd = slot_fd(t);
		ev[0] = (struct epoll_event) {
			.events = EPOLLIN | EPOLLPRI | (chance(&t->rng, 30) ? EPOLLET : 0) |
				  (chance(&t->rng, 10) ? EPOLLONESHOT : 0),
			.data.fd = fd,
		};
		begin(t, OP_EPOLL, 0);
		ret = epoll_ctl(t->epfd, chance(&t->rng, 80) ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd,
				ev) ? -errno : 0;
		end(t);
		check(t, "epoll_ctl ADD/MOD", ret, epoll_ctl_errnos, true);
		break;
	case 2:
		fd = slot_fd(t);
		begin(t, OP_EPOLL, 0);
		ret = epoll_ctl(t->epfd, EPOLL_CTL_DEL, fd, NULL) ? -errno : 0;
		end(t);
		check(t, "epoll_ctl DEL", ret, epoll_ctl_errnos, true);
		break;
	default:
		timeout = chance(&t->rng, 30) ? 0 : 1 + below(&t->rng, 50);
		if (chance(&t->rng, 40) && !t->child) {
			timeout = -1;
			lim = wait_limit(t);
		}
		begin(t, OP_EPOLL, lim);
		ret = epoll_wait(t->epfd, ev, ARRAY_SIZE(ev), timeout);
		ret = ret < 0 ? -errno : 0;
		end(t);
		check(t, "epoll_wait", ret, poll_errnos, true);
		break;
	}
}

static void op_mmap(struct th *t, unsigned int slot)
{
	static const int prots[] = {
		PROT_READ, PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE, PROT_WRITE, PROT_NONE,
		PROT_READ | PROT_EXEC,
	};
	unsigned int i, pages, cpu = below(&t->rng, g.nr_cpu_ids);
	int fd = __atomic_load_n(&w.pool[slot], __ATOMIC_RELAXED);
	int prot = prots[below(&t->rng, ARRAY_SIZE(prots))], ret;
	off_t off;
	void *m;

	for (i = 0; i < MAX_MAPS && t->maps[i].addr; i++)
		;
	if (i == MAX_MAPS) {
		/* full: drop one first */
		i = below(&t->rng, MAX_MAPS);
		munmap(t->maps[i].addr, t->maps[i].len);
		t->maps[i].addr = NULL;
	}
	switch (below(&t->rng, (g.excl & X_SPE) ? 5 : 8)) {
	case 0:
	case 1:
	case 2:
		/* the sample ring, the size of the file's last sampling CONFIG */
		off = 0;
		pages = 1 + __atomic_load_n(&w.ring_pages[slot], __ATOMIC_RELAXED);
		if (chance(&t->rng, 10))
			pages += chance(&t->rng, 50) ? 1 : -1;
		break;
	case 3:
		/* random: a small page offset, an unaligned one, an odd length */
		off = chance(&t->rng, 80) ? (off_t)below(&t->rng, 8) * g.page :
					     (off_t)below(&t->rng, 4096);
		pages = 1 + below(&t->rng, 20);
		break;
	case 4:
		off = (off_t)(rnd(&t->rng) & ~(__u64)(g.page - 1) & ((1ULL << 62) - 1));
		pages = 1 + below(&t->rng, 4);
		break;
	default:
		/* a CPU's SPE buffer (or a CPU number that is not possible) */
		if (chance(&t->rng, 10))
			cpu = g.nr_cpu_ids + below(&t->rng, 4096);
		off = AMUPMU_SPE_MMAP_OFFSET(cpu);
		if (chance(&t->rng, 5))
			off += g.page * (1 + below(&t->rng, 8));
		pages = 1 + __atomic_load_n(&w.spe_pages[slot], __ATOMIC_RELAXED);
		if (chance(&t->rng, 10))
			pages = 1 + below(&t->rng, 1100);
		break;
	}
	if (!pages)
		pages = 1;
	begin(t, OP_MMAP, 0);
	m = mmap(NULL, pages * g.page, prot, chance(&t->rng, 90) ? MAP_SHARED : MAP_PRIVATE, fd,
		 off);
	ret = m == MAP_FAILED ? -errno : 0;
	end(t);
	check(t, "mmap", ret, mmap_errnos, true);
	if (ret)
		return;
	__atomic_fetch_add(&w.ps->maps, 1, __ATOMIC_RELAXED);
	t->maps[i] = (struct map) { m, pages * g.page, prot };
}

/* loads and stores into a mapping's header, an mprotect(), a partial munmap() */
static void op_touch(struct th *t)
{
	struct map *mp = &t->maps[below(&t->rng, MAX_MAPS)];
	volatile __u64 *h;
	int ret;

	if (!mp->addr)
		return;
	/* the ring header's data_head is at offset 24 in both header layouts */
	h = (volatile __u64 *)mp->addr;
	begin(t, OP_TOUCH, 0);
	if (mp->prot & PROT_READ) {
		__u64 head = h[3];

		(void)*(volatile unsigned char *)((char *)mp->addr + mp->len - 1);
		if (mp->prot & PROT_WRITE)
			h[4] = chance(&t->rng, 70) ? head : rnd(&t->rng);	/* data_tail */
	}
	end(t);
	switch (below(&t->rng, 4)) {
	case 0:
		ret = mprotect(mp->addr, mp->len, PROT_READ | PROT_WRITE |
			       (chance(&t->rng, 50) ? PROT_EXEC : 0)) ? -errno : 0;
		check(t, "mprotect", ret, mprotect_errnos, true);
		if (!ret)
			mp->prot = PROT_NONE;	/* do not trust it: no more loads */
		break;
	case 1:
		if (mp->len > (size_t)g.page) {
			/* split the mapping: unmap its first page */
			ret = munmap(mp->addr, g.page) ? -errno : 0;
			check(t, "munmap (first page)", ret, mprotect_errnos, true);
			if (!ret) {
				mp->addr = (char *)mp->addr + g.page;
				mp->len -= g.page;
				mp->prot = PROT_NONE;	/* no header any more */
			}
		}
		break;
	default:
		break;
	}
}

static void op_munmap(struct th *t)
{
	struct map *mp = &t->maps[below(&t->rng, MAX_MAPS)];
	int ret;

	if (!mp->addr)
		return;
	begin(t, OP_MUNMAP, 0);
	ret = munmap(mp->addr, mp->len) ? -errno : 0;
	end(t);
	check(t, "munmap", ret, mprotect_errnos, true);
	mp->addr = NULL;
}

static void op_read(struct th *t)
{
	int fd = slot_fd(t), fl = fcntl(fd, F_GETFL);
	size_t n = chance(&t->rng, 70) ? 4096 : below(&t->rng, 2 * OUT_BYTES);
	void *p = chance(&t->rng, 90) ? (void *)(t->buf + OFF_OUT) : (void *)t->guard;
	bool blocking = fl >= 0 && !(fl & O_NONBLOCK);
	ssize_t r;
	int ret;

	if (n > OUT_BYTES)
		n = OUT_BYTES;
	if (blocking && t->child)
		return;		/* no kicker in a fork child */
	begin(t, OP_READ, blocking ? wait_limit(t) : 0);
	r = read(fd, p, n);
	ret = r < 0 ? -errno : 0;
	end(t);
	check(t, "read", ret, read_errnos, true);
}

/* the files of a slot: closed and opened again (O_NONBLOCK or not) */
static void op_close(struct th *t)
{
	unsigned int s = below(&t->rng, g.fds);
	int old, fd, ret;

	fd_lock(t);
	old = __atomic_exchange_n(&w.pool[s], -1, __ATOMIC_ACQ_REL);
	begin(t, OP_CLOSE, 0);
	if (old >= 0)
		close(old);
	fd = open(AMUPMU_DEV, O_RDWR | (chance(&t->rng, 50) ? O_NONBLOCK : 0));
	ret = fd < 0 ? -errno : 0;
	end(t);
	__atomic_store_n(&w.ring_pages[s], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&w.spe_pages[s], 0, __ATOMIC_RELAXED);
	if (!ret)
		__atomic_store_n(&w.pool[s], fd, __ATOMIC_RELEASE);
	fd_unlock(t);
	if (ret)
		check(t, "open", ret, open_errnos, true);
}

/* dup() and a command through the copy; or dup2() of a new file over a used number */
static void op_dup(struct th *t)
{
	unsigned int s = below(&t->rng, g.fds);
	int fd = __atomic_load_n(&w.pool[s], __ATOMIC_RELAXED), d, ret;

	if (fd < 0)
		return;
	if (chance(&t->rng, 50)) {
		struct amupmu_pmu_ctl c;

		d = dup(fd);
		if (d < 0)
			return;
		amupmu_pmu_ctl_init(&c, AMUPMU_PMU_CTL_RELEASE);
		ret = xioctl(t, OP_DUP, d, AMUPMU_PMU_CTL, &c);
		check(t, "PMU_CTL RELEASE through a dup", ret, ioctl_errnos, true);
		close(d);
		return;
	}
	d = open(AMUPMU_DEV, O_RDWR | O_NONBLOCK);
	if (d < 0) {
		check(t, "open", -errno, open_errnos, true);
		return;
	}
	fd_lock(t);
	begin(t, OP_DUP, 0);
	/* the number now names a new file: every thread using it changes file */
	if (__atomic_load_n(&w.pool[s], __ATOMIC_RELAXED) == fd)
		dup2(d, fd);
	close(d);
	end(t);
	fd_unlock(t);
	__atomic_store_n(&w.ring_pages[s], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&w.spe_pages[s], 0, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ netlink */

/* receive the answers to the last request on the thread's own buffer */
static int nl_answers(struct th *t)
{
	for (;;) {
		ssize_t n;
		struct nlmsghdr *h;

		begin(t, OP_NETLINK, t->child ? 0 : wait_limit(t));
		n = recv(t->nl.fd, t->nlbuf, NL_BUF, t->child ? MSG_DONTWAIT : 0);
		end(t);
		if (n < 0)
			return -errno;
		for (h = (struct nlmsghdr *)t->nlbuf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != t->nl.seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
		}
	}
}

static void op_netlink(struct th *t)
{
	char attrs[256], *e = attrs;
	__u8 cmd = AMUPMU_NL_CMD_STATUS_GET;
	__u16 flags = 0;
	__u32 v;
	bool must_fail = false;
	int ret;

	if (!t->nl_ok)
		return;
	switch (below(&t->rng, 9)) {
	case 0:
		break;
	case 1:
		cmd = AMUPMU_NL_CMD_CPU_GET;
		v = chance(&t->rng, 80) ? below(&t->rng, g.nr_cpu_ids) : rnd(&t->rng);
		e = put_attr(e, AMUPMU_NL_A_CPU, &v, sizeof(v));
		break;
	case 2:
		cmd = AMUPMU_NL_CMD_CPU_GET;
		flags = NLM_F_DUMP;
		break;
	case 3:
	case 4:
		cmd = AMUPMU_NL_CMD_SESSION_GET;
		flags = NLM_F_DUMP;
		break;
	case 5:
		cmd = AMUPMU_NL_CMD_SUBSCRIBE;
		v = chance(&t->rng, 80) ? below(&t->rng, AMUPMU_NL_GROUPS_ALL + 1) : rnd(&t->rng);
		e = put_attr(e, AMUPMU_NL_A_GROUPS, &v, sizeof(v));
		break;
	case 6:
		/* an event number, or beyond the commands: refused */
		cmd = chance(&t->rng, 50) ? AMUPMU_NL_CMD_CPU_ONLINE + below(&t->rng, 8) :
		      AMUPMU_NL_CMD_MAX + 1 + below(&t->rng, 200);
		must_fail = true;
		break;
	case 7:
		/* an attribute STATUS_GET does not take, or a wrong length */
		v = rnd(&t->rng);
		e = put_attr(e, 1 + below(&t->rng, AMUPMU_NL_A_MAX + 3), &v,
			     1 + below(&t->rng, sizeof(v)));
		must_fail = true;
		break;
	default: {
		/* drain what the subscription sent */
		ssize_t n;

		do
			n = recv(t->nl.fd, t->nlbuf, NL_BUF, MSG_DONTWAIT);
		while (n > 0);
		ret = n < 0 && errno != EAGAIN ? -errno : 0;
		check(t, "netlink recv (events)", ret, nl_req_errnos, true);
		return;
	}
	}
	begin(t, OP_NETLINK, 0);
	ret = nl_send(&t->nl, g.nl_family, cmd, AMUPMU_NL_FAMILY_VERSION, flags, attrs,
		      e - attrs);
	end(t);
	if (!ret)
		ret = nl_answers(t);
	/*
	 * Not answered yet, and a child does not wait: nothing to check (a
	 * request that must fail has not failed yet either).
	 */
	if (ret == -EAGAIN && t->child)
		return;
	check(t, op_names[OP_NETLINK], ret, nl_req_errnos, !must_fail);
}

/* ------------------------------------------------------------ the thread */

static void one(struct th *t);

/*
 * fork() with every file inherited, and no amupmu mapping (VM_DONTCOPY:
 * checked): the child (one thread, no kicker, so no unbounded wait) makes
 * some calls through them, closes them and exits; its status is its
 * violations.
 */
static void op_fork(struct th *t)
{
	pid_t pid;
	int status = 0;
	double t1;

	begin(t, OP_FORK, 0);
	/*
	 * Under fd_lock: every change of a file number (close and reopen of a
	 * slot, dup2(), an epoll instance made again) is made under it, so the
	 * child's copy of the file table and of the slots agree (a child forked
	 * meanwhile met a number that named a socket or another epoll
	 * instance there: EINVAL outside the contract). The child's copy of
	 * the lock stays taken; it never uses it (t->child)
	 */
	fd_lock(t);
	pid = fork();
	if (pid)
		fd_unlock(t);
	if (pid < 0) {
		end(t);
		return;
	}
	if (!pid) {
		unsigned int i, n = 20 + below(&t->rng, 100);

		static struct th_stat child_st;

		t->child = true;
		t->st = &child_st;
		t->violations = 0;
		t->rng = splitmix(t->rng ^ 0xC41D);
		/*
		 * The amupmu mappings are VM_DONTCOPY (as perf's): the child
		 * has none of them (the files it has).
		 */
		for (i = 0; i < MAX_MAPS; i++) {
			if (t->maps[i].addr &&
			    !(msync(t->maps[i].addr, t->maps[i].len, MS_ASYNC) && errno == ENOMEM))
				violation(t, "fork child", "inherited an amupmu mapping");
			t->maps[i].addr = NULL;
		}
		for (i = 0; i < n; i++)
			one(t);
		for (i = 0; i < g.fds; i++)
			if (w.pool[i] >= 0)
				close(w.pool[i]);
		_exit(t->violations ? 1 : 0);
	}
	end(t);
	__atomic_fetch_add(&w.ps->forks, 1, __ATOMIC_RELAXED);
	t1 = now_s();
	begin(t, OP_FORK, 0);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (now_s() - t1 > STUCK_SECONDS) {
			violation(t, "fork child", "did not exit within 30 s (killed)");
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			end(t);
			return;
		}
		usleep(1000);
	}
	end(t);
	if (WIFSIGNALED(status)) {
		char d[64];

		snprintf(d, sizeof(d), "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
		violation(t, "fork child", d);
	} else if (WEXITSTATUS(status)) {
		violation(t, "fork child", "reported violations (above)");
	}
}

static void one(struct th *t)
{
	unsigned int total = 0, k, r, slot = chance(&t->rng, 80) ? t->slot : below(&t->rng, g.fds);
	int fd = __atomic_load_n(&w.pool[slot], __ATOMIC_RELAXED);
	enum op op;

	for (k = 0; k < OP_NR; k++)
		total += op_weight[k];
	do {
		r = below(&t->rng, total);
		for (k = 0; r >= op_weight[k]; k++)
			r -= op_weight[k];
		op = k;
	} while (((g.excl & X_SPE) && (op == OP_SPE_CONFIG || op == OP_SPE_CTL ||
				       op == OP_SPE_READ)) ||
		 ((g.excl & X_MMAP) && (op == OP_MMAP || op == OP_TOUCH || op == OP_MUNMAP)) ||
		 ((g.excl & X_POLL) && (op == OP_POLL || op == OP_EPOLL)) ||
		 ((g.excl & X_NETLINK) && op == OP_NETLINK) ||
		 ((g.excl & X_FORK || t->child) && op == OP_FORK));
	t->calls++;
	if (!t->child) {
		__atomic_fetch_add(&t->st->calls, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&w.ps->per_op[op], 1, __ATOMIC_RELAXED);
	}
	switch (op) {
	case OP_INFO:
		op_info(t, fd);
		break;
	case OP_PMU_CONFIG:
		op_pmu_config(t, fd, slot);
		break;
	case OP_PMU_CTL:
		op_pmu_ctl(t, fd);
		break;
	case OP_PMU_READ:
	case OP_PMU_READ_ALL:
		op_pmu_read(t, fd, op == OP_PMU_READ_ALL);
		break;
	case OP_AMU_READ:
		op_amu_read(t, fd);
		break;
	case OP_SPE_CONFIG:
		op_spe_config(t, fd, slot);
		break;
	case OP_SPE_CTL:
		op_spe_ctl(t, fd);
		break;
	case OP_SPE_READ:
		op_spe_read(t, fd);
		break;
	case OP_BADCMD:
		op_badcmd(t, fd);
		break;
	case OP_POLL:
		op_poll(t);
		break;
	case OP_EPOLL:
		op_epoll(t);
		break;
	case OP_MMAP:
		op_mmap(t, slot);
		break;
	case OP_TOUCH:
		op_touch(t);
		break;
	case OP_MUNMAP:
		op_munmap(t);
		break;
	case OP_READ:
		op_read(t);
		break;
	case OP_FORK:
		op_fork(t);
		break;
	case OP_CLOSE:
		op_close(t);
		break;
	case OP_DUP:
		op_dup(t);
		break;
	default:
		op_netlink(t);
		break;
	}
}

static void *thread_fn(void *arg)
{
	struct th *t = arg;
	unsigned long long i;
	unsigned int m;

	t->st->tid = gettid();
	for (i = 0; (!w.per_thread || i < w.per_thread) && now_s() < g.deadline; i++)
		one(t);
	for (m = 0; m < MAX_MAPS; m++)
		if (t->maps[m].addr)
			munmap(t->maps[m].addr, t->maps[m].len);
	if (t->epfd >= 0)
		close(t->epfd);
	if (t->nl_ok)
		close(t->nl.fd);
	__atomic_fetch_add(&w.ps->violations, t->violations, __ATOMIC_RELAXED);
	return NULL;
}

static void on_kick(int sig)
{
	(void)sig;
}

/* The call a thread is stuck in: its wchan and kernel stack. */
static void report_stuck(int pid, const struct th_stat *s, double secs)
{
	char path[96], buf[2048];
	ssize_t n;

	out("# STUCK seed=%llu pid %d tid %d in %s for %.0f s", g.seed, pid, s->tid,
	    s->op >= 0 && s->op < OP_NR ? op_names[s->op] : "?", secs);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", pid, s->tid);
	if (amupmu_read_file(path, buf, sizeof(buf)) > 0)
		out("#   wchan: %s", buf);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", pid, s->tid);
	n = amupmu_read_file(path, buf, sizeof(buf));
	if (n > 0) {
		char *line, *save = NULL;

		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			out("#   %s", line);
	}
}

/*
 * The kicker: a thread in an unbounded wait beyond its limit gets SIGUSR1
 * (every 50 ms until it returns); a thread 30 s in one call is reported.
 */
struct kicker {
	pthread_t pt;
	struct th *th;
	unsigned int n;
	volatile bool stop;
};

static void *kicker_fn(void *arg)
{
	struct kicker *k = arg;
	unsigned int i;

	while (!k->stop) {
		double now = now_s();

		for (i = 0; i < k->n; i++) {
			struct th_stat *s = k->th[i].st;
			int op = __atomic_load_n(&s->op, __ATOMIC_ACQUIRE);
			double since = __atomic_load_n(&s->since, __ATOMIC_RELAXED) / 1000.0;
			double lim = __atomic_load_n(&s->kick_after, __ATOMIC_RELAXED) / 1000.0;

			if (op < 0)
				continue;
			if (lim > 0 && now - since > lim) {
				/* by tid: a thread that just ended is ESRCH, not a stale pthread_t */
				syscall(SYS_tgkill, getpid(), s->tid, SIGUSR1);
				__atomic_fetch_add(&w.ps->kicks, 1, __ATOMIC_RELAXED);
			}
			if (now - since > STUCK_SECONDS && !s->stuck_reported) {
				s->stuck_reported = 1;
				__atomic_fetch_add(&w.ps->violations, 1, __ATOMIC_RELAXED);
				report_stuck(getpid(), s, now - since);
			}
		}
		usleep(50000);
	}
	return NULL;
}

/* ------------------------------------------------------------ a worker */

static int worker(unsigned int proc)
{
	static struct th th[MAX_TH];
	struct kicker k = { 0 };
	struct sigaction sa = { .sa_handler = on_kick };	/* no SA_RESTART: EINTR */
	unsigned int i, n = g.fds * g.threads, joined = 0;
	int kind = proc % P_KINDS;
	bool done[MAX_TH] = { false };

	w.proc = proc;
	w.ps = &g.sh->p[proc];
	w.ps->pid = getpid();
	w.ps->kind = kind;
	w.ps->nthreads = n;
	w.nobody = kind != P_ROOT;
	sigaction(SIGUSR1, &sa, NULL);
	if (kind == P_NOBODY_OPEN && amupmu_drop_privileges(NOBODY, NOBODY, 0)) {
		out("# proc %u: cannot drop to uid %d", proc, NOBODY);
		return 2;
	}
	for (i = 0; i < g.fds; i++) {
		w.pool[i] = open(AMUPMU_DEV, O_RDWR | (i % 2 ? O_NONBLOCK : 0));
		if (w.pool[i] < 0) {
			out("# proc %u: open %s: %s", proc, AMUPMU_DEV, strerror(errno));
			return 2;
		}
	}
	if (kind == P_DROP_AFTER_OPEN && amupmu_drop_privileges(NOBODY, NOBODY, 0)) {
		out("# proc %u: cannot drop to uid %d", proc, NOBODY);
		return 2;
	}
	if (g.calls)
		w.per_thread = (g.calls + (unsigned long long)g.procs * n - 1) /
			       ((unsigned long long)g.procs * n);
	for (i = 0; i < n; i++) {
		struct th *t = &th[i];
		long pg = g.page;

		t->id = i;
		t->slot = i / g.threads;
		t->rng = splitmix(g.seed ^ ((unsigned long long)proc << 40) ^
				  ((unsigned long long)t->slot << 20) ^ (i % g.threads)) | 1;
		t->st = &w.ps->th[i];
		t->st->op = -1;
		t->epfd = -1;
		t->buf = mmap(NULL, BUF_BYTES + pg, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (t->buf == MAP_FAILED)
			return 2;
		t->guard = t->buf + BUF_BYTES;
		mprotect(t->guard, pg, PROT_NONE);
		t->nlbuf = malloc(NL_BUF);
		if (!(g.excl & X_NETLINK) && g.nl_family && t->nlbuf && !nl_open(&t->nl)) {
			t->nl.family = g.nl_family;
			t->nl_ok = true;
		}
	}
	/*
	 * The kicker first: a thread stuck with mmap_lock held would keep
	 * pthread_create() (an mmap() of the stack) from starting it.
	 */
	k.th = th;
	k.n = n;
	if (pthread_create(&k.pt, NULL, kicker_fn, &k))
		return 2;
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i].pt, NULL, thread_fn, &th[i]))
			return 2;
	/* every thread ends by the deadline unless a call hangs */
	while (joined < n) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		for (i = 0; i < n; i++)
			if (!done[i] && !pthread_timedjoin_np(th[i].pt, NULL, &ts)) {
				done[i] = true;
				joined++;
			}
		if (now_s() > g.deadline + 2 * STUCK_SECONDS) {
			out("# proc %u: %u of %u threads still in a call %.0f s after the deadline",
			    proc, n - joined, n, now_s() - g.deadline);
			__atomic_fetch_add(&w.ps->violations, 1, __ATOMIC_RELAXED);
			w.ps->done = 2;
			_exit(3);
		}
	}
	k.stop = true;
	pthread_join(k.pt, NULL);
	for (i = 0; i < n; i++)
		w.ps->calls += th[i].st->calls;
	for (i = 0; i < g.fds; i++)
		if (w.pool[i] >= 0)
			close(w.pool[i]);
	w.ps->done = 1;
	return w.ps->violations ? 1 : 0;
}

/* ------------------------------------------------------------ the controller */

#define SPE_DRV		"/sys/bus/platform/drivers/amupmu-spe"
#define SPE_KNOBS	"/sys/kernel/debug/arm_spe"

static struct {
	unsigned long long rng;
	char spe_dev[128];		/* "" without an SPE node */
	bool spe_was_bound;
	char knob[16][256];
	char knob_val[16][32];
	unsigned int nknobs;
	bool toggle_shared;
	unsigned int cpus_hotplug[64];
	unsigned int ncpus_hotplug;
} c;

static void ctl_violation(const char *what, int ret)
{
	g.sh->c.violations++;
	if (g.sh->c.violations <= 5)
		out("# VIOLATION seed=%llu controller action=%llu: %s: %s", g.seed, g.sh->c.actions,
		    what, ename(-ret));
}

/* write @s to @path: 0 or -errno */
static int wr(const char *path, const char *s)
{
	return amupmu_write_str(path, s);
}

static bool spe_bound(void)
{
	char p[256], l[256];
	ssize_t n;

	snprintf(p, sizeof(p), "/sys/bus/platform/devices/%s/driver", c.spe_dev);
	n = readlink(p, l, sizeof(l) - 1);
	if (n <= 0)
		return false;
	l[n] = 0;
	return strstr(l, "/amupmu-spe") != NULL;
}

static void find_spe_dev(void)
{
	DIR *d = opendir("/sys/bus/platform/devices");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char p[512], buf[512];
		ssize_t n;

		snprintf(p, sizeof(p), "/sys/bus/platform/devices/%s/of_node/compatible", e->d_name);
		n = amupmu_read_file(p, buf, sizeof(buf));
		if (n > 0 && memmem(buf, n, "arm,statistical-profiling-extension-v1", 38)) {
			snprintf(c.spe_dev, sizeof(c.spe_dev), "%.100s", e->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
}

static void find_knobs(void)
{
	DIR *d = opendir(SPE_KNOBS);
	struct dirent *e;

	while (d && (e = readdir(d)) && c.nknobs < ARRAY_SIZE(c.knob)) {
		char p[256];

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "config") ||
		    !strncmp(e->d_name, "cpu", 3))
			continue;
		snprintf(p, sizeof(p), SPE_KNOBS "/%.100s", e->d_name);
		if (amupmu_read_line(p, c.knob_val[c.nknobs], sizeof(c.knob_val[0])))
			continue;
		snprintf(c.knob[c.nknobs++], sizeof(c.knob[0]), "%.200s", p);
	}
	if (d)
		closedir(d);
}

static void controller_action(void)
{
	static const int hotplug_errnos[] = { EBUSY, EINTR, 0 };
	static const int bad_errnos[] = { EINVAL, ERANGE, 0 };
	static const int bind_errnos[] = { ENODEV, ENXIO, EBUSY, ENOMEM, EINVAL, 0 };
	static const int knob_errnos[] = { EINVAL, EOPNOTSUPP, 0 };
	unsigned int a = below(&c.rng, 100);
	char path[256], v[64];
	int ret;

	g.sh->c.actions++;
	if (a < 40 && !(g.excl & X_HOTPLUG) && c.ncpus_hotplug) {
		unsigned int cpu = c.cpus_hotplug[below(&c.rng, c.ncpus_hotplug)];
		bool on = chance(&c.rng, 50);

		snprintf(path, sizeof(path), AMUPMU_CPU_SYSFS "/cpu%u/online", cpu);
		if (chance(&c.rng, 5)) {
			ret = wr(path, chance(&c.rng, 50) ? "2" : "x");
			if (!ret || !in(-ret, bad_errnos))
				ctl_violation("cpu online: a bad value", ret ? ret : -EEXIST);
			return;
		}
		ret = wr(path, on ? "1" : "0");
		if (ret && !in(-ret, hotplug_errnos))
			ctl_violation(on ? "cpu online" : "cpu offline", ret);
		if (!ret)
			on ? g.sh->c.online++ : g.sh->c.offline++;
	} else if (a < 55 && !(g.excl & (X_UNBIND | X_SPE)) && c.spe_dev[0]) {
		bool unbind = spe_bound();

		snprintf(path, sizeof(path), "/sys/bus/platform/devices/%s/driver_override",
			 c.spe_dev);
		if (!unbind)
			wr(path, "amupmu-spe");
		ret = wr(unbind ? SPE_DRV "/unbind" : SPE_DRV "/bind", c.spe_dev);
		if (ret && !in(-ret, bind_errnos))
			ctl_violation(unbind ? "amupmu-spe unbind" : "amupmu-spe bind", ret);
		if (!ret)
			unbind ? g.sh->c.unbind++ : g.sh->c.bind++;
	} else if (a < 85 && !(g.excl & (X_KNOBS | X_SPE)) && c.nknobs) {
		unsigned int i = below(&c.rng, c.nknobs);
		bool bad = false;

		switch (below(&c.rng, 8)) {
		case 0:
			snprintf(v, sizeof(v), "%s", c.knob_val[i]);
			break;
		case 1:
		case 2:
			snprintf(v, sizeof(v), "%u", below(&c.rng, 2));
			break;
		case 3:
			snprintf(v, sizeof(v), "0x%llx", rnd(&c.rng) >> below(&c.rng, 64));
			break;
		case 4:
			snprintf(v, sizeof(v), "%u", 256U << below(&c.rng, 8));
			break;
		case 5:
			snprintf(v, sizeof(v), "%s", chance(&c.rng, 50) ? "-1" : "abc");
			bad = true;
			break;
		case 6:
			snprintf(v, sizeof(v), "0x1%016llx", rnd(&c.rng));
			bad = true;
			break;
		default:
			memset(v, '1', 40);
			v[40] = 0;
			bad = true;
			break;
		}
		ret = wr(c.knob[i], v);
		g.sh->c.knob++;
		if (ret ? !in(-ret, knob_errnos) : bad)
			ctl_violation(c.knob[i], ret ? ret : -EEXIST);
	} else if (!(g.excl & X_SHARED) && c.toggle_shared) {
		bool on = chance(&c.rng, 50);

		ret = amupmu_set_pmu_shared(on, NULL);
		if (ret)
			ctl_violation(on ? "pmu_shared=Y" : "pmu_shared=N", ret);
		else
			g.sh->c.shared++;
	}
}

static int controller(void)
{
	unsigned int i;
	int ret = 0;

	g.sh->c.pid = getpid();
	c.rng = splitmix(g.seed ^ 0xC0A7C0A7ULL) | 1;
	for (i = 1; i < g.nr_cpu_ids && c.ncpus_hotplug < ARRAY_SIZE(c.cpus_hotplug); i++) {
		char p[96];

		snprintf(p, sizeof(p), AMUPMU_CPU_SYSFS "/cpu%u/online", i);
		if (amupmu_path_exists(p))
			c.cpus_hotplug[c.ncpus_hotplug++] = i;
	}
	find_spe_dev();
	if (c.spe_dev[0])
		c.spe_was_bound = spe_bound();
	find_knobs();
	c.toggle_shared = amupmu_pmu_shared(&g.info);
	out("# controller: %u CPUs to offline/online, SPE device %s%s, %u arm_spe knobs, "
	    "pmu_shared %s", c.ncpus_hotplug, c.spe_dev[0] ? c.spe_dev : "none",
	    c.spe_dev[0] ? (c.spe_was_bound ? " (bound to amupmu-spe)" : " (unbound)") :
	    " (no SPE devicetree node: the unbind/bind action is skipped)", c.nknobs,
	    c.toggle_shared ? "toggled (shared mode)" : "left alone (not in shared mode)");
	if (g.excl & X_CONTROLLER)
		out("# controller: excluded (-x controller): no action");
	while (!(g.excl & X_CONTROLLER) && now_s() < g.deadline) {
		controller_action();
		usleep(1000 * (1 + below(&c.rng, 20)));
	}
	/* everything back as it was */
	for (i = 0; i < c.ncpus_hotplug; i++) {
		char p[96];

		snprintf(p, sizeof(p), AMUPMU_CPU_SYSFS "/cpu%u/online", c.cpus_hotplug[i]);
		if (wr(p, "1"))
			ret = 1;
	}
	for (i = 0; i < c.nknobs; i++)
		wr(c.knob[i], c.knob_val[i]);
	if (c.toggle_shared && amupmu_set_pmu_shared(true, NULL))
		ret = 1;
	if (c.spe_dev[0] && c.spe_was_bound != spe_bound()) {
		char p[256];

		snprintf(p, sizeof(p), "/sys/bus/platform/devices/%s/driver_override", c.spe_dev);
		wr(p, "amupmu-spe");
		wr(c.spe_was_bound ? SPE_DRV "/bind" : SPE_DRV "/unbind", c.spe_dev);
		if (c.spe_was_bound != spe_bound()) {
			out("# controller: could not put amupmu-spe's binding back");
			ret = 1;
		}
	}
	g.sh->c.done = 1;
	return ret || g.sh->c.violations ? 1 : 0;
}

/* ------------------------------------------------------------ main */

/* The kernel log's complaints since @fd was opened at its end. */
static unsigned int splats(int fd)
{
	static const char * const pat[] = {
		"Oops", "BUG:", "WARNING:", "Unable to handle kernel", "Kernel panic",
		"soft lockup", "hard LOCKUP", "rcu_sched self-detected", "detected stalls",
		"Call trace:", "KASAN", "KFENCE", "UBSAN", "possible circular locking",
		"possible recursive locking", "inconsistent lock state", "blocked for more than",
		"scheduling while atomic", "sleeping function called", "lock held when returning",
		"general protection",
	};
	char rec[8192];
	unsigned int n = 0, i;
	ssize_t r;

	if (fd < 0)
		return 0;
	while ((r = read(fd, rec, sizeof(rec) - 1)) != 0) {
		char *msg;

		if (r < 0) {
			if (errno == EPIPE)
				continue;	/* overwritten records */
			break;
		}
		rec[r] = 0;
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		for (i = 0; i < ARRAY_SIZE(pat); i++)
			if (strstr(msg, pat[i])) {
				if (n++ < 20)
					out("# kernel: %.*s", (int)strcspn(msg, "\n"), msg);
				break;
			}
	}
	return n;
}

static unsigned int parse_excl(const char *s)
{
	unsigned int x = 0, i;
	char *dup = strdup(s), *tok, *save = NULL;

	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < ARRAY_SIZE(x_names); i++)
			if (!strcmp(tok, x_names[i]))
				break;
		if (i == ARRAY_SIZE(x_names)) {
			fprintf(stderr, "amupmu_hostile: -x: unknown '%s'\n", tok);
			exit(2);
		}
		x |= 1U << i;
	}
	free(dup);
	return x;
}

static void usage(void)
{
	fprintf(stderr, "usage: amupmu_hostile [-t SECONDS] [-n CALLS] [-s SEED] [-p PROCS] "
		"[-f FDS] [-T THREADS] [-x spe,hotplug,unbind,knobs,shared,netlink,fork,mmap,"
		"poll,controller] [-P] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct amupmu_cpumask possible;
	struct nl nl;
	pid_t pids[MAX_PROCS + 1];
	bool exited[MAX_PROCS + 1] = { false }, pass = true;
	unsigned long long calls = 0, viol = 0, kicks = 0, forks = 0, maps = 0;
	unsigned long long per_op[OP_NR] = { 0 };
	unsigned int i, k, nsplat, procs_ok = 0;
	int opt, fd, kmsg;
	double secs;
	char xs[128] = "";

	setvbuf(stdout, NULL, _IONBF, 0);
	g.seconds = 60;
	g.procs = 4;
	g.fds = 3;
	g.threads = 2;
	g.seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 20);
	while ((opt = getopt(argc, argv, "t:n:s:p:f:T:x:Pvh")) != -1) {
		switch (opt) {
		case 't': g.seconds = strtod(optarg, NULL); break;
		case 'n': g.calls = strtoull(optarg, NULL, 0); break;
		case 's': g.seed = strtoull(optarg, NULL, 0); break;
		case 'p': g.procs = strtoul(optarg, NULL, 0); break;
		case 'f': g.fds = strtoul(optarg, NULL, 0); break;
		case 'T': g.threads = strtoul(optarg, NULL, 0); break;
		case 'x': g.excl |= parse_excl(optarg); break;
		case 'P': g.strict_priv = true; break;
		case 'v': g.verbose = true; break;
		default: usage();
		}
	}
	if (optind != argc || g.seconds <= 0 || !g.procs || g.procs > MAX_PROCS || !g.fds ||
	    g.fds > MAX_FDS || !g.threads || g.threads > MAX_THREADS)
		usage();

	printf("TAP version 13\n1..1\n# seed: %llu\n", g.seed);
	g.page = sysconf(_SC_PAGESIZE);
	if (amupmu_possible_cpus(&possible)) {
		printf("not ok 1 hostile # no possible CPU list\n");
		return 1;
	}
	g.nr_cpu_ids = possible.nr;
	fd = open(AMUPMU_DEV, O_RDWR);
	if (fd < 0) {
		printf("ok 1 hostile # SKIP %s: %s\n", AMUPMU_DEV, strerror(errno));
		return 4;
	}
	if (amupmu_query(fd, &g.info, NULL, 0)) {
		printf("not ok 1 hostile # INFO failed\n");
		return 1;
	}
	close(fd);
	if (!(g.info.features & AMUPMU_FEAT_SPE) || g.info.spe_owner != AMUPMU_SPE_OWNER_AMUPMU)
		printf("# SPE: spe_owner %u, features 0x%llx: SPE commands exercise the refusals only\n",
		       g.info.spe_owner, (unsigned long long)g.info.features);
	printf("# backend: QEMU/CPU PMUv3 in %s, features 0x%llx (%s)\n",
	       amupmu_pmu_mode_name(&g.info), (unsigned long long)g.info.features,
	       g.info.features & AMUPMU_FEAT_MOCK ? "AMU/SPE from the mock model" :
						   "hardware registers");
	for (i = 0; i < ARRAY_SIZE(x_names); i++)
		if (g.excl & (1U << i))
			snprintf(xs + strlen(xs), sizeof(xs) - strlen(xs), "%s%s", xs[0] ? "," : "",
				 x_names[i]);
	printf("# %u processes x %u files x %u threads, %.0f s", g.procs, g.fds, g.threads,
	       g.seconds);
	if (g.calls)
		printf(" or %llu calls", g.calls);
	printf(", excluded: %s%s\n", xs[0] ? xs : "nothing",
	       g.strict_priv ? ", SPE needs CAP_PERFMON (-P)" : "");
	printf("# interleavings differ from run to run: -s %llu replays each thread's decisions, "
	       "not the schedule\n", g.seed);
	if (!(g.excl & X_NETLINK) && !nl_open(&nl)) {
		if (!nl_resolve(&nl))
			g.nl_family = nl.family;
		close(nl.fd);
	}
	if (!g.nl_family && !(g.excl & X_NETLINK))
		printf("# netlink: family \"%s\" not found: no netlink requests\n",
		       AMUPMU_NL_FAMILY_NAME);

	g.sh = mmap(NULL, sizeof(*g.sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g.sh == MAP_FAILED) {
		printf("not ok 1 hostile # mmap: %s\n", strerror(errno));
		return 1;
	}
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg >= 0)
		lseek(kmsg, 0, SEEK_END);
	g.t0 = now_s();
	g.deadline = g.t0 + g.seconds;
	for (i = 0; i <= g.procs; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			printf("not ok 1 hostile # fork: %s\n", strerror(errno));
			return 1;
		}
		if (!pids[i]) {
			if (kmsg >= 0)
				close(kmsg);
			_exit(i == g.procs ? controller() : worker(i));
		}
	}
	/* everything ends by the deadline; a hang is reported, not waited for forever */
	for (k = 0; k <= g.procs;) {
		for (i = 0; i <= g.procs; i++) {
			int status;
			const char *who = i == g.procs ? "controller" : p_names[i % P_KINDS];

			if (exited[i] || waitpid(pids[i], &status, WNOHANG) != pids[i])
				continue;
			exited[i] = true;
			k++;
			if (WIFSIGNALED(status)) {
				printf("# %s (pid %d) killed by signal %d (%s)\n", who, pids[i],
				       WTERMSIG(status), strsignal(WTERMSIG(status)));
				pass = false;
			} else if (WEXITSTATUS(status)) {
				printf("# %s (pid %d) exited with status %d\n", who, pids[i],
				       WEXITSTATUS(status));
				pass = false;
			} else if (i < g.procs) {
				procs_ok++;
			}
		}
		if (k > g.procs)
			break;
		if (now_s() > g.deadline + 3 * STUCK_SECONDS) {
			for (i = 0; i <= g.procs; i++) {
				if (exited[i])
					continue;
				printf("# %s (pid %d) did not exit %.0f s after the deadline\n",
				       i == g.procs ? "controller" : p_names[i % P_KINDS], pids[i],
				       now_s() - g.deadline);
				if (i < g.procs)
					for (unsigned int j = 0; j < g.sh->p[i].nthreads; j++)
						if (g.sh->p[i].th[j].op >= 0)
							report_stuck(pids[i], &g.sh->p[i].th[j],
								     now_s() - g.sh->p[i].th[j].since / 1000.0);
				kill(pids[i], SIGKILL);
			}
			pass = false;
			break;
		}
		usleep(20000);
	}
	secs = now_s() - g.t0;
	for (i = 0; i < g.procs; i++) {
		struct proc_stat *p = &g.sh->p[i];
		unsigned long long pc = 0;

		for (k = 0; k < p->nthreads; k++)
			pc += p->th[k].calls;
		printf("# proc %u (%s): %llu calls, %llu violations, %llu kicks, %llu forks, "
		       "%llu mappings\n", i, p_names[p->kind], pc, p->violations, p->kicks, p->forks,
		       p->maps);
		calls += pc;
		viol += p->violations;
		kicks += p->kicks;
		forks += p->forks;
		maps += p->maps;
		for (k = 0; k < OP_NR; k++)
			per_op[k] += p->per_op[k];
	}
	for (k = 0; k < OP_NR; k++)
		printf("#   %-14s %llu\n", op_names[k], per_op[k]);
	printf("# controller: %llu actions (cpu offline %llu, online %llu; amupmu-spe unbind %llu, "
	       "bind %llu; knob writes %llu; pmu_shared writes %llu), %llu violations\n",
	       g.sh->c.actions, g.sh->c.offline, g.sh->c.online, g.sh->c.unbind, g.sh->c.bind,
	       g.sh->c.knob, g.sh->c.shared, g.sh->c.violations);
	viol += g.sh->c.violations;
	nsplat = splats(kmsg);
	if (nsplat || viol)
		pass = false;
	printf("# AMUPMU-FIGURE hostile calls=%llu seconds=%.0f processes=%u threads=%u "
	       "unexpected=%llu splats=%u kicks=%llu forks=%llu seed=%llu%s%s\n", calls, secs,
	       g.procs, g.procs * g.fds * g.threads, viol, nsplat, kicks, forks, g.seed,
	       xs[0] ? " excluded=" : "", xs);
	(void)maps;
	(void)procs_ok;
	printf("%s 1 hostile\n", pass ? "ok" : "not ok");
	if (!pass)
		printf("# replay: amupmu_hostile -s %llu -t %.0f -p %u -f %u -T %u%s%s\n", g.seed,
		       g.seconds, g.procs, g.fds, g.threads, xs[0] ? " -x " : "", xs);
	return pass ? 0 : 1;
}
