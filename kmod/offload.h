/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hzram: the helper offload's private definitions, shared by its three
 * files:
 *
 *   offload.c       the batches: staging writes, the batch state machine,
 *                   storing what comes back, start, stop and time-outs
 *   offload_read.c  large reads decoded by the helper, and offload auto
 *   offload_recomp.c  recompress through the helper
 *   offload_ctl.c   the control device /dev/hzram-control and the
 *                   protocol: attach, FETCH, COMMIT, detach, the helper's
 *                   death
 *
 * A batch's state machine. Every change of state happens under off->lock;
 * a batch has exactly one owner in each state, and only its owner moves
 * it out (the stop, the monitor, and a helper's leaving
 * (hzram_offload_take_all()) take READY and HELPER batches back under
 * off->mutex, which commits hold too).
 *
 *   state   owner                       leaves by                  to
 *   FREE    nobody                      a writer opens it          OPEN
 *                                       a large read takes it      CLOSED
 *   OPEN    off->open; refs: 1, plus    the writer that fills it,  CLOSED
 *           the writers copying in      flush_work, the stop
 *   CLOSED  its refs (writers still     the last ref's put: too    KERNEL
 *           copying; a read's reader)   small while staging, or
 *                                       the helper leaving
 *                                       (unlinked: nothing would
 *                                       fetch or take it back)
 *                                       otherwise                  READY
 *                                       a read with too few pages  FREE
 *   READY   off->ready                  a FETCH (active, not       HELPER
 *                                       unlinked)
 *                                       the monitor (late), stop,  KERNEL
 *                                       the helper leaving
 *   HELPER  the helper (desc seq)       COMMIT of that seq,        KERNEL
 *                                       the monitor (late), stop,
 *                                       the helper leaving
 *   KERNEL  the context that moved it   stored (and a read's bio   FREE
 *           there; kwork, for those a   ended)
 *           put queued on kernel_list
 *
 *   DONE    the recompress writer that      that writer, once it has   FREE
 *           filled it (a recompression    installed what came back
 *           batch, moved there from
 *           KERNEL by the context that
 *           moved it to KERNEL)
 *
 * A read batch goes the same way (CLOSED to KERNEL too, if
 * offload_min_pages rose while its reader filled it). A recompression
 * batch (offload_recomp.c) goes FREE -> CLOSED (its writer fills it) ->
 * READY -> HELPER -> KERNEL -> DONE -> FREE, or CLOSED -> FREE if its
 * writer found nothing to put in it; from READY or HELPER the monitor's
 * or the writer's take-back of a late batch moves it to KERNEL, then
 * DONE, as a commit does. Its writer holds init_lock for reading from
 * the take to the free, so the stop, which needs it for writing, never
 * finds one. refs (b->pending)
 * are non-zero in OPEN and CLOSED only. The last ref and the state change
 * are one step: atomic_dec_and_lock() takes off->lock as the count
 * reaches 0. Every move out of CLOSED or KERNEL wakes off->wq under
 * off->lock. While a batch is not FREE, every slot STAGED in one of its
 * cells stays readable there; its cells are refilled only once it is
 * FREE, after every one of its pages was stored or found superseded.
 *
 * The stop (hzram_offload_stop()) unpublishes hz->off_io and waits for an
 * RCU grace period, then clears active: from then on nothing opens a
 * batch, hands one out or queues one for kwork (the stop's own close of
 * the open batch still makes it CLOSED, and a commit under way still
 * makes its batch KERNEL). It waits, checking states under off->lock,
 * until no batch is OPEN, CLOSED or KERNEL, flushes kwork, and then,
 * under off->mutex, takes every READY and HELPER batch back.
 *
 * Lifetime: struct hzram_offload lives from ATTACH to the release of the
 * control file. hz->off points to it while attached; that link changes
 * only under hzram_offload_mutex and hz->init_lock (for writing)
 * together, so a path holding either may follow it: reset and disksize
 * hold init_lock; sysfs offload, DETACH, the monitor, hot_remove and
 * release hold hzram_offload_mutex from the lookup to the end of a
 * detach. The write and read paths find it through hz->off_io (RCU) and
 * hold a batch ref before they let go of RCU; the stop waits for those
 * refs, and for kwork. The release cancels the monitor before it frees
 * the offload.
 *
 * Locks, outermost first: hzram_index_mutex, hzram_offload_mutex,
 * hz->init_lock, off->mutex, slot locks, off->lock (a spinlock; also the
 * lock of the FETCH list and of off->wq's conditions). The helper's
 * io_uring ctx->uring_lock, held around FETCH, COMMIT and the cancel
 * handler, comes before off->mutex and off->lock; nothing under either
 * takes it (a FETCH completes through task work).
 */
#ifndef _HZRAM_OFFLOAD_H
#define _HZRAM_OFFLOAD_H

#include "hzram.h"

#include <linux/list.h>
#include <linux/sched.h>
#include <linux/wait.h>

#define HZRAM_OFFLOAD_BATCHES	8	/* batches of one helper */
#define HZRAM_MONITOR_MS	20	/* how often the helper is checked */

enum hzram_batch_state {
	HZRAM_BATCH_FREE,
	HZRAM_BATCH_OPEN,
	HZRAM_BATCH_CLOSED,
	HZRAM_BATCH_READY,
	HZRAM_BATCH_HELPER,
	HZRAM_BATCH_KERNEL,
	HZRAM_BATCH_DONE,
};

struct hzram_batch {
	struct list_head node;		/* on ready or kernel_list */
	enum hzram_batch_state state;	/* under off->lock */
	unsigned int nr;		/* cells taken (pages to decode) */
	atomic_t pending;		/* refs: writers in it, +1 while OPEN
					 * (its reader, while a read fills it) */
	u64 seq;			/* of its hand-out to the helper */
	bool gone;			/* KERNEL: its helper was leaving */
	unsigned long deadline;		/* jiffies: commit by then */
	ktime_t handed;			/* when it was handed out */
	u32 *index;			/* the slot of each cell (a read: the
					 * page of the bio) */
	unsigned long *swap;		/* cells staged by a swap-out */
	/* A read batch (HZRAM_OP_DECOMPRESS): */
	bool read;
	bool verify;			/* check csum[] (offload_verify) */
	struct bio *bio;		/* the read, ended with the batch */
	struct bvec_iter iter;		/* its pages */
	unsigned long start;		/* its I/O accounting */
	u64 created;			/* ns, when the bio came */
	blk_status_t status;		/* of the pages read inline */
	u32 *csum;			/* each page's checksum */
	/* A recompression batch (HZRAM_OP_RECOMPRESS): */
	bool recomp;
	bool committed;			/* DONE: the helper's output is there
					 * (else it was taken back) */
	s16 level;			/* zstd's */
};

struct hzram_offload {
	struct hzram *hz;		/* NULL once detached (under off->mutex
					 * and hzram_offload_mutex) */
	struct task_struct *task;	/* the helper's thread group leader */
	struct mutex mutex;		/* commits, time-outs, the stop's
					 * take-back */
	spinlock_t lock;		/* batch states and lists, fetchers */
	bool active;			/* staging (under lock) */
	bool unlinked;			/* under lock; FETCH fails */
	bool died;			/* its death was counted (under
					 * hzram_offload_mutex) */
	bool decode;			/* HZRAM_FEAT_DECOMPRESS granted */
	bool recomp;			/* HZRAM_FEAT_RECOMPRESS granted */
	unsigned int nr_batches;
	unsigned int batch_pages;
	void *ro;			/* descriptors, then staging */
	void *rw;			/* output slots */
	size_t ro_size, rw_size, staging_off, slot_size;
	struct hzram_batch batches[HZRAM_OFFLOAD_BATCHES];
	struct hzram_batch *open;	/* under lock */
	struct list_head ready;		/* READY batches, under lock */
	struct list_head kernel_list;	/* KERNEL batches for kwork */
	struct list_head fetchers;	/* FETCH commands waiting */
	wait_queue_head_t wq;		/* a batch left CLOSED or KERNEL */
	struct delayed_work flush_work;	/* closes the open batch */
	struct work_struct kwork;	/* compresses kernel_list */
	struct delayed_work monitor;	/* death and time-outs */
	void *scratch;			/* a page; under mutex */
	u64 next_seq;			/* under lock */
};

static inline void hzram_offload_count(struct hzram *hz, int field)
{
	atomic64_inc(&hz->stats.offload[field]);
}

/* Cell @i of batch @b, numbered across the staging arena. */
static inline unsigned long hzram_cell(struct hzram_offload *off,
				       struct hzram_batch *b, unsigned int i)
{
	return (unsigned long)(b - off->batches) * off->batch_pages + i;
}

static inline void *hzram_cell_page(struct hzram_offload *off,
				    unsigned long cell)
{
	return off->ro + off->staging_off + cell * PAGE_SIZE;
}

/* offload.c */
extern struct workqueue_struct *hzram_offload_wq;
extern struct workqueue_struct *hzram_monitor_wq;
struct hzram_batch *hzram_batch_take(struct hzram_offload *off);
void hzram_batch_ready(struct hzram_offload *off, struct hzram_batch *b);
void hzram_batch_put(struct hzram_offload *off, struct hzram_batch *b);
void hzram_batch_free(struct hzram_offload *off, struct hzram_batch *b);
void hzram_batch_store(struct hzram_offload *off, struct hzram_batch *b,
		       const void *slot, int reason);
int hzram_batch_hand_out(struct hzram_offload *off, struct hzram_batch *b);
void hzram_offload_take_late(struct hzram_offload *off);
void hzram_batch_reclaim(struct hzram_offload *off, struct hzram_batch *b,
			 int reason);
void hzram_offload_take_all(struct hzram_offload *off);
void hzram_rtt_count(struct hzram *hz, ktime_t handed);
unsigned int hzram_offload_min_pages(struct hzram_offload *off);
struct hzram_offload *hzram_offload_alloc(unsigned int batch_pages);
void hzram_offload_free(struct hzram_offload *off);

/* offload_read.c */
void hzram_batch_read_end(struct hzram_offload *off, struct hzram_batch *b,
			  const void *slot);
void hzram_ns_average(u64 *avg, u64 ns, unsigned int pages);

/* offload_ctl.c */
void hzram_offload_dispatch(struct hzram_offload *off);

#endif /* _HZRAM_OFFLOAD_H */
