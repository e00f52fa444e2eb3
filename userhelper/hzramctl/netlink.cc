// SPDX-License-Identifier: GPL-2.0
#include "netlink.h"

#include <linux/genetlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "format.h"

namespace hzramctl {
namespace {

// The types of the family's attributes, which libnl checks before use.
struct Policy {
  nla_policy p[HZRAM_NL_A_MAX + 1] = {};
  Policy() {
    for (int a :
         {HZRAM_NL_A_ID, HZRAM_NL_A_MAX_COMP_STREAMS, HZRAM_NL_A_EVENT, HZRAM_NL_A_HELPER_PID})
      p[a].type = NLA_U32;
    for (int a : {HZRAM_NL_A_DISKSIZE, HZRAM_NL_A_MEM_LIMIT}) p[a].type = NLA_U64;
    for (int a : {HZRAM_NL_A_NAME, HZRAM_NL_A_COMP_ALGORITHM, HZRAM_NL_A_OFFLOAD})
      p[a].type = NLA_STRING;
    for (int a :
         {HZRAM_NL_A_MM_STAT, HZRAM_NL_A_IO_STAT, HZRAM_NL_A_DEBUG_STAT, HZRAM_NL_A_OFFLOAD_STAT})
      p[a].type = NLA_NESTED;
  }
};

// The attributes of a message of the family with command @cmd: false if
// it is not one, or malformed.
bool Parse(nlmsghdr* nlh, std::uint8_t cmd, nlattr* tb[HZRAM_NL_A_MAX + 1]) {
  static Policy policy;
  if (!genlmsg_valid_hdr(nlh, 0)) return false;
  const genlmsghdr* hdr = static_cast<const genlmsghdr*>(nlmsg_data(nlh));
  return hdr->cmd == cmd && genlmsg_parse(nlh, 0, tb, HZRAM_NL_A_MAX, policy.p) == 0;
}

// A statistics nest: attribute type HZRAM_NL_STAT_FIRST + i holds field i
// (HZRAM_NL_STAT_PAD pads). Fields it lacks stay empty; those past N (a
// newer module's) are ignored.
template <std::size_t N>
void Fields(nlattr* nest, std::optional<std::uint64_t> (&v)[N]) {
  nlattr* a;
  int rem;
  nla_for_each_nested(a, nest, rem) {
    const int i = nla_type(a) - HZRAM_NL_STAT_FIRST;
    if (i >= 0 && static_cast<std::size_t>(i) < N && nla_len(a) >= 8) v[i] = nla_get_u64(a);
  }
}

template <std::size_t N>
bool Have(const std::optional<std::uint64_t> (&v)[N], std::size_t upto) {
  for (std::size_t i = 0; i <= upto && i < N; i++)
    if (!v[i]) return false;
  return upto < N;
}

// A string attribute (libnl checked that it ends with a NUL).
std::string String(const nlattr* a) {
  const char* s = nla_get_string(a);
  return std::string(s, strnlen(s, static_cast<std::size_t>(nla_len(a))));
}

std::optional<MemStat> MemStatOf(nlattr* nest) {
  std::optional<std::uint64_t> f[HZRAM_MM_NR_FIELDS];
  Fields(nest, f);
  if (!Have(f, HZRAM_MM_PAGES_COMPACTED)) return std::nullopt;
  MemStat m;
  m.orig_data_size = *f[HZRAM_MM_ORIG_DATA_SIZE];
  m.compr_data_size = *f[HZRAM_MM_COMPR_DATA_SIZE];
  m.mem_used_total = *f[HZRAM_MM_MEM_USED_TOTAL];
  m.mem_limit = *f[HZRAM_MM_MEM_LIMIT];
  m.mem_used_max = *f[HZRAM_MM_MEM_USED_MAX];
  m.same_pages = *f[HZRAM_MM_SAME_PAGES];
  m.pages_compacted = *f[HZRAM_MM_PAGES_COMPACTED];
  return m;
}

// As ParseOffloadStat() reads offload_stat.
std::optional<OffloadStat> OffloadStatOf(nlattr* nest) {
  std::optional<std::uint64_t> f[HZRAM_OFF_NR_FIELDS];
  Fields(nest, f);
  if (!Have(f, HZRAM_OFF_PAGES_HELPER)) return std::nullopt;
  OffloadStat o;
  o.helper = *f[HZRAM_OFF_HELPER] != 0;
  o.pages_helper = *f[HZRAM_OFF_PAGES_HELPER];
  if (Have(f, HZRAM_OFF_KERNEL_REFUSED))
    o.fallbacks =
        *f[HZRAM_OFF_KERNEL_TIMEOUT] + *f[HZRAM_OFF_KERNEL_GONE] + *f[HZRAM_OFF_KERNEL_REFUSED];
  return o;
}

int ErrnoOf(int nlerr) {
  switch (-nlerr) {
    case NLE_OBJ_NOTFOUND:
    case NLE_NODEV:
      return -ENODEV;
    case NLE_NOMEM:
      return -ENOMEM;
    case NLE_PERM:
    case NLE_NOACCESS:
      return -EPERM;
  }
  return -EIO;
}

class LibnlGenl final : public GenlTransport {
 public:
  LibnlGenl(nl_sock* sk, int family) : sk_(sk), family_(family) {}
  ~LibnlGenl() override { nl_socket_free(sk_); }
  LibnlGenl(const LibnlGenl&) = delete;
  LibnlGenl& operator=(const LibnlGenl&) = delete;

