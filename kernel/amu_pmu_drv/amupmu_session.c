// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: the generic session. An open file of /dev/amupmu is a struct
 * amupmu_session (amupmu_session.h): allocated at open, freed at release
 * after its units have let go of it (amupmu_main.c releases its PMU group
 * and SPE configuration first). Here: its lifetime, the CPU sets of the
 * ABI, the sample ring a sampling group writes into and the file's read(),
 * poll() and mmap() of it, and the slots the AMU and SPE units keep in it.
 * The PMU commands (amupmu_pmu_cmd.c) configure the group; the overflow
 * interrupts (amupmu_pmu.c, amupmu_perf.c) fill the ring.
 *
 * Locking: a session's commands take s->lock inside cpus_read_lock() (the
 * order of amupmu_pmu_excl.h). read() holds s->read_lock across its copy to
 * user space and takes s->lock only for a moment, for a reference to the
 * ring; poll() and mmap() take s->lock alone. amupmu_sessions_lock is
 * innermost.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/cpumask.h>
#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "amupmu.h"
#include "amupmu_session.h"

/*
 * Binding of the PMU device: bumped (skipping 0) when it goes away, by
 * amupmu_pmu_release() under amupmu_pmu_own_rwsem (write) and
 * amupmu_pmu_alloc_lock; amupmu_pmu_config() reads it under the rwsem
 * (read), everyone else through amupmu_sess_stale()'s READ_ONCE().
 */
unsigned int amupmu_sess_gen = 1;
/* every open session, so that a departing device wakes their readers */
static LIST_HEAD(amupmu_sessions);
static DEFINE_SPINLOCK(amupmu_sessions_lock);	/* amupmu_sessions */

/* Wake every session's readers (their group may have gone). */
void amupmu_sessions_wake(void)
{
	struct amupmu_session *s;

	spin_lock(&amupmu_sessions_lock);
	list_for_each_entry(s, &amupmu_sessions, node)
		wake_up_interruptible_all(&s->wait);
	spin_unlock(&amupmu_sessions_lock);
}

static void amupmu_sess_wake(struct irq_work *work)
{
	struct amupmu_session *s = container_of(work, struct amupmu_session, wake);

	wake_up_interruptible_poll(&s->wait, EPOLLIN | EPOLLRDNORM);
}

struct amupmu_session *amupmu_session_alloc(void)
{
	struct amupmu_session *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	if (!zalloc_cpumask_var(&s->cpus, GFP_KERNEL) ||
	    !zalloc_cpumask_var(&s->scratch, GFP_KERNEL)) {
		free_cpumask_var(s->cpus);
		kfree(s);
		return NULL;
	}
	mutex_init(&s->lock);
	mutex_init(&s->read_lock);
	init_waitqueue_head(&s->wait);
	init_irq_work(&s->wake, amupmu_sess_wake);
	INIT_LIST_HEAD(&s->perf_node);
	spin_lock(&amupmu_sessions_lock);
	list_add(&s->node, &amupmu_sessions);
	spin_unlock(&amupmu_sessions_lock);
	return s;
}

/* The session's SPE configuration slot, for amupmu_spe.c. */
struct amupmu_spe_sess **amupmu_session_spe(struct amupmu_session *s)
{
	return &s->spe;
}

bool *amupmu_session_amu_perfmon(struct amupmu_session *s)
{
	return &s->amu_perfmon;
}

/**
 * amupmu_session_free() - free a session at release (or a failed open)
 * @s: the session, NULL allowed; its PMU group already released
 *	(amupmu_pmu_file_release())
 */
void amupmu_session_free(struct amupmu_session *s)
{
	if (!s)
		return;
	/* a group's counters and callbacks still point here: leak, not free */
	if (WARN_ON_ONCE(s->configured))
		return;
	spin_lock(&amupmu_sessions_lock);
	list_del(&s->node);
	spin_unlock(&amupmu_sessions_lock);
	/* no counter of the session runs: only a queued wake-up may be left */
	irq_work_sync(&s->wake);
	/* the ring's locked-memory charge goes with its last mapping */
	amupmu_ring_put(s->ring);
	mutex_destroy(&s->read_lock);
	mutex_destroy(&s->lock);
	free_cpumask_var(s->scratch);
	free_cpumask_var(s->cpus);
	kfree(s);
}

/**
 * amupmu_cpuset_from_user() - a CPU set of the ABI into a cpumask
 * @mask: gets the set's CPUs (bits are only set)
 * @uptr: user pointer to the bitmap of __u64 words
 * @len: its bytes: a multiple of 8 from 8 to AMUPMU_CPUS_LEN_MAX
 *
 * Return: 0; -EINVAL for a bad @len or an empty set; -ENODEV for a CPU that
 * is not possible; -EFAULT, -ENOMEM.
 */
int amupmu_cpuset_from_user(struct cpumask *mask, u64 uptr, u32 len)
{
	unsigned long *bits;
	unsigned int cpu, nbits = len * BITS_PER_BYTE;
	int ret = 0;

	if (!len || len % sizeof(u64) || len > AMUPMU_CPUS_LEN_MAX)
		return -EINVAL;
	bits = bitmap_zalloc(nbits, GFP_KERNEL);
	if (!bits)
		return -ENOMEM;
	if (copy_from_user(bits, u64_to_user_ptr(uptr), len)) {
		ret = -EFAULT;
		goto out;
	}
	if (bitmap_empty(bits, nbits)) {
		ret = -EINVAL;
		goto out;
	}
	for_each_set_bit(cpu, bits, nbits) {
		if (cpu >= nr_cpu_ids || !cpu_possible(cpu)) {
			ret = -ENODEV;
			goto out;
		}
		cpumask_set_cpu(cpu, mask);
	}
out:
	bitmap_free(bits);
	return ret;
}

