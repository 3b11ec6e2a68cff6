/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of the PMU session tests (the amupmu_pmu_*_test programs,
 * one per area: mode, count, filter, alloc, abi, sample, hotplug, priv),
 * and what they share: event groups and their CPU sets, READ snapshots and
 * the invariants of every answer, the refusal checks (errno, nothing
 * written back, nothing left allocated), the sampling ring and the sampled
 * loop. Include after _GNU_SOURCE; each program defines FIXTURE(pmu) once
 * by including this header once.
 *
 * The PMU is always the CPU's own (QEMU TCG's PMUv3 on the test boards),
 * in exclusive mode (the amupmu devicetree: amupmu programs it), shared
 * mode (the stock devicetree: the kernel's arm_pmu owns it and, with the
 * module parameter pmu_shared=Y, the default, the sessions count and
 * sample through perf core) or kernel-owned with shared mode off (every
 * PMU command ENXIO). Every test logs the backend it ran on first
 * (PMU_BEGIN()); the few exclusive-only checks skip in shared mode
 * (NEED_EXCLUSIVE()).
 *
 * AMUPMU_PMU_ONLY=NAME runs that test alone (the others skip in their
 * FIXTURE_SETUP): the check payload's race run.
 */
#ifndef AMUPMU_PMU_FIXTURE_H
#define AMUPMU_PMU_FIXTURE_H

#include <sys/mman.h>

#include "amupmu_test.h"

#define CFG_SZ		sizeof(struct amupmu_pmu_config)
#define EV_SZ		sizeof(struct amupmu_pmu_event)
#define CTL_SZ		sizeof(struct amupmu_pmu_ctl)
#define RD_SZ		sizeof(struct amupmu_pmu_read)
#define VAL_SZ		sizeof(struct amupmu_pmu_value)
/* Room for a struct followed by an unknown, larger tail. */
#define BIG_SZ		8192

#define MAX_GROUP	AMUPMU_PMU_MAX_EVENTS

_Static_assert(CFG_SZ == AMUPMU_PMU_CONFIG_SIZE_VER0, "amupmu_pmu_config layout");
_Static_assert(EV_SZ == AMUPMU_PMU_EVENT_SIZE_VER0, "amupmu_pmu_event layout");
_Static_assert(CTL_SZ == AMUPMU_PMU_CTL_SIZE_VER0, "amupmu_pmu_ctl layout");
_Static_assert(RD_SZ == AMUPMU_PMU_READ_SIZE_VER3, "amupmu_pmu_read layout");
_Static_assert(VAL_SZ == 16, "amupmu_pmu_value layout");

/* The known loop: LOOP_N iterations of two instructions. */
#define LOOP_N		10000000ULL
#define LOOP_INSNS	(2 * LOOP_N)

#define NSEC_PER_MSEC	1000000ULL
/* time_running may lead time_enabled by this much (taken at other points) */
#define TIME_SLACK_NS	NSEC_PER_MSEC

/* An address user space cannot pass to the kernel. */
#define KERNEL_ADDR	0xffff800000000000ULL

#define COUNTER_BITS_PARAM	"/sys/module/amupmu/parameters/pmu_counter_bits"
#define PMU_SHARED_PARAM	"/sys/module/amupmu/parameters/pmu_shared"

/* PMUv3 CHAIN: counts the overflows of the counter below; shared mode refuses it */
#define PMUV3_EV_CHAIN		0x001E

/* QEMU's "max" CPU: MIDR implementer 0 (software use), part number 'Q' */
#define QEMU_MAX_MIDR_PARTNUM	0x51

/* ---------------------------------------------------------------- helpers */

union cfg_buf {
	struct amupmu_pmu_config cfg;
	unsigned char raw[BIG_SZ];
};

/* A CPU bitmap as AMUPMU_PMU_CONFIG takes it. */
struct cpuset {
	__u64 w[AMUPMU_PMU_CPUS_LEN_MAX / 8];
	__u32 len;	/* bytes passed as cpus_len */
};

static inline void cpuset_clear(struct cpuset *s, __u32 len)
{
	memset(s->w, 0, sizeof(s->w));
	s->len = len;
}

static inline void cpuset_add(struct cpuset *s, unsigned int cpu)
{
	__u32 need = (cpu / 64 + 1) * 8;

	s->w[cpu / 64] |= 1ULL << (cpu % 64);
	if (s->len < need)
		s->len = need;
}

