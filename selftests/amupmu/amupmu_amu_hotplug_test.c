// SPDX-License-Identifier: GPL-2.0
/*
 * The Activity Monitors across CPU power-down and hotplug, with readers
 * (mock builds; skipped elsewhere, amupmu_amu_fixture.h): a power-down
 * (the mock's cpu_pm: the model's counters restart from 0) keeps the
 * values monotonic and counts one restart, an aborted one none; an
 * offline CPU reads AMUPMU_AMU_OFFLINE, time 0 and values that do not
 * move, and counts on once back; 4 threads read every online CPU while
 * the CPUs power-cycle, then while cpu1 goes offline and back every
 * 5 ms: every read succeeds and nothing goes backwards.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>

#include "amupmu_amu_fixture.h"

/* ---------------------------------------------------------------- fixture */

#define NEED_CPU1_HOTPLUG() do {						\
	if (self->nr_cpu_ids < 2 ||						\
	    !amupmu_path_exists(AMUPMU_CPU_SYSFS "/cpu1/online"))		\
		SKIP(return, "no hot-pluggable cpu1");				\
	if (amupmu_cpu_online(1) != 1)						\
		SKIP(return, "cpu1 is offline already");			\
} while (0)

/* ---------------------------------------------------------------- power-down, hotplug */

/* One cpu_pm power-down cycle of @cpu. */
static int power_down(unsigned int cpu, bool aborted)
{
	char s[32];

	snprintf(s, sizeof(s), "%u%s\n", cpu, aborted ? " fail" : "");
	return amupmu_write_str(CPU_PM_FILE, s);
}

/*
 * A power-down (the mock's cpu_pm: the model's counters restart from 0):
 * the values stay monotonic, restarts grows by one per power-down of that
 * CPU only, and an aborted idle entry ("<cpu> fail") is not a restart.
 */
