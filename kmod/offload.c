// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: the helper offload's batches. A userspace helper (hzramd)
 * attaches to a device through /dev/hzram-control (offload_ctl.c) and
 * compresses batches of written pages for it; the protocol is in
 * include/uapi/linux/hzram.h and Documentation/uapi.rst.
 *
 * While a helper is attached and the device is initialised with lz4, a
 * full-page write that is not same-filled is copied into a cell of the
 * open batch in the staging arena, its slot marked STAGED, and the bio
 * completes. A batch closes when it is full or offload_flush_us after it
 * opened; a batch of fewer than offload_min_pages pages is compressed by
 * the module (kwork), any other goes to the helper through a FETCH. Its
 * COMMIT, due offload_timeout_ms after the batch closed, stores each
 * page as the helper encoded it, after checking the record
 * (hzram_store_staged()). The module takes a batch back, and compresses
 * it itself, when the helper has not committed it by then, when the
 * helper dies (the monitor sees its process exit) or detaches, and when
 * the device is reset. No write ever waits for the helper: without a
 * free batch, the writer compresses inline.
 *
 * The batch state machine, its owners and locks are in offload.h.
 */
#include "offload.h"

#include <linux/bitmap.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

DEFINE_MUTEX(hzram_offload_mutex);
/* Staged pages are stored by this queue when memory is short. */
struct workqueue_struct *hzram_offload_wq;
/*
 * The monitors: a queue of their own, because detaching a dead helper
 * flushes work on hzram_offload_wq, which under memory pressure may be
 * down to its one rescuer thread.
 */
struct workqueue_struct *hzram_monitor_wq;

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

