/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hzram: private definitions of the compressed RAM block device.
 *
 * Every .c file of the module includes this header first.
 */
#ifndef _HZRAM_H
#define _HZRAM_H

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/blkdev.h>
#include <linux/local_lock.h>
#include <linux/lockdep.h>
#include <linux/mempool.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rwsem.h>
#include <linux/timekeeping.h>
#include <linux/types.h>
#include <uapi/linux/hzram.h>

#include <linux/kfifo.h>
#include <linux/workqueue.h>

#include "compat.h"

#define HZRAM_SECTOR_PAGE_SHIFT	(PAGE_SHIFT - SECTOR_SHIFT)
#define HZRAM_DEFAULT_COMP	"lz4"
/* Largest disksize: page indexes are 32-bit. */
#define HZRAM_MAX_PAGES		((u64)U32_MAX + 1)

/*
 * A slot describes one page of the device. Its flags word holds, in the
 * low HZRAM_SIZE_BITS, the stored size in bytes, and above them the bits
 * of enum hzram_slot_bit.
 */
#define HZRAM_SIZE_BITS		(PAGE_SHIFT + 1)
#define HZRAM_SIZE_MASK		((1UL << HZRAM_SIZE_BITS) - 1)

enum hzram_slot_bit {
	/* Sleepable lock: held while the slot is read, written or freed. */
	HZRAM_SLOT_LOCK = HZRAM_SIZE_BITS,
	/* Same-filled page: handle holds the repeated word, nothing allocated. */
	HZRAM_SLOT_SAME,
	/* Stored uncompressed: it did not compress below the huge class. */
	HZRAM_SLOT_HUGE,
	/*
	 * Staged for the helper (offload.c): the page is in the staging
	 * arena, in the cell whose number handle holds; nothing allocated.
	 */
	HZRAM_SLOT_STAGED,
	/*
	 * A compressed page whose checksum (of its 4 KiB, the low 32 bits
	 * of xxh64) is in the flags word's HZRAM_CSUM_SHIFT bits: taken
	 * while a helper that decodes is attached, so that the pages it
	 * decodes can be checked (offload.c).
	 */
	HZRAM_SLOT_CSUM,
	/*
	 * Neither read nor written since the last idle marking (sysfs idle,
	 * idle.c); never set on an unwritten or a same-filled slot.
	 */
	HZRAM_SLOT_IDLE,
	/*
	 * Written back (writeback.c): the page is on the backing device, in
	 * the block that handle holds, raw or, with compressed_writeback and
	 * not HUGE, as the size bytes of its compressed data; the checksum
	 * bits (HZRAM_CSUM_SHIFT) hold hzram_page_csum() of the block as
	 * written. HUGE stays set on a huge page written back, as in zram.
	 */
	HZRAM_SLOT_WB,
	/*
	 * Chosen by a writeback under way, which writes the page back only
	 * if the mark is still there when its block is written: every change
	 * of the slot (hzram_slot_set()) and every access clears it.
	 */
	HZRAM_SLOT_PP,
	/*
	 * No algorithm of the device stores the page in a smaller class:
	 * the last recompression algorithm tried and failed (recomp.c).
	 */
	HZRAM_SLOT_INCOMPRESSIBLE,
	/*
	 * Two bits: the priority of the algorithm the page is compressed
	 * with (recomp.c); 0, the primary, unless it was recompressed.
	 */
	HZRAM_SLOT_PRIO,
	HZRAM_SLOT_PRIO_END = HZRAM_SLOT_PRIO + 1,
	__HZRAM_SLOT_BITS,
};

/* comp_algorithm and the recomp_algorithm priorities, as zram's. */
#define HZRAM_MAX_COMPS		4
#define HZRAM_PRIO_MASK		(3UL << HZRAM_SLOT_PRIO)

#define HZRAM_CSUM_SHIFT	32
#if BITS_PER_LONG < 64
#error "hzram keeps checksums in the upper half of a slot's flags: 64-bit kernels only"
#endif

