// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring_cmd_done() takes a second result, res2, for 32-byte CQEs (until
 * 6.18, where io_uring_cmd_done32() took it over).
 */
#if __has_include(<linux/io_uring/cmd.h>)
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

static void __maybe_unused hzram_probe(struct io_uring_cmd *cmd, int ret,
				       unsigned int issue_flags)
{
	io_uring_cmd_done(cmd, ret, 0, issue_flags);
}
