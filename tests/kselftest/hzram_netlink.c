// SPDX-License-Identifier: GPL-2.0
/*
 * hzram's generic netlink family, through libnl as hzramctl uses it: the
 * dump agrees with sysfs, a single device is found by id with the exact
 * errno otherwise, unknown attributes are ignored, and every event
 * arrives for the action that causes it, with what it carries.
 *
 * Needs the hzram module loaded. Each test works on a device of its own,
 * created through hot_add and removed afterwards.
 */
#include "hzram_test.h"

#include <inttypes.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include "kselftest_harness.h"

/* What one HZRAM_NL_CMD_GET_DEVICE or _EVENT message said. */
struct nl_dev {
	int seen;
	uint32_t id;
	char name[32];
	char alg[32];
	char offload[8];
	uint32_t event, pid, streams;
	uint64_t disksize, mem_limit;
	uint64_t mm[HZRAM_MM_NR_FIELDS], io[HZRAM_IO_NR_FIELDS];
	uint64_t dbg[HZRAM_DEBUG_NR_FIELDS], off[HZRAM_OFF_NR_FIELDS];
	int nr_mm, nr_io, nr_dbg, nr_off;
};

/* Where a dump's callback puts the device it looks for. */
struct nl_want {
	uint32_t id;
	struct nl_dev dev;
	int devices;
};

static int fields(struct nlattr *nest, uint64_t *v, int n)
{
	struct nlattr *a;
	int rem, count = 0;

	nla_for_each_nested(a, nest, rem) {
		int i = nla_type(a) - HZRAM_NL_STAT_FIRST;

		if (i >= 0 && i < n) {
			v[i] = nla_get_u64(a);
			count++;
		}
	}
	return count;
}

static void parse(struct nl_msg *msg, struct nl_dev *d)
{
	struct nlattr *tb[HZRAM_NL_A_MAX + 1];

	memset(d, 0, sizeof(*d));
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, HZRAM_NL_A_MAX, NULL))
		return;
	d->seen = 1;
	if (tb[HZRAM_NL_A_ID])
		d->id = nla_get_u32(tb[HZRAM_NL_A_ID]);
	if (tb[HZRAM_NL_A_NAME])
		nla_strlcpy(d->name, tb[HZRAM_NL_A_NAME], sizeof(d->name));
	if (tb[HZRAM_NL_A_COMP_ALGORITHM])
		nla_strlcpy(d->alg, tb[HZRAM_NL_A_COMP_ALGORITHM], sizeof(d->alg));
	if (tb[HZRAM_NL_A_OFFLOAD])
		nla_strlcpy(d->offload, tb[HZRAM_NL_A_OFFLOAD], sizeof(d->offload));
	if (tb[HZRAM_NL_A_EVENT])
		d->event = nla_get_u32(tb[HZRAM_NL_A_EVENT]);
	if (tb[HZRAM_NL_A_HELPER_PID])
		d->pid = nla_get_u32(tb[HZRAM_NL_A_HELPER_PID]);
	if (tb[HZRAM_NL_A_MAX_COMP_STREAMS])
		d->streams = nla_get_u32(tb[HZRAM_NL_A_MAX_COMP_STREAMS]);
	if (tb[HZRAM_NL_A_DISKSIZE])
		d->disksize = nla_get_u64(tb[HZRAM_NL_A_DISKSIZE]);
	if (tb[HZRAM_NL_A_MEM_LIMIT])
		d->mem_limit = nla_get_u64(tb[HZRAM_NL_A_MEM_LIMIT]);
	if (tb[HZRAM_NL_A_MM_STAT])
		d->nr_mm = fields(tb[HZRAM_NL_A_MM_STAT], d->mm, HZRAM_MM_NR_FIELDS);
	if (tb[HZRAM_NL_A_IO_STAT])
		d->nr_io = fields(tb[HZRAM_NL_A_IO_STAT], d->io, HZRAM_IO_NR_FIELDS);
	if (tb[HZRAM_NL_A_DEBUG_STAT])
		d->nr_dbg = fields(tb[HZRAM_NL_A_DEBUG_STAT], d->dbg,
				   HZRAM_DEBUG_NR_FIELDS);
	if (tb[HZRAM_NL_A_OFFLOAD_STAT])
		d->nr_off = fields(tb[HZRAM_NL_A_OFFLOAD_STAT], d->off,
				   HZRAM_OFF_NR_FIELDS);
}

static int on_device(struct nl_msg *msg, void *arg)
{
	struct nl_want *w = arg;
	struct nl_dev d;

	parse(msg, &d);
	w->devices++;
	if (d.seen && d.id == w->id)
		w->dev = d;
	return NL_OK;
}

