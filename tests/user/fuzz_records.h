// SPDX-License-Identifier: GPL-2.0
// The input of the record-path fuzz target (fuzz_records.cc), which
// fuzz_seeds also writes:
//
//   byte 0       the batch's pages, less one, modulo kFuzzMaxPages
//   byte 1       flags: kFuzzInRange, kFuzzBackendFails
//   then         the batch's records, 16 bytes each (struct
//                hzram_page_record; what the input lacks is zero)
//   the rest     the arena
#ifndef HZRAM_TEST_FUZZ_RECORDS_H
#define HZRAM_TEST_FUZZ_RECORDS_H

#include <cstddef>
#include <cstdint>

namespace hzram::test {

inline constexpr std::size_t kFuzzMaxPages = 16;
inline constexpr std::size_t kFuzzHeader = 2;
// RAW and LZ4 records' offsets taken modulo the arena's size plus one, so
// that half the inputs point mostly into it.
inline constexpr std::uint8_t kFuzzInRange = 1 << 0;
// The stand-in device fails the first batch: the hybrid codec redoes its
// part on the CPU.
inline constexpr std::uint8_t kFuzzBackendFails = 1 << 1;

}  // namespace hzram::test

#endif  // HZRAM_TEST_FUZZ_RECORDS_H
