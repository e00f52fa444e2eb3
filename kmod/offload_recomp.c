// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: recompression through the helper.
 *
 * recompress, on a device whose helper asked for HZRAM_FEAT_RECOMPRESS
 * and whose algorithm at the priority asked is zstd without a dictionary
 * (hzram_comp_helper_zstd()), sends the pages it chose to the helper in
 * batches (HZRAM_OP_RECOMPRESS) rather than compressing them one by one
 * on its own CPU. The writer of the sysfs file decodes each page into a
 * staging cell of a batch it took (hzram_recomp_stage(): the page stays
 * chosen, PP), hands the batch out, and fills the next while the helper
 * compresses; at most HZRAM_RECOMP_BATCHES of its batches are out at
 * once, and never more than half the helper's, leaving the rest to writes
 * and reads. When one comes back (DONE), the writer copies each zstd
 * frame out of the helper's reach, decodes it with the module's own zstd,
 * compares it with the staged page, and keeps it as recompress keeps its
 * own (hzram_recomp_install()) if it is that page and the slot is still
 * chosen: nothing wrote, freed or read it since it was staged. A page the
 * helper did not encode or whose frame is refused is recompressed here,
 * as without a helper; so is every page of a batch taken back late, and
 * after that every page left: the helper is not waited for twice.
 *
 * A helper that leaves (dies, detaches, closes its file) has every batch
 * taken back at once (hzram_offload_take_all()), and a batch the writer
 * sends after that is DONE at once: the writer does the rest itself. The
 * helper's detach waits for the writer to finish.
 *
 * The writer holds init_lock for reading and pp_mutex from the first page
 * to the last (recompress_store()), so the device stays initialised, the
 * helper stays linked (hz->off) and staging (hz->off_io, off->active: the
 * stop needs init_lock for writing), and every mark is its own. It waits
 * for its batches with a time-out: past the earliest deadline of those
 * out, it takes late batches back itself (hzram_offload_take_late()),
 * since the monitor, which does that otherwise, may be waiting for
 * init_lock to detach a helper that died.
 *
 * A recompression batch goes FREE -> CLOSED (its writer fills it) ->
 * READY -> HELPER -> KERNEL -> DONE -> FREE, or CLOSED -> FREE, or
 * CLOSED -> DONE when the helper is leaving (offload.h).
 */
#include "offload.h"

#include <linux/gfp.h>
#include <linux/sched/signal.h>

/* Most recompression batches out at once. */
#define HZRAM_RECOMP_BATCHES	2

/* One recompress through the helper. */
struct hzram_recomp_run {
	struct hzram *hz;
	struct hzram_offload *off;
	struct hzram_pp *pp;
	u32 prio;
	s16 level;		/* the helper's zstd level */
	unsigned int threshold;
	bool last;
	bool helper_ok;		/* no batch of this run was taken back */
	void *buf;		/* a page to decode into */
	void *obj;		/* a page: a frame copied out of the helper's
				 * reach */
	struct hzram_batch *out[HZRAM_RECOMP_BATCHES];
	unsigned int nr_out, max_out;
	u64 staged;		/* pages in the batches out */
};

/* Take a FREE batch (CLOSED, its writer's), or NULL. */
static struct hzram_batch *hzram_recomp_take(struct hzram_offload *off)
{
	struct hzram_batch *b = NULL;

	spin_lock(&off->lock);
	if (off->active && !off->unlinked)
		b = hzram_batch_take(off);
	if (b) {
		b->recomp = true;
		b->committed = false;
	}
	spin_unlock(&off->lock);
	return b;
}

/* Recompression batch @b, DONE or CLOSED by its writer, is FREE again. */
static void hzram_recomp_free(struct hzram_offload *off, struct hzram_batch *b)
{
	spin_lock(&off->lock);
	WARN_ON_ONCE(b->state != HZRAM_BATCH_DONE &&
		     b->state != HZRAM_BATCH_CLOSED);
	b->state = HZRAM_BATCH_FREE;
	b->recomp = false;
	b->committed = false;
	b->nr = 0;
	atomic_set(&b->pending, 0);
	wake_up_all(&off->wq);
	spin_unlock(&off->lock);
}

/*
 * Hand CLOSED batch @b to the helper: READY, with its deadline; or, if
 * the helper is leaving (it would never fetch it), DONE at once, with no
 * output.
 */
static void hzram_recomp_send(struct hzram_offload *off, struct hzram_batch *b)
{
	spin_lock(&off->lock);
	WARN_ON_ONCE(b->state != HZRAM_BATCH_CLOSED || !off->active);
	atomic_set(&b->pending, 0);
	if (off->unlinked) {
		b->committed = false;
		b->state = HZRAM_BATCH_DONE;
	} else {
		hzram_batch_ready(off, b);
	}
	wake_up_all(&off->wq);
	spin_unlock(&off->lock);
}