struct hzram_slot {
	unsigned long handle;	/* zsmalloc handle, the fill word if SAME,
				 * the staging cell if STAGED */
	unsigned long flags;	/* size (bytes) | BIT(enum hzram_slot_bit) */
	u32 ac_time;		/* seconds since boot (boottime) of the last
				 * read or write; 0 when freed */
};

/* Pages of a backing file, contiguous on its filesystem's device. */
struct hzram_bd_extent {
	unsigned long page;		/* the first page of the file */
	unsigned long nr;		/* pages */
	sector_t sector;		/* where the first is on the device */
};

/* The backing device of a device (writeback.c): a block device or a file. */
struct hzram_bd {
	/*
	 * A block device, opened O_EXCL: nobody else writes it. A file, held
	 * as swap holds its files (S_SWAPFILE): not written, truncated,
	 * moved or removed by anyone else while hzram has it.
	 */
	struct file *file;
	struct block_device *bdev;	/* the device, or the file's fs's */
	struct inode *inode;		/* a file: its inode; NULL otherwise */
	struct hzram_bd_extent *ext;	/* a file: where its pages are */
	unsigned int nr_ext;
	unsigned long nr_blocks;	/* pages it holds */
	unsigned long *bitmap;		/* blocks in use */
	unsigned long next;		/* where to look for a free one */
	mempool_t *pages;		/* bounce pages for reads of blocks */
};

/*
 * Pages chosen for writeback or recompression (pp.c): stacks of
 * page-sized chunks of slot indexes, one per 64-byte size bucket.
 */
#define HZRAM_PP_BUCKET_BYTES	64
#define HZRAM_PP_BUCKETS	(PAGE_SIZE / HZRAM_PP_BUCKET_BYTES + 1)

struct hzram_pp_chunk {
	struct hzram_pp_chunk *prev;
	unsigned int n;
	u32 index[];
};

#define HZRAM_PP_CHUNK_SLOTS \
	((PAGE_SIZE - sizeof(struct hzram_pp_chunk)) / sizeof(u32))

struct hzram_pp {
	struct hzram_pp_chunk *top[HZRAM_PP_BUCKETS];
	/*
	 * A chunk allocated before a slot lock is taken: no allocation that
	 * may reclaim (and so swap out to this device) under a slot lock.
	 */
	struct hzram_pp_chunk *spare;
	unsigned long count;	/* pages chosen and not popped */
};

/* An encoded page on its way into a slot (io.c). */
struct hzram_enc {
	unsigned long handle;	/* zsmalloc object; 0: a same-filled page */
	unsigned int len;	/* bytes in the object; PAGE_SIZE: raw */
	unsigned long word;	/* the fill word when handle is 0 */
	bool has_csum;		/* compressed, and csum taken */
	u32 csum;		/* hzram_page_csum() of the page */
};

/*
 * The round-trip histogram: 0..3 us one bucket each, then four buckets
 * per power of two, up to 2^32 us.
 */
#define HZRAM_RTT_BUCKETS	128

/* Counters behind mm_stat, io_stat and debug_stat. */
struct hzram_stats {
	atomic64_t pages_stored;	/* pages held, same-filled included */
	atomic64_t compr_data_size;	/* bytes of compressed data held */
	atomic64_t same_pages;		/* pages held as a fill word */
	atomic64_t huge_pages;		/* pages held uncompressed */
	atomic64_t huge_pages_since;	/* pages stored uncompressed since init */
	atomic64_t failed_reads;	/* read requests that failed */
	atomic64_t failed_writes;	/* write requests that failed */
	atomic64_t invalid_io;		/* requests outside the device */
	atomic64_t notify_free;		/* swap_slot_free_notify calls */
	atomic64_t miss_free;		/* notifications skipped: slot was busy */
	atomic64_t writestall;		/* allocations that had to reclaim */
	atomic64_t bd_count;		/* pages on the backing device now */
	atomic64_t bd_reads;		/* pages read from it */
	atomic64_t bd_writes;		/* pages written to it */
	atomic64_t recomp_pages;	/* slots with a priority above 0 now */
	atomic64_t incompressible;	/* slots marked incompressible now */
	atomic64_t recomp_tried;	/* pages recompression compressed */
	atomic_long_t max_used_pages;	/* peak of zs_get_total_pages() */
	/* offload_stat: enum hzram_offload_stat_field, from HZRAM_OFF_STAGED */
	atomic64_t offload[HZRAM_OFF_NR_FIELDS];
	/* Batch round trips in microseconds (hzram_rtt_bucket()). */
	atomic64_t rtt[HZRAM_RTT_BUCKETS];
};