TEST_F(amu, power_loss_monotonic)
{
	struct amupmu_amu_cpu a[MAX_CPUS], b[MAX_CPUS];
	struct amupmu_amu_read rd;
	unsigned int cnt, k, i, cpu;
	__u64 word, t, pm_ns, in_pm, lost;
	int ret;

	AMU_BEGIN();
	NEED_MODEL();
	if (!amupmu_path_exists(CPU_PM_FILE))
		SKIP(return, "no %s", CPU_PM_FILE);
	word = online_word(self->nr_cpu_ids, &cnt);
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		if ((word >> cpu) & 1)
			MODEL_SET(cpu, "active=1000");
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (!((word >> cpu) & 1))
			continue;
		ASSERT_EQ(0, read_word(self->fd, word, a, &rd));
		pm_ns = 0;
		for (i = 0; i < 3; i++) {
			sleep_ns(5 * NSEC_PER_MSEC);
			t = mono_raw_ns();
			ret = power_down(cpu, false);
			pm_ns += mono_raw_ns() - t;
			ASSERT_EQ(0, ret) {
				TH_LOG("cpu_pm of cpu%u: %s", cpu, amupmu_errstr(ret));
			}
		}
		t = mono_raw_ns();
		ret = power_down(cpu, true);
		pm_ns += mono_raw_ns() - t;
		ASSERT_EQ(0, ret);
		sleep_ns(5 * NSEC_PER_MSEC);
		ASSERT_EQ(0, read_word(self->fd, word, b, &rd));
		for (k = 0; k < cnt; k++) {
			unsigned int c = a[k].cpu;

			EXPECT_TRUE(monotonic(&a[k], &b[k])) {
				TH_LOG("cpu%u after 3 power-downs of cpu%u: CNT_CYCLES %llu -> %llu, "
				       "CPU_CYCLES %llu -> %llu", c, cpu,
				       (unsigned long long)a[k].group0[1],
				       (unsigned long long)b[k].group0[1],
				       (unsigned long long)a[k].group0[0],
				       (unsigned long long)b[k].group0[0]);
			}
			EXPECT_LT(a[k].group0[AMU_G0_CNT_CYCLES], b[k].group0[AMU_G0_CNT_CYCLES]);
			EXPECT_EQ(a[k].restarts + (c == cpu ? 3 : 0), b[k].restarts) {
				TH_LOG("cpu%u restarts %u -> %u after 3 power-downs of cpu%u",
				       c, a[k].restarts, b[k].restarts, cpu);
			}
		}
		/*
		 * The counts before each power-down are kept: ΔCNT_CYCLES is the
		 * elapsed time (active=1000) less what the CPU counted between
		 * the CPU_PM_ENTER save and the power loss, which is lost as on
		 * hardware (the rest of the notifiers; ~0.2 ms each under TCG).
		 * Not keeping the old values would lose everything before the
		 * power-down (the values would also go backwards). At least 80 %
		 * kept; without -icount the host may preempt the vCPU between
		 * the save and the power loss for as long as it likes (and the
		 * loss is that long): there the loss is at most the time the
		 * cpu_pm writes took, the save and the loss being inside them,
		 * plus the two reads' pairing of counts and time (100 us each,
		 * AMUPMU_AMU_READ).
		 */
		in_pm = (__u64)((double)pm_ns * rd.timer_freq / NSEC_PER_SEC) +
			rd.timer_freq / 5000 + 16;
		for (k = 0; k < cnt; k++) {
			struct rates r = delta(&a[k], &b[k]);

			if (a[k].cpu != cpu)
				continue;
			lost = r.time > r.cnt ? r.time - r.cnt : 0;
			EXPECT_TRUE(r.cnt <= r.time + 16 &&
				    (r.cnt >= r.time * 0.8 || (!self->icount && lost <= in_pm))) {
				TH_LOG("cpu%u: ΔCNT_CYCLES %llu over %llu ticks across power-downs "
				       "(%llu ticks: the cpu_pm writes, the reads' pairing)", cpu,
				       (unsigned long long)r.cnt, (unsigned long long)r.time,
				       (unsigned long long)in_pm);
			}
			TH_LOG("cpu%u: restarts %u -> %u; ΔCNT_CYCLES %llu of %llu ticks (%.2f %% lost "
			       "around 3 power-downs)", cpu, a[k].restarts, b[k].restarts,
			       (unsigned long long)r.cnt, (unsigned long long)r.time,
			       100.0 * (1.0 - ratio(r.cnt, r.time)));
		}
	}
}

/*
 * CPU hotplug: an offline CPU reports AMUPMU_AMU_OFFLINE, time 0 and the
 * values it had; they do not move while it is down; its knobs cannot be
 * set (ENODEV); back online it counts on, monotonically.
 */