/**
 * amupmu_session_ring() - give a sampling group its ring
 * @s: the session
 * @pages: data pages of the ring (a power of 2)
 *
 * The session's own ring when it has the size asked for (emptied), else a
 * new one, charged to the caller's locked memory (ENOMEM beyond
 * RLIMIT_MEMLOCK; the old ring's charge goes with its last reference);
 * EBUSY while a ring of another size is mapped. Under s->lock. Changes
 * nothing on error.
 *
 * Return: 0, -EBUSY or -ENOMEM.
 */
int amupmu_session_ring(struct amupmu_session *s, unsigned int pages)
{
	struct amupmu_ring *r;

	if (s->ring && amupmu_ring_pages(s->ring) == pages) {
		amupmu_ring_reset(s->ring);
		return 0;
	}
	if (s->ring && amupmu_ring_mapped(s->ring))
		return -EBUSY;
	r = amupmu_ring_alloc(pages);
	if (!r)
		return -ENOMEM;
	amupmu_ring_put(s->ring);
	WRITE_ONCE(s->ring, r);
	/* a reader waiting on the old ring looks again */
	wake_up_interruptible_all(&s->wait);
	return 0;
}

/* ------------------------------------------------------------ sample ring: read, poll, mmap */

/* The session's ring with a reference, or NULL when it has none. */
static struct amupmu_ring *amupmu_sess_ring_get(struct amupmu_session *s)
{
	struct amupmu_ring *r;

	mutex_lock(&s->lock);
	r = s->ring;
	if (r)
		amupmu_ring_get(r);
	mutex_unlock(&s->lock);
	return r;
}

/**
 * amupmu_session_read() - read(): whole sample records
 * @s: the session
 * @buf: user buffer
 * @count: its size
 * @nonblock: O_NONBLOCK: EAGAIN instead of waiting for a record
 *
 * Return: bytes read, or -EINVAL (no ring, or the next record does not fit
 * in @count), -EAGAIN, -ERESTARTSYS, -EIO (the mapped tail was corrupted),
 * -EFAULT, -ENXIO (the ring is empty and its group went with the device).
 */
ssize_t amupmu_session_read(struct amupmu_session *s, char __user *buf, size_t count,
			    bool nonblock)
{
	struct amupmu_ring *r;
	ssize_t ret;

	if (mutex_lock_interruptible(&s->read_lock))
		return -ERESTARTSYS;
	do {
		r = amupmu_sess_ring_get(s);
		if (!r) {
			ret = -EINVAL;
			break;
		}
		ret = amupmu_ring_read(r, buf, count);
		if (!ret && amupmu_sess_stale(s))
			ret = -ENXIO;	/* empty, and its group went with the device */
		else if (!ret && nonblock)
			ret = -EAGAIN;
		else if (!ret)
			/* 0: a record came, the ring was replaced or the group went: look again */
			ret = wait_event_interruptible(s->wait, !amupmu_ring_empty(r) ||
						       READ_ONCE(s->ring) != r ||
						       amupmu_sess_stale(s));
		amupmu_ring_put(r);
	} while (!ret);
	mutex_unlock(&s->read_lock);
	return ret;
}

/**
 * amupmu_session_poll() - poll(): EPOLLIN while the ring holds a record
 * @s: the session
 * @filp: its file
 * @wait: the poll table
 *
 * Return: the poll mask; EPOLLERR when the session has no ring.
 */
__poll_t amupmu_session_poll(struct amupmu_session *s, struct file *filp,
			     struct poll_table_struct *wait)
{
	struct amupmu_ring *r;
	__poll_t mask;

	/*
	 * Queued whether or not a ring exists yet: an epoll entry added before
	 * the first sampling CONFIG is never registered again, and must hear
	 * the samples of the ring that CONFIG makes
	 */
	poll_wait(filp, &s->wait, wait);
	/* queued before looking: pairs with wq_has_sleeper() in amupmu_sess_sample() */
	smp_mb();
	r = amupmu_sess_ring_get(s);
	if (!r)
		return EPOLLERR;
	mask = amupmu_ring_empty(r) ? 0 : EPOLLIN | EPOLLRDNORM;
	if (amupmu_sess_stale(s))
		mask |= EPOLLHUP;
	amupmu_ring_put(r);
	return mask;
}

/**
 * amupmu_session_mmap() - mmap() of the session's ring
 * @s: the session
 * @vma: the mapping (see amupmu_ring_mmap())
 *
 * Return: 0, or -EINVAL when the session has no ring or the mapping has
 * another shape.
 */
int amupmu_session_mmap(struct amupmu_session *s, struct vm_area_struct *vma)
{
	int ret = -EINVAL;

	mutex_lock(&s->lock);
	if (s->ring)
		ret = amupmu_ring_mmap(s->ring, vma);
	mutex_unlock(&s->lock);
	return ret;
}
