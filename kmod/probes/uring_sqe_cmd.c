// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring_sqe_cmd(sqe) returns the command's payload in the SQE (6.6 to
 * 6.19); before, it was at cmd->cmd.
 */
#if __has_include(<linux/io_uring/cmd.h>)
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

static __maybe_unused const void *hzram_probe(struct io_uring_cmd *cmd)
{
	return io_uring_sqe_cmd(cmd->sqe);
}