/* Count a batch committed now that was handed out at @handed. */
void hzram_rtt_count(struct hzram *hz, ktime_t handed)
{
	atomic64_inc(&hz->stats.rtt[hzram_rtt_bucket(
		ktime_us_delta(ktime_get(), handed))]);
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

/*
 * Batches of fewer pages stay in the kernel: offload_min_pages, but never
 * more than the attached helper's batch holds, or no batch would reach it.
 */
unsigned int hzram_offload_min_pages(struct hzram_offload *off)
{
	return min(READ_ONCE(off->hz->offp.min_pages), off->batch_pages);
}

static struct hzram_batch_desc *hzram_desc(struct hzram_offload *off,
					   struct hzram_batch *b)
{
	return (struct hzram_batch_desc *)off->ro + (b - off->batches);
}

/* Give READY batch @b to the helper (HELPER); returns its number. */
int hzram_batch_hand_out(struct hzram_offload *off, struct hzram_batch *b)
	__must_hold(&off->lock)
{
	struct hzram_batch_desc *d = hzram_desc(off, b);
	unsigned int n = b - off->batches;

	lockdep_assert_held(&off->lock);
	WARN_ON_ONCE(b->state != HZRAM_BATCH_READY || !off->active);
	list_del(&b->node);
	b->state = HZRAM_BATCH_HELPER;
	b->handed = ktime_get();
	b->seq = ++off->next_seq;
	d->seq = b->seq;
	d->nr_pages = b->nr;
	d->op = b->read ? HZRAM_OP_DECOMPRESS :
		b->recomp ? HZRAM_OP_RECOMPRESS : HZRAM_OP_COMPRESS;
	d->level = b->recomp ? b->level : 0;
	d->staging_offset = (u64)n * off->batch_pages * PAGE_SIZE;
	d->output_offset = (u64)n * off->slot_size;
	return n;
}

/* Take a FREE batch: CLOSED, empty, its taker's ref; or NULL. */
struct hzram_batch *hzram_batch_take(struct hzram_offload *off)
	__must_hold(&off->lock)
{
	unsigned int i;

	lockdep_assert_held(&off->lock);
	for (i = 0; i < off->nr_batches; i++) {
		struct hzram_batch *b = &off->batches[i];

		if (b->state != HZRAM_BATCH_FREE)
			continue;
		b->state = HZRAM_BATCH_CLOSED;
		b->nr = 0;
		atomic_set(&b->pending, 1);
		return b;
	}
	return NULL;
}

/*
 * CLOSED batch @b, with no ref left, goes to the helper: READY, with
 * offload_timeout_ms from now to commit it, handed to a waiting FETCH.
 */
void hzram_batch_ready(struct hzram_offload *off, struct hzram_batch *b)
	__must_hold(&off->lock)
{
	lockdep_assert_held(&off->lock);
	b->deadline = jiffies + msecs_to_jiffies(
			READ_ONCE(off->hz->offp.timeout_ms));
	b->state = HZRAM_BATCH_READY;
	list_add_tail(&b->node, &off->ready);
	hzram_offload_dispatch(off);
}

/**
 * hzram_batch_put() - drop a ref to an OPEN or CLOSED batch
 * @off: the helper
 * @b: the batch
 *
 * The last ref (the batch is CLOSED by then: the open ref is dropped only
 * once it is closed) moves it on in the same step, under off->lock: to
 * KERNEL, for kwork, if it is too small to send while staging, else to
 * READY, for a FETCH or, while stopping, for the stop to take back. The
 * helper has offload_timeout_ms from now to commit it.
 */
void hzram_batch_put(struct hzram_offload *off, struct hzram_batch *b)
{
	lockdep_assert_not_held(&off->lock);
	/* Not the last ref (what atomic_dec_and_lock() tries first). */
	if (atomic_add_unless(&b->pending, -1, 1))
		return;
	hzram_delay(HZRAM_DELAY_PUT);
	if (!atomic_dec_and_lock(&b->pending, &off->lock))
		return;
	WARN_ON_ONCE(b->state != HZRAM_BATCH_CLOSED);
	/*
	 * A helper leaving (unlinked) would never fetch it, and nothing
	 * takes a batch back late from then on: the module's, at once.
	 */
	b->gone = off->unlinked;
	if (off->active &&
	    (b->gone || b->nr < hzram_offload_min_pages(off))) {
		b->state = HZRAM_BATCH_KERNEL;
		list_add_tail(&b->node, &off->kernel_list);
		queue_work(hzram_offload_wq, &off->kwork);
	} else {
		hzram_batch_ready(off, b);
	}
	/* Under the lock: the stop may free @off once it sees the state. */
	wake_up_all(&off->wq);
	spin_unlock(&off->lock);
}

/* KERNEL batch @b, whose pages are all stored, is FREE again. */
void hzram_batch_free(struct hzram_offload *off, struct hzram_batch *b)
{
	lockdep_assert_not_held(&off->lock);
	spin_lock(&off->lock);
	WARN_ON_ONCE(b->state != HZRAM_BATCH_KERNEL || b->recomp);
	b->state = HZRAM_BATCH_FREE;
	b->nr = 0;
	b->gone = false;
	b->read = false;
	b->bio = NULL;
	wake_up_all(&off->wq);
	spin_unlock(&off->lock);
}

/*
 * Store every page of batch @b, which this caller owns (KERNEL), with the
 * helper's records from @slot if not NULL; then free the batch. Pages the
 * module compresses count under @reason (HZRAM_OFF_KERNEL_*) without
 * @slot, under HZRAM_OFF_KERNEL_REFUSED with it. A read batch ends its
 * bio instead.
 */
void hzram_batch_store(struct hzram_offload *off, struct hzram_batch *b,
		       const void *slot, int reason)
{
	struct hzram *hz = off->hz;
	const struct hzram_page_record *recs = slot;
	const u8 *data = slot ? slot + off->batch_pages * sizeof(*recs) : NULL;
	const u64 cap = (u64)off->batch_pages * PAGE_SIZE;
	unsigned int i;

	/* A helper's output is stored under off->mutex (off->scratch). */
	if (slot)
		lockdep_assert_held(&off->mutex);
	if (b->recomp) {
		/* Its writer installs what came back (offload_recomp.c). */
		spin_lock(&off->lock);
		WARN_ON_ONCE(b->state != HZRAM_BATCH_KERNEL);
		b->committed = slot;
		b->state = HZRAM_BATCH_DONE;
		wake_up_all(&off->wq);
		spin_unlock(&off->lock);
		return;
	}
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
			/*
			 * One read of the helper's record; check the copy.
			 * The barrier keeps the compiler from reading a field
			 * again from the helper's memory instead.
			 */
			memcpy(&rec, &recs[i], sizeof(rec));
			barrier();
			r = &rec;
			/* A zstd frame is a recompression batch's only. */
			if (hzram_page_record_check(&rec, cap) !=
			    HZRAM_RECORD_OK || rec.kind == HZRAM_PAGE_ZSTD) {
				hzram_offload_count(hz, HZRAM_OFF_REJECTED);
				r = NULL;
			}
		}
		res = hzram_store_staged(hz, b->index[i], cell,
					 hzram_cell_page(off, cell), r,
					 r ? data + r->value : NULL,
					 off->scratch, test_bit(i, b->swap),
					 &refused);
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

/* Open a FREE batch for writers, if there is one. */
static void hzram_batch_open(struct hzram_offload *off)
	__must_hold(&off->lock)
{
	unsigned int i;

	lockdep_assert_held(&off->lock);
	/* A helper that died or is detaching fetches nothing more. */
	if (off->unlinked)
		return;
	for (i = 0; i < off->nr_batches; i++) {
		struct hzram_batch *b = &off->batches[i];

		if (b->state != HZRAM_BATCH_FREE)
			continue;
		b->state = HZRAM_BATCH_OPEN;
		atomic_set(&b->pending, 1);
		off->open = b;
		mod_delayed_work(hzram_offload_wq, &off->flush_work,
			usecs_to_jiffies(READ_ONCE(off->hz->offp.flush_us)));
		return;
	}
}

/* Close the open batch; the caller drops its open ref afterwards. */
static struct hzram_batch *hzram_batch_close(struct hzram_offload *off)
	__must_hold(&off->lock)
{
	struct hzram_batch *b = off->open;

	lockdep_assert_held(&off->lock);
	if (b) {
		b->state = HZRAM_BATCH_CLOSED;
		off->open = NULL;
	}
	return b;
}

/**
 * hzram_offload_stage() - stage a full-page write for the helper
 * @hz: the device
 * @index: the page
 * @src: its new content (not same-filled)
 * @swap: the write is a swap-out
 *
 * Called in the writer's context; never sleeps but for the slot lock.
 *
 * Return: true if the page was staged (the write is done); false if the
 * writer must compress it itself (no helper, or no room).
 */
bool hzram_offload_stage(struct hzram *hz, u32 index, const void *src,
			 bool swap)
{
	struct hzram_offload *off;
	struct hzram_batch *b = NULL;
	unsigned long limit = READ_ONCE(hz->limit_pages);
	bool full = false, active;
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
	/* A helper leaving takes nothing more (nor is that lack of room). */
	active = off->active && !off->unlinked;
	if (active && !off->open)
		hzram_batch_open(off);
	b = active ? off->open : NULL;
	if (b) {
		i = b->nr++;
		atomic_inc(&b->pending);
		full = b->nr == off->batch_pages;
		if (full)
			hzram_batch_close(off);
	}
	spin_unlock(&off->lock);
	rcu_read_unlock();
	if (!b) {
		/* A stop under way is no lack of room. */
		if (active)
			hzram_offload_count(hz, HZRAM_OFF_STAGING_FULL);
		return false;
	}
	/* Our ref keeps the batch CLOSED at most, and the stop waits: off stays. */
	memcpy(hzram_cell_page(off, hzram_cell(off, b, i)), src, PAGE_SIZE);
	b->index[i] = index;
	assign_bit(i, b->swap, swap);	/* atomic: others set their bits */
	hzram_stage_install(hz, index, hzram_cell(off, b, i));
	if (full)
		hzram_batch_put(off, b);	/* the open ref */
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
	b = hzram_batch_close(off);
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
		hzram_batch_store(off, b, NULL, b->gone ? HZRAM_OFF_KERNEL_GONE :
					  HZRAM_OFF_KERNEL_SMALL);
		hzram_delay(HZRAM_DELAY_KWORK);
	}
}

