// SPDX-License-Identifier: GPL-2.0
/*
 * Removing amupmu's platform device (the "amupmu,pmuv3" node that hands it
 * the PMU) while sessions use the PMU, through the driver core's
 * /sys/bus/platform/drivers/amupmu/{unbind,bind}:
 *
 *  - unbind and bind with no session: the PMU interrupt goes and comes
 *    back, INFO stops and starts reporting exclusive mode, a session
 *    counts again afterwards;
 *  - unbind with sessions holding groups (counting on every CPU, sampling
 *    with the ring mapped, a reader blocked in read(), another in poll())
 *    does not crash: the blocked read() returns ENXIO and poll() POLLHUP,
 *    every PMU command on those sessions is ENXIO but RELEASE, which frees
 *    the ended group (Documentation/userspace-api/amupmu.rst, "Device
 *    removal"), the mapped ring stays readable until unmapped, INFO still
 *    answers; after bind a new session counts and samples;
 *  - unbind while a thread issues CTL and READ in a loop: its calls
 *    succeed, then fail with ENXIO, nothing else.
 *
 *
 * Shared mode (the stock devicetree: arm_pmu owns the PMU and cannot be
 * unbound) has no device to remove; what goes away under its sessions is
 * shared mode itself, the module parameter pmu_shared:
 *
 *  - pmu_shared=N with sessions holding groups (counting on every CPU,
 *    sampling with the ring mapped): they keep counting and sampling, every
 *    command on them works; a session without a group is refused every
 *    PMU command (ENXIO), and so is a new CONFIG of a session that
 *    RELEASEd its group; pmu_shared=Y: CONFIG works again;
 *  - pmu_shared toggled while a thread configures, uses and releases its
 *    session in a loop: only CONFIG may fail, with ENXIO, nothing else.
 *
 * The board harness fails the run on a kernel WARN/Oops/BUG. Needs root;
 * the unbind tests need the amupmu devicetree (exclusive mode), the
 * pmu_shared tests the stock one with shared mode on; each skips
 * otherwise. Leaves the device bound and pmu_shared on.
 *
 * Backend: the CPU's PMU (QEMU TCG PMUv3) in exclusive or shared mode.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <sys/mman.h>

#include "amupmu_test.h"
#include "amupmu_nl.h"

#define DRV_DIR		"/sys/bus/platform/drivers/amupmu"
#define NSEC_PER_MSEC	1000000ULL
#define RETURN_TIMEOUT_NS (5 * NSEC_PER_SEC)

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * NSEC_PER_MSEC };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Write @s to @path in one write(). Returns 0 or -errno. */
static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Lines of /proc/interrupts that name amupmu. */
static unsigned int amupmu_irq_lines(void)
{
	char line[1024];
	unsigned int n = 0;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " amupmu"))
			n++;
	fclose(f);
	return n;
}

/* CONFIG @nr events of one kind on @cpus; @period > 0 samples into @pages. */
static int config(int fd, __u32 event, __u32 flags, unsigned int nr, __u64 *cpus,
		  __u32 cpus_len, __u64 period, __u32 pages)
{
	struct amupmu_pmu_event ev[4];
	struct amupmu_pmu_config cfg;
	unsigned int i;

	for (i = 0; i < nr && i < 4; i++)
		amupmu_pmu_event_set(&ev[i], event, flags);
	ev[0].sample_period = period;
	amupmu_pmu_config_init(&cfg, ev, nr, cpus, cpus_len);
	cfg.ring_pages = pages;
	return amupmu_ioctl(fd, AMUPMU_PMU_CONFIG, &cfg);
}

FIXTURE(unbind) {
	int fd;
	struct amupmu_info info;
	unsigned int nr_cpu_ids;
	bool exclusive;
	char dev[256];		/* the bound platform device's name */
	bool unbound;		/* teardown binds it again */
	bool shared_off;	/* teardown turns pmu_shared on again */
	long page;
};

FIXTURE_SETUP(unbind)
{
	static struct amupmu_cpumask possible;
	char board[160], path[512];
	struct dirent *de;
	struct stat st;
	DIR *d;

	self->fd = -1;
	self->page = sysconf(_SC_PAGESIZE);
	ASSERT_EQ(0, amupmu_possible_cpus(&possible));
	self->nr_cpu_ids = possible.nr;
	AMUPMU_OPEN_DEVICE(self->fd);
	ASSERT_EQ(0, amupmu_query(self->fd, &self->info, NULL, 0));
	self->exclusive = self->info.pmu_owner == AMUPMU_PMU_OWNER_AMUPMU;
	d = opendir(DRV_DIR);
	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), DRV_DIR "/%s", de->d_name);
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "module") ||
		    lstat(path, &st) || !S_ISLNK(st.st_mode))
			continue;
		snprintf(self->dev, sizeof(self->dev), "%s", de->d_name);
	}
	if (d)
		closedir(d);
	amupmu_board_line(board, sizeof(board));
	TH_LOG("backend: QEMU/CPU PMUv3 in %s, platform device \"%s\"; board \"%s\"",
	       amupmu_pmu_mode_name(&self->info),
	       self->dev[0] ? self->dev : "none", board[0] ? board : "unknown");
}