/* A connected socket and the family's id. */
static struct nl_sock *nl_open(int *family)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk || genl_connect(sk)) {
		nl_socket_free(sk);
		return NULL;
	}
	*family = genl_ctrl_resolve(sk, HZRAM_GENL_NAME);
	if (*family < 0) {
		nl_socket_free(sk);
		return NULL;
	}
	/* A reply ends a request; errors come as they would with an ACK. */
	nl_socket_disable_auto_ack(sk);
	return sk;
}

/*
 * GET_DEVICE: dumped (@dump), or for @w->id with an attribute of a type
 * the module does not know when @unknown. Return: 0 or -errno.
 */
static int nl_get(struct nl_sock *sk, int family, struct nl_want *w, int dump,
		  int unknown)
{
	struct nl_msg *msg = nlmsg_alloc();
	int ret;

	if (!msg)
		return -ENOMEM;
	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0,
		    dump ? NLM_F_DUMP : 0, HZRAM_NL_CMD_GET_DEVICE, HZRAM_GENL_VERSION);
	if (!dump && w->id != UINT32_MAX)
		nla_put_u32(msg, HZRAM_NL_A_ID, w->id);
	if (unknown)
		nla_put_u64(msg, HZRAM_NL_A_MAX + 20, 42);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_device, w);
	ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return -EIO;
	ret = nl_recvmsgs_default(sk);
	if (ret == -NLE_OBJ_NOTFOUND || ret == -NLE_NODEV)
		return -ENODEV;
	if (ret == -NLE_INVAL)
		return -EINVAL;
	return ret < 0 ? -EIO : 0;
}

static int on_event(struct nl_msg *msg, void *arg)
{
	parse(msg, arg);
	return NL_STOP;
}

/* A socket on the "events" group. */
static struct nl_sock *events_open(void)
{
	int family, grp;
	struct nl_sock *sk = nl_open(&family);

	if (!sk)
		return NULL;
	grp = genl_ctrl_resolve_grp(sk, HZRAM_GENL_NAME, HZRAM_GENL_MCGRP_EVENTS);
	if (grp < 0 || nl_socket_add_membership(sk, grp)) {
		nl_socket_free(sk);
		return NULL;
	}
	nl_socket_disable_seq_check(sk);
	nl_socket_set_nonblocking(sk);
	return sk;
}

/*
 * The next event of device @id, waiting up to 5 s; events of other
 * devices (the other tests' or the system's) are skipped. Return: 0 and
 * *@d, or -ETIMEDOUT.
 */
static int next_event(struct nl_sock *sk, uint32_t id, struct nl_dev *d)
{
	struct pollfd p = { .fd = nl_socket_get_fd(sk), .events = POLLIN };

	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_event, d);
	for (;;) {
		d->seen = 0;
		if (nl_recvmsgs_default(sk) >= 0 && d->seen) {
			if (d->id == id)
				return 0;
			continue;
		}
		if (poll(&p, 1, 5000) != 1)
			return -ETIMEDOUT;
	}
}

FIXTURE(dev) {
	int id;
	int family;
	struct nl_sock *sk;
};

FIXTURE_SETUP(dev)
{
	self->id = hot_add();
	ASSERT_LE(0, self->id);
	self->sk = nl_open(&self->family);
	ASSERT_NE(NULL, self->sk);
}

FIXTURE_TEARDOWN(dev)
{
	nl_socket_free(self->sk);
	attr_write(self->id, "reset", "1");
	EXPECT_EQ(0, hot_remove(self->id));
}

/* Text in [brackets] of a sysfs attribute such as comp_algorithm. */
static void selected(int id, const char *attr, char *out, size_t len)
{
	char buf[256], *a, *b;

	out[0] = 0;
	if (attr_read(id, attr, buf, sizeof(buf)) < 0)
		return;
	a = strchr(buf, '[');
	b = a ? strchr(a, ']') : NULL;
	if (a && b && (size_t)(b - a) <= len) {
		memcpy(out, a + 1, b - a - 1);
		out[b - a - 1] = 0;
	}
}

