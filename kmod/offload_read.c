// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: large reads decoded by the helper, and offload auto.
 *
 * A read of at least offload_read_min_pages whole pages goes to a helper
 * that decodes (HZRAM_FEAT_DECOMPRESS) when offload is on, or while
 * offload auto measures the helper faster at it than the kernel. The LZ4
 * data of its pages is copied into a batch's staging cells; the bio ends
 * when the helper commits the batch, or when the module takes it back and
 * decodes the pages itself (time-out, the helper gone). A page the helper
 * decoded is checked against the checksum its slot keeps (offload_verify)
 * before it is handed to the reader.
 *
 * A read batch goes FREE -> CLOSED (its reader fills it) -> READY, or
 * back to FREE when too few of its pages would go (offload.h).
 */
#include "offload.h"

#include <linux/bio.h>
#include <linux/highmem.h>

/*
 * offload auto sends a large read the slower way once in HZRAM_READ_PROBE
 * times how much slower that way is (at most HZRAM_READ_PROBE_MAX times),
 * to keep its measure current: probing costs about 1/HZRAM_READ_PROBE of
 * the read time.
 */
#define HZRAM_READ_PROBE	32
#define HZRAM_READ_PROBE_MAX	128

/* A moving average of ns per page, 1/8 of the new sample. */
void hzram_ns_average(u64 *avg, u64 ns, unsigned int pages)
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

	if (out && out->kind == HZRAM_PAGE_RAW &&
	    hzram_page_record_check(out, cap) == HZRAM_RECORD_OK) {
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

/**
 * hzram_batch_read_end() - end the bio of a read batch
 * @off: the helper
 * @b: the batch, which this caller owns (KERNEL, or CLOSED by its reader)
 * @slot: the helper's output for it, or NULL: every page decoded here
 */
void hzram_batch_read_end(struct hzram_offload *off, struct hzram_batch *b,
			  const void *slot)
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
			if (slot) {
				/* One read, as the write commit's. */
				memcpy(&rec, &recs[i], sizeof(rec));
				barrier();
			}
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

/* Take a FREE batch for a read (CLOSED, its reader's ref), or NULL. */
static struct hzram_batch *hzram_batch_take_read(struct hzram_offload *off)
	__must_hold(&off->lock)
{
	struct hzram_batch *b;

	lockdep_assert_held(&off->lock);
	if (!off->active || !off->decode || off->unlinked)
		return NULL;
	b = hzram_batch_take(off);
	if (b)
		b->read = true;
	return b;
}

/*
 * Read batch @b, CLOSED with its reader's ref only, is given up by its
 * reader (its bio ended): FREE again, in one step with the ref.
 */
static void hzram_batch_drop_read(struct hzram_offload *off,
				  struct hzram_batch *b)
{
	spin_lock(&off->lock);
	WARN_ON_ONCE(b->state != HZRAM_BATCH_CLOSED ||
		     atomic_read(&b->pending) != 1);
	b->state = HZRAM_BATCH_FREE;
	b->read = false;
	b->bio = NULL;
	b->nr = 0;
	atomic_set(&b->pending, 0);
	wake_up_all(&off->wq);
	spin_unlock(&off->lock);
}

/**
 * hzram_offload_read() - send a large read to the helper to decode
 * @hz: the device
 * @bio: a read; its accounting has started
 * @start: what bio_start_io_acct() returned
 *
 * A read of at least offload_read_min_pages whole pages, no more than a
 * batch holds, goes to a helper that decodes (offload on, or auto while
 * the helper is the faster). Its other pages (unwritten, same-filled,
 * raw, staged, without a checksum while offload_verify is on) are read
 * here at once; so are all of them if fewer than offload_min_pages would
 * go.
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
	/* Our ref keeps the batch CLOSED, and the stop waits: off stays. */
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
	if (b->nr < hzram_offload_min_pages(off)) {
		/* Too few to be worth a round trip: the reader decodes them. */
		hzram_batch_read_end(off, b, NULL);
		hzram_batch_drop_read(off, b);
		return true;
	}
	hzram_batch_put(off, b);
	return true;
}
