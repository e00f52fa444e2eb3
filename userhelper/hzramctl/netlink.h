// SPDX-License-Identifier: GPL-2.0
//
// hzramctl through the module's generic netlink family "hzram"
// (include/uapi/linux/hzram.h, Documentation/uapi.rst), with libnl-genl-3:
// every device's state in one dump (a DeviceInfoSource), and the events
// of its multicast group "events". The family only reports; hzramctl
// changes devices through sysfs, as zramctl does.
#ifndef HZRAMCTL_NETLINK_H
#define HZRAMCTL_NETLINK_H

#include <linux/hzram.h>
#include <linux/netlink.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "device.h"
#include "events.h"

struct nl_sock;
struct nl_msg;

namespace hzramctl {

// What one HZRAM_NL_CMD_GET_DEVICE message says: the device's number and
// the DeviceInfo fields the family carries (all but name and mountpoint).
struct NlDevice {
  int id = -1;
  DeviceInfo info;
};

// A GET_DEVICE message parsed: nothing if it is not one, has no
// HZRAM_NL_A_ID, or an attribute is malformed (too short, a string not
// ended). Attributes and statistics fields it does not know are ignored;
// a statistics nest without the fields DeviceInfo needs leaves its field
// empty, as a short sysfs file does.
std::optional<NlDevice> ParseDeviceMessage(nlmsghdr* nlh);

// An HZRAM_NL_CMD_EVENT message parsed: nothing if it is not one, lacks
// HZRAM_NL_A_EVENT, or names no device (neither HZRAM_NL_A_NAME nor _ID).
std::optional<Event> ParseEventMessage(nlmsghdr* nlh);

// Requests to the family: a libnl socket (OpenGenl()), or the tests' fake.
class GenlTransport {
 public:
  virtual ~GenlTransport() = default;
  // HZRAM_NL_CMD_GET_DEVICE for device @id, or for every device (a dump)
  // if @id < 0; @on gets each message of the reply, in order. 0, or a
  // negative errno (ENODEV: no such device).
  virtual int GetDevice(int id, const std::function<void(nlmsghdr*)>& on) = 0;
};

// A socket connected to the family @name; nothing if there is none (an
// older module, no module, another network namespace) or netlink fails.
std::unique_ptr<GenlTransport> OpenGenl(const char* name = HZRAM_GENL_NAME);

// DeviceInfo from the family: GET_DEVICE by id for one device, one dump
// for the list; MOUNTPOINT from /proc as the sysfs source has it. Where a
// request fails, the answer comes from sysfs instead.
class NetlinkInfoSource : public DeviceInfoSource {
 public:
  NetlinkInfoSource(const Sysfs& sysfs, std::unique_ptr<GenlTransport> genl)
      : sysfs_(sysfs), genl_(std::move(genl)), fallback_(sysfs) {}
  DeviceInfo Get(const DeviceRef& dev, unsigned fields) override;
  std::vector<DeviceInfo> ListUsed(unsigned fields) override;

 private:
  const Sysfs& sysfs_;
  std::unique_ptr<GenlTransport> genl_;
  SysfsInfoSource fallback_;
};

// The netlink source when the family @name answers, else the sysfs one.
std::unique_ptr<DeviceInfoSource> OpenInfoSource(const Sysfs& sysfs,
                                                 const char* name = HZRAM_GENL_NAME);

// A socket on the family's "events" group, for --monitor; it also hears
// nlctrl's "notify" group, to know when the module goes away.
class EventSocket {
 public:
  EventSocket() = default;
  EventSocket(const EventSocket&) = delete;
  EventSocket& operator=(const EventSocket&) = delete;
  ~EventSocket();

  // Join the group of family @name. 0, or -1 with *what saying what
  // failed ("no netlink family" for a module without one).
  int Open(std::string* what, const char* name = HZRAM_GENL_NAME);
  int fd() const;

  enum class Got {
    kDrained,   // everything queued was read
    kUnloaded,  // the family went away: the module was unloaded
    kOverrun,   // events were lost: the receive buffer overflowed
    kError,     // *what says why
  };
  // Read what is queued (the socket does not block), each event to @on,
  // until the queue is empty or something happens.
  Got Receive(const std::function<void(const Event&)>& on, std::string* what);

 private:
  static int OnMessage(nl_msg* msg, void* arg);

  nl_sock* sk_ = nullptr;
  std::string name_;
  int family_ = -1;
  bool unloaded_ = false;
  const std::function<void(const Event&)>* on_ = nullptr;
};

}  // namespace hzramctl

#endif  // HZRAMCTL_NETLINK_H
