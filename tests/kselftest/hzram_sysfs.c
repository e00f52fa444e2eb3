// SPDX-License-Identifier: GPL-2.0
/*
 * hzram sysfs ABI: every attribute with good and bad input, exact errno.
 *
 * Needs the hzram module loaded. Each test works on a device of its own,
 * created through hot_add and removed afterwards.
 */
#include "hzram_test.h"

#include <sys/sysinfo.h>

#include "kselftest_harness.h"

FIXTURE(dev) {
	int id;
};

FIXTURE_SETUP(dev)
{
	self->id = hot_add();
	ASSERT_LE(0, self->id);
}

FIXTURE_TEARDOWN(dev)
{
	/* The device must be idle by now: removal must succeed. */
	EXPECT_EQ(0, hot_remove(self->id));
}

static int init_dev(int id, const char *size)
{
	return attr_write(id, "disksize", size);
}

TEST_F(dev, disksize_suffixes)
{
	static const struct {
		const char *in;
		uint64_t bytes;
	} cases[] = {
		{ "1\n", 4096 },		/* rounded up to a page */
		{ "4096", 4096 },
		{ "5000", 8192 },
		{ "8k", 8192 },
		{ "8K\n", 8192 },
		{ "3M", 3 << 20 },
		{ "2m", 2 << 20 },
		{ "1G", 1ULL << 30 },
		{ "1g\n", 1ULL << 30 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(0, attr_u64(self->id, "disksize"));
		ASSERT_EQ(0, init_dev(self->id, cases[i].in)) TH_LOG("%s", cases[i].in);
		EXPECT_EQ(cases[i].bytes, attr_u64(self->id, "disksize"));
		ASSERT_EQ(0, attr_write(self->id, "reset", "1"));
	}
}

TEST_F(dev, disksize_bad_input)
{
	static const char *einval[] = {
		"\n", "abc", "1Gx", "1 G", "12abc", "-1", "0", "0\n",
		"0x1000", "1Q", " 1M",
	};
	unsigned int i;

	for (i = 0; i < sizeof(einval) / sizeof(einval[0]); i++)
		EXPECT_EQ(-EINVAL, init_dev(self->id, einval[i])) TH_LOG("input %u", i);
	EXPECT_EQ(-ERANGE, init_dev(self->id, "99999999999999999999999"));
	EXPECT_EQ(-ERANGE, init_dev(self->id, "18446744073709551615K"));
	/* More than 2^32 pages. */
	EXPECT_EQ(-E2BIG, init_dev(self->id, "17T"));
	EXPECT_EQ(0, attr_u64(self->id, "disksize"));
	EXPECT_EQ(0, attr_u64(self->id, "initstate"));
}

TEST_F(dev, disksize_busy_once_set)
{
	ASSERT_EQ(0, init_dev(self->id, "16M"));
	EXPECT_EQ(-EBUSY, init_dev(self->id, "32M"));
	EXPECT_EQ(16 << 20, attr_u64(self->id, "disksize"));
	/* Bad input is still reported as such. */
	EXPECT_EQ(-EINVAL, init_dev(self->id, "junk"));
}

TEST_F(dev, initstate)
{
	EXPECT_EQ(0, attr_u64(self->id, "initstate"));
	EXPECT_EQ(-EACCES, attr_write(self->id, "initstate", "1"));
	ASSERT_EQ(0, init_dev(self->id, "1M"));
	EXPECT_EQ(1, attr_u64(self->id, "initstate"));
	ASSERT_EQ(0, attr_write(self->id, "reset", "1"));
	EXPECT_EQ(0, attr_u64(self->id, "initstate"));
}

TEST_F(dev, capacity_follows_disksize)
{
	uint64_t bytes = 0;
	int fd;

	ASSERT_EQ(0, init_dev(self->id, "24M"));
	fd = dev_open(self->id, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, BLKGETSIZE64, &bytes));
	EXPECT_EQ(24 << 20, bytes);
	close(fd);
}