  int GetDevice(int id, const std::function<void(nlmsghdr*)>& on) override {
    nl_msg* msg = nlmsg_alloc();
    if (!msg) return -ENOMEM;
    if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family_, 0, id < 0 ? NLM_F_DUMP : 0,
                     HZRAM_NL_CMD_GET_DEVICE, HZRAM_GENL_VERSION) ||
        (id >= 0 && nla_put_u32(msg, HZRAM_NL_A_ID, static_cast<std::uint32_t>(id)) < 0)) {
      nlmsg_free(msg);
      return -ENOMEM;
    }
    Reply reply{family_, &on};
    nl_socket_modify_cb(sk_, NL_CB_VALID, NL_CB_CUSTOM, OnReply, &reply);
    int rc = nl_send_auto(sk_, msg);
    nlmsg_free(msg);
    // A dump ends with NLMSG_DONE, a reply with itself (no ACK asked),
    // an error with NLMSG_ERROR.
    if (rc >= 0) rc = nl_recvmsgs_default(sk_);
    nl_socket_modify_cb(sk_, NL_CB_VALID, NL_CB_DEFAULT, nullptr, nullptr);
    return rc < 0 ? ErrnoOf(rc) : 0;
  }

 private:
  struct Reply {
    int family;
    const std::function<void(nlmsghdr*)>* on;
  };
  static int OnReply(nl_msg* msg, void* arg) {
    const Reply* r = static_cast<const Reply*>(arg);
    nlmsghdr* nlh = nlmsg_hdr(msg);
    if (nlh->nlmsg_type == r->family) (*r->on)(nlh);
    return NL_OK;
  }

  nl_sock* sk_;
  int family_;
};

}  // namespace

std::optional<NlDevice> ParseDeviceMessage(nlmsghdr* nlh) {
  nlattr* tb[HZRAM_NL_A_MAX + 1];
  if (!Parse(nlh, HZRAM_NL_CMD_GET_DEVICE, tb) || !tb[HZRAM_NL_A_ID]) return std::nullopt;
  NlDevice d;
  const std::uint32_t id = nla_get_u32(tb[HZRAM_NL_A_ID]);
  if (id > INT32_MAX) return std::nullopt;
  d.id = static_cast<int>(id);
  d.info.id = d.id;
  DeviceInfo& info = d.info;
  if (tb[HZRAM_NL_A_DISKSIZE]) info.disksize = nla_get_u64(tb[HZRAM_NL_A_DISKSIZE]);
  if (tb[HZRAM_NL_A_COMP_ALGORITHM]) {
    std::string alg = String(tb[HZRAM_NL_A_COMP_ALGORITHM]);
    if (!alg.empty()) info.algorithm = std::move(alg);
  }
  if (tb[HZRAM_NL_A_MAX_COMP_STREAMS]) info.streams = nla_get_u32(tb[HZRAM_NL_A_MAX_COMP_STREAMS]);
  if (tb[HZRAM_NL_A_MM_STAT]) info.mm = MemStatOf(tb[HZRAM_NL_A_MM_STAT]);
  if (tb[HZRAM_NL_A_OFFLOAD]) info.offload = SelectedValue(String(tb[HZRAM_NL_A_OFFLOAD]));
  if (tb[HZRAM_NL_A_OFFLOAD_STAT]) info.offload_stat = OffloadStatOf(tb[HZRAM_NL_A_OFFLOAD_STAT]);
  if (tb[HZRAM_NL_A_BD_STAT]) {
    std::optional<std::uint64_t> f[HZRAM_BD_NR_FIELDS];
    Fields(tb[HZRAM_NL_A_BD_STAT], f);
    if (f[HZRAM_BD_COUNT]) info.written_back = *f[HZRAM_BD_COUNT] * 4096;
  }
  if (tb[HZRAM_NL_A_RECOMP_STAT]) {
    std::optional<std::uint64_t> f[HZRAM_RECOMP_NR_FIELDS];
    Fields(tb[HZRAM_NL_A_RECOMP_STAT], f);
    info.recompressed = f[HZRAM_RECOMP_PAGES];
  }
  return d;
}

