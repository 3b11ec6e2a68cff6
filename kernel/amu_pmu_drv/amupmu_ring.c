// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: the sample ring of a sampling session.
 *
 * One header page (struct amupmu_ring_header) and a power-of-two data area,
 * vmalloc_user() memory that user space may map. Records are written by
 * the overflow interrupt of any CPU of the session (under the ring's raw
 * lock, never sleeping, never allocating) and consumed either through the
 * mapping or by read() (amupmu_ring_read()).
 *
 * The kernel never trusts the mapped header: it keeps its own head and
 * only reads data_tail, which user space owns; a tail that does not make
 * sense makes the ring look full to the writer (samples are counted as
 * lost) and makes read() fail with EIO.
 *
 * The ring is reference counted: the session, each mapping and a read() in
 * progress hold a reference, so a ring that is replaced or whose session
 * goes away lives until the last of them lets go. That memory management
 * (struct amupmu_mbuf) also serves the SPE profiling buffers.
 *
 * Locked memory: a buffer is charged to its creator's user
 * (user_struct.locked_vm, the count io_uring, AF_XDP/zerocopy and vfio
 * charge against RLIMIT_MEMLOCK) before it is allocated, and uncharged
 * when its last reference goes, with the memory: as long as a mapping
 * pins it. The mappings are VM_DONTCOPY, as perf's; a caller that clears
 * that with madvise(MADV_DOFORK) gives its child a copy that takes its own
 * reference (vm_ops->open), the charge staying with the creator.
 *
 * The charge is an atomic counter, not account_locked_vm(): the last
 * reference may go in vm_ops->close, under the mmap_lock held for writing,
 * and from any task (the delayed fput). The user_struct is kept
 * through a reference to the creator's struct cred (get_current_cred(),
 * put_cred()), not get_current_user()/free_uid(): free_uid() is exported
 * only from some 6.1 stable updates on (Debian's 6.1.0-50 lacks it).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/clocksource.h>
#include <linux/timekeeping.h>
#include <asm/arch_timer.h>
#include <asm/virt.h>

#include "amupmu.h"
#include "amupmu_compat.h"

/**
 * struct amupmu_ring - a sample ring
 * @mb: its memory: header page and data area, references and mappings
 *	(the session, each mapping and a read() in progress hold one)
 * @lock: serialises writers (the interrupt handlers of the session's CPUs)
 * @hdr: the header page, shared with user space
 * @data: the data area, right after @hdr
 * @size: bytes of @data, a power of two
 * @head: bytes written, the kernel's own copy (published to @hdr)
 * @samples: records written
 * @lost: records dropped because the ring was full
 */
struct amupmu_ring {
	struct amupmu_mbuf mb;
	raw_spinlock_t lock;
	struct amupmu_ring_header *hdr;
	u8 *data;
	u64 size;
	u64 head;
	u64 samples;
	u64 lost;
};

/* ------------------------------------------------------------ mappable buffers */

/*
 * user_struct.locked_vm exists with CONFIG_NET (among others), which the
 * netlink family needs anyway.
 */
#ifndef CONFIG_NET
#error "amupmu needs CONFIG_NET (netlink; user_struct.locked_vm)"
#endif

/*
 * Charge @pages to @user's locked memory: ENOMEM beyond RLIMIT_MEMLOCK,
 * unless the caller has CAP_IPC_LOCK (charged all the same, so that the
 * uncharge is unconditional). io_uring's __io_account_mem(): atomic, no
 * lock, the limit is the caller's.
 */
static int amupmu_mem_charge(struct user_struct *user, unsigned long pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	long cur, new;

	if (capable(CAP_IPC_LOCK)) {
		atomic_long_add(pages, &user->locked_vm);
		return 0;
	}
	cur = atomic_long_read(&user->locked_vm);
	do {
		new = cur + pages;
		if ((unsigned long)new > limit)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
	return 0;
}

/* Any context that may free: no lock, no capability check. */
static void amupmu_mem_uncharge(const struct cred *cred, unsigned long pages)
{
	atomic_long_sub(pages, &cred->user->locked_vm);
	put_cred(cred);
}

/**
 * amupmu_mbuf_init() - a header page and @pages data pages user space may map
 * @mb: the buffer, embedded in its owner's struct
 * @pages: data pages
 * @free: frees the owner once the last reference goes (after the memory)
 *
 * The 1 + @pages pages are charged to the calling user's locked memory
 * first (RLIMIT_MEMLOCK, CAP_IPC_LOCK lifts it), then allocated:
 * vmalloc_user() memory, zeroed, virtually contiguous in the kernel (the
 * SPE profiling buffer writes to that address), mappable with
 * remap_vmalloc_range(). One reference, the caller's; the charge goes
 * with the last one. Takes no lock.
 *
 * Return: 0 or -ENOMEM (beyond the limit, or no memory).
 */
int amupmu_mbuf_init(struct amupmu_mbuf *mb, unsigned int pages,
		     void (*free)(struct amupmu_mbuf *mb))
{
	const struct cred *cred = get_current_cred();

	if (amupmu_mem_charge(cred->user, (unsigned long)pages + 1)) {
		put_cred(cred);
		return -ENOMEM;
	}
	mb->base = vmalloc_user(((size_t)pages + 1) << PAGE_SHIFT);
	if (!mb->base) {
		amupmu_mem_uncharge(cred, (unsigned long)pages + 1);
		return -ENOMEM;
	}
	kref_init(&mb->ref);
	atomic_set(&mb->mmaps, 0);
	mb->pages = pages;
	mb->cred = cred;
	mb->free = free;
	return 0;
}

/* The last reference: from vm_ops->close (mmap_lock held) too. */
static void amupmu_mbuf_release(struct kref *ref)
{
	struct amupmu_mbuf *mb = container_of(ref, struct amupmu_mbuf, ref);

	vfree(mb->base);
	amupmu_mem_uncharge(mb->cred, (unsigned long)mb->pages + 1);
	mb->free(mb);
}

void amupmu_mbuf_get(struct amupmu_mbuf *mb)
{
	kref_get(&mb->ref);
}

void amupmu_mbuf_put(struct amupmu_mbuf *mb)
{
	if (mb)
		kref_put(&mb->ref, amupmu_mbuf_release);
}

bool amupmu_mbuf_mapped(const struct amupmu_mbuf *mb)
{
	return atomic_read(&mb->mmaps) > 0;
}

static void amupmu_mbuf_vm_open(struct vm_area_struct *vma)
{
	struct amupmu_mbuf *mb = vma->vm_private_data;

	amupmu_mbuf_get(mb);
	atomic_inc(&mb->mmaps);
}

static void amupmu_mbuf_vm_close(struct vm_area_struct *vma)
{
	struct amupmu_mbuf *mb = vma->vm_private_data;

	atomic_dec(&mb->mmaps);
	amupmu_mbuf_put(mb);
}

static const struct vm_operations_struct amupmu_mbuf_vm_ops = {
	.open = amupmu_mbuf_vm_open,
	.close = amupmu_mbuf_vm_close,
};

/**
 * amupmu_mbuf_mmap() - map the whole buffer: header page and data
 * @mb: the buffer
 * @vma: the mapping: at file page offset @pgoff, length (1 + pages) pages,
 *	shared, not executable
 * @pgoff: the page offset the buffer lives at in the file
 *
 * VM_DONTCOPY, as perf's mappings: a fork()ed child does not inherit the
 * mapping unless madvise(MADV_DOFORK) asked for it (then the copy holds
 * its own reference, vm_ops->open); remap_vmalloc_range() adds
 * VM_DONTEXPAND and VM_DONTDUMP.
 *
 * Return: 0, or -EINVAL for any other shape of mapping.
 */
int amupmu_mbuf_mmap(struct amupmu_mbuf *mb, struct vm_area_struct *vma, unsigned long pgoff)
{
	int ret;

	if (vma->vm_pgoff != pgoff ||
	    vma->vm_end - vma->vm_start != ((u64)mb->pages + 1) << PAGE_SHIFT ||
	    !(vma->vm_flags & VM_SHARED) || vma->vm_flags & VM_EXEC)
		return -EINVAL;
	amupmu_vm_flags_clear(vma, VM_MAYEXEC);
	amupmu_vm_flags_set(vma, VM_DONTCOPY);
	ret = remap_vmalloc_range(vma, mb->base, 0);
	if (ret)
		return ret;
	vma->vm_private_data = mb;
	vma->vm_ops = &amupmu_mbuf_vm_ops;
	amupmu_mbuf_vm_open(vma);
	return 0;
}

/* ------------------------------------------------------------ the sample ring */

/*
 * The clock fields of the header: which count amupmu_sample.time is, and
 * its conversion to CLOCK_MONOTONIC_RAW. ktime_get_snapshot() reads the
 * clocksource (arch_timer_read_counter(), the count samples take) and the
 * raw clock at one instant; mult/shift are those of the counter's
 * frequency, for deltas of up to an hour at full precision.
 */
static void amupmu_ring_clock(struct amupmu_ring_header *hdr)
{
	struct system_time_snapshot snap;
	u32 mult, shift;

	clocks_calc_mult_shift(&mult, &shift, arch_timer_get_cntfrq(), NSEC_PER_SEC, 3600);
	ktime_get_snapshot(&snap);
	hdr->clock = is_kernel_in_hyp_mode() ? AMUPMU_CLOCK_CNTPCT : AMUPMU_CLOCK_CNTVCT;
	hdr->time_mult = mult;
	hdr->time_shift = shift;
	hdr->time_zero = snap.cycles;
	hdr->time_zero_ns = ktime_to_ns(snap.raw);
}

static void amupmu_ring_free(struct amupmu_mbuf *mb)
{
	kfree(container_of(mb, struct amupmu_ring, mb));
}

struct amupmu_ring *amupmu_ring_alloc(unsigned int pages)
{
	struct amupmu_ring *r = kzalloc(sizeof(*r), GFP_KERNEL);

	if (!r)
		return NULL;
	if (amupmu_mbuf_init(&r->mb, pages, amupmu_ring_free)) {
		kfree(r);
		return NULL;
	}
	raw_spin_lock_init(&r->lock);
	r->hdr = r->mb.base;
	r->data = (u8 *)r->hdr + PAGE_SIZE;
	r->size = (u64)pages << PAGE_SHIFT;
	r->hdr->version = AMUPMU_RING_VERSION;
	r->hdr->header_size = sizeof(*r->hdr);
	r->hdr->data_offset = PAGE_SIZE;
	r->hdr->data_size = r->size;
	r->hdr->timer_freq = arch_timer_get_cntfrq();
	amupmu_ring_clock(r->hdr);
	return r;
}

void amupmu_ring_get(struct amupmu_ring *r)
{
	amupmu_mbuf_get(&r->mb);
}

void amupmu_ring_put(struct amupmu_ring *r)
{
	if (r)
		amupmu_mbuf_put(&r->mb);
}

unsigned int amupmu_ring_pages(const struct amupmu_ring *r)
{
	return r->mb.pages;
}

bool amupmu_ring_mapped(const struct amupmu_ring *r)
{
	return amupmu_mbuf_mapped(&r->mb);
}

/* Empty the ring for a new group. No writer may run (no group uses it). */
void amupmu_ring_reset(struct amupmu_ring *r)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&r->lock, flags);
	WRITE_ONCE(r->head, 0);
	r->samples = 0;
	r->lost = 0;
	WRITE_ONCE(r->hdr->samples, 0);
	WRITE_ONCE(r->hdr->lost, 0);
	WRITE_ONCE(r->hdr->data_tail, 0);
	/* a reader of the mapping sees the counts reset with the head */
	smp_store_release(&r->hdr->data_head, 0);
	raw_spin_unlock_irqrestore(&r->lock, flags);
}