TEST_F(dev, comp_algorithm)
{
	static const char *algs[] = { "lzo", "lzo-rle", "lz4", "lz4hc", "zstd" };
	char buf[256], want[64], too_long[200];
	unsigned int i;

	ASSERT_LT(0, attr_read(self->id, "comp_algorithm", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "[lz4]")) TH_LOG("%s", buf);
	for (i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		snprintf(want, sizeof(want), "%s ", algs[i]);
		EXPECT_NE(NULL, strstr(buf, algs[i])) TH_LOG("%s missing: %s", algs[i], buf);
	}

	EXPECT_EQ(-EINVAL, attr_write(self->id, "comp_algorithm", "nonexistent"));
	EXPECT_EQ(-EINVAL, attr_write(self->id, "comp_algorithm", "\n"));
	/*
	 * 128 bytes or more (zram's ZRAM_MAX_ALGO_NAME_SZ) is refused with
	 * zram's E2BIG, not cut: cut and trimmed, this one would read "lz4".
	 */
	memset(too_long, ' ', sizeof(too_long) - 1);
	memcpy(too_long, "lz4", 3);
	too_long[sizeof(too_long) - 1] = '\0';
	EXPECT_EQ(-E2BIG, attr_write(self->id, "comp_algorithm", too_long));

	for (i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		ASSERT_EQ(0, attr_write(self->id, "comp_algorithm", algs[i]));
		ASSERT_LT(0, attr_read(self->id, "comp_algorithm", buf, sizeof(buf)));
		snprintf(want, sizeof(want), "[%s]", algs[i]);
		EXPECT_NE(NULL, strstr(buf, want)) TH_LOG("%s", buf);
	}

	ASSERT_EQ(0, attr_write(self->id, "comp_algorithm", "zstd\n"));
	ASSERT_EQ(0, init_dev(self->id, "1M"));
	EXPECT_EQ(-EBUSY, attr_write(self->id, "comp_algorithm", "lz4"));
	ASSERT_LT(0, attr_read(self->id, "comp_algorithm", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "[zstd]"));

	/* Reset returns to the default algorithm... */
	ASSERT_EQ(0, attr_write(self->id, "reset", "1"));
	ASSERT_LT(0, attr_read(self->id, "comp_algorithm", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "[lz4]")) TH_LOG("%s", buf);
	/* ...on an uninitialised device too. */
	ASSERT_EQ(0, attr_write(self->id, "comp_algorithm", "lzo"));
	ASSERT_EQ(0, attr_write(self->id, "reset", "1"));
	ASSERT_LT(0, attr_read(self->id, "comp_algorithm", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "[lz4]")) TH_LOG("%s", buf);
	/* Only the five: another crypto algorithm is refused. */
	EXPECT_EQ(-EINVAL, attr_write(self->id, "comp_algorithm", "deflate"));
}