FIXTURE_TEARDOWN(unbind)
{
	if (self->unbound && write_file(DRV_DIR "/bind", self->dev))
		TH_LOG("could not bind %s again", self->dev);
	if (self->shared_off && amupmu_set_pmu_shared(true, NULL))
		TH_LOG("could not turn %s back on", AMUPMU_PMU_SHARED_PARAM);
	if (self->fd >= 0)
		close(self->fd);
}

#define UNBIND_BEGIN() do {							\
	AMUPMU_SKIPPED_IN_SETUP(self->fd);					\
	if (geteuid() != 0)							\
		SKIP(return, "unbind needs root");				\
	if (!self->exclusive)							\
		SKIP(return, "amupmu does not own the PMU (pmu_owner %u): no "	\
		     "platform device to unbind", self->info.pmu_owner);	\
	ASSERT_NE(0, self->dev[0]) {						\
		TH_LOG("exclusive mode but no device under %s", DRV_DIR);	\
	}									\
	ASSERT_TRUE(amupmu_path_exists(DRV_DIR "/unbind")) {			\
		TH_LOG("%s/unbind missing: the driver suppresses bind/unbind",	\
		       DRV_DIR);						\
	}									\
} while (0)

static int do_unbind(FIXTURE_DATA(unbind) *self)
{
	int ret = write_file(DRV_DIR "/unbind", self->dev);

	if (!ret)
		self->unbound = true;
	return ret;
}

static int do_bind(FIXTURE_DATA(unbind) *self)
{
	int ret = write_file(DRV_DIR "/bind", self->dev);

	if (!ret)
		self->unbound = false;
	return ret;
}

/* After bind: INFO says exclusive, one interrupt line, and a new session counts. */
static void expect_bound_works(struct __test_metadata *_metadata)
{
	struct amupmu_pmu_value v;
	struct amupmu_pmu_read rd;
	struct amupmu_info info;
	__u64 cpu0 = 1;
	int fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC), ret;
	cpu_set_t set;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, amupmu_query(fd, &info, NULL, 0));
	EXPECT_EQ((__u32)AMUPMU_PMU_OWNER_AMUPMU, info.pmu_owner);
	EXPECT_TRUE(!!(info.features & AMUPMU_FEAT_PMU_EXCLUSIVE));
	EXPECT_EQ(1U, amupmu_irq_lines());
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	ret = config(fd, PMUV3_EV_CPU_CYCLES, 0, 1, &cpu0, 8, 0, 0);
	ASSERT_EQ(0, ret) {
		TH_LOG("CONFIG after bind: %s", amupmu_errstr(ret));
	}
	ASSERT_EQ(0, amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_ENABLE));
	amupmu_busy_ns(5 * NSEC_PER_MSEC);
	ASSERT_EQ(0, amupmu_pmu_read(fd, 0, &v, 1, &rd));
	EXPECT_LT(0ULL, v.value) {
		TH_LOG("no cycle counted after bind");
	}
	close(fd);
}

/*
 * The next event on @nl is an ownership change of the PMU to @owner (the
 * CPU group's events: open to every subscriber, issue 15).
 */
static void expect_owner_event(struct __test_metadata *_metadata, struct nl *nl, __u32 owner)
{
	struct nl_msg ev;
	char buf[4096];
	/* 30 s: a work item sends it, which a loaded host can keep waiting */
	int ret = nl_event(nl, &ev, buf, sizeof(buf), 30000);

	ASSERT_EQ(0, ret) {
		TH_LOG("no ownership event: %s", amupmu_errstr(ret));
	}
	EXPECT_EQ(AMUPMU_NL_CMD_OWNER_CHANGE, ev.cmd);
	ASSERT_NE(NULL, ev.a[AMUPMU_NL_A_UNIT]);
	ASSERT_NE(NULL, ev.a[AMUPMU_NL_A_OWNER]);
	EXPECT_EQ((__u32)AMUPMU_NL_UNIT_PMU, attr_u32(ev.a[AMUPMU_NL_A_UNIT]));
	EXPECT_EQ(owner, attr_u32(ev.a[AMUPMU_NL_A_OWNER]));
}

/*
 * Unbind and bind with no session; a netlink subscriber of the CPU group
 * hears the PMU change hands both ways.
 */