std::optional<Event> ParseEventMessage(nlmsghdr* nlh) {
  nlattr* tb[HZRAM_NL_A_MAX + 1];
  if (!Parse(nlh, HZRAM_NL_CMD_EVENT, tb) || !tb[HZRAM_NL_A_EVENT]) return std::nullopt;
  Event e;
  e.type = nla_get_u32(tb[HZRAM_NL_A_EVENT]);
  if (tb[HZRAM_NL_A_NAME]) e.device = String(tb[HZRAM_NL_A_NAME]);
  if (e.device.empty() && tb[HZRAM_NL_A_ID])
    e.device = HZRAM_DEVICE_PREFIX + std::to_string(nla_get_u32(tb[HZRAM_NL_A_ID]));
  if (e.device.empty()) return std::nullopt;
  if (tb[HZRAM_NL_A_DISKSIZE]) e.disksize = nla_get_u64(tb[HZRAM_NL_A_DISKSIZE]);
  if (tb[HZRAM_NL_A_COMP_ALGORITHM]) e.algorithm = String(tb[HZRAM_NL_A_COMP_ALGORITHM]);
  if (tb[HZRAM_NL_A_MEM_LIMIT]) e.mem_limit = nla_get_u64(tb[HZRAM_NL_A_MEM_LIMIT]);
  if (tb[HZRAM_NL_A_IO_STAT]) {
    std::optional<std::uint64_t> io[HZRAM_IO_NR_FIELDS];
    Fields(tb[HZRAM_NL_A_IO_STAT], io);
    e.failed_writes = io[HZRAM_IO_FAILED_WRITES];
  }
  if (tb[HZRAM_NL_A_HELPER_PID]) e.pid = nla_get_u32(tb[HZRAM_NL_A_HELPER_PID]);
  return e;
}

std::unique_ptr<GenlTransport> OpenGenl(const char* name) {
  nl_sock* sk = nl_socket_alloc();
  if (!sk) return nullptr;
  int family = -1;
  if (genl_connect(sk) < 0 || (family = genl_ctrl_resolve(sk, name)) < 0) {
    nl_socket_free(sk);
    return nullptr;
  }
  nl_socket_disable_auto_ack(sk);
  return std::make_unique<LibnlGenl>(sk, family);
}

DeviceInfo NetlinkInfoSource::Get(const DeviceRef& dev, unsigned fields) {
  std::optional<NlDevice> got;
  const int rc = genl_->GetDevice(dev.id, [&](nlmsghdr* nlh) {
    std::optional<NlDevice> d = ParseDeviceMessage(nlh);
    if (d && d->id == dev.id) got = std::move(d);
  });
  if (rc != 0 || !got) return fallback_.Get(dev, fields);
  DeviceInfo info = std::move(got->info);
  info.name = dev.name;
  info.id = dev.id;
  if (fields & kFieldMountpoint) info.mountpoint = MountPointOf(sysfs_, dev);
  return info;
}

std::vector<DeviceInfo> NetlinkInfoSource::ListUsed(unsigned fields) {
  std::vector<NlDevice> devices;
  const int rc = genl_->GetDevice(-1, [&](nlmsghdr* nlh) {
    if (std::optional<NlDevice> d = ParseDeviceMessage(nlh)) devices.push_back(std::move(*d));
  });
  if (rc != 0) return fallback_.ListUsed(fields);
  std::sort(devices.begin(), devices.end(),
            [](const NlDevice& a, const NlDevice& b) { return a.id < b.id; });

  std::vector<DeviceInfo> list;
  for (NlDevice& d : devices) {
    if (!d.info.disksize || *d.info.disksize == 0) continue;  // as Sysfs::Used()
    DeviceInfo info = std::move(d.info);
    info.name = Sysfs::DevName(d.id);
    if (fields & kFieldMountpoint) {
      // The device node's numbers, to find it in /proc.
      const std::optional<DeviceRef> dev = sysfs_.ById(d.id);
      if (!dev) continue;  // gone since the dump
      info.name = dev->name;
      info.mountpoint = MountPointOf(sysfs_, *dev);
    }
    list.push_back(std::move(info));
  }
  return list;
}

