// SPDX-License-Identifier: GPL-2.0
/*
 * zs_obj_read_begin()/zs_obj_read_end() without the object's length,
 * which replaced zs_map_object() for reads (6.15 to 6.19).
 */
#include <linux/mm.h>
#include <linux/zsmalloc.h>

static void __maybe_unused hzram_probe(struct zs_pool *pool,
				       unsigned long handle, void *local_copy)
{
	void *mem = zs_obj_read_begin(pool, handle, local_copy);

	zs_obj_read_end(pool, handle, mem);
}
