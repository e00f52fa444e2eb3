// SPDX-License-Identifier: GPL-2.0
/*
 * hzram data path: sub-page I/O, same-filled and huge pages, mm_stat
 * accounting, discard and write-zeroes, mem_limit, concurrency.
 *
 * Needs the hzram module loaded. Each test creates its own device through
 * hot_add and removes it afterwards; all I/O is O_DIRECT, so what is read
 * back comes from the device, not the page cache.
 */
#include "hzram_test.h"

#include <pthread.h>

#include "kselftest_harness.h"

FIXTURE(dev) {
	int id;
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = -1;
	self->id = hot_add();
	ASSERT_LE(0, self->id);
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
	EXPECT_EQ(0, hot_remove(self->id));
}

/* Initialise the fixture's device with @size and open it O_DIRECT. */
#define DEV_INIT(size) do {						\
	ASSERT_EQ(0, attr_write(self->id, "disksize", size));		\
	self->fd = dev_open(self->id, O_RDWR | O_DIRECT);		\
	ASSERT_LE(0, self->fd);						\
} while (0)

#define MM(field) ({							\
	uint64_t __mm[HZRAM_MM_NR_FIELDS];				\
	ASSERT_EQ(0, mm_stat(self->id, __mm));				\
	__mm[HZRAM_MM_##field];						\
})

TEST_F(dev, subpage_writes)
{
	const size_t len = 16 * PAGE;
	char *model = page_alloc(16), *io = page_alloc(16), *got = page_alloc(16);
	uint64_t s = 42;
	int i;

	ASSERT_NE(NULL, model);
	DEV_INIT("1M");
	rnd_fill(model, len, 7);
	ASSERT_EQ(0, pio(self->fd, model, len, 0, 1));

	/* Random 512-byte-aligned writes of 1..24 sectors, anywhere. */
	for (i = 0; i < 2000; i++) {
		size_t sectors = 1 + rnd_next(&s) % 24;
		size_t max = len / 512 - sectors;
		off_t off = (rnd_next(&s) % (max + 1)) * 512;

		rnd_fill(io, sectors * 512, rnd_next(&s));
		ASSERT_EQ(0, pio(self->fd, io, sectors * 512, off, 1)) TH_LOG("off %jd", (intmax_t)off);
		memcpy(model + off, io, sectors * 512);
	}
	ASSERT_EQ(0, pio(self->fd, got, len, 0, 0));
	EXPECT_EQ(0, memcmp(model, got, len));

	/* Sub-page reads at every sector offset. */
	for (i = 0; i < 8 * 15; i++) {
		ASSERT_EQ(0, pio(self->fd, got, 1024, i * 512, 0));
		EXPECT_EQ(0, memcmp(model + i * 512, got, 1024)) TH_LOG("sector %d", i);
	}
	EXPECT_EQ(16 * PAGE, MM(ORIG_DATA_SIZE));
	free(model);
	free(io);
	free(got);
}

TEST_F(dev, write_straddling_pages)
{
	char *buf = page_alloc(4), *got = page_alloc(4), *zero = page_alloc(1);

	DEV_INIT("1M");
	text_fill(buf, 3 * PAGE, 3);
	/* 8 KiB at 512 bytes in: the end of page 0, page 1, the start of page 2. */
	ASSERT_EQ(0, pio(self->fd, buf, 2 * PAGE, 512, 1));
	ASSERT_EQ(0, pio(self->fd, got, 4 * PAGE, 0, 0));
	EXPECT_EQ(0, memcmp(zero, got, 512));
	EXPECT_EQ(0, memcmp(buf, got + 512, 2 * PAGE));
	EXPECT_EQ(0, memcmp(zero, got + 2 * PAGE + 512, PAGE - 512));
	free(zero);
	EXPECT_EQ(3 * PAGE, MM(ORIG_DATA_SIZE));
	free(buf);
	free(got);
}

