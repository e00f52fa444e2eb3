// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: the helper offload. A userspace helper (hzramd) attaches to a
 * device through /dev/hzram-control and compresses batches of written
 * pages for it; the protocol is in include/uapi/linux/hzram.h and
 * Documentation/uapi.rst.
 *
 * While a helper is attached and the device is initialised with lz4, a
 * full-page write that is not same-filled is copied into a cell of the
 * open batch in the staging arena, its slot marked STAGED, and the bio
 * completes. A batch closes when it is full or offload_flush_us after it
 * opened; a batch of fewer than offload_min_pages pages is compressed by
 * the module (kwork), any other goes to the helper through a FETCH. Its
 * COMMIT, due offload_timeout_ms after the batch closed, stores each
 * page as the helper encoded it, after checking the
 * record (hzram_store_staged()). The module takes a batch back, and
 * compresses it itself, when the helper has not committed it by then,
 * when the helper dies (the monitor sees its process
 * exit) or detaches, and when the device is reset. No write ever waits
 * for the helper: without a free batch, the writer compresses inline.
 *
 * Batch states (under off->lock): FREE -> OPEN (filling) -> CLOSED (its
 * writers finishing) -> READY (queued for a FETCH) -> HELPER (fetched) ->
 * KERNEL (being stored, by a commit, kwork, a time-out or a stop) -> FREE.
 * A batch leaves HELPER once: the commit or the take-back that moves it
 * on owns it, and a later commit of it is refused (its seq changed).
 *
 * Locks, outermost first: hzram_index_mutex, hzram_offload_mutex (the
 * links between devices and helpers), hz->init_lock, off->mutex (commits,
 * time-outs and stops), slot locks, off->lock (a spinlock).
 */
#include "hzram.h"

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#define HZRAM_OFFLOAD_BATCHES	8	/* batches of one helper */
#define HZRAM_MONITOR_MS	20	/* how often the helper is checked */

DEFINE_MUTEX(hzram_offload_mutex);
static struct workqueue_struct *hzram_offload_wq;
/*
 * The monitors: a queue of their own, because detaching a dead helper
 * flushes work on hzram_offload_wq, which under memory pressure may be
 * down to its one rescuer thread.
 */
static struct workqueue_struct *hzram_monitor_wq;

enum hzram_batch_state {
	HZRAM_BATCH_FREE,
	HZRAM_BATCH_OPEN,
	HZRAM_BATCH_CLOSED,
	HZRAM_BATCH_READY,
	HZRAM_BATCH_HELPER,
	HZRAM_BATCH_KERNEL,
};

struct hzram_batch {
	struct list_head node;		/* on ready or kernel_list */
	enum hzram_batch_state state;
	unsigned int nr;		/* cells taken (pages to decode) */
	atomic_t pending;		/* writers in it, +1 while OPEN (its
					 * reader, while a read fills it) */
	u64 seq;			/* of its hand-out to the helper */
	unsigned long deadline;		/* jiffies: commit by then */
	ktime_t handed;			/* when it was handed out */
	u32 *index;			/* the slot of each cell (a read: the
					 * page of the bio) */
	/* A read batch (HZRAM_OP_DECOMPRESS): */
	bool read;
	bool verify;			/* check csum[] (offload_verify) */
	struct bio *bio;		/* the read, ended with the batch */
	struct bvec_iter iter;		/* its pages */
	unsigned long start;		/* its I/O accounting */
	u64 created;			/* ns, when the bio came */
	blk_status_t status;		/* of the pages read inline */
	u32 *csum;			/* each page's checksum */
};

struct hzram_offload {
	struct hzram *hz;		/* NULL once unlinked (off->mutex) */
	struct task_struct *task;	/* the helper's thread group leader */
	struct mutex mutex;
	spinlock_t lock;
	bool active;			/* staging writes (under lock) */
	bool unlinked;			/* under lock; FETCH fails */
	bool died;			/* its death was counted (under
					 * hzram_offload_mutex) */
	bool decode;			/* HZRAM_FEAT_DECOMPRESS granted */
	unsigned int nr_batches;
	unsigned int batch_pages;
	void *ro;			/* descriptors, then staging */
	void *rw;			/* output slots */
	size_t ro_size, rw_size, staging_off, slot_size;
	struct hzram_batch batches[HZRAM_OFFLOAD_BATCHES];
	struct hzram_batch *open;
	struct list_head ready;
	struct list_head kernel_list;
	struct list_head fetchers;	/* FETCH commands waiting */
	wait_queue_head_t wq;		/* a batch's pending reached 0 */
	struct delayed_work flush_work;	/* closes the open batch */
	struct work_struct kwork;	/* compresses kernel_list */
	struct delayed_work monitor;	/* death and time-outs */
	void *scratch;			/* a page; under mutex */
	u64 next_seq;
};

/* What a waiting FETCH keeps in its command. */
struct hzram_fetch_pdu {
	struct list_head node;
	int res;
};

static struct hzram_fetch_pdu *hzram_pdu(struct io_uring_cmd *cmd)
{
	BUILD_BUG_ON(sizeof(struct hzram_fetch_pdu) >
		     sizeof_field(struct io_uring_cmd, pdu));
	return (struct hzram_fetch_pdu *)cmd->pdu;
}

static struct io_uring_cmd *hzram_pdu_cmd(struct hzram_fetch_pdu *pdu)
{
	return container_of((void *)pdu, struct io_uring_cmd, pdu);
}

static void hzram_offload_count(struct hzram *hz, int field)
{
	atomic64_inc(&hz->stats.offload[field]);
}

void hzram_offload_params_init(struct hzram_offload_params *p)
{
	p->batch_pages = 256;
	p->flush_us = 2000;
	p->min_pages = 32;
	p->timeout_ms = 1000;
	p->read_min_pages = 32;
	p->verify = true;
	p->mode = HZRAM_OFFLOAD_AUTO;
}

/*
 * offload auto sends a large read the slower way once in HZRAM_READ_PROBE
 * times how much slower that way is (at most HZRAM_READ_PROBE_MAX times),
 * to keep its measure current: probing costs about 1/HZRAM_READ_PROBE of
 * the read time.
 */
#define HZRAM_READ_PROBE	32
#define HZRAM_READ_PROBE_MAX	128

