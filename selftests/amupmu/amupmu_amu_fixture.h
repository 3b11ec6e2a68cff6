/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of the Activity Monitor tests (ABI 2.1: AMUPMU_AMU_READ, the
 * AMU fields of AMUPMU_INFO's entries and the AMU files of
 * /sys/class/misc/amupmu/cpuN/, against include/uapi/linux/amupmu.h; the
 * amupmu_amu_*_test programs, one per area: info, abi, model, hotplug),
 * and what they share: the mock model's knobs and defaults, the reads and
 * their rates. Include after _GNU_SOURCE, once per program.
 *
 * Backends:
 *  - mock builds (CONFIG_AMUPMU_MOCK, AMUPMU_FEAT_MOCK): every CPU has the
 *    model's AMUv1 (4 architected group 0 counters, group 1 events 0x0300
 *    and 0x0301), driven through /sys/kernel/debug/amupmu/amu_model:
 *      "<cpu> key=value..."  freq (Hz), ipc and stall (per mille of
 *      CPU_CYCLES), active (per mille of the time, or "auto": from the
 *      kernel's idle time of that CPU), aux0/aux1 (group 1 counter n per
 *      mille of CPU_CYCLES), enable0/enable1 (AMCNTENSET0/1 masks);
 *    CNT_CYCLES advances at CNTFRQ while the CPU is active, CPU_CYCLES at
 *    freq while active; every counter stops while the CPU is offline and
 *    a disabled one holds its value; the debugfs cpu_pm power-down zeroes
 *    the model's counters (amupmu adds the old values back: "restarts").
 *    The model computes each value when its register is read: its reads
 *    replace the hardware's mrs, so figures of time are the model's.
 *  - production builds on QEMU (no AMU: QEMU hides it, and an AMU
 *    register access is UNDEFINED there): AMUPMU_AMU_READ is refused with
 *    EOPNOTSUPP once the size, flags and reserved fields passed, no cpuN
 *    has an AMU file, and no request makes the kernel log an oops or an
 *    undefined instruction.
 *  - the module parameter amu=0 (amupmu_modparam.sh loads it so and runs
 *    these programs): every CPU with an AMU reports AMUPMU_CPU_AMU_OFF,
 *    none AMUPMU_CPU_AMU, and AMUPMU_AMU_READ is EOPNOTSUPP.
 * Every test logs its backend first (AMU_BEGIN()).
 */
#ifndef AMUPMU_AMU_FIXTURE_H
#define AMUPMU_AMU_FIXTURE_H

#include <math.h>

#include "amupmu_test.h"

#define MODEL_FILE	"/sys/kernel/debug/amupmu/amu_model"
#define CPU_PM_FILE	"/sys/kernel/debug/amupmu/cpu_pm"
#define AMU_PARAM	"/sys/module/amupmu/parameters/amu"
#define MAX_CPUS	64	/* the tests use CPUs below 64: one bitmap word */
#define NSEC_PER_MSEC	1000000ULL
#define ENTRY_SZ	sizeof(struct amupmu_amu_cpu)
#define READ_SZ		sizeof(struct amupmu_amu_read)

/* the model's defaults (the kernel's contract for the mock build) */
#define DEF_FREQ	2000000000ULL
#define DEF_IPC		1500U
#define DEF_STALL	250U
#define DEF_AUX0	500U
#define DEF_AUX1	250U
#define DEF_MODEL	"freq=2000000000 ipc=1500 stall=250 active=auto aux0=500 aux1=250 " \
			"enable0=0xf enable1=0x3 frozen=0"
#define MOCK_CG0NC	4
#define MOCK_CG1NC	2

/* ---------------------------------------------------------------- helpers */