/*
 * Stage chosen pages into CLOSED batch @b until it is full, none is left,
 * or the pages out would be *@max_pages (which counts the pages tried,
 * as they come back). Return: 0, -EIO (a page does not decode) or -EINTR
 * (a fatal signal).
 */
static int hzram_recomp_fill(struct hzram_recomp_run *r, struct hzram_batch *b,
			     u64 max_pages)
{
	struct hzram_offload *off = r->off;
	u32 index;
	int ret;

	while (b->nr < off->batch_pages && r->staged + b->nr < max_pages &&
	       hzram_pp_pop(r->pp, &index)) {
		ret = hzram_recomp_stage(r->hz, index, r->threshold,
				hzram_cell_page(off, hzram_cell(off, b, b->nr)));
		if (ret < 0)
			return ret;
		if (ret)
			b->index[b->nr++] = index;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

/* Let go of the pages staged in @b: no longer chosen. */
static void hzram_recomp_unmark(struct hzram_recomp_run *r,
				struct hzram_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->nr; i++)
		hzram_pp_unmark(r->hz, b->index[i]);
}

/* Is one of the run's batches DONE? Under off->lock, for wait_event. */
static bool hzram_recomp_any_done(struct hzram_recomp_run *r)
{
	bool done = false;
	unsigned int i;

	spin_lock(&r->off->lock);
	for (i = 0; i < r->nr_out; i++)
		done |= r->out[i]->state == HZRAM_BATCH_DONE;
	spin_unlock(&r->off->lock);
	return done;
}

/*
 * Wait until one of the run's batches is DONE, taking late ones back at
 * their deadlines, and every one back at once on a fatal signal (*@err
 * -EINTR); take it out of the run.
 */
static struct hzram_batch *hzram_recomp_wait(struct hzram_recomp_run *r,
					     int *err)
{
	struct hzram_offload *off = r->off;
	unsigned int i;

	for (;;) {
		unsigned long deadline = r->out[0]->deadline;
		long timeout;

		spin_lock(&off->lock);
		for (i = 0; i < r->nr_out; i++) {
			struct hzram_batch *b = r->out[i];

			if (b->state == HZRAM_BATCH_DONE) {
				r->out[i] = r->out[--r->nr_out];
				spin_unlock(&off->lock);
				return b;
			}
		}
		spin_unlock(&off->lock);
		for (i = 1; i < r->nr_out; i++)
			if (time_before(r->out[i]->deadline, deadline))
				deadline = r->out[i]->deadline;
		timeout = max((long)(deadline - jiffies) + 1, 1L);
		timeout = wait_event_killable_timeout(off->wq,
				hzram_recomp_any_done(r), timeout);
		if (!timeout) {
			hzram_offload_take_late(off);
		} else if (timeout < 0) {
			/* Killed: nothing more waited for. */
			if (!*err)
				*err = -EINTR;
			for (i = 0; i < r->nr_out; i++)
				hzram_batch_reclaim(off, r->out[i],
						    HZRAM_OFF_KERNEL_GONE);
		}
	}
}

/*
 * The helper's record @rec (a copy) for staged page @page: true if it is
 * a zstd frame that decodes to the page, now in r->obj.
 */
static bool hzram_recomp_verify(struct hzram_recomp_run *r,
				const struct hzram_page_record *rec,
				const u8 *data, const void *page)
{
	struct hzram *hz = r->hz;
	const u64 cap = (u64)r->off->batch_pages * PAGE_SIZE;

	if (!rec->kind && !rec->flags)
		return false;	/* not encoded */
	if (rec->kind != HZRAM_PAGE_ZSTD ||
	    hzram_page_record_check(rec, cap) != HZRAM_RECORD_OK) {
		hzram_offload_count(hz, HZRAM_OFF_REJECTED);
		return false;
	}
	/* One read of the frame: what is decoded is what is kept. */
	memcpy(r->obj, data + rec->value, rec->length);
	if (hzram_comp_decompress(hz->recomp[r->prio], r->obj, rec->length,
				  r->buf) ||
	    memcmp(r->buf, page, PAGE_SIZE)) {
		hzram_offload_count(hz, HZRAM_OFF_VERIFY_FAILED);
		return false;
	}
	return true;
}

/*
 * Keep what came back in DONE batch @b, recompress here what did not,
 * and free the batch; *@max_pages drops by the pages tried (those still
 * chosen). After an error (*@err), what the helper made is still kept,
 * and the other pages are only let go.
 */
static void hzram_recomp_finish(struct hzram_recomp_run *r,
				struct hzram_batch *b, u64 *max_pages, int *err)
{
	struct hzram_offload *off = r->off;
	struct hzram *hz = r->hz;
	const unsigned int n = b - off->batches;
	const struct hzram_page_record *recs = off->rw + n * off->slot_size;
	const u8 *data = (const u8 *)(recs + off->batch_pages);
	unsigned int i;
	int ret;

	if (!b->committed)
		r->helper_ok = false;
	for (i = 0; i < b->nr; i++) {
		const void *page = hzram_cell_page(off, hzram_cell(off, b, i));
		struct hzram_page_record rec = { 0 };
		u32 index = b->index[i];

		if (b->committed) {
			/* One read of the helper's record; check the copy. */
			memcpy(&rec, &recs[i], sizeof(rec));
			barrier();
		}
		if (hzram_recomp_verify(r, &rec, data, page)) {
			ret = hzram_recomp_install(hz, index, r->prio,
						   r->threshold, r->last,
						   r->obj, rec.length);
			if (ret)
				hzram_offload_count(hz, HZRAM_OFF_RECOMP_HELPER);
		} else if (*err) {
			hzram_pp_unmark(hz, index);
			ret = 0;
		} else {
			ret = hzram_recompress_slot(hz, index, r->prio,
						    r->threshold, r->last,
						    r->buf);
			if (ret < 0)
				*err = ret;
			else if (ret)
				hzram_offload_count(hz, HZRAM_OFF_RECOMP_KERNEL);
		}
		/* Pages not tried (no longer chosen) are not counted. */
		if (ret > 0)
			(*max_pages)--;
		cond_resched();
	}
	r->staged -= b->nr;
	hzram_recomp_free(off, b);
}

/* The helper, if it recompresses with @prio's algorithm; init_lock held. */
static struct hzram_offload *hzram_recomp_helper(struct hzram *hz, u32 prio,
						 s16 *level)
{
	struct hzram_offload *off = rcu_dereference_protected(hz->off_io,
				lockdep_is_held(&hz->init_lock));

	if (!off || !off->recomp ||
	    !hzram_comp_helper_zstd(hz->recomp[prio], level))
		return NULL;
	return off;
}

/**
 * hzram_offload_recompress() - recompress chosen pages through the helper
 * @hz: the device; init_lock held for reading, pp_mutex held
 * @pp: the pages chosen
 * @prio: the algorithm's priority
 * @threshold: as hzram_recompress_slot()'s
 * @last: as hzram_recompress_slot()'s
 * @max_pages: pages left to try; lowered by those tried
 * @buf: a page to decode into
 *
 * Does nothing without a helper that recompresses with @prio's
 * algorithm. Otherwise sends pages until none is left, *@max_pages is 0,
 * or a batch was taken back late; recompresses here one page at a time
 * while the helper's batches are all taken (writes, reads); and returns
 * once every batch sent is back and done.
 *
 * Return: 0 (the caller recompresses what is left in @pp, if anything),
 * or hzram_recompress_slot()'s error, or -EINTR on a fatal signal.
 */
int hzram_offload_recompress(struct hzram *hz, struct hzram_pp *pp, u32 prio,
			     unsigned int threshold, bool last, u64 *max_pages,
			     void *buf)
{
	struct hzram_recomp_run r = {
		.hz = hz, .pp = pp, .prio = prio, .threshold = threshold,
		.last = last, .buf = buf, .helper_ok = true,
	};
	struct hzram_batch *b;
	u32 index;
	int err = 0, ret;

	lockdep_assert_held(&hz->init_lock);
	lockdep_assert_held(&hz->pp_mutex);
	r.off = hzram_recomp_helper(hz, prio, &r.level);
	if (!r.off)
		return 0;
	r.max_out = clamp(r.off->nr_batches / 2, 1U,
			  (unsigned int)HZRAM_RECOMP_BATCHES);
	r.obj = (void *)__get_free_page(GFP_KERNEL);
	if (!r.obj)
		return 0;	/* the caller recompresses them all */
	for (;;) {
		while (!err && r.helper_ok && r.nr_out < r.max_out &&
		       r.staged < *max_pages && pp->count) {
			b = hzram_recomp_take(r.off);
			if (!b)
				break;
			b->level = r.level;
			err = hzram_recomp_fill(&r, b, *max_pages);
			if (err)
				hzram_recomp_unmark(&r, b);
			if (err || !b->nr) {
				hzram_recomp_free(r.off, b);
				break;
			}
			r.staged += b->nr;
			hzram_recomp_send(r.off, b);
			r.out[r.nr_out++] = b;
		}
		if (r.nr_out) {
			b = hzram_recomp_wait(&r, &err);
			hzram_recomp_finish(&r, b, max_pages, &err);
			continue;
		}
		if (err || !r.helper_ok || !*max_pages ||
		    !hzram_pp_pop(pp, &index))
			break;
		/* No batch free (writes and reads have them): one page here. */
		ret = hzram_recompress_slot(hz, index, prio, threshold, last,
					    buf);
		if (ret < 0)
			err = ret;
		else
			*max_pages -= ret;
		if (!err && fatal_signal_pending(current))
			err = -EINTR;
		cond_resched();
	}
	free_page((unsigned long)r.obj);
	return err;
}