TEST_F(amu, hotplug_offline_resumes)
{
	struct amupmu_amu_cpu a, b, c, d, pair[2];
	struct amupmu_amu_read rd;
	char before[16384], after[16384];
	int ret;

	AMU_BEGIN();
	NEED_MODEL();
	NEED_CPU1_HOTPLUG();
	MODEL_SET(1, "active=1000");
	sleep_ns(10 * NSEC_PER_MSEC);
	READ_CPU(1, &a);
	EXPECT_EQ(0U, a.state);
	ret = amupmu_set_online(1, false);
	ASSERT_EQ(0, ret) {
		TH_LOG("offlining cpu1: %s", amupmu_errstr(ret));
	}
	self->cpu1_offlined = true;
	READ_CPU(1, &b);
	EXPECT_EQ((__u32)AMUPMU_AMU_OFFLINE, b.state);
	EXPECT_EQ(0ULL, b.time);
	EXPECT_EQ(1U, b.cpu);
	EXPECT_TRUE(monotonic(&a, &b));
	EXPECT_EQ(a.nr_group0, b.nr_group0);
	EXPECT_EQ(a.nr_group1, b.nr_group1);
	sleep_ns(40 * NSEC_PER_MSEC);
	READ_CPU(1, &c);
	EXPECT_EQ((__u32)AMUPMU_AMU_OFFLINE, c.state);
	EXPECT_EQ(0, memcmp(b.group0, c.group0, sizeof(b.group0))) {
		TH_LOG("offline cpu1's group 0 moved: CNT_CYCLES %llu -> %llu",
		       (unsigned long long)b.group0[1], (unsigned long long)c.group0[1]);
	}
	EXPECT_EQ(0, memcmp(b.group1, c.group1, sizeof(b.group1)));
	/* with an online CPU in the same set: both entries, in order */
	ASSERT_EQ(0, read_word(self->fd, 3, pair, &rd));
	ASSERT_EQ(2U, rd.nr_cpus);
	EXPECT_EQ(0U, pair[0].cpu);
	EXPECT_EQ(0U, pair[0].state);
	EXPECT_EQ(1U, pair[1].cpu);
	EXPECT_EQ((__u32)AMUPMU_AMU_OFFLINE, pair[1].state);
	/* the knobs of an offline CPU: ENODEV, nothing changes */
	ASSERT_LT(0, amupmu_read_file(MODEL_FILE, before, sizeof(before)));
	ret = model_set(1, "ipc=1000");
	EXPECT_EQ(-ENODEV, ret) {
		TH_LOG("knob of offline cpu1: %s", amupmu_errstr(ret));
	}
	ASSERT_LT(0, amupmu_read_file(MODEL_FILE, after, sizeof(after)));
	EXPECT_STREQ(before, after);

	ret = amupmu_set_online(1, true);
	ASSERT_EQ(0, ret) {
		TH_LOG("onlining cpu1: %s", amupmu_errstr(ret));
	}
	self->cpu1_offlined = false;
	MODEL_SET(1, "active=1000");
	sleep_ns(20 * NSEC_PER_MSEC);
	READ_CPU(1, &d);
	EXPECT_EQ(0U, d.state);
	EXPECT_LT(0ULL, d.time);
	EXPECT_TRUE(monotonic(&c, &d)) {
		TH_LOG("cpu1 back online: CNT_CYCLES %llu -> %llu, CPU_CYCLES %llu -> %llu",
		       (unsigned long long)c.group0[1], (unsigned long long)d.group0[1],
		       (unsigned long long)c.group0[0], (unsigned long long)d.group0[0]);
	}
	EXPECT_LT(c.group0[AMU_G0_CNT_CYCLES], d.group0[AMU_G0_CNT_CYCLES]);
	EXPECT_LT(c.group0[AMU_G0_CPU_CYCLES], d.group0[AMU_G0_CPU_CYCLES]);
	TH_LOG("cpu1: CNT_CYCLES %llu online, %llu offline, %llu back; restarts %u -> %u",
	       (unsigned long long)a.group0[1], (unsigned long long)c.group0[1],
	       (unsigned long long)d.group0[1], a.restarts, d.restarts);
}

/* ---------------------------------------------------------------- threads */

#define READERS		4
#define READS		300

struct reader {
	int fd;
	unsigned int id;
	__u64 word;
	unsigned int cnt;
	unsigned int reads, errors, backwards;
	int first_err;
	char first_bad[160];
};

static volatile bool stop_pm;

