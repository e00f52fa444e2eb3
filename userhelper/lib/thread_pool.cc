// SPDX-License-Identifier: GPL-2.0
#include "thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <system_error>

namespace hzram {
namespace {

using Clock = std::chrono::steady_clock;

inline void CpuRelax() { __builtin_ia32_pause(); }

}  // namespace

std::unique_ptr<ThreadPool> ThreadPool::Create(unsigned threads, bool pin, int* err,
                                               std::chrono::microseconds spin) {
  std::unique_ptr<ThreadPool> pool(new ThreadPool());
  pool->spin_ = spin;
  std::vector<int> allowed;
  cpu_set_t set;

  if (threads == 0) threads = 1;
  if (pin) {
    if (sched_getaffinity(0, sizeof(set), &set)) {
      if (err) *err = -errno;
      return nullptr;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
      if (CPU_ISSET(cpu, &set)) allowed.push_back(cpu);
  }
  for (unsigned i = 1; i < threads; i++)
    pool->cpus_.push_back(allowed.empty() ? -1 : allowed[i % allowed.size()]);
  pool->wake_ = std::make_unique<Wake[]>(threads - 1);
  try {
    for (unsigned i = 1; i < threads; i++)
      pool->threads_.emplace_back(&ThreadPool::Work, pool.get(), i);
  } catch (const std::system_error& e) {
    if (err) *err = -e.code().value();
    return nullptr;  // the destructor joins the workers already started
  }
  if (err) *err = 0;
  return pool;
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  for (std::size_t i = 0; i < threads_.size(); i++) {
    wake_[i].generation.fetch_add(1, std::memory_order_release);
    wake_[i].generation.notify_one();
  }
  for (auto& t : threads_) t.join();
}

void ThreadPool::Work(unsigned index) {
  if (cpus_[index - 1] >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpus_[index - 1], &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  }
  std::atomic<std::uint32_t>& generation = wake_[index - 1].generation;
  std::atomic<bool>& sleeping = wake_[index - 1].sleeping;
  std::uint32_t seen = 0;
  for (;;) {
    std::uint32_t g = generation.load(std::memory_order_acquire);
    if (g == seen && spin_.count() > 0) {
      const auto until = Clock::now() + spin_;
      do {
        for (int i = 0; i < 64 && g == seen; i++) {
          CpuRelax();
          g = generation.load(std::memory_order_acquire);
        }
      } while (g == seen && Clock::now() < until);
    }
    while (g == seen) {
      // Said before the last look (both sequentially consistent, as in
      // Run()): either that look sees the new generation, or Run() sees
      // this and wakes it.
      sleeping.store(true, std::memory_order_seq_cst);
      g = generation.load(std::memory_order_seq_cst);
      if (g == seen) {
        generation.wait(seen, std::memory_order_acquire);
        g = generation.load(std::memory_order_acquire);
      }
      sleeping.store(false, std::memory_order_relaxed);
    }
    seen = g;
    if (stop_.load(std::memory_order_relaxed)) return;
    fn_(ctx_, index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

void ThreadPool::Run(void (*fn)(void*, unsigned), void* ctx, unsigned workers) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  const unsigned woken = std::clamp(workers, 1u, size()) - 1;
  if (woken) {
    fn_ = fn;
    ctx_ = ctx;
    pending_.store(woken, std::memory_order_relaxed);
    for (unsigned i = 0; i < woken; i++) {
      wake_[i].generation.fetch_add(1, std::memory_order_seq_cst);
      if (wake_[i].sleeping.load(std::memory_order_seq_cst)) wake_[i].generation.notify_one();
    }
  }
  fn(ctx, 0);
  // Wait for the others. Yield while waiting: if the caller shares a CPU
  // with a worker, the worker needs it.
  std::uint32_t p = pending_.load(std::memory_order_acquire);
  for (int i = 0; p != 0 && i < 16; i++) {
    sched_yield();
    p = pending_.load(std::memory_order_acquire);
  }
  while (p != 0) {
    pending_.wait(p, std::memory_order_acquire);
    p = pending_.load(std::memory_order_acquire);
  }
  runs_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace hzram
