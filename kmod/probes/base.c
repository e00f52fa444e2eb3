// SPDX-License-Identifier: GPL-2.0
/*
 * Not a difference: the headers every probe includes compile with this
 * kernel's compiler and flags. gen-config fails when this does not build,
 * rather than report every interface missing.
 */
#include <linux/module.h>
#include <linux/blkdev.h>
#include <linux/device.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/zsmalloc.h>
#include <linux/zstd.h>
#include <linux/io_uring.h>
#include <net/genetlink.h>

static int __maybe_unused hzram_probe(void)
{
	return 0;
}
