// SPDX-License-Identifier: GPL-2.0
/*
 * pmu_sample_bench: guest ns per overflow interrupt handled, amupmu's
 * sampling (amupmu devicetree board) against perf's (stock board), the
 * same sampling in both: CPU_CYCLES in user space only (perf's
 * exclude_kernel + exclude_hv, amupmu's AMUPMU_EV_EXCL_KERNEL +
 * AMUPMU_EV_EXCL_HV: what ":u" sets in both tools) on CPU 0, one period,
 * each sample carrying PC, TID, time, CPU and the counter value.
 *
 * A loop of a known number of instructions runs R times with sampling and
 * R times without, interleaved; the cost of one interrupt is
 *   (median sampled time - median plain time) / samples per run
 * and is printed as
 *   BENCH pmu_sample.<mode>_ns_per_irq <ns> (period P, samples S, plain T0 ns, sampled T1 ns)
 * Under -icount shift=0 guest time is the instruction count, so the figure
 * is the instructions the whole interrupt path costs, and two boots compare.
 *
 *   pmu_sample_bench amupmu|shared|perf [PERIOD [ITERATIONS]]
 *
 * amupmu: exclusive mode (amupmu devicetree); shared: the same amupmu
 * sampling in shared mode (stock devicetree, ABI 2.3: a pinned in-kernel
 * perf counter whose overflow callback writes amupmu's record), printed as
 * pmu_sample.shared_ns_per_irq. Each checks the mode before it measures.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/amupmu.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench_util.h"

#define RUNS		11
#define RING_PAGES	64

/* "subs; b.ne" @n times: 2n instructions at EL0. */
static void loop(uint64_t n)
{
#ifdef __aarch64__
	asm volatile("1:	subs	%0, %0, #1\n"
		     "	b.ne	1b\n"
		     : "+r" (n) : : "cc", "memory");
#else
	while (n--)
		asm volatile("" : : : "memory");
#endif
}

struct sampler {
	int fd;
	void *ring;
	size_t ring_len;
	void (*enable)(struct sampler *s, int on);
	uint64_t (*samples)(struct sampler *s);	/* taken since the last reset */
	void (*reset)(struct sampler *s);
};

/* ---------------------------------------------------------------- amupmu */

static void amupmu_ctl(struct sampler *s, uint32_t op)
{
	struct amupmu_pmu_ctl ctl = { .size = sizeof(ctl), .op = op };

	if (ioctl(s->fd, AMUPMU_PMU_CTL, &ctl))
		die("AMUPMU_PMU_CTL");
}

static void amupmu_enable(struct sampler *s, int on)
{
	amupmu_ctl(s, on ? AMUPMU_PMU_CTL_ENABLE : AMUPMU_PMU_CTL_DISABLE);
}

static uint64_t amupmu_samples(struct sampler *s)
{
	struct amupmu_pmu_value v;
	struct amupmu_pmu_read rd = {
		.size = sizeof(rd), .cpu = 0, .nr_values = 1,
		.values_uptr = (uintptr_t)&v,
	};

	if (ioctl(s->fd, AMUPMU_PMU_READ, &rd))
		die("AMUPMU_PMU_READ");
	/* as perf counts: records written or lost; skid drops are neither */
	return rd.samples + rd.lost;
}