/* A moving average of ns per page, 1/8 of the new sample. */
static void hzram_ns_average(u64 *avg, u64 ns, unsigned int pages)
{
	u64 old = READ_ONCE(*avg), cur = div_u64(ns, max(pages, 1U));

	WRITE_ONCE(*avg, old ? old - (old >> 3) + (cur >> 3) : max(cur, 1ULL));
}

/* A large read decoded in the kernel took @ns for @pages pages. */
void hzram_read_measure(struct hzram *hz, u64 ns, unsigned int pages)
{
	hzram_ns_average(&hz->read_ns_kernel, ns, pages);
}

/*
 * Should this large read go to the helper? on: yes. auto: the faster way,
 * by the two moving averages, but for the probes of the slower one; the
 * kernel until it has been measured, then the helper until it has been.
 */
static bool hzram_read_to_helper(struct hzram *hz)
{
	u64 kernel, helper, ratio;
	bool helper_faster;
	unsigned int every;

	switch (READ_ONCE(hz->offp.mode)) {
	case HZRAM_OFFLOAD_ON:
		return true;
	case HZRAM_OFFLOAD_AUTO:
		kernel = READ_ONCE(hz->read_ns_kernel);
		helper = READ_ONCE(hz->read_ns_helper);
		if (!kernel || !helper)
			return kernel != 0;
		helper_faster = helper < kernel;
		ratio = helper_faster ? div64_u64(kernel, helper) :
					div64_u64(helper, kernel);
		every = HZRAM_READ_PROBE *
			clamp_t(u64, ratio, 1, HZRAM_READ_PROBE_MAX);
		if ((unsigned int)atomic_inc_return(&hz->read_probe) % every == 0)
			return !helper_faster;
		return helper_faster;
	default:
		return false;
	}
}

/* The round-trip histogram's bucket of @us, and that bucket's top. */
static unsigned int hzram_rtt_bucket(u64 us)
{
	unsigned int l;

	us = min_t(u64, us, U32_MAX);
	if (us < 4)
		return us;
	l = fls64(us) - 1;	/* 2..31 */
	return 4 * (l - 1) + ((us >> (l - 2)) & 3);
}

static u64 hzram_rtt_bucket_top(unsigned int bucket)
{
	unsigned int l = bucket / 4 + 1, sub = bucket % 4;

	if (bucket < 4)
		return bucket;
	return ((u64)(4 + sub + 1) << (l - 2)) - 1;
}

/**
 * hzram_offload_rtt() - a percentile of the batch round trips
 * @hz: the device
 * @pct: 1..100
 *
 * Return: the top of the histogram bucket that holds it, in microseconds;
 * 0 if no batch was committed.
 */
u64 hzram_offload_rtt(struct hzram *hz, unsigned int pct)
{
	u64 total = 0, want, seen = 0;
	unsigned int i;

	/* Commits may count meanwhile: the second pass only ends sooner. */
	for (i = 0; i < HZRAM_RTT_BUCKETS; i++)
		total += atomic64_read(&hz->stats.rtt[i]);
	if (!total)
		return 0;
	want = div_u64(total * pct + 99, 100);
	for (i = 0; i < HZRAM_RTT_BUCKETS; i++) {
		seen += atomic64_read(&hz->stats.rtt[i]);
		if (seen >= want)
			break;
	}
	return hzram_rtt_bucket_top(min_t(unsigned int, i,
					  HZRAM_RTT_BUCKETS - 1));
}

bool hzram_offload_attached(struct hzram *hz)
{
	return READ_ONCE(hz->off) != NULL;
}

static unsigned long hzram_cell(struct hzram_offload *off,
				struct hzram_batch *b, unsigned int i)
{
	return (unsigned long)(b - off->batches) * off->batch_pages + i;
}

static void *hzram_cell_page(struct hzram_offload *off, unsigned long cell)
{
	return off->ro + off->staging_off + cell * PAGE_SIZE;
}

static struct hzram_batch_desc *hzram_desc(struct hzram_offload *off,
					   struct hzram_batch *b)
{
	return (struct hzram_batch_desc *)off->ro + (b - off->batches);
}

static void hzram_fetch_done(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	hzram_uring_cmd_done(cmd, hzram_pdu(cmd)->res, issue_flags);
}
HZRAM_DEFINE_URING_TW(hzram_fetch_done_tw, hzram_fetch_done)

/* Complete a waiting FETCH; it was taken off the list. Any context. */
static void hzram_fetch_complete(struct hzram_fetch_pdu *pdu, int res)
{
	pdu->res = res;
	io_uring_cmd_complete_in_task(hzram_pdu_cmd(pdu), hzram_fetch_done_tw);
}

/* Give READY batch @b to the helper; returns its number. Under lock. */
static int hzram_batch_hand_out(struct hzram_offload *off,
				struct hzram_batch *b)
{
	struct hzram_batch_desc *d = hzram_desc(off, b);
	unsigned int n = b - off->batches;

	b->state = HZRAM_BATCH_HELPER;
	b->handed = ktime_get();
	b->seq = ++off->next_seq;
	d->seq = b->seq;
	d->nr_pages = b->nr;
	d->op = b->read ? HZRAM_OP_DECOMPRESS : HZRAM_OP_COMPRESS;
	d->flags = 0;
	d->staging_offset = (u64)n * off->batch_pages * PAGE_SIZE;
	d->output_offset = (u64)n * off->slot_size;
	return n;
}

/* Hand READY batches to waiting FETCHes. Under lock. */
static void hzram_offload_dispatch(struct hzram_offload *off)
{
	while (off->active && !list_empty(&off->ready) &&
	       !list_empty(&off->fetchers)) {
		struct hzram_batch *b = list_first_entry(&off->ready,
						struct hzram_batch, node);
		struct hzram_fetch_pdu *pdu = list_first_entry(&off->fetchers,
						struct hzram_fetch_pdu, node);

		list_del(&b->node);
		list_del_init(&pdu->node);
		hzram_fetch_complete(pdu, hzram_batch_hand_out(off, b));
	}
}

