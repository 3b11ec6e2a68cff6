// SPDX-License-Identifier: GPL-2.0
/*
 * Stress: CPU hotplug while counting, concurrent sessions while CPUs come
 * and go, and module load/unload cycles.
 *
 *  hotplug_counting  AMUPMU_HOTPLUG_CYCLES (default 100) offline/online
 *                    cycles of every secondary CPU while a group counts and
 *                    another samples (CPU_CYCLES every 10^7, drained with
 *                    read()) on all CPUs: totals never go back, the offline CPU reads
 *                    AMUPMU_READ_OFFLINE with frozen totals, it counts
 *                    again once back, and the PMU interrupt does not storm
 *                    (/proc/interrupts delta per second bounded: amupmu's
 *                    line in exclusive mode, arm_pmu's in shared mode).
 *  concurrency       8 threads open, configure, enable, read, reset,
 *                    disable, release and close sessions on all CPUs for
 *                    AMUPMU_STRESS_SECONDS (default 20) while another
 *                    thread toggles CPU hotplug; only EBUSY (counters
 *                    exhausted; in shared mode: perf core could not pin
 *                    them) may refuse a well-formed CONFIG, and ENXIO where
 *                    the kernel owns the PMU and shared mode is off. A
 *                    deadlock is the harness's timeout.
 *  concurrency_shared_toggle  the same in shared mode while yet another
 *                    thread turns the module parameter pmu_shared off and
 *                    on: CONFIG may also be ENXIO, the commands on a
 *                    configured group never are.
 *  load_unload       AMUPMU_LOAD_CYCLES (default 100) finit_module /
 *                    delete_module cycles of $AMUPMU_KO (default: the
 *                    installed module, modinfo -n amupmu), each opening the
 *                    device; unloading with a session open, or with its
 *                    sample ring still mapped after close, is refused and
 *                    works once both are gone; no interrupt is left behind
 *                    and the slab and MemAvailable come back within bounds.
 *
 * AMUPMU_STRESS_SKIP=name,... skips tests by name.
 *
 * Backend: the CPU's PMU (QEMU TCG PMUv3 on the board) in exclusive mode
 * (amupmu devicetree) or shared mode (stock devicetree: perf core's
 * in-kernel counters, re-created when a CPU comes back); with the kernel's
 * arm_pmu owning the PMU and shared mode off, hotplug_counting skips and
 * the other two run with every PMU request refused (ENXIO). The kernel log
 * (no oops, WARN, BUG, lockup) is checked by the board harness.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "amupmu_test.h"

#define MAX_EV		3
#define NR_WORKERS	8
/* more PMU interrupts per second than this is a storm (64-bit counters: ~0) */
#define IRQ_STORM_PER_SEC	1000
#define SLAB_SLACK_KB	512
#define AVAIL_SLACK_KB	8192	/* page cache moves by ~5 MB between cycles; slab is the leak check */

/*
 * Sum of the lines of /proc/interrupts that end in @name (" amupmu",
 * " arm-pmu"); @lines gets how many.
 */
static unsigned long long irqs_named(const char *name, unsigned int *lines)
{
	unsigned long long sum = 0;
	char line[1024];
	FILE *f = fopen("/proc/interrupts", "r");

	*lines = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':'), *end;
		unsigned long long v;

		if (!p || !strstr(line, name))
			continue;
		(*lines)++;
		for (p++;; p = end) {
			v = strtoull(p, &end, 10);
			if (end == p)
				break;
			sum += v;
		}
	}
	fclose(f);
	return sum;
}

static unsigned long long amupmu_irqs(unsigned int *lines)
{
	return irqs_named(" amupmu", lines);
}

/* AMUPMU_STRESS_SKIP: comma-separated names of tests to skip. */
static bool stress_skipped(const char *name)
{
	const char *list = getenv("AMUPMU_STRESS_SKIP"), *p;
	size_t n = strlen(name);

	for (p = list; p && (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

#define STRESS_BEGIN(_name) do {						\
	AMUPMU_SKIPPED_IN_SETUP(self->fd);					\
	if (stress_skipped(_name))						\
		SKIP(return, "in AMUPMU_STRESS_SKIP");				\
} while (0)

/* Slab and MemAvailable in kB, after dropping the caches. */
static void meminfo(unsigned long long *slab, unsigned long long *avail)
{
	char line[256];
	FILE *f;
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);

	sync();
	if (fd >= 0) {
		if (write(fd, "3", 1) < 0)
			perror("drop_caches");
		close(fd);
	}
	usleep(200000);
	*slab = *avail = 0;
	f = fopen("/proc/meminfo", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "Slab: %llu", slab);
		sscanf(line, "MemAvailable: %llu", avail);
	}
	fclose(f);
}

