// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: the backing device and writeback, as zram has them (7.3).
 *
 * Before a device is initialised, sysfs backing_dev names a block device,
 * which hzram opens exclusively and keeps until reset, or, beyond zram, a
 * regular file, held as swap holds a swap file and mapped once to the
 * blocks of its filesystem's device (hzram_bd_map_file()). Writing to sysfs
 * writeback then moves pages out of memory onto it, a page to a block:
 * the pages chosen by type (idle, huge, huge_idle, incompressible) or by
 * index, larger compressed pages first. A slot written back is WB, its
 * handle the block; reads bring the page back from the block each time
 * (it stays written back), and an overwrite, a discard, a swap free or a
 * reset frees the block.
 *
 * Writeback runs in the writer of the sysfs file, one at a time per
 * device and never beside a recompression (pp_mutex, pp.c), under
 * init_lock held for reading (a reset waits for it). It marks the chosen slots PP; a slot's data is read under its
 * lock, the lock dropped, and the block written, up to
 * writeback_batch_size bios in flight. When a block is written, the slot
 * becomes WB only if it is still PP: any change or access of the slot
 * clears the mark (hzram_slot_set(), hzram_slot_accessed()), and then the
 * block is released and the page stays in memory.
 *
 * A read of a written-back page holds the slot lock while it reads the
 * block, so that the block cannot be freed and written again under it.
 * The read is submitted from a work item: the reader may be inside the
 * block layer's ->submit_bio, where a bio submitted and waited for
 * directly would never start. The block is checked against the checksum
 * taken when it was written: a block that reads back otherwise is an I/O
 * error, not another page's data.
 */
#include "hzram.h"

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/capability.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/wait.h>

/* Bounce pages kept for reads of blocks, per backing device. */
#define HZRAM_BD_POOL_PAGES	4
#define HZRAM_WB_BATCH_DEFAULT	32
#define HZRAM_NO_BLOCK		(~0UL)

/* writeback's types, as zram's. */
#define HZRAM_WB_HUGE		BIT(0)
#define HZRAM_WB_IDLE		BIT(1)
#define HZRAM_WB_INCOMPRESSIBLE	BIT(2)

static struct workqueue_struct *hzram_bd_wq;

int hzram_wb_init(void)
{
	/*
	 * Reads of swapped-out pages wait on it: it must run under reclaim.
	 * Unbound: the reader waits, whichever CPU serves it (and 7.x
	 * warns about a queue that says neither unbound nor per-CPU).
	 */
	hzram_bd_wq = alloc_workqueue("hzram_bd", WQ_UNBOUND | WQ_MEM_RECLAIM |
				      WQ_HIGHPRI, 0);
	return hzram_bd_wq ? 0 : -ENOMEM;
}

void hzram_wb_exit(void)
{
	destroy_workqueue(hzram_bd_wq);
}

void hzram_wb_device_init(struct hzram *hz)
{
	mutex_init(&hz->pp_mutex);
	spin_lock_init(&hz->wb_limit_lock);
	hz->wb_batch_size = HZRAM_WB_BATCH_DEFAULT;
}

/* Release block @blk, which a slot or a writeback held. */
void hzram_bd_release(struct hzram *hz, unsigned long blk)
{
	WARN_ON_ONCE(!test_and_clear_bit(blk, hz->bd->bitmap));
	atomic64_dec(&hz->stats.bd_count);
}

/* A free block, now taken, or HZRAM_NO_BLOCK. One writeback at a time. */
static unsigned long hzram_bd_reserve(struct hzram *hz)
{
	struct hzram_bd *bd = hz->bd;
	unsigned long blk = bd->next, from = blk;
	bool wrapped = false;

	lockdep_assert_held(&hz->pp_mutex);
	/* From after the last one taken, once round: not O(n^2) a writeback. */
	for (;;) {
		blk = find_next_zero_bit(bd->bitmap, bd->nr_blocks, blk);
		if (blk >= bd->nr_blocks) {
			if (wrapped || !from)
				return HZRAM_NO_BLOCK;
			wrapped = true;
			blk = 0;
			continue;
		}
		if (wrapped && blk >= from)
			return HZRAM_NO_BLOCK;
		if (!test_and_set_bit(blk, bd->bitmap))
			break;
	}
	bd->next = blk + 1 < bd->nr_blocks ? blk + 1 : 0;
	atomic64_inc(&hz->stats.bd_count);
	return blk;
}

/* One synchronous read of a block, from the work queue. */
struct hzram_bd_io {
	struct work_struct work;
	struct block_device *bdev;
	sector_t sector;
	struct page *page;
	int err;
};