/* How hzram_encode() may allocate, and what it may refuse (io.c). */
enum hzram_enc_mode {
	HZRAM_ENC_WRITE,	/* a write: may wait for memory; mem_limit holds */
	HZRAM_ENC_SWAP,		/* a swap-out: never waits; mem_limit holds */
	/*
	 * A staged page, whose write has completed: stored whatever it
	 * takes (past mem_limit, waiting for memory, raw if the compressor
	 * fails), because nothing else holds its data.
	 */
	HZRAM_ENC_STAGED,
	/*
	 * A staged swap-out: as HZRAM_ENC_STAGED, and first from part of the
	 * memory reserves (__GFP_HIGH) rather than by reclaim.
	 */
	HZRAM_ENC_STAGED_SWAP,
};

/* What became of a staged page (hzram_store_staged()). */
enum hzram_store_result {
	HZRAM_STORED_HELPER,	/* stored as the helper encoded it */
	HZRAM_STORED_KERNEL,	/* compressed by the module and stored */
	HZRAM_STORED_STALE,	/* the slot holds newer data: nothing stored */
};

struct hzram_offload;

/* sysfs offload. */
enum hzram_offload_mode {
	HZRAM_OFFLOAD_OFF,	/* the helper is given nothing */
	HZRAM_OFFLOAD_AUTO,	/* writes; reads while measured faster */
	HZRAM_OFFLOAD_ON,	/* writes; every read large enough */
};

/* Offload settings of a device (sysfs offload_*). */
struct hzram_offload_params {
	unsigned int batch_pages;	/* pages per batch; fixed at attach */
	unsigned int flush_us;		/* a batch waits at most this long */
	unsigned int min_pages;		/* smaller batches stay in the kernel */
	unsigned int timeout_ms;	/* the helper's time for a batch */
	unsigned int read_min_pages;	/* smaller reads are not sent; 0:
					 * none is */
	bool verify;			/* check the helper's pages */
	enum hzram_offload_mode mode;	/* sysfs offload */
};

/*
 * A compression stream: an algorithm's working memory and buffers, one
 * per CPU, as in zram. Compression takes the current CPU's stream under
 * lock, a local lock: preemption stays off while the stream is held, so
 * the holder must not sleep, and the CPU cannot go away under it.
 * Decompression uses the current CPU's decompression state under dlock:
 * it is kept apart from the compression state, so the two never disturb
 * each other (on PREEMPT_RT, where local locks are per-CPU sleeping
 * locks, they do not wait for each other either).
 */
struct hzram_strm {
	local_lock_t lock;		/* compression: cctx, buffer, scratch */
	local_lock_t dlock;		/* decompression: dctx, dcopy */
	const struct hzram_comp *comp;	/* whose stream it is */
	void *cmem, *cctx;		/* the compressor's memory, context */
	void *buffer;			/* 2 * PAGE_SIZE: compressor output */
	void *scratch;			/* PAGE_SIZE: a sub-page read decodes here */
	void *dmem, *dctx;		/* the decompressor's, if it needs any */
	void *dcopy;			/* PAGE_SIZE: an object that spans pages */
};

struct hzram_backend;

#define HZRAM_ALG_NAME_MAX	64

struct hzram_comp {
	struct hzram_strm __percpu *strm;
	struct hlist_node node;		/* CPU hotplug instance */
	const struct hzram_backend *backend;
	int level;			/* the one in use: never unset */
	void *dict;			/* a copy of algorithm_params' dict */
	size_t dict_sz;			/* 0: none */
	void *dict_data;		/* what the backend made of it */
	char name[HZRAM_ALG_NAME_MAX];
};

