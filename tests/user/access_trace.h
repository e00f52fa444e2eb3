// SPDX-License-Identifier: GPL-2.0
// Every access to a range of memory, one by one, in order (x86-64 Linux):
// the range is made inaccessible; each access faults; the SIGSEGV handler
// records its address, opens the range and sets the trap flag, so that the
// one instruction runs; the SIGTRAP after it closes the range again. For
// tests of code that must read memory another party may write (records
// shared with the kernel) once: what it checks is then what it uses.
//
// Only the calling thread may touch the range while it is traced (another
// thread's access would go unseen or be counted as this one's).
//
// A hook may change the range after each access, as another party
// writing it at any time could (set_after_access()): a test then sees
// what the code under test does with values that change under it.
#ifndef HZRAM_TEST_ACCESS_TRACE_H
#define HZRAM_TEST_ACCESS_TRACE_H

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace hzram::test {

class AccessTrace {
 public:
  static constexpr std::size_t kMaxAccesses = 1 << 16;

  // Pages mapped for tracing: @bytes rounded up to whole pages.
  explicit AccessTrace(std::size_t bytes) : bytes_((bytes + 4095) / 4096 * 4096) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<std::uint8_t*>(p);
  }
  ~AccessTrace() {
    Stop();
    if (base_) munmap(base_, bytes_);
  }
  AccessTrace(const AccessTrace&) = delete;
  AccessTrace& operator=(const AccessTrace&) = delete;

  std::uint8_t* data() const { return base_; }
  std::size_t size() const { return bytes_; }

  // Called, with the range open, after each access, with the offset of
  // its first byte in the range: it may rewrite the range (in a signal
  // handler: async-signal-safe code only, no allocation).
  using AfterAccess = void (*)(std::uint8_t* base, std::size_t offset, void* arg);
  void set_after_access(AfterAccess fn, void* arg) {
    after_ = fn;
    after_arg_ = arg;
  }

  // From now on, record each access (the range is closed).
  bool Start() {
    if (!base_ || active_) return false;
    g_self = this;
    count_ = 0;
    struct sigaction sa {};
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sa.sa_sigaction = OnSegv;
    sigaction(SIGSEGV, &sa, &old_segv_);
    sa.sa_sigaction = OnTrap;
    sigaction(SIGTRAP, &sa, &old_trap_);
    active_ = true;
    return mprotect(base_, bytes_, PROT_NONE) == 0;
  }
  // Stop recording; the range is open again.
  void Stop() {
    if (!active_) return;
    mprotect(base_, bytes_, PROT_READ | PROT_WRITE);
    sigaction(SIGSEGV, &old_segv_, nullptr);
    sigaction(SIGTRAP, &old_trap_, nullptr);
    active_ = false;
    g_self = nullptr;
  }

  // The offsets into the range of the accesses, in order (the first byte
  // each instruction touched there).
  std::vector<std::size_t> Offsets() const {
    std::vector<std::size_t> v(count_);
    for (std::size_t i = 0; i < count_; i++) v[i] = addr_[i] - reinterpret_cast<std::uintptr_t>(base_);
    return v;
  }
  bool overflowed() const { return count_ == kMaxAccesses; }

  // Whether the accesses read each @unit-byte item of the range (a record,
  // a descriptor) in one go: its accesses follow one another, with no
  // access to another item between them and none at an offset already
  // accessed. *why says which item was read twice.
  bool EachItemReadOnce(std::size_t unit, std::string* why) const {
    const std::vector<std::size_t> off = Offsets();
    std::vector<bool> done(bytes_ / unit + 1);
    std::vector<std::size_t> seen;  // offsets within the current item
    std::size_t current = SIZE_MAX;
    for (std::size_t i = 0; i < off.size(); i++) {
      const std::size_t item = off[i] / unit;
      if (item != current) {
        if (current != SIZE_MAX) done[current] = true;
        if (done[item]) {
          *why = "item " + std::to_string(item) + " read again (access " + std::to_string(i) +
                 ", offset " + std::to_string(off[i] % unit) + ") after other items";
          return false;
        }
        current = item;
        seen.clear();
      }
      for (std::size_t s : seen)
        if (s == off[i]) {
          *why = "item " + std::to_string(item) + ": offset " + std::to_string(off[i] % unit) +
                 " read twice";
          return false;
        }
      seen.push_back(off[i]);
    }
    return true;
  }

 private:
  static constexpr unsigned long kTrapFlag = 0x100;

  static void OnSegv(int sig, siginfo_t* si, void* ctx) {
    AccessTrace* t = g_self;
    const auto a = reinterpret_cast<std::uintptr_t>(si->si_addr);
    const auto b = reinterpret_cast<std::uintptr_t>(t ? t->base_ : nullptr);
    if (!t || a < b || a - b >= t->bytes_) {
      // Not ours: as if there were no handler.
      signal(sig, SIG_DFL);
      return;
    }
    if (t->count_ < kMaxAccesses) t->addr_[t->count_++] = a;
    t->last_ = a - b;
    mprotect(t->base_, t->bytes_, PROT_READ | PROT_WRITE);
    static_cast<ucontext_t*>(ctx)->uc_mcontext.gregs[REG_EFL] |= kTrapFlag;
  }
  static void OnTrap(int, siginfo_t*, void* ctx) {
    AccessTrace* t = g_self;
    if (t && t->after_) t->after_(t->base_, t->last_, t->after_arg_);
    if (t) mprotect(t->base_, t->bytes_, PROT_NONE);
    static_cast<ucontext_t*>(ctx)->uc_mcontext.gregs[REG_EFL] &= ~kTrapFlag;
  }

  static inline AccessTrace* g_self = nullptr;
  std::uint8_t* base_ = nullptr;
  std::size_t bytes_;
  bool active_ = false;
  struct sigaction old_segv_ {}, old_trap_ {};
  std::size_t count_ = 0;
  std::size_t last_ = 0;  // the offset of the access being stepped
  AfterAccess after_ = nullptr;
  void* after_arg_ = nullptr;
  std::uintptr_t addr_[kMaxAccesses];
};

}  // namespace hzram::test

#endif  // HZRAM_TEST_ACCESS_TRACE_H