/* Where block @blk of the backing device or file is on bd->bdev. */
static sector_t hzram_bd_sector(const struct hzram_bd *bd, unsigned long blk)
{
	const struct hzram_bd_extent *e;
	unsigned int lo = 0, hi = bd->nr_ext, mid;

	if (!bd->inode)
		return (sector_t)blk << HZRAM_SECTOR_PAGE_SHIFT;
	/* The last extent that starts at or before @blk: it holds it. */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (bd->ext[mid].page <= blk)
			lo = mid;
		else
			hi = mid;
	}
	e = &bd->ext[lo];
	WARN_ON_ONCE(blk < e->page || blk >= e->page + e->nr);
	return e->sector + ((sector_t)(blk - e->page) << HZRAM_SECTOR_PAGE_SHIFT);
}

static void hzram_bd_io_fn(struct work_struct *work)
{
	struct hzram_bd_io *io = container_of(work, struct hzram_bd_io, work);
	struct bio_vec bv;
	struct bio bio;

	bio_init(&bio, io->bdev, &bv, 1, REQ_OP_READ | REQ_SYNC);
	bio.bi_iter.bi_sector = io->sector;
	__bio_add_page(&bio, io->page, PAGE_SIZE, 0);
	io->err = submit_bio_wait(&bio);
	bio_uninit(&bio);
}

/**
 * hzram_bd_read() - read bytes of a written-back page from its block
 * @hz: the device
 * @index: the page, WB; its slot lock is held throughout
 * @off: the first byte wanted
 * @dst: where to put them
 * @len: how many (@off + @len at most PAGE_SIZE)
 *
 * May sleep; never under a stream. Counts a read of the backing device.
 *
 * Return: 0, or -EIO if the block cannot be read, reads back other than
 * it was written, or does not decode.
 */
int hzram_bd_read(struct hzram *hz, u32 index, unsigned int off, void *dst,
		  unsigned int len)
{
	const struct hzram_slot *slot = &hz->table[index];
	unsigned int size = slot->flags & HZRAM_SIZE_MASK;
	unsigned long blk = slot->handle;
	struct hzram_bd_io io = {
		.bdev = hz->bd->bdev,
		.sector = hzram_bd_sector(hz->bd, blk),
	};
	struct hzram_strm *strm;
	void *buf;
	int ret;

	hzram_assert_slot_locked(hz);
	might_sleep();
	atomic64_inc(&hz->stats.bd_reads);
	io.page = mempool_alloc(hz->bd->pages, GFP_NOIO);
	INIT_WORK_ONSTACK(&io.work, hzram_bd_io_fn);
	queue_work(hzram_bd_wq, &io.work);
	flush_work(&io.work);
	destroy_work_on_stack(&io.work);
	ret = io.err;
	if (ret) {
		pr_err_ratelimited("%s: page %u: block %lu cannot be read: %d\n",
				   hz->disk->disk_name, index, blk, ret);
		ret = -EIO;
		goto out;
	}
	buf = kmap_local_page(io.page);
	if (hzram_page_csum(buf) != (u32)(slot->flags >> HZRAM_CSUM_SHIFT)) {
		pr_err_ratelimited("%s: page %u: block %lu reads back other than written\n",
				   hz->disk->disk_name, index, blk);
		ret = -EIO;
	} else if (!hz->compressed_wb || size == PAGE_SIZE) {
		memcpy(dst, buf + off, len);
	} else {
		if (len == PAGE_SIZE) {
			ret = hzram_comp_decompress(hzram_slot_comp(hz, index),
						    buf, size, dst);
		} else {
			strm = hzram_strm_get(hz->comp);
			ret = hzram_comp_decompress(hzram_slot_comp(hz, index),
						    buf, size,
						    strm->scratch);
			if (!ret)
				memcpy(dst, strm->scratch + off, len);
			hzram_strm_put(hz->comp);
		}
		if (ret)
			pr_err_ratelimited("%s: page %u: block %lu does not decompress\n",
					   hz->disk->disk_name, index, blk);
	}
	kunmap_local(buf);
out:
	mempool_free(io.page, hz->bd->pages);
	return ret;
}

/*
 * Choose the pages in [@lo, @hi) that writeback @mode takes: stored in
 * memory (not same-filled, not staged for the helper, not written back
 * yet, not chosen already), and of the type asked. Stops early when
 * memory for the list runs out, as zram does.
 */
static void hzram_wb_scan(struct hzram *hz, struct hzram_pp *pp, u32 mode,
			  unsigned long lo, unsigned long hi)
{
	unsigned long index;

	for (index = lo; index < hi; index++) {
		struct hzram_slot *slot = &hz->table[index];
		unsigned long flags;

		if (!hzram_pp_reserve(pp))
			break;
		hzram_slot_lock(hz, index);
		flags = slot->flags;
		if (!slot->handle ||
		    (flags & (BIT(HZRAM_SLOT_SAME) | BIT(HZRAM_SLOT_STAGED) |
			      BIT(HZRAM_SLOT_WB) | BIT(HZRAM_SLOT_PP))))
			goto next;
		if ((mode & HZRAM_WB_IDLE) && !(flags & BIT(HZRAM_SLOT_IDLE)))
			goto next;
		if ((mode & HZRAM_WB_HUGE) && !(flags & BIT(HZRAM_SLOT_HUGE)))
			goto next;
		if ((mode & HZRAM_WB_INCOMPRESSIBLE) &&
		    !(flags & BIT(HZRAM_SLOT_INCOMPRESSIBLE)))
			goto next;
		hzram_pp_push(hz, pp, index, flags);
next:
		hzram_slot_unlock(hz, index);
		if (!(index % 1024))
			cond_resched();
	}
}