TEST_F(dev, reset)
{
	uint64_t mm[HZRAM_MM_NR_FIELDS];
	char *page = page_alloc(1);
	int fd;

	ASSERT_NE(NULL, page);
	EXPECT_EQ(-EINVAL, attr_write(self->id, "reset", "0"));
	EXPECT_EQ(-EINVAL, attr_write(self->id, "reset", "yes"));
	EXPECT_EQ(-EINVAL, attr_write(self->id, "reset", "1x"));
	/* Resetting an uninitialised device is allowed and does nothing. */
	EXPECT_EQ(0, attr_write(self->id, "reset", "1"));

	ASSERT_EQ(0, init_dev(self->id, "4M"));
	fd = dev_open(self->id, O_RDWR | O_DIRECT);
	ASSERT_LE(0, fd);
	rnd_fill(page, PAGE, 1);
	ASSERT_EQ(0, pio(fd, page, PAGE, 0, 1));
	EXPECT_EQ(-EBUSY, attr_write(self->id, "reset", "1"));
	EXPECT_EQ(1, attr_u64(self->id, "initstate"));
	close(fd);

	ASSERT_EQ(0, attr_write(self->id, "reset", "1"));
	EXPECT_EQ(0, attr_u64(self->id, "initstate"));
	EXPECT_EQ(0, attr_u64(self->id, "disksize"));
	ASSERT_EQ(0, mm_stat(self->id, mm));
	EXPECT_EQ(0, mm[HZRAM_MM_ORIG_DATA_SIZE]);
	EXPECT_EQ(0, mm[HZRAM_MM_MEM_USED_TOTAL]);

	/* Reinitialised, the old data is gone. */
	ASSERT_EQ(0, init_dev(self->id, "4M"));
	fd = dev_open(self->id, O_RDONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	memset(page, 0xaa, PAGE);
	ASSERT_EQ(0, pio(fd, page, PAGE, 0, 0));
	EXPECT_EQ(1, page_same_filled(page));
	EXPECT_EQ(0, page[0]);
	close(fd);
	free(page);
}

TEST_F(dev, mem_limit)
{
	uint64_t mm[HZRAM_MM_NR_FIELDS];
	char buf[64];

	EXPECT_EQ(-EACCES, attr_read(self->id, "mem_limit", buf, sizeof(buf)));
	EXPECT_EQ(-EINVAL, attr_write(self->id, "mem_limit", "abc"));
	EXPECT_EQ(-EINVAL, attr_write(self->id, "mem_limit", "1Mx"));
	EXPECT_EQ(-EINVAL, attr_write(self->id, "mem_limit", "-5"));
	EXPECT_EQ(-ERANGE, attr_write(self->id, "mem_limit", "99999999999999999999999"));

	ASSERT_EQ(0, attr_write(self->id, "mem_limit", "4M"));
	ASSERT_EQ(0, mm_stat(self->id, mm));
	EXPECT_EQ(4 << 20, mm[HZRAM_MM_MEM_LIMIT]);
	ASSERT_EQ(0, attr_write(self->id, "mem_limit", "5000\n"));
	ASSERT_EQ(0, mm_stat(self->id, mm));
	EXPECT_EQ(8192, mm[HZRAM_MM_MEM_LIMIT]);
	/* Settable after init too, and 0 lifts the limit. */
	ASSERT_EQ(0, init_dev(self->id, "1M"));
	ASSERT_EQ(0, attr_write(self->id, "mem_limit", "0"));
	ASSERT_EQ(0, mm_stat(self->id, mm));
	EXPECT_EQ(0, mm[HZRAM_MM_MEM_LIMIT]);
	/* Reset clears it. */
	ASSERT_EQ(0, attr_write(self->id, "mem_limit", "2M"));
	ASSERT_EQ(0, attr_write(self->id, "reset", "1"));
	ASSERT_EQ(0, mm_stat(self->id, mm));
	EXPECT_EQ(0, mm[HZRAM_MM_MEM_LIMIT]);
}

TEST_F(dev, mem_used_max)
{
	uint64_t mm[HZRAM_MM_NR_FIELDS];
	char *buf = page_alloc(64);
	int fd, i;

	ASSERT_NE(NULL, buf);
	EXPECT_EQ(-EACCES, attr_read(self->id, "mem_used_max", buf, 64));
	EXPECT_EQ(-EINVAL, attr_write(self->id, "mem_used_max", "1"));
	EXPECT_EQ(-EINVAL, attr_write(self->id, "mem_used_max", "x"));
	EXPECT_EQ(0, attr_write(self->id, "mem_used_max", "0"));

	ASSERT_EQ(0, init_dev(self->id, "1M"));
	fd = dev_open(self->id, O_RDWR | O_DIRECT);
	ASSERT_LE(0, fd);
	for (i = 0; i < 64; i++)
		rnd_fill(buf + i * PAGE, PAGE, i + 100);
	ASSERT_EQ(0, pio(fd, buf, 64 * PAGE, 0, 1));
	ASSERT_EQ(0, mm_stat(self->id, mm));
	EXPECT_LE(64 * PAGE, mm[HZRAM_MM_MEM_USED_TOTAL]);
	EXPECT_EQ(mm[HZRAM_MM_MEM_USED_TOTAL], mm[HZRAM_MM_MEM_USED_MAX]);

	/* Free it all: the peak stays until it is reset. */
	ASSERT_EQ(0, ioctl(fd, BLKDISCARD, (uint64_t[]){ 0, 64 * PAGE }));
	ASSERT_EQ(0, attr_write(self->id, "compact", "1"));
	ASSERT_EQ(0, mm_stat(self->id, mm));
	EXPECT_LE(64 * PAGE, mm[HZRAM_MM_MEM_USED_MAX]);
	EXPECT_GT(mm[HZRAM_MM_MEM_USED_MAX], mm[HZRAM_MM_MEM_USED_TOTAL]);
	ASSERT_EQ(0, attr_write(self->id, "mem_used_max", "0"));
	ASSERT_EQ(0, mm_stat(self->id, mm));
	EXPECT_EQ(mm[HZRAM_MM_MEM_USED_TOTAL], mm[HZRAM_MM_MEM_USED_MAX]);
	close(fd);
	free(buf);
}

TEST_F(dev, compact)
{
	uint64_t mm[HZRAM_MM_NR_FIELDS];
	char *buf = page_alloc(256);
	int fd, i;

	ASSERT_NE(NULL, buf);
	EXPECT_EQ(-EINVAL, attr_write(self->id, "compact", "1"));
	EXPECT_EQ(-EACCES, attr_read(self->id, "compact", buf, PAGE));
	ASSERT_EQ(0, init_dev(self->id, "1M"));

	/*
	 * Objects of one size class (1 KiB of random bytes, then zeros), then
	 * free every other one: half-empty zspages that compaction merges.
	 */
	fd = dev_open(self->id, O_RDWR | O_DIRECT);
	ASSERT_LE(0, fd);
	for (i = 0; i < 256; i++)
		rnd_fill(buf + i * PAGE, 1024, i + 7);
	ASSERT_EQ(0, pio(fd, buf, 256 * PAGE, 0, 1));
	for (i = 0; i < 256; i += 2)
		ASSERT_EQ(0, ioctl(fd, BLKDISCARD, (uint64_t[]){ (uint64_t)i * PAGE, PAGE }));
	ASSERT_EQ(0, mm_stat(self->id, mm));
	EXPECT_EQ(128 * PAGE, mm[HZRAM_MM_ORIG_DATA_SIZE]);
	EXPECT_EQ(0, mm[HZRAM_MM_PAGES_COMPACTED]);

	ASSERT_EQ(0, attr_write(self->id, "compact", "1"));
	ASSERT_EQ(0, mm_stat(self->id, mm));
	EXPECT_LT(0, mm[HZRAM_MM_PAGES_COMPACTED]);

	/* The surviving pages are intact. */
	memset(buf, 0, 256 * PAGE);
	ASSERT_EQ(0, pio(fd, buf, 256 * PAGE, 0, 0));
	for (i = 1; i < 256; i += 2) {
		char *want = page_alloc(1);

		rnd_fill(want, 1024, i + 7);
		EXPECT_EQ(0, memcmp(want, buf + i * PAGE, PAGE)) TH_LOG("page %d", i);
		free(want);
	}
	close(fd);
	free(buf);
}

TEST_F(dev, stat_formats)
{
	uint64_t v[HZRAM_MM_NR_FIELDS + 1];
	char buf[256];

	/* All nine mm_stat fields, zero before init. */
	EXPECT_EQ(HZRAM_MM_NR_FIELDS,
		  attr_read_u64s(self->id, "mm_stat", v, HZRAM_MM_NR_FIELDS + 1));
	EXPECT_EQ(HZRAM_IO_NR_FIELDS,
		  attr_read_u64s(self->id, "io_stat", v, HZRAM_IO_NR_FIELDS + 1));
	ASSERT_LT(0, attr_read(self->id, "debug_stat", buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, "version: 1\n", 11)) TH_LOG("%s", buf);
	EXPECT_EQ(-EACCES, attr_write(self->id, "mm_stat", "0"));
	EXPECT_EQ(-EACCES, attr_write(self->id, "io_stat", "0"));
	EXPECT_EQ(-EACCES, attr_write(self->id, "debug_stat", "0"));
}

TEST_F(dev, max_comp_streams)
{
	uint64_t online = get_nprocs();

	EXPECT_EQ(online, attr_u64(self->id, "max_comp_streams"));
	EXPECT_EQ(-EINVAL, attr_write(self->id, "max_comp_streams", "0"));
	EXPECT_EQ(-EINVAL, attr_write(self->id, "max_comp_streams", "x"));
	EXPECT_EQ(-EINVAL, attr_write(self->id, "max_comp_streams", "-2"));
	/* Accepted for compatibility; streams stay one per online CPU. */
	EXPECT_EQ(0, attr_write(self->id, "max_comp_streams", "8"));
	EXPECT_EQ(online, attr_u64(self->id, "max_comp_streams"));
}

TEST_F(dev, uninitialised_device_is_empty)
{
	uint64_t bytes = 1;
	char buf[PAGE];
	int fd;

	fd = dev_open(self->id, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, BLKGETSIZE64, &bytes));
	EXPECT_EQ(0, bytes);
	EXPECT_EQ(0, pread(fd, buf, sizeof(buf), 0));
	close(fd);
}

