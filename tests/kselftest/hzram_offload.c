// SPDX-License-Identifier: GPL-2.0
/*
 * hzram's helper protocol, from the helper's side: this program attaches
 * to devices through /dev/hzram-control and speaks the protocol of
 * include/uapi/linux/hzram.h over io_uring, as a correct helper and as a
 * hostile one. Every test reads the whole device back and compares it
 * with what was written.
 */
#include "hzram_test.h"

#include <liburing.h>
#include <lz4.h>
#include <pthread.h>
#include <zstd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

_Static_assert(sizeof(struct hzram_attach) == HZRAM_ATTACH_SIZE, "attach");
_Static_assert(sizeof(struct hzram_batch_desc) == HZRAM_BATCH_DESC_SIZE, "desc");
_Static_assert(sizeof(struct hzram_cmd) == HZRAM_CMD_SIZE, "cmd");
_Static_assert(sizeof(struct hzram_page_record) == HZRAM_PAGE_RECORD_SIZE, "record");

/* A helper: the control fd, its ring and the two regions. */
struct helper {
	int fd;
	struct io_uring ring;
	struct hzram_attach a;
	const uint8_t *ro;
	uint8_t *rw;
	int fetching;		/* a FETCH is queued */
};

static int helper_attach_features(struct helper *h, int id, uint32_t features)
{
	int ret;

	memset(h, 0, sizeof(*h));
	h->fd = open(HZRAM_CONTROL_PATH, O_RDWR);
	if (h->fd < 0)
		return -errno;
	h->a.size = sizeof(h->a);
	h->a.version = HZRAM_UAPI_VERSION;
	h->a.device = id;
	h->a.features = features;
	if (ioctl(h->fd, HZRAM_IOC_ATTACH, &h->a)) {
		ret = -errno;
		close(h->fd);
		return ret;
	}
	h->ro = mmap(NULL, h->a.ro_size, PROT_READ, MAP_SHARED, h->fd, h->a.ro_offset);
	h->rw = mmap(NULL, h->a.rw_size, PROT_READ | PROT_WRITE, MAP_SHARED, h->fd,
		     h->a.rw_offset);
	if (h->ro == MAP_FAILED || h->rw == MAP_FAILED)
		return -errno;
	return -io_uring_queue_init(16, &h->ring, 0) ? -EIO : 0;
}

/* A helper that compresses only: reads are never sent to it. */
static int helper_attach(struct helper *h, int id)
{
	return helper_attach_features(h, id, HZRAM_FEAT_COMPRESS);
}

static void helper_close(struct helper *h)
{
	io_uring_queue_exit(&h->ring);
	munmap((void *)h->ro, h->a.ro_size);
	munmap(h->rw, h->a.rw_size);
	close(h->fd);
}

/* Queue a command; returns its SQE (NULL: none free, the wait fails). */
static struct io_uring_sqe *helper_sqe(struct helper *h, uint32_t op, uint32_t batch,
				       uint32_t flags, uint64_t seq, uint64_t user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&h->ring);
	struct hzram_cmd c = { .batch = batch, .flags = flags, .seq = seq };

	if (!sqe)
		return NULL;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, h->fd, NULL, 0, 0);
	sqe->cmd_op = op;
	sqe->user_data = user_data;
	memcpy(sqe->cmd, &c, sizeof(c));
	return sqe;
}

/*
 * Wait up to @ms for the next CQE of @user_data; other CQEs are not
 * expected. Return: its res, or -ETIME.
 */
static int helper_wait(struct helper *h, int ms, uint64_t user_data)
{
	struct __kernel_timespec ts = { .tv_sec = ms / 1000,
					.tv_nsec = (ms % 1000) * 1000000L };
	struct io_uring_cqe *cqe;
	int ret;

	ret = io_uring_wait_cqe_timeout(&h->ring, &cqe, &ts);
	if (ret)
		return ret;
	if (cqe->user_data != user_data)
		return -EPROTO;
	ret = cqe->res;
	io_uring_cqe_seen(&h->ring, cqe);
	return ret;
}

/* The next batch within @ms: its number, -ETIME, or the FETCH's error. */
static int helper_fetch(struct helper *h, int ms)
{
	int ret;

	if (!h->fetching) {
		helper_sqe(h, HZRAM_CMD_FETCH, 0, 0, 0, 1);
		io_uring_submit(&h->ring);
		h->fetching = 1;
	}
	ret = helper_wait(h, ms, 1);
	if (ret != -ETIME)
		h->fetching = 0;
	return ret;
}

static int helper_commit(struct helper *h, uint32_t batch, uint32_t flags, uint64_t seq)
{
	helper_sqe(h, HZRAM_CMD_COMMIT, batch, flags, seq, 2);
	io_uring_submit(&h->ring);
	return helper_wait(h, 5000, 2);
}

static const struct hzram_batch_desc *helper_desc(struct helper *h, int batch)
{
	return (const struct hzram_batch_desc *)h->ro + batch;
}

/* Ways to encode a batch: right, or each way a helper can be wrong. */
enum mode { GOOD, CORRUPT, BAD_LENGTH, BAD_OFFSET, BAD_KIND, FLAGS, NONE, WRONG_SAME };

/* Encode batch @batch into its output slot, in mode @m. */
static void helper_encode(struct helper *h, int batch, enum mode m)
{
	const struct hzram_batch_desc *d = helper_desc(h, batch);
	const uint8_t *pages = h->ro + h->a.staging_offset + d->staging_offset;
	struct hzram_page_record *rec = (void *)(h->rw + d->output_offset);
	uint8_t *data = (uint8_t *)(rec + h->a.batch_pages);
	uint64_t pos = 0;
	uint32_t i;

	for (i = 0; i < d->nr_pages; i++) {
		const uint8_t *page = pages + (size_t)i * PAGE;
		int n = LZ4_compress_default((const char *)page, (char *)data + pos,
					     PAGE, PAGE - 1);

		uint32_t adv;

		if (n > 0) {
			rec[i] = (struct hzram_page_record){ .value = pos, .length = n,
							     .kind = HZRAM_PAGE_LZ4 };
		} else {
			memcpy(data + pos, page, PAGE);
			rec[i] = (struct hzram_page_record){ .value = pos, .length = PAGE,
							     .kind = HZRAM_PAGE_RAW };
		}
		adv = (rec[i].length + 7) & ~7u;
		switch (m) {
		case GOOD: break;
		case CORRUPT: data[pos + rec[i].length / 2] ^= 0x5a; break;
		case BAD_LENGTH: rec[i].length = PAGE + 1; break;
		case BAD_OFFSET: rec[i].value = (uint64_t)h->a.batch_pages * PAGE - 2; break;
		case BAD_KIND: rec[i].kind = 9; break;
		case FLAGS: rec[i].flags = 1; break;
		case NONE: rec[i].kind = 0; break;
		case WRONG_SAME:
			rec[i] = (struct hzram_page_record){ .value = 7, .kind = HZRAM_PAGE_SAME };
			break;
		}
		pos += adv;
	}
}

/* offload_stat of device @id. */
static int off_stat(int id, uint64_t v[HZRAM_OFF_NR_FIELDS])
{
	return attr_read_u64s(id, "offload_stat", v, HZRAM_OFF_NR_FIELDS) ==
	       HZRAM_OFF_NR_FIELDS ? 0 : -EIO;
}

#define OFF(field) ({							\
	uint64_t __v[HZRAM_OFF_NR_FIELDS];				\
	ASSERT_EQ(0, off_stat(self->id, __v));				\
	__v[HZRAM_OFF_##field];						\
})

/* The kernel's pages by reason add up to all of the kernel's pages. */
#define EXPECT_REASONS_ADD_UP() do {					\
	uint64_t __r[HZRAM_OFF_NR_FIELDS];				\
	ASSERT_EQ(0, off_stat(self->id, __r));				\
	EXPECT_EQ(__r[HZRAM_OFF_PAGES_KERNEL],				\
		  __r[HZRAM_OFF_KERNEL_SMALL] + __r[HZRAM_OFF_KERNEL_TIMEOUT] + \
		  __r[HZRAM_OFF_KERNEL_GONE] + __r[HZRAM_OFF_KERNEL_REFUSED]); \
} while (0)

FIXTURE(off) {
	int id;
	int fd;
	struct helper h;
	uint8_t *model;		/* what the device must hold */
	size_t pages;
};

#define BATCH 64

FIXTURE_SETUP(off)
{
	self->fd = -1;
	self->h.fd = -1;
	self->pages = 1024;
	self->id = hot_add();
	ASSERT_LE(0, self->id);
	ASSERT_EQ(0, attr_write(self->id, "offload_batch_pages", "64"));
	ASSERT_EQ(0, attr_write(self->id, "offload_min_pages", "8"));
	/* Batches close when full, however slow the kernel, unless a test says. */
	ASSERT_EQ(0, attr_write(self->id, "offload_flush_us", "1000000"));
	/* Nor are they taken back from the test's helper, unless a test says. */
	ASSERT_EQ(0, attr_write(self->id, "offload_timeout_ms", "60000"));
	ASSERT_EQ(0, attr_write(self->id, "disksize", "4M"));
	self->fd = dev_open(self->id, O_RDWR | O_DIRECT);
	ASSERT_LE(0, self->fd);
	self->model = page_alloc(self->pages);
	ASSERT_NE(NULL, self->model);
}

FIXTURE_TEARDOWN(off)
{
	if (self->h.fd >= 0)
		helper_close(&self->h);
	if (self->fd >= 0)
		close(self->fd);
	free(self->model);
	EXPECT_EQ(0, hot_remove(self->id));
}

/* Write pages [first, first + n) of the model, filled from @seed, to the device. */
static int put(int fd, uint8_t *model, size_t first, size_t n, uint64_t seed)
{
	text_fill(model + first * PAGE, n * PAGE, seed);
	return pio(fd, model + first * PAGE, n * PAGE, first * PAGE, 1);
}

/* The whole device reads back as the model. */
static int intact(int fd, const uint8_t *model, size_t pages)
{
	uint8_t *got = page_alloc(pages);
	int ret = got ? pio(fd, got, pages * PAGE, 0, 0) : -ENOMEM;

	if (!ret && memcmp(got, model, pages * PAGE))
		ret = -EBADMSG;
	free(got);
	return ret;
}

