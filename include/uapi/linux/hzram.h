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

#include <linux/ioctl.h>
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
 * Fields of /sys/block/hzramN/offload_stat, in the order they are printed:
 * what the userspace helper (hzramd) did for the device since it was
 * last reset. Pages are counts of 4 KiB pages. The round-trip times are
 * the upper bounds of histogram buckets a quarter of a power of two wide
 * (at most 25% above the true value), 0 before the first commit.
 */
enum hzram_offload_stat_field {
	HZRAM_OFF_HELPER,		/* 1: a helper is attached */
	HZRAM_OFF_ACTIVE,		/* 1: writes go to the helper (attached,
					 * initialised, comp_algorithm lz4) */
	HZRAM_OFF_STAGED,		/* pages staged now, waiting to be stored */
	HZRAM_OFF_PAGES_HELPER,		/* pages stored as the helper encoded them */
	HZRAM_OFF_PAGES_KERNEL,		/* staged pages the module compressed:
					 * small batches, timeouts, refused
					 * records, detach */
	HZRAM_OFF_STAGING_FULL,		/* writes compressed inline: no room */
	HZRAM_OFF_STALE,		/* results dropped: the page changed */
	HZRAM_OFF_REJECTED,		/* records refused as invalid */
	HZRAM_OFF_VERIFY_FAILED,	/* records that did not decode to the page */
	HZRAM_OFF_BATCHES,		/* batches committed by the helper */
	HZRAM_OFF_TIMEOUTS,		/* batches taken back after offload_timeout_ms */
	HZRAM_OFF_BAD_COMMITS,		/* commits refused: unknown, duplicate, late */
	HZRAM_OFF_ATTACHES,		/* helpers attached */
	HZRAM_OFF_DEATHS,		/* helpers that died attached */
	/* HZRAM_OFF_PAGES_KERNEL by reason; the four add up to it: */
	HZRAM_OFF_KERNEL_SMALL,		/* in batches under offload_min_pages */
	HZRAM_OFF_KERNEL_TIMEOUT,	/* in batches taken back after
					 * offload_timeout_ms */
	HZRAM_OFF_KERNEL_GONE,		/* taken back when the helper detached
					 * or died, offload was turned off, or
					 * at reset */
	HZRAM_OFF_KERNEL_REFUSED,	/* the helper's record was rejected,
					 * failed verification, or was "not
					 * encoded" */
	HZRAM_OFF_NOT_LZ4,		/* writes not staged: a helper is
					 * attached, the device is not lz4 */
	HZRAM_OFF_RTT_P50_US,		/* batch round trip, hand-out to commit:
					 * median, in microseconds */
	HZRAM_OFF_RTT_P99_US,		/* ... 99th percentile */
	/* Reads decoded by the helper (offload_read_min_pages): */
	HZRAM_OFF_READ_BATCHES,		/* read batches committed */
	HZRAM_OFF_READ_HELPER,		/* pages read as the helper decoded them */
	HZRAM_OFF_READ_KERNEL,		/* pages of read batches the module
					 * decoded itself: refused, "not
					 * decoded", time-out, helper gone,
					 * too few to send */
	HZRAM_OFF_READ_REFUSED,		/* decoded pages refused: a bad record,
					 * or not the page that was written
					 * (its checksum, offload_verify) */
	HZRAM_OFF_READ_NS_KERNEL,	/* offload auto's measures, in ns per
					 * page of a large read: decoded in
					 * the kernel (recent average; 0: not
					 * measured yet) */
	HZRAM_OFF_READ_NS_HELPER,	/* ... through the helper, from the
					 * read's arrival to the commit (or
					 * the take-back of a late batch) */
	/* Recompression by the helper (recompress, HZRAM_FEAT_RECOMPRESS): */
	HZRAM_OFF_RECOMP_BATCHES,	/* recompression batches committed */
	HZRAM_OFF_RECOMP_HELPER,	/* pages the helper recompressed, its
					 * result checked to decode to the
					 * page (kept if smaller, as any) */
	HZRAM_OFF_RECOMP_KERNEL,	/* pages of recompression batches the
					 * module recompressed itself: not
					 * encoded, refused, time-out */
	HZRAM_OFF_NR_FIELDS,
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
	HZRAM_PAGE_ZSTD = 4,	/* a zstd frame (HZRAM_OP_RECOMPRESS's output) */
};