FIXTURE(stress) {
	int fd;
	struct amupmu_info info;
	struct amupmu_cpu_info *cpus;
	unsigned int nr_cpu_ids;
	bool exclusive;
	bool sessions;		/* PMU sessions work: exclusive or shared mode */
	bool shared_off;	/* teardown turns pmu_shared on again */
	unsigned int secondary[64];	/* CPUs with an online file */
	unsigned int nr_secondary;
};

FIXTURE_SETUP(stress)
{
	static struct amupmu_cpumask possible;
	char path[128];
	unsigned int cpu;

	self->fd = -1;
	ASSERT_EQ(0, amupmu_possible_cpus(&possible));
	self->nr_cpu_ids = possible.nr;
	AMUPMU_OPEN_DEVICE(self->fd);
	self->cpus = calloc(possible.nr, sizeof(*self->cpus));
	ASSERT_NE(NULL, self->cpus);
	ASSERT_EQ(0, amupmu_query(self->fd, &self->info, self->cpus, possible.nr));
	self->exclusive = self->info.pmu_owner == AMUPMU_PMU_OWNER_AMUPMU;
	self->sessions = amupmu_pmu_sessions_work(&self->info);
	for (cpu = 1; cpu < possible.nr && self->nr_secondary < 64; cpu++) {
		snprintf(path, sizeof(path), AMUPMU_CPU_SYSFS "/cpu%u/online", cpu);
		if (possible.cpu[cpu] && amupmu_path_exists(path))
			self->secondary[self->nr_secondary++] = cpu;
	}
	TH_LOG("backend: QEMU/CPU PMUv3 in %s, %u CPUs, %u can go offline",
	       amupmu_pmu_mode_name(&self->info), self->nr_cpu_ids, self->nr_secondary);
}

FIXTURE_TEARDOWN(stress)
{
	unsigned int i;

	for (i = 0; i < self->nr_secondary; i++)
		amupmu_set_online(self->secondary[i], true);
	if (self->shared_off && amupmu_set_pmu_shared(true, NULL))
		TH_LOG("could not turn %s back on", AMUPMU_PMU_SHARED_PARAM);
	free(self->cpus);
	if (self->fd >= 0)
		close(self->fd);
}

/* A group of @nr events on the CPUs in @cpus (a bitmap of @len bytes). */
static int config(int fd, unsigned int nr, const __u64 *cpus, __u32 len)
{
	static const __u32 evs[MAX_EV] = { PMUV3_EV_CPU_CYCLES, PMUV3_EV_CPU_CYCLES,
					   PMUV3_EV_SW_INCR };
	struct amupmu_pmu_event ev[MAX_EV];
	struct amupmu_pmu_config cfg;
	unsigned int i;

	for (i = 0; i < nr; i++)
		amupmu_pmu_event_set(&ev[i], evs[i], i == 1 ? AMUPMU_EV_USER_ONLY : 0);
	amupmu_pmu_config_init(&cfg, ev, nr, cpus, len);
	return amupmu_ioctl(fd, AMUPMU_PMU_CONFIG, &cfg);
}

static void all_cpus(__u64 *w, unsigned int nr_cpu_ids, __u32 *len)
{
	unsigned int c;

	memset(w, 0, 128);
	for (c = 0; c < nr_cpu_ids && c < 1024; c++)
		w[c / 64] |= 1ULL << (c % 64);
	*len = ((nr_cpu_ids + 63) / 64) * 8;
}

/*
 * A sampling session: CPU_CYCLES every SAMPLE_PERIOD on every CPU into a
 * ring of SAMPLE_PAGES pages, drained with non-blocking read().
 */
#define SAMPLE_PERIOD	10000000ULL
#define SAMPLE_PAGES	8