TEST_F(dev, same_filled_pages)
{
	static const uint64_t words[] = {
		0, ~0ULL, 0x0123456789abcdefULL, 0x5a5a5a5a5a5a5a5aULL,
	};
	const int per = 32, n = 4 * per;
	uint64_t *buf = page_alloc(n), *got = page_alloc(n);
	int i, j;

	DEV_INIT("1M");
	for (i = 0; i < n; i++)
		for (j = 0; j < PAGE / 8; j++)
			buf[i * PAGE / 8 + j] = words[i / per];
	ASSERT_EQ(0, pio(self->fd, buf, n * PAGE, 0, 1));
	EXPECT_EQ(n, MM(SAME_PAGES));
	EXPECT_EQ(n * PAGE, MM(ORIG_DATA_SIZE));
	EXPECT_EQ(0, MM(COMPR_DATA_SIZE));
	EXPECT_EQ(0, MM(HUGE_PAGES));
	/* Nothing is allocated for them. */
	EXPECT_EQ(0, MM(MEM_USED_TOTAL));
	ASSERT_EQ(0, pio(self->fd, got, n * PAGE, 0, 0));
	EXPECT_EQ(0, memcmp(buf, got, n * PAGE));

	/* Overwriting one with data moves it out of same_pages. */
	rnd_fill(buf, PAGE, 9);
	ASSERT_EQ(0, pio(self->fd, buf, PAGE, 0, 1));
	EXPECT_EQ(n - 1, MM(SAME_PAGES));
	EXPECT_EQ(n * PAGE, MM(ORIG_DATA_SIZE));
	free(buf);
	free(got);
}

TEST_F(dev, huge_pages)
{
	const int n = 64;
	char *buf = page_alloc(n), *got = page_alloc(n);

	DEV_INIT("1M");
	rnd_fill(buf, n * PAGE, 11);
	ASSERT_EQ(0, pio(self->fd, buf, n * PAGE, 0, 1));
	EXPECT_EQ(n, MM(HUGE_PAGES));
	EXPECT_EQ(n, MM(HUGE_PAGES_SINCE));
	EXPECT_EQ(n * PAGE, MM(COMPR_DATA_SIZE));
	EXPECT_LE(n * PAGE, MM(MEM_USED_TOTAL));
	ASSERT_EQ(0, pio(self->fd, got, n * PAGE, 0, 0));
	EXPECT_EQ(0, memcmp(buf, got, n * PAGE));

	/* Compressible now: no longer huge, but huge_pages_since remembers. */
	text_fill(buf, n * PAGE, 12);
	ASSERT_EQ(0, pio(self->fd, buf, n * PAGE, 0, 1));
	EXPECT_EQ(0, MM(HUGE_PAGES));
	EXPECT_EQ(n, MM(HUGE_PAGES_SINCE));
	EXPECT_GT(n * PAGE / 2, MM(COMPR_DATA_SIZE));
	ASSERT_EQ(0, pio(self->fd, got, n * PAGE, 0, 0));
	EXPECT_EQ(0, memcmp(buf, got, n * PAGE));
	free(buf);
	free(got);
}

TEST_F(dev, mm_stat_accounting)
{
	const int n = 300;
	char *buf = page_alloc(n);
	uint64_t mm[HZRAM_MM_NR_FIELDS], again[HZRAM_MM_NR_FIELDS];
	int i, same = 0, huge = 0;

	DEV_INIT("4M");
	/* Pages 0..299: a third same-filled, a third random, a third text. */
	for (i = 0; i < n; i++) {
		char *p = buf + i * PAGE;

		switch (i % 3) {
		case 0: memset(p, i & 0xff, PAGE); same++; break;
		case 1: rnd_fill(p, PAGE, i); huge++; break;
		default: text_fill(p, PAGE, i); break;
		}
	}
	ASSERT_EQ(0, pio(self->fd, buf, n * PAGE, 0, 1));
	ASSERT_EQ(0, mm_stat(self->id, mm));
	EXPECT_EQ((uint64_t)n * PAGE, mm[HZRAM_MM_ORIG_DATA_SIZE]);
	EXPECT_EQ(same, mm[HZRAM_MM_SAME_PAGES]);
	EXPECT_EQ(huge, mm[HZRAM_MM_HUGE_PAGES]);
	/* Huge pages count in full, text pages compress. */
	EXPECT_LT((uint64_t)huge * PAGE, mm[HZRAM_MM_COMPR_DATA_SIZE]);
	EXPECT_GT((uint64_t)huge * PAGE + (n - same - huge) * PAGE / 2,
		  mm[HZRAM_MM_COMPR_DATA_SIZE]);
	EXPECT_LE(mm[HZRAM_MM_COMPR_DATA_SIZE], mm[HZRAM_MM_MEM_USED_TOTAL]);
	EXPECT_EQ(mm[HZRAM_MM_MEM_USED_TOTAL], mm[HZRAM_MM_MEM_USED_MAX]);

	/* Rewriting the same data changes nothing. */
	ASSERT_EQ(0, pio(self->fd, buf, n * PAGE, 0, 1));
	ASSERT_EQ(0, mm_stat(self->id, again));
	EXPECT_EQ(mm[HZRAM_MM_ORIG_DATA_SIZE], again[HZRAM_MM_ORIG_DATA_SIZE]);
	EXPECT_EQ(mm[HZRAM_MM_COMPR_DATA_SIZE], again[HZRAM_MM_COMPR_DATA_SIZE]);
	EXPECT_EQ(mm[HZRAM_MM_SAME_PAGES], again[HZRAM_MM_SAME_PAGES]);
	EXPECT_EQ(mm[HZRAM_MM_HUGE_PAGES], again[HZRAM_MM_HUGE_PAGES]);
	EXPECT_EQ(2 * huge, again[HZRAM_MM_HUGE_PAGES_SINCE]);
	free(buf);
}

