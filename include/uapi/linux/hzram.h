/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * hzram: definitions shared by the kernel module and userspace.
 *
 * The module's control interface is sysfs (zram's documented ABI, see
 * Documentation/admin-guide.rst); this header holds what userspace needs
 * to read it without guessing: the device names, the limits the module
 * enforces and the field order of the multi-value statistics files.
 */
#ifndef _UAPI_LINUX_HZRAM_H
#define _UAPI_LINUX_HZRAM_H

#include <linux/types.h>

#define HZRAM_DEVICE_PREFIX	"hzram"		/* /dev/hzramN, /sys/block/hzramN */
#define HZRAM_CONTROL_CLASS	"hzram-control"	/* /sys/class/hzram-control */

/* Most devices the module creates: num_devices and hot_add are bounded by it. */
#define HZRAM_MAX_DEVICES	256

/* The module stores data in pages of this size (the kernel's PAGE_SIZE on x86-64). */
#define HZRAM_PAGE_SIZE		4096

/* Fields of /sys/block/hzramN/mm_stat, in the order they are printed. */
enum hzram_mm_stat_field {
	HZRAM_MM_ORIG_DATA_SIZE,	/* bytes of data stored, before compression */
	HZRAM_MM_COMPR_DATA_SIZE,	/* bytes of compressed data stored */
	HZRAM_MM_MEM_USED_TOTAL,	/* bytes of memory the store uses */
	HZRAM_MM_MEM_LIMIT,		/* bytes; 0: no limit */
	HZRAM_MM_MEM_USED_MAX,		/* bytes; peak of mem_used_total */
	HZRAM_MM_SAME_PAGES,		/* pages stored as one repeated word */
	HZRAM_MM_PAGES_COMPACTED,	/* pages freed by compaction */
	HZRAM_MM_HUGE_PAGES,		/* pages stored uncompressed */
	HZRAM_MM_HUGE_PAGES_SINCE,	/* pages stored uncompressed since init */
	HZRAM_MM_NR_FIELDS,
};

/* Fields of /sys/block/hzramN/io_stat, in the order they are printed. */
enum hzram_io_stat_field {
	HZRAM_IO_FAILED_READS,		/* read requests that failed */
	HZRAM_IO_FAILED_WRITES,		/* write requests that failed */
	HZRAM_IO_INVALID_IO,		/* requests outside the device */
	HZRAM_IO_NOTIFY_FREE,		/* swap slot free notifications */
	HZRAM_IO_NR_FIELDS,
};

/*
 * Encoded pages of a batch. A batch of HZRAM_PAGE_SIZE-byte pages is
 * encoded into an arena (a byte buffer) and an array of records, one per
 * page, in page order. The same layout carries pages between the kernel
 * and the helper.
 */
enum hzram_page_kind {
	HZRAM_PAGE_SAME = 1,	/* one 8-byte word repeated; nothing in the arena */
	HZRAM_PAGE_RAW = 2,	/* the page itself, HZRAM_PAGE_SIZE bytes */
	HZRAM_PAGE_LZ4 = 3,	/* an LZ4 block (the block format, no frame) */
};

struct hzram_page_record {
	__u64 value;	/* SAME: the fill word; RAW, LZ4: byte offset in the arena */
	__u32 length;	/* bytes in the arena: 0 (SAME), HZRAM_PAGE_SIZE (RAW),
			 * 1..HZRAM_PAGE_SIZE - 1 (LZ4) */
	__u16 kind;	/* enum hzram_page_kind */
	__u16 flags;	/* 0; reserved */
};

#endif /* _UAPI_LINUX_HZRAM_H */