/*
 * Take READY or HELPER batch @b back (KERNEL): this caller owns it now.
 * Under off->mutex, so that no commit of it runs meanwhile.
 */
static void hzram_batch_take_back(struct hzram_offload *off,
				  struct hzram_batch *b)
	__must_hold(&off->lock)
{
	lockdep_assert_held(&off->mutex);
	lockdep_assert_held(&off->lock);
	if (b->state == HZRAM_BATCH_READY)
		list_del(&b->node);
	b->state = HZRAM_BATCH_KERNEL;
}

/**
 * hzram_batch_reclaim() - take READY or HELPER batch @b back now
 * @off: the helper
 * @b: the batch
 * @reason: HZRAM_OFF_KERNEL_* for what the module compresses of it
 *
 * Takes it back and stores it (a recompression batch: DONE, for its
 * writer), if it is READY or HELPER; else does nothing: its commit or
 * another take-back came first. Not while stopping (the stop takes
 * everything back), nor once detached.
 */
void hzram_batch_reclaim(struct hzram_offload *off, struct hzram_batch *b,
			 int reason)
{
	bool taken;

	mutex_lock(&off->mutex);
	spin_lock(&off->lock);
	taken = off->hz && off->active && (b->state == HZRAM_BATCH_READY ||
					    b->state == HZRAM_BATCH_HELPER);
	if (taken)
		hzram_batch_take_back(off, b);
	spin_unlock(&off->lock);
	if (taken)
		hzram_batch_store(off, b, NULL, reason);
	mutex_unlock(&off->mutex);
}

