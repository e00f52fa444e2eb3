// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: the page store and the I/O path.
 *
 * Each page of the device has a slot (struct hzram_slot) with a sleepable
 * bit lock. Requests are served synchronously in ->queue_rq (the queue is
 * BLK_MQ_F_BLOCKING): a write locks the slot, takes the CPU's compression
 * stream, compresses and commits; a read locks the slot and decodes.
 * Lock order: slot lock, then stream mutex, then zsmalloc mapping.
 *
 * hzram_slot_install() is the single place where encoded page data enters
 * the store; pages compressed outside the kernel will come in there too.
 */
#include "hzram.h"

#include <linux/highmem.h>
#include <linux/sched/mm.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>

/* Slot lock: a bit in the flags word; sleeps, like a mutex, when held. */
static void hzram_slot_lock(struct hzram *hz, u32 index)
{
	wait_on_bit_lock(&hz->table[index].flags, HZRAM_SLOT_LOCK,
			 TASK_UNINTERRUPTIBLE);
}

static bool hzram_slot_trylock(struct hzram *hz, u32 index)
{
	return !test_and_set_bit_lock(HZRAM_SLOT_LOCK, &hz->table[index].flags);
}

static void hzram_slot_unlock(struct hzram *hz, u32 index)
{
	clear_and_wake_up_bit(HZRAM_SLOT_LOCK, &hz->table[index].flags);
}

/* The accessors below need the slot lock. */
static bool hzram_slot_test(struct hzram *hz, u32 index,
			    enum hzram_slot_bit bit)
{
	return test_bit(bit, &hz->table[index].flags);
}

static unsigned int hzram_slot_size(struct hzram *hz, u32 index)
{
	return hz->table[index].flags & HZRAM_SIZE_MASK;
}

/* Non-atomic updates are safe: the lock holder alone changes these bits. */
static void hzram_slot_set(struct hzram *hz, u32 index, unsigned long handle,
			   unsigned int size, unsigned long bits)
{
	struct hzram_slot *slot = &hz->table[index];
	unsigned long keep = slot->flags & BIT(HZRAM_SLOT_LOCK);

	slot->handle = handle;
	WRITE_ONCE(slot->flags, keep | bits | size);
}

static void hzram_update_used_max(struct hzram *hz, unsigned long pages)
{
	unsigned long cur = atomic_long_read(&hz->stats.max_used_pages);

	do {
		if (pages <= cur)
			return;
	} while (!atomic_long_try_cmpxchg(&hz->stats.max_used_pages, &cur,
					  pages));
}

/* Free what slot @index holds and account for it; the slot lock is held. */
static void hzram_slot_free(struct hzram *hz, u32 index)
{
	struct hzram_slot *slot = &hz->table[index];

	if (hzram_slot_test(hz, index, HZRAM_SLOT_SAME)) {
		atomic64_dec(&hz->stats.same_pages);
		atomic64_dec(&hz->stats.pages_stored);
	} else if (slot->handle) {
		if (hzram_slot_test(hz, index, HZRAM_SLOT_HUGE))
			atomic64_dec(&hz->stats.huge_pages);
		zs_free(hz->mem_pool, slot->handle);
		atomic64_sub(hzram_slot_size(hz, index),
			     &hz->stats.compr_data_size);
		atomic64_dec(&hz->stats.pages_stored);
	}
	hzram_slot_set(hz, index, 0, 0, 0);
}

static void hzram_slot_store_same(struct hzram *hz, u32 index,
				  unsigned long word)
{
	hzram_slot_free(hz, index);
	hzram_slot_set(hz, index, word, 0, BIT(HZRAM_SLOT_SAME));
	atomic64_inc(&hz->stats.same_pages);
	atomic64_inc(&hz->stats.pages_stored);
}

/*
 * Allocations on the I/O path first only wake kswapd: the path may be
 * serving reclaim (swap-out), and must not sleep in the allocator while it
 * holds a compression stream, which every writer on its CPU needs.
 */
#define HZRAM_GFP	(__GFP_KSWAPD_RECLAIM | __GFP_NOWARN | __GFP_HIGHMEM | \
			 __GFP_MOVABLE)
/* Once it holds no stream, a write that is not a swap-out may wait. */
#define HZRAM_GFP_WAIT	(GFP_NOIO | __GFP_NOWARN | __GFP_HIGHMEM | __GFP_MOVABLE)

/*
 * Allocate @len bytes without sleeping. A swap-out that cannot have them
 * at once may use the memory reserves, as reclaim itself does: storing the
 * page lets the kernel free it.
 */
