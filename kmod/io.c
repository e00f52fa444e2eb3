// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: the page store and the I/O path.
 *
 * hzram is a bio-based driver, as zram is: ->submit_bio serves each bio
 * inline, in the context of the task that submitted it, page by page.
 *
 * Each page of the device has a slot (struct hzram_slot) with a sleepable
 * bit lock, known to lockdep as "hzram->table[index].lock". The lock is
 * held only to read a slot, to change what it holds, or for the whole
 * read-modify-write of a sub-page write:
 *
 *  - a full-page write encodes the page first, without the slot lock (the
 *    block layer keeps the page stable: BLK_FEAT_STABLE_WRITES), into a
 *    new zsmalloc object, then takes the lock only to install it;
 *  - a sub-page write holds the lock from loading the old page to
 *    installing the merged one, so that writes to other parts of the page
 *    are never lost;
 *  - a read holds the lock while it decodes.
 *
 * Lock order: slot lock, then the CPU's stream (a local lock: preemption
 * off, no sleeping), then the zsmalloc mapping and the decompression
 * local lock.
 *
 * Encoded data enters the store in one place, __hzram_slot_install(), and
 * only from an object made by hzram_obj_fill(); the pages the userspace
 * helper compresses come in the same way (hzram_store_staged()).
 *
 * With a helper attached (offload.c), a full-page write that is not
 * same-filled is copied into a staging cell instead, and the slot marked
 * STAGED, pointing at the cell; reads copy from the cell. The page is
 * stored when its batch comes back from the helper, or is compressed
 * here; a newer write, discard or free of the slot supersedes it, and its
 * result is dropped (the slot no longer points at that cell).
 */
#include "hzram.h"

#include <linux/bio.h>
#include <linux/highmem.h>
#include <linux/sched/mm.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>
#include <linux/xxhash.h>

/*
 * Pools are created and destroyed one at a time. kmem_cache_destroy()
 * drops the slab's sysfs directory only after it lets go of the slab
 * mutex, so a pool created meanwhile on another device can reuse the
 * dying cache's sysfs name (":0000008" ...) and fail with a warning
 * (seen on 6.1 in the race tests: "cannot create duplicate filename").
 */
static DEFINE_MUTEX(hzram_pool_mutex);

/* One lockdep class for the slot locks of every device. */
static struct lock_class_key hzram_slot_lock_key;

void hzram_slot_lock(struct hzram *hz, u32 index)
{
	mutex_acquire(&hz->slot_dep_map, 0, 0, _RET_IP_);
	wait_on_bit_lock(&hz->table[index].flags, HZRAM_SLOT_LOCK,
			 TASK_UNINTERRUPTIBLE);
	lock_acquired(&hz->slot_dep_map, _RET_IP_);
}

static bool hzram_slot_trylock(struct hzram *hz, u32 index)
{
	if (test_and_set_bit_lock(HZRAM_SLOT_LOCK, &hz->table[index].flags))
		return false;
	mutex_acquire(&hz->slot_dep_map, 0, 1, _RET_IP_);
	lock_acquired(&hz->slot_dep_map, _RET_IP_);
	return true;
}

void hzram_slot_unlock(struct hzram *hz, u32 index)
{
	mutex_release(&hz->slot_dep_map, _RET_IP_);
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

	hzram_assert_slot_owned(hz);
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

	if (slot->flags & HZRAM_PRIO_MASK)
		atomic64_dec(&hz->stats.recomp_pages);
	if (hzram_slot_test(hz, index, HZRAM_SLOT_INCOMPRESSIBLE))
		atomic64_dec(&hz->stats.incompressible);
	if (hzram_slot_test(hz, index, HZRAM_SLOT_SAME)) {
		atomic64_dec(&hz->stats.same_pages);
		atomic64_dec(&hz->stats.pages_stored);
	} else if (hzram_slot_test(hz, index, HZRAM_SLOT_WB)) {
		/* Its memory and huge count went when it was written back. */
		hzram_bd_release(hz, slot->handle);
		atomic64_dec(&hz->stats.pages_stored);
	} else if (hzram_slot_test(hz, index, HZRAM_SLOT_STAGED)) {
		/* The cell stays its batch's; the batch's result is dropped. */
		atomic64_dec(&hz->stats.offload[HZRAM_OFF_STAGED]);
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
	slot->ac_time = 0;
}

/*
 * Make @enc the content of slot @index, freeing what it held; the slot
 * lock is held. @enc's object now belongs to the slot.
 */
static void __hzram_slot_install(struct hzram *hz, u32 index,
				 const struct hzram_enc *enc)
{
	hzram_slot_free(hz, index);
	if (!enc->handle) {
		hzram_slot_set(hz, index, enc->word, 0, BIT(HZRAM_SLOT_SAME));
		atomic64_inc(&hz->stats.same_pages);
	} else if (enc->len == PAGE_SIZE) {
		hzram_slot_set(hz, index, enc->handle, enc->len,
			       BIT(HZRAM_SLOT_HUGE));
		atomic64_inc(&hz->stats.huge_pages);
		atomic64_inc(&hz->stats.huge_pages_since);
	} else {
		hzram_slot_set(hz, index, enc->handle, enc->len,
			       enc->has_csum ? BIT(HZRAM_SLOT_CSUM) |
			       (unsigned long)enc->csum << HZRAM_CSUM_SHIFT : 0);
	}
	if (enc->handle)
		atomic64_add(enc->len, &hz->stats.compr_data_size);
	atomic64_inc(&hz->stats.pages_stored);
}

/*
 * Allocations on the I/O path first only wake kswapd: the path may be
 * serving reclaim (swap-out), and must not sleep in the allocator while it
 * holds a compression stream, which every writer on its CPU needs.
 */
#define HZRAM_GFP	(__GFP_KSWAPD_RECLAIM | __GFP_NOWARN | __GFP_HIGHMEM | \
			 __GFP_MOVABLE)
/*
 * Once it holds no stream, a write that is not an inline swap-out may
 * wait (a staged swap-out's commit too, last).
 */