static void *reader_fn(void *arg)
{
	struct reader *r = arg;
	struct amupmu_amu_cpu prev[MAX_CPUS], cur[MAX_CPUS];
	struct amupmu_amu_read rd;
	unsigned int i, k;
	bool have = false;

	amupmu_pin_cpu(r->id % r->cnt);
	for (i = 0; i < READS; i++) {
		int ret = read_word(r->fd, r->word, cur, &rd);

		if (ret || rd.nr_cpus != r->cnt) {
			if (!r->errors++)
				r->first_err = ret;
			continue;
		}
		r->reads++;
		for (k = 0; have && k < r->cnt; k++) {
			if (monotonic(&prev[k], &cur[k]) && cur[k].time >= prev[k].time &&
			    cur[k].restarts >= prev[k].restarts)
				continue;
			if (!r->backwards++)
				snprintf(r->first_bad, sizeof(r->first_bad),
					 "read %u cpu%u: CNT_CYCLES %llu -> %llu, time %llu -> %llu",
					 i, cur[k].cpu, (unsigned long long)prev[k].group0[1],
					 (unsigned long long)cur[k].group0[1],
					 (unsigned long long)prev[k].time,
					 (unsigned long long)cur[k].time);
		}
		memcpy(prev, cur, sizeof(cur));
		have = true;
	}
	return NULL;
}

static void *power_fn(void *arg)
{
	__u64 word = *(__u64 *)arg;
	unsigned int cpu;

	while (!stop_pm) {
		for (cpu = 0; cpu < MAX_CPUS; cpu++)
			if ((word >> cpu) & 1)
				power_down(cpu, false);
		sleep_ns(2 * NSEC_PER_MSEC);
	}
	return NULL;
}

/*
 * READERS threads, each pinned to a CPU, read every online CPU READS
 * times while another thread power-cycles the CPUs (cpu_pm): each reader
 * sees every counter, the time and restarts monotonic.
 */
TEST_F(amu, concurrent_readers)
{
	struct reader r[READERS];
	pthread_t th[READERS], pm;
	unsigned int i, cnt, total = 0;
	bool with_pm = amupmu_path_exists(CPU_PM_FILE);
	__u64 word;

	AMU_BEGIN();
	NEED_MODEL();
	word = online_word(self->nr_cpu_ids, &cnt);
	ASSERT_LT(0U, cnt);
	stop_pm = false;
	if (with_pm)
		ASSERT_EQ(0, pthread_create(&pm, NULL, power_fn, &word));
	for (i = 0; i < READERS; i++) {
		r[i] = (struct reader){ .fd = self->fd, .id = i, .word = word, .cnt = cnt };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, reader_fn, &r[i]));
	}
	for (i = 0; i < READERS; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	stop_pm = true;
	if (with_pm)
		ASSERT_EQ(0, pthread_join(pm, NULL));
	for (i = 0; i < READERS; i++) {
		total += r[i].reads;
		EXPECT_EQ(0U, r[i].errors) {
			TH_LOG("reader %u: %u failed reads (first: %s)", i, r[i].errors,
			       amupmu_errstr(r[i].first_err));
		}
		EXPECT_EQ(0U, r[i].backwards) {
			TH_LOG("reader %u: %u reads went backwards, first: %s", i,
			       r[i].backwards, r[i].first_bad);
		}
	}
	TH_LOG("%u readers, %u reads of %u CPUs, %s", READERS, total, cnt,
	       with_pm ? "CPUs power-cycled meanwhile" : "no cpu_pm file");
}

/*
 * Hotplug while reading: READERS threads read the CPUs online at the start
 * (cpu1 among them) without pause while another thread takes cpu1 offline
 * and back HP_TOGGLES times, ~5 ms apart. Every read succeeds; each
 * entry's state is 0 (read on the CPU: time set) or AMUPMU_AMU_OFFLINE
 * (time 0); per CPU, every counter and restarts never go backwards, and
 * the time of the online reads neither; cpu1 was seen both ways.
 */
#define HP_TOGGLES	20		/* 10 offline/online cycles */
#define HP_MAX_READS	2000000		/* per reader: a bound if the toggler hangs */
#define HP_MAX_NS	(60 * NSEC_PER_SEC)

struct hp_reader {
	int fd;
	unsigned int id;
	__u64 word;
	unsigned int cnt;
	unsigned int reads, offline, online1, errors, bad_state, backwards;
	int first_err;
	char first_bad[200];
};