TEST_F(off, pages_through_the_helper)
{
	int b, n = 0;

	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	EXPECT_EQ(HZRAM_FEAT_COMPRESS, self->h.a.features);
	EXPECT_EQ(BATCH, self->h.a.batch_pages);
	EXPECT_EQ(1, OFF(HELPER));
	EXPECT_EQ(1, OFF(ACTIVE));
	/* 8 batches of 64 cells: the first 512 pages are staged, the rest inline. */
	ASSERT_EQ(0, put(self->fd, self->model, 0, self->pages, 1));
	EXPECT_EQ(512, OFF(STAGED));
	EXPECT_EQ(512, OFF(STAGING_FULL));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));	/* from staging */
	while ((b = helper_fetch(&self->h, 500)) >= 0) {
		const struct hzram_batch_desc *d = helper_desc(&self->h, b);

		EXPECT_EQ(HZRAM_OP_COMPRESS, d->op);
		EXPECT_EQ(BATCH, d->nr_pages);
		helper_encode(&self->h, b, GOOD);
		ASSERT_EQ(0, helper_commit(&self->h, b, 0, d->seq));
		n++;
	}
	EXPECT_EQ(-ETIME, b);
	EXPECT_EQ(8, n);
	EXPECT_EQ(0, OFF(STAGED));
	EXPECT_EQ(512, OFF(PAGES_HELPER));
	EXPECT_EQ(0, OFF(PAGES_KERNEL));
	EXPECT_EQ(8, OFF(BATCHES));
	EXPECT_EQ(1, OFF(ATTACHES));
	EXPECT_EQ(0, OFF(DEATHS));
	/* Round trips were timed: the median is no more than the 99th. */
	EXPECT_LT(0, OFF(RTT_P99_US));
	EXPECT_GE(OFF(RTT_P99_US), OFF(RTT_P50_US));
	EXPECT_REASONS_ADD_UP();
	/* The arena changes after commit: the kernel holds its own copy. */
	memset(self->h.rw, 0xa5, self->h.a.rw_size);
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
	EXPECT_EQ(self->pages * PAGE, attr_u64(self->id, "mm_stat"));
}

/* Each kind of wrong record is refused, counted and compressed by the module. */
TEST_F(off, wrong_records)
{
	static const enum mode modes[] = { CORRUPT, BAD_LENGTH, BAD_OFFSET, BAD_KIND,
					   FLAGS, NONE, WRONG_SAME };
	uint64_t rejected = 0, failed = 0;
	unsigned int i;

	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const struct hzram_batch_desc *d;
		int b;

		ASSERT_EQ(0, put(self->fd, self->model, i * BATCH, BATCH, 100 + i));
		b = helper_fetch(&self->h, 2000);
		ASSERT_LE(0, b);
		d = helper_desc(&self->h, b);
		helper_encode(&self->h, b, modes[i]);
		ASSERT_EQ(0, helper_commit(&self->h, b, 0, d->seq));
		if (modes[i] == CORRUPT || modes[i] == WRONG_SAME)
			failed += BATCH;
		else if (modes[i] != NONE)
			rejected += BATCH;
		EXPECT_EQ(rejected, OFF(REJECTED));
		EXPECT_EQ(failed, OFF(VERIFY_FAILED));
		EXPECT_EQ((i + 1) * BATCH, OFF(PAGES_KERNEL));
		EXPECT_EQ((i + 1) * BATCH, OFF(KERNEL_REFUSED));
	}
	EXPECT_EQ(0, OFF(PAGES_HELPER));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
}

/* Unknown, stale, duplicate and late commits are refused; nothing is lost. */
TEST_F(off, bad_commits)
{
	const struct hzram_batch_desc *d;
	uint64_t seq;
	int b;

	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	ASSERT_EQ(0, put(self->fd, self->model, 0, BATCH, 1));
	b = helper_fetch(&self->h, 2000);
	ASSERT_LE(0, b);
	d = helper_desc(&self->h, b);
	seq = d->seq;
	helper_encode(&self->h, b, GOOD);
	EXPECT_EQ(-EINVAL, helper_commit(&self->h, self->h.a.nr_batches, 0, seq));
	EXPECT_EQ(-EINVAL, helper_commit(&self->h, b, 1, seq));
	EXPECT_EQ(-ESTALE, helper_commit(&self->h, b, 0, seq + 1));
	EXPECT_EQ(0, helper_commit(&self->h, b, 0, seq));
	EXPECT_EQ(-ESTALE, helper_commit(&self->h, b, 0, seq));	/* duplicate */
	EXPECT_EQ(4, OFF(BAD_COMMITS));
	/* FETCH's fields are reserved: 0. */
	helper_sqe(&self->h, HZRAM_CMD_FETCH, 1, 0, 0, 3);
	io_uring_submit(&self->h.ring);
	EXPECT_EQ(-EINVAL, helper_wait(&self->h, 2000, 3));
	helper_sqe(&self->h, HZRAM_CMD_FETCH, 0, 1, 0, 3);
	io_uring_submit(&self->h.ring);
	EXPECT_EQ(-EINVAL, helper_wait(&self->h, 2000, 3));
	helper_sqe(&self->h, HZRAM_CMD_FETCH, 0, 0, 1, 3);
	io_uring_submit(&self->h.ring);
	EXPECT_EQ(-EINVAL, helper_wait(&self->h, 2000, 3));

	/*
	 * Late: taken back after offload_timeout_ms, then refused. (Only
	 * now 50 ms: the commits above must not be late on a busy machine.)
	 */
	ASSERT_EQ(0, attr_write(self->id, "offload_timeout_ms", "50"));
	ASSERT_EQ(0, put(self->fd, self->model, BATCH, BATCH, 2));
	b = helper_fetch(&self->h, 2000);
	ASSERT_LE(0, b);
	seq = helper_desc(&self->h, b)->seq;
	helper_encode(&self->h, b, GOOD);
	usleep(300 * 1000);
	EXPECT_EQ(-ESTALE, helper_commit(&self->h, b, 0, seq));
	EXPECT_EQ(1, OFF(TIMEOUTS));
	EXPECT_EQ(BATCH, OFF(PAGES_HELPER));
	EXPECT_EQ(BATCH, OFF(PAGES_KERNEL));
	EXPECT_EQ(BATCH, OFF(KERNEL_TIMEOUT));
	EXPECT_REASONS_ADD_UP();
	EXPECT_EQ(0, OFF(STAGED));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
}

/* A result for pages written again since they were staged is dropped. */
TEST_F(off, stale_results)
{
	uint64_t range[2] = { BATCH / 2 * PAGE, BATCH / 4 * PAGE };
	int b;

	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	ASSERT_EQ(0, put(self->fd, self->model, 0, BATCH, 1));
	b = helper_fetch(&self->h, 2000);
	ASSERT_LE(0, b);
	/* Half overwritten (staged again elsewhere), a quarter discarded. */
	ASSERT_EQ(0, put(self->fd, self->model, 0, BATCH / 2, 2));
	ASSERT_EQ(0, ioctl(self->fd, BLKDISCARD, range));
	memset(self->model + range[0], 0, range[1]);
	helper_encode(&self->h, b, GOOD);
	ASSERT_EQ(0, helper_commit(&self->h, b, 0, helper_desc(&self->h, b)->seq));
	EXPECT_EQ(BATCH * 3 / 4, OFF(STALE));
	EXPECT_EQ(BATCH / 4, OFF(PAGES_HELPER));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
}

/* Small batches are compressed by the module, after offload_flush_us. */
TEST_F(off, small_batches_stay_in_the_kernel)
{
	ASSERT_EQ(0, attr_write(self->id, "offload_flush_us", "2000"));
	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	ASSERT_EQ(0, put(self->fd, self->model, 0, 4, 1));
	EXPECT_EQ(-ETIME, helper_fetch(&self->h, 300));
	EXPECT_EQ(4, OFF(PAGES_KERNEL));
	EXPECT_EQ(4, OFF(KERNEL_SMALL));
	EXPECT_EQ(0, OFF(STAGED));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
}

/* A helper killed while it holds batches and waits for more. */
TEST_F(off, helper_killed)
{
	int up[2], down[2], status, i;
	char c;
	pid_t pid;

	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct helper h;

		if (helper_attach(&h, self->id) || write(up[1], "a", 1) != 1 ||
		    read(down[0], &c, 1) != 1)
			_exit(1);
		/* Hold both batches, and leave one more FETCH waiting. */
		if (helper_fetch(&h, 2000) < 0 || helper_fetch(&h, 2000) < 0 ||
		    helper_fetch(&h, 10) != -ETIME || write(up[1], "b", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(up[0], &c, 1));
	ASSERT_EQ(0, put(self->fd, self->model, 0, 2 * BATCH, 1));
	EXPECT_EQ(2 * BATCH, OFF(STAGED));
	ASSERT_EQ(1, write(down[1], "w", 1));
	ASSERT_EQ(1, read(up[0], &c, 1));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	for (i = 0; i < 100 && OFF(HELPER); i++)
		usleep(20 * 1000);
	EXPECT_EQ(0, OFF(HELPER));
	EXPECT_EQ(0, OFF(STAGED));
	EXPECT_EQ(2 * BATCH, OFF(PAGES_KERNEL));
	EXPECT_EQ(2 * BATCH, OFF(KERNEL_GONE));
	EXPECT_EQ(1, OFF(DEATHS));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
	/* A new helper can attach and serve. */
	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	ASSERT_EQ(0, put(self->fd, self->model, 0, BATCH, 3));
	i = helper_fetch(&self->h, 2000);
	ASSERT_LE(0, i);
	helper_encode(&self->h, i, GOOD);
	ASSERT_EQ(0, helper_commit(&self->h, i, 0, helper_desc(&self->h, i)->seq));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
	EXPECT_EQ(2, OFF(ATTACHES));
	EXPECT_EQ(1, OFF(DEATHS));
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}

/* Reset takes every batch back; the helper stays, and serves the next init. */
TEST_F(off, reset_with_helper)
{
	int b;

	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	ASSERT_EQ(0, put(self->fd, self->model, 0, BATCH, 1));
	b = helper_fetch(&self->h, 2000);
	ASSERT_LE(0, b);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, attr_write(self->id, "reset", "1"));
	EXPECT_EQ(1, OFF(HELPER));
	EXPECT_EQ(0, OFF(ACTIVE));
	/* The statistics start again, with the helper that stays attached. */
	EXPECT_EQ(1, OFF(ATTACHES));
	EXPECT_EQ(-ESTALE, helper_commit(&self->h, b, 0, helper_desc(&self->h, b)->seq));
	ASSERT_EQ(0, attr_write(self->id, "disksize", "4M"));
	EXPECT_EQ(1, OFF(ACTIVE));
	self->fd = dev_open(self->id, O_RDWR | O_DIRECT);
	ASSERT_LE(0, self->fd);
	memset(self->model, 0, self->pages * PAGE);
	ASSERT_EQ(0, put(self->fd, self->model, 0, BATCH, 2));
	b = helper_fetch(&self->h, 2000);
	ASSERT_LE(0, b);
	helper_encode(&self->h, b, GOOD);
	ASSERT_EQ(0, helper_commit(&self->h, b, 0, helper_desc(&self->h, b)->seq));
	EXPECT_EQ(BATCH, OFF(PAGES_HELPER));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
}

