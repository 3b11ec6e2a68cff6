// SPDX-License-Identifier: GPL-2.0
/*
 * The lifetime of an SPE session against hostile users (issue 24; mock
 * builds, amupmu_spe_fixture.h): lifetime (close with a mapping alive:
 * the mapping holds the file, so the session lives on and the module is
 * pinned; RELEASE with a mapping alive), poll_release and epoll_release
 * (RELEASE and close under a poller), epoll_before_config (an epoll entry
 * added before CONFIG is woken by SPE data and by RELEASE),
 * mmap_config_race (CONFIG against mmap and READ in two threads: no
 * deadlock), unbind_stale (the SPE device unbound under a session: stale
 * with ENXIO, EPOLLHUP, the data kept; needs an SPE device node, run.sh
 * -S yes, the spe-claim payload).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/syscall.h>

#include "amupmu_spe_fixture.h"

/* ---------------------------------------------------------------- lifetime */

static long module_refcnt(void)
{
	__u64 v;

	return amupmu_read_u64("/sys/module/amupmu/refcnt", &v) ? -1 : (long)v;
}

TEST_F(sess, lifetime)
{
	unsigned int cpu = self->cpu;
	__u64 mask = 1ULL << cpu, head;
	struct amupmu_spe_buf_header *h;
	struct amupmu_spe_config c;
	long ref0, ref1, ref2;
	struct walk w;
	int fd, r;

	BEGIN();
	STREAM(cpu, "ops_per_us=50");
	ref0 = module_refcnt();
	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	cfg_init(&c, &mask, AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_KERNEL, 16);
	c.interval = 8192;
	CONFIG(fd, &c);
	MAP(h, fd, cpu, 16);
	CTL(fd, AMUPMU_SPE_CTL_ENABLE);
	busy_on(mask, 30);
	/* close with the mapping alive (and the session enabled) */
	close(fd);
	busy_on(mask, 20);
	head = h->data_head;
	TH_LOG("after close: data_head %llu records %llu flags 0x%x",
	       (unsigned long long)head, (unsigned long long)h->records, h->flags);
	EXPECT_TRUE(!!(h->flags & AMUPMU_SPE_ENABLED));
	/*
	 * The mapping holds the file (vm_file): the session lives on, enabled,
	 * until the last mapping goes; another session cannot take the CPU.
	 */
	busy_on(mask, 20);
	TH_LOG("mapping only: data_head %llu -> %llu", (unsigned long long)head,
	       (unsigned long long)h->data_head);
	EXPECT_LE(head, h->data_head);
	ref1 = module_refcnt();
	TH_LOG("module refcnt: %ld before, %ld with only the mapping left", ref0, ref1);
	/* the mapping holds the file, the file the module: rmmod is refused */
	EXPECT_LT(ref0, ref1);
	if (ref1 > 0) {
		r = syscall(SYS_delete_module, "amupmu", O_NONBLOCK);
		EXPECT_EQ(-1, r);
		EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) {
			TH_LOG("delete_module: %s", strerror(errno));
		}
	}
	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	r = spe_config(fd, &c);
	EXPECT_EQ(-EBUSY, r) {
		TH_LOG("CONFIG with the old session's mapping alive: %s", amupmu_errstr(r));
	}
	if (!r)
		spe_ctl(fd, AMUPMU_SPE_CTL_RELEASE);
	munmap(h, 17 * sysconf(_SC_PAGESIZE));
	ref2 = module_refcnt();
	TH_LOG("module refcnt after munmap: %ld (one fd open)", ref2);
	EXPECT_EQ(ref0 + 1, ref2);
	/* the last mapping gone, the old session is too: the CPU is free */
	r = spe_config(fd, &c);
	EXPECT_EQ(0, r) {
		TH_LOG("CONFIG after munmap: %s", amupmu_errstr(r));
	}
	if (!r)
		EXPECT_EQ(0, spe_ctl(fd, AMUPMU_SPE_CTL_RELEASE));
	/* RELEASE with a mapping alive: the data stays readable, the CPU is free */
	c.buf_pages = 16;
	CONFIG(fd, &c);
	MAP(h, fd, cpu, 16);
	CTL(fd, AMUPMU_SPE_CTL_ENABLE);
	busy_on(mask, 30);
	CTL(fd, AMUPMU_SPE_CTL_DISABLE);
	head = h->data_head;
	CTL(fd, AMUPMU_SPE_CTL_RELEASE);
	EXPECT_EQ(-ENODEV, spe_ctl(fd, AMUPMU_SPE_CTL_ENABLE));
	EXPECT_EQ(head, h->data_head);
	WALK(h, &w, NULL, NULL);
	TH_LOG("released, still mapped: %llu bytes, %llu records walked",
	       (unsigned long long)head, (unsigned long long)w.records);
	EXPECT_EQ(h->records, w.records);
	r = spe_config(fd, &c);
	EXPECT_EQ(0, r) {
		TH_LOG("CONFIG after RELEASE, the old buffer still mapped: %s", amupmu_errstr(r));
	}
	if (!r)
		spe_ctl(fd, AMUPMU_SPE_CTL_RELEASE);
	munmap(h, 17 * sysconf(_SC_PAGESIZE));
	/* release then config again on the same fd */
	c.buf_pages = 16;
	EXPECT_EQ(0, spe_config(fd, &c));
	EXPECT_EQ(0, spe_ctl(fd, AMUPMU_SPE_CTL_RELEASE));
	close(fd);
}

