// SPDX-License-Identifier: GPL-2.0
#include "events.h"

#include <linux/hzram.h>

#include <cstdio>

#include "hzram-common/json.h"

namespace hzramctl {
namespace {

// The attributes an event may carry, in the order they are printed: each
// to @put(key, text, is_string).
template <class F>
void ForEachAttribute(const Event& e, F put) {
  if (e.disksize) put("disksize", std::to_string(*e.disksize), false);
  if (e.algorithm) put("algorithm", *e.algorithm, true);
  if (e.mem_limit) put("mem_limit", std::to_string(*e.mem_limit), false);
  if (e.failed_writes) put("failed_writes", std::to_string(*e.failed_writes), false);
  if (e.pid) put("pid", std::to_string(*e.pid), false);
}

}  // namespace

std::string EventName(std::uint32_t type) {
  switch (type) {
    case HZRAM_NL_EV_DEVICE_ADDED:
      return "added";
    case HZRAM_NL_EV_DEVICE_REMOVED:
      return "removed";
    case HZRAM_NL_EV_INITIALISED:
      return "initialised";
    case HZRAM_NL_EV_RESET:
      return "reset";
    case HZRAM_NL_EV_MEM_LIMIT:
      return "mem-limit";
    case HZRAM_NL_EV_WRITE_FAILED:
      return "write-failed";
    case HZRAM_NL_EV_HELPER_ATTACHED:
      return "helper-attached";
    case HZRAM_NL_EV_HELPER_DETACHED:
      return "helper-detached";
    case HZRAM_NL_EV_HELPER_DIED:
      return "helper-died";
  }
  return "event-" + std::to_string(type);
}

std::string EventText(const Event& event) {
  std::string line = event.device + " " + EventName(event.type);
  ForEachAttribute(event, [&](const char* key, const std::string& value, bool) {
    line += std::string(" ") + key + "=" + value;
  });
  return line;
}

std::string EventJson(const Event& event) {
  std::string line =
      "{\"device\":" + hzram::JsonString(event.device) + ",\"event\":" + hzram::JsonString(EventName(event.type));
  ForEachAttribute(event, [&](const char* key, const std::string& value, bool is_string) {
    line += std::string(",\"") + key + "\":" + (is_string ? hzram::JsonString(value) : value);
  });
  return line + "}";
}

}  // namespace hzramctl