TEST_F(dev, discard_frees_memory)
{
	const int n = 512;
	char *buf = page_alloc(n), *got = page_alloc(n);
	uint64_t used;
	int i;

	DEV_INIT("4M");
	for (i = 0; i < n; i++)
		text_fill(buf + i * PAGE, PAGE, i + 1000);
	ASSERT_EQ(0, pio(self->fd, buf, n * PAGE, 0, 1));
	used = MM(MEM_USED_TOTAL);
	EXPECT_LT(0, used);

	ASSERT_EQ(0, ioctl(self->fd, BLKDISCARD, (uint64_t[]){ 0, (uint64_t)n * PAGE }));
	EXPECT_EQ(0, MM(ORIG_DATA_SIZE));
	EXPECT_EQ(0, MM(COMPR_DATA_SIZE));
	EXPECT_GT(used, MM(MEM_USED_TOTAL));
	ASSERT_EQ(0, pio(self->fd, got, n * PAGE, 0, 0));
	for (i = 0; i < n; i++)
		ASSERT_EQ(1, page_same_filled(got + i * PAGE) && got[i * PAGE] == 0);
	free(buf);
	free(got);
}

TEST_F(dev, discard_partial_pages_keep_data)
{
	char *buf = page_alloc(4), *got = page_alloc(4);

	DEV_INIT("1M");
	text_fill(buf, 4 * PAGE, 5);
	ASSERT_EQ(0, pio(self->fd, buf, 4 * PAGE, 0, 1));
	/* From 512 bytes into page 0 to 512 bytes into page 3. */
	ASSERT_EQ(0, ioctl(self->fd, BLKDISCARD, (uint64_t[]){ 512, 3 * PAGE }));
	EXPECT_EQ(2 * PAGE, MM(ORIG_DATA_SIZE));
	ASSERT_EQ(0, pio(self->fd, got, 4 * PAGE, 0, 0));
	EXPECT_EQ(0, memcmp(buf, got, PAGE));
	EXPECT_EQ(1, page_same_filled(got + PAGE) && got[PAGE] == 0);
	EXPECT_EQ(1, page_same_filled(got + 2 * PAGE) && got[2 * PAGE] == 0);
	EXPECT_EQ(0, memcmp(buf + 3 * PAGE, got + 3 * PAGE, PAGE));
	free(buf);
	free(got);
}

TEST_F(dev, write_zeroes)
{
	char *buf = page_alloc(4), *got = page_alloc(4);

	DEV_INIT("1M");
	text_fill(buf, 4 * PAGE, 6);
	ASSERT_EQ(0, pio(self->fd, buf, 4 * PAGE, 0, 1));
	/* Zero from 512 bytes into page 0 to 1 KiB into page 3. */
	ASSERT_EQ(0, ioctl(self->fd, BLKZEROOUT,
			   (uint64_t[]){ 512, 3 * PAGE + 512 }));
	memset(buf + 512, 0, 3 * PAGE + 512);
	ASSERT_EQ(0, pio(self->fd, got, 4 * PAGE, 0, 0));
	EXPECT_EQ(0, memcmp(buf, got, 4 * PAGE));
	free(buf);
	free(got);
}