/*
 * offload off takes back what the helper holds and stages nothing more;
 * on again, the same helper is given batches.
 */
TEST_F(off, offload_off_and_on)
{
	char buf[8];
	int b;

	ASSERT_EQ(5, attr_read(self->id, "offload", buf, sizeof(buf)));
	EXPECT_STREQ("auto\n", buf);
	EXPECT_EQ(-EINVAL, attr_write(self->id, "offload", "auto2"));
	EXPECT_EQ(-EINVAL, attr_write(self->id, "offload", "o"));
	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	ASSERT_EQ(0, put(self->fd, self->model, 0, BATCH, 1));
	b = helper_fetch(&self->h, 2000);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, attr_write(self->id, "offload", "off"));
	ASSERT_EQ(4, attr_read(self->id, "offload", buf, sizeof(buf)));
	EXPECT_STREQ("off\n", buf);
	EXPECT_EQ(1, OFF(HELPER));
	EXPECT_EQ(0, OFF(ACTIVE));
	EXPECT_EQ(0, OFF(STAGED));
	EXPECT_EQ(BATCH, OFF(KERNEL_GONE));
	helper_encode(&self->h, b, GOOD);
	EXPECT_EQ(-ESTALE, helper_commit(&self->h, b, 0, helper_desc(&self->h, b)->seq));
	/* Off: written inline, nothing staged, no batch to fetch. */
	ASSERT_EQ(0, put(self->fd, self->model, BATCH, BATCH, 2));
	EXPECT_EQ(0, OFF(STAGED));
	EXPECT_EQ(-ETIME, helper_fetch(&self->h, 100));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
	ASSERT_EQ(0, attr_write(self->id, "offload", "on\n"));
	ASSERT_EQ(3, attr_read(self->id, "offload", buf, sizeof(buf)));
	EXPECT_STREQ("on\n", buf);
	EXPECT_EQ(1, OFF(ACTIVE));
	ASSERT_EQ(0, put(self->fd, self->model, 2 * BATCH, BATCH, 3));
	b = helper_fetch(&self->h, 2000);
	ASSERT_LE(0, b);
	helper_encode(&self->h, b, GOOD);
	ASSERT_EQ(0, helper_commit(&self->h, b, 0, helper_desc(&self->h, b)->seq));
	EXPECT_EQ(BATCH, OFF(PAGES_HELPER));
	EXPECT_REASONS_ADD_UP();
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
}

/*
 * HZRAM_IOC_DETACH: the batches come back, the queued FETCH ends with
 * ECANCELED, no death is counted, and the file cannot attach again.
 */
TEST_F(off, detach)
{
	int fd = open(HZRAM_CONTROL_PATH, O_RDWR), b, status;
	pid_t pid;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, ioctl(fd, HZRAM_IOC_DETACH));	/* not attached */
	EXPECT_EQ(ENXIO, errno);
	close(fd);
	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	ASSERT_EQ(0, put(self->fd, self->model, 0, BATCH + 1, 1));
	b = helper_fetch(&self->h, 2000);
	ASSERT_LE(0, b);
	EXPECT_EQ(-ETIME, helper_fetch(&self->h, 10));	/* queued */
	/*
	 * Privilege is checked at ATTACH only: the attached file detaches
	 * without CAP_SYS_ADMIN, as it fetches and commits.
	 */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setuid(65534))
			_exit(2);
		_exit(ioctl(self->h.fd, HZRAM_IOC_DETACH) == 0 ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(-ECANCELED, helper_fetch(&self->h, 2000));
	EXPECT_EQ(0, OFF(HELPER));
	EXPECT_EQ(0, OFF(STAGED));
	EXPECT_EQ(0, OFF(DEATHS));
	EXPECT_EQ(BATCH + 1, OFF(KERNEL_GONE));
	helper_encode(&self->h, b, GOOD);
	EXPECT_EQ(-ENODEV, helper_commit(&self->h, b, 0, helper_desc(&self->h, b)->seq));
	EXPECT_EQ(-1, ioctl(self->h.fd, HZRAM_IOC_DETACH));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(-1, ioctl(self->h.fd, HZRAM_IOC_ATTACH, &self->h.a));
	EXPECT_EQ(EISCONN, errno);
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
	/* The device takes another helper at once. */
	helper_close(&self->h);
	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	EXPECT_EQ(2, OFF(ATTACHES));
}

/* A helper thread serves while writers overwrite pages at random. */
static void *serve(void *arg)
{
	struct helper *h = arg;
	int b;

	while ((b = helper_fetch(h, 1000)) >= 0) {
		helper_encode(h, b, GOOD);
		if (helper_commit(h, b, 0, helper_desc(h, b)->seq))
			return (void *)1;
	}
	return b == -ETIME ? NULL : (void *)1;
}

/* Minutes on a debug kernel on a busy machine, not seconds. */
TEST_F_TIMEOUT(off, random_overwrites_while_serving, 300)
{
	uint64_t s = 5;
	pthread_t t;
	void *res;
	int i;

	ASSERT_EQ(0, attr_write(self->id, "offload_flush_us", "2000"));
	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	ASSERT_EQ(0, pthread_create(&t, NULL, serve, &self->h));
	for (i = 0; i < 3000; i++) {
		size_t first = rnd_next(&s) % (self->pages - 16);

		ASSERT_EQ(0, put(self->fd, self->model, first, 1 + rnd_next(&s) % 16, i));
	}
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
	ASSERT_EQ(0, pthread_join(t, &res));
	EXPECT_EQ(NULL, res);
	EXPECT_EQ(0, OFF(STAGED));
	EXPECT_LT(0, OFF(PAGES_HELPER));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
}

TEST_F(off, attach_errors)
{
	struct helper h2;
	struct hzram_attach a = { .size = sizeof(a), .version = HZRAM_UAPI_VERSION,
				  .device = self->id, .features = HZRAM_FEAT_COMPRESS };
	int fd = open(HZRAM_CONTROL_PATH, O_RDWR), status;
	void *ro;
	pid_t pid;

	ASSERT_LE(0, fd);
	a.size = 8;
	EXPECT_EQ(-1, ioctl(fd, HZRAM_IOC_ATTACH, &a));
	EXPECT_EQ(EINVAL, errno);
	a.size = sizeof(a);
	a.version = 99;
	EXPECT_EQ(-1, ioctl(fd, HZRAM_IOC_ATTACH, &a));
	EXPECT_EQ(EPROTO, errno);
	a.version = HZRAM_UAPI_VERSION;
	a.features = 1U << 31;
	EXPECT_EQ(-1, ioctl(fd, HZRAM_IOC_ATTACH, &a));
	EXPECT_EQ(EOPNOTSUPP, errno);
	a.features = HZRAM_FEAT_COMPRESS;
	a.reserved[1] = 1;
	EXPECT_EQ(-1, ioctl(fd, HZRAM_IOC_ATTACH, &a));
	EXPECT_EQ(EINVAL, errno);
	a.reserved[1] = 0;
	a.device = HZRAM_MAX_DEVICES - 1;
	EXPECT_EQ(-1, ioctl(fd, HZRAM_IOC_ATTACH, &a));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(-1, ioctl(fd, _IO(HZRAM_IOC_MAGIC, 9)));
	EXPECT_EQ(ENOTTY, errno);
	/* Nothing to map before attach. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0));
	EXPECT_EQ(ENXIO, errno);
	a.device = self->id;
	ASSERT_EQ(0, ioctl(fd, HZRAM_IOC_ATTACH, &a));
	EXPECT_EQ(-1, ioctl(fd, HZRAM_IOC_ATTACH, &a));
	EXPECT_EQ(EISCONN, errno);
	/* One helper per device. */
	EXPECT_EQ(-EBUSY, helper_attach(&h2, self->id));
	/* The staging region is the kernel's. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, a.ro_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	EXPECT_EQ(EACCES, errno);
	ro = mmap(NULL, a.ro_size, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(-1, mprotect(ro, a.ro_size, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	munmap(ro, a.ro_size);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, a.rw_size + PAGE, PROT_READ, MAP_SHARED, fd,
				   a.rw_offset));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, PAGE));
	/* A private copy of either region would never reach the other side. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, a.rw_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
				   a.rw_offset));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, a.ro_size, PROT_READ, MAP_PRIVATE, fd, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(EBUSY, -attr_write(self->id, "offload_batch_pages", "32"));
	close(fd);
	/* Detached by close: another may attach. */
	ASSERT_EQ(0, helper_attach(&self->h, self->id));

	/* Without CAP_SYS_ADMIN. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int cfd = open(HZRAM_CONTROL_PATH, O_RDWR);

		if (cfd < 0 || setuid(65534))
			_exit(2);
		_exit(ioctl(cfd, HZRAM_IOC_ATTACH, &a) == -1 && errno == EPERM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* A device of another algorithm never offloads. */
/* The running kernel is @major.@minor or newer. */
static int kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return 0;
	return ma > major || (ma == major && mi >= minor);
}

/*
 * The helper's ring goes away with a FETCH queued, its process alive (6.7
 * and later cancel io_uring commands): the FETCH completes, the control
 * file closes and the helper is detached, not dead; what it staged is
 * stored by the module.
 */
TEST_F(off, ring_exit_cancels_fetch)
{
	int i;

	if (!kernel_at_least(6, 7))
		SKIP(return, "io_uring commands are not cancelable before 6.7");
	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	ASSERT_EQ(0, put(self->fd, self->model, 0, BATCH / 2, 4));
	EXPECT_EQ(-ETIME, helper_fetch(&self->h, 50));	/* queued: the batch is open */
	io_uring_queue_exit(&self->h.ring);
	munmap((void *)self->h.ro, self->h.a.ro_size);
	munmap(self->h.rw, self->h.a.rw_size);
	close(self->h.fd);
	self->h.fd = -1;
	for (i = 0; i < 100 && OFF(HELPER); i++)
		usleep(20 * 1000);
	EXPECT_EQ(0, OFF(HELPER));
	EXPECT_EQ(0, OFF(DEATHS));
	EXPECT_EQ(0, OFF(STAGED));
	EXPECT_EQ(BATCH / 2, OFF(KERNEL_GONE));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
}

/* Ways to answer a read batch: right, or wrong. */
enum rmode { R_GOOD, R_WRONG_PAGE, R_BAD_OFFSET, R_BAD_LENGTH, R_LZ4_KIND, R_FLAGS, R_NONE };