static inline void cpuset_one(struct cpuset *s, unsigned int cpu)
{
	cpuset_clear(s, 8);
	cpuset_add(s, cpu);
}

/* An event group, the CPU set it counts on, and the last CONFIG request. */
struct group {
	struct amupmu_pmu_event ev[MAX_GROUP + 2];
	unsigned int nr;
	struct cpuset cpus;
	struct amupmu_pmu_config cfg;
};

static inline void group_init(struct group *g, unsigned int cpu)
{
	memset(g, 0, sizeof(*g));
	cpuset_one(&g->cpus, cpu);
}

static inline void group_add(struct group *g, __u32 event, __u32 flags)
{
	if (g->nr < ARRAY_SIZE(g->ev))
		amupmu_pmu_event_set(&g->ev[g->nr++], event, flags);
}

static inline void group_add_n(struct group *g, __u32 event, unsigned int n)
{
	while (n--)
		group_add(g, event, 0);
}

/* AMUPMU_PMU_CONFIG of @g on @fd. Returns 0 or -errno; g->cfg has the answer. */
static inline int group_config(int fd, struct group *g)
{
	amupmu_pmu_config_init(&g->cfg, g->ev, g->nr, g->cpus.w, g->cpus.len);
	return amupmu_ioctl(fd, AMUPMU_PMU_CONFIG, &g->cfg);
}

/* One READ's answer. */
struct snap {
	struct amupmu_pmu_read rd;
	struct amupmu_pmu_value v[MAX_GROUP + 2];
};

static inline int snap_read(int fd, __u32 cpu, unsigned int nr, struct snap *s)
{
	memset(s->v, AMUPMU_FILL_BYTE, sizeof(s->v));
	return amupmu_pmu_read(fd, cpu, s->v, nr, &s->rd);
}

static inline int open_dev(void)
{
	return open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
}