/* A write of one block, and the page it writes from. */
struct hzram_wb_req {
	struct list_head entry;
	struct hzram_wb_ctl *ctl;
	struct page *page;
	u32 index;
	unsigned long blk;
	u32 csum;
	bool charged;		/* took a page off writeback_limit */
	struct bio_vec bv;
	struct bio bio;
};

/*
 * The writes of one writeback: idle ones, and done ones that the end_io
 * handler queued. The handler touches the control only under done_lock,
 * which the writer takes for every done write it takes back: once the
 * writer has taken the last one, no handler can touch the control again.
 */
struct hzram_wb_ctl {
	struct list_head idle;
	struct list_head done;
	spinlock_t done_lock;
	wait_queue_head_t done_wait;
	unsigned int in_flight;
};

static void hzram_wb_endio(struct bio *bio)
{
	struct hzram_wb_req *req = container_of(bio, struct hzram_wb_req, bio);
	struct hzram_wb_ctl *ctl = req->ctl;
	unsigned long flags;

	spin_lock_irqsave(&ctl->done_lock, flags);
	list_add_tail(&req->entry, &ctl->done);
	wake_up(&ctl->done_wait);
	spin_unlock_irqrestore(&ctl->done_lock, flags);
}

static void hzram_wb_ctl_free(struct hzram_wb_ctl *ctl)
{
	struct hzram_wb_req *req, *tmp;

	WARN_ON_ONCE(ctl->in_flight || !list_empty(&ctl->done));
	list_for_each_entry_safe(req, tmp, &ctl->idle, entry) {
		__free_page(req->page);
		kfree(req);
	}
}

/* Up to @n writes; 0, or -ENOMEM if not even one could be had. */
static int hzram_wb_ctl_init(struct hzram_wb_ctl *ctl, unsigned int n)
{
	INIT_LIST_HEAD(&ctl->idle);
	INIT_LIST_HEAD(&ctl->done);
	spin_lock_init(&ctl->done_lock);
	init_waitqueue_head(&ctl->done_wait);
	ctl->in_flight = 0;
	while (n--) {
		/* Fewer writes at once rather than an OOM kill. */
		struct hzram_wb_req *req = kzalloc(sizeof(*req),
						   GFP_KERNEL | __GFP_NORETRY |
						   __GFP_NOWARN);

		if (!req)
			break;
		req->page = alloc_page(GFP_KERNEL | __GFP_NORETRY |
				       __GFP_NOWARN);
		if (!req->page) {
			kfree(req);
			break;
		}
		req->ctl = ctl;
		list_add(&req->entry, &ctl->idle);
	}
	return list_empty(&ctl->idle) ? -ENOMEM : 0;
}

/*
 * Take one page off the budget before its write, if the limit is on.
 * Return: whether it was taken, so that a failed write gives back only
 * what it took (the limit may be switched or set meanwhile).
 */
static bool hzram_wb_limit_charge(struct hzram *hz)
{
	bool charged = false;

	spin_lock(&hz->wb_limit_lock);
	if (hz->wb_limit_enable && hz->wb_limit) {
		hz->wb_limit -= PAGE_SIZE >> 12;
		charged = true;
	}
	spin_unlock(&hz->wb_limit_lock);
	return charged;
}

static void hzram_wb_limit_refund(struct hzram *hz)
{
	spin_lock(&hz->wb_limit_lock);
	hz->wb_limit += PAGE_SIZE >> 12;
	spin_unlock(&hz->wb_limit_lock);
}

static bool hzram_wb_limit_spent(struct hzram *hz)
{
	bool spent;

	spin_lock(&hz->wb_limit_lock);
	spent = hz->wb_limit_enable && !hz->wb_limit;
	spin_unlock(&hz->wb_limit_lock);
	return spent;
}

/* What became of one write; its errno if it failed. */
static int hzram_wb_complete(struct hzram *hz, struct hzram_wb_req *req)
{
	int err = blk_status_to_errno(req->bio.bi_status);

	bio_uninit(&req->bio);
	if (err) {
		pr_err_ratelimited("%s: page %u: writing block %lu failed: %d\n",
				   hz->disk->disk_name, req->index, req->blk,
				   err);
		if (req->charged)
			hzram_wb_limit_refund(hz);
		hzram_bd_release(hz, req->blk);
		hzram_pp_unmark(hz, req->index);
		return err;
	}
	atomic64_inc(&hz->stats.bd_writes);
	if (!hzram_wb_install(hz, req->index, req->blk, req->csum))
		hzram_bd_release(hz, req->blk);
	return 0;
}