struct hzram_page_record {
	__u64 value;	/* SAME: the fill word; RAW, LZ4, ZSTD: byte offset in
			 * the arena */
	__u32 length;	/* bytes in the arena: 0 (SAME), HZRAM_PAGE_SIZE (RAW),
			 * 1..HZRAM_PAGE_SIZE - 1 (LZ4, ZSTD) */
	__u16 kind;	/* enum hzram_page_kind; 0: not encoded (see below) */
	__u16 flags;	/* 0; reserved */
};

/* What hzram_page_record_check() finds wrong with a record. */
enum hzram_record_error {
	HZRAM_RECORD_OK = 0,		/* nothing */
	HZRAM_RECORD_FLAGS,		/* reserved flags set */
	HZRAM_RECORD_KIND,		/* not 0 nor an enum hzram_page_kind */
	HZRAM_RECORD_LENGTH,		/* not the length its kind has */
	HZRAM_RECORD_RANGE,		/* its data not all inside the arena */
};

/*
 * How this header's functions are declared (__inline__, as C90 users
 * need); CUDA code defines it as "__host__ __device__ static inline"
 * before the first include.
 */
#ifndef HZRAM_UAPI_INLINE
#define HZRAM_UAPI_INLINE static __inline__
#endif

/*
 * Check @r against the layout above, for an arena of @arena_len bytes.
 * A record of kind 0 ("not encoded") with no flags passes whatever its
 * value and length: a reader that needs the page checks the kind too.
 * Each field is read more than once: check a copy of a record that
 * another party can write.
 */
HZRAM_UAPI_INLINE enum hzram_record_error
hzram_page_record_check(const struct hzram_page_record *r, __u64 arena_len)
{
	if (r->flags)
		return HZRAM_RECORD_FLAGS;
	switch (r->kind) {
	case 0:
		return HZRAM_RECORD_OK;
	case HZRAM_PAGE_SAME:
		return r->length ? HZRAM_RECORD_LENGTH : HZRAM_RECORD_OK;
	case HZRAM_PAGE_RAW:
		if (r->length != HZRAM_PAGE_SIZE)
			return HZRAM_RECORD_LENGTH;
		break;
	case HZRAM_PAGE_LZ4:
	case HZRAM_PAGE_ZSTD:
		if (!r->length || r->length >= HZRAM_PAGE_SIZE)
			return HZRAM_RECORD_LENGTH;
		break;
	default:
		return HZRAM_RECORD_KIND;
	}
	if (r->value > arena_len || r->length > arena_len - r->value)
		return HZRAM_RECORD_RANGE;
	return HZRAM_RECORD_OK;
}