#define HZRAM_GFP_WAIT	(GFP_NOIO | __GFP_NOWARN | __GFP_HIGHMEM | __GFP_MOVABLE)

/* What an allocation that may not reclaim draws on when memory is short. */
enum hzram_reserve {
	HZRAM_RESERVE_NONE,	/* nothing more: a write, which may wait */
	/*
	 * The memory reserves, as reclaim itself does: a swap-out, inside
	 * reclaim, whose page is freed as soon as it is stored.
	 */
	HZRAM_RESERVE_ALL,
	/*
	 * Part of them (__GFP_HIGH, and __GFP_NOMEMALLOC so that 6.3 and
	 * later do not add ALLOC_NON_BLOCK's quarter: down to half the min
	 * watermark, where atomic allocations go further): a staged
	 * swap-out's commit. Its page was freed when it was staged, and its
	 * allocation pays for it later; without a bound, the commits of every
	 * cell staged (up to nr_batches * batch_pages) could drain the
	 * reserves that reclaim itself needs.
	 */
	HZRAM_RESERVE_HIGH,
};

/* What encoding in @mode may draw on (hzram_zs_alloc_nowait()). */
static enum hzram_reserve hzram_enc_reserve(enum hzram_enc_mode mode)
{
	switch (mode) {
	case HZRAM_ENC_SWAP:
		return HZRAM_RESERVE_ALL;
	case HZRAM_ENC_STAGED_SWAP:
		return HZRAM_RESERVE_HIGH;
	default:
		return HZRAM_RESERVE_NONE;
	}
}

/*
 * Allocate @len bytes without sleeping, first above the min watermark,
 * then from what @reserve allows.
 */
static unsigned long hzram_zs_alloc_nowait(struct hzram *hz, unsigned int len,
					   enum hzram_reserve reserve)
{
	unsigned long handle;
	unsigned int flags;

	if (hzram_short_nowait())
		handle = (unsigned long)-ENOMEM;
	else
		handle = hzram_zs_malloc(hz->mem_pool, len, HZRAM_GFP);
	if (!IS_ERR_VALUE(handle) || reserve == HZRAM_RESERVE_NONE)
		return handle;
	if (reserve == HZRAM_RESERVE_HIGH)
		return hzram_zs_malloc(hz->mem_pool, len, HZRAM_GFP | __GFP_HIGH |
				       __GFP_NOMEMALLOC);
	flags = memalloc_noreclaim_save();
	handle = hzram_zs_malloc(hz->mem_pool, len, HZRAM_GFP);
	memalloc_noreclaim_restore(flags);
	return handle;
}

/*
 * Allocate @len bytes for a staged page, whose write has completed: a
 * swap-out's (@swap) from part of the reserves first, then, as any other,
 * by waiting for memory without I/O, whatever it takes. Reclaim without
 * I/O cannot swap: where anonymous memory is most of what there is, it
 * scans the whole LRU and takes nothing, which ages it, so that what is
 * in use is swapped out next (Documentation/design.rst, The helper
 * offload).
 */
static unsigned long hzram_zs_alloc_staged(struct hzram *hz, unsigned int len,
					   bool swap)
{
	unsigned long handle = hzram_zs_alloc_nowait(hz, len, swap ?
						     HZRAM_RESERVE_HIGH :
						     HZRAM_RESERVE_NONE);

	if (IS_ERR_VALUE(handle)) {
		atomic64_inc(&hz->stats.writestall);
		handle = hzram_zs_malloc(hz->mem_pool, len,
					 HZRAM_GFP_WAIT | __GFP_NOFAIL);
	}
	return handle;
}

/*
 * Copy @len bytes of encoded page data into the new object @handle of
 * @len bytes. Enforces mem_limit: past it, @handle is freed and -ENOMEM
 * returned.
 */