struct sampler {
	int fd;
	unsigned long long records, bad;
	unsigned char buf[65536];
};

static int sampler_open(struct sampler *sp, unsigned int nr_cpu_ids)
{
	struct amupmu_pmu_event ev;
	struct amupmu_pmu_config cfg;
	__u64 w[16];
	__u32 len;
	int ret;

	sp->fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (sp->fd < 0)
		return -errno;
	all_cpus(w, nr_cpu_ids, &len);
	amupmu_pmu_event_set(&ev, PMUV3_EV_CPU_CYCLES, 0);
	ev.sample_period = SAMPLE_PERIOD;
	amupmu_pmu_config_init(&cfg, &ev, 1, w, len);
	cfg.ring_pages = SAMPLE_PAGES;
	ret = amupmu_ioctl(sp->fd, AMUPMU_PMU_CONFIG, &cfg);
	return ret ?: amupmu_pmu_ctl(sp->fd, AMUPMU_PMU_CTL_ENABLE);
}

/* Read what the ring holds; every record well-formed. */
static void sampler_drain(struct sampler *sp, unsigned int nr_cpu_ids)
{
	ssize_t n;

	while ((n = read(sp->fd, sp->buf, sizeof(sp->buf))) > 0) {
		size_t off = 0;

		while (off + sizeof(struct amupmu_sample) <= (size_t)n) {
			struct amupmu_sample smp;

			memcpy(&smp, sp->buf + off, sizeof(smp));
			if (smp.size < sizeof(smp) || smp.size % 8 || off + smp.size > (size_t)n ||
			    smp.type != AMUPMU_SAMPLE_PMU_OVERFLOW || smp.cpu >= nr_cpu_ids) {
				sp->bad++;
				break;
			}
			sp->records++;
			off += smp.size;
		}
	}
	if (n < 0 && errno != EAGAIN)
		sp->bad++;
}

struct cpu_read {
	struct amupmu_pmu_read rd;
	struct amupmu_pmu_value v[MAX_EV];
};

static void read_cpu(struct __test_metadata *_metadata, int fd, unsigned int cpu,
		     struct cpu_read *r)
{
	int ret = amupmu_pmu_read(fd, cpu, r->v, 2, &r->rd);

	ASSERT_EQ(0, ret) {
		TH_LOG("READ cpu%u: %s", cpu, strerror(-ret));
	}
}

/* @b's totals are not below @a's. */
static void expect_monotonic(struct __test_metadata *_metadata, const struct cpu_read *a,
			     const struct cpu_read *b, unsigned int cpu, const char *what)
{
	unsigned int e;

	for (e = 0; e < 2; e++) {
		EXPECT_LE(a->v[e].value, b->v[e].value) {
			TH_LOG("cpu%u event %u %s: total went back %llu -> %llu (overflows %llu -> "
			       "%llu, state 0x%x -> 0x%x, time_running %llu -> %llu)", cpu, e, what,
			       (unsigned long long)a->v[e].value,
			       (unsigned long long)b->v[e].value,
			       (unsigned long long)a->v[e].overflows,
			       (unsigned long long)b->v[e].overflows, a->rd.state, b->rd.state,
			       (unsigned long long)a->rd.time_running,
			       (unsigned long long)b->rd.time_running);
		}
	}
}

