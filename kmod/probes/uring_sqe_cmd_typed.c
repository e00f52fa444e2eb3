// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring_sqe_cmd(sqe, type) takes the payload's type and checks its size
 * (7.0).
 */
#if __has_include(<linux/io_uring/cmd.h>)
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

struct hzram_probe_payload {
	u64 a;
};

static u64 __maybe_unused hzram_probe(struct io_uring_cmd *cmd)
{
	const struct hzram_probe_payload *p =
		io_uring_sqe_cmd(cmd->sqe, struct hzram_probe_payload);

	return p->a;
}