TEST_F(unbind, idle)
{
	struct amupmu_info info;
	__u64 cpu0 = 1;
	struct nl nl;
	int fd, ret;

	UNBIND_BEGIN();
	EXPECT_EQ(1U, amupmu_irq_lines());
	ASSERT_EQ(0, nl_listen(&nl, 1U << AMUPMU_NL_GROUP_CPU));
	ret = do_unbind(self);
	ASSERT_EQ(0, ret) {
		TH_LOG("unbind %s: %s", self->dev, amupmu_errstr(ret));
	}
	{
		char path[512];

		snprintf(path, sizeof(path), DRV_DIR "/%s", self->dev);
		EXPECT_FALSE(amupmu_path_exists(path)) {
			TH_LOG("%s still there after unbind", path);
		}
	}
	EXPECT_EQ(0U, amupmu_irq_lines()) {
		TH_LOG("the PMU interrupt is still requested after unbind");
	}
	ASSERT_EQ(0, amupmu_query(self->fd, &info, NULL, 0));
	TH_LOG("unbound: pmu_owner %u, features 0x%llx", info.pmu_owner,
	       (unsigned long long)info.features);
	EXPECT_NE((__u32)AMUPMU_PMU_OWNER_AMUPMU, info.pmu_owner);
	EXPECT_FALSE(!!(info.features & AMUPMU_FEAT_PMU_EXCLUSIVE));
	/* no arm_pmu took the PMU (the devicetree's node is amupmu's): no shared mode either */
	EXPECT_FALSE(!!(info.features & AMUPMU_FEAT_PMU_SHARED)) {
		TH_LOG("shared mode advertised with no PMU registered with perf core");
	}
	expect_owner_event(_metadata, &nl, info.pmu_owner);
	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ret = config(fd, PMUV3_EV_CPU_CYCLES, 0, 1, &cpu0, 8, 0, 0);
	EXPECT_TRUE(ret == -ENXIO || ret == -EOPNOTSUPP) {
		TH_LOG("CONFIG with the device unbound: %s", amupmu_errstr(ret));
	}
	close(fd);
	ret = do_bind(self);
	ASSERT_EQ(0, ret) {
		TH_LOG("bind %s: %s", self->dev, amupmu_errstr(ret));
	}
	expect_owner_event(_metadata, &nl, AMUPMU_PMU_OWNER_AMUPMU);
	close(nl.fd);
	expect_bound_works(_metadata);
}

/* A thread blocked in read() or poll() on a session's ring. */
struct blocked {
	pthread_t tid;
	int fd;
	bool use_poll;
	volatile int started, done;
	ssize_t ret;
	int err;
	short revents;
	unsigned char buf[4096];
};

/* Log the first record @buf holds (@n bytes). */
static void log_record(struct __test_metadata *_metadata, const char *who,
		       const unsigned char *buf, ssize_t n)
{
	struct amupmu_sample smp;

	if (n < (ssize_t)sizeof(smp))
		return;
	memcpy(&smp, buf, sizeof(smp));
	TH_LOG("%s: record size %u type %u mode %u event %u cpu %u pid %u pc 0x%llx value %llu",
	       who, smp.size, smp.type, smp.mode, smp.event, smp.cpu, smp.pid,
	       (unsigned long long)smp.pc,
	       n >= (ssize_t)(sizeof(smp) + 8) ?
	       (unsigned long long)*(const __u64 *)(buf + sizeof(smp)) : 0ULL);
}

static void *blocked_fn(void *arg)
{
	struct blocked *b = arg;

	__atomic_store_n(&b->started, 1, __ATOMIC_RELEASE);
	if (b->use_poll) {
		struct pollfd p = { .fd = b->fd, .events = POLLIN };

		b->ret = poll(&p, 1, -1);
		b->revents = p.revents;
	} else {
		b->ret = read(b->fd, b->buf, sizeof(b->buf));
	}
	b->err = b->ret < 0 ? errno : 0;
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Wait up to RETURN_TIMEOUT_NS for @b to return. */
static bool blocked_returned(struct blocked *b)
{
	__u64 end = amupmu_now_ns() + RETURN_TIMEOUT_NS;

	while (!__atomic_load_n(&b->done, __ATOMIC_ACQUIRE) && amupmu_now_ns() < end)
		sleep_ms(10);
	return __atomic_load_n(&b->done, __ATOMIC_ACQUIRE);
}

/*
 * Every PMU command on @fd (a session whose group the unbind ended) is
 * ENXIO with nothing written, but RELEASE, which frees the ended group;
 * CONFIG afterwards is ENXIO too (no device).
 */
static void expect_all_enxio(struct __test_metadata *_metadata, int fd, const char *who,
			     unsigned int nr_cpu_ids)
{
	static const __u32 ops[] = {
		AMUPMU_PMU_CTL_ENABLE, AMUPMU_PMU_CTL_DISABLE, AMUPMU_PMU_CTL_RESET,
	};
	unsigned char all[4096];
	struct amupmu_pmu_value v[4];
	struct amupmu_pmu_read rd, before;
	struct amupmu_info info;
	unsigned int i;
	__u64 cpu0 = 1;
	int ret;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		ret = amupmu_pmu_ctl(fd, ops[i]);
		EXPECT_EQ(-ENXIO, ret) {
			TH_LOG("%s: CTL op %u after unbind: %s", who, ops[i], amupmu_errstr(ret));
		}
	}
	amupmu_pmu_read_init(&rd, 0, v, 4);
	before = rd;
	ret = amupmu_ioctl(fd, AMUPMU_PMU_READ, &rd);
	EXPECT_EQ(-ENXIO, ret) {
		TH_LOG("%s: READ after unbind: %s", who, amupmu_errstr(ret));
	}
	EXPECT_EQ(0, memcmp(&before, &rd, sizeof(rd)));
	amupmu_pmu_read_all_init(&rd, all, nr_cpu_ids < 16 ? nr_cpu_ids : 16, 4);
	ret = amupmu_ioctl(fd, AMUPMU_PMU_READ, &rd);
	EXPECT_EQ(-ENXIO, ret) {
		TH_LOG("%s: READ_ALL after unbind: %s", who, amupmu_errstr(ret));
	}
	ret = amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_RELEASE);
	EXPECT_EQ(0, ret) {
		TH_LOG("%s: RELEASE of the ended group: %s", who, amupmu_errstr(ret));
	}
	ret = config(fd, PMUV3_EV_CPU_CYCLES, 0, 1, &cpu0, 8, 0, 0);
	EXPECT_EQ(-ENXIO, ret) {
		TH_LOG("%s: CONFIG after unbind: %s", who, amupmu_errstr(ret));
	}
	/* INFO is not a PMU command: it answers */
	EXPECT_EQ(0, amupmu_query(fd, &info, NULL, 0));
}

