// SPDX-License-Identifier: GPL-2.0
//
// The module's events as hzramctl --monitor prints them: one line each,
// as text or as a JSON object (Documentation/man/hzramctl.8, EVENTS).
#ifndef HZRAMCTL_EVENTS_H
#define HZRAMCTL_EVENTS_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hzramctl {

// One HZRAM_NL_CMD_EVENT message (include/uapi/linux/hzram.h): the event
// and what it carries; an attribute the message lacks stays empty.
struct Event {
  std::uint32_t type = 0;                      // enum hzram_nl_event
  std::string device;                          // hzramN
  std::optional<std::uint64_t> disksize;       // HZRAM_NL_A_DISKSIZE
  std::optional<std::string> algorithm;        // HZRAM_NL_A_COMP_ALGORITHM
  std::optional<std::uint64_t> mem_limit;      // HZRAM_NL_A_MEM_LIMIT
  std::optional<std::uint64_t> failed_writes;  // io_stat's failed_writes
  std::optional<std::uint32_t> pid;            // HZRAM_NL_A_HELPER_PID
};

// "added", "initialised", "helper-attached", ...; "event-N" for a number
// this hzramctl does not know (a newer module's).
std::string EventName(std::uint32_t type);

// "hzram0 initialised disksize=8388608 algorithm=lz4": the device, the
// event's name, then key=value for each attribute it carries, in the order
// disksize, algorithm, mem_limit, failed_writes, pid. No newline.
std::string EventText(const Event& event);

// The same as one JSON object on one line:
// {"device":"hzram0","event":"initialised","disksize":8388608,"algorithm":"lz4"}.
// Numbers are JSON numbers. No newline.
std::string EventJson(const Event& event);

}  // namespace hzramctl

#endif  // HZRAMCTL_EVENTS_H
