// SPDX-License-Identifier: GPL-2.0
/*
 * hzram races: the control operations (disksize, reset, comp_algorithm,
 * mem_limit, compact, hot_add, hot_remove, open) against each other and
 * against I/O, and discard and write-zeroes against writes to the same
 * pages. Every operation must end with success or with the errno the
 * ABI gives for the state it met; data written to an open device must
 * read back; the counters must agree with what is stored. The kernel log
 * is checked for splats by the harness that runs the guest.
 *
 * Needs the hzram module loaded (num_devices=0: the tests hot_add their
 * own devices).
 */
#include "hzram_test.h"

#include <dirent.h>
#include <pthread.h>
#include <time.h>

#include "kselftest_harness.h"

#define RACE_SECONDS 6

/* No state: the fixture only gives the tests a timeout of their own. */
FIXTURE(race) {
	int unused;
};
FIXTURE_SETUP(race) { self->unused = 0; }
FIXTURE_TEARDOWN(race) { }

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct race {
	int id;			/* the device the threads share */
	double end;		/* CLOCK_MONOTONIC seconds */
	int bad;		/* unexpected results */
	int io_done;		/* verified writes */
	int inits;		/* successful disksize writes */
	int io_threads;		/* I/O threads started: each has its own pages */
	char what[256];		/* the first unexpected result */
};

/* Count an unexpected result and remember the first. */
static void race_bad(struct race *r, const char *op, int ret)
{
	if (__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED) == 0)
		snprintf(r->what, sizeof(r->what), "%s: %d (%s)", op, ret,
			 ret < 0 ? strerror(-ret) : "unexpected");
}

/* True if @ret is 0 or one of the errnos (negative, 0-terminated). */
static int one_of(int ret, const int *ok)
{
	if (!ret)
		return 1;
	for (; *ok; ok++)
		if (ret == *ok)
			return 1;
	return 0;
}

#define EXPECT_ONE_OF(r, op, ret, ...) do {				\
	static const int __ok[] = { __VA_ARGS__, 0 };			\
	int __ret = (ret);						\
	if (!one_of(__ret, __ok))					\
		race_bad(r, op, __ret);					\
} while (0)

/* disksize then reset, over and over: EBUSY while set or open. */
static void *lifecycle_fn(void *arg)
{
	struct race *r = arg;

	while (now() < r->end) {
		int ret = attr_write(r->id, "disksize", "4M");

		EXPECT_ONE_OF(r, "disksize", ret, -EBUSY);
		if (!ret)
			__atomic_add_fetch(&r->inits, 1, __ATOMIC_RELAXED);
		usleep(2000);
		EXPECT_ONE_OF(r, "reset", attr_write(r->id, "reset", "1"), -EBUSY);
	}
	return NULL;
}

static void *algorithm_fn(void *arg)
{
	static const char *algs[] = { "lz4", "zstd", "lzo-rle", "lz4hc" };
	struct race *r = arg;
	unsigned int i = 0;

	while (now() < r->end) {
		EXPECT_ONE_OF(r, "comp_algorithm",
			      attr_write(r->id, "comp_algorithm", algs[i++ % 4]),
			      -EBUSY);
		usleep(500);
	}
	return NULL;
}

/* Statistics, and the writes accepted in any state or refused uninitialised. */
static void *knobs_fn(void *arg)
{
	static const char *reads[] = { "mm_stat", "io_stat", "debug_stat",
				       "initstate", "disksize", "comp_algorithm" };
	struct race *r = arg;
	char buf[512];
	unsigned int i = 0;

	while (now() < r->end) {
		int ret = attr_read(r->id, reads[i++ % 6], buf, sizeof(buf));

		if (ret <= 0)
			race_bad(r, "attribute read", ret);
		EXPECT_ONE_OF(r, "mem_limit", attr_write(r->id, "mem_limit", "0"), 0);
		EXPECT_ONE_OF(r, "mem_used_max", attr_write(r->id, "mem_used_max", "0"), 0);
		EXPECT_ONE_OF(r, "compact", attr_write(r->id, "compact", "1"), -EINVAL);
	}
	return NULL;
}