/* ---------------------------------------------------------------- pollers, races, unbind (issue 24) */

/* A thread blocked in poll() on @fd. */
struct poller {
	pthread_t th;
	int fd;
	short events;
	int timeout_ms;
	int ret;
	short revents;
	__u64 ns;
};

static void *poller_fn(void *p)
{
	struct poller *a = p;
	struct pollfd pfd = { .fd = a->fd, .events = a->events };
	__u64 t0 = amupmu_now_ns();

	a->ret = poll(&pfd, 1, a->timeout_ms);
	a->revents = pfd.revents;
	a->ns = amupmu_now_ns() - t0;
	return NULL;
}

static int poller_start(struct poller *a, int fd, short events, int timeout_ms)
{
	memset(a, 0, sizeof(*a));
	a->fd = fd;
	a->events = events;
	a->timeout_ms = timeout_ms;
	if (pthread_create(&a->th, NULL, poller_fn, a))
		return -1;
	usleep(200 * 1000);	/* blocked by now (nothing to report yet) */
	return 0;
}

/*
 * Issue 24, defect 1: poll() queued on a wait queue of the SPE
 * configuration, which RELEASE freed under the poller (use-after-free in
 * remove_wait_queue() when the poll returned; on slub_debug=P or KASAN
 * the kernel reports it). The queue is the file's now, and RELEASE wakes
 * it: the poller returns at once (EPOLLERR: no configuration, no ring;
 * POLLNVAL when the fd was closed meanwhile).
 * Orders: RELEASE then join then close; RELEASE, close while the poller
 * still holds the file, join; close without RELEASE while polling (the
 * file lives until the poll returns at its timeout, then is released).
 */
TEST_F(sess, poll_release)
{
	__u64 mask = 1ULL << self->cpu;
	struct amupmu_spe_config c;
	struct poller a;
	unsigned int order;
	int fd;

	BEGIN();
	for (order = 0; order < 3; order++) {
		fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		cfg_init(&c, &mask, AMUPMU_SPE_EN_USER, 4);
		CONFIG(fd, &c);
		ASSERT_EQ(0, poller_start(&a, fd, POLLIN | POLLPRI, order == 2 ? 500 : 10000));
		if (order < 2)
			CTL(fd, AMUPMU_SPE_CTL_RELEASE);
		if (order >= 1)
			close(fd);
		pthread_join(a.th, NULL);
		TH_LOG("order %u: poll returned %d revents 0x%x after %llu ms", order, a.ret,
		       a.revents, (unsigned long long)a.ns / 1000000);
		if (order < 2) {
			/* woken by RELEASE, not by its 10 s timeout */
			EXPECT_GT(5000ULL, a.ns / 1000000);
			EXPECT_EQ(1, a.ret);
			EXPECT_FALSE(!!(a.revents & (POLLIN | POLLPRI)));
		} else {
			/* its timeout; POLLNVAL: its last look found the fd closed */
			EXPECT_LE(500ULL, a.ns / 1000000);
			EXPECT_TRUE(a.ret == 0 || a.revents == POLLNVAL);
		}
		if (order == 0)
			close(fd);
	}
	/* the CPU is free again */
	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	CONFIG(fd, &c);
	CTL(fd, AMUPMU_SPE_CTL_RELEASE);
	close(fd);
}