/* algorithm_params of one priority (recomp.c). */
#define HZRAM_LEVEL_UNSET	INT_MIN
struct hzram_comp_params {
	int level;			/* HZRAM_LEVEL_UNSET: the default */
	void *dict;			/* vmalloc()ed file content, or NULL */
	size_t dict_sz;
};

/* A queued netlink event (netlink.c). */
struct hzram_nl_ev {
	u32 event;			/* enum hzram_nl_event */
	char alg[12];			/* INITIALISED: the algorithm */
	u64 value;			/* disksize, mem_limit or a pid */
	u64 io[HZRAM_IO_NR_FIELDS];	/* WRITE_FAILED: io_stat */
};

#define HZRAM_NL_QUEUE	8	/* events queued per device, a power of 2 */

struct hzram {
	/* Set up by disksize_store(), torn down by reset; under init_lock. */
	struct hzram_slot *table;	/* one per page, each under its own lock */
	struct zs_pool *mem_pool;
	struct hzram_comp *comp;
	/*
	 * The recompression algorithms, by priority (1 to 3; 0 is comp's
	 * place): NULL where recomp_algorithm set none.
	 */
	struct hzram_comp *recomp[HZRAM_MAX_COMPS];
	/* Bytes; 0 until initialised. Set last, with release semantics. */
	u64 disksize;
	size_t huge_class_size;		/* bytes; larger pages are stored raw */
	/* What lockdep knows of the slot locks (one class for all). */
	struct lockdep_map slot_dep_map;

	/* Protects the fields above against sysfs; I/O needs no lock. */
	struct rw_semaphore init_lock;
	unsigned long limit_pages;	/* mem_limit in pages; 0: no limit */
	char comp_algorithm[HZRAM_ALG_NAME_MAX];	/* used at next init */
	/* recomp_algorithm, by priority (0 unused): "" where none. */
	char recomp_algorithm[HZRAM_MAX_COMPS][HZRAM_ALG_NAME_MAX];
	/* algorithm_params, by priority (0: comp_algorithm's). */
	struct hzram_comp_params params[HZRAM_MAX_COMPS];
	struct hzram_stats stats;

	/*
	 * The helper attached to this device, if any: changed under
	 * hzram_offload_mutex and init_lock (for writing) together.
	 */
	struct hzram_offload *off;
	/*
	 * Set while writes are staged for the helper (attached, initialised,
	 * lz4): RCU, for the write path.
	 */
	struct hzram_offload __rcu *off_io;
	/* The staging arena, while any slot may be STAGED. */
	void *staging;
	/* A helper is attached, the device initialised with another algorithm. */
	bool off_not_lz4;
	/* Checksum compressed pages: the attached helper decodes reads. */
	bool read_csum;
	struct hzram_offload_params offp;
	/*
	 * offload auto: ns per page of large reads, decoded in the kernel
	 * and by the helper (moving averages; 0: not measured), and the
	 * large reads seen (every HZRAM_READ_PROBE-th goes to the helper).
	 */
	u64 read_ns_kernel;
	u64 read_ns_helper;
	atomic_t read_probe;

	/* Netlink events not yet sent, and when the write path may next. */
	spinlock_t nl_lock;
	DECLARE_KFIFO(nl_queue, struct hzram_nl_ev, HZRAM_NL_QUEUE);
	struct work_struct nl_work;
	unsigned long nl_next[2];	/* jiffies: WRITE_FAILED, MEM_LIMIT */

	/*
	 * The backing device (sysfs backing_dev): set and dropped under
	 * init_lock for writing, while the device is not initialised, so
	 * that it stays while there is data; NULL: none.
	 */
	struct hzram_bd *bd;
	/*
	 * One writeback or recompression at a time (pp.c); taken inside
	 * init_lock (read).
	 */
	struct mutex pp_mutex;
	/* writeback_limit (in 4 KiB pages) and writeback_limit_enable. */
	spinlock_t wb_limit_lock;
	u64 wb_limit;
	bool wb_limit_enable;
	/* Writes to the backing device in flight at once (sysfs). */
	unsigned int wb_batch_size;
	/* Write back compressed data; under init_lock, set only uninitialised. */
	bool compressed_wb;