static inline void sleep_ns(__u64 ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Spin on @cpu for @ns, then go back to CPU 0. */
static inline int busy_on(unsigned int cpu, __u64 ns)
{
	int ret = amupmu_pin_cpu(cpu);

	if (ret)
		return ret;
	amupmu_busy_ns(ns);
	return amupmu_pin_cpu(0);
}

/* ---------------------------------------------------------------- fixture */

FIXTURE(pmu) {
	int fd;
	unsigned int nr_cpu_ids;
	struct amupmu_info info;
	struct amupmu_cpu_info *cpus;
	const struct amupmu_cpu_info *cpu0;
	unsigned int nr_counters;	/* PMCR_EL0.N of CPU 0 */
	__u32 filler;			/* implemented, needs an event counter */
	bool qemu;			/* QEMU TCG "max" CPU */
	bool icount;			/* INST_RETIRED implemented (QEMU -icount) */
	unsigned int counter_bits;	/* pmu_counter_bits, 0 if absent */
	unsigned int kernel_el;		/* INFO.kernel_el: 2 on a VHE host */
	bool has_el2;			/* ID_AA64PFR0_EL1.EL2 of CPU 0 */
	bool cpu1_offlined;		/* teardown puts cpu1 back online */
	bool exclusive;			/* amupmu owns the PMU */
	bool shared;			/* arm_pmu owns it, shared mode: perf core counts */
	bool restore_shared;		/* teardown writes pmu_shared=Y back */
	char backend[512];
};

/*
 * The fixture's mode for the helpers without it (read_ok()): each test
 * runs in a child of its own, after its FIXTURE_SETUP set this.
 */
static bool shared_mode;

/* A READ state as the mode has it: shared mode adds AMUPMU_READ_SHARED. */
#define RD_STATE(_f)	((__u32)(_f) | (shared_mode ? (__u32)AMUPMU_READ_SHARED : 0U))

FIXTURE_SETUP(pmu)
{
	static struct amupmu_cpumask possible;
	const struct amupmu_cpu_info *c0;
	char board[192];
	__u64 bits = 0;
	const char *mode;

	self->fd = -1;
	/* AMUPMU_PMU_ONLY=NAME: that test alone (the check payload's race run) */
	if (getenv("AMUPMU_PMU_ONLY") && strcmp(getenv("AMUPMU_PMU_ONLY"), _metadata->name))
		SKIP(return, "AMUPMU_PMU_ONLY=%s", getenv("AMUPMU_PMU_ONLY"));
	ASSERT_EQ(0, amupmu_possible_cpus(&possible));
	ASSERT_LT(0U, possible.nr);
	self->nr_cpu_ids = possible.nr;

	AMUPMU_OPEN_DEVICE(self->fd);

	self->cpus = calloc(self->nr_cpu_ids, sizeof(*self->cpus));
	ASSERT_NE(NULL, self->cpus);
	ASSERT_EQ(0, amupmu_query(self->fd, &self->info, self->cpus, self->nr_cpu_ids));
	ASSERT_EQ(self->nr_cpu_ids, self->info.nr_cpus);
	c0 = self->cpu0 = &self->cpus[0];

	self->nr_counters = c0->pmu_num_counters;
	self->qemu = MIDR_IMPLEMENTER(c0->midr) == 0 &&
		     MIDR_PARTNUM(c0->midr) == QEMU_MAX_MIDR_PARTNUM;
	self->icount = amupmu_event_implemented(c0, PMUV3_EV_INST_RETIRED);
	if (amupmu_event_implemented(c0, PMUV3_EV_SW_INCR))
		self->filler = PMUV3_EV_SW_INCR;
	else if (self->icount)
		self->filler = PMUV3_EV_INST_RETIRED;
	else
		self->filler = PMUV3_EV_CPU_CYCLES;	/* event counters once the cycle counter is taken */
	if (!amupmu_read_u64(COUNTER_BITS_PARAM, &bits))
		self->counter_bits = bits;
	self->kernel_el = self->info.kernel_el;
	self->has_el2 = PFR0_EL2(c0->id_aa64pfr0) != 0;
	amupmu_board_line(board, sizeof(board));

	self->exclusive = self->info.pmu_owner == AMUPMU_PMU_OWNER_AMUPMU;
	self->shared = self->info.pmu_owner == AMUPMU_PMU_OWNER_KERNEL &&
		       (self->info.features & AMUPMU_FEAT_PMU_SHARED);
	shared_mode = self->shared;
	switch (self->info.pmu_owner) {
	case AMUPMU_PMU_OWNER_AMUPMU:
		mode = "exclusive mode";
		break;
	case AMUPMU_PMU_OWNER_KERNEL:
		mode = self->shared ? "shared mode (perf core)" :
		       "kernel-owned mode (arm_pmu), shared mode off";
		break;
	default:
		mode = "no PMU";
		break;
	}
	snprintf(self->backend, sizeof(self->backend),
		 "%s PMUv3 (MIDR 0x%llx), %s, %u+1 counters, pmu_counter_bits %u, icount %s, "
		 "kernel at EL%u%s, CPU %s EL2; board \"%s\"",
		 self->qemu ? "QEMU TCG" : "hardware", (unsigned long long)c0->midr,
		 mode, self->nr_counters, self->counter_bits,
		 self->icount ? "yes" : "no", self->kernel_el,
		 self->kernel_el == 2 ? " (VHE)" : "", self->has_el2 ? "with" : "without",
		 board[0] ? board : "unknown");
}

FIXTURE_TEARDOWN(pmu)
{
	if (self->cpu1_offlined && amupmu_set_online(1, true))
		TH_LOG("could not put cpu1 back online");
	if (self->restore_shared && amupmu_write_str(PMU_SHARED_PARAM, "Y"))
		TH_LOG("could not write pmu_shared=Y back");
	free(self->cpus);
	if (self->fd >= 0)
		close(self->fd);
}

/* First statement of every test: setup skipped, and the backend. */
#define PMU_BEGIN() do {							\
	AMUPMU_SKIPPED_IN_SETUP(self->fd);					\
	TH_LOG("backend: %s", self->backend);					\
} while (0)

/* The tests of PMU sessions: exclusive mode or shared mode. */
#define NEED_PMU() do {								\
	if (self->info.pmu_owner == AMUPMU_PMU_OWNER_KERNEL && !self->shared)	\
		SKIP(return, "the kernel's arm_pmu owns the PMU and shared mode "	\
		     "is off (pmu_shared=N)");					\
	if (!self->exclusive && !self->shared)					\
		SKIP(return, "no PMUv3 (pmu_owner %u)", self->info.pmu_owner);	\
	ASSERT_LT(0U, self->nr_counters);					\
} while (0)