/*
 * Defect 1 with epoll: an epoll entry stays on the wait queue across
 * RELEASE (epoll leaves it only at EPOLL_CTL_DEL or when either file is
 * released). Orders: RELEASE, close the epoll fd, close the file;
 * RELEASE, close the file, close the epoll fd; close the file without
 * RELEASE, close the epoll fd; RELEASE, CONFIG again: the same entry
 * reports EPOLLIN of the new configuration at its watermark (the queue is
 * the file's); an epoll_wait() blocked across RELEASE returns.
 */
TEST_F(sess, epoll_release)
{
	unsigned int cpu = self->cpu, order;
	__u64 mask = 1ULL << cpu;
	struct amupmu_spe_config c;
	struct epoll_event ev, out;
	int fd, ep, n;

	BEGIN();
	STREAM(cpu, "ops_per_us=200");
	for (order = 0; order < 4; order++) {
		fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		ep = epoll_create1(EPOLL_CLOEXEC);
		ASSERT_LE(0, ep);
		cfg_init(&c, &mask, AMUPMU_SPE_EN_USER, 16);
		c.watermark = 4096;
		CONFIG(fd, &c);
		ev = (struct epoll_event) { .events = EPOLLIN | EPOLLPRI, .data.u32 = order };
		ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
		EXPECT_EQ(0, epoll_wait(ep, &out, 1, 0));
		switch (order) {
		case 0:
			CTL(fd, AMUPMU_SPE_CTL_RELEASE);
			close(ep);
			close(fd);
			break;
		case 1:
			CTL(fd, AMUPMU_SPE_CTL_RELEASE);
			close(fd);
			close(ep);
			break;
		case 2:
			close(fd);
			close(ep);
			break;
		case 3:
			CTL(fd, AMUPMU_SPE_CTL_RELEASE);
			CONFIG(fd, &c);
			CTL(fd, AMUPMU_SPE_CTL_ENABLE);
			busy_on(mask, 100);
			n = epoll_wait(ep, &out, 1, 2000);
			TH_LOG("after RELEASE and CONFIG: epoll_wait %d events 0x%x", n,
			       n > 0 ? out.events : 0);
			EXPECT_EQ(1, n);
			if (n == 1)
				EXPECT_TRUE(!!(out.events & EPOLLIN));
			CTL(fd, AMUPMU_SPE_CTL_DISABLE);
			close(fd);
			close(ep);
			break;
		}
	}
}

/* A thread blocked in epoll_wait(). */
struct ep_waiter {
	pthread_t th;
	int ep, timeout_ms, ret;
	struct epoll_event out;
	__u64 ns;
};

static void *ep_waiter_fn(void *p)
{
	struct ep_waiter *a = p;
	__u64 t0 = amupmu_now_ns();

	a->ret = epoll_wait(a->ep, &a->out, 1, a->timeout_ms);
	a->ns = amupmu_now_ns() - t0;
	return NULL;
}