/* Decode read batch @batch into its output slot, in mode @m. */
static void helper_decode(struct helper *h, int batch, enum rmode m)
{
	const struct hzram_batch_desc *d = helper_desc(h, batch);
	const struct hzram_page_record *in = (const void *)(h->ro + h->a.staging_offset +
							     d->staging_offset);
	const char *src = (const char *)(in + h->a.batch_pages);
	struct hzram_page_record *rec = (void *)(h->rw + d->output_offset);
	uint8_t *data = (uint8_t *)(rec + h->a.batch_pages);
	uint32_t i;

	for (i = 0; i < d->nr_pages; i++) {
		int n = LZ4_decompress_safe(src + in[i].value, (char *)data + (size_t)i * PAGE,
					    in[i].length, PAGE);

		rec[i] = (struct hzram_page_record){ .value = (uint64_t)i * PAGE,
						     .length = PAGE, .kind = HZRAM_PAGE_RAW };
		if (n != PAGE || in[i].kind != HZRAM_PAGE_LZ4 || in[i].flags)
			rec[i] = (struct hzram_page_record){ 0 };
		switch (m) {
		case R_GOOD: break;
		case R_WRONG_PAGE: data[(size_t)i * PAGE + 100] ^= 1; break;
		case R_BAD_OFFSET: rec[i].value = (uint64_t)h->a.batch_pages * PAGE - 8; break;
		case R_BAD_LENGTH: rec[i].length = PAGE - 1; break;
		case R_LZ4_KIND: rec[i].kind = HZRAM_PAGE_LZ4; break;
		case R_FLAGS: rec[i].flags = 2; break;
		case R_NONE: rec[i].kind = 0; break;
		}
	}
}

/* A read on its own thread: it waits for the helper. */
struct reader {
	pthread_t thread;
	int fd;
	uint8_t *buf;
	size_t pages;
	size_t first;
	int ret;
};

static void *reader_fn(void *arg)
{
	struct reader *r = arg;

	r->ret = pio(r->fd, r->buf, r->pages * PAGE, r->first * PAGE, 0);
	return NULL;
}

static int reader_start(struct reader *r, int fd, size_t first, size_t pages)
{
	r->fd = fd;
	r->first = first;
	r->pages = pages;
	r->ret = -EINPROGRESS;
	r->buf = page_alloc(pages);
	if (!r->buf)
		return -ENOMEM;
	return -pthread_create(&r->thread, NULL, reader_fn, r);
}

/* Wait for the read; 0 if it returned the model's pages. */
static int reader_end(struct reader *r, const uint8_t *model)
{
	int ret;

	pthread_join(r->thread, NULL);
	ret = r->ret;
	if (!ret && memcmp(r->buf, model + r->first * PAGE, r->pages * PAGE))
		ret = -EBADMSG;
	free(r->buf);
	return ret;
}

/* Write @n pages from page 0 through the helper, every batch encoded right. */
static int put_through_helper(struct helper *h, int fd, uint8_t *model, size_t n, uint64_t seed)
{
	int b, ret = put(fd, model, 0, n, seed);

	while (!ret && (b = helper_fetch(h, 300)) >= 0) {
		helper_encode(h, b, GOOD);
		ret = helper_commit(h, b, 0, helper_desc(h, b)->seq);
	}
	return ret;
}

/*
 * offload on: a read of offload_read_min_pages or more goes to a helper
 * that decodes, as one batch of its LZ4 pages; each way of answering it
 * wrong is refused and counted, and the module decodes those pages; the
 * reader gets the data written either way.
 */
TEST_F(off, reads_through_the_helper)
{
	static const enum rmode modes[] = { R_GOOD, R_WRONG_PAGE, R_BAD_OFFSET, R_BAD_LENGTH,
					    R_LZ4_KIND, R_FLAGS, R_NONE };
	uint64_t helper = 0, kernel = 0, refused = 0;
	struct reader r;
	unsigned int i;
	int b;

	ASSERT_EQ(0, helper_attach_features(&self->h, self->id,
					    HZRAM_FEAT_COMPRESS | HZRAM_FEAT_DECOMPRESS));
	EXPECT_EQ(HZRAM_FEAT_COMPRESS | HZRAM_FEAT_DECOMPRESS, self->h.a.features);
	ASSERT_EQ(0, attr_write(self->id, "offload", "on"));
	ASSERT_EQ(0, attr_write(self->id, "offload_read_min_pages", "16"));
	ASSERT_EQ(0, put_through_helper(&self->h, self->fd, self->model, 4 * BATCH, 1));
	EXPECT_EQ(4 * BATCH, OFF(PAGES_HELPER));
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const struct hzram_batch_desc *d;

		/* Half a batch of pages, somewhere in what went through the helper. */
		ASSERT_EQ(0, reader_start(&r, self->fd, i * 16, BATCH / 2));
		b = helper_fetch(&self->h, 5000);
		ASSERT_LE(0, b);
		d = helper_desc(&self->h, b);
		EXPECT_EQ(HZRAM_OP_DECOMPRESS, d->op);
		EXPECT_EQ(BATCH / 2, d->nr_pages);
		helper_decode(&self->h, b, modes[i]);
		ASSERT_EQ(0, helper_commit(&self->h, b, 0, d->seq));
		EXPECT_EQ(0, reader_end(&r, self->model)) TH_LOG("mode %u", i);
		if (modes[i] == R_GOOD)
			helper += BATCH / 2;
		else
			kernel += BATCH / 2;
		if (modes[i] != R_NONE && modes[i] != R_GOOD)
			refused += BATCH / 2;
		EXPECT_EQ(i + 1, OFF(READ_BATCHES));
		EXPECT_EQ(helper, OFF(READ_HELPER));
		EXPECT_EQ(kernel, OFF(READ_KERNEL));
		EXPECT_EQ(refused, OFF(READ_REFUSED)) TH_LOG("mode %u", i);
	}
	/* Smaller reads, and reads larger than a batch, are not sent. */
	ASSERT_EQ(0, reader_start(&r, self->fd, 0, 8));
	EXPECT_EQ(0, reader_end(&r, self->model));
	ASSERT_EQ(0, reader_start(&r, self->fd, 0, 2 * BATCH));
	EXPECT_EQ(0, reader_end(&r, self->model));
	EXPECT_EQ(-ETIME, helper_fetch(&self->h, 200));
	EXPECT_EQ(i, OFF(READ_BATCHES));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
}

/*
 * A read batch the helper keeps past offload_timeout_ms, or holds when it
 * detaches, is decoded by the module; its late commit is refused.
 */
TEST_F(off, read_batches_taken_back)
{
	struct reader r;
	int b;

	ASSERT_EQ(0, helper_attach_features(&self->h, self->id,
					    HZRAM_FEAT_COMPRESS | HZRAM_FEAT_DECOMPRESS));
	ASSERT_EQ(0, attr_write(self->id, "offload", "on"));
	ASSERT_EQ(0, attr_write(self->id, "offload_read_min_pages", "16"));
	ASSERT_EQ(0, put_through_helper(&self->h, self->fd, self->model, 2 * BATCH, 2));
	ASSERT_EQ(0, attr_write(self->id, "offload_timeout_ms", "100"));
	ASSERT_EQ(0, reader_start(&r, self->fd, 0, BATCH));
	b = helper_fetch(&self->h, 5000);
	ASSERT_LE(0, b);
	EXPECT_EQ(0, reader_end(&r, self->model));
	EXPECT_EQ(1, OFF(TIMEOUTS));
	EXPECT_EQ(BATCH, OFF(READ_KERNEL));
	helper_decode(&self->h, b, R_GOOD);
	EXPECT_EQ(-ESTALE, helper_commit(&self->h, b, 0, helper_desc(&self->h, b)->seq));
	EXPECT_EQ(0, OFF(READ_HELPER));
	/* Held at detach. */
	ASSERT_EQ(0, attr_write(self->id, "offload_timeout_ms", "60000"));
	ASSERT_EQ(0, reader_start(&r, self->fd, BATCH, BATCH));
	b = helper_fetch(&self->h, 5000);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, ioctl(self->h.fd, HZRAM_IOC_DETACH));
	EXPECT_EQ(0, reader_end(&r, self->model));
	EXPECT_EQ(2 * BATCH, OFF(READ_KERNEL));
	EXPECT_EQ(0, OFF(READ_BATCHES));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
}

/*
 * offload auto: a large read is decoded in the kernel until the kernel
 * has been measured, then one goes to the helper to measure it; both
 * measures show in offload_stat.
 */
TEST_F(off, auto_measures_both_ways)
{
	struct reader r;
	int b, i;

	ASSERT_EQ(0, helper_attach_features(&self->h, self->id,
					    HZRAM_FEAT_COMPRESS | HZRAM_FEAT_DECOMPRESS));
	ASSERT_EQ(0, attr_write(self->id, "offload", "auto"));
	ASSERT_EQ(0, attr_write(self->id, "offload_read_min_pages", "16"));
	ASSERT_EQ(0, put_through_helper(&self->h, self->fd, self->model, 2 * BATCH, 3));
	EXPECT_EQ(0, OFF(READ_NS_KERNEL));
	EXPECT_EQ(0, OFF(READ_NS_HELPER));
	ASSERT_EQ(0, reader_start(&r, self->fd, 0, BATCH));
	EXPECT_EQ(0, reader_end(&r, self->model));
	EXPECT_EQ(-ETIME, helper_fetch(&self->h, 100));
	EXPECT_LT(0, OFF(READ_NS_KERNEL));
	ASSERT_EQ(0, reader_start(&r, self->fd, BATCH, BATCH));
	b = helper_fetch(&self->h, 5000);
	ASSERT_LE(0, b);
	helper_decode(&self->h, b, R_GOOD);
	ASSERT_EQ(0, helper_commit(&self->h, b, 0, helper_desc(&self->h, b)->seq));
	EXPECT_EQ(0, reader_end(&r, self->model));
	EXPECT_LT(0, OFF(READ_NS_HELPER));
	EXPECT_EQ(BATCH, OFF(READ_HELPER));
	/* From now on, whichever is faster, the other now and then. */
	for (i = 0; i < 40; i++) {
		ASSERT_EQ(0, reader_start(&r, self->fd, BATCH, BATCH));
		while ((b = helper_fetch(&self->h, 20)) >= 0 || r.ret == -EINPROGRESS) {
			if (b < 0)
				continue;
			helper_decode(&self->h, b, R_GOOD);
			ASSERT_EQ(0, helper_commit(&self->h, b, 0, helper_desc(&self->h, b)->seq));
		}
		EXPECT_EQ(0, reader_end(&r, self->model));
	}
	EXPECT_LE(1, OFF(READ_BATCHES));
	EXPECT_EQ(0, OFF(READ_KERNEL));
	EXPECT_LT(0, OFF(READ_NS_KERNEL));
	EXPECT_LT(0, OFF(READ_NS_HELPER));
	ASSERT_EQ(0, attr_write(self->id, "offload", "off"));
	ASSERT_EQ(0, reader_start(&r, self->fd, 0, BATCH));
	EXPECT_EQ(0, reader_end(&r, self->model));
	EXPECT_EQ(-ETIME, helper_fetch(&self->h, 100));
}