std::unique_ptr<DeviceInfoSource> OpenInfoSource(const Sysfs& sysfs, const char* name) {
  if (std::unique_ptr<GenlTransport> genl = OpenGenl(name))
    return std::make_unique<NetlinkInfoSource>(sysfs, std::move(genl));
  return std::make_unique<SysfsInfoSource>(sysfs);
}

// ---------------------------------------------------------------------

EventSocket::~EventSocket() {
  if (sk_) nl_socket_free(sk_);
}

int EventSocket::Open(std::string* what, const char* name) {
  name_ = name;
  sk_ = nl_socket_alloc();
  if (!sk_) {
    *what = "failed to allocate a netlink socket";
    return -1;
  }
  int rc = genl_connect(sk_);
  if (rc < 0) {
    *what = std::string("failed to open a netlink socket: ") + nl_geterror(rc);
    return -1;
  }
  family_ = genl_ctrl_resolve(sk_, name);
  const int group =
      family_ < 0 ? family_ : genl_ctrl_resolve_grp(sk_, name, HZRAM_GENL_MCGRP_EVENTS);
  if (group < 0) {
    *what = std::string("the hzram module has no netlink family \"") + name +
            "\" with group \"" HZRAM_GENL_MCGRP_EVENTS "\": " + nl_geterror(group);
    return -1;
  }
  // Without nlctrl's notifications, the module's unloading goes unseen:
  // no reason to fail.
  const int ctrl = genl_ctrl_resolve_grp(sk_, "nlctrl", "notify");
  rc = nl_socket_add_memberships(sk_, group, ctrl > 0 ? ctrl : 0, 0);
  if (rc < 0) {
    *what = std::string("failed to join the events group: ") + nl_geterror(rc) +
            (rc == -NLE_PERM ? " (the events are root's: CAP_SYS_ADMIN)" : "");
    return -1;
  }
  // Events come unasked for: no sequence numbers to check.
  nl_socket_disable_seq_check(sk_);
  nl_socket_modify_cb(sk_, NL_CB_VALID, NL_CB_CUSTOM, OnMessage, this);
  rc = nl_socket_set_nonblocking(sk_);
  if (rc < 0) {
    *what = std::string("failed to set up the netlink socket: ") + nl_geterror(rc);
    return -1;
  }
  return 0;
}

int EventSocket::fd() const { return sk_ ? nl_socket_get_fd(sk_) : -1; }

int EventSocket::OnMessage(nl_msg* msg, void* arg) {
  EventSocket* self = static_cast<EventSocket*>(arg);
  nlmsghdr* nlh = nlmsg_hdr(msg);
  if (nlh->nlmsg_type == self->family_) {
    const std::optional<Event> e = ParseEventMessage(nlh);
    if (e && self->on_) (*self->on_)(*e);
    return NL_OK;
  }
  // nlctrl: CTRL_CMD_DELFAMILY of the family.
  if (nlh->nlmsg_type != GENL_ID_CTRL || !genlmsg_valid_hdr(nlh, 0) ||
      static_cast<const genlmsghdr*>(nlmsg_data(nlh))->cmd != CTRL_CMD_DELFAMILY)
    return NL_OK;
  nlattr* tb[CTRL_ATTR_MAX + 1];
  if (genlmsg_parse(nlh, 0, tb, CTRL_ATTR_MAX, nullptr) != 0) return NL_OK;
  const nlattr* id = tb[CTRL_ATTR_FAMILY_ID];
  nlattr* family = tb[CTRL_ATTR_FAMILY_NAME];
  if ((id && nla_len(id) >= 2 && nla_get_u16(id) == self->family_) ||
      (!id && family && String(family) == self->name_)) {
    self->unloaded_ = true;
    return NL_STOP;
  }
  return NL_OK;
}

EventSocket::Got EventSocket::Receive(const std::function<void(const Event&)>& on,
                                      std::string* what) {
  on_ = &on;
  Got got;
  for (;;) {
    const int rc = nl_recvmsgs_default(sk_);
    if (unloaded_) {
      got = Got::kUnloaded;
      break;
    }
    if (rc == -NLE_AGAIN) {
      got = Got::kDrained;
      break;
    }
    if (rc == -NLE_NOMEM) {  // ENOBUFS
      got = Got::kOverrun;
      break;
    }
    if (rc < 0) {
      *what = std::string("failed to receive events: ") + nl_geterror(rc);
      got = Got::kError;
      break;
    }
  }
  on_ = nullptr;
  return got;
}

}  // namespace hzramctl