/*
 * Review of issue 24, S3: poll() queued on the SPE wait queue only once a
 * configuration existed, and the queue was made by the first CONFIG: an
 * epoll entry added before it was never put on the queue (epoll polls
 * again later without registering), so it was deaf to SPE data, faults and
 * RELEASE. The queue is the file's from open on now.
 * Part 1: EPOLL_CTL_ADD before CONFIG (the fd reports EPOLLERR then: no
 * ring, no configuration), CONFIG, ENABLE, user load: epoll_wait reports
 * EPOLLIN at the watermark. Part 2: ADD before CONFIG, CONFIG, a thread
 * blocks in epoll_wait; RELEASE wakes it (EPOLLERR again) at once, not at
 * its 10 s timeout. Before the fix part 1 times out (0 events) and part 2
 * waits 10 s.
 */
TEST_F(sess, epoll_before_config)
{
	unsigned int cpu = self->cpu;
	__u64 mask = 1ULL << cpu;
	struct amupmu_spe_config c;
	struct epoll_event ev, out;
	struct ep_waiter a;
	int fd, ep, n;

	BEGIN();
	STREAM(cpu, "ops_per_us=200");

	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ev = (struct epoll_event) { .events = EPOLLIN | EPOLLPRI };
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	n = epoll_wait(ep, &out, 1, 0);
	TH_LOG("before CONFIG: epoll_wait %d events 0x%x", n, n > 0 ? out.events : 0);
	cfg_init(&c, &mask, AMUPMU_SPE_EN_USER, 16);
	c.watermark = 4096;
	CONFIG(fd, &c);
	EXPECT_EQ(0, epoll_wait(ep, &out, 1, 0));
	CTL(fd, AMUPMU_SPE_CTL_ENABLE);
	busy_on(mask, 100);
	n = epoll_wait(ep, &out, 1, 3000);
	TH_LOG("part 1, after CONFIG and ENABLE: epoll_wait %d events 0x%x", n,
	       n > 0 ? out.events : 0);
	EXPECT_EQ(1, n);
	if (n == 1)
		EXPECT_TRUE(!!(out.events & EPOLLIN));
	CTL(fd, AMUPMU_SPE_CTL_RELEASE);
	close(ep);
	close(fd);

	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	CONFIG(fd, &c);
	EXPECT_EQ(0, epoll_wait(ep, &out, 1, 0));
	memset(&a, 0, sizeof(a));
	a.ep = ep;
	a.timeout_ms = 10000;
	ASSERT_EQ(0, pthread_create(&a.th, NULL, ep_waiter_fn, &a));
	usleep(200 * 1000);	/* blocked by now */
	CTL(fd, AMUPMU_SPE_CTL_RELEASE);
	pthread_join(a.th, NULL);
	TH_LOG("part 2, RELEASE: epoll_wait %d events 0x%x after %llu ms", a.ret,
	       a.ret > 0 ? a.out.events : 0, (unsigned long long)a.ns / 1000000);
	EXPECT_EQ(1, a.ret);
	EXPECT_GT(5000ULL, a.ns / 1000000);
	close(ep);
	close(fd);
}

/* Two threads of one process: CONFIG/ENABLE/RELEASE against mmap/munmap/READ. */
struct race {
	int fd;
	unsigned int cpu;
	__u64 mask;
	__u64 end_ns;
	unsigned long configs, maps, reads;
};

static void *race_config_fn(void *p)
{
	struct race *r = p;
	struct amupmu_spe_config c;

	while (amupmu_now_ns() < r->end_ns) {
		cfg_init(&c, &r->mask, AMUPMU_SPE_EN_USER, 4);
		if (!spe_config(r->fd, &c)) {
			r->configs++;
			spe_ctl(r->fd, AMUPMU_SPE_CTL_ENABLE);
			spe_ctl(r->fd, AMUPMU_SPE_CTL_RELEASE);
		}
	}
	return NULL;
}

static void *race_map_fn(void *p)
{
	struct race *r = p;
	long pg = sysconf(_SC_PAGESIZE);

	while (amupmu_now_ns() < r->end_ns) {
		struct amupmu_spe_cpu *e;
		void *h = spe_map(r->fd, r->cpu, 4, PROT_READ | PROT_WRITE);

		if (h != MAP_FAILED) {
			r->maps++;
			munmap(h, 5 * pg);
		}
		/* a READ into a page never touched: copy_to_user() faults */
		e = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (e != MAP_FAILED) {
			if (spe_read(r->fd, e, pg / sizeof(*e)) > 0)
				r->reads++;
			munmap(e, pg);
		}
	}
	return NULL;
}

