// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: fault injection, for the tests: built into modules made with
 * HZRAM_FAULT_INJECTION=y (tests/vm/build-kmod does), never into the
 * packaged module. Its knobs are in /sys/kernel/debug/hzram/:
 *
 * delay_<point> and delay_<point>_times: the next _times passes through
 * the point sleep delay_<point> milliseconds (the points are enum
 * hzram_delay_point's, named in hzram_delay_names[]); delay_<point>_hits
 * counts the passes that slept, so that a test knows when a path is
 * there and can make another event happen at that moment.
 *
 * short_nowait_times: the next _times allocations of compressed pages
 * that may not reclaim fail as if memory were short (the first try of
 * each, HZRAM_GFP; for an inline swap-out, already under reclaim's
 * PF_MEMALLOC); the tries from the reserves after it are never made
 * short. short_nowait_hits counts them.
 *
 * fail_compress and fail_decompress, where the kernel has
 * CONFIG_FAULT_INJECTION_DEBUG_FS: the kernel's fault_attr knobs
 * (probability, interval, times, ... see
 * Documentation/fault-injection/fault-injection.rst): the compressor then
 * fails as if the data could not be compressed, and the decompressor as
 * if a stored page were corrupt. They start disabled and quiet.
 */
#include "hzram.h"

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fault-inject.h>

static const char *const hzram_delay_names[HZRAM_NR_DELAYS] = {
	[HZRAM_DELAY_PUT]		= "put",
	[HZRAM_DELAY_ATTACH]		= "attach",
	[HZRAM_DELAY_UNLINK]		= "unlink",
	[HZRAM_DELAY_FAIL_FETCHES]	= "fail_fetches",
	[HZRAM_DELAY_COMMIT]		= "commit",
	[HZRAM_DELAY_KWORK]		= "kwork",
};

static struct {
	u32 ms;
	atomic_t times;
	atomic_t hits;
} hzram_delays[HZRAM_NR_DELAYS];

static atomic_t hzram_short_nowait_times, hzram_short_nowait_hits;

/* An allocation point that may not reclaim: true if it is to fail. */
bool hzram_short_nowait(void)
{
	if (likely(!atomic_read(&hzram_short_nowait_times)) ||
	    atomic_dec_if_positive(&hzram_short_nowait_times) < 0)
		return false;
	atomic_inc(&hzram_short_nowait_hits);
	return true;
}

/* A delay point: sleeps if a test asked for it here. May sleep anyway. */
void hzram_delay(enum hzram_delay_point point)
{
	u32 ms = READ_ONCE(hzram_delays[point].ms);

	might_sleep();
	if (likely(!ms) || atomic_dec_if_positive(&hzram_delays[point].times) < 0)
		return;
	atomic_inc(&hzram_delays[point].hits);
	msleep(ms);
}

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
static DECLARE_FAULT_ATTR(hzram_fail_compress_attr);
static DECLARE_FAULT_ATTR(hzram_fail_decompress_attr);

bool hzram_fail_compress(void)
{
	return should_fail(&hzram_fail_compress_attr, 1);
}

bool hzram_fail_decompress(void)
{
	return should_fail(&hzram_fail_decompress_attr, 1);
}

static void hzram_fail_init(void)
{
	hzram_fail_compress_attr.verbose = 0;
	hzram_fail_decompress_attr.verbose = 0;
	fault_create_debugfs_attr("fail_compress", hzram_debugfs_root,
				  &hzram_fail_compress_attr);
	fault_create_debugfs_attr("fail_decompress", hzram_debugfs_root,
				  &hzram_fail_decompress_attr);
}
#else
static void hzram_fail_init(void)
{
}
#endif

/* debugfs is best effort: a missing knob only means no injection. */
void hzram_fault_init(void)
{
	char name[32];
	unsigned int i;

	for (i = 0; i < HZRAM_NR_DELAYS; i++) {
		snprintf(name, sizeof(name), "delay_%s", hzram_delay_names[i]);
		debugfs_create_u32(name, 0600, hzram_debugfs_root,
				   &hzram_delays[i].ms);
		snprintf(name, sizeof(name), "delay_%s_times",
			 hzram_delay_names[i]);
		debugfs_create_atomic_t(name, 0600, hzram_debugfs_root,
					&hzram_delays[i].times);
		snprintf(name, sizeof(name), "delay_%s_hits",
			 hzram_delay_names[i]);
		debugfs_create_atomic_t(name, 0400, hzram_debugfs_root,
					&hzram_delays[i].hits);
	}
	debugfs_create_atomic_t("short_nowait_times", 0600, hzram_debugfs_root,
				&hzram_short_nowait_times);
	debugfs_create_atomic_t("short_nowait_hits", 0400, hzram_debugfs_root,
				&hzram_short_nowait_hits);
	hzram_fail_init();
}