/* Drop a reference to CLOSED or OPEN batch @b; the last one queues it. */
static void hzram_batch_put(struct hzram_offload *off, struct hzram_batch *b)
{
	if (!atomic_dec_and_test(&b->pending))
		return;
	spin_lock(&off->lock);
	if (off->active && b->nr < READ_ONCE(off->hz->offp.min_pages)) {
		b->state = HZRAM_BATCH_KERNEL;
		list_add_tail(&b->node, &off->kernel_list);
		queue_work(hzram_offload_wq, &off->kwork);
	} else {
		/*
		 * While stopping, the stop takes READY batches back. The
		 * helper has offload_timeout_ms from now to commit it.
		 */
		b->state = HZRAM_BATCH_READY;
		if (off->active)
			b->deadline = jiffies + msecs_to_jiffies(
					READ_ONCE(off->hz->offp.timeout_ms));
		list_add_tail(&b->node, &off->ready);
		hzram_offload_dispatch(off);
	}
	spin_unlock(&off->lock);
	wake_up_all(&off->wq);
}

static void hzram_batch_free(struct hzram_offload *off, struct hzram_batch *b)
{
	spin_lock(&off->lock);
	b->state = HZRAM_BATCH_FREE;
	b->nr = 0;
	b->read = false;
	b->bio = NULL;
	spin_unlock(&off->lock);
}

/*
 * A read batch's input, in its staging cells: batch_pages records, then
 * the LZ4 data they point into.
 */
static struct hzram_page_record *hzram_read_recs(struct hzram_offload *off,
						 struct hzram_batch *b)
{
	return hzram_cell_page(off, hzram_cell(off, b, 0));
}

static u8 *hzram_read_data(struct hzram_offload *off, struct hzram_batch *b)
{
	return (u8 *)hzram_read_recs(off, b) +
	       off->batch_pages * sizeof(struct hzram_page_record);
}

/*
 * Page @i of read batch @b into @mem: as the helper decoded it (record
 * @out, copied out of its reach, data in @data) if that is a valid page
 * that passes the checksum, else decoded here from the batch's copy of
 * the LZ4 data. Return: 0, or -EIO if the data does not decode.
 */
static int hzram_read_fill(struct hzram_offload *off, struct hzram_batch *b,
			   unsigned int i, void *mem,
			   const struct hzram_page_record *out, const u8 *data)
{
	struct hzram *hz = off->hz;
	const struct hzram_page_record *in = &hzram_read_recs(off, b)[i];
	const u64 cap = (u64)off->batch_pages * PAGE_SIZE;

	if (out && out->kind == HZRAM_PAGE_RAW && !out->flags &&
	    out->length == PAGE_SIZE && out->value <= cap - PAGE_SIZE) {
		/* One read of the helper's page; the copy is checked. */
		memcpy(mem, data + out->value, PAGE_SIZE);
		if (!b->verify || hzram_page_csum(mem) == b->csum[i]) {
			hzram_offload_count(hz, HZRAM_OFF_READ_HELPER);
			return 0;
		}
		hzram_offload_count(hz, HZRAM_OFF_READ_REFUSED);
	} else if (out && (out->kind || out->flags)) {
		/* Kind 0 (with no flags) is the helper's "not decoded". */
		hzram_offload_count(hz, HZRAM_OFF_READ_REFUSED);
	}
	hzram_offload_count(hz, HZRAM_OFF_READ_KERNEL);
	if (hzram_comp_decompress(hz->comp, hzram_read_data(off, b) + in->value,
				  in->length, mem)) {
		pr_err_ratelimited("%s: page %llu does not decompress\n",
				   hz->disk->disk_name,
				   (b->iter.bi_sector >> HZRAM_SECTOR_PAGE_SHIFT) +
				   b->index[i]);
		return -EIO;
	}
	return 0;
}

/*
 * End the bio of read batch @b, which this caller owns: its pages from the
 * helper's output @slot if not NULL, else decoded here.
 */
static void hzram_batch_read_end(struct hzram_offload *off,
				 struct hzram_batch *b, const void *slot)
{
	const struct hzram_page_record *recs = slot;
	const u8 *data = slot ? slot + off->batch_pages * sizeof(*recs) : NULL;
	struct bio *bio = b->bio;
	struct bvec_iter iter;
	struct bio_vec bv;
	unsigned int page = 0, i = 0;

	__bio_for_each_segment(bv, bio, iter, b->iter) {
		struct hzram_page_record rec;
		void *mem;

		if (i < b->nr && b->index[i] == page) {
			if (slot)
				memcpy(&rec, &recs[i], sizeof(rec));
			mem = bvec_kmap_local(&bv);
			if (hzram_read_fill(off, b, i, mem, slot ? &rec : NULL,
					    data))
				b->status = BLK_STS_IOERR;
			kunmap_local(mem);
			flush_dcache_page(bv.bv_page);
			i++;
			cond_resched();
		}
		page++;
	}
	if (b->status)
		atomic64_inc(&off->hz->stats.failed_reads);
	bio->bi_status = b->status;
	bio_end_io_acct(bio, b->start);
	bio_endio(bio);
}

/*
 * Store every page of batch @b, which this caller owns (KERNEL), with the
 * helper's records from @slot if not NULL; then free the batch. Pages the
 * module compresses count under @reason (HZRAM_OFF_KERNEL_*) without
 * @slot, under HZRAM_OFF_KERNEL_REFUSED with it.
 */
static void hzram_batch_store(struct hzram_offload *off, struct hzram_batch *b,
			      const void *slot, int reason)
{
	struct hzram *hz = off->hz;
	const struct hzram_page_record *recs = slot;
	const u8 *data = slot ? slot + off->batch_pages * sizeof(*recs) : NULL;
	const u64 cap = (u64)off->batch_pages * PAGE_SIZE;
	unsigned int i;

	if (b->read) {
		hzram_batch_read_end(off, b, slot);
		hzram_batch_free(off, b);
		return;
	}
	for (i = 0; i < b->nr; i++) {
		unsigned long cell = hzram_cell(off, b, i);
		struct hzram_page_record rec, *r = NULL;
		enum hzram_store_result res;
		bool refused;

		if (slot) {
			/* One read of the helper's record; check the copy. */
			memcpy(&rec, &recs[i], sizeof(rec));
			r = &rec;
			if (rec.flags ||
			    (rec.kind == HZRAM_PAGE_SAME && rec.length) ||
			    (rec.kind == HZRAM_PAGE_RAW &&
			     rec.length != PAGE_SIZE) ||
			    (rec.kind == HZRAM_PAGE_LZ4 &&
			     (!rec.length || rec.length >= PAGE_SIZE)) ||
			    ((rec.kind == HZRAM_PAGE_RAW ||
			      rec.kind == HZRAM_PAGE_LZ4) &&
			     (rec.value > cap || rec.length > cap - rec.value)) ||
			    rec.kind > HZRAM_PAGE_LZ4) {
				hzram_offload_count(hz, HZRAM_OFF_REJECTED);
				r = NULL;
			}
		}
		res = hzram_store_staged(hz, b->index[i], cell,
					 hzram_cell_page(off, cell), r,
					 r ? data + r->value : NULL,
					 off->scratch, &refused);
		if (refused)
			hzram_offload_count(hz, HZRAM_OFF_VERIFY_FAILED);
		if (res == HZRAM_STORED_HELPER) {
			hzram_offload_count(hz, HZRAM_OFF_PAGES_HELPER);
		} else if (res == HZRAM_STORED_KERNEL) {
			hzram_offload_count(hz, HZRAM_OFF_PAGES_KERNEL);
			hzram_offload_count(hz, slot ? HZRAM_OFF_KERNEL_REFUSED
						     : reason);
		} else {
			hzram_offload_count(hz, HZRAM_OFF_STALE);
		}
		cond_resched();
	}
	hzram_batch_free(off, b);
}