/**
 * amupmu_ring_write() - append one record, from the interrupt handler
 * @r: the ring
 * @rec: the record
 * @len: its size, a multiple of 8, at most a page
 *
 * Return: true when written, false when the ring was full (counted lost).
 */
bool amupmu_ring_write(struct amupmu_ring *r, const void *rec, u32 len)
{
	u64 tail, used, off, first;
	bool ok = false;

	raw_spin_lock(&r->lock);
	/* pairs with the reader's release: it is done with what it consumed */
	tail = smp_load_acquire(&r->hdr->data_tail);
	used = r->head - tail;
	if (used <= r->size && r->size - used >= len) {
		off = r->head & (r->size - 1);
		first = min_t(u64, len, r->size - off);
		memcpy(r->data + off, rec, first);
		memcpy(r->data, (const u8 *)rec + first, len - first);
		r->samples++;
		WRITE_ONCE(r->hdr->samples, r->samples);
		/* the record is in place before the head moves past it */
		smp_store_release(&r->head, r->head + len);
		/* and for the mapped reader, through the header */
		smp_store_release(&r->hdr->data_head, r->head);
		ok = true;
	} else {
		r->lost++;
		WRITE_ONCE(r->hdr->lost, r->lost);
	}
	raw_spin_unlock(&r->lock);
	return ok;
}