TEST(hot_add_remove)
{
	char path[64];
	int a, b;

	a = hot_add();
	ASSERT_LE(0, a);
	b = hot_add();
	ASSERT_LE(0, b);
	EXPECT_NE(a, b);
	dev_path(path, sizeof(path), b);
	EXPECT_EQ(0, access(path, F_OK));
	EXPECT_EQ(0, attr_u64(b, "initstate"));

	EXPECT_EQ(0, hot_remove(b));
	EXPECT_EQ(-ENODEV, hot_remove(b));
	EXPECT_EQ(-1, access(path, F_OK));
	EXPECT_EQ(0, hot_remove(a));
}

TEST(hot_remove_bad_input)
{
	char buf[16];

	EXPECT_EQ(-EINVAL, attr_write_path(CONTROL "/hot_remove", "abc"));
	EXPECT_EQ(-EINVAL, attr_write_path(CONTROL "/hot_remove", "-1"));
	EXPECT_EQ(-EINVAL, attr_write_path(CONTROL "/hot_remove", "\n"));
	EXPECT_EQ(-ERANGE, attr_write_path(CONTROL "/hot_remove", "99999999999"));
	EXPECT_EQ(-ENODEV, attr_write_path(CONTROL "/hot_remove", "255"));
	EXPECT_EQ(-ENODEV, attr_write_path(CONTROL "/hot_remove", "100000"));
	/* hot_add is read-only, hot_remove write-only. */
	EXPECT_EQ(-EACCES, attr_write_path(CONTROL "/hot_add", "1"));
	EXPECT_EQ(-EACCES, attr_read_path(CONTROL "/hot_remove", buf, sizeof(buf)));
}

TEST(hot_remove_busy_while_open)
{
	int id, fd;

	id = hot_add();
	ASSERT_LE(0, id);
	ASSERT_EQ(0, attr_write(id, "disksize", "1M"));
	fd = dev_open(id, O_RDONLY);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBUSY, hot_remove(id));
	close(fd);
	EXPECT_EQ(0, hot_remove(id));
}

TEST_HARNESS_MAIN
