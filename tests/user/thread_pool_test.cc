// SPDX-License-Identifier: GPL-2.0
// The thread pool: start, pinning, reuse, concurrent callers, shutdown.
#include "thread_pool.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <thread>

namespace hzram {
namespace {

TEST(ThreadPoolTest, RunsEveryWorkerOncePerRun) {
  int err = 1;
  auto pool = ThreadPool::Create(3, false, &err);
  ASSERT_TRUE(pool);
  EXPECT_EQ(0, err);
  EXPECT_EQ(3u, pool->size());
  std::atomic<int> count[3] = {};
  auto fn = [&](unsigned w) { count[w]++; };
  for (int r = 0; r < 1000; r++) pool->Run(fn);
  for (auto& c : count) EXPECT_EQ(1000, c.load());
  EXPECT_EQ(1000u, pool->runs());
}

TEST(ThreadPoolTest, PinsEachStartedWorkerToOneCpu) {
  cpu_set_t set;
  ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
  const unsigned cpus = CPU_COUNT(&set);
  int err;
  auto pool = ThreadPool::Create(cpus, true, &err);
  ASSERT_TRUE(pool);
  ASSERT_EQ(cpus, pool->size());
  std::set<int> used;
  std::vector<int> seen(cpus, -1);
  auto fn = [&](unsigned w) { seen[w] = sched_getcpu(); };
  pool->Run(fn);
  // Worker 0 is the calling thread, which the pool leaves alone.
  EXPECT_EQ(-1, pool->cpu_of(0));
  for (unsigned w = 1; w < cpus; w++) {
    EXPECT_TRUE(CPU_ISSET(pool->cpu_of(w), &set));
    EXPECT_EQ(pool->cpu_of(w), seen[w]) << "worker " << w;
    used.insert(pool->cpu_of(w));
  }
  EXPECT_EQ(cpus - 1, used.size()) << "one CPU per started worker";
}

TEST(ThreadPoolTest, CallerIsWorkerZero) {
  int err;
  auto pool = ThreadPool::Create(2, false, &err);
  ASSERT_TRUE(pool);
  const auto caller = std::this_thread::get_id();
  std::thread::id ids[2];
  auto fn = [&](unsigned w) { ids[w] = std::this_thread::get_id(); };
  pool->Run(fn);
  EXPECT_EQ(caller, ids[0]);
  EXPECT_NE(caller, ids[1]);
}

TEST(ThreadPoolTest, UnpinnedWorkersSayNoCpu) {
  int err;
  auto pool = ThreadPool::Create(3, false, &err);
  ASSERT_TRUE(pool);
  EXPECT_EQ(-1, pool->cpu_of(0));
  EXPECT_EQ(-1, pool->cpu_of(1));
  EXPECT_EQ(-1, pool->cpu_of(2));
}

TEST(ThreadPoolTest, StartAndStopRepeatedly) {
  for (int i = 0; i < 200; i++) {
    int err;
    auto pool = ThreadPool::Create(1 + i % 4, i % 2, &err);
    ASSERT_TRUE(pool);
    if (i % 3) {
      std::atomic<int> n{0};
      auto fn = [&](unsigned) { n++; };
      pool->Run(fn);
      EXPECT_EQ(static_cast<int>(pool->size()), n.load());
    }
  }  // destroyed idle, after a run or never having run
}

TEST(ThreadPoolTest, ConcurrentCallersAreSerialised) {
  int err;
  auto pool = ThreadPool::Create(2, false, &err);
  ASSERT_TRUE(pool);
  std::atomic<int> inside{0}, overlap{0}, total{0};
  auto caller = [&] {
    for (int r = 0; r < 300; r++) {
      auto fn = [&](unsigned) {
        if (inside.fetch_add(1) >= 2) overlap++;
        total++;
        inside.fetch_sub(1);
      };
      pool->Run(fn);
    }
  };
  std::thread a(caller), b(caller), c(caller);
  a.join();
  b.join();
  c.join();
  EXPECT_EQ(0, overlap.load());
  EXPECT_EQ(3 * 300 * 2, total.load());
}

// Workers that do not spin between runs (the GPU codec's staging pool)
// go straight to sleep and are woken by every run.
TEST(ThreadPoolTest, WorkersThatDoNotSpinWakeForEveryRun) {
  int err;
  auto pool = ThreadPool::Create(4, false, &err, std::chrono::microseconds(0));
  ASSERT_TRUE(pool);
  std::atomic<int> n{0};
  auto fn = [&](unsigned) { n++; };
  for (int r = 0; r < 300; r++) {
    pool->Run(fn);
    if (r % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(300 * 4, n.load());
  EXPECT_EQ(300u, pool->runs());
}

// A run on some workers (the GPU codec's small copies) runs on those
// alone, the caller first; the others run neither it nor, later, a run
// meant for someone else. Spinning and sleeping workers alike.
TEST(ThreadPoolTest, ARunOnSomeWorkersRunsOnThoseAlone) {
  for (const auto spin : {ThreadPool::kDefaultSpin, std::chrono::microseconds(0)}) {
    int err;
    auto pool = ThreadPool::Create(5, false, &err, spin);
    ASSERT_TRUE(pool);
    std::atomic<int> count[5] = {};
    std::atomic<int> outside{0};
    unsigned asked = 0;
    auto fn = [&](unsigned w) {
      if (w >= asked) outside++;
      count[w]++;
    };
    // 0 means the caller alone, more than size() all of them.
    const unsigned sizes[] = {1, 5, 2, 0, 9, 3, 4};
    int expected[5] = {};
    for (int r = 0; r < 700; r++) {
      const unsigned w = sizes[r % 7];
      asked = std::clamp(w, 1u, 5u);
      pool->Run(fn, w);
      for (unsigned i = 0; i < asked; i++) expected[i]++;
      if (r % 100 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(0, outside.load());
    for (int i = 0; i < 5; i++) EXPECT_EQ(expected[i], count[i].load()) << "worker " << i;
    EXPECT_EQ(700u, pool->runs());
  }
}

TEST(ThreadPoolTest, ZeroThreadsMeansOne) {
  int err;
  auto pool = ThreadPool::Create(0, false, &err);
  ASSERT_TRUE(pool);
  EXPECT_EQ(1u, pool->size());
}

}  // namespace
}  // namespace hzram