	struct gendisk *disk;
	/* debugfs hzram/<disk>/ (block_state); NULL without debugfs. */
	struct dentry *debugfs_dir;
	/* Reset or removal in progress: opens fail. Under disk->open_mutex. */
	bool claim;
	bool removing;
	int id;
};

/*
 * A slot's lock is held, as far as lockdep can tell: one map stands for
 * every slot lock of a device. hzram_assert_slot_owned(): or the whole
 * table is being torn down, under init_lock held for writing.
 */
#define hzram_assert_slot_locked(hz) \
	lockdep_assert(lock_is_held(&(hz)->slot_dep_map))
#define hzram_assert_slot_owned(hz) \
	lockdep_assert(lock_is_held(&(hz)->slot_dep_map) || \
		       lockdep_is_held_type(&(hz)->init_lock, 0))

/*
 * Slot @index's idle mark; the slot lock is held. The lock holder alone
 * changes the flags but for the lock bit, which stays set meanwhile.
 */
static inline void hzram_slot_mark_idle(struct hzram *hz, u32 index, bool idle)
{
	struct hzram_slot *slot = &hz->table[index];

	hzram_assert_slot_locked(hz);
	if (idle)
		WRITE_ONCE(slot->flags, slot->flags | BIT(HZRAM_SLOT_IDLE));
	else
		WRITE_ONCE(slot->flags, slot->flags & ~BIT(HZRAM_SLOT_IDLE));
}

/*
 * Slot @index was read or written: not idle, accessed now, and no longer
 * to be written back by a writeback that chose it (as in zram). Lock held.
 */
static inline void hzram_slot_accessed(struct hzram *hz, u32 index)
{
	struct hzram_slot *slot = &hz->table[index];

	hzram_assert_slot_locked(hz);
	WRITE_ONCE(slot->flags, slot->flags &
		   ~(BIT(HZRAM_SLOT_IDLE) | BIT(HZRAM_SLOT_PP)));
	slot->ac_time = (u32)ktime_get_boottime_seconds();
}

/* The streams that decode slot @index, by its priority; lock held. */
static inline struct hzram_comp *hzram_slot_comp(struct hzram *hz, u32 index)
{
	unsigned long prio = (hz->table[index].flags & HZRAM_PRIO_MASK) >>
			     HZRAM_SLOT_PRIO;

	hzram_assert_slot_owned(hz);
	return prio ? hz->recomp[prio] : hz->comp;
}

static inline bool hzram_init_done(struct hzram *hz)
{
	return hz->disksize != 0;
}

static inline struct hzram *dev_to_hzram(struct device *dev)
{
	return dev_to_disk(dev)->private_data;
}

/* comp.c */
int hzram_comp_init(void);
void hzram_comp_exit(void);
bool hzram_comp_available(const char *name);
int hzram_comp_check(const char *name, const struct hzram_comp_params *params);
bool hzram_comp_helper_lz4(const struct hzram_comp *comp);
bool hzram_comp_helper_zstd(const struct hzram_comp *comp, s16 *level);
ssize_t hzram_comp_available_show(const char *cur, char *buf, ssize_t sz);
struct hzram_comp *hzram_comp_create(const char *name,
				     const struct hzram_comp_params *params);
void hzram_comp_destroy(struct hzram_comp *comp);
struct hzram_strm *hzram_strm_get(struct hzram_comp *comp);
void hzram_strm_put(struct hzram_comp *comp);
int hzram_comp_compress(struct hzram_strm *strm, const void *src,
			unsigned int *dst_len);
int hzram_comp_decompress(struct hzram_comp *comp, const void *src,
			  unsigned int src_len, void *dst);