TEST_F(dev, mem_limit_fails_writes_cleanly)
{
	const int n = 1024;
	char *buf = page_alloc(n), *got = page_alloc(n);
	uint64_t io[HZRAM_IO_NR_FIELDS];
	int i, written = -1;

	DEV_INIT("8M");
	ASSERT_EQ(0, attr_write(self->id, "mem_limit", "1M"));
	rnd_fill(buf, n * PAGE, 77);
	for (i = 0; i < n; i++) {
		int ret = pio(self->fd, buf + i * PAGE, PAGE, (off_t)i * PAGE, 1);

		if (ret) {
			EXPECT_EQ(-EIO, ret);
			written = i;
			break;
		}
	}
	/* About 1 MiB of incompressible pages fit, then writes fail. */
	ASSERT_LT(200, written);
	EXPECT_GE(256, written);
	EXPECT_GE(1 << 20, MM(MEM_USED_TOTAL));
	ASSERT_EQ(0, io_stat(self->id, io));
	EXPECT_EQ(1, io[HZRAM_IO_FAILED_WRITES]);
	EXPECT_EQ(0, io[HZRAM_IO_FAILED_READS]);

	/* What was written is intact; the failed page reads as before (zeros). */
	ASSERT_EQ(0, pio(self->fd, got, (written + 1) * PAGE, 0, 0));
	EXPECT_EQ(0, memcmp(buf, got, written * PAGE));
	EXPECT_EQ(1, page_same_filled(got + written * PAGE));
	EXPECT_EQ((uint64_t)written * PAGE, MM(ORIG_DATA_SIZE));

	/* Same-filled pages need no memory and still go in. */
	memset(got, 0x11, PAGE);
	EXPECT_EQ(0, pio(self->fd, got, PAGE, (off_t)(n + 1) * PAGE, 1));
	/* Lifting the limit lets the rest in. */
	ASSERT_EQ(0, attr_write(self->id, "mem_limit", "0"));
	ASSERT_EQ(0, pio(self->fd, buf + written * PAGE, (n - written) * PAGE,
			 (off_t)written * PAGE, 1));
	ASSERT_EQ(0, pio(self->fd, got, n * PAGE, 0, 0));
	EXPECT_EQ(0, memcmp(buf, got, n * PAGE));
	free(buf);
	free(got);
}

/* Threads writing disjoint sectors of one page: no update may be lost. */
struct sector_writer {
	int fd;
	int sector;
	int iterations;
	int errors;
};

static void *sector_writer_fn(void *arg)
{
	struct sector_writer *w = arg;
	uint32_t *io = page_alloc(1), *got = page_alloc(1);
	int i, j;

	for (i = 0; i < w->iterations; i++) {
		for (j = 0; j < 128; j++)
			io[j] = (w->sector << 24) | i;
		if (pio(w->fd, io, 512, 8 * PAGE + w->sector * 512, 1) ||
		    pio(w->fd, got, 512, 8 * PAGE + w->sector * 512, 0) ||
		    memcmp(io, got, 512))
			w->errors++;
	}
	free(io);
	free(got);
	return NULL;
}

TEST_F(dev, concurrent_subpage_writes_same_page)
{
	struct sector_writer w[8];
	pthread_t th[8];
	uint32_t *got = page_alloc(1);
	int i, j;

	DEV_INIT("1M");
	for (i = 0; i < 8; i++) {
		w[i] = (struct sector_writer){ self->fd, i, 300, 0 };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, sector_writer_fn, &w[i]));
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, w[i].errors) TH_LOG("sector %d", i);
	}
	ASSERT_EQ(0, pio(self->fd, got, PAGE, 8 * PAGE, 0));
	for (i = 0; i < 8; i++)
		for (j = 0; j < 128; j++)
			ASSERT_EQ((uint32_t)((i << 24) | 299), got[i * 128 + j]);
	free(got);
}

/*
 * Writers own pages (index % writers) and write numbered versions; readers
 * read any page and check it is one whole version, never a torn mix.
 */
#define RW_PAGES 256

struct rw_ctx {
	int fd;
	int id;
	int writers;
	int rounds;
	volatile int stop;
	int errors;
	pthread_mutex_t lock;
};

static void version_fill(uint64_t *p, uint64_t index, uint64_t version)
{
	int i;

	/* Half compressible, half not: both paths of the store. */
	p[0] = index;
	p[1] = version;
	for (i = 2; i < PAGE / 8; i++)
		p[i] = i < PAGE / 16 ? (index * 1000003 + version) * 2654435761ULL * i
				     : index ^ version;
}

static int version_check(const uint64_t *p, uint64_t index)
{
	uint64_t want[PAGE / 8];

	if (p[0] == 0 && p[1] == 0 && page_same_filled(p))
		return 0;	/* not written yet */
	if (p[0] != index)
		return -1;
	version_fill(want, index, p[1]);
	return memcmp(p, want, PAGE) ? -1 : 0;
}

