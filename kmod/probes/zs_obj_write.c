// SPDX-License-Identifier: GPL-2.0
/* zs_obj_write(), which replaced zs_map_object() for writes (6.15). */
#include <linux/mm.h>
#include <linux/zsmalloc.h>

static void __maybe_unused hzram_probe(struct zs_pool *pool,
				       unsigned long handle, void *src,
				       size_t len)
{
	zs_obj_write(pool, handle, src, len);
}