/**
 * hzram_offload_stage() - stage a full-page write for the helper
 * @hz: the device
 * @index: the page
 * @src: its new content (not same-filled)
 *
 * Called in the writer's context; never sleeps but for the slot lock.
 *
 * Return: true if the page was staged (the write is done); false if the
 * writer must compress it itself (no helper, or no room).
 */
bool hzram_offload_stage(struct hzram *hz, u32 index, const void *src)
{
	struct hzram_offload *off;
	struct hzram_batch *b = NULL;
	unsigned long limit = READ_ONCE(hz->limit_pages);
	bool full = false;
	unsigned int i;

	if (!rcu_access_pointer(hz->off_io)) {
		if (unlikely(READ_ONCE(hz->off_not_lz4)))
			hzram_offload_count(hz, HZRAM_OFF_NOT_LZ4);
		return false;
	}
	/* Past mem_limit, writes fail as without a helper. */
	if (limit && zs_get_total_pages(hz->mem_pool) > limit)
		return false;
	rcu_read_lock();
	off = rcu_dereference(hz->off_io);
	if (!off) {
		rcu_read_unlock();
		return false;
	}
	spin_lock(&off->lock);
	if (off->active && !off->open) {
		for (i = 0; i < off->nr_batches; i++) {
			if (off->batches[i].state != HZRAM_BATCH_FREE)
				continue;
			b = &off->batches[i];
			b->state = HZRAM_BATCH_OPEN;
			atomic_set(&b->pending, 1);
			off->open = b;
			mod_delayed_work(hzram_offload_wq, &off->flush_work,
				usecs_to_jiffies(READ_ONCE(hz->offp.flush_us)));
			break;
		}
	}
	b = off->active ? off->open : NULL;
	if (b) {
		i = b->nr++;
		atomic_inc(&b->pending);
		if (b->nr == off->batch_pages) {
			b->state = HZRAM_BATCH_CLOSED;
			off->open = NULL;
			full = true;
		}
	}
	spin_unlock(&off->lock);
	rcu_read_unlock();
	if (!b) {
		hzram_offload_count(hz, HZRAM_OFF_STAGING_FULL);
		return false;
	}
	/* The stop waits for pending to drop: off stays. */
	memcpy(hzram_cell_page(off, hzram_cell(off, b, i)), src, PAGE_SIZE);
	b->index[i] = index;
	hzram_stage_install(hz, index, hzram_cell(off, b, i));
	if (full)
		hzram_batch_put(off, b);
	hzram_batch_put(off, b);
	return true;
}

/* Is every page of @bio a whole page in memory? */
static bool hzram_bio_whole_pages(struct bio *bio)
{
	struct bvec_iter iter;
	struct bio_vec bv;

	bio_for_each_segment(bv, bio, iter)
		if (bv.bv_offset || bv.bv_len != PAGE_SIZE)
			return false;
	return true;
}

/* Take a free batch for a read, or NULL. Under lock. */
static struct hzram_batch *hzram_batch_take_read(struct hzram_offload *off)
{
	unsigned int i;

	if (!off->active || !off->decode)
		return NULL;
	for (i = 0; i < off->nr_batches; i++) {
		struct hzram_batch *b = &off->batches[i];

		if (b->state != HZRAM_BATCH_FREE)
			continue;
		b->state = HZRAM_BATCH_CLOSED;
		b->read = true;
		b->nr = 0;
		atomic_set(&b->pending, 1);
		return b;
	}
	return NULL;
}

/**
 * hzram_offload_read() - send a large read to the helper to decode
 * @hz: the device
 * @bio: a read; its accounting has started
 * @start: what bio_start_io_acct() returned
 *
 * A read of at least offload_read_min_pages whole pages, no more than a
 * batch holds, goes to a helper that decodes (offload on, or auto while
 * the helper is the faster): the LZ4 data of its pages is copied into a
 * batch, and the bio ends when the helper commits it, or when the module
 * takes the batch back and decodes the pages itself (time-out, the
 * helper gone). Its other pages (unwritten, same-filled, raw, staged,
 * without a checksum while offload_verify is on) are read here at once;
 * so are all of them if fewer than offload_min_pages would go.
 *
 * Return: true if the bio was taken (it ends, maybe already has); false:
 * the caller reads it.
 */