/*
 * Take back the writes done; with @wait, first wait for one. Return: the
 * errno of the last that failed, or 0.
 */
static int hzram_wb_reap(struct hzram *hz, struct hzram_wb_ctl *ctl, bool wait)
{
	struct hzram_wb_req *req;
	int ret = 0, err;

	if (wait)
		wait_event(ctl->done_wait, !list_empty_careful(&ctl->done));
	for (;;) {
		spin_lock_irq(&ctl->done_lock);
		req = list_first_entry_or_null(&ctl->done, struct hzram_wb_req,
					       entry);
		if (req)
			list_del(&req->entry);
		spin_unlock_irq(&ctl->done_lock);
		if (!req)
			return ret;
		ctl->in_flight--;
		err = hzram_wb_complete(hz, req);
		if (err)
			ret = err;
		list_add(&req->entry, &ctl->idle);
	}
}

/*
 * Write the chosen pages back. Return: 0; -EIO once the limit is spent
 * or when a write failed (the others go on); -ENOSPC when the backing
 * device is full. The pages not written back stay as they were.
 */
static int hzram_wb_pages(struct hzram *hz, struct hzram_pp *pp,
			  struct hzram_wb_ctl *ctl)
{
	const bool compressed = hz->compressed_wb;
	unsigned long blk = HZRAM_NO_BLOCK;
	struct hzram_wb_req *req;
	int ret = 0, err;
	void *buf;
	u32 index;