/*
 * Unbind with sessions holding groups: counting on every CPU (enabled),
 * sampling with the ring mapped (enabled), a reader blocked in read() and
 * one in poll() on sampling sessions whose rings stay empty (disabled),
 * and a session without a group. Nothing crashes, the blocked calls return, the PMU
 * commands are ENXIO, the mapping stays readable; after bind a new
 * session counts.
 */
TEST_F_TIMEOUT(unbind, with_sessions, 90)
{
	struct blocked br = { 0 }, bp = { 0 };
	int fa, fb, fc, fd, fe, ret;
	struct amupmu_ring_header *hdr;
	size_t mlen = 5 * self->page;
	__u64 cpus[16] = { 0 }, cpu0 = 1, samples;
	__u32 len = ((self->nr_cpu_ids + 63) / 64) * 8;
	unsigned int c;
	bool returned;

	UNBIND_BEGIN();
	for (c = 0; c < self->nr_cpu_ids && c < 1024; c++)
		cpus[c / 64] |= 1ULL << (c % 64);
	fa = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	fb = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	fc = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	fe = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fa);
	ASSERT_LE(0, fb);
	ASSERT_LE(0, fc);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, fe);
	/* A counts on every CPU, B samples CPU 0 often into a mapped ring */
	ASSERT_EQ(0, config(fa, PMUV3_EV_CPU_CYCLES, 0, 2, cpus, len, 0, 0));
	ASSERT_EQ(0, amupmu_pmu_ctl(fa, AMUPMU_PMU_CTL_ENABLE));
	ASSERT_EQ(0, config(fb, PMUV3_EV_CPU_CYCLES, 0, 1, &cpu0, 8, 100000, 4));
	hdr = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_SHARED, fb, 0);
	ASSERT_NE(MAP_FAILED, hdr) {
		TH_LOG("mmap of B's ring: %s", strerror(errno));
	}
	ASSERT_EQ(0, amupmu_pmu_ctl(fb, AMUPMU_PMU_CTL_ENABLE));
	/*
	 * C and D: sampling groups left disabled, so that their rings stay
	 * empty and their readers block. (Enabled on SW_INCR, which nothing
	 * increments, QEMU's multi-threaded TCG still delivered a sample now
	 * and then while B sampled on the same CPU; not under -icount.)
	 */
	ASSERT_EQ(0, config(fc, PMUV3_EV_SW_INCR, AMUPMU_EV_RAW, 1, &cpu0, 8, 1ULL << 20, 1));
	ASSERT_EQ(0, config(fd, PMUV3_EV_SW_INCR, AMUPMU_EV_RAW, 1, &cpu0, 8, 1ULL << 20, 1));
	br.fd = fc;
	bp.fd = fd;
	bp.use_poll = true;
	ASSERT_EQ(0, pthread_create(&br.tid, NULL, blocked_fn, &br));
	ASSERT_EQ(0, pthread_create(&bp.tid, NULL, blocked_fn, &bp));
	while (!__atomic_load_n(&br.started, __ATOMIC_ACQUIRE) ||
	       !__atomic_load_n(&bp.started, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	amupmu_busy_ns(20 * NSEC_PER_MSEC);
	sleep_ms(50);
	samples = __atomic_load_n(&hdr->data_head, __ATOMIC_ACQUIRE);
	TH_LOG("before unbind: B's ring head %llu; read() %s, poll() %s",
	       (unsigned long long)samples, br.done ? "returned" : "blocked",
	       bp.done ? "returned" : "blocked");
	EXPECT_FALSE(br.done);
	EXPECT_FALSE(bp.done);
	if (br.done && br.ret > 0)
		log_record(_metadata, "read() before unbind", br.buf, br.ret);

	ret = do_unbind(self);
	ASSERT_EQ(0, ret) {
		TH_LOG("unbind %s with sessions open: %s", self->dev, amupmu_errstr(ret));
	}
	returned = blocked_returned(&br);
	EXPECT_TRUE(returned) {
		TH_LOG("read() blocked on a sampling session still blocked %llu s after unbind",
		       RETURN_TIMEOUT_NS / NSEC_PER_SEC);
	}
	if (returned) {
		TH_LOG("blocked read() returned %zd (%s)", br.ret,
		       br.ret < 0 ? strerror(br.err) : "records or end of file");
		EXPECT_EQ(-1, br.ret);
		EXPECT_EQ(ENXIO, br.err);
	}
	returned = blocked_returned(&bp);
	EXPECT_TRUE(returned) {
		TH_LOG("poll() blocked on a sampling session still blocked %llu s after unbind",
		       RETURN_TIMEOUT_NS / NSEC_PER_SEC);
	}
	if (returned) {
		TH_LOG("blocked poll() returned %zd, revents 0x%x", bp.ret, bp.revents);
		EXPECT_EQ(1, bp.ret);
		EXPECT_NE(0, bp.revents & POLLHUP);
	}
	/* the mapping is still there to read (and to unmap) */
	EXPECT_EQ((__u32)AMUPMU_RING_VERSION, hdr->version);
	EXPECT_LE(samples, __atomic_load_n(&hdr->data_head, __ATOMIC_ACQUIRE));

	expect_all_enxio(_metadata, fa, "counting session", self->nr_cpu_ids);
	expect_all_enxio(_metadata, fb, "sampling session (ring mapped)", self->nr_cpu_ids);
	expect_all_enxio(_metadata, fc, "sampling session (read() blocked)", self->nr_cpu_ids);
	ret = config(fe, PMUV3_EV_CPU_CYCLES, 0, 1, &cpu0, 8, 0, 0);
	EXPECT_TRUE(ret == -ENXIO || ret == -EOPNOTSUPP) {
		TH_LOG("CONFIG of a session without a group, unbound: %s", amupmu_errstr(ret));
	}
	/* a new read() of D's (empty) ring does not block either: ENXIO */
	{
		unsigned char buf[256];
		ssize_t n = read(fd, buf, sizeof(buf));

		TH_LOG("read() after unbind: %zd (%s)", n, n < 0 ? strerror(errno) : "-");
		log_record(_metadata, "read() after unbind", buf, n);
		EXPECT_EQ(-1, n);
		EXPECT_EQ(ENXIO, errno);
	}
	if (__atomic_load_n(&br.done, __ATOMIC_ACQUIRE))
		pthread_join(br.tid, NULL);
	if (__atomic_load_n(&bp.done, __ATOMIC_ACQUIRE))
		pthread_join(bp.tid, NULL);
	munmap(hdr, mlen);
	close(fa);
	close(fb);
	close(fc);
	close(fd);
	close(fe);

	ret = do_bind(self);
	ASSERT_EQ(0, ret) {
		TH_LOG("bind %s: %s", self->dev, amupmu_errstr(ret));
	}
	expect_bound_works(_metadata);
	/* and a sampling session delivers samples again */
	fa = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fa);
	ASSERT_EQ(0, config(fa, PMUV3_EV_CPU_CYCLES, 0, 1, &cpu0, 8, 100000, 4));
	hdr = mmap(NULL, mlen, PROT_READ, MAP_SHARED, fa, 0);
	ASSERT_NE(MAP_FAILED, hdr);
	ASSERT_EQ(0, amupmu_pmu_ctl(fa, AMUPMU_PMU_CTL_ENABLE));
	amupmu_busy_ns(20 * NSEC_PER_MSEC);
	ASSERT_EQ(0, amupmu_pmu_ctl(fa, AMUPMU_PMU_CTL_DISABLE));
	EXPECT_LT(0ULL, hdr->samples) {
		TH_LOG("no sample after bind");
	}
	munmap(hdr, mlen);
	close(fa);
}