/*
 * Delay points (kmod/fault.c, in modules built with HZRAM_FAULT_INJECTION=y):
 * a path sleeps at a chosen place, and the test makes another event
 * happen right there.
 */
#define DEBUGFS_HZRAM "/sys/kernel/debug/hzram/"

/* The next @times passes through @point sleep @ms. Return: 0 or -errno. */
static int delay_set(const char *point, int ms, int times)
{
	char path[128], val[32];
	int ret;

	snprintf(path, sizeof(path), DEBUGFS_HZRAM "delay_%s_times", point);
	snprintf(val, sizeof(val), "%d", times);
	ret = attr_write_path(path, val);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), DEBUGFS_HZRAM "delay_%s", point);
	snprintf(val, sizeof(val), "%d", ms);
	return attr_write_path(path, val);
}

static long delay_hits(const char *point)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), DEBUGFS_HZRAM "delay_%s_hits", point);
	return attr_read_path(path, buf, sizeof(buf)) > 0 ? atol(buf) : -1;
}

/* Wait up to 10 s for a path to sleep at @point: hits above @before. */
static int delay_reached(const char *point, long before)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (delay_hits(point) > before)
			return 0;
		usleep(10 * 1000);
	}
	return -ETIME;
}

#define DELAY_OR_SKIP(point, ms, times) do {				\
	if (delay_set(point, ms, times) == -ENOENT)			\
		SKIP(return, "no delay points: module built without "	\
		     "HZRAM_FAULT_INJECTION=y, or no debugfs");		\
} while (0)

/* A write of @n pages on its own thread. */
struct writer {
	pthread_t thread;
	int fd;
	uint8_t *model;
	size_t first, n;
	uint64_t seed;
	int ret;
};

static void *writer_fn(void *arg)
{
	struct writer *w = arg;

	w->ret = put(w->fd, w->model, w->first, w->n, w->seed);
	return NULL;
}

static int writer_start(struct writer *w, int fd, uint8_t *model, size_t first, size_t n,
			uint64_t seed)
{
	*w = (struct writer){ .fd = fd, .model = model, .first = first, .n = n, .seed = seed,
			      .ret = -EINPROGRESS };
	return -pthread_create(&w->thread, NULL, writer_fn, w);
}

static int writer_end(struct writer *w)
{
	pthread_join(w->thread, NULL);
	return w->ret;
}

/* Every batch the module hands out, encoded right, until none comes for @ms. */
static int serve_all(struct helper *h, int ms)
{
	int b, ret = 0;

	while (!ret && (b = helper_fetch(h, ms)) >= 0) {
		helper_encode(h, b, GOOD);
		ret = helper_commit(h, b, 0, helper_desc(h, b)->seq);
	}
	return ret;
}

/*
 * offload off while the writer that filled a batch drops its last ref.
 * The stop waits for that put, takes the batch back and counts no
 * time-out; offload on again, the next batch opens and goes to the
 * helper, and every page reads back. Before the last ref and the state
 * change were one step, the stop took the batch in that gap and the late
 * put queued it again, by then reopened for new writes: an OPEN batch
 * handed to the helper, slots staged in cells reused, reads of other
 * pages' data, a batch linked twice.
 */
TEST_F(off, stop_during_last_put)
{
	struct writer w;
	long hits = delay_hits("put");

	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	DELAY_OR_SKIP("put", 500, 1);
	ASSERT_EQ(0, writer_start(&w, self->fd, self->model, 0, BATCH, 1));
	ASSERT_EQ(0, delay_reached("put", hits));
	ASSERT_EQ(0, attr_write(self->id, "offload", "off"));
	ASSERT_EQ(0, attr_write(self->id, "offload", "auto"));
	/* A batch opens for these while the first put may still sleep. */
	ASSERT_EQ(0, put(self->fd, self->model, BATCH, 10, 2));
	ASSERT_EQ(0, writer_end(&w));
	usleep(100 * 1000);
	ASSERT_EQ(0, put(self->fd, self->model, BATCH + 10, BATCH - 10, 3));
	ASSERT_EQ(0, serve_all(&self->h, 300));
	ASSERT_EQ(0, put(self->fd, self->model, 2 * BATCH, 2 * BATCH, 4));
	ASSERT_EQ(0, serve_all(&self->h, 300));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
	EXPECT_EQ(0, OFF(STAGED));
	EXPECT_EQ(0, OFF(TIMEOUTS));
	EXPECT_EQ(BATCH, OFF(KERNEL_GONE));
	EXPECT_EQ(3 * BATCH, OFF(PAGES_HELPER));
	EXPECT_REASONS_ADD_UP();
}

/*
 * offload_batch_pages and offload_min_pages change while a helper
 * attaches: the helper gets arenas of the size in force when it is
 * linked, and batches reach it. ATTACH used to size them before, outside
 * the lock: with min_pages above the helper's batch, every batch stayed
 * in the kernel and the helper was never used.
 */
struct attacher {
	struct helper *h;
	int id;
	int ret;
};

static void *attach_fn(void *arg)
{
	struct attacher *a = arg;

	a->ret = helper_attach(a->h, a->id);
	return NULL;
}

TEST_F(off, batch_pages_change_during_attach)
{
	struct attacher a = { &self->h, self->id, -EINPROGRESS };
	long hits = delay_hits("attach");
	const struct hzram_batch_desc *d;
	pthread_t t;
	int b;

	DELAY_OR_SKIP("attach", 300, 1);
	ASSERT_EQ(0, pthread_create(&t, NULL, attach_fn, &a));
	ASSERT_EQ(0, delay_reached("attach", hits));
	ASSERT_EQ(0, attr_write(self->id, "offload_batch_pages", "128"));
	ASSERT_EQ(0, attr_write(self->id, "offload_min_pages", "100"));
	pthread_join(t, NULL);
	ASSERT_EQ(0, a.ret);
	EXPECT_EQ(128, self->h.a.batch_pages);
	ASSERT_EQ(0, put(self->fd, self->model, 0, 128, 1));
	b = helper_fetch(&self->h, 2000);
	ASSERT_LE(0, b);
	d = helper_desc(&self->h, b);
	EXPECT_EQ(128, d->nr_pages);
	helper_encode(&self->h, b, GOOD);
	ASSERT_EQ(0, helper_commit(&self->h, b, 0, d->seq));
	EXPECT_EQ(128, OFF(PAGES_HELPER));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
}

/*
 * The helper closes its file while kwork, having stored a small batch,
 * is about to look for more: the stop waits for kwork before the offload
 * is freed. (It did not: KASAN's use-after-free on the debug kernel.)
 */
TEST_F(off, helper_closes_while_kwork_runs)
{
	long hits = delay_hits("kwork");

	ASSERT_EQ(0, attr_write(self->id, "offload_flush_us", "2000"));
	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	DELAY_OR_SKIP("kwork", 500, 1);
	ASSERT_EQ(0, put(self->fd, self->model, 0, 1, 1));
	ASSERT_EQ(0, delay_reached("kwork", hits));
	helper_close(&self->h);
	self->h.fd = -1;
	/* Past the delay: kwork looks at the offload once more. */
	usleep(700 * 1000);
	EXPECT_EQ(0, OFF(HELPER));
	EXPECT_EQ(1, OFF(KERNEL_SMALL));
	EXPECT_EQ(0, OFF(STAGED));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
}

/*
 * A FETCH that finds a batch ready completes at once, as a success:
 * what is linked to it runs. (The module completes it through
 * io_uring_cmd_done() on every kernel: 6.1's io_uring, as released, took
 * a batch number returned by the handler for a failure and cancelled the
 * linked request; Debian's 6.1.y passed this test before that change too.)
 */
TEST_F(off, fetch_at_once_is_a_success)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int i, fetch = -1, nop = -1;

	ASSERT_EQ(0, helper_attach(&self->h, self->id));
	ASSERT_EQ(0, put(self->fd, self->model, 0, BATCH, 1));
	sqe = helper_sqe(&self->h, HZRAM_CMD_FETCH, 0, 0, 0, 1);
	ASSERT_NE(NULL, sqe);
	sqe->flags |= IOSQE_IO_LINK;
	sqe = io_uring_get_sqe(&self->h.ring);
	ASSERT_NE(NULL, sqe);
	io_uring_prep_nop(sqe);
	sqe->user_data = 9;
	ASSERT_EQ(2, io_uring_submit(&self->h.ring));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&self->h.ring, &cqe));
		if (cqe->user_data == 1)
			fetch = cqe->res;
		else
			nop = cqe->res;
		io_uring_cqe_seen(&self->h.ring, cqe);
	}
	ASSERT_LE(0, fetch);
	EXPECT_EQ(0, nop);
	helper_encode(&self->h, fetch, GOOD);
	ASSERT_EQ(0, helper_commit(&self->h, fetch, 0, helper_desc(&self->h, fetch)->seq));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
}

/* A helper whose main thread leaves while another serves is not dead. */
static void *serve_forever(void *arg)
{
	struct helper *h = arg;
	int b;

	for (;;) {
		b = helper_fetch(h, 60000);
		if (b < 0)
			continue;
		helper_encode(h, b, GOOD);
		helper_commit(h, b, 0, helper_desc(h, b)->seq);
	}
	return NULL;
}

TEST_F(off, leader_exits_threads_serve)
{
	int up[2], status, i;
	pthread_t t;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(up));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		static struct helper h;

		if (helper_attach(&h, self->id) ||
		    pthread_create(&t, NULL, serve_forever, &h) ||
		    write(up[1], "a", 1) != 1)
			_exit(1);
		pthread_exit(NULL);
	}
	ASSERT_EQ(1, read(up[0], &c, 1));
	/* Long enough for the monitor to look several times. */
	usleep(200 * 1000);
	ASSERT_EQ(0, put(self->fd, self->model, 0, 2 * BATCH, 1));
	for (i = 0; i < 200 && OFF(PAGES_HELPER) < 2 * BATCH; i++)
		usleep(20 * 1000);
	EXPECT_EQ(2 * BATCH, OFF(PAGES_HELPER));
	EXPECT_EQ(1, OFF(HELPER));
	EXPECT_EQ(0, OFF(DEATHS));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	for (i = 0; i < 100 && OFF(HELPER); i++)
		usleep(20 * 1000);
	EXPECT_EQ(0, OFF(HELPER));
	EXPECT_EQ(1, OFF(DEATHS));
	ASSERT_EQ(0, intact(self->fd, self->model, self->pages));
	close(up[0]);
	close(up[1]);
}