	while (hzram_pp_pop(pp, &index)) {
		if (hzram_wb_limit_spent(hz)) {
			hzram_pp_unmark(hz, index);
			ret = -EIO;
			break;
		}
		while (list_empty(&ctl->idle)) {
			err = hzram_wb_reap(hz, ctl, true);
			if (err)
				ret = err;
		}
		if (blk == HZRAM_NO_BLOCK) {
			blk = hzram_bd_reserve(hz);
			if (blk == HZRAM_NO_BLOCK) {
				hzram_pp_unmark(hz, index);
				ret = -ENOSPC;
				break;
			}
		}
		req = list_first_entry(&ctl->idle, struct hzram_wb_req, entry);
		hzram_slot_lock(hz, index);
		/* Accessed or changed since it was chosen: it stays. */
		if (!(hz->table[index].flags & BIT(HZRAM_SLOT_PP))) {
			hzram_slot_unlock(hz, index);
			continue;
		}
		buf = kmap_local_page(req->page);
		err = hzram_wb_source(hz, index, buf, compressed);
		if (err)
			WRITE_ONCE(hz->table[index].flags,
				   hz->table[index].flags & ~BIT(HZRAM_SLOT_PP));
		hzram_slot_unlock(hz, index);
		if (!err)
			req->csum = hzram_page_csum(buf);
		kunmap_local(buf);
		if (err)
			continue;
		list_del(&req->entry);
		req->index = index;
		req->blk = blk;
		blk = HZRAM_NO_BLOCK;
		bio_init(&req->bio, hz->bd->bdev, &req->bv, 1, REQ_OP_WRITE);
		req->bio.bi_iter.bi_sector = hzram_bd_sector(hz->bd, req->blk);
		req->bio.bi_end_io = hzram_wb_endio;
		__bio_add_page(&req->bio, req->page, PAGE_SIZE, 0);
		req->charged = hzram_wb_limit_charge(hz);
		ctl->in_flight++;
		submit_bio(&req->bio);
		/* The done ones, without waiting: their pages go sooner. */
		err = hzram_wb_reap(hz, ctl, false);
		if (err)
			ret = err;
		/* A killed writer lets reset and removal go on. */
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
	if (blk != HZRAM_NO_BLOCK)
		hzram_bd_release(hz, blk);
	while (ctl->in_flight) {
		err = hzram_wb_reap(hz, ctl, true);
		if (err)
			ret = err;
	}
	return ret;
}

static int hzram_wb_parse_mode(const char *val, u32 *mode)
{
	if (!strcmp(val, "idle"))
		*mode = HZRAM_WB_IDLE;
	else if (!strcmp(val, "huge"))
		*mode = HZRAM_WB_HUGE;
	else if (!strcmp(val, "huge_idle"))
		*mode = HZRAM_WB_IDLE | HZRAM_WB_HUGE;
	else if (!strcmp(val, "incompressible"))
		*mode = HZRAM_WB_INCOMPRESSIBLE;
	else
		return -EINVAL;
	return 0;
}

/* "N": the page [N, N + 1). */
static int hzram_wb_parse_index(const char *val, unsigned long nr,
				unsigned long *lo, unsigned long *hi)
{
	int ret = kstrtoul(val, 10, lo);

	if (ret)
		return ret;
	if (*lo >= nr)
		return -ERANGE;
	*hi = *lo + 1;
	return 0;
}

/* "LO-HI": the pages [LO, HI + 1). */
static int hzram_wb_parse_range(char *val, unsigned long nr,
				unsigned long *lo, unsigned long *hi)
{
	char *dash = strchr(val, '-');
	int ret;

	if (!dash)
		return -EINVAL;
	*dash = '\0';
	ret = kstrtoul(val, 10, lo);
	if (ret)
		return ret;
	if (*lo >= nr)
		return -ERANGE;
	ret = kstrtoul(dash + 1, 10, hi);
	if (ret)
		return ret;
	if (*hi >= nr || *lo > *hi)
		return -ERANGE;
	*hi += 1;
	return 0;
}

/*
 * Choose pages as @args asks, zram's way: a bare type (the older form) or
 * type=TYPE chooses that type in the range given so far (the whole device
 * if none) and ends the arguments; each page_index=N or page_indexes=LO-HI
 * chooses every page in it of the type given so far (any, if none); other
 * keys with a value are ignored.
 */
static int hzram_wb_choose(struct hzram *hz, struct hzram_pp *pp, char *args)
{
	unsigned long nr = hz->disksize >> PAGE_SHIFT, lo = 0, hi = nr;
	char *param, *val;
	u32 mode = 0;
	int ret;

	args = skip_spaces(args);
	while (*args) {
		args = next_arg(args, &param, &val);
		if (!val || !*val || !strcmp(param, "type")) {
			ret = hzram_wb_parse_mode(val && *val ? val : param,
						  &mode);
			if (ret)
				return ret;
			hzram_wb_scan(hz, pp, mode, lo, hi);
			return 0;
		}
		if (!strcmp(param, "page_index"))
			ret = hzram_wb_parse_index(val, nr, &lo, &hi);
		else if (!strcmp(param, "page_indexes"))
			ret = hzram_wb_parse_range(val, nr, &lo, &hi);
		else
			continue;
		if (ret)
			return ret;
		hzram_wb_scan(hz, pp, mode, lo, hi);
	}
	return 0;
}

static int __hzram_writeback(struct hzram *hz, char *args)
{
	struct hzram_wb_ctl ctl;
	struct hzram_pp *pp;
	int ret;

	pp = kzalloc(sizeof(*pp), GFP_KERNEL);
	if (!pp)
		return -ENOMEM;
	ret = hzram_wb_choose(hz, pp, args);
	/* No more writes in flight than pages to write. */
	if (!ret && pp->count) {
		ret = hzram_wb_ctl_init(&ctl, min_t(unsigned long, pp->count,
						    READ_ONCE(hz->wb_batch_size)));
		if (!ret)
			ret = hzram_wb_pages(hz, pp, &ctl);
		hzram_wb_ctl_free(&ctl);
	}
	hzram_pp_release(hz, pp);
	kfree(pp);
	return ret;
}

static ssize_t writeback_store(struct device *dev, struct device_attribute *attr,
			       const char *buf, size_t len)
{
	struct hzram *hz = dev_to_hzram(dev);
	char *args;
	int ret;

	args = kstrndup(buf, len, GFP_KERNEL);
	if (!args)
		return -ENOMEM;
	down_read(&hz->init_lock);
	if (!hzram_init_done(hz)) {
		ret = -EINVAL;
	} else if (!hz->bd) {
		ret = -ENODEV;
	} else {
		mutex_lock(&hz->pp_mutex);
		ret = __hzram_writeback(hz, args);
		mutex_unlock(&hz->pp_mutex);
	}
	up_read(&hz->init_lock);
	kfree(args);
	return ret ? ret : len;
}

/*
 * Let go of a backing file's inode and map (hzram_bd_map_file()). What
 * its page cache held is older than its blocks: dropped, so that the file
 * reads what is on disk afterwards.
 */
static void hzram_bd_unmap_file(struct hzram_bd *bd)
{
	if (bd->inode) {
		invalidate_mapping_pages(bd->inode->i_mapping, 0, -1);
		inode_lock(bd->inode);
		bd->inode->i_flags &= ~S_SWAPFILE;
		inode_unlock(bd->inode);
		bd->inode = NULL;
	}
	kvfree(bd->ext);
	bd->ext = NULL;
	bd->nr_ext = 0;
}

/* Add page @page of the file, at @sector, to the map. */
static int hzram_bd_map_page(struct hzram_bd *bd, unsigned int *room,
			     unsigned long page, sector_t sector)
{
	struct hzram_bd_extent *e = bd->nr_ext ? &bd->ext[bd->nr_ext - 1] : NULL;

	if (e && e->page + e->nr == page &&
	    e->sector + ((sector_t)e->nr << HZRAM_SECTOR_PAGE_SHIFT) == sector) {
		e->nr++;
		return 0;
	}
	if (bd->nr_ext == *room) {
		unsigned int n = *room ? 2 * *room : 16;
		struct hzram_bd_extent *ext;

		ext = kvmalloc_array(n, sizeof(*ext), GFP_KERNEL);
		if (!ext)
			return -ENOMEM;
		if (bd->nr_ext)
			memcpy(ext, bd->ext, bd->nr_ext * sizeof(*ext));
		kvfree(bd->ext);
		bd->ext = ext;
		*room = n;
	}
	bd->ext[bd->nr_ext++] = (struct hzram_bd_extent){
		.page = page, .nr = 1, .sector = sector,
	};
	return 0;
}

/*
 * Filesystems whose files keep their blocks where bmap() found them while
 * S_SWAPFILE is set, and that only this kernel writes: ext2/3/4 and XFS.
 * (f2fs's cleaner moves blocks of any file it has not pinned; FUSE and
 * cluster filesystems can be written from elsewhere.)
 */
#define HZRAM_EXT4_SUPER_MAGIC	0xEF53
#define HZRAM_XFS_SUPER_MAGIC	0x58465342

/*
 * A regular file as backing store, as swap takes a swap file: held
 * (S_SWAPFILE: nobody writes, truncates, moves or removes it meanwhile),
 * its dirty pages written and its page cache dropped, then each page's
 * blocks mapped once (bmap()), so that writeback and reads go straight to
 * the filesystem's device, with no filesystem call on the I/O path. Every
 * page must be allocated and written (a hole, or an extent allocated and
 * never written, maps to nothing), in blocks contiguous within the page.
 *
 * Return: 0, with bd->bdev, bd->nr_blocks and the map set; -EPERM
 * without CAP_SYS_ADMIN; -EOPNOTSUPP on a kernel without swap (no
 * S_SWAPFILE to hold the file with); -ENOENT if the file was removed;
 * -EBUSY if it is held already (as swap, or by an hzram device);
 * -ETXTBSY if it is mapped shared and writable, or its page cache cannot
 * be dropped; -EINVAL if it is not on ext2/3/4 or XFS, is a DAX or an
 * encrypted file, has blocks larger than a page, or a page that does not
 * map; -EINTR; -ENOMEM; or what fsync returned. On error,
 * hzram_bd_unmap_file() lets go of what was taken.
 */
static int hzram_bd_map_file(struct hzram_bd *bd, struct inode *inode)
{
	const unsigned int blkbits = inode->i_blkbits;
	unsigned long magic = inode->i_sb->s_magic;
	unsigned int i, room = 0;
	unsigned long page, nr;
	sector_t first, b;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (!IS_ENABLED(CONFIG_SWAP))
		return -EOPNOTSUPP;
	if ((magic != HZRAM_EXT4_SUPER_MAGIC &&
	     magic != HZRAM_XFS_SUPER_MAGIC) || !inode->i_sb->s_bdev ||
	    blkbits > PAGE_SHIFT || IS_DAX(inode) || IS_ENCRYPTED(inode))
		return -EINVAL;
	inode_lock(inode);
	if (d_unlinked(bd->file->f_path.dentry)) {
		inode_unlock(inode);
		return -ENOENT;
	}
	if (IS_SWAPFILE(inode)) {
		inode_unlock(inode);
		return -EBUSY;
	}
	/* A shared writable mapping could still dirty its pages. */
	if (mapping_writably_mapped(inode->i_mapping)) {
		inode_unlock(inode);
		return -ETXTBSY;
	}
	inode->i_flags |= S_SWAPFILE;
	inode_unlock(inode);
	bd->inode = inode;
	if (inode->i_mode & 0077)
		pr_warn("backing file %pD is open to others than its owner (mode %03o)\n",
			bd->file, inode->i_mode & 0777);
	/*
	 * Blocks the page cache has yet to write would land on ours later:
	 * written, with what maps them, and then the cache dropped (a page
	 * pinned meanwhile, which could be dirtied when let go, fails it).
	 */
	inode_dio_wait(inode);
	ret = vfs_fsync(bd->file, 0);
	if (ret)
		return ret;
	if (invalidate_inode_pages2(inode->i_mapping))
		return -ETXTBSY;
	nr = i_size_read(inode) >> PAGE_SHIFT;
	for (page = 0; page < nr; page++) {
		first = 0;
		for (i = 0; i < 1U << (PAGE_SHIFT - blkbits); i++) {
			b = ((sector_t)page << (PAGE_SHIFT - blkbits)) + i;
			ret = bmap(inode, &b);
			if (ret || !b || (i && b != first + i))
				return -EINVAL;
			if (!i)
				first = b;
		}
		ret = hzram_bd_map_page(bd, &room, page,
					first << (blkbits - SECTOR_SHIFT));
		if (ret)
			return ret;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	bd->bdev = inode->i_sb->s_bdev;
	bd->nr_blocks = nr;
	return 0;
}

/* Close the backing device; init_lock is held for writing, no data left. */
void hzram_bd_drop(struct hzram *hz)
{
	struct hzram_bd *bd = hz->bd;

	lockdep_assert_held_write(&hz->init_lock);
	if (!bd)
		return;
	hz->bd = NULL;
	WARN_ON_ONCE(!bitmap_empty(bd->bitmap, bd->nr_blocks));
	/* Blocks written are on the device: nothing is cached to flush. */
	hzram_bd_unmap_file(bd);
	filp_close(bd->file, NULL);
	mempool_destroy(bd->pages);
	kvfree(bd->bitmap);
	kfree(bd);
}

/**
 * hzram_bd_set() - make the block device or file at @path the backing
 *	device
 * @hz: the device, not initialised
 * @path: the device's or file's path (a trailing newline is ignored)
 *
 * Replaces the backing device set before, if any.
 *
 * Return: 0; -EBUSY if @hz is initialised; -ENOTBLK if @path is neither
 * a block device nor a regular file; -EINVAL if it has no whole page, is
 * an hzram device or on one, or has logical blocks larger than a page;
 * for a file, what hzram_bd_map_file() returns; -ENOMEM; or what opening
 * it returned (-ENOENT, -EISDIR, or -EBUSY if another holds it
 * exclusively, this device included).
 */
int hzram_bd_set(struct hzram *hz, const char *path)
{
	struct hzram_bd *bd;
	struct inode *inode;
	int ret;

	bd = kzalloc(sizeof(*bd), GFP_KERNEL);
	if (!bd)
		return -ENOMEM;
	down_write(&hz->init_lock);
	if (hzram_init_done(hz)) {
		ret = -EBUSY;
		goto err_unlock;
	}
	bd->file = filp_open(path, O_RDWR | O_LARGEFILE | O_EXCL, 0);
	if (IS_ERR(bd->file)) {
		ret = PTR_ERR(bd->file);
		goto err_unlock;
	}
	inode = bd->file->f_mapping->host;
	if (S_ISBLK(inode->i_mode)) {
		bd->bdev = I_BDEV(inode);
		bd->nr_blocks = i_size_read(inode) >> PAGE_SHIFT;
	} else if (S_ISREG(inode->i_mode)) {
		ret = hzram_bd_map_file(bd, inode);
		if (ret)
			goto err_close;
	} else {
		ret = -ENOTBLK;
		goto err_close;
	}
	/*
	 * Not another hzram device: a read of a written-back page holds a
	 * slot lock across the backing device's I/O, which would take a slot
	 * lock of the same class, and wait on the same work queue. Not a
	 * device whose blocks are larger than a page.
	 */
	if (hzram_is_hzram_disk(bd->bdev->bd_disk) ||
	    bdev_logical_block_size(bd->bdev) > PAGE_SIZE) {
		ret = -EINVAL;
		goto err_close;
	}
	/* A block index is a slot's handle; 0 blocks: our own device too. */
	if (!bd->nr_blocks) {
		ret = -EINVAL;
		goto err_close;
	}
	ret = -ENOMEM;
	bd->bitmap = kvcalloc(BITS_TO_LONGS(bd->nr_blocks), sizeof(long),
			      GFP_KERNEL);
	if (!bd->bitmap)
		goto err_close;
	bd->pages = mempool_create_page_pool(HZRAM_BD_POOL_PAGES, 0);
	if (!bd->pages)
		goto err_free_bitmap;
	hzram_bd_drop(hz);
	hz->bd = bd;
	up_write(&hz->init_lock);
	pr_info("%s: backing device %s, %lu pages\n", hz->disk->disk_name,
		path, bd->nr_blocks);
	return 0;

err_free_bitmap:
	kvfree(bd->bitmap);
err_close:
	hzram_bd_unmap_file(bd);
	filp_close(bd->file, NULL);
err_unlock:
	up_write(&hz->init_lock);
	kfree(bd);
	return ret;
}

static ssize_t backing_dev_store(struct device *dev,
				 struct device_attribute *attr, const char *buf,
				 size_t len)
{
	char *path = kstrndup(buf, min_t(size_t, len, PATH_MAX - 1),
			      GFP_KERNEL);
	size_t n;
	int ret;

	if (!path)
		return -ENOMEM;
	n = strlen(path);
	if (n && path[n - 1] == '\n')
		path[n - 1] = '\0';
	ret = hzram_bd_set(dev_to_hzram(dev), path);
	kfree(path);
	return ret ? ret : len;
}

static ssize_t backing_dev_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct hzram *hz = dev_to_hzram(dev);
	ssize_t ret;
	char *p;

	down_read(&hz->init_lock);
	if (!hz->bd) {
		up_read(&hz->init_lock);
		return sysfs_emit(buf, "none\n");
	}
	p = file_path(hz->bd->file, buf, PAGE_SIZE - 1);
	if (IS_ERR(p)) {
		ret = PTR_ERR(p);
	} else {
		ret = strlen(p);
		memmove(buf, p, ret);
		buf[ret++] = '\n';
	}
	up_read(&hz->init_lock);
	return ret;
}

/*
 * writeback_limit (@enable false: 4 KiB pages, a whole number of this
 * system's pages) or writeback_limit_enable (any number but 0 is on): a
 * decimal u64, as zram takes both.
 */
static ssize_t hzram_wb_limit_store(struct device *dev, const char *buf,
				    size_t len, bool enable)
{
	struct hzram *hz = dev_to_hzram(dev);
	u64 val;

	if (kstrtoull(buf, 10, &val))
		return -EINVAL;
	spin_lock(&hz->wb_limit_lock);
	if (enable)
		hz->wb_limit_enable = val;
	else
		hz->wb_limit = rounddown(val, PAGE_SIZE >> 12);
	spin_unlock(&hz->wb_limit_lock);
	return len;
}

static ssize_t hzram_wb_limit_show(struct device *dev, char *buf, bool enable)
{
	struct hzram *hz = dev_to_hzram(dev);
	u64 val;

	spin_lock(&hz->wb_limit_lock);
	val = enable ? hz->wb_limit_enable : hz->wb_limit;
	spin_unlock(&hz->wb_limit_lock);
	return sysfs_emit(buf, "%llu\n", val);
}

static ssize_t writeback_limit_store(struct device *dev,
				     struct device_attribute *attr,
				     const char *buf, size_t len)
{
	return hzram_wb_limit_store(dev, buf, len, false);
}

static ssize_t writeback_limit_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	return hzram_wb_limit_show(dev, buf, false);
}