static unsigned long hzram_zs_alloc_nowait(struct hzram *hz, unsigned int len,
					   bool swap)
{
	unsigned long handle;
	unsigned int flags;

	handle = zs_malloc(hz->mem_pool, len, HZRAM_GFP);
	if (!IS_ERR_VALUE(handle) || !swap)
		return handle;
	flags = memalloc_noreclaim_save();
	handle = zs_malloc(hz->mem_pool, len, HZRAM_GFP);
	memalloc_noreclaim_restore(flags);
	return handle;
}

/*
 * Put @len bytes of encoded page data in the object @handle (of @len
 * bytes) and make it slot @index's content, freeing the previous one. The
 * caller holds the slot lock. Enforces mem_limit: past it, @handle is
 * freed, the slot is unchanged and -ENOMEM returned.
 */
static int hzram_slot_install(struct hzram *hz, u32 index, unsigned long handle,
			      const void *data, unsigned int len)
{
	unsigned long used = zs_get_total_pages(hz->mem_pool);
	unsigned long limit = READ_ONCE(hz->limit_pages);

	hzram_update_used_max(hz, used);
	if (limit && used > limit) {
		zs_free(hz->mem_pool, handle);
		return -ENOMEM;
	}
	hzram_zs_write(hz->mem_pool, handle, data, len);
	hzram_slot_free(hz, index);
	if (len == PAGE_SIZE) {
		hzram_slot_set(hz, index, handle, len, BIT(HZRAM_SLOT_HUGE));
		atomic64_inc(&hz->stats.huge_pages);
		atomic64_inc(&hz->stats.huge_pages_since);
	} else {
		hzram_slot_set(hz, index, handle, len, 0);
	}
	atomic64_add(len, &hz->stats.compr_data_size);
	atomic64_inc(&hz->stats.pages_stored);
	return 0;
}

static bool hzram_page_same_filled(const void *ptr, unsigned long *word)
{
	const unsigned long *p = ptr;
	const unsigned int last = PAGE_SIZE / sizeof(*p) - 1;
	unsigned long val = p[0];
	unsigned int i;

	if (val != p[last])
		return false;
	for (i = 1; i < last; i++)
		if (p[i] != val)
			return false;
	*word = val;
	return true;
}

/* Decode slot @index into @dst (PAGE_SIZE bytes); the slot lock is held. */
static int __hzram_load(struct hzram *hz, u32 index, void *dst)
{
	struct hzram_slot *slot = &hz->table[index];
	unsigned int len = hzram_slot_size(hz, index);
	const void *src;
	int ret = 0;

	if (hzram_slot_test(hz, index, HZRAM_SLOT_SAME) || !slot->handle) {
		/* An unwritten page reads as zeros. */
		memset_l(dst, slot->handle, PAGE_SIZE / sizeof(unsigned long));
		return 0;
	}
	src = hzram_zs_read_begin(hz->mem_pool, slot->handle);
	if (len == PAGE_SIZE)
		memcpy(dst, src, PAGE_SIZE);
	else
		ret = hzram_comp_decompress(hz->comp, src, len, dst);
	hzram_zs_read_end(hz->mem_pool, slot->handle);
	if (ret)
		pr_err_ratelimited("%s: page %u does not decompress\n",
				   hz->disk->disk_name, index);
	return ret;
}

/* What the I/O path needs to know about the request it serves. */
struct hzram_io {
	bool write;
	bool swap;	/* REQ_SWAP: see hzram_zs_alloc_nowait() */
};

/*
 * Write @len bytes from @mem at byte @off of page @index; the caller holds
 * the slot lock. A sub-page write merges into the stored page in the
 * stream's scratch page first. When memory is short and the write is not
 * a swap-out, it lets go of the stream, waits for an object of the size it
 * needs, and does it all again (the same bytes compress to the same size).
 */