#define IO_THREADS 2

/*
 * Open, and if the device has a size, write a page and read it back:
 * a device that is open cannot be reset, so the page must be there.
 */
static void *io_fn(void *arg)
{
	struct race *r = arg;
	char *buf = page_alloc(1), *got = page_alloc(1);
	uint64_t seed = (uintptr_t)&buf;
	int me = __atomic_fetch_add(&r->io_threads, 1, __ATOMIC_RELAXED);

	while (buf && got && now() < r->end) {
		uint64_t size = 0;
		off_t off;
		int fd = dev_open(r->id, O_RDWR | O_DIRECT);

		if (fd < 0) {
			/* A reset in progress refuses opens. */
			EXPECT_ONE_OF(r, "open", fd, -EBUSY);
			continue;
		}
		if (ioctl(fd, BLKGETSIZE64, &size))
			race_bad(r, "BLKGETSIZE64", -errno);
		if (size) {
			int ret;

			/* Pages me, me + IO_THREADS, ...: no other thread's. */
			off = (off_t)(rnd_next(&seed) % (size / PAGE / IO_THREADS) *
				      IO_THREADS + me) * PAGE;
			text_fill(buf, PAGE, rnd_next(&seed));
			ret = pio(fd, buf, PAGE, off, 1);
			if (!ret)
				ret = pio(fd, got, PAGE, off, 0);
			if (ret)
				race_bad(r, "I/O on an open device", ret);
			else if (memcmp(buf, got, PAGE))
				race_bad(r, "page read back differs", 0);
			else
				__atomic_add_fetch(&r->io_done, 1, __ATOMIC_RELAXED);
		}
		close(fd);
	}
	free(buf);
	free(got);
	return NULL;
}

static void run_threads(struct race *r, void *(**fns)(void *), int n)
{
	pthread_t th[16];
	int i;

	r->end = now() + RACE_SECONDS;
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, fns[i], r))
			race_bad(r, "pthread_create", -errno);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

TEST_F_TIMEOUT(race, control_operations_against_each_other_and_io, 120)
{
	void *(*fns[])(void *) = { lifecycle_fn, algorithm_fn, knobs_fn,
				   io_fn, io_fn };
	struct race r = {};

	r.id = hot_add();
	ASSERT_LE(0, r.id);
	run_threads(&r, fns, 5);
	EXPECT_EQ(0, r.bad) TH_LOG("%d unexpected results; first: %s", r.bad, r.what);
	TH_LOG("%d initialisations, %d verified writes", r.inits, r.io_done);
	EXPECT_LT(0, r.inits);
	EXPECT_LT(0, r.io_done);
	/* Idle again: reset and removal succeed. */
	EXPECT_EQ(0, attr_write(r.id, "reset", "1"));
	EXPECT_EQ(0, attr_u64(r.id, "initstate"));
	EXPECT_EQ(0, hot_remove(r.id));
}

/* The number of hzram devices there are now, or -errno. */
static int count_devices(void)
{
	DIR *d = opendir("/sys/block");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, "hzram", 5);
	closedir(d);
	return n;
}

/* hot_add and hot_remove of devices that others open and configure. */
struct churn {
	struct race r;
	int ids[4];		/* slots of devices; -1: none */
	int cycles;
	int churners;		/* churn threads started: each owns two slots */
	int users;		/* user threads started: each has its own page */
};