TEST_F_TIMEOUT(stress, hotplug_counting, 1200)
{
	unsigned int cycles = amupmu_env_u64("AMUPMU_HOTPLUG_CYCLES", 100), lines, i, n, cpu, c;
	char what[64];
	struct cpu_read prev[64], r, off;
	static struct sampler sp;
	unsigned long long irq0, irq1;
	/* the PMU interrupt: amupmu's in exclusive mode, arm_pmu's in shared mode */
	const char *irq_name = self->exclusive ? " amupmu" : " arm-pmu";
	__u64 w[16], t0, secs;
	__u32 len;
	int ret;

	STRESS_BEGIN("hotplug_counting");
	if (!self->sessions)
		SKIP(return, "PMU in %s", amupmu_pmu_mode_name(&self->info));
	if (!self->nr_secondary)
		SKIP(return, "no CPU can go offline");
	ASSERT_GE(64U, self->nr_cpu_ids);
	all_cpus(w, self->nr_cpu_ids, &len);
	ASSERT_EQ(0, config(self->fd, 2, w, len));
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	ret = sampler_open(&sp, self->nr_cpu_ids);
	ASSERT_EQ(0, ret) {
		TH_LOG("sampling session (period %llu, %u pages): %s", SAMPLE_PERIOD,
		       SAMPLE_PAGES, strerror(-ret));
	}
	for (c = 0; c < self->nr_cpu_ids; c++)
		read_cpu(_metadata, self->fd, c, &prev[c]);

	irq0 = irqs_named(irq_name, &lines);
	EXPECT_EQ(1U, lines) {
		TH_LOG("%u lines of /proc/interrupts end in \"%s\"", lines, irq_name);
	}
	t0 = amupmu_now_ns();
	for (i = 0; i < self->nr_secondary; i++) {
		cpu = self->secondary[i];
		for (n = 0; n < cycles; n++) {
			ASSERT_EQ(0, amupmu_set_online(cpu, false));
			read_cpu(_metadata, self->fd, cpu, &off);
			EXPECT_TRUE((off.rd.state & AMUPMU_READ_OFFLINE) != 0) {
				TH_LOG("cycle %u: cpu%u offline, state 0x%x", n, cpu, off.rd.state);
			}
			snprintf(what, sizeof(what), "cycle %u, going offline", n);
			expect_monotonic(_metadata, &prev[cpu], &off, cpu, what);
			read_cpu(_metadata, self->fd, cpu, &r);
			EXPECT_EQ(0, memcmp(off.v, r.v, sizeof(r.v[0]) * 2)) {
				TH_LOG("cycle %u: cpu%u counted while offline", n, cpu);
			}
			ASSERT_EQ(0, amupmu_set_online(cpu, true));
			/* a few sampling interrupts on every CPU before the reads */
			usleep(5000);
			sampler_drain(&sp, self->nr_cpu_ids);
			/* the other CPUs keep counting meanwhile */
			for (c = 0; c < self->nr_cpu_ids; c++) {
				read_cpu(_metadata, self->fd, c, &r);
				snprintf(what, sizeof(what), "cycle %u, back online", n);
				expect_monotonic(_metadata, &prev[c], &r, c, what);
				EXPECT_FALSE((r.rd.state & AMUPMU_READ_OFFLINE) != 0) {
					TH_LOG("cycle %u: cpu%u online but reads offline", n, c);
				}
				prev[c] = r;
			}
			if (!_metadata->passed)
				break;
		}
	}
	/* cpu back online counts again */
	usleep(20000);
	for (i = 0; i < self->nr_secondary; i++) {
		cpu = self->secondary[i];
		read_cpu(_metadata, self->fd, cpu, &r);
		EXPECT_LT(prev[cpu].v[0].value, r.v[0].value) {
			TH_LOG("cpu%u does not count after coming back", cpu);
		}
	}
	secs = (amupmu_now_ns() - t0) / NSEC_PER_SEC + 1;
	irq1 = irqs_named(irq_name, &lines);
	sampler_drain(&sp, self->nr_cpu_ids);
	TH_LOG("%s: %u cycles x %u CPUs in %llu s, %llu PMU interrupts (\"%s\"), %llu samples "
	       "read (%llu malformed)", amupmu_pmu_mode_name(&self->info), cycles,
	       self->nr_secondary, (unsigned long long)secs, irq1 - irq0, irq_name + 1,
	       sp.records, sp.bad);
	printf("# AMUPMU-FIGURE hotplug cycles=%u cpus=%u irqs=%llu samples=%llu seconds=%llu\n",
	       cycles, self->nr_secondary, irq1 - irq0, sp.records, (unsigned long long)secs);
	fflush(stdout);
	EXPECT_GE(IRQ_STORM_PER_SEC * secs, irq1 - irq0);
	EXPECT_LT(0ULL, sp.records);
	EXPECT_EQ(0ULL, sp.bad);
	close(sp.fd);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE));
}

/* ---------------------------------------------------------------- concurrency */

/*
 * No PMU sessions (the kernel's arm_pmu owns the PMU, shared mode off):
 * every CONFIG is ENXIO.
 */