/* A device of its own, with a helper holding a batch, for the tests below. */
static int lone_device(struct helper *h, int *id)
{
	uint8_t *buf = page_alloc(BATCH);
	int fd, ret;

	*id = hot_add();
	if (*id < 0 || !buf)
		return -ENOMEM;
	ret = attr_write(*id, "offload_batch_pages", "64");
	if (!ret)
		ret = attr_write(*id, "offload_timeout_ms", "60000");
	if (!ret)
		ret = attr_write(*id, "disksize", "4M");
	if (!ret)
		ret = helper_attach(h, *id);
	fd = ret ? -1 : dev_open(*id, O_RDWR | O_DIRECT);
	if (fd >= 0) {
		text_fill(buf, BATCH * PAGE, 9);
		ret = pio(fd, buf, BATCH * PAGE, 0, 1);
		close(fd);
	} else if (!ret) {
		ret = fd;
	}
	free(buf);
	return ret;
}

static void *hot_remove_fn(void *arg)
{
	int *id = arg;

	*id = hot_remove(*id);
	return NULL;
}

/*
 * hot_remove while the helper closes its file: the removal detaches the
 * helper and the release waits for it, then frees the offload. The
 * removal used to let go of the lock between finding the helper and
 * detaching it, and the release could free it in between.
 */
TEST(hot_remove_while_helper_closes)
{
	long hits = delay_hits("unlink");
	struct helper h;
	pthread_t t;
	int id, res;

	ASSERT_EQ(0, lone_device(&h, &id));
	ASSERT_LE(0, helper_fetch(&h, 2000));
	if (delay_set("unlink", 300, 1) == -ENOENT) {
		helper_close(&h);
		EXPECT_EQ(0, hot_remove(id));
		SKIP(return, "no delay points");
	}
	res = id;
	ASSERT_EQ(0, pthread_create(&t, NULL, hot_remove_fn, &res));
	ASSERT_EQ(0, delay_reached("unlink", hits));
	helper_close(&h);
	pthread_join(t, NULL);
	EXPECT_EQ(0, res);
}

/*
 * The device goes while the helper is killed with FETCHes queued: each
 * FETCH completes once, by the detach or by the ring's cancelation (6.7
 * and later), never by both. The detach used to complete them from a
 * list taken off under the lock, which the cancel handler still saw as
 * queued.
 */
TEST(fetches_failed_while_helper_killed)
{
	long hits = delay_hits("fail_fetches");
	int id, res, up[2], status, i;
	pthread_t t;
	pid_t pid;
	char c;

	if (delay_hits("fail_fetches") < 0)
		SKIP(return, "no delay points");
	id = hot_add();
	ASSERT_LE(0, id);
	ASSERT_EQ(0, attr_write(id, "disksize", "4M"));
	ASSERT_EQ(0, pipe(up));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct helper h;

		if (helper_attach(&h, id))
			_exit(1);
		for (i = 0; i < 4; i++)
			helper_sqe(&h, HZRAM_CMD_FETCH, 0, 0, 0, 1);
		if (io_uring_submit(&h.ring) != 4 || write(up[1], "a", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(up[0], &c, 1));
	ASSERT_EQ(0, delay_set("fail_fetches", 300, 1));
	res = id;
	ASSERT_EQ(0, pthread_create(&t, NULL, hot_remove_fn, &res));
	ASSERT_EQ(0, delay_reached("fail_fetches", hits));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	pthread_join(t, NULL);
	EXPECT_EQ(0, res);
	close(up[0]);
	close(up[1]);
}

TEST(other_algorithm)
{
	uint64_t v[HZRAM_OFF_NR_FIELDS];
	struct helper h;
	uint8_t *page;
	int id = hot_add(), fd;

	ASSERT_LE(0, id);
	ASSERT_EQ(0, attr_write(id, "comp_algorithm", "lzo-rle"));
	ASSERT_EQ(0, attr_write(id, "disksize", "1M"));
	EXPECT_EQ(-EOPNOTSUPP, helper_attach(&h, id));
	ASSERT_EQ(0, attr_write(id, "reset", "1"));
	/* Attached before init: inactive with lzo-rle, and says so. */
	ASSERT_EQ(0, helper_attach(&h, id));
	ASSERT_EQ(0, attr_write(id, "comp_algorithm", "lzo-rle"));
	ASSERT_EQ(0, attr_write(id, "disksize", "1M"));
	fd = dev_open(id, O_RDWR | O_DIRECT);
	ASSERT_LE(0, fd);
	page = page_alloc(4);
	ASSERT_NE(NULL, page);
	text_fill(page, 4 * PAGE, 7);
	ASSERT_EQ(0, pio(fd, page, 4 * PAGE, 0, 1));
	close(fd);
	free(page);
	ASSERT_EQ(0, off_stat(id, v));
	EXPECT_EQ(1, v[HZRAM_OFF_HELPER]);
	EXPECT_EQ(0, v[HZRAM_OFF_ACTIVE]);
	EXPECT_EQ(4, v[HZRAM_OFF_NOT_LZ4]);
	EXPECT_EQ(0, v[HZRAM_OFF_STAGED]);
	helper_close(&h);
	EXPECT_EQ(0, hot_remove(id));
}

TEST(offload_params)
{
	int id = hot_add();
	char buf[32];

	ASSERT_LE(0, id);
	EXPECT_EQ(-EINVAL, attr_write(id, "offload_batch_pages", "0"));
	EXPECT_EQ(-EINVAL, attr_write(id, "offload_batch_pages", "4097"));
	EXPECT_EQ(-EINVAL, attr_write(id, "offload_batch_pages", "x"));
	EXPECT_EQ(-EINVAL, attr_write(id, "offload_min_pages", "300"));	/* > batch */
	EXPECT_EQ(-EINVAL, attr_write(id, "offload_batch_pages", "16"));	/* < min */
	EXPECT_EQ(-EINVAL, attr_write(id, "offload_flush_us", "0"));
	EXPECT_EQ(-EINVAL, attr_write(id, "offload_timeout_ms", "5"));
	EXPECT_EQ(-EINVAL, attr_write(id, "offload_verify", "maybe"));
	EXPECT_EQ(-EINVAL, attr_write(id, "offload_read_min_pages", "4097"));
	EXPECT_EQ(-EINVAL, attr_write(id, "offload_read_min_pages", "-1"));
	ASSERT_EQ(3, attr_read(id, "offload_read_min_pages", buf, sizeof(buf)));
	EXPECT_STREQ("32\n", buf);
	EXPECT_EQ(0, attr_write(id, "offload_read_min_pages", "0"));
	EXPECT_EQ(0, attr_write(id, "offload_verify", "0"));
	ASSERT_EQ(2, attr_read(id, "offload_verify", buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
	ASSERT_EQ(4, attr_read(id, "offload_batch_pages", buf, sizeof(buf)));
	EXPECT_STREQ("256\n", buf);
	EXPECT_EQ(0, hot_remove(id));
}

/* Ways to answer a recompression batch: right, or wrong. */
enum zmode { Z_GOOD, Z_OTHER_PAGE, Z_CORRUPT, Z_LZ4_KIND, Z_BAD_LENGTH, Z_FLAGS, Z_NONE };

/*
 * Compress recompression batch @batch's pages with zstd at its level into
 * its output slot, in mode @m. Return: how many pages have frames (a
 * page that does not shrink has none: kind 0).
 */
static uint32_t helper_recompress(struct helper *h, int batch, enum zmode m)
{
	const struct hzram_batch_desc *d = helper_desc(h, batch);
	const uint8_t *pages = h->ro + h->a.staging_offset + d->staging_offset;
	struct hzram_page_record *rec = (void *)(h->rw + d->output_offset);
	uint8_t *data = (uint8_t *)(rec + h->a.batch_pages);
	uint32_t i, framed = 0;

	for (i = 0; i < d->nr_pages; i++) {
		/* Z_OTHER_PAGE: a valid frame, of the next page. */
		const uint8_t *src = pages + (size_t)((m == Z_OTHER_PAGE ? i + 1 : i) %
						      d->nr_pages) * PAGE;
		size_t n = ZSTD_compress(data + (size_t)i * PAGE, PAGE - 1, src, PAGE, d->level);

		rec[i] = (struct hzram_page_record){ 0 };
		if (ZSTD_isError(n))
			continue;
		framed++;
		rec[i] = (struct hzram_page_record){ .value = (uint64_t)i * PAGE, .length = n,
						     .kind = HZRAM_PAGE_ZSTD };
		switch (m) {
		case Z_GOOD: case Z_OTHER_PAGE: break;
		case Z_CORRUPT: data[(size_t)i * PAGE + n / 2] ^= 0x5a; break;
		case Z_LZ4_KIND: rec[i].kind = HZRAM_PAGE_LZ4; break;
		case Z_BAD_LENGTH: rec[i].length = PAGE; break;
		case Z_FLAGS: rec[i].flags = 1; break;
		case Z_NONE: rec[i].kind = 0; break;
		}
	}
	return framed;
}

/* A recompress on its own thread: it waits for the helper. */
struct recompressor {
	pthread_t thread;
	int id;
	const char *how;
	int ret;
};

static void *recompress_fn(void *arg)
{
	struct recompressor *r = arg;

	r->ret = attr_write(r->id, "recompress", r->how);
	return NULL;
}

/*
 * A device whose recompression algorithm is zstd at level 5, with a
 * helper that compresses and recompresses, and @n pages of text written
 * through it, all idle; without @h, no helper, the pages written.
 */
static int recomp_device_at(struct helper *h, int *id, int *fd, uint8_t *model, size_t n,
			    const char *params)
{
	int ret;

	*fd = -1;
	*id = hot_add();
	if (*id < 0)
		return *id;
	ret = attr_write(*id, "offload_batch_pages", "64");
	if (!ret)
		ret = attr_write(*id, "offload_min_pages", "8");
	if (!ret)
		ret = attr_write(*id, "offload_flush_us", "1000000");
	if (!ret)
		ret = attr_write(*id, "offload_timeout_ms", "60000");
	if (!ret)
		ret = attr_write(*id, "recomp_algorithm", "algo=zstd");
	if (!ret)
		ret = attr_write(*id, "algorithm_params", params);
	if (!ret)
		ret = attr_write(*id, "disksize", "4M");
	if (!ret && h)
		ret = helper_attach_features(h, *id, HZRAM_FEAT_COMPRESS | HZRAM_FEAT_RECOMPRESS);
	if (!ret && h && h->a.features != (HZRAM_FEAT_COMPRESS | HZRAM_FEAT_RECOMPRESS))
		ret = -EPROTO;
	if (!ret) {
		*fd = dev_open(*id, O_RDWR | O_DIRECT);
		ret = *fd < 0 ? *fd : 0;
	}
	if (!ret)
		ret = h ? put_through_helper(h, *fd, model, n, 21) : put(*fd, model, 0, n, 21);
	if (!ret)
		ret = attr_write(*id, "idle", "all");
	return ret;
}

static int recomp_device(struct helper *h, int *id, int *fd, uint8_t *model, size_t n)
{
	return recomp_device_at(h, id, fd, model, n, "priority=1 level=5");
}

/*
 * recompress with a helper that recompresses: the pages go to it in
 * batches (HZRAM_OP_RECOMPRESS, the level in the descriptor); every way
 * of answering wrong (a frame of another page, a corrupt frame, the wrong
 * kind, a bad length, flags) is refused and counted, "not encoded" is
 * not, and the module recompresses those pages itself; the device reads
 * back as written, and every page was tried once.
 */
TEST(recompress_through_the_helper)
{
	static const enum zmode modes[] = { Z_GOOD, Z_OTHER_PAGE, Z_CORRUPT, Z_LZ4_KIND,
					    Z_BAD_LENGTH, Z_FLAGS, Z_NONE };
	const size_t n = 7 * BATCH;
	uint64_t v[HZRAM_OFF_NR_FIELDS], rs[HZRAM_RECOMP_NR_FIELDS];
	uint64_t helper = 0, kernel = 0, rejected = 0, verify = 0;
	struct recompressor r = { .how = "type=idle" };
	uint8_t *model = page_alloc(1024);
	struct helper h;
	unsigned int i;
	int fd, id;

	ASSERT_NE(NULL, model);
	ASSERT_EQ(0, recomp_device(&h, &id, &fd, model, n));
	r.id = id;
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, recompress_fn, &r));
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const struct hzram_batch_desc *d;
		uint32_t framed;
		int b = helper_fetch(&h, 10000);

		ASSERT_LE(0, b) TH_LOG("batch %u", i);
		d = helper_desc(&h, b);
		EXPECT_EQ(HZRAM_OP_RECOMPRESS, d->op);
		EXPECT_EQ(5, d->level);
		EXPECT_EQ(BATCH, d->nr_pages);
		framed = helper_recompress(&h, b, modes[i]);
		EXPECT_EQ(BATCH, framed);	/* text: every page shrinks */
		ASSERT_EQ(0, helper_commit(&h, b, 0, d->seq));
		if (modes[i] == Z_GOOD)
			helper += framed;
		else
			kernel += d->nr_pages;
		if (modes[i] == Z_OTHER_PAGE || modes[i] == Z_CORRUPT)
			verify += framed;
		else if (modes[i] != Z_GOOD && modes[i] != Z_NONE)
			rejected += framed;
	}
	pthread_join(r.thread, NULL);
	EXPECT_EQ(0, r.ret);
	ASSERT_EQ(0, off_stat(id, v));
	EXPECT_EQ(i, v[HZRAM_OFF_RECOMP_BATCHES]);
	EXPECT_EQ(helper, v[HZRAM_OFF_RECOMP_HELPER]);
	EXPECT_EQ(kernel, v[HZRAM_OFF_RECOMP_KERNEL]);
	EXPECT_EQ(rejected, v[HZRAM_OFF_REJECTED]);
	EXPECT_EQ(verify, v[HZRAM_OFF_VERIFY_FAILED]);
	EXPECT_EQ(0, v[HZRAM_OFF_TIMEOUTS]);
	ASSERT_EQ(HZRAM_RECOMP_NR_FIELDS,
		  attr_read_u64s(id, "recomp_stat", rs, HZRAM_RECOMP_NR_FIELDS));
	EXPECT_EQ(n, rs[HZRAM_RECOMP_TRIED]);
	EXPECT_LT(0, rs[HZRAM_RECOMP_PAGES]);
	/* Nothing more to send. */
	EXPECT_EQ(-ETIME, helper_fetch(&h, 200));
	EXPECT_EQ(0, intact(fd, model, 1024));
	close(fd);
	helper_close(&h);
	free(model);
	EXPECT_EQ(0, hot_remove(id));
}

