// SPDX-License-Identifier: GPL-2.0
/*
 * Real memory pages through hzram: fill a device with the page corpus
 * (anonymous memory of running programs), read it back, and check that
 * mm_stat agrees with the data: exactly with what the data holds
 * (orig_data_size, same_pages), exactly with kernel zram given the same
 * data and algorithm (the same kernel LZ4 and zsmalloc), and with an
 * independent LZ4 (liblz4) to within 0.1% for the compressed size.
 *
 * Needs the hzram and zram modules loaded and the decompressed corpus at
 * $HZRAM_CORPUS (default /tmp/corpus); on the debug kernel (lockdep) it
 * takes the corpus's first quarter.
 */
#include "hzram_test.h"

#include <lz4.h>
#include <sys/mman.h>

#include "kselftest_harness.h"

struct corpus {
	char *data;
	size_t pages;
	size_t same;		/* same-filled pages */
	int *lz4_len;		/* liblz4 size per page, 0 if same-filled */
};

static int corpus_load(struct corpus *c)
{
	const char *path = getenv("HZRAM_CORPUS") ?: "/tmp/corpus";
	char out[LZ4_COMPRESSBOUND(PAGE)];
	struct stat st;
	size_t i;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || st.st_size % PAGE || !st.st_size)
		return -1;
	c->pages = st.st_size / PAGE;
	/*
	 * On a kernel with lockdep (the debug kernel, with KASAN) every page
	 * costs several times more: there its first quarter, as the shell
	 * tests move less data there (SHRINK in ktap.sh).
	 */
	if (!access("/proc/lockdep", F_OK))
		c->pages /= 4;
	c->data = page_alloc(c->pages);
	c->lz4_len = calloc(c->pages, sizeof(int));
	if (!c->data || !c->lz4_len || pio(fd, c->data, c->pages * PAGE, 0, 0))
		return -1;
	close(fd);
	c->same = 0;
	for (i = 0; i < c->pages; i++) {
		const char *p = c->data + i * PAGE;

		if (page_same_filled(p))
			c->same++;
		else
			c->lz4_len[i] = LZ4_compress_default(p, out, PAGE, sizeof(out));
	}
	return 0;
}