/*
 * Issue 24, defect 2: CONFIG charged RLIMIT_MEMLOCK (mmap_write_lock) and
 * READ copied to user space (a fault: mmap_read_lock) under
 * amupmu_spe_sess_lock, and mmap() takes that lock under the mmap_lock:
 * two threads of one process hung in D state. The race runs in a child
 * for 2 s; the parent waits at most 20 s, so that a deadlock fails the
 * test instead of hanging the board (the child stays stuck then: the
 * board's later tests may hang on it; the debug kernel's lockdep reports
 * the inversion without the race being won).
 */
TEST_F(sess, mmap_config_race)
{
	struct race r = { .cpu = self->cpu, .mask = 1ULL << self->cpu };
	__u64 deadline;
	int status = -1;
	pid_t pid, w;

	BEGIN();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		pthread_t a, b;

		r.fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
		if (r.fd < 0)
			_exit(2);
		r.end_ns = amupmu_now_ns() + 2 * NSEC_PER_SEC;
		if (pthread_create(&a, NULL, race_config_fn, &r) ||
		    pthread_create(&b, NULL, race_map_fn, &r))
			_exit(3);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		printf("# race: %lu configs, %lu maps, %lu reads\n", r.configs, r.maps, r.reads);
		fflush(stdout);
		_exit(r.configs && r.maps ? 0 : 4);
	}
	deadline = amupmu_now_ns() + 20 * NSEC_PER_SEC;
	while ((w = waitpid(pid, &status, WNOHANG)) == 0 && amupmu_now_ns() < deadline)
		usleep(50 * 1000);
	if (w == 0) {
		char path[64], st[512] = "";

		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		amupmu_read_file(path, st, sizeof(st));
		TH_LOG("the racing threads did not finish in 20 s (deadlock): %s", st);
		kill(pid, SIGKILL);
	}
	ASSERT_EQ(pid, w);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		TH_LOG("child status 0x%x", status);
	}
}

/* The first SPE device node of the board (run.sh -S yes), in @dev. */
static bool spe_dev_find(char *dev, size_t size)
{
	DIR *d = opendir("/sys/bus/platform/devices");
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		char path[512], buf[256];
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/platform/devices/%s/of_node/compatible",
			 e->d_name);
		n = amupmu_read_file(path, buf, sizeof(buf) - 1);
		if (n > 0 && memmem(buf, n, "arm,statistical-profiling-extension-v1", 38)) {
			snprintf(dev, size, "%.255s", e->d_name);
			found = true;
		}
	}
	closedir(d);
	return found;
}

static int spe_dev_bind(const char *dev)
{
	char path[320];
	int r;

	snprintf(path, sizeof(path), "/sys/bus/platform/devices/%s/driver_override", dev);
	r = amupmu_write_str(path, "amupmu-spe\n");
	return r ? r : write_fmt(SPE_DRV "/bind", "%s\n", dev);
}

/*
 * Issue 24, defect 4: after the claimed SPE device is unbound, its
 * configurations are stale: CTL ENABLE and DISABLE fail with ENXIO (ENABLE
 * restarted profiling on a device amupmu no longer owned), a CPU coming
 * online does not start them, poll() wakes with EPOLLHUP; READ and the
 * mappings keep the data; RELEASE frees them, and a new CONFIG works on
 * the device bound again. Needs an SPE device node (run.sh -S yes; the
 * spe-claim payload runs it); skips without one.
 */