/*
 * The helper protocol: hzramd compresses batches of written pages for a
 * device, and decodes batches of pages being read (Documentation/uapi.rst
 * has the whole protocol).
 *
 * 1. open(HZRAM_CONTROL_PATH, O_RDWR) and HZRAM_IOC_ATTACH with the number
 *    of the device (CAP_SYS_ADMIN; one helper per device: EBUSY).
 * 2. mmap the two regions the reply describes: the batch descriptors and
 *    the staging arena, read-only (the kernel writes them); the output
 *    arena, read-write (the helper writes it). Both exist from attach to
 *    close; the I/O path never allocates them.
 * 3. IORING_OP_URING_CMD on the control fd, cmd_op HZRAM_CMD_FETCH:
 *    completes with the number of a batch ready for the helper (CQE res
 *    >= 0) or a negative errno. Several may be queued.
 * 4. Do what the descriptor's op says into the batch's output slot (at
 *    its output_offset: batch_pages records, then the data area), then
 *    IORING_OP_URING_CMD HZRAM_CMD_COMMIT with struct hzram_cmd
 *    { batch, 0, seq }: completes with 0 or a negative errno.
 *    HZRAM_OP_COMPRESS: encode nr_pages pages (in the staging arena, at
 *    staging_offset) into records and data.
 *    HZRAM_OP_DECOMPRESS: at staging_offset lie nr_pages records (LZ4,
 *    values are offsets in the data), batch_pages records from the
 *    start the data; decode each into a page of the output data area,
 *    its record HZRAM_PAGE_RAW (or kind 0: not decoded).
 *    HZRAM_OP_RECOMPRESS: compress nr_pages pages (at staging_offset)
 *    with zstd at the descriptor's level, each into a zstd frame of
 *    fewer than HZRAM_PAGE_SIZE bytes (record HZRAM_PAGE_ZSTD), or kind
 *    0 (not encoded: the module compresses the page itself). The module
 *    decodes each frame and keeps it only if it is that page.
 * 5. HZRAM_IOC_DETACH detaches: every batch the helper still holds goes
 *    back to the kernel, which compresses it itself, and every queued
 *    FETCH completes with -ECANCELED. So does the helper's death, or its
 *    exit; closing the file detaches too, once no queued FETCH holds it.
 *    A detached file cannot attach again.
 */
#define HZRAM_CONTROL_PATH	"/dev/hzram-control"

/* The version of the structs and commands below. */
#define HZRAM_UAPI_VERSION	1

/* What a helper can do; HZRAM_IOC_ATTACH keeps those the module offers. */
#define HZRAM_FEAT_COMPRESS	(1U << 0)	/* compress write batches */
#define HZRAM_FEAT_DECOMPRESS	(1U << 1)	/* decode read batches */
#define HZRAM_FEAT_RECOMPRESS	(1U << 2)	/* recompress with zstd */
#define HZRAM_FEATURES		(HZRAM_FEAT_COMPRESS | HZRAM_FEAT_DECOMPRESS | \
				 HZRAM_FEAT_RECOMPRESS)

/* HZRAM_IOC_ATTACH's argument; "in" fields are read, the rest written. */
struct hzram_attach {
	__u32 size;		/* in: sizeof(struct hzram_attach) */
	__u32 version;		/* in: HZRAM_UAPI_VERSION */
	__u32 device;		/* in: N of /dev/hzramN */
	__u32 features;		/* in: wanted; out: granted (HZRAM_FEAT_*) */
	__u32 nr_batches;	/* batches the arenas hold */
	__u32 batch_pages;	/* most pages in one batch */
	__u64 ro_offset;	/* mmap offset of the read-only region */
	__u64 ro_size;		/* its bytes: descriptors, then staging */
	__u64 staging_offset;	/* byte offset of the staging arena in it */
	__u64 rw_offset;	/* mmap offset of the output arena */
	__u64 rw_size;		/* its bytes */
	__u64 reserved[2];	/* 0 */
};

/* A batch, as the kernel describes it in the read-only region. */
struct hzram_batch_desc {
	__u64 seq;		/* this use of the batch: COMMIT repeats it */
	__u32 nr_pages;		/* pages to encode or decode, 1..batch_pages */
	__u16 op;		/* enum hzram_batch_op */
	union {
		__s16 level;	/* HZRAM_OP_RECOMPRESS: the zstd level */
		__u16 flags;	/* the other ops: 0 (its name before
				 * HZRAM_OP_RECOMPRESS) */
	};
	__u64 staging_offset;	/* its first page, from the start of the
				 * staging arena */
	__u64 output_offset;	/* its output slot, from the start of the
				 * output arena: batch_pages records, then
				 * batch_pages * HZRAM_PAGE_SIZE bytes of data;
				 * record values are offsets in that data */
};

