// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: the lists of pages chosen for post-processing, writeback
 * (writeback.c) and recompression (recomp.c), as zram's pp lists.
 *
 * A chosen slot is marked PP under its lock. The mark says "still as it
 * was when chosen": every change of the slot (hzram_slot_set()) and every
 * access (hzram_slot_accessed()) clears it, and the post-processing skips
 * a page whose mark is gone. One post-processing runs at a time per
 * device (pp_mutex), so a mark is always the running one's.
 *
 * The pages are kept by size class: 64-byte buckets of the stored size,
 * the largest taken first (they free the most memory), and in each the
 * last chosen first, as zram's lists. Each bucket is a stack of
 * page-sized chunks of slot indexes.
 */
#include "hzram.h"

#include <linux/gfp.h>

/* Have a spare chunk; false without memory. Takes no slot lock. */
bool hzram_pp_reserve(struct hzram_pp *pp)
{
	if (!pp->spare)
		pp->spare = (void *)__get_free_page(GFP_KERNEL | __GFP_NOWARN);
	return pp->spare;
}

/*
 * Choose slot @index, whose lock is held and whose flags are @flags; the
 * spare chunk is there (hzram_pp_reserve()).
 */
void hzram_pp_push(struct hzram *hz, struct hzram_pp *pp, u32 index,
		   unsigned long flags)
{
	unsigned int bucket = (flags & HZRAM_SIZE_MASK) / HZRAM_PP_BUCKET_BYTES;
	struct hzram_pp_chunk *c = pp->top[bucket];

	hzram_assert_slot_locked(hz);
	if (!c || c->n == HZRAM_PP_CHUNK_SLOTS) {
		c = pp->spare;
		pp->spare = NULL;
		c->prev = pp->top[bucket];
		c->n = 0;
		pp->top[bucket] = c;
	}
	c->index[c->n++] = index;
	pp->count++;
	WRITE_ONCE(hz->table[index].flags, flags | BIT(HZRAM_SLOT_PP));
}

/* The next chosen page, largest first; false when none is left. */
bool hzram_pp_pop(struct hzram_pp *pp, u32 *index)
{
	int b;

	for (b = HZRAM_PP_BUCKETS - 1; b >= 0; b--) {
		struct hzram_pp_chunk *c = pp->top[b];

		if (!c)
			continue;
		*index = c->index[--c->n];
		pp->count--;
		if (!c->n) {
			pp->top[b] = c->prev;
			free_page((unsigned long)c);
		}
		return true;
	}
	return false;
}

/* Slot @index is no longer chosen (if it still was). */
void hzram_pp_unmark(struct hzram *hz, u32 index)
{
	struct hzram_slot *slot = &hz->table[index];

	hzram_slot_lock(hz, index);
	WRITE_ONCE(slot->flags, slot->flags & ~BIT(HZRAM_SLOT_PP));
	hzram_slot_unlock(hz, index);
}

/* Let go of the pages chosen and not processed. */
void hzram_pp_release(struct hzram *hz, struct hzram_pp *pp)
{
	u32 index;

	while (hzram_pp_pop(pp, &index)) {
		hzram_pp_unmark(hz, index);
		cond_resched();
	}
	free_page((unsigned long)pp->spare);
	pp->spare = NULL;
}
