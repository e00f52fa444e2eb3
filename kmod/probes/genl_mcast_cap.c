// SPDX-License-Identifier: GPL-2.0
/*
 * A generic netlink multicast group can require a capability of the
 * sockets that join it: GENL_MCAST_CAP_SYS_ADMIN in its flags (6.7, and
 * in the stable kernels from 6.1.y on).
 */
#include <net/genetlink.h>

static const struct genl_multicast_group hzram_probe_mcgrps[] __maybe_unused = {
	{ .name = "probe", .flags = GENL_MCAST_CAP_SYS_ADMIN, },
};