/* A thread that issues READ and CTL on its session until told to stop. */
struct hammer {
	pthread_t tid;
	int fd;
	volatile int stop;
	unsigned long long ok, enxio, other;
	int first_other;
};

static void *hammer_fn(void *arg)
{
	struct hammer *h = arg;
	struct amupmu_pmu_value v[2];
	struct amupmu_pmu_read rd;
	unsigned int i = 0;
	int ret;

	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
		if (i++ & 1)
			ret = amupmu_pmu_read(h->fd, 0, v, 2, &rd);
		else
			ret = amupmu_pmu_ctl(h->fd, (i & 2) ? AMUPMU_PMU_CTL_ENABLE :
						      AMUPMU_PMU_CTL_RESET);
		if (!ret) {
			__atomic_add_fetch(&h->ok, 1, __ATOMIC_RELAXED);
		} else if (ret == -ENXIO) {
			__atomic_add_fetch(&h->enxio, 1, __ATOMIC_RELAXED);
		} else if (!h->other++) {
			h->first_other = ret;
		}
	}
	return NULL;
}

/*
 * Wait up to RETURN_TIMEOUT_NS for the hammer's count @n to be non-zero:
 * 50 ms is plenty on an idle host, but without -icount a host that keeps
 * the hammer's vCPU off its CPU that long has left it at zero.
 */
static void hammered(const unsigned long long *n)
{
	__u64 end = amupmu_now_ns() + RETURN_TIMEOUT_NS;

	sleep_ms(50);
	while (!__atomic_load_n(n, __ATOMIC_RELAXED) && amupmu_now_ns() < end)
		sleep_ms(10);
}