enum hzram_batch_op {
	HZRAM_OP_COMPRESS = 1,	/* encode nr_pages pages into records */
	HZRAM_OP_DECOMPRESS = 2,	/* decode nr_pages records into pages
					 * (HZRAM_FEAT_DECOMPRESS) */
	HZRAM_OP_RECOMPRESS = 3,	/* compress nr_pages pages with zstd
					 * (HZRAM_FEAT_RECOMPRESS) */
};

/* The 16 bytes of a HZRAM_CMD_* command in the SQE (sqe->cmd). */
struct hzram_cmd {
	__u32 batch;		/* COMMIT: the batch; FETCH: 0 */
	__u32 flags;		/* 0; reserved */
	__u64 seq;		/* COMMIT: the descriptor's seq; FETCH: 0 */
};

/* sqe->cmd_op of IORING_OP_URING_CMD on the control fd. */
enum hzram_cmd_op {
	HZRAM_CMD_FETCH = 1,	/* wait for a batch: res is its number */
	HZRAM_CMD_COMMIT = 2,	/* the batch's records are written */
};

#define HZRAM_IOC_MAGIC		0xb7
#define HZRAM_IOC_ATTACH	_IOWR(HZRAM_IOC_MAGIC, 1, struct hzram_attach)
#define HZRAM_IOC_DETACH	_IO(HZRAM_IOC_MAGIC, 2)

/*
 * The generic netlink family "hzram" (Documentation/uapi.rst): a dump of
 * every device, and events on the multicast group "events". Attributes
 * are only ever added, at the end; each side ignores the attributes it
 * does not know. The family lives in the initial network namespace.
 *
 * HZRAM_NL_CMD_GET_DEVICE: with HZRAM_NL_A_ID, that device (ENODEV if
 * there is none); as a dump (NLM_F_DUMP), every device, a message each.
 * HZRAM_NL_CMD_EVENT: sent on "events" only: HZRAM_NL_A_EVENT, with the
 * device's HZRAM_NL_A_ID and HZRAM_NL_A_NAME, and what the event names.
 * Nothing changes state through the family: sysfs does that.
 */
#define HZRAM_GENL_NAME		"hzram"
#define HZRAM_GENL_VERSION	1
#define HZRAM_GENL_MCGRP_EVENTS	"events"

enum hzram_nl_cmd {
	HZRAM_NL_CMD_UNSPEC,
	HZRAM_NL_CMD_GET_DEVICE,
	HZRAM_NL_CMD_EVENT,
	__HZRAM_NL_CMD_MAX,
};
#define HZRAM_NL_CMD_MAX	(__HZRAM_NL_CMD_MAX - 1)

/*
 * Attributes of a device. The statistics are nested: in each nest,
 * attribute type HZRAM_NL_STAT_FIRST + N holds field N (a __u64) of the
 * sysfs file of the same name (enum hzram_mm_stat_field,
 * hzram_io_stat_field, hzram_debug_stat_field, hzram_offload_stat_field);
 * HZRAM_NL_STAT_PAD pads where the architecture aligns 64-bit values.
 */
#define HZRAM_NL_STAT_PAD	1
#define HZRAM_NL_STAT_FIRST	2