bool hzram_offload_read(struct hzram *hz, struct bio *bio, unsigned long start)
{
	unsigned int pages = bio->bi_iter.bi_size >> PAGE_SHIFT;
	unsigned int min = READ_ONCE(hz->offp.read_min_pages);
	struct hzram_page_record *recs;
	struct hzram_offload *off;
	unsigned int page = 0, used = 0, room;
	struct hzram_batch *b;
	struct bvec_iter iter;
	struct bio_vec bv;
	u8 *data;

	if (!min || pages < min || !READ_ONCE(hz->read_csum) ||
	    (bio->bi_iter.bi_size & ~PAGE_MASK) ||
	    (bio->bi_iter.bi_sector & ((1 << HZRAM_SECTOR_PAGE_SHIFT) - 1)))
		return false;
	rcu_read_lock();
	off = rcu_dereference(hz->off_io);
	if (!off || pages > off->batch_pages || !hzram_read_to_helper(hz) ||
	    !hzram_bio_whole_pages(bio)) {
		rcu_read_unlock();
		return false;
	}
	spin_lock(&off->lock);
	b = hzram_batch_take_read(off);
	spin_unlock(&off->lock);
	rcu_read_unlock();
	if (!b)
		return false;
	/* The stop waits for pending to drop: off stays. */
	b->verify = READ_ONCE(hz->offp.verify);
	b->bio = bio;
	b->iter = bio->bi_iter;
	b->start = start;
	b->created = ktime_get_ns();
	b->status = BLK_STS_OK;
	recs = hzram_read_recs(off, b);
	data = hzram_read_data(off, b);
	room = off->batch_pages * (PAGE_SIZE - sizeof(*recs));
	bio_for_each_segment(bv, bio, iter) {
		u32 index = (iter.bi_sector >> HZRAM_SECTOR_PAGE_SHIFT);
		unsigned int len;
		bool has_csum = false;
		void *mem;

		len = hzram_read_snapshot(hz, index, data + used, room - used,
					  &b->csum[b->nr], &has_csum);
		if (len && (has_csum || !b->verify)) {
			recs[b->nr] = (struct hzram_page_record) {
				.value = used, .length = len,
				.kind = HZRAM_PAGE_LZ4,
			};
			b->index[b->nr++] = page;
			used += len;
		} else {
			mem = bvec_kmap_local(&bv);
			if (hzram_read_page(hz, index, mem))
				b->status = BLK_STS_IOERR;
			kunmap_local(mem);
			flush_dcache_page(bv.bv_page);
		}
		page++;
	}
	if (b->nr < READ_ONCE(hz->offp.min_pages)) {
		/*
		 * Too few to be worth a round trip: the reader decodes them.
		 * The batch is freed and let go together, under the lock
		 * where it is taken.
		 */
		hzram_batch_read_end(off, b, NULL);
		spin_lock(&off->lock);
		b->state = HZRAM_BATCH_FREE;
		b->read = false;
		b->bio = NULL;
		atomic_set(&b->pending, 0);
		spin_unlock(&off->lock);
		wake_up_all(&off->wq);
		return true;
	}
	hzram_batch_put(off, b);
	return true;
}

/* Close the open batch, offload_flush_us after it opened. */
static void hzram_offload_flush_fn(struct work_struct *work)
{
	struct hzram_offload *off = container_of(to_delayed_work(work),
					struct hzram_offload, flush_work);
	struct hzram_batch *b;

	spin_lock(&off->lock);
	b = off->open;
	if (b) {
		b->state = HZRAM_BATCH_CLOSED;
		off->open = NULL;
	}
	spin_unlock(&off->lock);
	if (b)
		hzram_batch_put(off, b);
}

/* Compress the small batches. */
static void hzram_offload_kwork_fn(struct work_struct *work)
{
	struct hzram_offload *off = container_of(work, struct hzram_offload,
						 kwork);

	for (;;) {
		struct hzram_batch *b;

		spin_lock(&off->lock);
		b = list_first_entry_or_null(&off->kernel_list,
					     struct hzram_batch, node);
		if (b)
			list_del(&b->node);
		spin_unlock(&off->lock);
		if (!b)
			return;
		hzram_batch_store(off, b, NULL, HZRAM_OFF_KERNEL_SMALL);
	}
}

static bool hzram_offload_quiet(struct hzram_offload *off)
{
	unsigned int i;

	for (i = 0; i < off->nr_batches; i++)
		if (atomic_read(&off->batches[i].pending))
			return false;
	return true;
}

/**
 * hzram_offload_start() - stage writes for the attached helper, if any
 * @hz: the device; init_lock is held for writing
 *
 * Only a device initialised with lz4 offloads: the helper makes LZ4. Not
 * while sysfs offload is off.
 */
void hzram_offload_start(struct hzram *hz)
{
	struct hzram_offload *off = hz->off;

	lockdep_assert_held_write(&hz->init_lock);
	if (!off || rcu_access_pointer(hz->off_io) || !hzram_init_done(hz) ||
	    hz->offp.mode == HZRAM_OFFLOAD_OFF)
		return;
	if (strcmp(hz->comp->name, "lz4")) {
		WRITE_ONCE(hz->off_not_lz4, true);
		return;
	}
	hz->staging = off->ro + off->staging_off;
	WRITE_ONCE(hz->read_csum, off->decode);
	spin_lock(&off->lock);
	off->active = true;
	spin_unlock(&off->lock);
	rcu_assign_pointer(hz->off_io, off);
}

/**
 * hzram_offload_stop() - stop staging and store every staged page
 * @hz: the device; init_lock is held for writing
 *
 * Every batch, the helper's included, is taken back and compressed here;
 * a commit of one of them afterwards is refused.
 */
void hzram_offload_stop(struct hzram *hz)
{
	struct hzram_offload *off = hz->off;
	struct hzram_batch *b;
	unsigned int i;

	lockdep_assert_held_write(&hz->init_lock);
	WRITE_ONCE(hz->off_not_lz4, false);
	if (!off || !rcu_access_pointer(hz->off_io))
		return;
	RCU_INIT_POINTER(hz->off_io, NULL);
	WRITE_ONCE(hz->read_csum, false);
	synchronize_rcu();
	/* No writer finds off now; those that did hold a batch's pending. */
	spin_lock(&off->lock);
	off->active = false;
	b = off->open;
	if (b) {
		b->state = HZRAM_BATCH_CLOSED;
		off->open = NULL;
	}
	spin_unlock(&off->lock);
	cancel_delayed_work_sync(&off->flush_work);
	if (b)
		hzram_batch_put(off, b);
	wait_event(off->wq, hzram_offload_quiet(off));
	flush_work(&off->kwork);

	mutex_lock(&off->mutex);
	for (i = 0; i < off->nr_batches; i++) {
		b = &off->batches[i];
		spin_lock(&off->lock);
		if (b->state == HZRAM_BATCH_FREE) {
			spin_unlock(&off->lock);
			continue;
		}
		if (b->state == HZRAM_BATCH_READY)
			list_del(&b->node);
		b->state = HZRAM_BATCH_KERNEL;
		spin_unlock(&off->lock);
		hzram_batch_store(off, b, NULL, HZRAM_OFF_KERNEL_GONE);
	}
	mutex_unlock(&off->mutex);
	WARN_ON_ONCE(atomic64_read(&hz->stats.offload[HZRAM_OFF_STAGED]));
	hz->staging = NULL;
}