/* Unbind while a thread hammers its session: success, then ENXIO, nothing else. */
TEST_F_TIMEOUT(unbind, while_in_use, 60)
{
	struct hammer h = { 0 };
	__u64 cpu0 = 1;
	int ret;

	UNBIND_BEGIN();
	h.fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, h.fd);
	ASSERT_EQ(0, config(h.fd, PMUV3_EV_CPU_CYCLES, 0, 2, &cpu0, 8, 0, 0));
	ASSERT_EQ(0, pthread_create(&h.tid, NULL, hammer_fn, &h));
	hammered(&h.ok);
	ret = do_unbind(self);
	ASSERT_EQ(0, ret) {
		TH_LOG("unbind %s: %s", self->dev, amupmu_errstr(ret));
	}
	hammered(&h.enxio);
	__atomic_store_n(&h.stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(h.tid, NULL));
	TH_LOG("hammer: %llu calls succeeded, %llu ENXIO, %llu other (first: %s)", h.ok, h.enxio,
	       h.other, amupmu_errstr(h.first_other));
	EXPECT_LT(0ULL, h.ok);
	EXPECT_LT(0ULL, h.enxio);
	EXPECT_EQ(0ULL, h.other);
	close(h.fd);
	ret = do_bind(self);
	ASSERT_EQ(0, ret) {
		TH_LOG("bind %s: %s", self->dev, amupmu_errstr(ret));
	}
	expect_bound_works(_metadata);
}

/* ---------------------------------------------------------------- shared mode */

#define SHARED_BEGIN() do {							\
	AMUPMU_SKIPPED_IN_SETUP(self->fd);					\
	if (geteuid() != 0)							\
		SKIP(return, "writing pmu_shared needs root");			\
	if (!amupmu_pmu_shared(&self->info))					\
		SKIP(return, "PMU in %s: no shared mode to turn off",		\
		     amupmu_pmu_mode_name(&self->info));			\
} while (0)

static int set_shared(FIXTURE_DATA(unbind) *self, bool on)
{
	int ret = amupmu_set_pmu_shared(on, NULL);

	if (!ret)
		self->shared_off = !on;
	return ret;
}

/*
 * A sampling ring's overflows so far: records written or, once it is full
 * (nobody reads B's 4 pages: 341 records, 34 ms at its period of 100000
 * cycles, more where perf core throttles it), counted lost.
 */
static __u64 ring_taken(const struct amupmu_ring_header *hdr)
{
	return __atomic_load_n(&hdr->samples, __ATOMIC_ACQUIRE) +
	       __atomic_load_n(&hdr->lost, __ATOMIC_ACQUIRE);
}

/*
 * pmu_shared=N under open sessions: the groups configured before keep
 * working (counting, sampling into a mapped ring, every command); what
 * has no group is refused (ENXIO), a RELEASEd session too; pmu_shared=Y
 * brings CONFIG back.
 *
 * B samples on another CPU than the one A's counts are checked on: under
 * QEMU's multi-threaded TCG (no -icount) a sampling counter's overflow
 * timer races the vCPU's own PMU updates and now and then loses the other
 * counters' values on that vCPU, with perf alone as well
 * (Documentation/dev-tools/amupmu-reliability.rst, Findings).
 */
