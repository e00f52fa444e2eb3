// SPDX-License-Identifier: GPL-2.0
// Counting the heap allocations of a stretch of code, in every thread:
// alloc_count.cc puts malloc and its kin (and with them operator new,
// which calls them) in front of the C library's, for the test binary it
// is linked into.
#ifndef HZRAM_TEST_ALLOC_COUNT_H
#define HZRAM_TEST_ALLOC_COUNT_H

#include <cstdint>

namespace hzram::test {

// Allocations counted since the last StartCounting(), while counting.
void StartCounting();
std::uint64_t StopCounting();  // returns the count

// Whether the interposer is in place (malloc reaches it).
bool AllocationsAreSeen();

}  // namespace hzram::test

#endif  // HZRAM_TEST_ALLOC_COUNT_H