static void amupmu_reset(struct sampler *s)
{
	struct amupmu_ring_header *h = s->ring;

	amupmu_ctl(s, AMUPMU_PMU_CTL_RESET);
	/* consume everything: the ring never fills */
	__atomic_store_n(&h->data_tail, __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

static void amupmu_setup(struct sampler *s, uint64_t period, int shared)
{
	struct amupmu_pmu_event ev = {
		.event = 0x11, .flags = AMUPMU_EV_EXCL_KERNEL | AMUPMU_EV_EXCL_HV,
		.sample_period = period,
	};
	uint64_t cpus = 1;
	struct amupmu_pmu_config cfg = {
		.size = sizeof(cfg), .nr_events = 1, .event_size = sizeof(ev),
		.events_uptr = (uintptr_t)&ev, .cpus_uptr = (uintptr_t)&cpus,
		.cpus_len = sizeof(cpus), .ring_pages = RING_PAGES,
	};

	s->fd = open("/dev/amupmu", O_RDWR | O_CLOEXEC);
	if (s->fd < 0)
		die("open /dev/amupmu");
	require_pmu_mode(s->fd, shared);
	if (ioctl(s->fd, AMUPMU_PMU_CONFIG, &cfg))
		die("AMUPMU_PMU_CONFIG");
	s->ring_len = (RING_PAGES + 1) * sysconf(_SC_PAGESIZE);
	s->ring = mmap(NULL, s->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->ring == MAP_FAILED)
		die("mmap of the amupmu ring");
	s->enable = amupmu_enable;
	s->samples = amupmu_samples;
	s->reset = amupmu_reset;
}

/* ---------------------------------------------------------------- perf */

static uint64_t perf_seen;	/* PERF_RECORD_SAMPLE records since the reset */

static void perf_enable(struct sampler *s, int on)
{
	if (ioctl(s->fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0))
		die("PERF_EVENT_IOC_ENABLE/DISABLE");
}

/* Count and consume the ring's sample records; a lost record counts too. */
static uint64_t perf_samples(struct sampler *s)
{
	struct perf_event_mmap_page *pg = s->ring;
	const unsigned char *data = (const unsigned char *)s->ring + pg->data_offset;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = pg->data_tail;
	struct perf_event_header h;
	uint64_t lost[3];

	while (tail < head) {
		uint64_t off = tail % pg->data_size;

		memcpy(&h, data + off, sizeof(h));	/* 8-byte aligned: never wraps */
		if (h.type == PERF_RECORD_SAMPLE) {
			perf_seen++;
		} else if (h.type == PERF_RECORD_LOST && off + sizeof(lost) <= pg->data_size) {
			memcpy(lost, data + off, sizeof(lost));
			perf_seen += lost[2];
		} else if (h.type == PERF_RECORD_THROTTLE) {
			fprintf(stderr, "pmu_sample_bench: perf throttled the event\n");
		}
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return perf_seen;
}

static void perf_reset(struct sampler *s)
{
	perf_samples(s);
	perf_seen = 0;
	if (ioctl(s->fd, PERF_EVENT_IOC_RESET, 0))
		die("PERF_EVENT_IOC_RESET");
}

static void perf_setup(struct sampler *s, uint64_t period)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_RAW,
		.config = 0x11,
		.sample_period = period,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_READ,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	/* system-wide on CPU 0, as amupmu counts */
	s->fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0);
	if (s->fd < 0)
		die("perf_event_open");
	s->ring_len = (RING_PAGES + 1) * sysconf(_SC_PAGESIZE);
	s->ring = mmap(NULL, s->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->ring == MAP_FAILED)
		die("mmap of the perf ring");
	s->enable = perf_enable;
	s->samples = perf_samples;
	s->reset = perf_reset;
}

/* ---------------------------------------------------------------- main */

static uint64_t timed_loop(uint64_t iters)
{
	uint64_t t0 = now_ns();

	loop(iters);
	return now_ns() - t0;
}

int main(int argc, char **argv)
{
	int perf = argc > 1 && !strcmp(argv[1], "perf");
	int shared = argc > 1 && !strcmp(argv[1], "shared");
	uint64_t period = argc > 2 ? strtoull(argv[2], NULL, 0) : 100003;
	uint64_t iters = argc > 3 ? strtoull(argv[3], NULL, 0) : 10000000;
	uint64_t plain[RUNS], sampled[RUNS], n[RUNS];
	struct sampler s;
	double per_irq;
	int i;

	bench_name = "pmu_sample_bench";
	if (argc < 2 || (!perf && !shared && strcmp(argv[1], "amupmu")) || !period || !iters) {
		fprintf(stderr, "usage: pmu_sample_bench amupmu|shared|perf [PERIOD [ITERATIONS]]\n");
		return 2;
	}
	pin_cpu0();
	if (perf)
		perf_setup(&s, period);
	else
		amupmu_setup(&s, period, shared);
	timed_loop(iters / 10);	/* warm up */
	for (i = 0; i < RUNS; i++) {
		plain[i] = timed_loop(iters);
		s.reset(&s);
		s.enable(&s, 1);
		sampled[i] = timed_loop(iters);
		s.enable(&s, 0);
		n[i] = s.samples(&s);
	}
	qsort(plain, RUNS, sizeof(plain[0]), cmp_u64);
	qsort(sampled, RUNS, sizeof(sampled[0]), cmp_u64);
	qsort(n, RUNS, sizeof(n[0]), cmp_u64);
	if (!n[RUNS / 2]) {
		fprintf(stderr, "pmu_sample_bench: no samples\n");
		return 1;
	}
	per_irq = ((double)sampled[RUNS / 2] - (double)plain[RUNS / 2]) / (double)n[RUNS / 2];
	printf("BENCH pmu_sample.%s_ns_per_irq %.0f (period %llu, samples %llu, plain %llu ns, "
	       "sampled %llu ns, runs %d)\n", argv[1], per_irq, (unsigned long long)period,
	       (unsigned long long)n[RUNS / 2], (unsigned long long)plain[RUNS / 2],
	       (unsigned long long)sampled[RUNS / 2], RUNS);
	return 0;
}