/* The kernel's head, with the records before it visible: no lock needed. */
static u64 amupmu_ring_head(struct amupmu_ring *r)
{
	/* pairs with the writer's release */
	return smp_load_acquire(&r->head);
}

bool amupmu_ring_empty(struct amupmu_ring *r)
{
	return amupmu_ring_head(r) == READ_ONCE(r->hdr->data_tail);
}

/* Copy @len ring bytes from offset @pos (modulo the size) to user space. */
static int amupmu_ring_copy_out(struct amupmu_ring *r, char __user *buf, u64 pos, u64 len)
{
	u64 off = pos & (r->size - 1), first = min_t(u64, len, r->size - off);

	if (copy_to_user(buf, r->data + off, first) ||
	    copy_to_user(buf + first, r->data, len - first))
		return -EFAULT;
	return 0;
}

/**
 * amupmu_ring_read() - read(): move whole records to user space
 * @r: the ring (a reference is held; readers are serialised by the caller)
 * @buf: user buffer
 * @count: its size
 *
 * Return: bytes copied, 0 when the ring is empty, -EINVAL when the next
 * record does not fit in @count, -EIO when the tail in the mapped header
 * does not make sense, -EFAULT.
 */
ssize_t amupmu_ring_read(struct amupmu_ring *r, char __user *buf, size_t count)
{
	u64 head = amupmu_ring_head(r), tail = READ_ONCE(r->hdr->data_tail), start = tail;
	ssize_t ret = 0;
	u32 len;

	if (head - tail > r->size || tail & 7)
		return -EIO;
	while (tail != head) {
		/* records are 8-byte aligned: their size field never wraps */
		len = READ_ONCE(*(u32 *)(r->data + (tail & (r->size - 1))));
		if (len < sizeof(struct amupmu_sample) || len & 7 || len > head - tail) {
			ret = -EIO;
			break;
		}
		if (tail - start + len > count) {
			if (tail == start)
				ret = -EINVAL;
			break;
		}
		ret = amupmu_ring_copy_out(r, buf + (tail - start), tail, len);
		if (ret)
			break;
		tail += len;
	}
	if (tail != start) {
		/* pairs with the writer's acquire: the bytes may be reused */
		smp_store_release(&r->hdr->data_tail, tail);
		return tail - start;
	}
	return ret;
}

/**
 * amupmu_ring_mmap() - map the whole ring: header page and data
 * @r: the ring
 * @vma: offset 0, length (1 + pages) pages, shared, not executable
 *
 * Return: 0, or -EINVAL for any other shape of mapping.
 */
int amupmu_ring_mmap(struct amupmu_ring *r, struct vm_area_struct *vma)
{
	return amupmu_mbuf_mmap(&r->mb, vma, 0);
}