/* What only exclusive mode has; @_why: what shared mode does instead. */
#define NEED_EXCLUSIVE(_why) do {						\
	NEED_PMU();								\
	if (self->shared)							\
		SKIP(return, "exclusive mode only: %s", _why);			\
} while (0)

/* Every event counter and the cycle counter of @cpu: N + 1 events. */
static inline void group_all_counters(FIXTURE_DATA(pmu) *self, struct group *g, unsigned int cpu)
{
	group_init(g, cpu);
	group_add(g, PMUV3_EV_CPU_CYCLES, 0);
	group_add_n(g, self->filler, self->nr_counters);
}

/* |a - b| <= b * permille / 1000 */
static inline bool within_permille(__u64 a, __u64 b, unsigned int permille)
{
	__u64 d = a > b ? a - b : b - a;

	return d <= b / 1000 * permille + (b % 1000) * permille / 1000;
}

/* A READ that must succeed, with the invariants of every answer. */
static inline void read_ok(struct __test_metadata *_metadata, int fd, __u32 cpu,
			   unsigned int nr, struct snap *s)
{
	int ret = snap_read(fd, cpu, nr, s);

	ASSERT_EQ(0, ret) {
		TH_LOG("READ cpu %u, %u values: %s", cpu, nr, amupmu_errstr(ret));
	}
	EXPECT_EQ(nr, s->rd.nr_values);
	EXPECT_EQ(0U, s->rd.state & ~(__u32)(AMUPMU_READ_ENABLED | AMUPMU_READ_OFFLINE |
					     AMUPMU_READ_SHARED | AMUPMU_READ_EVICTED)) {
		TH_LOG("unknown state bits 0x%x", s->rd.state);
	}
	EXPECT_EQ(RD_STATE(0), s->rd.state & AMUPMU_READ_SHARED) {
		TH_LOG("cpu %u: state 0x%x, AMUPMU_READ_SHARED %s in %s mode", cpu, s->rd.state,
		       shared_mode ? "missing" : "set", shared_mode ? "shared" : "exclusive");
	}
	EXPECT_EQ(0U, s->rd.state & AMUPMU_READ_EVICTED) {
		TH_LOG("cpu %u: perf core evicted a pinned counter (state 0x%x)", cpu,
		       s->rd.state);
	}
	EXPECT_NE(AMUPMU_SENTINEL64, s->rd.time_enabled);
	EXPECT_GE(s->rd.time_enabled + TIME_SLACK_NS, s->rd.time_running) {
		TH_LOG("time_running %llu > time_enabled %llu",
		       (unsigned long long)s->rd.time_running,
		       (unsigned long long)s->rd.time_enabled);
	}
	EXPECT_EQ(0U, s->rd.flags);
	EXPECT_EQ(0U, s->rd.nr_cpus);
	EXPECT_NE(AMUPMU_SENTINEL64, s->rd.samples);
	EXPECT_NE(AMUPMU_SENTINEL64, s->rd.lost);
	EXPECT_NE(AMUPMU_SENTINEL64, s->rd.skid);
}

/* A refused CONFIG left the session without a group. */
static inline void expect_unconfigured(struct __test_metadata *_metadata, int fd, const char *what)
{
	int ret = amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_RESET);

	EXPECT_EQ(-ENODEV, ret) {
		TH_LOG("%s: CTL RESET afterwards: expected ENODEV (no group), got %s",
		       what, amupmu_errstr(ret));
	}
	if (!ret)
		amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_RELEASE);
}

/*
 * CONFIG's counters_free: the fewest free counters on a CPU of the set
 * before it (@exclusive) in exclusive mode, 0 in shared mode (perf core
 * decides).
 */
static inline __u32 want_free(const FIXTURE_DATA(pmu) *self, __u32 exclusive)
{
	return self->shared ? 0 : exclusive;
}

/*
 * Nothing is allocated on CPU 0: another session gets all N + 1 counters
 * (in shared mode: N + 1 pinned perf events fit, so no event of an earlier
 * session was left behind); INFO says every counter is free in exclusive
 * mode, none in shared mode (perf core decides).
 */
