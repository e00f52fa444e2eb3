// SPDX-License-Identifier: GPL-2.0
//
// hzramctl's status table: the text of each cell, as zramctl 2.38.1 writes
// it, and the table printed with libsmartcols, as zramctl prints it (and
// as JSON).
#ifndef HZRAMCTL_TABLE_H
#define HZRAMCTL_TABLE_H

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "columns.h"
#include "device.h"

namespace hzramctl {

struct TableFormat {
  bool raw = false;
  bool json = false;
  bool noheadings = false;
  bool bytes = false;  // sizes in bytes, not "1.5M"
};

// The name of the JSON array of devices.
inline constexpr const char* kJsonName = "hzramdevices";

// The DeviceInfo fields (Field bits) that @cols show.
unsigned FieldsFor(const std::vector<Col>& cols);

// A cell's text; nothing for an empty cell.
std::optional<std::string> CellText(const DeviceInfo& info, Col col, bool bytes);

// Print one line per device. 0, or -errno with *what saying what failed
// (libsmartcols could not allocate).
int PrintTable(std::FILE* out, const std::vector<DeviceInfo>& rows, const std::vector<Col>& cols,
               const TableFormat& format, std::string* what);

}  // namespace hzramctl

#endif  // HZRAMCTL_TABLE_H
