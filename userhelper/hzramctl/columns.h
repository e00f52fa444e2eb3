// SPDX-License-Identifier: GPL-2.0
//
// hzramctl's output columns: zramctl 2.38.1's, with the same names, width
// hints and flags, in the same order, then hzram's own (the helper
// offload), which no default list includes.
#ifndef HZRAMCTL_COLUMNS_H
#define HZRAMCTL_COLUMNS_H

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace hzramctl {

enum class Col {
  kName,
  kDisksize,
  kData,
  kCompr,
  kAlgorithm,
  kStreams,
  kZeroPages,
  kTotal,
  kMemLimit,
  kMemUsed,
  kMigrated,
  kMountpoint,
  // hzram's
  kOffload,
  kHelper,
  kHelperPages,
  kFallbacks,
  kWrittenBack,
  kRecompressed,
};

// How a column's cells are written in JSON.
enum class JsonKind {
  kString,
  kSize,     // a number with --bytes, else a string ("1.5M")
  kNumber,
  kBoolean,  // true, false, or null when unknown
};

struct ColumnInfo {
  Col id;
  const char* name;
  double whint;  // libsmartcols width hint
  int flags;     // SCOLS_FL_*
  JsonKind json;
  const char* help;
};

// Every column, in the order of --output-all and of the help text.
std::span<const ColumnInfo> AllColumns();
const ColumnInfo& InfoOf(Col col);

// NAME ALGORITHM DISKSIZE DATA COMPR TOTAL STREAMS MOUNTPOINT
std::vector<Col> DefaultColumns();

// The most columns -o takes, as zramctl: twice the number of columns.
constexpr std::size_t kMaxColumns = 36;

// util-linux string_to_idarray() with zramctl's column lookup: a list of
// column names separated by commas, case-insensitive. Returns the number of
// columns put in *out, -1 for an empty list, an empty name or an unknown
// one, -2 for more than kMaxColumns. For an unknown name *warning is
// "unknown column: " and the list from that name on (zramctl prints the
// rest of the list); otherwise it is left empty.
int ParseColumnList(const char* list, std::vector<Col>* out, std::string* warning);

}  // namespace hzramctl

#endif  // HZRAMCTL_COLUMNS_H