TEST_F(sess, unbind_stale)
{
	unsigned int cpu = self->cpu;
	__u64 mask = 1ULL << cpu;
	struct amupmu_spe_buf_header *h;
	struct amupmu_spe_config c;
	struct amupmu_spe_cpu e, e2;
	struct poller a;
	int r;

	BEGIN();
	if (!spe_dev_find(self->spe_dev, sizeof(self->spe_dev)))
		SKIP(return, "no SPE device node on this board (run.sh -S yes)");
	TH_LOG("SPE device %s", self->spe_dev);
	r = spe_dev_bind(self->spe_dev);
	ASSERT_EQ(0, r) {
		TH_LOG("bind %s to amupmu-spe: %s", self->spe_dev, amupmu_errstr(r));
	}
	STREAM(cpu, "ops_per_us=200");
	cfg_init(&c, &mask, AMUPMU_SPE_EN_USER, 16);
	CONFIG(self->fd, &c);
	MAP(h, self->fd, cpu, 16);
	CTL(self->fd, AMUPMU_SPE_CTL_ENABLE);
	busy_on(mask, 30);
	/* POLLPRI (no fault comes): only the unbind's POLLHUP wakes it */
	ASSERT_EQ(0, poller_start(&a, self->fd, POLLPRI, 10000));
	r = write_fmt(SPE_DRV "/unbind", "%s\n", self->spe_dev);
	ASSERT_EQ(0, r);
	pthread_join(a.th, NULL);
	TH_LOG("unbound: poll returned %d revents 0x%x after %llu ms", a.ret, a.revents,
	       (unsigned long long)a.ns / 1000000);
	EXPECT_TRUE(!!(a.revents & POLLHUP));
	EXPECT_GT(5000ULL, a.ns / 1000000);
	r = spe_ctl(self->fd, AMUPMU_SPE_CTL_ENABLE);
	EXPECT_EQ(-ENXIO, r) {
		TH_LOG("ENABLE after unbind: %s", amupmu_errstr(r));
	}
	EXPECT_EQ(-ENXIO, spe_ctl(self->fd, AMUPMU_SPE_CTL_DISABLE));
	READ_CPU(self->fd, cpu, &e);
	log_entry(_metadata, "after unbind", &e);
	EXPECT_FALSE(!!(e.state & AMUPMU_SPE_ENABLED));
	EXPECT_EQ(e.bytes, h->data_head);
	busy_on(mask, 30);
	READ_CPU(self->fd, cpu, &e2);
	EXPECT_EQ(e.bytes, e2.bytes);	/* not profiling */
	if (cpu == 1) {
		/* CPU online does not start a stale configuration */
		ASSERT_EQ(0, amupmu_set_online(1, false));
		self->cpu1_offlined = true;
		ASSERT_EQ(0, amupmu_set_online(1, true));
		self->cpu1_offlined = false;
		busy_on(mask, 30);
		READ_CPU(self->fd, cpu, &e2);
		log_entry(_metadata, "after offline/online", &e2);
		EXPECT_EQ(e.bytes, e2.bytes);
		EXPECT_EQ(e.events, e2.events);
	}
	/* bound again: the old configuration stays stale */
	r = spe_dev_bind(self->spe_dev);
	ASSERT_EQ(0, r) {
		TH_LOG("bind again: %s", amupmu_errstr(r));
	}
	EXPECT_EQ(-ENXIO, spe_ctl(self->fd, AMUPMU_SPE_CTL_ENABLE));
	CTL(self->fd, AMUPMU_SPE_CTL_RELEASE);
	/* the mapping keeps the data */
	EXPECT_EQ(e.bytes, h->data_head);
	munmap(h, 17 * sysconf(_SC_PAGESIZE));
	CONFIG(self->fd, &c);
	CTL(self->fd, AMUPMU_SPE_CTL_ENABLE);
	busy_on(mask, 30);
	CTL(self->fd, AMUPMU_SPE_CTL_DISABLE);
	READ_CPU(self->fd, cpu, &e2);
	log_entry(_metadata, "new configuration", &e2);
	EXPECT_LT(0ULL, e2.bytes);
	CTL(self->fd, AMUPMU_SPE_CTL_RELEASE);
	spe_dev_give_back(self->spe_dev);
	self->spe_dev[0] = '\0';
}

TEST_HARNESS_MAIN