/* Fail every waiting FETCH with @res. */
static void hzram_offload_fail_fetches(struct hzram_offload *off, int res)
{
	struct hzram_fetch_pdu *pdu, *tmp;
	LIST_HEAD(list);

	spin_lock(&off->lock);
	list_splice_init(&off->fetchers, &list);
	spin_unlock(&off->lock);
	list_for_each_entry_safe(pdu, tmp, &list, node) {
		list_del_init(&pdu->node);
		hzram_fetch_complete(pdu, res);
	}
}

/*
 * Detach @off from its device, taking back what it holds. Takes
 * hzram_offload_mutex and init_lock.
 */
static void hzram_offload_detach(struct hzram_offload *off, int fetch_res)
{
	struct hzram *hz;

	mutex_lock(&hzram_offload_mutex);
	hz = off->hz;
	if (hz) {
		down_write(&hz->init_lock);
		hzram_offload_stop(hz);
		mutex_lock(&off->mutex);
		off->hz = NULL;
		mutex_unlock(&off->mutex);
		WRITE_ONCE(hz->off, NULL);
		up_write(&hz->init_lock);
		pr_info("%s: helper detached\n", hz->disk->disk_name);
		hzram_nl_event(hz, HZRAM_NL_EV_HELPER_DETACHED,
			       task_pid_nr(off->task));
	}
	spin_lock(&off->lock);
	off->unlinked = true;
	spin_unlock(&off->lock);
	mutex_unlock(&hzram_offload_mutex);
	hzram_offload_fail_fetches(off, fetch_res);
}

/**
 * hzram_offload_unlink() - detach the helper of a device being removed
 * @hz: the device
 *
 * The helper's FETCHes fail with -ENODEV; its file stays open, unlinked.
 */
void hzram_offload_unlink(struct hzram *hz)
{
	struct hzram_offload *off;

	mutex_lock(&hzram_offload_mutex);
	off = hz->off;
	mutex_unlock(&hzram_offload_mutex);
	if (off)
		hzram_offload_detach(off, -ENODEV);
}

static bool hzram_offload_task_dead(struct hzram_offload *off)
{
	return (READ_ONCE(off->task->signal->flags) & SIGNAL_GROUP_EXIT) ||
	       (READ_ONCE(off->task->flags) & PF_EXITING);
}

/* Count the death of @off's process, once, if it is still attached. */
static void hzram_offload_count_death(struct hzram_offload *off)
{
	mutex_lock(&hzram_offload_mutex);
	if (off->hz && !off->died) {
		off->died = true;
		pr_warn("%s: helper %d died; the module takes its batches back\n",
			off->hz->disk->disk_name, task_pid_nr(off->task));
		hzram_offload_count(off->hz, HZRAM_OFF_DEATHS);
		hzram_nl_event(off->hz, HZRAM_NL_EV_HELPER_DIED,
			       task_pid_nr(off->task));
	}
	mutex_unlock(&hzram_offload_mutex);
}

/*
 * Every HZRAM_MONITOR_MS: take back the batches the helper kept past
 * offload_timeout_ms, and detach a helper whose process is exiting (its
 * io_uring waits for our FETCHes to complete).
 */
static void hzram_offload_monitor_fn(struct work_struct *work)
{
	struct hzram_offload *off = container_of(to_delayed_work(work),
					struct hzram_offload, monitor);
	unsigned int i;

	/*
	 * A killed or exiting process: its io_uring cancels its requests
	 * before the task is marked PF_EXITING, and waits for our FETCHes.
	 */
	if (hzram_offload_task_dead(off)) {
		hzram_offload_count_death(off);
		hzram_offload_detach(off, -ECANCELED);
		return;
	}
	mutex_lock(&off->mutex);
	for (i = 0; off->hz && i < off->nr_batches; i++) {
		struct hzram_batch *b = &off->batches[i];
		bool late;

		spin_lock(&off->lock);
		late = (b->state == HZRAM_BATCH_HELPER ||
			b->state == HZRAM_BATCH_READY) &&
		       time_after(jiffies, b->deadline);
		if (late && b->state == HZRAM_BATCH_READY)
			list_del(&b->node);
		if (late)
			b->state = HZRAM_BATCH_KERNEL;
		spin_unlock(&off->lock);
		if (!late)
			continue;
		hzram_offload_count(off->hz, HZRAM_OFF_TIMEOUTS);
		/* For offload auto, a read that timed out took this long. */
		if (b->read)
			hzram_ns_average(&off->hz->read_ns_helper,
					 ktime_get_ns() - b->created, b->nr);
		hzram_batch_store(off, b, NULL, HZRAM_OFF_KERNEL_TIMEOUT);
	}
	mutex_unlock(&off->mutex);
	if (!READ_ONCE(off->unlinked))
		queue_delayed_work(hzram_monitor_wq, &off->monitor,
				   msecs_to_jiffies(HZRAM_MONITOR_MS));
}

/*
 * A FETCH: a batch at once if one is ready, else queued until one is (or
 * the helper goes). Where the kernel cancels io_uring commands, a queued
 * FETCH is cancelable: marked before it can be queued, so that a cancel
 * finds it queued or not yet, and completed through io_uring_cmd_done(),
 * which unmarks it, even when it completes at once.
 */
static int hzram_offload_fetch(struct hzram_offload *off,
			       struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct hzram_fetch_pdu *pdu = hzram_pdu(cmd);
	int ret = -EIOCBQUEUED;

	INIT_LIST_HEAD(&pdu->node);
	if (HZRAM_URING_CANCEL)
		hzram_uring_cmd_cancelable(cmd, issue_flags);
	spin_lock(&off->lock);
	if (off->unlinked) {
		ret = -ENODEV;
	} else if (off->active && !list_empty(&off->ready)) {
		struct hzram_batch *b = list_first_entry(&off->ready,
						struct hzram_batch, node);

		list_del(&b->node);
		ret = hzram_batch_hand_out(off, b);
	} else {
		list_add_tail(&pdu->node, &off->fetchers);
	}
	spin_unlock(&off->lock);
	if (HZRAM_URING_CANCEL && ret != -EIOCBQUEUED) {
		hzram_uring_cmd_done(cmd, ret, issue_flags);
		return -EIOCBQUEUED;
	}
	return ret;
}

/*
 * The ring of a queued FETCH is going away (6.7+): complete it unless it
 * is completing already, and look at the helper now rather than at the
 * monitor's next round: its process may be exiting.
 */