/*
 * A recompression batch the helper keeps past offload_timeout_ms is taken
 * back: the module recompresses its pages, and every page left, itself;
 * the late commit is refused. A helper that did not ask for
 * HZRAM_FEAT_RECOMPRESS is sent none.
 */
TEST(recompress_batch_taken_back)
{
	uint64_t v[HZRAM_OFF_NR_FIELDS], rs[HZRAM_RECOMP_NR_FIELDS];
	struct recompressor r = { .how = "type=idle" };
	uint8_t *model = page_alloc(1024);
	const size_t n = 4 * BATCH;
	struct helper h;
	int b, fd, id;

	ASSERT_NE(NULL, model);
	ASSERT_EQ(0, recomp_device(&h, &id, &fd, model, n));
	ASSERT_EQ(0, attr_write(id, "offload_timeout_ms", "300"));
	r.id = id;
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, recompress_fn, &r));
	b = helper_fetch(&h, 10000);
	ASSERT_LE(0, b);
	EXPECT_EQ(HZRAM_OP_RECOMPRESS, helper_desc(&h, b)->op);
	pthread_join(r.thread, NULL);
	EXPECT_EQ(0, r.ret);
	helper_recompress(&h, b, Z_GOOD);
	EXPECT_EQ(-ESTALE, helper_commit(&h, b, 0, helper_desc(&h, b)->seq));
	ASSERT_EQ(0, off_stat(id, v));
	/* Two batches were out; both came back late, and nothing was sent after. */
	EXPECT_EQ(2, v[HZRAM_OFF_TIMEOUTS]);
	EXPECT_EQ(0, v[HZRAM_OFF_RECOMP_BATCHES]);
	EXPECT_EQ(0, v[HZRAM_OFF_RECOMP_HELPER]);
	EXPECT_EQ(2 * BATCH, v[HZRAM_OFF_RECOMP_KERNEL]);
	ASSERT_EQ(HZRAM_RECOMP_NR_FIELDS,
		  attr_read_u64s(id, "recomp_stat", rs, HZRAM_RECOMP_NR_FIELDS));
	EXPECT_EQ(n, rs[HZRAM_RECOMP_TRIED]);
	EXPECT_EQ(0, intact(fd, model, 1024));
	close(fd);
	helper_close(&h);

	/* A helper without the feature: the module recompresses alone. */
	ASSERT_EQ(0, attr_write(id, "idle", "all"));
	ASSERT_EQ(0, helper_attach(&h, id));
	ASSERT_EQ(0, attr_write(id, "recompress", "type=idle"));
	EXPECT_EQ(-ETIME, helper_fetch(&h, 200));
	EXPECT_EQ(0, intact(fd = dev_open(id, O_RDWR | O_DIRECT), model, 1024));
	close(fd);
	helper_close(&h);
	free(model);
	EXPECT_EQ(0, hot_remove(id));
}

/* Serve recompression batches right until @r is done. */
static int serve_recompression(struct helper *h, struct recompressor *r, uint64_t *pages)
{
	int b, ret = 0;

	*pages = 0;
	while (!ret && (b = helper_fetch(h, 300)) != -ENODEV) {
		if (b < 0) {
			if (!pthread_tryjoin_np(r->thread, NULL))
				return 0;
			continue;
		}
		if (helper_desc(h, b)->op != HZRAM_OP_RECOMPRESS)
			return -EPROTO;
		*pages += helper_desc(h, b)->nr_pages;
		helper_recompress(h, b, Z_GOOD);
		ret = helper_commit(h, b, 0, helper_desc(h, b)->seq);
	}
	pthread_join(r->thread, NULL);
	return ret;
}

static uint64_t recomp_tried(int id)
{
	uint64_t rs[HZRAM_RECOMP_NR_FIELDS];

	return attr_read_u64s(id, "recomp_stat", rs, HZRAM_RECOMP_NR_FIELDS) ==
	       HZRAM_RECOMP_NR_FIELDS ? rs[HZRAM_RECOMP_TRIED] : ~0ull;
}

/*
 * Pages changed while their batch is out: one overwritten, one discarded,
 * one read. The helper's frames of those three are not kept (the first
 * two would bring back the old data, the third is no longer idle), nor
 * counted as recompressed or tried; the others are. Then max_pages: a
 * recompress of at most 10 pages sends 10 and tries 10.
 */
TEST(recompression_beside_writes_discards_and_reads)
{
	uint64_t range[2] = { 2 * PAGE, PAGE }, v[HZRAM_OFF_NR_FIELDS], pages;
	struct recompressor r = { .how = "type=idle" };
	uint8_t *model = page_alloc(1024), *got = page_alloc(1);
	struct helper h;
	int b, fd, id;

	ASSERT_NE(NULL, model);
	ASSERT_NE(NULL, got);
	ASSERT_EQ(0, recomp_device(&h, &id, &fd, model, BATCH));
	r.id = id;
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, recompress_fn, &r));
	b = helper_fetch(&h, 10000);
	ASSERT_LE(0, b);
	ASSERT_EQ(BATCH, helper_desc(&h, b)->nr_pages);
	helper_recompress(&h, b, Z_GOOD);
	/* Served by the helper: staged, as any write while it is attached. */
	text_fill(model + PAGE, PAGE, 77);
	ASSERT_EQ(0, pio(fd, model + PAGE, PAGE, PAGE, 1));
	ASSERT_EQ(0, ioctl(fd, BLKDISCARD, range));
	memset(model + 2 * PAGE, 0, PAGE);
	ASSERT_EQ(0, pio(fd, got, PAGE, 3 * PAGE, 0));
	ASSERT_EQ(0, helper_commit(&h, b, 0, helper_desc(&h, b)->seq));
	pthread_join(r.thread, NULL);
	EXPECT_EQ(0, r.ret);
	ASSERT_EQ(0, off_stat(id, v));
	EXPECT_EQ(BATCH - 3, v[HZRAM_OFF_RECOMP_HELPER]);
	EXPECT_EQ(0, v[HZRAM_OFF_RECOMP_KERNEL]);
	EXPECT_EQ(BATCH - 3, recomp_tried(id));
	/* The overwrite's batch, to the helper, then stored. */
	while ((b = helper_fetch(&h, 300)) >= 0) {
		helper_encode(&h, b, GOOD);
		ASSERT_EQ(0, helper_commit(&h, b, 0, helper_desc(&h, b)->seq));
	}
	EXPECT_EQ(0, intact(fd, model, 1024));

	/* Fresh pages, at most 10 of them. */
	ASSERT_EQ(0, put_through_helper(&h, fd, model, BATCH, 31));
	ASSERT_EQ(0, attr_write(id, "idle", "all"));
	r.how = "type=idle max_pages=10";
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, recompress_fn, &r));
	ASSERT_EQ(0, serve_recompression(&h, &r, &pages));
	EXPECT_EQ(0, r.ret);
	EXPECT_EQ(10, pages);
	EXPECT_EQ(BATCH - 3 + 10, recomp_tried(id));
	EXPECT_EQ(0, intact(fd, model, 1024));
	close(fd);
	helper_close(&h);
	free(model);
	free(got);
	EXPECT_EQ(0, hot_remove(id));
}