TEST_F_TIMEOUT(unbind, shared_off_with_sessions, 90)
{
	struct amupmu_pmu_value v0[2], v1[2];
	struct amupmu_pmu_read rd, before;
	struct amupmu_ring_header *hdr;
	struct amupmu_info info;
	size_t mlen = 5 * self->page;
	__u64 cpus[16] = { 0 }, cpu0 = 1, bmask[16] = { 0 }, head0, head1, taken0, taken1;
	__u64 deadline;
	__u32 len = ((self->nr_cpu_ids + 63) / 64) * 8;
	unsigned int c, bcpu = 0;
	int fa, fb, fc, ret;
	pid_t spinner;

	SHARED_BEGIN();
	for (c = 0; c < self->nr_cpu_ids && c < 1024; c++)
		cpus[c / 64] |= 1ULL << (c % 64);
	for (c = 1; c < self->nr_cpu_ids && c < 1024 && !bcpu; c++)
		if (amupmu_cpu_online(c) == 1)
			bcpu = c;
	if (!bcpu)
		SKIP(return, "one CPU online: B would sample on the CPU A is read on");
	bmask[bcpu / 64] = 1ULL << (bcpu % 64);
	spinner = amupmu_spin_on(bcpu);
	ASSERT_LT(0, spinner);
	ASSERT_EQ(0, amupmu_pin_cpu(0));
	fa = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	fb = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	fc = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fa);
	ASSERT_LE(0, fb);
	ASSERT_LE(0, fc);
	/* A counts on every CPU, B samples CPU bcpu into a mapped ring */
	ret = config(fa, PMUV3_EV_CPU_CYCLES, 0, 2, cpus, len, 0, 0);
	ASSERT_EQ(0, ret) {
		TH_LOG("CONFIG A in shared mode: %s", amupmu_errstr(ret));
	}
	ASSERT_EQ(0, amupmu_pmu_ctl(fa, AMUPMU_PMU_CTL_ENABLE));
	ret = config(fb, PMUV3_EV_CPU_CYCLES, 0, 1, bmask, (bcpu / 64 + 1) * 8, 100000, 4);
	ASSERT_EQ(0, ret) {
		TH_LOG("CONFIG B (sampling) in shared mode: %s", amupmu_errstr(ret));
	}
	hdr = mmap(NULL, mlen, PROT_READ, MAP_SHARED, fb, 0);
	ASSERT_NE(MAP_FAILED, hdr);
	ASSERT_EQ(0, amupmu_pmu_ctl(fb, AMUPMU_PMU_CTL_ENABLE));
	amupmu_busy_ns(10 * NSEC_PER_MSEC);

	ASSERT_EQ(0, set_shared(self, false));
	ASSERT_EQ(0, amupmu_query(self->fd, &info, NULL, 0));
	TH_LOG("pmu_shared=N: PMU in %s", amupmu_pmu_mode_name(&info));
	EXPECT_FALSE(amupmu_pmu_sessions_work(&info));

	/* A and B go on */
	ASSERT_EQ(0, amupmu_pmu_read(fa, 0, v0, 2, &rd));
	EXPECT_NE(0U, rd.state & AMUPMU_READ_SHARED);
	head0 = __atomic_load_n(&hdr->data_head, __ATOMIC_ACQUIRE);
	taken0 = ring_taken(hdr);
	amupmu_busy_ns(20 * NSEC_PER_MSEC);
	ret = amupmu_pmu_read(fa, 0, v1, 2, &rd);
	ASSERT_EQ(0, ret) {
		TH_LOG("READ of A after pmu_shared=N: %s", amupmu_errstr(ret));
	}
	/*
	 * B's overflows in those 20 ms (26 to 111 seen); none when a host
	 * without -icount kept bcpu's vCPU off its CPU as long, so up to
	 * RETURN_TIMEOUT_NS more for the first
	 */
	deadline = amupmu_now_ns() + RETURN_TIMEOUT_NS;
	while (ring_taken(hdr) == taken0 && amupmu_now_ns() < deadline)
		sleep_ms(1);
	head1 = __atomic_load_n(&hdr->data_head, __ATOMIC_ACQUIRE);
	taken1 = ring_taken(hdr);
	TH_LOG("after pmu_shared=N: A's cycles on CPU 0 %llu -> %llu, B's ring head (CPU %u) "
	       "%llu -> %llu, samples + lost %llu -> %llu",
	       (unsigned long long)v0[0].value, (unsigned long long)v1[0].value, bcpu,
	       (unsigned long long)head0, (unsigned long long)head1,
	       (unsigned long long)taken0, (unsigned long long)taken1);
	EXPECT_LT(v0[0].value, v1[0].value);
	EXPECT_LT(v0[1].value, v1[1].value);
	EXPECT_LT(taken0, taken1) {
		TH_LOG("B stopped sampling when shared mode went off");
	}
	EXPECT_EQ(0, amupmu_pmu_ctl(fa, AMUPMU_PMU_CTL_DISABLE));
	EXPECT_EQ(0, amupmu_pmu_ctl(fa, AMUPMU_PMU_CTL_RESET));
	EXPECT_EQ(0, amupmu_pmu_ctl(fa, AMUPMU_PMU_CTL_ENABLE));
	EXPECT_EQ(0, amupmu_pmu_ctl(fb, AMUPMU_PMU_CTL_DISABLE));

	/* C has no group: every PMU command is ENXIO, nothing written */
	ret = config(fc, PMUV3_EV_CPU_CYCLES, 0, 1, &cpu0, 8, 0, 0);
	EXPECT_EQ(-ENXIO, ret) {
		TH_LOG("CONFIG with pmu_shared=N: %s", amupmu_errstr(ret));
	}
	ret = config(fc, PMUV3_EV_CPU_CYCLES, 0, 1, &cpu0, 8, 100000, 1);
	EXPECT_EQ(-ENXIO, ret) {
		TH_LOG("sampling CONFIG with pmu_shared=N: %s", amupmu_errstr(ret));
	}
	ret = amupmu_pmu_ctl(fc, AMUPMU_PMU_CTL_ENABLE);
	EXPECT_EQ(-ENXIO, ret) {
		TH_LOG("CTL of a session without a group, pmu_shared=N: %s", amupmu_errstr(ret));
	}
	amupmu_pmu_read_init(&rd, 0, v0, 2);
	before = rd;
	ret = amupmu_ioctl(fc, AMUPMU_PMU_READ, &rd);
	EXPECT_EQ(-ENXIO, ret) {
		TH_LOG("READ of a session without a group, pmu_shared=N: %s", amupmu_errstr(ret));
	}
	EXPECT_EQ(0, memcmp(&before, &rd, sizeof(rd)));

	/* A gives its group up: it cannot configure one again */
	EXPECT_EQ(0, amupmu_pmu_ctl(fa, AMUPMU_PMU_CTL_RELEASE));
	ret = config(fa, PMUV3_EV_CPU_CYCLES, 0, 1, &cpu0, 8, 0, 0);
	EXPECT_EQ(-ENXIO, ret) {
		TH_LOG("CONFIG after RELEASE, pmu_shared=N: %s", amupmu_errstr(ret));
	}

	/* shared mode back: CONFIG works and counts */
	ASSERT_EQ(0, set_shared(self, true));
	ASSERT_EQ(0, amupmu_query(self->fd, &info, NULL, 0));
	EXPECT_TRUE(amupmu_pmu_shared(&info));
	ret = config(fc, PMUV3_EV_CPU_CYCLES, 0, 1, &cpu0, 8, 0, 0);
	ASSERT_EQ(0, ret) {
		TH_LOG("CONFIG with pmu_shared=Y again: %s", amupmu_errstr(ret));
	}
	ASSERT_EQ(0, amupmu_pmu_ctl(fc, AMUPMU_PMU_CTL_ENABLE));
	amupmu_busy_ns(5 * NSEC_PER_MSEC);
	ASSERT_EQ(0, amupmu_pmu_read(fc, 0, v0, 1, &rd));
	EXPECT_LT(0ULL, v0[0].value);
	EXPECT_EQ(0, config(fa, PMUV3_EV_CPU_CYCLES, 0, 1, &cpu0, 8, 0, 0));
	amupmu_spin_stop(spinner);
	munmap(hdr, mlen);
	close(fa);
	close(fb);
	close(fc);
}