static inline void expect_all_free(struct __test_metadata *_metadata, FIXTURE_DATA(pmu) *self,
				   const char *what)
{
	__u32 free0 = 0;
	struct group g;
	int fd = open_dev(), ret;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, amupmu_counters_free(fd, &free0, 1));
	EXPECT_EQ(want_free(self, amupmu_all_counters_mask(self->nr_counters)), free0) {
		TH_LOG("%s: INFO pmu_counters_free of CPU 0 0x%x", what, free0);
	}
	group_all_counters(self, &g, 0);
	ret = group_config(fd, &g);
	EXPECT_EQ(0, ret) {
		TH_LOG("%s: all %u counters of CPU 0 in another session: %s (counters_free %u)",
		       what, self->nr_counters + 1, amupmu_errstr(ret), g.cfg.counters_free);
	}
	EXPECT_EQ(want_free(self, self->nr_counters + 1), g.cfg.counters_free) {
		TH_LOG("%s: counters leaked", what);
	}
	close(fd);
}

/*
 * Issue @cmd with the @len bytes at @arg, expect -@err. @unwritten: the
 * argument must come back unchanged. Returns what the ioctl returned.
 */
static inline int expect_err(struct __test_metadata *_metadata, int fd, unsigned long cmd,
			     void *arg, size_t len, int err, bool unwritten, const char *what)
{
	static unsigned char before[BIG_SZ];
	int ret;

	memcpy(before, arg, len);
	ret = amupmu_ioctl(fd, cmd, arg);
	EXPECT_EQ(-err, ret) {
		TH_LOG("%s: expected %s, got %s", what, strerror(err), amupmu_errstr(ret));
	}
	if (unwritten) {
		EXPECT_EQ(0, memcmp(before, arg, len)) {
			TH_LOG("%s: the refused request wrote its argument", what);
		}
	}
	return ret;
}

/* A refused CONFIG: errno, nothing written (not even on EBUSY), no group left. */
static inline void expect_config_refused(struct __test_metadata *_metadata, int fd, void *arg,
					 size_t len, int err, const char *what)
{
	int ret = expect_err(_metadata, fd, AMUPMU_PMU_CONFIG, arg, len, err, true, what);

	if (!ret)
		amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_RELEASE);
	expect_unconfigured(_metadata, fd, what);
}

/*
 * counters[@i] of a successful CONFIG in @cfg: in exclusive mode the
 * cycle counter when @cycle, else an event counter; AMUPMU_COUNTER_PERF in
 * shared mode (perf core places the events).
 */
static inline void expect_counter(struct __test_metadata *_metadata, const FIXTURE_DATA(pmu) *self,
				  const struct amupmu_pmu_config *cfg, unsigned int i, bool cycle,
				  const char *what)
{
	__u8 c = cfg->counters[i];

	if (self->shared) {
		EXPECT_EQ(AMUPMU_COUNTER_PERF, c) {
			TH_LOG("%s: event %u on counter %u in shared mode, not "
			       "AMUPMU_COUNTER_PERF", what, i, c);
		}
	} else if (cycle) {
		EXPECT_EQ(AMUPMU_PMU_CYCLE_COUNTER, c) {
			TH_LOG("%s: event %u on counter %u, not the cycle counter", what, i, c);
		}
	} else {
		EXPECT_GT(self->nr_counters, c) {
			TH_LOG("%s: event %u on counter %u, not an event counter (< %u)", what,
			       i, c, self->nr_counters);
		}
	}
}

/*
 * The counters[] of a successful CONFIG: valid and pairwise distinct; all
 * AMUPMU_COUNTER_PERF in shared mode.
 */
static inline void expect_counters_valid(struct __test_metadata *_metadata, FIXTURE_DATA(pmu) *self,
					 const struct group *g)
{
	unsigned int i, j;

	for (i = 0; i < g->nr; i++) {
		__u8 c = g->cfg.counters[i];

		if (self->shared) {
			EXPECT_EQ(AMUPMU_COUNTER_PERF, c) {
				TH_LOG("event %u (0x%x): counter %u in shared mode", i,
				       g->ev[i].event, c);
			}
			continue;
		}
		EXPECT_TRUE(c == AMUPMU_PMU_CYCLE_COUNTER || c < self->nr_counters) {
			TH_LOG("event %u (0x%x): counter %u is neither an event counter "
			       "(< %u) nor the cycle counter", i, g->ev[i].event, c,
			       self->nr_counters);
		}
		for (j = 0; j < i; j++) {
			EXPECT_NE(g->cfg.counters[j], c) {
				TH_LOG("events %u and %u share counter %u", j, i, c);
			}
		}
	}
}

