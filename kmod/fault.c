// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: fault injection for the failures a healthy kernel never shows,
 * built when the kernel has CONFIG_FAULT_INJECTION_DEBUG_FS.
 *
 * /sys/kernel/debug/hzram/fail_compress and fail_decompress hold the
 * kernel's fault_attr knobs (probability, interval, times, ... see
 * Documentation/fault-injection/fault-injection.rst): the compressor then
 * fails as if the data could not be compressed, and the decompressor as
 * if a stored page were corrupt. They start disabled and quiet.
 */
#include "hzram.h"

#include <linux/debugfs.h>
#include <linux/fault-inject.h>

static DECLARE_FAULT_ATTR(hzram_fail_compress_attr);
static DECLARE_FAULT_ATTR(hzram_fail_decompress_attr);
static struct dentry *hzram_debugfs;

bool hzram_fail_compress(void)
{
	return should_fail(&hzram_fail_compress_attr, 1);
}

bool hzram_fail_decompress(void)
{
	return should_fail(&hzram_fail_decompress_attr, 1);
}

/* debugfs is best effort: a missing knob only means no injection. */
void hzram_fault_init(void)
{
	hzram_fail_compress_attr.verbose = 0;
	hzram_fail_decompress_attr.verbose = 0;
	hzram_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	fault_create_debugfs_attr("fail_compress", hzram_debugfs,
				  &hzram_fail_compress_attr);
	fault_create_debugfs_attr("fail_decompress", hzram_debugfs,
				  &hzram_fail_decompress_attr);
}

void hzram_fault_exit(void)
{
	debugfs_remove_recursive(hzram_debugfs);
}