static inline __u64 mono_raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static inline void sleep_ns(__u64 ns)
{
	struct timespec ts = { ns / NSEC_PER_SEC, ns % NSEC_PER_SEC };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* "<cpu> <settings>" to the model. Returns 0 or -errno. */
static inline int model_set(unsigned int cpu, const char *settings)
{
	char s[256];

	snprintf(s, sizeof(s), "%u %s\n", cpu, settings);
	return amupmu_write_str(MODEL_FILE, s);
}

/* The CPUs below MAX_CPUS that are online, as a bitmap word, and their count. */
static inline __u64 online_word(unsigned int nr_cpu_ids, unsigned int *count)
{
	unsigned int cpu;
	__u64 w = 0;

	*count = 0;
	for (cpu = 0; cpu < nr_cpu_ids && cpu < MAX_CPUS; cpu++)
		if (amupmu_cpu_online(cpu) == 1) {
			w |= 1ULL << cpu;
			(*count)++;
		}
	return w;
}

/* Run the calling thread on every CPU again. */
static inline void unpin(void)
{
	cpu_set_t set;
	unsigned int cpu;

	CPU_ZERO(&set);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* a / b, with b 0 as NAN */
static inline double ratio(__u64 a, __u64 b)
{
	return b ? (double)a / (double)b : NAN;
}

/* ---------------------------------------------------------------- fixture */

FIXTURE(amu) {
	int fd;
	unsigned int nr_cpu_ids;
	struct amupmu_info info;
	struct amupmu_cpu_info *cpus;
	bool mock;		/* AMUPMU_FEAT_MOCK */
	bool usable;		/* AMUPMU_FEAT_AMU: some CPU's AMU is in use */
	bool param_off;		/* loaded with amu=0 */
	bool model;		/* the mock's amu_model file is there */
	bool model_touched;	/* put every online CPU back to the defaults */
	bool cpu1_offlined;
	bool icount;		/* INST_RETIRED implemented (QEMU: -icount, guest time) */
	char backend[384];
};

FIXTURE_SETUP(amu)
{
	static struct amupmu_cpumask possible;
	char board[192], param[8] = "";

	self->fd = -1;
	ASSERT_EQ(0, amupmu_possible_cpus(&possible));
	ASSERT_LT(0U, possible.nr);
	self->nr_cpu_ids = possible.nr;
	AMUPMU_OPEN_DEVICE(self->fd);
	self->cpus = calloc(self->nr_cpu_ids, sizeof(*self->cpus));
	ASSERT_NE(NULL, self->cpus);
	ASSERT_EQ(0, amupmu_query(self->fd, &self->info, self->cpus, self->nr_cpu_ids));
	ASSERT_EQ((__u32)AMUPMU_CPU_INFO_SIZE_VER2, self->info.cpu_entry_size);
	self->mock = self->info.features & AMUPMU_FEAT_MOCK;
	self->usable = self->info.features & AMUPMU_FEAT_AMU;
	if (!amupmu_read_line(AMU_PARAM, param, sizeof(param)))
		self->param_off = param[0] == 'N' || param[0] == 'n' || param[0] == '0';
	self->model = amupmu_path_exists(MODEL_FILE);
	self->icount = amupmu_event_implemented(&self->cpus[0], PMUV3_EV_INST_RETIRED);
	amupmu_board_line(board, sizeof(board));
	snprintf(self->backend, sizeof(self->backend),
		 "%s; module parameter amu=%s; board \"%s\"",
		 self->param_off ? "AMU not used (module parameter amu=0)" :
		 self->usable && self->mock ?
		 "mock AMU model (CONFIG_AMUPMU_MOCK: the model computes each register read, no mrs)" :
		 self->usable ? "hardware AMU" :
		 "no AMU (QEMU hides it): production paths, no AMU register touched",
		 param[0] ? param : "?", board[0] ? board : "unknown");
}

FIXTURE_TEARDOWN(amu)
{
	unsigned int cpu;

	if (self->cpu1_offlined && amupmu_set_online(1, true))
		TH_LOG("could not put cpu1 back online");
	if (self->model_touched)
		for (cpu = 0; cpu < self->nr_cpu_ids && cpu < MAX_CPUS; cpu++)
			if (amupmu_cpu_online(cpu) == 1 && model_set(cpu, DEF_MODEL))
				TH_LOG("could not reset the model of cpu%u", cpu);
	free(self->cpus);
	if (self->fd >= 0)
		close(self->fd);
}

/* First statement of every test: setup skipped, and the backend. */
#define AMU_BEGIN() do {							\
	AMUPMU_SKIPPED_IN_SETUP(self->fd);					\
	TH_LOG("backend: %s", self->backend);					\
} while (0)

/* The tests of the mock model: a usable mock AMU and its knobs. */
#define NEED_MODEL() do {							\
	if (!self->usable)							\
		SKIP(return, "no usable AMU (%s)", self->backend);		\
	if (!self->mock || !self->model)					\
		SKIP(return, "needs the mock build's %s", MODEL_FILE);		\
	if (geteuid() != 0)							\
		SKIP(return, "the model's knobs need root");			\
	self->model_touched = true;						\
} while (0)

/* A successful AMU_READ of the CPUs in @word into @e (room for MAX_CPUS). */
static inline int read_word(int fd, __u64 word, struct amupmu_amu_cpu *e,
			    struct amupmu_amu_read *rd)
{
	amupmu_amu_read_init(rd, &word, sizeof(word), e, MAX_CPUS, ENTRY_SZ);
	return amupmu_ioctl(fd, AMUPMU_AMU_READ, rd);
}

#define READ_CPU(cpu, e) do {							\
	struct amupmu_amu_read _rd;						\
	int _ret = amupmu_amu_read_cpu(self->fd, (cpu), (e), &_rd);		\
	ASSERT_EQ(0, _ret) {							\
		TH_LOG("AMU_READ of cpu%u: %s", (cpu), amupmu_errstr(_ret));	\
	}									\
	ASSERT_EQ(1U, _rd.nr_cpus);						\
} while (0)

#define MODEL_SET(cpu, s) do {							\
	int _ret = model_set((cpu), (s));					\
	ASSERT_EQ(0, _ret) {							\
		TH_LOG("%s \"%u %s\": %s", MODEL_FILE, (cpu), (s),		\
		       amupmu_errstr(_ret));					\
	}									\
} while (0)

/* ---------------------------------------------------------------- rates */

/* What moved between two reads of a CPU. */
struct rates {
	__u64 cpu, cnt, inst, stall, aux0, aux1, time;
};

static inline struct rates delta(const struct amupmu_amu_cpu *a, const struct amupmu_amu_cpu *b)
{
	struct rates r = {
		b->group0[AMU_G0_CPU_CYCLES] - a->group0[AMU_G0_CPU_CYCLES],
		b->group0[AMU_G0_CNT_CYCLES] - a->group0[AMU_G0_CNT_CYCLES],
		b->group0[AMU_G0_INST_RETIRED] - a->group0[AMU_G0_INST_RETIRED],
		b->group0[AMU_G0_STALL_BACKEND_MEM] - a->group0[AMU_G0_STALL_BACKEND_MEM],
		b->group1[0] - a->group1[0], b->group1[1] - a->group1[1], b->time - a->time,
	};
	return r;
}

/* Every counter of @b at least that of @a (monotonic). */
static inline bool monotonic(const struct amupmu_amu_cpu *a, const struct amupmu_amu_cpu *b)
{
	unsigned int c;

	for (c = 0; c < AMUPMU_AMU_MAX_COUNTERS; c++)
		if (b->group0[c] < a->group0[c] || b->group1[c] < a->group1[c])
			return false;
	return true;
}

#endif /* AMUPMU_AMU_FIXTURE_H */