static int hzram_obj_fill(struct hzram *hz, unsigned long handle,
			  const void *data, unsigned int len, bool limited)
{
	unsigned long used = zs_get_total_pages(hz->mem_pool);
	unsigned long limit = READ_ONCE(hz->limit_pages);

	hzram_update_used_max(hz, used);
	if (limited && limit && used > limit) {
		zs_free(hz->mem_pool, handle);
		hzram_nl_event(hz, HZRAM_NL_EV_MEM_LIMIT,
			       (u64)limit << PAGE_SHIFT);
		return -ENOMEM;
	}
	hzram_zs_write(hz->mem_pool, handle, data, len);
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

/*
 * Compress @src with @strm: *@data and *@len are what to store, the
 * stream's output or, for a page that does not compress below the huge
 * class (and a staged page the compressor refused), the page itself.
 * Return: 0, or the compressor's error (never for a @staged page).
 */
static int hzram_encode_compress(struct hzram *hz, struct hzram_strm *strm,
				 const void *src, bool staged,
				 const void **data, unsigned int *len)
{
	int ret = hzram_comp_compress(strm, src, len);

	if (ret && !staged) {
		pr_err_ratelimited("%s: compression failed: %d\n",
				   hz->disk->disk_name, ret);
		return ret;
	}
	*data = strm->buffer;
	if (ret || *len >= hz->huge_class_size) {
		*data = src;
		*len = PAGE_SIZE;
	}
	return 0;
}

/*
 * Encode the page at @src (PAGE_SIZE bytes, not same-filled) into @enc: a
 * new object holding it compressed, or raw if it does not compress below
 * the huge class. Needs no slot lock. When memory is short and @mode is
 * not an inline swap-out (HZRAM_ENC_SWAP), it lets go of the stream,
 * waits for an object of the size it needs, and compresses once more; if
 * the page changed meanwhile (a direct write whose buffer is being
 * rewritten) and no longer fits, it is stored raw, as it is then: two
 * tries at most, as in zram.
 *
 * Return: 0; -ENOMEM without memory or past mem_limit; or the
 * compressor's error. On error nothing is left allocated. A staged page
 * (HZRAM_ENC_STAGED, HZRAM_ENC_STAGED_SWAP) always succeeds.
 */
static int hzram_encode_page(struct hzram *hz, const void *src,
			     enum hzram_enc_mode mode, struct hzram_enc *enc)
{
	const bool staged = mode == HZRAM_ENC_STAGED ||
			    mode == HZRAM_ENC_STAGED_SWAP;
	const gfp_t wait = HZRAM_GFP_WAIT | (staged ? __GFP_NOFAIL : 0);
	struct hzram_strm *strm;
	unsigned int len, again;
	unsigned long handle;
	const void *data;
	int ret;

	enc->has_csum = READ_ONCE(hz->read_csum);
	if (enc->has_csum)
		enc->csum = hzram_page_csum(src);

	strm = hzram_strm_get(hz->comp);
	ret = hzram_encode_compress(hz, strm, src, staged, &data, &len);
	if (ret)
		goto out;
	handle = hzram_zs_alloc_nowait(hz, len, hzram_enc_reserve(mode));
	if (IS_ERR_VALUE(handle)) {
		hzram_strm_put(hz->comp);
		atomic64_inc(&hz->stats.writestall);
		/* A swap-out fails: the page stays in memory. */
		if (mode == HZRAM_ENC_SWAP)
			return -ENOMEM;
		handle = hzram_zs_malloc(hz->mem_pool, len, wait);
		if (IS_ERR_VALUE(handle))
			return -ENOMEM;
		strm = hzram_strm_get(hz->comp);
		/* The stream's output went with it: compress once more. */
		if (len < PAGE_SIZE) {
			/* Of the bytes compressed now, if they changed. */
			if (enc->has_csum)
				enc->csum = hzram_page_csum(src);
			ret = hzram_encode_compress(hz, strm, src, staged,
						    &data, &again);
			if (ret || again != len) {
				hzram_strm_put(hz->comp);
				zs_free(hz->mem_pool, handle);
				if (ret)
					return ret;
				/* No third try: raw, without the stream. */
				handle = hzram_zs_malloc(hz->mem_pool,
							 PAGE_SIZE, wait);
				if (IS_ERR_VALUE(handle))
					return -ENOMEM;
				len = PAGE_SIZE;
				ret = hzram_obj_fill(hz, handle, src, len,
						     !staged);
				goto filled;
			}
		}
	}
	ret = hzram_obj_fill(hz, handle, data, len, !staged);
	hzram_strm_put(hz->comp);
filled:
	/* What failed freed the object: nothing for the caller to free. */
	if (!ret) {
		enc->handle = handle;
		enc->len = len;
	}
	return ret;
out:
	hzram_strm_put(hz->comp);
	return ret;
}

/* hzram_encode_page(), for any page: a same-filled one is kept as its word. */
static int hzram_encode(struct hzram *hz, const void *src,
			enum hzram_enc_mode mode, struct hzram_enc *enc)
{
	if (hzram_page_same_filled(src, &enc->word)) {
		enc->handle = 0;
		enc->len = 0;
		enc->has_csum = false;
		return 0;
	}
	return hzram_encode_page(hz, src, mode, enc);
}

/* Free what an encoding allocated that no slot took. */
static void hzram_enc_free(struct hzram *hz, const struct hzram_enc *enc)
{
	if (enc->handle)
		zs_free(hz->mem_pool, enc->handle);
}

/* Decode slot @index into @dst (PAGE_SIZE bytes); the slot lock is held. */
static int __hzram_load(struct hzram *hz, u32 index, void *dst)
{
	struct hzram_slot *slot = &hz->table[index];
	unsigned int len = hzram_slot_size(hz, index);
	const void *src;
	int ret = 0;

	hzram_assert_slot_locked(hz);
	if (hzram_slot_test(hz, index, HZRAM_SLOT_WB))
		return hzram_bd_read(hz, index, 0, dst, PAGE_SIZE);
	if (hzram_slot_test(hz, index, HZRAM_SLOT_STAGED)) {
		/* The arena is there while any slot is STAGED. */
		memcpy(dst, hz->staging + slot->handle * PAGE_SIZE, PAGE_SIZE);
		return 0;
	}
	if (hzram_slot_test(hz, index, HZRAM_SLOT_SAME) || !slot->handle) {
		/* An unwritten page reads as zeros. */
		memset_l(dst, slot->handle, PAGE_SIZE / sizeof(unsigned long));
		return 0;
	}
	if (len == PAGE_SIZE) {
		src = hzram_zs_read_begin(hz->mem_pool, slot->handle, len, dst);
		if (src != dst)
			memcpy(dst, src, PAGE_SIZE);
		hzram_zs_read_end(hz->mem_pool, slot->handle, len, src);
	} else {
		ret = hzram_comp_decompress_obj(hzram_slot_comp(hz, index),
						hz->mem_pool, slot->handle,
						len, dst);
	}
	if (ret)
		pr_err_ratelimited("%s: page %u does not decompress\n",
				   hz->disk->disk_name, index);
	return ret;
}

/* Write the whole page @index from @src (stable while we use it). */
static int hzram_write_page(struct hzram *hz, u32 index, const void *src,
			    bool swap)
{
	struct hzram_enc enc;
	int ret;

	if (hzram_page_same_filled(src, &enc.word)) {
		enc.handle = 0;
		enc.len = 0;
		enc.has_csum = false;
	} else if (hzram_offload_stage(hz, index, src, swap)) {
		return 0;
	} else {
		ret = hzram_encode_page(hz, src, swap ? HZRAM_ENC_SWAP :
					HZRAM_ENC_WRITE, &enc);
		if (ret)
			return ret;
	}
	hzram_slot_lock(hz, index);
	__hzram_slot_install(hz, index, &enc);
	hzram_slot_accessed(hz, index);
	hzram_slot_unlock(hz, index);
	return 0;
}

/*
 * Write @len bytes from @mem at byte @off of page @index: load, merge,
 * encode and install under the slot lock. The merge page is allocated
 * here, as zram does: sub-page writes never come from swap.
 */
static int hzram_write_partial(struct hzram *hz, u32 index, unsigned int off,
			       const void *mem, unsigned int len)
{
	struct page *page = alloc_page(GFP_NOIO | __GFP_NOWARN);
	struct hzram_enc enc;
	void *buf;
	int ret;

	if (!page)
		return -ENOMEM;
	buf = page_address(page);
	hzram_slot_lock(hz, index);
	ret = __hzram_load(hz, index, buf);
	if (!ret) {
		memcpy(buf + off, mem, len);
		ret = hzram_encode(hz, buf, HZRAM_ENC_WRITE, &enc);
	}
	if (!ret) {
		__hzram_slot_install(hz, index, &enc);
		hzram_slot_accessed(hz, index);
	}
	hzram_slot_unlock(hz, index);
	__free_page(page);
	return ret;
}

/*
 * Read @len bytes at byte @off of page @index into @mem. A sub-page read
 * decodes into the stream's scratch page: reads never allocate.
 */
static int hzram_read(struct hzram *hz, u32 index, unsigned int off, void *mem,
		      unsigned int len)
{
	struct hzram_strm *strm;
	int ret;

	hzram_slot_lock(hz, index);
	if (len == PAGE_SIZE) {
		ret = __hzram_load(hz, index, mem);
	} else if (hzram_slot_test(hz, index, HZRAM_SLOT_WB)) {
		/* Block I/O, which may sleep: not under the stream. */
		ret = hzram_bd_read(hz, index, off, mem, len);
	} else {
		strm = hzram_strm_get(hz->comp);
		ret = __hzram_load(hz, index, strm->scratch);
		if (!ret)
			memcpy(mem, strm->scratch + off, len);
		hzram_strm_put(hz->comp);
	}
	if (!ret)
		hzram_slot_accessed(hz, index);
	hzram_slot_unlock(hz, index);
	return ret;
}

/* Read the whole page @index into @dst (offload.c's reads). */
int hzram_read_page(struct hzram *hz, u32 index, void *dst)
{
	return hzram_read(hz, index, 0, dst, PAGE_SIZE);
}

/* The checksum of a page's data that a compressed slot may keep. */
u32 hzram_page_csum(const void *page)
{
	return (u32)xxh64(page, PAGE_SIZE, 0);
}

/**
 * hzram_read_snapshot() - copy the LZ4 data of slot @index
 * @hz: the device
 * @index: the page
 * @dst: where to copy it
 * @room: bytes at @dst
 * @csum: set to the page's checksum, if the slot has one
 * @has_csum: whether it has
 *
 * For a read the helper decodes: the copy is what the helper reads, and
 * what the module decodes if the helper does not.
 *
 * Return: the bytes copied; 0 if the slot holds no LZ4 data that fits
 * (unwritten, same-filled, raw, staged, written back, recompressed, or
 * longer than @room): the caller reads the page itself.
 */
unsigned int hzram_read_snapshot(struct hzram *hz, u32 index, void *dst,
				 unsigned int room, u32 *csum, bool *has_csum)
{
	struct hzram_slot *slot = &hz->table[index];
	unsigned int len = 0;
	const void *src;

	hzram_slot_lock(hz, index);
	if (slot->handle && !hzram_slot_test(hz, index, HZRAM_SLOT_SAME) &&
	    !hzram_slot_test(hz, index, HZRAM_SLOT_STAGED) &&
	    !hzram_slot_test(hz, index, HZRAM_SLOT_WB) &&
	    !hzram_slot_test(hz, index, HZRAM_SLOT_HUGE) &&
	    !(slot->flags & HZRAM_PRIO_MASK) &&
	    hzram_slot_size(hz, index) <= room) {
		len = hzram_slot_size(hz, index);
		*has_csum = hzram_slot_test(hz, index, HZRAM_SLOT_CSUM);
		*csum = slot->flags >> HZRAM_CSUM_SHIFT;
		src = hzram_zs_read_begin(hz->mem_pool, slot->handle, len, dst);
		if (src != dst)
			memcpy(dst, src, len);
		hzram_zs_read_end(hz->mem_pool, slot->handle, len, src);
		hzram_slot_accessed(hz, index);
	}
	hzram_slot_unlock(hz, index);
	return len;
}

static int hzram_write(struct hzram *hz, u32 index, unsigned int off,
		       const void *mem, unsigned int len, bool swap)
{
	if (len == PAGE_SIZE)
		return hzram_write_page(hz, index, mem, swap);
	return hzram_write_partial(hz, index, off, mem, len);
}

/**
 * hzram_stage_install() - make slot @index point at staging cell @cell
 * @hz: the device
 * @index: the page
 * @cell: the staging cell now holding the page's data (offload.c)
 *
 * What the slot held is freed: the staged page is the newest data.
 */
void hzram_stage_install(struct hzram *hz, u32 index, unsigned long cell)
{
	hzram_slot_lock(hz, index);
	hzram_slot_free(hz, index);
	hzram_slot_set(hz, index, cell, 0, BIT(HZRAM_SLOT_STAGED));
	atomic64_inc(&hz->stats.offload[HZRAM_OFF_STAGED]);
	atomic64_inc(&hz->stats.pages_stored);
	hzram_slot_accessed(hz, index);
	hzram_slot_unlock(hz, index);
}

/**
 * hzram_wb_source() - what writeback writes of slot @index
 * @hz: the device
 * @index: a compressed or huge page; its slot lock is held
 * @dst: PAGE_SIZE bytes: set to the page, or with @compressed and a
 *	compressed page, to its compressed data followed by zeros
 * @compressed: compressed_writeback
 *
 * Return: 0, or -EIO if the page does not decode.
 */
int hzram_wb_source(struct hzram *hz, u32 index, void *dst, bool compressed)
{
	unsigned int len = hzram_slot_size(hz, index);
	unsigned long handle = hz->table[index].handle;
	const void *src;

	hzram_assert_slot_locked(hz);
	if (!compressed || len == PAGE_SIZE)
		return __hzram_load(hz, index, dst);
	src = hzram_zs_read_begin(hz->mem_pool, handle, len, dst);
	if (src != dst)
		memcpy(dst, src, len);
	hzram_zs_read_end(hz->mem_pool, handle, len, src);
	memset(dst + len, 0, PAGE_SIZE - len);
	return 0;
}

/**
 * hzram_wb_install() - slot @index was written back to block @blk
 * @hz: the device
 * @index: the page, chosen for writeback (HZRAM_SLOT_PP)
 * @blk: the block on the backing device holding what hzram_wb_source()
 *	gave
 * @csum: hzram_page_csum() of that block
 *
 * The slot's memory is freed; it keeps its size (the length of the
 * compressed data, which a compressed block needs), its access time, its
 * algorithm's priority and its huge and incompressible marks, as in zram,
 * and loses its idle mark.
 *
 * Return: true; false if the slot changed or was accessed since it was
 * chosen (the mark is gone), and keeps its data: @blk is then the
 * caller's to release.
 */
bool hzram_wb_install(struct hzram *hz, u32 index, unsigned long blk, u32 csum)
{
	struct hzram_slot *slot = &hz->table[index];
	unsigned int len;
	bool huge;

	hzram_slot_lock(hz, index);
	if (!hzram_slot_test(hz, index, HZRAM_SLOT_PP)) {
		hzram_slot_unlock(hz, index);
		return false;
	}
	len = hzram_slot_size(hz, index);
	huge = hzram_slot_test(hz, index, HZRAM_SLOT_HUGE);
	if (huge)
		atomic64_dec(&hz->stats.huge_pages);
	zs_free(hz->mem_pool, slot->handle);
	atomic64_sub(len, &hz->stats.compr_data_size);
	hzram_slot_set(hz, index, blk, len, BIT(HZRAM_SLOT_WB) |
		       (huge ? BIT(HZRAM_SLOT_HUGE) : 0) |
		       (slot->flags & (HZRAM_PRIO_MASK |
				       BIT(HZRAM_SLOT_INCOMPRESSIBLE))) |
		       (unsigned long)csum << HZRAM_CSUM_SHIFT);
	hzram_slot_unlock(hz, index);
	return true;
}

/*
 * Would @len bytes (the page compressed again) take a smaller zsmalloc
 * size class than the @old_len it takes, and stay under @threshold?
 */
static bool hzram_recomp_smaller(struct hzram *hz, unsigned int len,
				 unsigned int old_len, unsigned int threshold)
{
	return hzram_zs_class_index(hz->mem_pool, len) <
	       hzram_zs_class_index(hz->mem_pool, old_len) &&
	       !(threshold && len >= threshold);
}

/* Slot @index (locked) did not shrink: the last priority marks it, as zram. */
static void hzram_recomp_not_smaller(struct hzram *hz, u32 index, bool last)
{
	struct hzram_slot *slot = &hz->table[index];

	if (!last)
		return;
	WRITE_ONCE(slot->flags, slot->flags | BIT(HZRAM_SLOT_INCOMPRESSIBLE));
	atomic64_inc(&hz->stats.incompressible);
}

/*
 * Slot @index (locked) holds object @handle from now on: @len bytes, the
 * page compressed with priority @prio. It keeps its access time.
 */
static void hzram_recomp_set(struct hzram *hz, u32 index, u32 prio,
			     unsigned long handle, unsigned int len)
{
	struct hzram_slot *slot = &hz->table[index];
	u32 ac_time = slot->ac_time;

	hzram_update_used_max(hz, zs_get_total_pages(hz->mem_pool));
	hzram_slot_free(hz, index);
	hzram_slot_set(hz, index, handle, len,
		       (unsigned long)prio << HZRAM_SLOT_PRIO);
	slot->ac_time = ac_time;
	atomic64_add(len, &hz->stats.compr_data_size);
	atomic64_inc(&hz->stats.pages_stored);
	atomic64_inc(&hz->stats.recomp_pages);
}

/**
 * hzram_recompress_slot() - recompress slot @index with priority @prio
 * @hz: the device, initialised, with an algorithm at @prio
 * @index: a page chosen for recompression (PP)
 * @prio: the algorithm's priority, 1 to 3
 * @threshold: only pages of at least this many bytes, and keep only a
 *	result smaller than that; 0: any
 * @last: @prio is the last priority set up: a page that it cannot store
 *	in a smaller size class is marked incompressible, as in zram
 * @buf: PAGE_SIZE bytes to decode into
 *
 * As zram: the page loses its idle mark once it is decoded, and the new
 * data is kept only if it goes to a smaller zsmalloc size class (and
 * below @threshold). Unlike zram, the page keeps its access time, and the
 * size classes compared are those zs_malloc() uses (with the handle). The
 * new object is allocated with the slot lock held: first without reclaim,
 * then (without the stream) with reclaim but no I/O, which cannot swap
 * out to this device, and no retrying: a page that finds no memory keeps
 * its data, and the recompression goes on. mem_limit does not apply, as
 * the page takes less memory than before.
 *
 * Return: 1 if the page was compressed with @prio's algorithm, kept or
 * not; 0 if it was skipped (changed since it was chosen, or smaller than
 * @threshold); -EIO if it does not decode or the compressor fails.
 */
int hzram_recompress_slot(struct hzram *hz, u32 index, u32 prio,
			  unsigned int threshold, bool last, void *buf)
{
	struct hzram_comp *comp = hz->recomp[prio];
	struct hzram_slot *slot = &hz->table[index];
	unsigned int old_len, len, again;
	struct hzram_strm *strm;
	unsigned long handle;
	int ret;

	hzram_slot_lock(hz, index);
	if (!hzram_slot_test(hz, index, HZRAM_SLOT_PP)) {
		ret = 0;
		goto out;
	}
	WRITE_ONCE(slot->flags, slot->flags & ~BIT(HZRAM_SLOT_PP));
	old_len = hzram_slot_size(hz, index);
	ret = 0;
	if (old_len < threshold)
		goto out;
	ret = __hzram_load(hz, index, buf);
	if (ret)
		goto out;
	hzram_slot_mark_idle(hz, index, false);

	strm = hzram_strm_get(comp);
	ret = hzram_comp_compress(strm, buf, &len);
	if (ret) {
		hzram_strm_put(comp);
		pr_err_ratelimited("%s: recompression failed: %d\n",
				   hz->disk->disk_name, ret);
		ret = -EIO;
		goto out;
	}
	ret = 1;
	atomic64_inc(&hz->stats.recomp_tried);
	if (!hzram_recomp_smaller(hz, len, old_len, threshold)) {
		hzram_strm_put(comp);
		hzram_recomp_not_smaller(hz, index, last);
		goto out;
	}
	handle = hzram_zs_alloc_nowait(hz, len, HZRAM_RESERVE_NONE);
	if (IS_ERR_VALUE(handle)) {
		hzram_strm_put(comp);
		handle = hzram_zs_malloc(hz->mem_pool, len,
					 HZRAM_GFP_WAIT | __GFP_NORETRY);
		if (IS_ERR_VALUE(handle)) {
			atomic64_inc(&hz->stats.writestall);
			goto out;
		}
		/* The output went with the stream; @buf has not changed. */
		strm = hzram_strm_get(comp);
		if (hzram_comp_compress(strm, buf, &again) || again != len) {
			hzram_strm_put(comp);
			zs_free(hz->mem_pool, handle);
			ret = -EIO;
			goto out;
		}
	}
	hzram_zs_write(hz->mem_pool, handle, strm->buffer, len);
	hzram_strm_put(comp);
	hzram_recomp_set(hz, index, prio, handle, len);
out:
	hzram_slot_unlock(hz, index);
	return ret;
}

/**
 * hzram_recomp_stage() - slot @index, for the helper to recompress
 * @hz: the device
 * @index: a page chosen for recompression (PP)
 * @threshold: as hzram_recompress_slot()'s
 * @page: PAGE_SIZE bytes: set to the page
 *
 * The page loses its idle mark, as hzram_recompress_slot() decodes it,
 * and stays chosen: hzram_recomp_install() keeps the helper's result only
 * if nothing has changed or read the page by then.
 *
 * Return: 1 if @page was set; 0 if the page was skipped (changed since
 * it was chosen, or smaller than @threshold); -EIO if it does not decode.
 * The page is no longer chosen unless 1.
 */
int hzram_recomp_stage(struct hzram *hz, u32 index, unsigned int threshold,
		       void *page)
{
	struct hzram_slot *slot = &hz->table[index];
	int ret = 0;

	hzram_slot_lock(hz, index);
	if (!hzram_slot_test(hz, index, HZRAM_SLOT_PP))
		goto out;
	if (hzram_slot_size(hz, index) >= threshold) {
		ret = __hzram_load(hz, index, page);
		if (!ret) {
			hzram_slot_mark_idle(hz, index, false);
			ret = 1;
			goto out;
		}
	}
	WRITE_ONCE(slot->flags, slot->flags & ~BIT(HZRAM_SLOT_PP));
out:
	hzram_slot_unlock(hz, index);
	return ret;
}

/**
 * hzram_recomp_install() - keep the helper's recompression of slot @index
 * @hz: the device, initialised, with an algorithm at @prio
 * @index: a page staged by hzram_recomp_stage()
 * @prio: the algorithm's priority, 1 to 3
 * @threshold: as hzram_recompress_slot()'s
 * @last: as hzram_recompress_slot()'s
 * @obj: the page compressed with @prio's algorithm, in the caller's
 *	memory, checked by the caller to decode to the page staged
 * @len: its length in bytes, less than PAGE_SIZE
 *
 * As hzram_recompress_slot() does with its own result, if the page is
 * still chosen: nothing wrote, freed or read it since it was staged, so
 * it still holds what was staged. The allocation may wait as there (@obj
 * is the caller's: nothing is compressed again).
 *
 * Return: 1 if the page was still chosen, kept or not; 0 if not.
 */
int hzram_recomp_install(struct hzram *hz, u32 index, u32 prio,
			 unsigned int threshold, bool last, const void *obj,
			 unsigned int len)
{
	struct hzram_slot *slot = &hz->table[index];
	unsigned long handle;
	int ret = 0;

	hzram_slot_lock(hz, index);
	if (!hzram_slot_test(hz, index, HZRAM_SLOT_PP))
		goto out;
	WRITE_ONCE(slot->flags, slot->flags & ~BIT(HZRAM_SLOT_PP));
	ret = 1;
	atomic64_inc(&hz->stats.recomp_tried);
	if (!hzram_recomp_smaller(hz, len, hzram_slot_size(hz, index),
				  threshold)) {
		hzram_recomp_not_smaller(hz, index, last);
		goto out;
	}
	handle = hzram_zs_alloc_nowait(hz, len, HZRAM_RESERVE_NONE);
	if (IS_ERR_VALUE(handle))
		handle = hzram_zs_malloc(hz->mem_pool, len,
					 HZRAM_GFP_WAIT | __GFP_NORETRY);
	if (IS_ERR_VALUE(handle)) {
		atomic64_inc(&hz->stats.writestall);
		goto out;
	}
	hzram_zs_write(hz->mem_pool, handle, obj, len);
	hzram_recomp_set(hz, index, prio, handle, len);
out:
	hzram_slot_unlock(hz, index);
	return ret;
}

/* True if slot @index still holds staging cell @cell; the lock is held. */
static bool hzram_slot_staged_in(struct hzram *hz, u32 index,
				 unsigned long cell)
{
	hzram_assert_slot_locked(hz);
	return hzram_slot_test(hz, index, HZRAM_SLOT_STAGED) &&
	       hz->table[index].handle == cell;
}

/*
 * Does object @handle of @len bytes decode to @page? Decodes into
 * @scratch (PAGE_SIZE bytes).
 */
static bool hzram_obj_matches(struct hzram *hz, unsigned long handle,
			      unsigned int len, const void *page, void *scratch)
{
	int ret = hzram_comp_decompress_obj(hz->comp, hz->mem_pool, handle,
					    len, scratch);

	return !ret && !memcmp(scratch, page, PAGE_SIZE);
}

/*
 * The helper's encoding of @page as an object (or a fill word), or false.
 * @rec was copied out of the helper's reach and checked against the
 * arena's bounds; @data is read once, into the new object, and the object
 * is what is checked. A record the page does not match sets *@refused.
 * @swap: the page was a swap-out (hzram_zs_alloc_staged()).
 */
static bool hzram_enc_from_record(struct hzram *hz, const void *page,
				  const struct hzram_page_record *rec,
				  const void *data, void *scratch, bool swap,
				  struct hzram_enc *enc, bool *refused)
{
	unsigned int len = rec->length;
	unsigned long handle;

	enc->has_csum = false;
	switch (rec->kind) {
	case HZRAM_PAGE_SAME:
		if (!hzram_page_same_filled(page, &enc->word) ||
		    enc->word != rec->value) {
			*refused = true;
			return false;
		}
		enc->handle = 0;
		enc->len = 0;
		return true;
	case HZRAM_PAGE_RAW:
		/* The staged page itself: the helper found it incompressible. */
		data = page;
		len = PAGE_SIZE;
		break;
	case HZRAM_PAGE_LZ4:
		if (len >= hz->huge_class_size) {
			data = page;
			len = PAGE_SIZE;
		}
		break;
	default:
		return false;	/* not encoded: the module does it */
	}
	/*
	 * The write was acknowledged when it was staged: allocate as a
	 * staged page compressed here would (the helper's commit may sleep,
	 * and allocates without I/O).
	 */
	handle = hzram_zs_alloc_staged(hz, len, swap);
	hzram_obj_fill(hz, handle, data, len, false);
	if (len < PAGE_SIZE && READ_ONCE(hz->offp.verify) &&
	    !hzram_obj_matches(hz, handle, len, page, scratch)) {
		zs_free(hz->mem_pool, handle);
		*refused = true;
		return false;
	}
	enc->handle = handle;
	enc->len = len;
	enc->has_csum = len < PAGE_SIZE && READ_ONCE(hz->read_csum);
	if (enc->has_csum)
		enc->csum = hzram_page_csum(page);
	return true;
}

/**
 * hzram_store_staged() - store a staged page, as the helper encoded it or
 *	compressed here
 * @hz: the device
 * @index: the page
 * @cell: its staging cell
 * @page: the staged data (the cell, which nothing changes meanwhile)
 * @rec: the helper's record, validated against the arena's bounds and
 *	out of the helper's reach; NULL: compress in the kernel
 * @data: the record's bytes in the output arena
 * @scratch: a page to decode into, for offload_verify
 * @swap: the page was staged by a swap-out (how to wait for memory)
 * @refused: set if @rec did not match the page (SAME of another word, LZ4
 *	that does not decode to it): then the page is compressed here
 *
 * Encoded data enters the store here, as for every write, through
 * __hzram_slot_install(). Nothing is stored if the slot was overwritten,
 * discarded or freed since it was staged.
 *
 * Return: what became of the page.
 */
enum hzram_store_result hzram_store_staged(struct hzram *hz, u32 index,
					   unsigned long cell, const void *page,
					   const struct hzram_page_record *rec,
					   const void *data, void *scratch,
					   bool swap, bool *refused)
{
	struct hzram_enc enc;
	bool helper = false, idle;
	u32 ac_time;

	*refused = false;
	/* A glance without the lock: a slot never goes back to a cell. */
	if (!(READ_ONCE(hz->table[index].flags) & BIT(HZRAM_SLOT_STAGED)) ||
	    READ_ONCE(hz->table[index].handle) != cell)
		return HZRAM_STORED_STALE;
	if (rec)
		helper = hzram_enc_from_record(hz, page, rec, data, scratch,
					       swap, &enc, refused);
	/* A staged page is stored whatever it takes (__GFP_NOFAIL). */
	if (!helper && WARN_ON_ONCE(hzram_encode(hz, page, swap ?
						 HZRAM_ENC_STAGED_SWAP :
						 HZRAM_ENC_STAGED, &enc)))
		return HZRAM_STORED_STALE;
	hzram_slot_lock(hz, index);
	if (!hzram_slot_staged_in(hz, index, cell)) {
		hzram_slot_unlock(hz, index);
		hzram_enc_free(hz, &enc);
		return HZRAM_STORED_STALE;
	}
	/* The page keeps its write's access time and any idle mark since. */
	ac_time = hz->table[index].ac_time;
	idle = hzram_slot_test(hz, index, HZRAM_SLOT_IDLE);
	__hzram_slot_install(hz, index, &enc);
	hz->table[index].ac_time = ac_time;
	if (idle && enc.handle)
		hzram_slot_mark_idle(hz, index, true);
	hzram_slot_unlock(hz, index);
	return helper ? HZRAM_STORED_HELPER : HZRAM_STORED_KERNEL;
}

/*
 * Discard frees the whole pages in the range; the partial pages at its
 * ends keep their data. Write-zeroes also zeroes those partial pages.
 */
static int hzram_free_range(struct hzram *hz, u64 pos, u64 len, bool zero)
{
	const void *zeros = page_address(ZERO_PAGE(0));
	u64 end = pos + len;
	u32 index;
	int ret;

	if (offset_in_page(pos)) {
		u64 head_end = min_t(u64, end, round_up(pos + 1, PAGE_SIZE));

		if (zero) {
			ret = hzram_write_partial(hz, pos >> PAGE_SHIFT,
						  offset_in_page(pos), zeros,
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
		return hzram_write_partial(hz, index, 0, zeros, end - pos);
	return 0;
}

/* True, and counted, if bytes [@pos, @pos + @len) are not on the device. */
static bool hzram_invalid_io(struct hzram *hz, u64 pos, u64 len)
{
	/* Pairs with the release in disksize_store(): the table is there. */
	u64 disksize = smp_load_acquire(&hz->disksize);

	if (likely(disksize && pos + len <= disksize && pos + len >= pos))
		return false;
	atomic64_inc(&hz->stats.invalid_io);
	return true;
}

/* Reads and writes, one page (or the part of one in the bio) at a time. */
static blk_status_t hzram_bio_rw(struct hzram *hz, struct bio *bio)
{
	struct bvec_iter iter = bio->bi_iter;
	bool write = op_is_write(bio_op(bio));
	bool swap = bio->bi_opf & REQ_SWAP;

	while (iter.bi_size) {
		u64 pos = (u64)iter.bi_sector << SECTOR_SHIFT;
		u32 index = pos >> PAGE_SHIFT;
		unsigned int off = offset_in_page(pos);
		struct bio_vec bv = bio_iter_iovec(bio, iter);
		void *mem;
		int ret;

		bv.bv_len = min_t(u32, bv.bv_len, PAGE_SIZE - off);
		mem = bvec_kmap_local(&bv);
		if (write)
			ret = hzram_write(hz, index, off, mem, bv.bv_len, swap);
		else
			ret = hzram_read(hz, index, off, mem, bv.bv_len);
		kunmap_local(mem);
		if (unlikely(ret)) {
			/* Out of memory or past mem_limit included. */
			if (write) {
				atomic64_inc(&hz->stats.failed_writes);
				hzram_nl_event(hz, HZRAM_NL_EV_WRITE_FAILED, 0);
			} else {
				atomic64_inc(&hz->stats.failed_reads);
			}
			return BLK_STS_IOERR;
		}
		if (!write)
			flush_dcache_page(bv.bv_page);
		bio_advance_iter_single(bio, &iter, bv.bv_len);
	}
	return BLK_STS_OK;
}

/*
 * A read served here. While a helper that decodes is attached, large
 * ones are timed for offload auto.
 */
static void hzram_read_bio(struct hzram *hz, struct bio *bio)
{
	unsigned int pages = bio->bi_iter.bi_size >> PAGE_SHIFT;
	unsigned int min = READ_ONCE(hz->offp.read_min_pages);
	u64 t0 = 0;

	if (min && pages >= min && READ_ONCE(hz->read_csum))
		t0 = ktime_get_ns();
	bio->bi_status = hzram_bio_rw(hz, bio);
	if (t0 && bio->bi_status == BLK_STS_OK)
		hzram_read_measure(hz, ktime_get_ns() - t0, pages);
}

/**
 * hzram_submit_bio() - serve a bio, inline in the submitter's context
 * @bio: a read, write, discard or write-zeroes bio for an hzram disk
 *
 * The block layer has stripped flushes (the device has no write cache)
 * and checked that the bio is within the disk's capacity.
 */
void hzram_submit_bio(struct bio *bio)
{
	struct hzram *hz = bio->bi_bdev->bd_disk->private_data;
	u64 pos = (u64)bio->bi_iter.bi_sector << SECTOR_SHIFT;
	u64 len = bio->bi_iter.bi_size;
	unsigned long start;

	if (unlikely(hzram_invalid_io(hz, pos, len))) {
		bio_io_error(bio);
		return;
	}
	switch (bio_op(bio)) {
	case REQ_OP_READ:
		start = bio_start_io_acct(bio);
		/* A large read may go to the helper, which ends the bio. */
		if (hzram_offload_read(hz, bio, start))
			return;
		hzram_read_bio(hz, bio);
		bio_end_io_acct(bio, start);
		break;
	case REQ_OP_WRITE:
		start = bio_start_io_acct(bio);
		bio->bi_status = hzram_bio_rw(hz, bio);
		bio_end_io_acct(bio, start);
		break;
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		if (hzram_free_range(hz, pos, len,
				     bio_op(bio) == REQ_OP_WRITE_ZEROES)) {
			atomic64_inc(&hz->stats.failed_writes);
			hzram_nl_event(hz, HZRAM_NL_EV_WRITE_FAILED, 0);
			bio->bi_status = BLK_STS_IOERR;
		}
		break;
	default:
		/* The queue limits advertise nothing else. */
		WARN_ON_ONCE(1);
		bio->bi_status = BLK_STS_NOTSUPP;
		break;
	}
	bio_endio(bio);
}

#ifdef HZRAM_HAVE_RW_PAGE
/**
 * hzram_rw_page() - synchronous I/O of one whole page, without a bio
 * @hz: the device
 * @sector: where the page is on the device (512-byte sectors)
 * @page: the page to read into or write from
 * @write: the direction
 *
 * Swap's synchronous path on the kernels that have ->rw_page (compat.h
 * wires it up). A write that is not a swap-out may wait for memory.
 *
 * Return: 0, or a negative errno; the caller then retries with a bio.
 */
int hzram_rw_page(struct hzram *hz, sector_t sector, struct page *page,
		  bool write)
{
	u64 pos = (u64)sector << SECTOR_SHIFT;
	void *mem;
	int ret;

	if (PageTransHuge(page) || offset_in_page(pos))
		return -EOPNOTSUPP;
	if (hzram_invalid_io(hz, pos, PAGE_SIZE))
		return -EINVAL;
	mem = kmap_local_page(page);
	if (write)
		ret = hzram_write_page(hz, pos >> PAGE_SHIFT, mem,
				       folio_test_swapcache(page_folio(page)));
	else
		ret = hzram_read(hz, pos >> PAGE_SHIFT, 0, mem, PAGE_SIZE);
	kunmap_local(mem);
	if (!ret && !write)
		flush_dcache_page(page);
	return ret;
}
#endif

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
	mutex_lock(&hzram_pool_mutex);
	hz->mem_pool = zs_create_pool(hz->disk->disk_name);
	mutex_unlock(&hzram_pool_mutex);
	if (!hz->mem_pool) {
		vfree(hz->table);
		hz->table = NULL;
		return -ENOMEM;
	}
	hz->huge_class_size = zs_huge_class_size(hz->mem_pool);
	lockdep_init_map(&hz->slot_dep_map, "hzram->table[index].lock",
			 &hzram_slot_lock_key, 0);
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
	mutex_lock(&hzram_pool_mutex);
	zs_destroy_pool(hz->mem_pool);
	mutex_unlock(&hzram_pool_mutex);
	vfree(hz->table);
	hz->table = NULL;
	hz->mem_pool = NULL;
}
