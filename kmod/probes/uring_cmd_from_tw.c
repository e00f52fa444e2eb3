// SPDX-License-Identifier: GPL-2.0
/*
 * A task-work callback of io_uring_cmd_complete_in_task() takes the
 * io_uring request (struct io_tw_req) and a token, and finds its command
 * with io_uring_cmd_from_tw() (6.19); before, it took the command and the
 * issue flags.
 */
#if __has_include(<linux/io_uring/cmd.h>)
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

static struct io_uring_cmd *hzram_probe_cmd;
static unsigned int hzram_probe_flags;

static void hzram_probe_tw(struct io_tw_req tw_req, io_tw_token_t tw)
{
	hzram_probe_cmd = io_uring_cmd_from_tw(tw_req);
	hzram_probe_flags = IO_URING_CMD_TASK_WORK_ISSUE_FLAGS;
}

static void __maybe_unused hzram_probe(struct io_uring_cmd *cmd)
{
	io_uring_cmd_complete_in_task(cmd, hzram_probe_tw);
}