static bool no_sessions;
/* pmu_shared is being toggled: CONFIG may be EBUSY or ENXIO */
static bool toggling;

struct worker {
	pthread_t tid;
	unsigned int id;
	unsigned int nr_cpu_ids;
	__u64 deadline;
	unsigned long long ops, busy, sessions, unexpected;
	char first_bad[128];
};

static void worker_check(struct worker *t, const char *what, int ret, bool busy_ok)
{
	t->ops++;
	if (!ret)
		return;
	if (busy_ok && (ret == (no_sessions ? -ENXIO : -EBUSY) || (toggling && ret == -ENXIO))) {
		t->busy++;
		return;
	}
	if (!t->unexpected++)
		snprintf(t->first_bad, sizeof(t->first_bad), "%s: %s", what, strerror(-ret));
}

static void *worker_fn(void *arg)
{
	struct worker *t = arg;
	unsigned long long rng = 0x9E3779B97F4A7C15ULL * (t->id + 1);
	struct amupmu_pmu_value v[MAX_EV];
	struct amupmu_pmu_read rd;
	__u64 w[16];
	__u32 len;
	int fd, ret;

	/*
	 * At least one round, whenever the thread starts: a loaded host
	 * without -icount may start it after the deadline (the counts below
	 * must not be 0)
	 */
	do {
		unsigned int nr, c, cpu;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		nr = 1 + rng % MAX_EV;
		cpu = (rng >> 8) % t->nr_cpu_ids;
		fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
		worker_check(t, "open", fd < 0 ? -errno : 0, false);
		if (fd < 0)
			continue;
		t->sessions++;
		if ((rng >> 16) & 1) {
			all_cpus(w, t->nr_cpu_ids, &len);
		} else {
			memset(w, 0, sizeof(w));
			w[cpu / 64] = 1ULL << (cpu % 64);
			len = (cpu / 64 + 1) * 8;
		}
		ret = config(fd, nr, w, len);
		worker_check(t, "CONFIG", ret, true);
		if (!ret) {
			worker_check(t, "ENABLE", amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_ENABLE), false);
			for (c = 0; c < t->nr_cpu_ids; c++) {
				if (!(w[c / 64] & (1ULL << (c % 64))))
					continue;
				worker_check(t, "READ", amupmu_pmu_read(fd, c, v, MAX_EV, &rd),
					     false);
			}
			worker_check(t, "RESET", amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_RESET), false);
			worker_check(t, "DISABLE", amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_DISABLE),
				     false);
			if ((rng >> 20) & 1)
				worker_check(t, "RELEASE",
					     amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_RELEASE), false);
		}
		close(fd);
	} while (amupmu_now_ns() < t->deadline);
	return NULL;
}

/* Turns pmu_shared off and on until the deadline (at least once). */
struct shared_toggler {
	pthread_t tid;
	__u64 deadline;
	unsigned long long toggles, failed;
};

static void *shared_toggler_fn(void *arg)
{
	struct shared_toggler *st = arg;
	struct timespec ts = { 0, 2000000 };

	do {
		if (amupmu_set_pmu_shared(st->toggles & 1, NULL))
			st->failed++;
		st->toggles++;
		nanosleep(&ts, NULL);
	} while (amupmu_now_ns() < st->deadline);
	if (amupmu_set_pmu_shared(true, NULL))
		st->failed++;
	return NULL;
}

struct toggler {
	pthread_t tid;
	const unsigned int *cpus;
	unsigned int nr;
	__u64 deadline;
	unsigned long long toggles, failed;
};

static void *toggler_fn(void *arg)
{
	struct toggler *h = arg;
	unsigned int i = 0;

	if (!h->nr)
		return NULL;
	do {	/* at least one cycle, as the workers */
		unsigned int cpu = h->cpus[i++ % h->nr];

		if (amupmu_set_online(cpu, false) || amupmu_set_online(cpu, true))
			h->failed++;
		h->toggles++;
	} while (amupmu_now_ns() < h->deadline);
	return NULL;
}

/*
 * The session storm against the hotplug toggler; with @toggle_shared,
 * pmu_shared is turned off and on meanwhile too.
 */