static void *churn_fn(void *arg)
{
	struct churn *c = arg;
	/*
	 * Slots k and k + 2 are this thread's alone, so that no device it
	 * added is lost to another churner's store: every device still in a
	 * slot at the end is removed.
	 */
	int k = __atomic_fetch_add(&c->churners, 1, __ATOMIC_RELAXED) % 2;
	unsigned int i = 0;

	while (now() < c->r.end) {
		int *slot = &c->ids[k + 2 * (i++ % 2)];
		int id = __atomic_exchange_n(slot, -1, __ATOMIC_ACQ_REL);

		if (id >= 0) {
			int ret = hot_remove(id);

			/* Open or being configured by another thread: keep it. */
			EXPECT_ONE_OF(&c->r, "hot_remove", ret, -EBUSY);
			if (ret) {
				__atomic_store_n(slot, id, __ATOMIC_RELEASE);
				continue;
			}
			__atomic_add_fetch(&c->cycles, 1, __ATOMIC_RELAXED);
		}
		id = hot_add();
		if (id < 0)
			race_bad(&c->r, "hot_add", id);
		else
			__atomic_store_n(slot, id, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *churn_user_fn(void *arg)
{
	struct churn *c = arg;
	uint64_t seed = (uintptr_t)&seed;
	off_t off = (off_t)__atomic_fetch_add(&c->users, 1, __ATOMIC_RELAXED) * PAGE;
	char *buf = page_alloc(1), *got = page_alloc(1);
	int ret;

	while (buf && got && now() < c->r.end) {
		int id = __atomic_load_n(&c->ids[rnd_next(&seed) % 4], __ATOMIC_ACQUIRE);
		uint64_t size = 0;
		int fd;

		if (id < 0)
			continue;
		/* The device may be gone by now: its files with it. */
		ret = attr_write(id, "disksize", "1M");
		EXPECT_ONE_OF(&c->r, "disksize", ret, -EBUSY, -ENOENT, -ENODEV);
		fd = dev_open(id, O_RDWR | O_DIRECT);
		if (fd < 0) {
			EXPECT_ONE_OF(&c->r, "open", fd, -EBUSY, -ENOENT, -ENXIO, -ENODEV);
			continue;
		}
		if (!ioctl(fd, BLKGETSIZE64, &size) && size) {
			text_fill(buf, PAGE, rnd_next(&seed));
			ret = pio(fd, buf, PAGE, off, 1);
			if (!ret)
				ret = pio(fd, got, PAGE, off, 0);
			if (ret)
				race_bad(&c->r, "I/O on an open device", ret);
			else if (memcmp(buf, got, PAGE))
				race_bad(&c->r, "page read back differs", 0);
		}
		close(fd);
	}
	free(buf);
	free(got);
	return NULL;
}

TEST_F_TIMEOUT(race, hot_add_remove_against_users, 120)
{
	void *(*fns[])(void *) = { churn_fn, churn_fn, churn_user_fn, churn_user_fn };
	struct churn c = { .ids = { -1, -1, -1, -1 } };
	int before = count_devices(), i;

	ASSERT_LE(0, before);
	run_threads(&c.r, fns, 4);
	EXPECT_EQ(0, c.r.bad) TH_LOG("%d unexpected results; first: %s", c.r.bad, c.r.what);
	TH_LOG("%d devices added and removed", c.cycles);
	EXPECT_LT(0, c.cycles);
	for (i = 0; i < 4; i++)
		if (c.ids[i] >= 0)
			EXPECT_EQ(0, hot_remove(c.ids[i]));
	/* Every device the churners added is gone again. */
	EXPECT_EQ(before, count_devices());
}

/*
 * Writers store numbered versions of pages while other threads discard
 * and zero ranges over them. Each page must end as one whole version or
 * as zeros, and mm_stat must count exactly the pages that hold data.
 */
#define ZR_PAGES 512

struct zero_race {
	int fd;
	double end;
	int errors;
};

static void zr_fill(uint64_t *p, uint64_t index, uint64_t version)
{
	int i;

	p[0] = index + 1;
	p[1] = version;
	for (i = 2; i < PAGE / 8; i++)
		p[i] = i < PAGE / 32 ? (index * 7919 + version) * 0x9e3779b97f4a7c15ULL * i
				     : index + version;
}

static void *zr_writer_fn(void *arg)
{
	struct zero_race *z = arg;
	uint64_t *buf = page_alloc(8), seed = (uintptr_t)&buf, v = 0;

	while (buf && now() < z->end) {
		uint64_t idx = rnd_next(&seed) % (ZR_PAGES - 8);
		int n = 1 + rnd_next(&seed) % 8, i;

		v++;
		for (i = 0; i < n; i++)
			zr_fill(buf + i * PAGE / 8, idx + i, v);
		if (pio(z->fd, buf, n * PAGE, idx * PAGE, 1))
			__atomic_add_fetch(&z->errors, 1, __ATOMIC_RELAXED);
	}
	free(buf);
	return NULL;
}

static void *zr_zeroer_fn(void *arg)
{
	struct zero_race *z = arg;
	uint64_t seed = (uintptr_t)&seed, range[2];
	int n = 0;

	while (now() < z->end) {
		range[0] = (rnd_next(&seed) % (ZR_PAGES - 16)) * PAGE;
		range[1] = (1 + rnd_next(&seed) % 16) * PAGE;
		/* Alternate whole-page discards and zeroing. */
		if (ioctl(z->fd, n++ % 2 ? BLKZEROOUT : BLKDISCARD, range))
			__atomic_add_fetch(&z->errors, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

TEST_F_TIMEOUT(race, discard_and_write_zeroes_against_writes, 120)
{
	void *(*fns[])(void *) = { zr_writer_fn, zr_writer_fn, zr_zeroer_fn, zr_zeroer_fn };
	struct zero_race z = {};
	pthread_t th[4];
	uint64_t *got = page_alloc(ZR_PAGES), mm[HZRAM_MM_NR_FIELDS];
	uint64_t held = 0, want[PAGE / 8], range[2] = { 0, ZR_PAGES * PAGE };
	int id, i;

	id = hot_add();
	ASSERT_LE(0, id);
	ASSERT_EQ(0, attr_write(id, "disksize", "2M"));
	z.fd = dev_open(id, O_RDWR | O_DIRECT);
	ASSERT_LE(0, z.fd);
	z.end = now() + RACE_SECONDS;
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, fns[i], &z));
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(0, z.errors);

	ASSERT_EQ(0, pio(z.fd, got, ZR_PAGES * PAGE, 0, 0));
	for (i = 0; i < ZR_PAGES; i++) {
		uint64_t *p = got + i * PAGE / 8;

		if (p[0] == 0 && page_same_filled(p))
			continue;
		held++;
		ASSERT_EQ((uint64_t)i + 1, p[0]) TH_LOG("page %d is torn or misplaced", i);
		zr_fill(want, i, p[1]);
		ASSERT_EQ(0, memcmp(p, want, PAGE)) TH_LOG("page %d is torn", i);
	}
	ASSERT_EQ(0, mm_stat(id, mm));
	EXPECT_EQ(held * PAGE, mm[HZRAM_MM_ORIG_DATA_SIZE]);
	TH_LOG("%ju of %d pages hold data at the end", (uintmax_t)held, ZR_PAGES);

	/* Discard everything: nothing may stay accounted. */
	ASSERT_EQ(0, ioctl(z.fd, BLKDISCARD, range));
	ASSERT_EQ(0, attr_write(id, "compact", "1"));
	ASSERT_EQ(0, mm_stat(id, mm));
	EXPECT_EQ(0, mm[HZRAM_MM_ORIG_DATA_SIZE]);
	EXPECT_EQ(0, mm[HZRAM_MM_COMPR_DATA_SIZE]);
	EXPECT_EQ(0, mm[HZRAM_MM_MEM_USED_TOTAL]);
	close(z.fd);
	free(got);
	EXPECT_EQ(0, hot_remove(id));
}

TEST_HARNESS_MAIN