static void hzram_offload_cancel(struct hzram_offload *off,
				 struct io_uring_cmd *cmd,
				 unsigned int issue_flags)
{
	struct hzram_fetch_pdu *pdu = hzram_pdu(cmd);
	bool queued;

	spin_lock(&off->lock);
	queued = !list_empty(&pdu->node);
	list_del_init(&pdu->node);
	spin_unlock(&off->lock);
	if (queued)
		hzram_uring_cmd_done(cmd, -ECANCELED, issue_flags);
	if (!READ_ONCE(off->unlinked))
		mod_delayed_work(hzram_monitor_wq, &off->monitor, 0);
}

static int hzram_offload_commit(struct hzram_offload *off,
				const struct hzram_cmd *c)
{
	struct hzram_batch *b;
	int ret = 0;

	mutex_lock(&off->mutex);
	if (!off->hz) {
		ret = -ENODEV;
		goto out;
	}
	if (c->flags || c->batch >= off->nr_batches) {
		ret = -EINVAL;
		goto bad;
	}
	b = &off->batches[c->batch];
	spin_lock(&off->lock);
	if (b->state == HZRAM_BATCH_HELPER && b->seq == c->seq)
		b->state = HZRAM_BATCH_KERNEL;
	else
		ret = -ESTALE;
	spin_unlock(&off->lock);
	if (ret)
		goto bad;
	hzram_offload_count(off->hz, b->read ? HZRAM_OFF_READ_BATCHES :
				HZRAM_OFF_BATCHES);
	atomic64_inc(&off->hz->stats.rtt[hzram_rtt_bucket(
		ktime_us_delta(ktime_get(), b->handed))]);
	if (b->read)
		hzram_ns_average(&off->hz->read_ns_helper,
				 ktime_get_ns() - b->created, b->nr);
	hzram_batch_store(off, b, off->rw + c->batch * off->slot_size, 0);
	goto out;
bad:
	hzram_offload_count(off->hz, HZRAM_OFF_BAD_COMMITS);
out:
	mutex_unlock(&off->mutex);
	return ret;
}

static void hzram_offload_free(struct hzram_offload *off)
{
	unsigned int i;

	for (i = 0; i < HZRAM_OFFLOAD_BATCHES; i++) {
		kvfree(off->batches[i].index);
		kvfree(off->batches[i].csum);
	}
	if (off->task)
		put_task_struct(off->task);
	free_page((unsigned long)off->scratch);
	vfree(off->ro);
	vfree(off->rw);
	kfree(off);
}

static struct hzram_offload *hzram_offload_alloc(unsigned int batch_pages)
{
	struct hzram_offload *off = kzalloc(sizeof(*off), GFP_KERNEL);
	unsigned int i;

	if (!off)
		return NULL;
	off->nr_batches = HZRAM_OFFLOAD_BATCHES;
	off->batch_pages = batch_pages;
	off->staging_off = PAGE_ALIGN(off->nr_batches *
				      sizeof(struct hzram_batch_desc));
	off->ro_size = off->staging_off +
		       (size_t)off->nr_batches * batch_pages * PAGE_SIZE;
	off->slot_size = PAGE_ALIGN(batch_pages *
			(sizeof(struct hzram_page_record) + PAGE_SIZE));
	off->rw_size = off->nr_batches * off->slot_size;
	mutex_init(&off->mutex);
	spin_lock_init(&off->lock);
	INIT_LIST_HEAD(&off->ready);
	INIT_LIST_HEAD(&off->kernel_list);
	INIT_LIST_HEAD(&off->fetchers);
	init_waitqueue_head(&off->wq);
	INIT_DELAYED_WORK(&off->flush_work, hzram_offload_flush_fn);
	INIT_WORK(&off->kwork, hzram_offload_kwork_fn);
	INIT_DELAYED_WORK(&off->monitor, hzram_offload_monitor_fn);
	off->ro = vmalloc_user(off->ro_size);
	off->rw = vmalloc_user(off->rw_size);
	off->scratch = (void *)__get_free_page(GFP_KERNEL);
	if (!off->ro || !off->rw || !off->scratch)
		goto err;
	for (i = 0; i < off->nr_batches; i++) {
		off->batches[i].index = kvcalloc(batch_pages, sizeof(u32),
						 GFP_KERNEL);
		off->batches[i].csum = kvcalloc(batch_pages, sizeof(u32),
						GFP_KERNEL);
		if (!off->batches[i].index || !off->batches[i].csum)
			goto err;
	}
	return off;
err:
	hzram_offload_free(off);
	return NULL;
}

static long hzram_ctl_attach(struct file *file, struct hzram_attach __user *arg)
{
	struct hzram_offload *off;
	struct hzram_attach a;
	struct hzram *hz;
	unsigned int granted;
	int ret = 0;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (get_user(a.size, &arg->size))
		return -EFAULT;
	if (a.size != sizeof(a))
		return -EINVAL;
	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (a.version != HZRAM_UAPI_VERSION)
		return -EPROTO;
	granted = a.features & HZRAM_FEATURES;
	if (!(granted & HZRAM_FEAT_COMPRESS))
		return -EOPNOTSUPP;
	if (a.device >= HZRAM_MAX_DEVICES)
		return -ENODEV;

	mutex_lock(&hzram_index_mutex);
	if (file->private_data) {
		ret = -EISCONN;		/* this file already serves a device */
		goto out_index;
	}
	hz = hzram_find(a.device);
	if (!hz) {
		ret = -ENODEV;
		goto out_index;
	}
	off = hzram_offload_alloc(READ_ONCE(hz->offp.batch_pages));
	if (!off) {
		ret = -ENOMEM;
		goto out_index;
	}
	mutex_lock(&hzram_offload_mutex);
	down_write(&hz->init_lock);
	if (hz->off) {
		ret = -EBUSY;
	} else if (hzram_init_done(hz) && strcmp(hz->comp->name, "lz4")) {
		ret = -EOPNOTSUPP;	/* the helper makes LZ4 only */
	} else {
		off->hz = hz;
		off->decode = granted & HZRAM_FEAT_DECOMPRESS;
		off->task = get_task_struct(current->group_leader);
		WRITE_ONCE(hz->off, off);
		hzram_offload_count(hz, HZRAM_OFF_ATTACHES);
		hzram_offload_start(hz);
		/* Pairs with the acquire of mmap and uring_cmd. */
		smp_store_release(&file->private_data, off);
		queue_delayed_work(hzram_monitor_wq, &off->monitor,
				   msecs_to_jiffies(HZRAM_MONITOR_MS));
		pr_info("%s: helper %d attached\n", hz->disk->disk_name,
			task_pid_nr(current));
		hzram_nl_event(hz, HZRAM_NL_EV_HELPER_ATTACHED,
			       task_pid_nr(off->task));
	}
	up_write(&hz->init_lock);
	mutex_unlock(&hzram_offload_mutex);
	if (ret) {
		hzram_offload_free(off);
		goto out_index;
	}
	a.features = granted;
	a.nr_batches = off->nr_batches;
	a.batch_pages = off->batch_pages;
	a.ro_offset = 0;
	a.ro_size = off->ro_size;
	a.staging_offset = off->staging_off;
	a.rw_offset = off->ro_size;
	a.rw_size = off->rw_size;
	memset(a.reserved, 0, sizeof(a.reserved));
	mutex_unlock(&hzram_index_mutex);
	/* The attachment stands even if the reply cannot be written. */
	return copy_to_user(arg, &a, sizeof(a)) ? -EFAULT : 0;
out_index:
	mutex_unlock(&hzram_index_mutex);
	return ret;
}

