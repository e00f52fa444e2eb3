// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring command cancelation (6.7): io_uring_cmd_mark_cancelable(), and
 * IO_URING_F_CANCEL in the issue flags of the call that cancels.
 */
#if __has_include(<linux/io_uring/cmd.h>)
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

static unsigned int __maybe_unused hzram_probe(struct io_uring_cmd *cmd,
					       unsigned int issue_flags)
{
	io_uring_cmd_mark_cancelable(cmd, issue_flags);
	return issue_flags & IO_URING_F_CANCEL;
}