/* A valid one-event CONFIG in @b (CPU_CYCLES on CPU 0), events in @g. */
static inline void cfg_base(union cfg_buf *b, struct group *g)
{
	group_init(g, 0);
	group_add(g, PMUV3_EV_CPU_CYCLES, 0);
	memset(b, 0, sizeof(*b));
	amupmu_pmu_config_init(&b->cfg, g->ev, g->nr, g->cpus.w, g->cpus.len);
}

/* ---------------------------------------------------------------- sampling */

#define SAMPLE_P		100003ULL	/* prime: no beat with the loop */
#define REC_SZ(n)		(sizeof(struct amupmu_sample) + (n) * sizeof(__u64))

/*
 * The sampled loop as a function of its own, so that a sample's PC can be
 * checked against [sample_loop, sample_loop_end): "subs; b.ne" @n times.
 */
void sample_loop(__u64 n);
extern const char sample_loop_end[];
#ifdef __aarch64__
asm(".text\n"
    ".globl sample_loop\n"
    ".type sample_loop, %function\n"
    "sample_loop:\n"
    "1:	subs	x0, x0, #1\n"
    "	b.ne	1b\n"
    "	ret\n"
    ".globl sample_loop_end\n"
    "sample_loop_end:\n"
    ".size sample_loop, . - sample_loop\n");
#else
void sample_loop(__u64 n) { (void)n; }
const char sample_loop_end[1];
#endif

/* CONFIG of @g with a ring of @pages data pages. */
static inline int group_config_ring(int fd, struct group *g, __u32 pages)
{
	amupmu_pmu_config_init(&g->cfg, g->ev, g->nr, g->cpus.w, g->cpus.len);
	g->cfg.ring_pages = pages;
	return amupmu_ioctl(fd, AMUPMU_PMU_CONFIG, &g->cfg);
}

/* The ring of a session, mapped. */
struct ring {
	struct amupmu_ring_header *hdr;
	const unsigned char *data;
	size_t len;
};

static inline int ring_map(int fd, __u32 pages, struct ring *r)
{
	size_t page = sysconf(_SC_PAGESIZE);

	r->len = (pages + 1) * page;
	r->data = NULL;
	r->hdr = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->hdr == MAP_FAILED)
		return -errno;
	r->data = (const unsigned char *)r->hdr + r->hdr->data_offset;
	return 0;
}

/* Copy the record at @pos out of the ring (it may wrap around the end). */
static inline void ring_copy(const struct ring *r, __u64 pos, void *dst, size_t len)
{
	__u64 size = r->hdr->data_size, off = pos & (size - 1);
	size_t first = len < size - off ? len : size - off;

	memcpy(dst, r->data + off, first);
	memcpy((unsigned char *)dst + first, r->data, len - first);
}

struct sample_rec {
	struct amupmu_sample s;
	__u64 values[MAX_GROUP];
};

/* ---------------------------------------------------------------- READ_ALL */

/* A READ_ALL answer: the request and its entries. */
struct read_all {
	struct amupmu_pmu_read rd;
	unsigned char *buf;
	size_t len;
};

/* READ_ALL into @ra of @nr_cpus entries of @nr_values values (buffer filled first). */
static inline int read_all(int fd, struct read_all *ra, __u32 nr_cpus, __u32 nr_values)
{
	free(ra->buf);
	ra->len = (nr_cpus ? nr_cpus : 1) * amupmu_read_all_stride(nr_values);
	ra->buf = malloc(ra->len);
	if (!ra->buf)
		return -ENOMEM;
	memset(ra->buf, AMUPMU_FILL_BYTE, ra->len);
	amupmu_pmu_read_all_init(&ra->rd, ra->buf, nr_cpus, nr_values);
	return amupmu_ioctl(fd, AMUPMU_PMU_READ, &ra->rd);
}

/* The CPUs of @s in ascending order, into @cpus; returns how many. */
static inline unsigned int cpuset_list(const struct cpuset *s, unsigned int *cpus, unsigned int max)
{
	unsigned int c, n = 0;

	for (c = 0; c < s->len * 8 && n < max; c++)
		if (s->w[c / 64] & (1ULL << (c % 64)))
			cpus[n++] = c;
	return n;
}

#endif /* AMUPMU_PMU_FIXTURE_H */