enum hzram_nl_attr {
	HZRAM_NL_A_UNSPEC,
	HZRAM_NL_A_PAD,			/* padding of 64-bit attributes */
	HZRAM_NL_A_ID,			/* __u32: N of /dev/hzramN */
	HZRAM_NL_A_NAME,		/* string: "hzramN" */
	HZRAM_NL_A_DISKSIZE,		/* __u64: bytes; 0: not initialised */
	HZRAM_NL_A_COMP_ALGORITHM,	/* string: the selected algorithm */
	HZRAM_NL_A_MAX_COMP_STREAMS,	/* __u32 */
	HZRAM_NL_A_MEM_LIMIT,		/* __u64: bytes; 0: no limit */
	HZRAM_NL_A_MM_STAT,		/* nest: mm_stat */
	HZRAM_NL_A_IO_STAT,		/* nest: io_stat */
	HZRAM_NL_A_DEBUG_STAT,		/* nest: debug_stat */
	HZRAM_NL_A_OFFLOAD,		/* string: "off", "auto" or "on" */
	HZRAM_NL_A_OFFLOAD_STAT,	/* nest: offload_stat */
	HZRAM_NL_A_EVENT,		/* __u32: enum hzram_nl_event */
	HZRAM_NL_A_HELPER_PID,		/* __u32: the helper's process */
	HZRAM_NL_A_BD_STAT,		/* nest: bd_stat */
	HZRAM_NL_A_RECOMP_STAT,		/* nest: recomp_stat */
	__HZRAM_NL_A_MAX,
};
#define HZRAM_NL_A_MAX		(__HZRAM_NL_A_MAX - 1)

/* Fields of /sys/block/hzramN/bd_stat, in 4 KiB pages. */
enum hzram_bd_stat_field {
	HZRAM_BD_COUNT,			/* on the backing device now */
	HZRAM_BD_READS,			/* read from it */
	HZRAM_BD_WRITES,		/* written to it */
	HZRAM_BD_NR_FIELDS,
};

/* Fields of /sys/block/hzramN/recomp_stat, in pages. */
enum hzram_recomp_stat_field {
	HZRAM_RECOMP_PAGES,		/* held compressed by a recompression
					 * algorithm now (block_state r) */
	HZRAM_RECOMP_INCOMPRESSIBLE,	/* held marked incompressible now
					 * (block_state n) */
	HZRAM_RECOMP_TRIED,		/* compressed again since init, kept
					 * or not */
	HZRAM_RECOMP_NR_FIELDS,
};

/* Fields of /sys/block/hzramN/debug_stat's second line. */
enum hzram_debug_stat_field {
	HZRAM_DEBUG_WRITESTALL,		/* writes that waited for memory */
	HZRAM_DEBUG_MISS_FREE,		/* free notifications skipped: busy */
	HZRAM_DEBUG_NR_FIELDS,
};

/*
 * Events, with the attributes each carries besides HZRAM_NL_A_EVENT, _ID
 * and _NAME. Those of the write path are sent once a second at most per
 * device (the statistics count every one).
 */
enum hzram_nl_event {
	HZRAM_NL_EV_UNSPEC,
	HZRAM_NL_EV_DEVICE_ADDED,	/* hot_add, or loading the module */
	HZRAM_NL_EV_DEVICE_REMOVED,	/* hot_remove, or unloading it */
	HZRAM_NL_EV_INITIALISED,	/* disksize set: _DISKSIZE,
					 * _COMP_ALGORITHM */
	HZRAM_NL_EV_RESET,		/* reset, data dropped */
	HZRAM_NL_EV_MEM_LIMIT,		/* a write refused: mem_limit reached
					 * (_MEM_LIMIT); once a second at most */
	HZRAM_NL_EV_WRITE_FAILED,	/* a write request failed (_IO_STAT);
					 * once a second at most */
	HZRAM_NL_EV_HELPER_ATTACHED,	/* _HELPER_PID */
	HZRAM_NL_EV_HELPER_DETACHED,	/* _HELPER_PID: the helper detached,
					 * closed its file or died, or the
					 * device went away */
	HZRAM_NL_EV_HELPER_DIED,	/* _HELPER_PID: its process died while
					 * attached; _DETACHED follows */
	__HZRAM_NL_EV_MAX,
};
#define HZRAM_NL_EV_MAX		(__HZRAM_NL_EV_MAX - 1)

/* Sizes both sides check at build time. */
#define HZRAM_PAGE_RECORD_SIZE	16
#define HZRAM_ATTACH_SIZE	80
#define HZRAM_BATCH_DESC_SIZE	32
#define HZRAM_CMD_SIZE		16

#endif /* _UAPI_LINUX_HZRAM_H */
