// SPDX-License-Identifier: GPL-2.0
// malloc, calloc, realloc and the aligned allocators in front of glibc's
// (__libc_*), counting calls while a test asks; free is glibc's own, which
// takes what these return. operator new and new[] (libstdc++'s) allocate
// through malloc and the aligned ones, so C++ allocations count as well.
#include "alloc_count.h"

#include <cerrno>
#include <cstddef>
#include <cstdlib>

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
}

namespace {

// Plain globals, touched with atomic builtins: nothing here may allocate
// or run a constructor before main.
bool g_counting = false;
std::uint64_t g_count = 0;

void Count() {
  if (__atomic_load_n(&g_counting, __ATOMIC_RELAXED)) __atomic_add_fetch(&g_count, 1, __ATOMIC_RELAXED);
}

}  // namespace

extern "C" {

void* malloc(std::size_t n) {
  Count();
  return __libc_malloc(n);
}
void* calloc(std::size_t n, std::size_t size) {
  Count();
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t n) {
  Count();
  return __libc_realloc(p, n);
}
void* memalign(std::size_t align, std::size_t n) {
  Count();
  return __libc_memalign(align, n);
}
void* aligned_alloc(std::size_t align, std::size_t n) {
  Count();
  return __libc_memalign(align, n);
}
int posix_memalign(void** out, std::size_t align, std::size_t n) {
  if (align < sizeof(void*) || (align & (align - 1))) return EINVAL;
  Count();
  void* p = __libc_memalign(align, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

}  // extern "C"

namespace hzram::test {

void StartCounting() {
  __atomic_store_n(&g_count, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&g_counting, true, __ATOMIC_SEQ_CST);
}

std::uint64_t StopCounting() {
  __atomic_store_n(&g_counting, false, __ATOMIC_SEQ_CST);
  return __atomic_load_n(&g_count, __ATOMIC_RELAXED);
}

bool AllocationsAreSeen() {
  StartCounting();
  void* volatile p = std::malloc(24);
  std::free(p);
  int* volatile q = new int(3);
  delete q;
  return StopCounting() == 2;
}

}  // namespace hzram::test
