// SPDX-License-Identifier: GPL-2.0
/* zs_obj_read_begin()/zs_obj_read_end() take the object's length (7.0). */
#include <linux/mm.h>
#include <linux/zsmalloc.h>

static void __maybe_unused hzram_probe(struct zs_pool *pool,
				       unsigned long handle, size_t len,
				       void *local_copy)
{
	void *mem = zs_obj_read_begin(pool, handle, len, local_copy);

	zs_obj_read_end(pool, handle, len, mem);
}