/*
 * A helper leaving on purpose: its batches go back to the kernel and its
 * FETCHes complete with -ECANCELED, as at its death, but not counted as
 * one. The file stays open, unlinked.
 */
static long hzram_ctl_detach(struct file *file)
{
	struct hzram_offload *off = smp_load_acquire(&file->private_data);

	if (!off)
		return -ENXIO;
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (READ_ONCE(off->unlinked))
		return -ENODEV;
	hzram_offload_detach(off, -ECANCELED);
	return 0;
}

static long hzram_ctl_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	switch (cmd) {
	case HZRAM_IOC_ATTACH:
		return hzram_ctl_attach(file, (struct hzram_attach __user *)arg);
	case HZRAM_IOC_DETACH:
		return hzram_ctl_detach(file);
	}
	return -ENOTTY;
}

static int hzram_ctl_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct hzram_offload *off = smp_load_acquire(&file->private_data);
	unsigned long size = vma->vm_end - vma->vm_start;

	if (!off)
		return -ENXIO;
	if (vma->vm_pgoff == 0) {
		if (size > off->ro_size)
			return -EINVAL;
		/* The kernel's: the helper may read, never write. */
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		hzram_vma_deny_write(vma);
		return remap_vmalloc_range(vma, off->ro, 0);
	}
	if (vma->vm_pgoff == off->ro_size >> PAGE_SHIFT) {
		if (size > off->rw_size)
			return -EINVAL;
		return remap_vmalloc_range(vma, off->rw, 0);
	}
	return -EINVAL;
}

static int hzram_ctl_uring_cmd(struct io_uring_cmd *cmd,
			       unsigned int issue_flags)
{
	struct hzram_offload *off = smp_load_acquire(&cmd->file->private_data);
	struct hzram_cmd c;

	if (!off)
		return -ENXIO;
	/* Only a queued FETCH is cancelable; its SQE may be gone. */
	if (issue_flags & HZRAM_URING_CANCEL) {
		hzram_offload_cancel(off, cmd, issue_flags);
		return 0;
	}
	c = *hzram_uring_cmd_payload(cmd, struct hzram_cmd);
	switch (cmd->cmd_op) {
	case HZRAM_CMD_FETCH:
		return hzram_offload_fetch(off, cmd, issue_flags);
	case HZRAM_CMD_COMMIT:
		return hzram_offload_commit(off, &c);
	default:
		return -EOPNOTSUPP;
	}
}

static int hzram_ctl_release(struct inode *inode, struct file *file)
{
	struct hzram_offload *off = file->private_data;

	if (!off)
		return 0;
	/*
	 * No FETCH waits (each holds the file) and nothing is mapped (each
	 * mapping does too).
	 */
	spin_lock(&off->lock);
	off->unlinked = true;
	spin_unlock(&off->lock);
	cancel_delayed_work_sync(&off->monitor);
	/* Killed with no FETCH queued: the exit closes the file first. */
	if (hzram_offload_task_dead(off))
		hzram_offload_count_death(off);
	hzram_offload_detach(off, -ENODEV);
	hzram_offload_free(off);
	return 0;
}

static int hzram_ctl_open(struct inode *inode, struct file *file)
{
	/* misc_open() left the miscdevice here: unattached until ATTACH. */
	file->private_data = NULL;
	return nonseekable_open(inode, file);
}

static const struct file_operations hzram_ctl_fops = {
	.owner		= THIS_MODULE,
	.open		= hzram_ctl_open,
	.release	= hzram_ctl_release,
	.unlocked_ioctl	= hzram_ctl_ioctl,
	.mmap		= hzram_ctl_mmap,
	.uring_cmd	= hzram_ctl_uring_cmd,
};

static struct miscdevice hzram_ctl_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "hzram-control",
	.fops	= &hzram_ctl_fops,
	.mode	= 0600,
};

int hzram_offload_init(void)
{
	int ret;

	BUILD_BUG_ON(sizeof(struct hzram_attach) != HZRAM_ATTACH_SIZE);
	BUILD_BUG_ON(sizeof(struct hzram_batch_desc) != HZRAM_BATCH_DESC_SIZE);
	BUILD_BUG_ON(sizeof(struct hzram_cmd) != HZRAM_CMD_SIZE);
	BUILD_BUG_ON(sizeof(struct hzram_page_record) !=
		     HZRAM_PAGE_RECORD_SIZE);
	/* Staged pages are stored by this queue when memory is short. */
	hzram_offload_wq = alloc_workqueue("hzram_offload",
					   WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!hzram_offload_wq)
		return -ENOMEM;
	hzram_monitor_wq = alloc_workqueue("hzram_monitor",
					   WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!hzram_monitor_wq) {
		ret = -ENOMEM;
		goto err_offload;
	}
	ret = misc_register(&hzram_ctl_misc);
	if (ret)
		goto err_monitor;
	return 0;
err_monitor:
	destroy_workqueue(hzram_monitor_wq);
err_offload:
	destroy_workqueue(hzram_offload_wq);
	return ret;
}

void hzram_offload_exit(void)
{
	misc_deregister(&hzram_ctl_misc);
	destroy_workqueue(hzram_monitor_wq);
	destroy_workqueue(hzram_offload_wq);
}