/*
 * The writer of recompress killed while the helper holds its batch
 * (offload_timeout_ms 60 s): it is gone at once, its batch taken back
 * and its pages no longer chosen: the next recompress sends them all.
 */
TEST(recompress_writer_killed)
{
	uint8_t *model = page_alloc(1024);
	struct recompressor r = { .how = "type=idle" };
	struct timespec t0, t1;
	const size_t n = 3 * BATCH;
	int b, fd, id, status;
	uint64_t pages;
	struct helper h;
	pid_t pid;

	ASSERT_NE(NULL, model);
	ASSERT_EQ(0, recomp_device(&h, &id, &fd, model, n));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(attr_write(id, "recompress", "type=idle") ? 1 : 0);
	b = helper_fetch(&h, 10000);
	ASSERT_LE(0, b);
	ASSERT_EQ(HZRAM_OP_RECOMPRESS, helper_desc(&h, b)->op);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_GT(5, t1.tv_sec - t0.tv_sec) TH_LOG("the killed writer took %ld s",
						  (long)(t1.tv_sec - t0.tv_sec));
	helper_recompress(&h, b, Z_GOOD);
	EXPECT_EQ(-ESTALE, helper_commit(&h, b, 0, helper_desc(&h, b)->seq));
	EXPECT_EQ(0, recomp_tried(id));
	/* The other batch sent, not fetched: taken back too. */
	EXPECT_EQ(-ETIME, helper_fetch(&h, 200));
	ASSERT_EQ(0, attr_write(id, "idle", "all"));
	r.id = id;
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, recompress_fn, &r));
	ASSERT_EQ(0, serve_recompression(&h, &r, &pages));
	EXPECT_EQ(0, r.ret);
	EXPECT_EQ(n, pages);
	EXPECT_EQ(n, recomp_tried(id));
	EXPECT_EQ(0, intact(fd, model, 1024));
	close(fd);
	helper_close(&h);
	free(model);
	EXPECT_EQ(0, hot_remove(id));
}

/*
 * The helper (compress, decode, recompress) is killed while it holds a
 * recompression batch and a read batch, offload_timeout_ms 60 s: both
 * are taken back as its death is seen, not at the time-out. The read
 * completes at once, though the detach waits for recompress (which holds
 * init_lock), and recompress ends, doing the rest itself.
 */
TEST(helper_killed_holding_recompression_and_read)
{
	const uint32_t all = HZRAM_FEAT_COMPRESS | HZRAM_FEAT_DECOMPRESS | HZRAM_FEAT_RECOMPRESS;
	struct recompressor r = { .how = "type=idle" };
	uint8_t *model = page_alloc(1024);
	uint64_t v[HZRAM_OFF_NR_FIELDS];
	struct timespec t0, t1;
	int fd, id, up[2], status;
	struct reader rd;
	pid_t pid;
	char c;

	ASSERT_NE(NULL, model);
	ASSERT_EQ(0, recomp_device(NULL, &id, &fd, model, 4 * BATCH));
	/* The pages were written before: no checksums to check reads by. */
	ASSERT_EQ(0, attr_write(id, "offload_verify", "0"));
	ASSERT_EQ(0, attr_write(id, "offload", "on"));
	ASSERT_EQ(0, attr_write(id, "offload_read_min_pages", "16"));
	ASSERT_EQ(0, pipe(up));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct helper h;
		int got = 0, b;

		if (helper_attach_features(&h, id, all) || h.a.features != all ||
		    write(up[1], "a", 1) != 1)
			_exit(1);
		/* Hold one batch of each kind. */
		while (got != 3 && (b = helper_fetch(&h, 10000)) >= 0)
			got |= helper_desc(&h, b)->op == HZRAM_OP_RECOMPRESS ? 1 :
			       helper_desc(&h, b)->op == HZRAM_OP_DECOMPRESS ? 2 : 0;
		if (got != 3 || write(up[1], "b", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(up[0], &c, 1));
	r.id = id;
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, recompress_fn, &r));
	ASSERT_EQ(0, reader_start(&rd, fd, 3 * BATCH, BATCH / 2));
	ASSERT_EQ(1, read(up[0], &c, 1));
	ASSERT_EQ('b', c);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, reader_end(&rd, model));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_GT(5, t1.tv_sec - t0.tv_sec) TH_LOG("the read took %ld s after the kill",
						  (long)(t1.tv_sec - t0.tv_sec));
	pthread_join(r.thread, NULL);
	EXPECT_EQ(0, r.ret);
	ASSERT_EQ(0, off_stat(id, v));
	EXPECT_EQ(1, v[HZRAM_OFF_DEATHS]);
	EXPECT_EQ(0, v[HZRAM_OFF_TIMEOUTS]);
	EXPECT_LT(0, v[HZRAM_OFF_READ_KERNEL]);
	EXPECT_LT(0, recomp_tried(id));
	EXPECT_EQ(0, intact(fd, model, 1024));
	close(fd);
	close(up[0]);
	close(up[1]);
	free(model);
	EXPECT_EQ(0, hot_remove(id));
}

/*
 * The helper detaches (HZRAM_IOC_DETACH) while it holds a recompression
 * batch, offload_timeout_ms 60 s: the batch comes back at once, the
 * recompress does the rest itself, and the detach, which waits for it,
 * returns within seconds; no time-out.
 */
TEST(detach_holding_a_recompression_batch)
{
	struct recompressor r = { .how = "type=idle" };
	uint8_t *model = page_alloc(1024);
	uint64_t v[HZRAM_OFF_NR_FIELDS];
	struct timespec t0, t1;
	struct helper h;
	int b, fd, id;

	ASSERT_NE(NULL, model);
	ASSERT_EQ(0, recomp_device(&h, &id, &fd, model, 4 * BATCH));
	r.id = id;
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, recompress_fn, &r));
	b = helper_fetch(&h, 10000);
	ASSERT_LE(0, b);
	ASSERT_EQ(HZRAM_OP_RECOMPRESS, helper_desc(&h, b)->op);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, ioctl(h.fd, HZRAM_IOC_DETACH));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_GT(5, t1.tv_sec - t0.tv_sec) TH_LOG("the detach took %ld s",
						  (long)(t1.tv_sec - t0.tv_sec));
	pthread_join(r.thread, NULL);
	EXPECT_EQ(0, r.ret);
	EXPECT_EQ(-ENODEV, helper_commit(&h, b, 0, helper_desc(&h, b)->seq));
	ASSERT_EQ(0, off_stat(id, v));
	EXPECT_EQ(0, v[HZRAM_OFF_TIMEOUTS]);
	EXPECT_EQ(0, v[HZRAM_OFF_HELPER]);
	EXPECT_EQ(4 * BATCH, recomp_tried(id));
	EXPECT_EQ(0, intact(fd, model, 1024));
	close(fd);
	helper_close(&h);
	free(model);
	EXPECT_EQ(0, hot_remove(id));
}

/*
 * A read batch whose reader lets go of it just after the helper is seen
 * dead (the last put held at a delay point while the helper is killed),
 * with a recompress under way that delays the detach: the batch goes to
 * the module at its put, not to a READY list nobody serves, and the read
 * ends at once rather than with the recompress.
 */
/* For the slow tests below: their own limit, nothing else. */
FIXTURE(slow) {
	int unused;
};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

TEST_F_TIMEOUT(slow, read_batch_put_after_the_helper_died, 300)
{
	const uint32_t all = HZRAM_FEAT_COMPRESS | HZRAM_FEAT_DECOMPRESS | HZRAM_FEAT_RECOMPRESS;
	struct recompressor r = { .how = "type=idle max_pages=512" };
	uint8_t *model = page_alloc(1024);
	uint64_t v[HZRAM_OFF_NR_FIELDS];
	struct timespec t0, t1;
	int fd, id, up[2], status;
	long hits = delay_hits("put");
	struct reader rd;
	pid_t pid;
	char c;

	if (hits < 0)
		SKIP(return, "no delay points");
	ASSERT_NE(NULL, model);
	/*
	 * 512 pages at zstd's level 19: the recompress, in the kernel once
	 * the helper died, holds init_lock long after the read's put.
	 */
	ASSERT_EQ(0, recomp_device_at(NULL, &id, &fd, model, 1024, "priority=1 level=19"));
	ASSERT_EQ(0, attr_write(id, "offload_verify", "0"));
	ASSERT_EQ(0, attr_write(id, "offload", "on"));
	ASSERT_EQ(0, attr_write(id, "offload_read_min_pages", "16"));
	ASSERT_EQ(0, pipe(up));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct helper h;
		int b;

		if (helper_attach_features(&h, id, all) || write(up[1], "a", 1) != 1)
			_exit(1);
		/* Hold a recompression batch. */
		while ((b = helper_fetch(&h, 10000)) >= 0 &&
		       helper_desc(&h, b)->op != HZRAM_OP_RECOMPRESS)
			;
		if (write(up[1], b >= 0 ? "b" : "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(up[0], &c, 1));
	r.id = id;
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, recompress_fn, &r));
	ASSERT_EQ(1, read(up[0], &c, 1));
	ASSERT_EQ('b', c);
	ASSERT_EQ(0, delay_set("put", 1000, 1));
	ASSERT_EQ(0, reader_start(&rd, fd, 0, BATCH / 2));
	ASSERT_EQ(0, delay_reached("put", hits));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	EXPECT_EQ(0, reader_end(&rd, model));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Not with the recompress: it is still under way. */
	EXPECT_EQ(EBUSY, pthread_tryjoin_np(r.thread, NULL)) TH_LOG("the read waited for recompress");
	EXPECT_GT(5, t1.tv_sec - t0.tv_sec) TH_LOG("the read took %ld s after the kill",
						  (long)(t1.tv_sec - t0.tv_sec));
	/* Its exit detaches it, which waits for the recompress. */
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	pthread_join(r.thread, NULL);
	EXPECT_EQ(0, r.ret);
	ASSERT_EQ(0, off_stat(id, v));
	EXPECT_EQ(0, v[HZRAM_OFF_TIMEOUTS]);
	EXPECT_EQ(0, v[HZRAM_OFF_READ_BATCHES]);
	EXPECT_EQ(BATCH / 2, v[HZRAM_OFF_READ_KERNEL]);
	EXPECT_EQ(0, intact(fd, model, 1024));
	close(fd);
	close(up[0]);
	close(up[1]);
	free(model);
	EXPECT_EQ(0, hot_remove(id));
}

TEST_HARNESS_MAIN