static volatile bool stop_hp;
/* reads of all readers that saw cpu1 offline [0], online [1] */
static unsigned int hp_seen[2];

/*
 * After a toggle of cpu1: 5 ms, and on until a reader has seen the new
 * state (or @end). Without -icount a loaded host can keep the readers'
 * vCPU off its CPU for all of the 5 ms, and the test would prove nothing.
 */
static void hp_wait_seen(bool online, __u64 end)
{
	unsigned int base = __atomic_load_n(&hp_seen[online], __ATOMIC_RELAXED);

	sleep_ns(5 * NSEC_PER_MSEC);
	while (__atomic_load_n(&hp_seen[online], __ATOMIC_RELAXED) == base && mono_raw_ns() < end)
		sleep_ns(NSEC_PER_MSEC);
}

static void hp_bad(struct hp_reader *r, unsigned int *what, const char *fmt, ...)
{
	va_list ap;

	if (!r->bad_state && !r->backwards && !r->errors) {
		va_start(ap, fmt);
		vsnprintf(r->first_bad, sizeof(r->first_bad), fmt, ap);
		va_end(ap);
	}
	(*what)++;
}

static void *hp_reader_fn(void *arg)
{
	struct hp_reader *r = arg;
	struct amupmu_amu_cpu prev[MAX_CPUS], cur[MAX_CPUS];
	__u64 last_time[MAX_CPUS] = { 0 };
	struct amupmu_amu_read rd;
	unsigned int i, k;
	bool have = false;

	amupmu_pin_cpu(0);	/* cpu0 stays online: the readers never migrate */
	for (i = 0; !stop_hp && i < HP_MAX_READS; i++) {
		int ret = read_word(r->fd, r->word, cur, &rd);

		if (ret || rd.nr_cpus != r->cnt) {
			if (!r->errors++)
				r->first_err = ret ? ret : -EPROTO;
			continue;
		}
		r->reads++;
		for (k = 0; k < r->cnt; k++) {
			const struct amupmu_amu_cpu *c = &cur[k], *p = &prev[k];

			if (c->state == AMUPMU_AMU_OFFLINE) {
				r->offline++;
				__atomic_add_fetch(&hp_seen[0], 1, __ATOMIC_RELAXED);
				if (c->time)
					hp_bad(r, &r->bad_state, "read %u cpu%u: offline, time %llu",
					       i, c->cpu, (unsigned long long)c->time);
			} else if (c->state) {
				hp_bad(r, &r->bad_state, "read %u cpu%u: state 0x%x", i, c->cpu,
				       c->state);
			} else if (!c->time || c->time < last_time[k]) {
				hp_bad(r, &r->backwards, "read %u cpu%u: time %llu after %llu", i,
				       c->cpu, (unsigned long long)c->time,
				       (unsigned long long)last_time[k]);
			} else {
				last_time[k] = c->time;
				r->online1 += c->cpu == 1;
				if (c->cpu == 1)
					__atomic_add_fetch(&hp_seen[1], 1, __ATOMIC_RELAXED);
			}
			if (have && (!monotonic(p, c) || c->restarts < p->restarts))
				hp_bad(r, &r->backwards,
				       "read %u cpu%u (state 0x%x after 0x%x): CNT_CYCLES %llu -> %llu, "
				       "CPU_CYCLES %llu -> %llu, restarts %u -> %u", i, c->cpu,
				       c->state, p->state, (unsigned long long)p->group0[1],
				       (unsigned long long)c->group0[1],
				       (unsigned long long)p->group0[0],
				       (unsigned long long)c->group0[0], p->restarts, c->restarts);
		}
		memcpy(prev, cur, sizeof(cur));
		have = true;
	}
	return NULL;
}

struct hp_toggler {
	unsigned int toggles, failures;
	int first_err;
};