/* Create a device of @kind ("hzram" or "zram") with lz4 and fill it. */
static int fill_device(const char *kind, const struct corpus *c, int *idp,
		       char *devpath, size_t len)
{
	char ctl[96], attr[96], buf[32];
	int id, fd, ret;

	snprintf(ctl, sizeof(ctl), "/sys/class/%s-control/hot_add", kind);
	ret = attr_read_path(ctl, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	id = *idp = atoi(buf);
	snprintf(attr, sizeof(attr), "/sys/block/%s%d/comp_algorithm", kind, id);
	ret = attr_write_path(attr, "lz4");
	if (ret)
		return ret;
	snprintf(attr, sizeof(attr), "/sys/block/%s%d/disksize", kind, id);
	snprintf(buf, sizeof(buf), "%zu", c->pages * PAGE);
	ret = attr_write_path(attr, buf);
	if (ret)
		return ret;
	snprintf(devpath, len, "/dev/%s%d", kind, id);
	fd = open(devpath, O_RDWR | O_DIRECT);
	if (fd < 0)
		return -errno;
	/* In 1 MiB writes, as a sequential writer would. */
	for (size_t off = 0; off < c->pages * PAGE && !ret; off += 1 << 20) {
		size_t n = c->pages * PAGE - off;

		ret = pio(fd, c->data + off, n < (1 << 20) ? n : 1 << 20, off, 1);
	}
	close(fd);
	return ret;
}

static int read_mm_stat(const char *kind, int id, uint64_t *v)
{
	char path[96], buf[512], *p = buf;
	int i;

	snprintf(path, sizeof(path), "/sys/block/%s%d/mm_stat", kind, id);
	if (attr_read_path(path, buf, sizeof(buf)) < 0)
		return -1;
	for (i = 0; i < HZRAM_MM_NR_FIELDS; i++)
		v[i] = strtoull(p, &p, 10);
	return 0;
}

static int cmp_int_desc(const void *a, const void *b)
{
	return *(const int *)b - *(const int *)a;
}

FIXTURE(corpus) {
	struct corpus c;
	int hz_id, zram_id;
};

FIXTURE_SETUP(corpus)
{
	self->hz_id = self->zram_id = -1;
	ASSERT_EQ(0, corpus_load(&self->c)) TH_LOG("cannot read the corpus");
}

FIXTURE_TEARDOWN(corpus)
{
	char buf[16];

	if (self->hz_id >= 0)
		EXPECT_EQ(0, hot_remove(self->hz_id));
	if (self->zram_id >= 0) {
		snprintf(buf, sizeof(buf), "%d", self->zram_id);
		EXPECT_EQ(0, attr_write_path("/sys/class/zram-control/hot_remove", buf));
	}
}

TEST_F_TIMEOUT(corpus, fill_read_back_and_stats, 300)
{
	const struct corpus *c = &self->c;
	uint64_t hz[HZRAM_MM_NR_FIELDS], zr[HZRAM_MM_NR_FIELDS];
	char path[64], *got;
	int fd, *sizes, i, nonsame;
	uint64_t est = 0, huge;

	ASSERT_EQ(0, fill_device("hzram", c, &self->hz_id, path, sizeof(path)));

	/* Every byte back. */
	got = page_alloc(c->pages);
	ASSERT_NE(NULL, got);
	fd = open(path, O_RDONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pio(fd, got, c->pages * PAGE, 0, 0));
	close(fd);
	EXPECT_EQ(0, memcmp(c->data, got, c->pages * PAGE));
	free(got);

	ASSERT_EQ(0, read_mm_stat("hzram", self->hz_id, hz));
	TH_LOG("hzram mm_stat: orig %" PRIu64 " compr %" PRIu64 " used %" PRIu64
	       " same %" PRIu64 " huge %" PRIu64 " (%zu pages, %zu same-filled)",
	       hz[0], hz[1], hz[2], hz[5], hz[7], c->pages, c->same);

	/* What the data holds. */
	EXPECT_EQ(c->pages * PAGE, hz[HZRAM_MM_ORIG_DATA_SIZE]);
	EXPECT_EQ(c->same, hz[HZRAM_MM_SAME_PAGES]);
	EXPECT_EQ(hz[HZRAM_MM_HUGE_PAGES], hz[HZRAM_MM_HUGE_PAGES_SINCE]);
	EXPECT_LE(hz[HZRAM_MM_COMPR_DATA_SIZE], hz[HZRAM_MM_MEM_USED_TOTAL]);

	/*
	 * Independent LZ4: take the huge_pages largest pages as stored raw
	 * and the others at their liblz4 size; the total must agree.
	 */
	nonsame = c->pages - c->same;
	sizes = malloc(nonsame * sizeof(int));
	ASSERT_NE(NULL, sizes);
	for (i = 0, nonsame = 0; i < (int)c->pages; i++)
		if (c->lz4_len[i])
			sizes[nonsame++] = c->lz4_len[i];
	qsort(sizes, nonsame, sizeof(int), cmp_int_desc);
	huge = hz[HZRAM_MM_HUGE_PAGES];
	for (i = 0; i < nonsame; i++)
		est += (uint64_t)i < huge ? PAGE : sizes[i];
	TH_LOG("liblz4 estimate %" PRIu64 ", smallest huge page %d bytes by liblz4",
	       est, huge ? sizes[huge - 1] : 0);
	EXPECT_GT(est / 1000, (est > hz[1] ? est - hz[1] : hz[1] - est));
	/* The huge pages are those that do not compress to 3/4 of a page. */
	if (huge)
		EXPECT_LT(3 * PAGE / 4, sizes[huge - 1]);
	if (huge < (uint64_t)nonsame)
		EXPECT_GT(PAGE, sizes[huge] + 64);
	free(sizes);

	/* Kernel zram, same data, same algorithm: the same figures. */
	ASSERT_EQ(0, fill_device("zram", c, &self->zram_id, path, sizeof(path)));
	ASSERT_EQ(0, read_mm_stat("zram", self->zram_id, zr));
	TH_LOG("zram  mm_stat: orig %" PRIu64 " compr %" PRIu64 " used %" PRIu64
	       " same %" PRIu64 " huge %" PRIu64,
	       zr[0], zr[1], zr[2], zr[5], zr[7]);
	EXPECT_EQ(zr[HZRAM_MM_ORIG_DATA_SIZE], hz[HZRAM_MM_ORIG_DATA_SIZE]);
	EXPECT_EQ(zr[HZRAM_MM_COMPR_DATA_SIZE], hz[HZRAM_MM_COMPR_DATA_SIZE]);
	EXPECT_EQ(zr[HZRAM_MM_SAME_PAGES], hz[HZRAM_MM_SAME_PAGES]);
	EXPECT_EQ(zr[HZRAM_MM_HUGE_PAGES], hz[HZRAM_MM_HUGE_PAGES]);
	EXPECT_EQ(zr[HZRAM_MM_HUGE_PAGES_SINCE], hz[HZRAM_MM_HUGE_PAGES_SINCE]);
	/* Same objects in the same allocator: memory within 1%. */
	EXPECT_GT(zr[HZRAM_MM_MEM_USED_TOTAL] / 100,
		  (zr[2] > hz[2] ? zr[2] - hz[2] : hz[2] - zr[2]));
}

TEST_HARNESS_MAIN