/*
 * The helper is leaving (it died, detached, or closed its file): take
 * every batch it holds or has not fetched back at once, rather than at
 * its time-out. Its detach may wait for init_lock a long time (a
 * recompress holds it while it waits for its own batches, which this
 * gives back too), and the reads in read batches would wait with it.
 * off->unlinked is set: no batch is opened or sent from here on.
 */
void hzram_offload_take_all(struct hzram_offload *off)
{
	struct hzram_batch *b;
	unsigned int i;

	/* The open batch closed: its last put makes it the module's. */
	spin_lock(&off->lock);
	b = off->active ? hzram_batch_close(off) : NULL;
	spin_unlock(&off->lock);
	if (b)
		hzram_batch_put(off, b);
	for (i = 0; i < off->nr_batches; i++)
		hzram_batch_reclaim(off, &off->batches[i],
				    HZRAM_OFF_KERNEL_GONE);
}

/*
 * The monitor's round: take back the batches the helper kept past
 * offload_timeout_ms (READY ones too: it did not fetch them). Not while
 * stopping: the stop takes everything back, and does not count it late.
 */
void hzram_offload_take_late(struct hzram_offload *off)
{
	unsigned int i;

	mutex_lock(&off->mutex);
	for (i = 0; off->hz && i < off->nr_batches; i++) {
		struct hzram_batch *b = &off->batches[i];
		bool late;

		spin_lock(&off->lock);
		late = off->active && (b->state == HZRAM_BATCH_HELPER ||
				       b->state == HZRAM_BATCH_READY) &&
		       time_after(jiffies, b->deadline);
		if (late)
			hzram_batch_take_back(off, b);
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
}

/**
 * hzram_offload_start() - stage writes for the attached helper, if any
 * @hz: the device; init_lock is held for writing
 *
 * Only a device initialised with lz4, without a dictionary, offloads: the
 * helper makes plain LZ4. Not while sysfs offload is off.
 */
void hzram_offload_start(struct hzram *hz)
{
	struct hzram_offload *off = hz->off;

	lockdep_assert_held_write(&hz->init_lock);
	if (!off || rcu_access_pointer(hz->off_io) || !hzram_init_done(hz) ||
	    hz->offp.mode == HZRAM_OFFLOAD_OFF)
		return;
	if (!hzram_comp_helper_lz4(hz->comp)) {
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

/*
 * Has every batch settled where the stop can take it: FREE, READY or
 * HELPER, with no writer, reader or kernel context in it?
 */
static bool hzram_offload_settled(struct hzram_offload *off)
{
	bool settled = true;
	unsigned int i;

	spin_lock(&off->lock);
	for (i = 0; i < off->nr_batches; i++) {
		enum hzram_batch_state s = off->batches[i].state;

		if (s != HZRAM_BATCH_FREE && s != HZRAM_BATCH_READY &&
		    s != HZRAM_BATCH_HELPER)
			settled = false;
	}
	spin_unlock(&off->lock);
	return settled;
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
	/*
	 * No writer or reader finds off now; those that did hold a ref to
	 * an OPEN or CLOSED batch. Nothing is opened, fetched or sent to
	 * kwork once active is false.
	 */
	spin_lock(&off->lock);
	off->active = false;
	b = hzram_batch_close(off);
	spin_unlock(&off->lock);
	cancel_delayed_work_sync(&off->flush_work);
	if (b)
		hzram_batch_put(off, b);
	wait_event(off->wq, hzram_offload_settled(off));
	/*
	 * kwork may still run (it frees a batch, then looks at its list once
	 * more) or be queued again with nothing left to do: let it finish
	 * before anything can free @off. Nothing queues it once inactive.
	 */
	flush_work(&off->kwork);

	mutex_lock(&off->mutex);
	for (i = 0; i < off->nr_batches; i++) {
		b = &off->batches[i];
		spin_lock(&off->lock);
		/* Settled, and nothing has left FREE since. */
		if (b->state == HZRAM_BATCH_FREE) {
			spin_unlock(&off->lock);
			continue;
		}
		/* A recompression's writer holds init_lock: none here. */
		WARN_ON_ONCE((b->state != HZRAM_BATCH_READY &&
			      b->state != HZRAM_BATCH_HELPER) || b->recomp);
		hzram_batch_take_back(off, b);
		spin_unlock(&off->lock);
		hzram_batch_store(off, b, NULL, HZRAM_OFF_KERNEL_GONE);
	}
	mutex_unlock(&off->mutex);
	WARN_ON_ONCE(atomic64_read(&hz->stats.offload[HZRAM_OFF_STAGED]));
	hz->staging = NULL;
}

void hzram_offload_free(struct hzram_offload *off)
{
	unsigned int i;

	/* The stop left none queued; an offload never started had none. */
	cancel_delayed_work_sync(&off->flush_work);
	cancel_work_sync(&off->kwork);
	for (i = 0; i < HZRAM_OFFLOAD_BATCHES; i++) {
		kvfree(off->batches[i].index);
		kvfree(off->batches[i].csum);
		bitmap_free(off->batches[i].swap);
	}
	if (off->task)
		put_task_struct(off->task);
	free_page((unsigned long)off->scratch);
	vfree(off->ro);
	vfree(off->rw);
	kfree(off);
}

struct hzram_offload *hzram_offload_alloc(unsigned int batch_pages)
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
		off->batches[i].swap = bitmap_zalloc(batch_pages, GFP_KERNEL);
		if (!off->batches[i].index || !off->batches[i].csum ||
		    !off->batches[i].swap)
			goto err;
	}
	return off;
err:
	hzram_offload_free(off);
	return NULL;
}

int hzram_offload_init(void)
{
	hzram_offload_wq = alloc_workqueue("hzram_offload",
					   WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!hzram_offload_wq)
		return -ENOMEM;
	hzram_monitor_wq = alloc_workqueue("hzram_monitor",
					   WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!hzram_monitor_wq) {
		destroy_workqueue(hzram_offload_wq);
		return -ENOMEM;
	}
	return 0;
}

void hzram_offload_exit(void)
{
	destroy_workqueue(hzram_monitor_wq);
	destroy_workqueue(hzram_offload_wq);
}