static int hzram_write_locked(struct hzram *hz, u32 index, unsigned int off,
			      const void *mem, unsigned int len, bool swap)
{
	unsigned long waited = 0;	/* an object allocated while waiting */
	unsigned int waited_len = 0;
	int ret;

	for (;;) {
		struct hzram_strm *strm = hzram_strm_get(hz->comp);
		const void *src = mem, *data;
		unsigned long word, handle;
		unsigned int clen;

		if (len != PAGE_SIZE) {
			ret = __hzram_load(hz, index, strm->scratch);
			if (ret)
				goto out_put;
			memcpy(strm->scratch + off, mem, len);
			src = strm->scratch;
		}
		if (hzram_page_same_filled(src, &word)) {
			hzram_slot_store_same(hz, index, word);
			ret = 0;
			goto out_put;
		}
		ret = hzram_comp_compress(strm, src, &clen);
		if (ret) {
			pr_err_ratelimited("%s: compression failed: %d\n",
					   hz->disk->disk_name, ret);
			goto out_put;
		}
		/* Pages that do not compress below the huge class go in raw. */
		if (clen >= hz->huge_class_size) {
			data = src;
			clen = PAGE_SIZE;
		} else {
			data = strm->buffer;
		}

		if (waited && waited_len == clen) {
			handle = waited;
		} else {
			if (waited)
				zs_free(hz->mem_pool, waited);
			handle = hzram_zs_alloc_nowait(hz, clen, swap);
		}
		waited = 0;
		if (!IS_ERR_VALUE(handle)) {
			ret = hzram_slot_install(hz, index, handle, data, clen);
			goto out_put;
		}
		atomic64_inc(&hz->stats.writestall);
		if (swap) {
			ret = -ENOMEM;	/* the page stays in memory */
			goto out_put;
		}
		hzram_strm_put(strm);
		handle = zs_malloc(hz->mem_pool, clen, HZRAM_GFP_WAIT);
		if (IS_ERR_VALUE(handle))
			return -ENOMEM;
		waited = handle;
		waited_len = clen;
		continue;
out_put:
		hzram_strm_put(strm);
		return ret;
	}
}

/*
 * Read or write @len bytes at byte @off of device page @index, from or to
 * @page at @page_off, under the slot lock: writes to other parts of the
 * page are never lost.
 */
static int hzram_rw_page(struct hzram *hz, u32 index, unsigned int off,
			 struct page *page, unsigned int page_off,
			 unsigned int len, const struct hzram_io *io)
{
	void *mem = kmap_local_page(page) + page_off;
	struct hzram_strm *strm;
	int ret;

	hzram_slot_lock(hz, index);
	if (io->write) {
		ret = hzram_write_locked(hz, index, off, mem, len, io->swap);
	} else if (len == PAGE_SIZE) {
		ret = __hzram_load(hz, index, mem);
	} else {
		strm = hzram_strm_get(hz->comp);
		ret = __hzram_load(hz, index, strm->scratch);
		if (!ret)
			memcpy(mem, strm->scratch + off, len);
		hzram_strm_put(strm);
	}
	hzram_slot_unlock(hz, index);
	kunmap_local(mem);
	return ret;
}

static int hzram_rw_bvec(struct hzram *hz, const struct bio_vec *bv,
			 u64 pos, const struct hzram_io *io)
{
	unsigned int done = 0;

	while (done < bv->bv_len) {
		u32 index = pos >> PAGE_SHIFT;
		unsigned int off = offset_in_page(pos);
		unsigned int len = min_t(unsigned int, bv->bv_len - done,
					 PAGE_SIZE - off);
		int ret;

		ret = hzram_rw_page(hz, index, off, bv->bv_page,
				    bv->bv_offset + done, len, io);
		if (ret)
			return ret;
		done += len;
		pos += len;
	}
	return 0;
}

/* Zero @len bytes at byte @off of page @index (a sub-page write of zeros). */
static int hzram_zero_partial(struct hzram *hz, u32 index, unsigned int off,
			      unsigned int len)
{
	static const struct hzram_io io = { .write = true };

	return hzram_rw_page(hz, index, off, ZERO_PAGE(0), 0, len, &io);
}

/*
 * Discard frees the whole pages in the range; the partial pages at its
 * ends keep their data. Write-zeroes also zeroes those partial pages.
 */
static int hzram_free_range(struct hzram *hz, u64 pos, u64 len, bool zero)
{
	u64 end = pos + len;
	u32 index;
	int ret;

	if (offset_in_page(pos)) {
		u64 head_end = min_t(u64, end, round_up(pos + 1, PAGE_SIZE));

		if (zero) {
			ret = hzram_zero_partial(hz, pos >> PAGE_SHIFT,
						 offset_in_page(pos),
						 head_end - pos);
			if (ret)
				return ret;
		}
		pos = head_end;
	}
	for (index = pos >> PAGE_SHIFT; pos + PAGE_SIZE <= end;
	     index++, pos += PAGE_SIZE) {
		hzram_slot_lock(hz, index);
		hzram_slot_free(hz, index);
		hzram_slot_unlock(hz, index);
		cond_resched();
	}
	if (pos < end && zero)
		return hzram_zero_partial(hz, index, 0, end - pos);
	return 0;
}