static void expect_matches_sysfs(struct __test_metadata *_metadata, int id,
				 const struct nl_dev *d)
{
	uint64_t v[HZRAM_OFF_NR_FIELDS];
	char buf[64], name[32];
	int i;

	ASSERT_TRUE(d->seen);
	snprintf(name, sizeof(name), HZRAM_DEVICE_PREFIX "%d", id);
	EXPECT_STREQ(name, d->name);
	EXPECT_EQ(attr_u64(id, "disksize"), d->disksize);
	selected(id, "comp_algorithm", buf, sizeof(buf));
	EXPECT_STREQ(buf, d->alg);
	ASSERT_LT(0, attr_read(id, "offload", buf, sizeof(buf)));
	buf[strcspn(buf, "\n")] = 0;
	EXPECT_STREQ(buf, d->offload);
	EXPECT_EQ(attr_u64(id, "max_comp_streams"), d->streams);
	ASSERT_EQ(HZRAM_MM_NR_FIELDS, d->nr_mm);
	ASSERT_EQ(0, mm_stat(id, v));
	for (i = 0; i < HZRAM_MM_NR_FIELDS; i++)
		EXPECT_EQ(v[i], d->mm[i]) TH_LOG("mm_stat field %d", i);
	EXPECT_EQ(v[HZRAM_MM_MEM_LIMIT], d->mem_limit);
	ASSERT_EQ(HZRAM_IO_NR_FIELDS, d->nr_io);
	ASSERT_EQ(0, io_stat(id, v));
	for (i = 0; i < HZRAM_IO_NR_FIELDS; i++)
		EXPECT_EQ(v[i], d->io[i]) TH_LOG("io_stat field %d", i);
	ASSERT_EQ(HZRAM_DEBUG_NR_FIELDS, d->nr_dbg);
	ASSERT_LT(0, attr_read(id, "debug_stat", buf, sizeof(buf)));
	ASSERT_EQ(2, sscanf(strchr(buf, '\n'), "%" SCNu64 " %" SCNu64, &v[0], &v[1]));
	EXPECT_EQ(v[0], d->dbg[HZRAM_DEBUG_WRITESTALL]);
	EXPECT_EQ(v[1], d->dbg[HZRAM_DEBUG_MISS_FREE]);
	ASSERT_EQ(HZRAM_OFF_NR_FIELDS, d->nr_off);
	ASSERT_EQ(HZRAM_OFF_NR_FIELDS,
		  attr_read_u64s(id, "offload_stat", v, HZRAM_OFF_NR_FIELDS));
	for (i = 0; i < HZRAM_OFF_NR_FIELDS; i++)
		EXPECT_EQ(v[i], d->off[i]) TH_LOG("offload_stat field %d", i);
}

/* Write @pages pages of text at the start of the device. */
static int fill(int id, size_t pages)
{
	void *buf = page_alloc(pages);
	int fd = dev_open(id, O_RDWR | O_DIRECT);
	int ret;

	if (!buf || fd < 0)
		return -1;
	text_fill(buf, pages * PAGE, id);
	ret = pio(fd, buf, pages * PAGE, 0, 1);
	close(fd);
	free(buf);
	return ret;
}

TEST_F(dev, dump_agrees_with_sysfs)
{
	struct nl_want w = { .id = self->id };

	/* Uninitialised, then initialised with data and a limit. */
	ASSERT_EQ(0, nl_get(self->sk, self->family, &w, 1, 0));
	EXPECT_LE(1, w.devices);
	expect_matches_sysfs(_metadata, self->id, &w.dev);
	EXPECT_EQ(0, w.dev.disksize);

	ASSERT_EQ(0, attr_write(self->id, "comp_algorithm", "zstd"));
	ASSERT_EQ(0, attr_write(self->id, "disksize", "16M"));
	ASSERT_EQ(0, attr_write(self->id, "mem_limit", "64M"));
	ASSERT_EQ(0, attr_write(self->id, "offload", "off"));
	ASSERT_EQ(0, fill(self->id, 1024));
	memset(&w.dev, 0, sizeof(w.dev));
	ASSERT_EQ(0, nl_get(self->sk, self->family, &w, 1, 0));
	expect_matches_sysfs(_metadata, self->id, &w.dev);
	EXPECT_EQ(16 << 20, w.dev.disksize);
	EXPECT_EQ(1024ULL * PAGE, w.dev.mm[HZRAM_MM_ORIG_DATA_SIZE]);
	EXPECT_STREQ("zstd", w.dev.alg);
	EXPECT_STREQ("off", w.dev.offload);
}

TEST_F(dev, one_device_by_id)
{
	struct nl_want w = { .id = self->id };

	ASSERT_EQ(0, attr_write(self->id, "disksize", "4M"));
	ASSERT_EQ(0, fill(self->id, 100));
	ASSERT_EQ(0, nl_get(self->sk, self->family, &w, 0, 0));
	EXPECT_EQ(1, w.devices);
	expect_matches_sysfs(_metadata, self->id, &w.dev);
	/* Attributes the module does not know are ignored. */
	memset(&w.dev, 0, sizeof(w.dev));
	ASSERT_EQ(0, nl_get(self->sk, self->family, &w, 0, 1));
	expect_matches_sysfs(_metadata, self->id, &w.dev);
	w.id = HZRAM_MAX_DEVICES - 1;
	EXPECT_EQ(-ENODEV, nl_get(self->sk, self->family, &w, 0, 0));
	w.id = UINT32_MAX;	/* no HZRAM_NL_A_ID */
	EXPECT_EQ(-EINVAL, nl_get(self->sk, self->family, &w, 0, 0));
}