struct rw_thread {
	struct rw_ctx *ctx;
	int n;
};

static void *rw_writer_fn(void *arg)
{
	struct rw_thread *t = arg;
	struct rw_ctx *c = t->ctx;
	uint64_t *buf = page_alloc(1), *got = page_alloc(1);
	int r, idx;

	for (r = 1; r <= c->rounds; r++) {
		for (idx = t->n; idx < RW_PAGES; idx += c->writers) {
			version_fill(buf, idx, r);
			if (pio(c->fd, buf, PAGE, (off_t)idx * PAGE, 1) ||
			    pio(c->fd, got, PAGE, (off_t)idx * PAGE, 0) ||
			    memcmp(buf, got, PAGE))
				__atomic_add_fetch(&c->errors, 1, __ATOMIC_RELAXED);
		}
	}
	free(buf);
	free(got);
	return NULL;
}

static void *rw_reader_fn(void *arg)
{
	struct rw_thread *t = arg;
	struct rw_ctx *c = t->ctx;
	uint64_t *got = page_alloc(1), s = 1000 + t->n;

	while (!c->stop) {
		int idx = rnd_next(&s) % RW_PAGES;

		if (pio(c->fd, got, PAGE, (off_t)idx * PAGE, 0) ||
		    version_check(got, idx))
			__atomic_add_fetch(&c->errors, 1, __ATOMIC_RELAXED);
	}
	free(got);
	return NULL;
}

TEST_F_TIMEOUT(dev, concurrent_readers_writers, 120)
{
	struct rw_ctx c = { .writers = 4, .rounds = 12 };
	struct rw_thread wt[4], rt[3];
	pthread_t wth[4], rth[3];
	uint64_t *got = page_alloc(1);
	int i;

	DEV_INIT("2M");
	c.fd = self->fd;
	for (i = 0; i < 3; i++) {
		rt[i] = (struct rw_thread){ &c, i };
		ASSERT_EQ(0, pthread_create(&rth[i], NULL, rw_reader_fn, &rt[i]));
	}
	for (i = 0; i < 4; i++) {
		wt[i] = (struct rw_thread){ &c, i };
		ASSERT_EQ(0, pthread_create(&wth[i], NULL, rw_writer_fn, &wt[i]));
	}
	for (i = 0; i < 4; i++)
		pthread_join(wth[i], NULL);
	c.stop = 1;
	for (i = 0; i < 3; i++)
		pthread_join(rth[i], NULL);
	EXPECT_EQ(0, c.errors);
	for (i = 0; i < RW_PAGES; i++) {
		ASSERT_EQ(0, pio(self->fd, got, PAGE, (off_t)i * PAGE, 0));
		ASSERT_EQ((uint64_t)i, got[0]);
		ASSERT_EQ(12, got[1]);
		ASSERT_EQ(0, version_check(got, i));
	}
	EXPECT_EQ(RW_PAGES * PAGE, MM(ORIG_DATA_SIZE));
	free(got);
}

TEST_F(dev, every_algorithm_round_trips)
{
	static const char *algs[] = { "lzo", "lzo-rle", "lz4", "lz4hc", "zstd" };
	const int n = 64;
	char *buf = page_alloc(n), *got = page_alloc(n);
	unsigned int a;
	int i;

	for (i = 0; i < n; i++) {
		if (i % 4 == 0)
			rnd_fill(buf + i * PAGE, PAGE, i);
		else
			text_fill(buf + i * PAGE, PAGE, i);
	}
	for (a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		ASSERT_EQ(0, attr_write(self->id, "comp_algorithm", algs[a]));
		DEV_INIT("1M");
		ASSERT_EQ(0, pio(self->fd, buf, n * PAGE, 0, 1));
		ASSERT_EQ(0, pio(self->fd, got, n * PAGE, 0, 0));
		EXPECT_EQ(0, memcmp(buf, got, n * PAGE)) TH_LOG("%s", algs[a]);
		EXPECT_EQ(n / 4, MM(HUGE_PAGES)) TH_LOG("%s", algs[a]);
		EXPECT_GT(n * PAGE * 3 / 4, MM(COMPR_DATA_SIZE)) TH_LOG("%s", algs[a]);
		close(self->fd);
		self->fd = -1;
		ASSERT_EQ(0, attr_write(self->id, "reset", "1"));
	}
	free(buf);
	free(got);
}

TEST_HARNESS_MAIN