static ssize_t writeback_limit_enable_store(struct device *dev,
					    struct device_attribute *attr,
					    const char *buf, size_t len)
{
	return hzram_wb_limit_store(dev, buf, len, true);
}

static ssize_t writeback_limit_enable_show(struct device *dev,
					   struct device_attribute *attr,
					   char *buf)
{
	return hzram_wb_limit_show(dev, buf, true);
}

static ssize_t writeback_batch_size_store(struct device *dev,
					  struct device_attribute *attr,
					  const char *buf, size_t len)
{
	unsigned int val;

	if (kstrtouint(buf, 10, &val) || !val)
		return -EINVAL;
	WRITE_ONCE(dev_to_hzram(dev)->wb_batch_size, val);
	return len;
}

static ssize_t writeback_batch_size_show(struct device *dev,
					 struct device_attribute *attr,
					 char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(dev_to_hzram(dev)->wb_batch_size));
}

static ssize_t compressed_writeback_store(struct device *dev,
					  struct device_attribute *attr,
					  const char *buf, size_t len)
{
	struct hzram *hz = dev_to_hzram(dev);
	bool val;
	int ret = 0;

	if (kstrtobool(buf, &val))
		return -EINVAL;
	down_write(&hz->init_lock);
	if (hzram_init_done(hz))
		ret = -EBUSY;
	else
		hz->compressed_wb = val;
	up_write(&hz->init_lock);
	return ret ? ret : len;
}