static blk_status_t hzram_handle_rq(struct hzram *hz, struct request *rq)
{
	u64 pos = (u64)blk_rq_pos(rq) << SECTOR_SHIFT;
	u64 bytes = blk_rq_bytes(rq);
	struct hzram_io io = {
		.write = op_is_write(req_op(rq)),
		.swap = rq->cmd_flags & REQ_SWAP,
	};
	struct req_iterator iter;
	struct bio_vec bv;
	int ret = 0;

	if (req_op(rq) == REQ_OP_FLUSH)
		return BLK_STS_OK;
	if (unlikely(!hzram_init_done(hz) || pos + bytes > hz->disksize)) {
		atomic64_inc(&hz->stats.invalid_io);
		return BLK_STS_IOERR;
	}

	switch (req_op(rq)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		rq_for_each_segment(bv, rq, iter) {
			ret = hzram_rw_bvec(hz, &bv, pos, &io);
			if (ret)
				break;
			pos += bv.bv_len;
		}
		break;
	case REQ_OP_DISCARD:
		ret = hzram_free_range(hz, pos, bytes, false);
		break;
	case REQ_OP_WRITE_ZEROES:
		ret = hzram_free_range(hz, pos, bytes, true);
		break;
	default:
		return BLK_STS_NOTSUPP;
	}
	if (ret) {
		/* Out of memory or past mem_limit included: an I/O error. */
		atomic64_inc(io.write ? &hz->stats.failed_writes :
					&hz->stats.failed_reads);
		return BLK_STS_IOERR;
	}
	return BLK_STS_OK;
}

static blk_status_t hzram_queue_rq(struct blk_mq_hw_ctx *hctx,
				   const struct blk_mq_queue_data *bd)
{
	struct hzram *hz = hctx->queue->queuedata;
	struct request *rq = bd->rq;

	blk_mq_start_request(rq);
	blk_mq_end_request(rq, hzram_handle_rq(hz, rq));
	return BLK_STS_OK;
}

/* A plug's worth of requests at once: cheaper than one ->queue_rq each. */
static void hzram_queue_rqs(hzram_rq_list *rqlist)
{
	struct request *rq;

	while ((rq = rq_list_pop(rqlist))) {
		blk_mq_start_request(rq);
		blk_mq_end_request(rq, hzram_handle_rq(rq->q->queuedata, rq));
	}
}

const struct blk_mq_ops hzram_mq_ops = {
	.queue_rq	= hzram_queue_rq,
	.queue_rqs	= hzram_queue_rqs,
};

/*
 * Swap tells us a slot is free before it rewrites it: free it now. Called
 * under the swap device's spinlock, so only try the slot lock.
 */
void hzram_slot_free_notify(struct block_device *bdev, unsigned long index)
{
	struct hzram *hz = bdev->bd_disk->private_data;

	atomic64_inc(&hz->stats.notify_free);
	if (!hzram_slot_trylock(hz, index)) {
		atomic64_inc(&hz->stats.miss_free);
		return;
	}
	hzram_slot_free(hz, index);
	hzram_slot_unlock(hz, index);
}

/**
 * hzram_meta_alloc() - allocate the slot table and the store
 * @hz: the device; the caller holds init_lock for writing
 * @disksize: bytes, a multiple of PAGE_SIZE
 *
 * Return: 0 or -ENOMEM.
 */
int hzram_meta_alloc(struct hzram *hz, u64 disksize)
{
	size_t pages = disksize >> PAGE_SHIFT;

	lockdep_assert_held_write(&hz->init_lock);
	hz->table = __vmalloc(array_size(pages, sizeof(*hz->table)),
			      GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN);
	if (!hz->table)
		return -ENOMEM;
	hz->mem_pool = zs_create_pool(hz->disk->disk_name);
	if (!hz->mem_pool) {
		vfree(hz->table);
		hz->table = NULL;
		return -ENOMEM;
	}
	hz->huge_class_size = zs_huge_class_size(hz->mem_pool);
	return 0;
}

/*
 * Free every page of a table of @disksize bytes, the table and the store;
 * init_lock is held for writing.
 */
void hzram_meta_free(struct hzram *hz, u64 disksize)
{
	u64 pages = disksize >> PAGE_SHIFT;
	u64 index;

	lockdep_assert_held_write(&hz->init_lock);
	if (!hz->table)
		return;
	for (index = 0; index < pages; index++) {
		hzram_slot_free(hz, index);
		cond_resched();
	}
	zs_destroy_pool(hz->mem_pool);
	vfree(hz->table);
	hz->table = NULL;
	hz->mem_pool = NULL;
}