static void run_concurrency(struct __test_metadata *_metadata, FIXTURE_DATA(stress) *self,
			    bool toggle_shared, const char *figure)
{
	static struct worker wk[NR_WORKERS];
	unsigned long long secs = amupmu_env_u64("AMUPMU_STRESS_SECONDS", 20), ops = 0, busy = 0;
	unsigned long long sessions = 0, bad = 0;
	struct shared_toggler st = { 0 };
	struct toggler h = { 0 };
	unsigned int i;

	no_sessions = !self->sessions;
	toggling = toggle_shared;
	h.deadline = amupmu_now_ns() + secs * NSEC_PER_SEC;
	st.deadline = h.deadline;
	h.cpus = self->secondary;
	h.nr = self->nr_secondary;
	for (i = 0; i < NR_WORKERS; i++) {
		memset(&wk[i], 0, sizeof(wk[i]));
		wk[i].id = i;
		wk[i].nr_cpu_ids = self->nr_cpu_ids;
		wk[i].deadline = h.deadline;
		ASSERT_EQ(0, pthread_create(&wk[i].tid, NULL, worker_fn, &wk[i]));
	}
	ASSERT_EQ(0, pthread_create(&h.tid, NULL, toggler_fn, &h));
	if (toggle_shared) {
		self->shared_off = true;
		ASSERT_EQ(0, pthread_create(&st.tid, NULL, shared_toggler_fn, &st));
	}
	for (i = 0; i < NR_WORKERS; i++) {
		ASSERT_EQ(0, pthread_join(wk[i].tid, NULL));
		ops += wk[i].ops;
		busy += wk[i].busy;
		sessions += wk[i].sessions;
		bad += wk[i].unexpected;
		if (wk[i].unexpected)
			TH_LOG("worker %u: %llu unexpected answers, first: %s", i,
			       wk[i].unexpected, wk[i].first_bad);
	}
	ASSERT_EQ(0, pthread_join(h.tid, NULL));
	if (toggle_shared) {
		ASSERT_EQ(0, pthread_join(st.tid, NULL));
		self->shared_off = false;
	}
	TH_LOG("PMU in %s: %u threads, %llu s: %llu sessions, %llu calls (%llu EBUSY/ENXIO), "
	       "%llu hotplug toggles (%llu refused), %llu pmu_shared toggles (%llu refused)",
	       amupmu_pmu_mode_name(&self->info), NR_WORKERS, secs, sessions, ops, busy,
	       h.toggles, h.failed, st.toggles, st.failed);
	printf("# AMUPMU-FIGURE %s threads=%u seconds=%llu sessions=%llu calls=%llu "
	       "toggles=%llu unexpected=%llu\n", figure, NR_WORKERS, secs, sessions, ops,
	       h.toggles, bad);
	fflush(stdout);
	EXPECT_EQ(0ULL, bad);
	EXPECT_EQ(0ULL, h.failed);
	EXPECT_EQ(0ULL, st.failed);
	EXPECT_LT(0ULL, sessions);
	if (self->nr_secondary) {
		EXPECT_LT(0ULL, h.toggles);
	}
	if (toggle_shared) {
		EXPECT_LT(0ULL, st.toggles);
	}
	if (self->sessions) {
		EXPECT_LT(busy, ops);	/* some requests were served */
	}
}

TEST_F_TIMEOUT(stress, concurrency, 600)
{
	STRESS_BEGIN("concurrency");
	run_concurrency(_metadata, self, false, "concurrency");
}

/* Shared mode: the same storm while pmu_shared goes off and on (root). */
TEST_F_TIMEOUT(stress, concurrency_shared_toggle, 600)
{
	STRESS_BEGIN("concurrency_shared_toggle");
	if (!amupmu_pmu_shared(&self->info))
		SKIP(return, "PMU in %s: no shared mode to toggle",
		     amupmu_pmu_mode_name(&self->info));
	if (geteuid() != 0)
		SKIP(return, "writing pmu_shared needs root");
	run_concurrency(_metadata, self, true, "concurrency-shared-toggle");
}

/* ---------------------------------------------------------------- load / unload */

static int load(const char *ko)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

static int unload(void)
{
	return syscall(SYS_delete_module, "amupmu", O_NONBLOCK) ? -errno : 0;
}