static ssize_t compressed_writeback_show(struct device *dev,
					 struct device_attribute *attr,
					 char *buf)
{
	struct hzram *hz = dev_to_hzram(dev);
	bool val;

	down_read(&hz->init_lock);
	val = hz->compressed_wb;
	up_read(&hz->init_lock);
	return sysfs_emit(buf, "%d\n", val);
}

/* Pages on the backing device, read from it, written to it: 4 KiB units. */
/* bd_stat's fields, in 4 KiB pages (as zram's, whatever PAGE_SIZE). */
void hzram_bd_stat(struct hzram *hz, u64 v[HZRAM_BD_NR_FIELDS])
{
	const u64 k = PAGE_SIZE >> 12;

	v[HZRAM_BD_COUNT] = k * atomic64_read(&hz->stats.bd_count);
	v[HZRAM_BD_READS] = k * atomic64_read(&hz->stats.bd_reads);
	v[HZRAM_BD_WRITES] = k * atomic64_read(&hz->stats.bd_writes);
}

static ssize_t bd_stat_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	u64 v[HZRAM_BD_NR_FIELDS];

	hzram_bd_stat(dev_to_hzram(dev), v);
	return sysfs_emit(buf, "%8llu %8llu %8llu\n", v[0], v[1], v[2]);
}

static DEVICE_ATTR_RW(backing_dev);
static DEVICE_ATTR_WO(writeback);
static DEVICE_ATTR_RW(writeback_limit);
static DEVICE_ATTR_RW(writeback_limit_enable);
static DEVICE_ATTR_RW(writeback_batch_size);
static DEVICE_ATTR_RW(compressed_writeback);
static DEVICE_ATTR_RO(bd_stat);

static struct attribute *hzram_wb_attrs[] = {
	&dev_attr_backing_dev.attr,
	&dev_attr_writeback.attr,
	&dev_attr_writeback_limit.attr,
	&dev_attr_writeback_limit_enable.attr,
	&dev_attr_writeback_batch_size.attr,
	&dev_attr_compressed_writeback.attr,
	&dev_attr_bd_stat.attr,
	NULL,
};

const struct attribute_group hzram_wb_group = {
	.attrs = hzram_wb_attrs,
};
