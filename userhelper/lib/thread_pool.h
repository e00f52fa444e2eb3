// SPDX-License-Identifier: GPL-2.0
// A persistent pool of worker threads, each pinned to one CPU, that runs a
// function on all of them and on the calling thread at once.
#ifndef HZRAM_THREAD_POOL_H
#define HZRAM_THREAD_POOL_H

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace hzram {

class ThreadPool {
 public:
  // A pool of @threads workers (at least 1): the thread that calls Run()
  // is worker 0, and @threads - 1 threads are started as workers 1.. .
  // With @pin, worker i (i >= 1) is bound to the i-th CPU (modulo their
  // number) of the caller's affinity mask. A worker done with a Run()
  // spins for @spin for the next before it sleeps: runs that follow each
  // other closely (the codec's batches) find it awake; a pool whose runs
  // are far apart (the GPU codec's staging copies, a batch's device time
  // apart) spins for nothing. Returns nullptr and sets *err to a negative
  // errno on failure.
  static constexpr std::chrono::microseconds kDefaultSpin{50};
  static std::unique_ptr<ThreadPool> Create(unsigned threads, bool pin, int* err,
                                            std::chrono::microseconds spin = kDefaultSpin);

  // Stops and joins the workers; no Run() may be in progress.
  ~ThreadPool();

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Workers, the caller included.
  unsigned size() const { return static_cast<unsigned>(threads_.size()) + 1; }

  // The CPU worker @i (i >= 1) is pinned to, or -1 if it is not pinned
  // (worker 0, the caller, never is).
  int cpu_of(unsigned i) const { return i == 0 ? -1 : cpus_[i - 1]; }

  // Run fn(ctx, i) on every worker i, the caller as worker 0, and return
  // when all have returned. Calls are serialised; nothing is allocated.
  void Run(void (*fn)(void* ctx, unsigned worker), void* ctx) { Run(fn, ctx, size()); }

  // The same on workers 0 .. @workers - 1 only (at least the caller, at
  // most size()): the others are not woken. For work too small for all
  // of them, where waking a thread costs more than it would do.
  void Run(void (*fn)(void* ctx, unsigned worker), void* ctx, unsigned workers);

  // Run(f) for any callable f(unsigned worker), without allocating.
  template <class F>
  void Run(F& f, unsigned workers = ~0u) {
    Run([](void* ctx, unsigned i) { (*static_cast<F*>(ctx))(i); }, &f, workers);
  }

  // How many Run() calls have completed.
  std::uint64_t runs() const { return runs_.load(std::memory_order_relaxed); }

 private:
  ThreadPool() = default;
  void Work(unsigned index);

  std::vector<std::thread> threads_;
  std::vector<int> cpus_;                 // of workers 1..
  std::chrono::microseconds spin_{kDefaultSpin};
  std::mutex run_mutex_;                  // one Run() at a time
  void (*fn_)(void*, unsigned) = nullptr;  // written before a generation
  void* ctx_ = nullptr;
  // Each started worker's generation, bumped by each Run() that wakes it
  // (one cache line each: a spinning worker reads only its own), and
  // whether it may be asleep on it: Run() makes the futex call only for
  // a worker that may be, not for one that spins.
  struct alignas(64) Wake {
    std::atomic<std::uint32_t> generation{0};
    std::atomic<bool> sleeping{false};
  };
  std::unique_ptr<Wake[]> wake_;
  alignas(64) std::atomic<std::uint32_t> pending_{0};     // woken workers still busy
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> runs_{0};
};

}  // namespace hzram

#endif  // HZRAM_THREAD_POOL_H