TEST_F(dev, device_events)
{
	struct nl_sock *ev = events_open();
	struct nl_dev d;
	uint64_t io[HZRAM_IO_NR_FIELDS];
	int id;

	ASSERT_NE(NULL, ev);
	id = hot_add();
	ASSERT_LE(0, id);
	ASSERT_EQ(0, next_event(ev, id, &d));
	EXPECT_EQ(HZRAM_NL_EV_DEVICE_ADDED, d.event);

	ASSERT_EQ(0, attr_write(id, "comp_algorithm", "lzo-rle"));
	ASSERT_EQ(0, attr_write(id, "disksize", "8M"));
	ASSERT_EQ(0, next_event(ev, id, &d));
	EXPECT_EQ(HZRAM_NL_EV_INITIALISED, d.event);
	EXPECT_EQ(8 << 20, d.disksize);
	EXPECT_STREQ("lzo-rle", d.alg);

	/* Past mem_limit, writes fail: both events, each once. */
	ASSERT_EQ(0, attr_write(id, "mem_limit", "64K"));
	EXPECT_NE(0, fill(id, 2048));
	ASSERT_EQ(0, next_event(ev, id, &d));
	EXPECT_EQ(HZRAM_NL_EV_MEM_LIMIT, d.event);
	EXPECT_EQ(64 << 10, d.mem_limit);
	ASSERT_EQ(0, next_event(ev, id, &d));
	EXPECT_EQ(HZRAM_NL_EV_WRITE_FAILED, d.event);
	ASSERT_EQ(0, io_stat(id, io));
	EXPECT_LE(1, d.io[HZRAM_IO_FAILED_WRITES]);
	EXPECT_GE(io[HZRAM_IO_FAILED_WRITES], d.io[HZRAM_IO_FAILED_WRITES]);

	ASSERT_EQ(0, attr_write(id, "reset", "1"));
	ASSERT_EQ(0, next_event(ev, id, &d));
	EXPECT_EQ(HZRAM_NL_EV_RESET, d.event);
	ASSERT_EQ(0, hot_remove(id));
	ASSERT_EQ(0, next_event(ev, id, &d));
	EXPECT_EQ(HZRAM_NL_EV_DEVICE_REMOVED, d.event);
	snprintf(d.alg, sizeof(d.alg), HZRAM_DEVICE_PREFIX "%d", id);
	EXPECT_STREQ(d.alg, d.name);
	nl_socket_free(ev);
}

static int attach(int id)
{
	struct hzram_attach a = {
		.size = sizeof(a),
		.version = HZRAM_UAPI_VERSION,
		.device = id,
		.features = HZRAM_FEAT_COMPRESS,
	};
	int fd = open(HZRAM_CONTROL_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0 || ioctl(fd, HZRAM_IOC_ATTACH, &a)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

TEST_F(dev, helper_events)
{
	struct nl_sock *ev = events_open();
	int fd, status;
	struct nl_dev d;
	pid_t pid;

	ASSERT_NE(NULL, ev);
	fd = attach(self->id);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, next_event(ev, self->id, &d));
	EXPECT_EQ(HZRAM_NL_EV_HELPER_ATTACHED, d.event);
	EXPECT_EQ(getpid(), d.pid);
	ASSERT_EQ(0, ioctl(fd, HZRAM_IOC_DETACH));
	ASSERT_EQ(0, next_event(ev, self->id, &d));
	EXPECT_EQ(HZRAM_NL_EV_HELPER_DETACHED, d.event);
	EXPECT_EQ(getpid(), d.pid);
	close(fd);

	/* A helper killed while attached: died, then detached. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (attach(self->id) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(0, next_event(ev, self->id, &d));
	EXPECT_EQ(HZRAM_NL_EV_HELPER_ATTACHED, d.event);
	EXPECT_EQ(pid, d.pid);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, next_event(ev, self->id, &d));
	EXPECT_EQ(HZRAM_NL_EV_HELPER_DIED, d.event);
	EXPECT_EQ(pid, d.pid);
	ASSERT_EQ(0, next_event(ev, self->id, &d));
	EXPECT_EQ(HZRAM_NL_EV_HELPER_DETACHED, d.event);
	EXPECT_EQ(pid, d.pid);
	nl_socket_free(ev);
}

/* The events are root's: joining the group needs CAP_SYS_ADMIN. */
TEST(events_need_cap_sys_admin)
{
	int status, family;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		struct nl_sock *sk;
		int grp;

		if (setuid(65534))
			_exit(2);
		sk = nl_open(&family);
		if (!sk)
			_exit(3);
		grp = genl_ctrl_resolve_grp(sk, HZRAM_GENL_NAME, HZRAM_GENL_MCGRP_EVENTS);
		if (grp < 0)
			_exit(4);
		/* The dump stays open to all; the events do not. */
		_exit(nl_socket_add_membership(sk, grp) == -NLE_PERM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