/* A thread that configures, uses and releases its session until told to stop. */
struct cycler {
	pthread_t tid;
	volatile int stop;
	unsigned long long configs, enxio, ok, other;
	int first_other;
	char first_what[32];
};

static void cycler_bad(struct cycler *cy, const char *what, int ret)
{
	if (!cy->other++) {
		cy->first_other = ret;
		snprintf(cy->first_what, sizeof(cy->first_what), "%s", what);
	}
}

static void *cycler_fn(void *arg)
{
	struct cycler *cy = arg;
	struct amupmu_pmu_value v[2];
	struct amupmu_pmu_read rd;
	__u64 cpu0 = 1;
	int fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC), ret;
	unsigned int i;

	if (fd < 0) {
		cycler_bad(cy, "open", -errno);
		return NULL;
	}
	while (!__atomic_load_n(&cy->stop, __ATOMIC_ACQUIRE)) {
		ret = config(fd, PMUV3_EV_CPU_CYCLES, 0, 2, &cpu0, 8, 0, 0);
		__atomic_add_fetch(&cy->configs, 1, __ATOMIC_RELAXED);
		if (ret == -ENXIO) {
			__atomic_add_fetch(&cy->enxio, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (ret) {
			cycler_bad(cy, "CONFIG", ret);
			continue;
		}
		/* configured: every command works, whatever pmu_shared says now */
		for (i = 0; i < 4; i++) {
			static const __u32 ops[] = {
				AMUPMU_PMU_CTL_ENABLE, AMUPMU_PMU_CTL_RESET, AMUPMU_PMU_CTL_DISABLE,
			};

			ret = i < 3 ? amupmu_pmu_ctl(fd, ops[i]) : amupmu_pmu_read(fd, 0, v, 2, &rd);
			if (ret)
				cycler_bad(cy, i < 3 ? "CTL" : "READ", ret);
			else
				__atomic_add_fetch(&cy->ok, 1, __ATOMIC_RELAXED);
		}
		ret = amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_RELEASE);
		if (ret)
			cycler_bad(cy, "RELEASE", ret);
	}
	close(fd);
	return NULL;
}

/* pmu_shared toggled under a session cycling CONFIG .. RELEASE: only CONFIG is refused. */
TEST_F_TIMEOUT(unbind, shared_toggled_while_in_use, 60)
{
	struct cycler cy = { 0 };
	unsigned int i, toggles = 0;
	__u64 deadline;
	int ret;

	SHARED_BEGIN();
	ASSERT_EQ(0, pthread_create(&cy.tid, NULL, cycler_fn, &cy));
	/*
	 * 100 toggles, 2 ms apart, and on until the cycler has seen both
	 * answers (up to a minute): without -icount a loaded host can keep
	 * the cycler's vCPU off its CPU for all of the first 100
	 */
	deadline = amupmu_now_ns() + 12 * RETURN_TIMEOUT_NS;
	for (i = 0; i < 100 || ((!__atomic_load_n(&cy.enxio, __ATOMIC_RELAXED) ||
				  !__atomic_load_n(&cy.ok, __ATOMIC_RELAXED)) &&
				 amupmu_now_ns() < deadline); i++) {
		ret = set_shared(self, i & 1);
		EXPECT_EQ(0, ret) {
			TH_LOG("toggle %u: %s", i, amupmu_errstr(ret));
		}
		toggles += !ret;
		sleep_ms(2);
	}
	ASSERT_EQ(0, set_shared(self, true));
	sleep_ms(20);
	__atomic_store_n(&cy.stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(cy.tid, NULL));
	TH_LOG("%u toggles: %llu CONFIGs (%llu ENXIO), %llu commands on the groups succeeded, "
	       "%llu other answers (first: %s %s)", toggles, cy.configs, cy.enxio, cy.ok, cy.other,
	       cy.first_what, amupmu_errstr(cy.first_other));
	EXPECT_EQ(0ULL, cy.other);
	/* both answers seen: the switch took effect both ways */
	EXPECT_LT(0ULL, cy.enxio);
	EXPECT_LT(cy.enxio, cy.configs);
	EXPECT_LT(0ULL, cy.ok);
}

TEST_HARNESS_MAIN