int hzram_comp_decompress_obj(struct hzram_comp *comp, struct zs_pool *pool,
			      unsigned long handle, unsigned int len, void *dst);

/* io.c */
void hzram_submit_bio(struct bio *bio);
u32 hzram_page_csum(const void *page);
unsigned int hzram_read_snapshot(struct hzram *hz, u32 index, void *dst,
				 unsigned int room, u32 *csum, bool *has_csum);
int hzram_read_page(struct hzram *hz, u32 index, void *dst);
#ifdef HZRAM_HAVE_RW_PAGE
int hzram_rw_page(struct hzram *hz, sector_t sector, struct page *page,
		  bool write);
#endif
void hzram_slot_lock(struct hzram *hz, u32 index);
void hzram_slot_unlock(struct hzram *hz, u32 index);
int hzram_meta_alloc(struct hzram *hz, u64 disksize);
void hzram_meta_free(struct hzram *hz, u64 disksize);
void hzram_slot_free_notify(struct block_device *bdev, unsigned long index);
enum hzram_store_result hzram_store_staged(struct hzram *hz, u32 index,
					   unsigned long cell, const void *page,
					   const struct hzram_page_record *rec,
					   const void *data, void *scratch,
					   bool swap, bool *refused);
void hzram_stage_install(struct hzram *hz, u32 index, unsigned long cell);
int hzram_wb_source(struct hzram *hz, u32 index, void *dst, bool compressed);
bool hzram_wb_install(struct hzram *hz, u32 index, unsigned long blk,
		      u32 csum);
int hzram_recompress_slot(struct hzram *hz, u32 index, u32 prio,
			  unsigned int threshold, bool last, void *buf);
int hzram_recomp_stage(struct hzram *hz, u32 index, unsigned int threshold,
		       void *page);
int hzram_recomp_install(struct hzram *hz, u32 index, u32 prio,
			 unsigned int threshold, bool last, const void *obj,
			 unsigned int len);

/* pp.c: the pages a writeback or a recompression chose. */
bool hzram_pp_reserve(struct hzram_pp *pp);
void hzram_pp_push(struct hzram *hz, struct hzram_pp *pp, u32 index,
		   unsigned long flags);
bool hzram_pp_pop(struct hzram_pp *pp, u32 *index);
void hzram_pp_unmark(struct hzram *hz, u32 index);
void hzram_pp_release(struct hzram *hz, struct hzram_pp *pp);

/* recomp.c: recomp_algorithm, recompress, algorithm_params (sysfs). */
void hzram_recomp_device_init(struct hzram *hz);
void hzram_params_reset(struct hzram *hz, u32 prio);
int hzram_recomp_create(struct hzram *hz);
void hzram_recomp_destroy(struct hzram *hz);
extern const struct attribute_group hzram_recomp_group;

/* idle.c: idle marking (sysfs idle) and debugfs hzram/<disk>/block_state. */
int hzram_mark_idle(struct hzram *hz, const char *buf);
void hzram_debugfs_init(void);
void hzram_debugfs_exit(void);
void hzram_debugfs_add(struct hzram *hz);
void hzram_debugfs_remove(struct hzram *hz);
extern struct dentry *hzram_debugfs_root;

/* writeback.c: the backing device and writeback (sysfs). */
int hzram_wb_init(void);
void hzram_wb_exit(void);
void hzram_wb_device_init(struct hzram *hz);
int hzram_bd_set(struct hzram *hz, const char *path);
void hzram_bd_drop(struct hzram *hz);
void hzram_bd_release(struct hzram *hz, unsigned long blk);
int hzram_bd_read(struct hzram *hz, u32 index, unsigned int off, void *dst,
		  unsigned int len);
extern const struct attribute_group hzram_wb_group;

/* offload*.c: the helper (hzramd). */
int hzram_offload_init(void);
void hzram_offload_exit(void);
int hzram_ctl_register(void);
void hzram_ctl_unregister(void);
void hzram_offload_params_init(struct hzram_offload_params *p);
bool hzram_offload_stage(struct hzram *hz, u32 index, const void *src,
			 bool swap);
