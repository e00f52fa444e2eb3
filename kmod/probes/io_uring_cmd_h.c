// SPDX-License-Identifier: GPL-2.0
/*
 * The io_uring command declarations are in <linux/io_uring/cmd.h> (6.8),
 * no longer in <linux/io_uring.h>.
 */
#include <linux/io_uring/cmd.h>

static u32 __maybe_unused hzram_probe(struct io_uring_cmd *cmd)
{
	return cmd->cmd_op;
}