static void *hp_toggle_fn(void *arg)
{
	struct hp_toggler *t = arg;
	__u64 end = mono_raw_ns() + HP_MAX_NS;

	while (t->toggles < HP_TOGGLES && mono_raw_ns() < end) {
		bool online = t->toggles & 1;	/* even: offline it, odd: online it */
		int ret = amupmu_set_online(1, online);

		if (ret) {
			if (!t->failures++)
				t->first_err = ret;
			if (t->failures > 20)
				break;
			sleep_ns(5 * NSEC_PER_MSEC);
		} else {
			t->toggles++;
			hp_wait_seen(online, end);
		}
	}
	/* back online whatever happened, then the readers stop */
	if (amupmu_cpu_online(1) != 1 && amupmu_set_online(1, true) && !t->failures++)
		t->first_err = -EIO;
	hp_wait_seen(true, end + HP_MAX_NS);	/* some reads of cpu1 back online */
	stop_hp = true;
	return NULL;
}

TEST_F_TIMEOUT(amu, readers_during_hotplug, 180)
{
	struct hp_reader r[READERS];
	struct hp_toggler tog = { 0 };
	pthread_t th[READERS], hp;
	unsigned int i, cnt, reads = 0, offline = 0, online1 = 0, bad = 0, backwards = 0;
	unsigned int errors = 0;
	__u64 word;

	AMU_BEGIN();
	NEED_MODEL();
	NEED_CPU1_HOTPLUG();
	word = online_word(self->nr_cpu_ids, &cnt);
	ASSERT_TRUE((word & 3) == 3);
	self->cpu1_offlined = true;	/* the teardown puts it back if need be */
	stop_hp = false;
	hp_seen[0] = hp_seen[1] = 0;
	for (i = 0; i < READERS; i++) {
		r[i] = (struct hp_reader){ .fd = self->fd, .id = i, .word = word, .cnt = cnt };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, hp_reader_fn, &r[i]));
	}
	ASSERT_EQ(0, pthread_create(&hp, NULL, hp_toggle_fn, &tog));
	ASSERT_EQ(0, pthread_join(hp, NULL));
	stop_hp = true;
	for (i = 0; i < READERS; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	unpin();
	EXPECT_EQ(1, amupmu_cpu_online(1));
	if (amupmu_cpu_online(1) == 1)
		self->cpu1_offlined = false;
	EXPECT_EQ(0U, tog.failures) {
		TH_LOG("%u failed online/offline writes (first: %s)", tog.failures,
		       amupmu_errstr(tog.first_err));
	}
	EXPECT_EQ((unsigned int)HP_TOGGLES, tog.toggles);
	for (i = 0; i < READERS; i++) {
		reads += r[i].reads;
		offline += r[i].offline;
		online1 += r[i].online1;
		bad += r[i].bad_state;
		backwards += r[i].backwards;
		errors += r[i].errors;
		EXPECT_EQ(0U, r[i].errors) {
			TH_LOG("reader %u: %u failed reads (first: %s)", i, r[i].errors,
			       amupmu_errstr(r[i].first_err));
		}
		EXPECT_EQ(0U, r[i].bad_state + r[i].backwards) {
			TH_LOG("reader %u: %u bad states, %u backwards; first: %s", i,
			       r[i].bad_state, r[i].backwards, r[i].first_bad);
		}
	}
	/* the reads must have seen cpu1 both ways, or the test proved nothing */
	EXPECT_LT(0U, offline);
	EXPECT_LT(0U, online1);
	printf("# AMUPMU-FIGURE amu-hotplug-read readers=%u reads=%u cpus=%u toggles=%u "
	       "offline_entries=%u cpu1_online_entries=%u errors=%u bad_state=%u backwards=%u\n",
	       READERS, reads, cnt, tog.toggles, offline, online1, errors, bad, backwards);
	fflush(stdout);
}

TEST_HARNESS_MAIN