TEST_F_TIMEOUT(stress, load_unload, 1200)
{
	unsigned int cycles = amupmu_env_u64("AMUPMU_LOAD_CYCLES", 100), n, lines;
	unsigned long long slab0, avail0, slab1, avail1;
	const char *ko = amupmu_module_file();
	struct amupmu_info info;
	long long dslab, davail;
	__u64 cpu0 = 1;
	int fd, ret;

	STRESS_BEGIN("load_unload");
	if (!ko)
		SKIP(return, "no module file to load: set AMUPMU_KO (modinfo -n amupmu found none, or a compressed one)");

	/* a session holds the module; with a group where PMU sessions work */
	if (self->sessions) {
		ASSERT_EQ(0, config(self->fd, 2, &cpu0, 8));
		ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	}
	ret = unload();
	EXPECT_TRUE(ret == -EWOULDBLOCK || ret == -EBUSY) {
		TH_LOG("delete_module with a session open: %s", ret ? strerror(-ret) : "unloaded");
	}
	ASSERT_EQ(0, amupmu_query(self->fd, &info, NULL, 0));
	close(self->fd);
	self->fd = -1;
	if (self->sessions) {
		/* a mapped ring holds the module after its file is closed */
		static struct sampler sp;
		long page = sysconf(_SC_PAGESIZE);
		size_t mlen = (1 + SAMPLE_PAGES) * page;
		void *m;

		ASSERT_EQ(0, sampler_open(&sp, self->nr_cpu_ids));
		m = mmap(NULL, mlen, PROT_READ, MAP_SHARED, sp.fd, 0);
		ASSERT_NE(MAP_FAILED, m) {
			TH_LOG("mmap of the ring: %s", strerror(errno));
		}
		close(sp.fd);
		ret = unload();
		EXPECT_TRUE(ret == -EWOULDBLOCK || ret == -EBUSY) {
			TH_LOG("delete_module with a ring mapped: %s",
			       ret ? strerror(-ret) : "unloaded");
		}
		EXPECT_EQ((__u32)AMUPMU_RING_VERSION, ((struct amupmu_ring_header *)m)->version);
		munmap(m, mlen);
	}
	ASSERT_EQ(0, unload());
	EXPECT_FALSE(amupmu_path_exists(AMUPMU_DEV));
	amupmu_irqs(&lines);
	EXPECT_EQ(0U, lines);
	/* the first load sets up what the kernel keeps (caches, kobjects) */
	ASSERT_EQ(0, load(ko));
	ASSERT_EQ(0, unload());
	meminfo(&slab0, &avail0);

	for (n = 0; n < cycles; n++) {
		ret = load(ko);
		ASSERT_EQ(0, ret) {
			TH_LOG("cycle %u: finit_module: %s", n, strerror(-ret));
		}
		fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd) {
			TH_LOG("cycle %u: open: %s", n, strerror(errno));
		}
		EXPECT_EQ(0, amupmu_query(fd, &info, NULL, 0));
		EXPECT_EQ(self->info.pmu_owner, info.pmu_owner);
		close(fd);
		ret = unload();
		ASSERT_EQ(0, ret) {
			TH_LOG("cycle %u: delete_module: %s", n, strerror(-ret));
		}
		amupmu_irqs(&lines);
		EXPECT_EQ(0U, lines) {
			TH_LOG("cycle %u: an amupmu interrupt is left after unload", n);
		}
		if (!_metadata->passed)
			break;
	}
	meminfo(&slab1, &avail1);
	dslab = (long long)slab1 - (long long)slab0;
	davail = (long long)avail0 - (long long)avail1;
	TH_LOG("%u cycles: Slab %llu -> %llu kB (%+lld), MemAvailable %llu -> %llu kB (-%lld)",
	       n, slab0, slab1, dslab, avail0, avail1, davail);
	printf("# AMUPMU-FIGURE load-unload cycles=%u slab_delta_kb=%lld avail_drop_kb=%lld\n",
	       n, dslab, davail);
	fflush(stdout);
	EXPECT_GE(SLAB_SLACK_KB, dslab);
	EXPECT_GE(AVAIL_SLACK_KB, davail);
	/* leave it loaded, as found */
	ASSERT_EQ(0, load(ko));
}

TEST_HARNESS_MAIN