void hzram_offload_start(struct hzram *hz);
void hzram_offload_stop(struct hzram *hz);
void hzram_offload_unlink(struct hzram *hz);
bool hzram_offload_attached(struct hzram *hz);
bool hzram_offload_read(struct hzram *hz, struct bio *bio, unsigned long start);
int hzram_offload_recompress(struct hzram *hz, struct hzram_pp *pp, u32 prio,
			     unsigned int threshold, bool last, u64 *max_pages,
			     void *buf);
void hzram_read_measure(struct hzram *hz, u64 ns, unsigned int pages);
u64 hzram_offload_rtt(struct hzram *hz, unsigned int pct);
extern struct mutex hzram_offload_mutex;

/*
 * fault.c: fault injection, in modules built with HZRAM_FAULT_INJECTION=y
 * (the tests' builds), its knobs in debugfs hzram/. Delay points hold a path at a chosen place for a
 * while, so that tests can make another event happen right there
 * (/sys/kernel/debug/hzram/delay_<point>); allocations that may not
 * reclaim find memory short on demand (short_nowait_times); the
 * compressor and the decompressor fail on demand where the kernel has
 * fault injection.
 */
enum hzram_delay_point {
	HZRAM_DELAY_PUT,		/* a batch's last ref, about to go */
	HZRAM_DELAY_ATTACH,		/* sized a helper's arenas, not linked */
	HZRAM_DELAY_UNLINK,		/* hot_remove found the device's helper */
	HZRAM_DELAY_FAIL_FETCHES,	/* detached, FETCHes not failed yet */
	HZRAM_DELAY_COMMIT,		/* a commit owns its batch, not stored */
	HZRAM_DELAY_KWORK,		/* kwork stored a batch, looks for more */
	HZRAM_NR_DELAYS,
};

#ifdef HZRAM_FAULT_INJECTION
void hzram_delay(enum hzram_delay_point point);
bool hzram_short_nowait(void);
void hzram_fault_init(void);
#else
static inline void hzram_delay(enum hzram_delay_point point) { }
static inline bool hzram_short_nowait(void) { return false; }
static inline void hzram_fault_init(void) { }
#endif
#if defined(HZRAM_FAULT_INJECTION) && defined(CONFIG_FAULT_INJECTION_DEBUG_FS)
bool hzram_fail_compress(void);
bool hzram_fail_decompress(void);
#else
static inline bool hzram_fail_compress(void) { return false; }
static inline bool hzram_fail_decompress(void) { return false; }
#endif

/* main.c */
extern struct mutex hzram_index_mutex;
struct hzram *hzram_find(int id);
struct hzram *hzram_find_next(int *id);
bool hzram_is_hzram_disk(struct gendisk *disk);

/* sysfs.c */
extern const struct attribute_group *hzram_disk_groups[];
void hzram_reset_device(struct hzram *hz);
extern const char *const hzram_offload_modes[];	/* enum hzram_offload_mode */
void hzram_mm_stat(struct hzram *hz, u64 v[HZRAM_MM_NR_FIELDS]);
void hzram_io_stat(struct hzram *hz, u64 v[HZRAM_IO_NR_FIELDS]);
void hzram_debug_stat(struct hzram *hz, u64 v[HZRAM_DEBUG_NR_FIELDS]);
void hzram_offload_stat(struct hzram *hz, u64 v[HZRAM_OFF_NR_FIELDS]);
void hzram_bd_stat(struct hzram *hz, u64 v[HZRAM_BD_NR_FIELDS]);
void hzram_recomp_stat(struct hzram *hz, u64 v[HZRAM_RECOMP_NR_FIELDS]);

/* netlink.c */
int hzram_nl_init(void);
void hzram_nl_exit(void);
void hzram_nl_device_init(struct hzram *hz);
void hzram_nl_device_removed(struct hzram *hz);
void hzram_nl_event(struct hzram *hz, enum hzram_nl_event event, u64 value);

#endif /* _HZRAM_H */
