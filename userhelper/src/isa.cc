// SPDX-License-Identifier: GPL-2.0
// Run-time choice of the page codec's instruction set.
#include <cerrno>
#include <cstdlib>
#include <string_view>

#include "hzram/page_codec.h"

namespace hzram {

namespace scalar {
extern const PageKernels kKernels;
}
namespace avx2 {
extern const PageKernels kKernels;
}
namespace avx512 {
extern const PageKernels kKernels;
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "?";
}

bool IsaSupported(Isa isa) {
  // libgcc's checks include the OS saving the vector state (XGETBV).
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
             __builtin_cpu_supports("bmi2");
    case Isa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("bmi") &&
             __builtin_cpu_supports("bmi2");
  }
  return false;
}

Isa BestIsa() {
  if (IsaSupported(Isa::kAvx512)) return Isa::kAvx512;
  if (IsaSupported(Isa::kAvx2)) return Isa::kAvx2;
  return Isa::kScalar;
}

int ParseIsa(std::string_view name, Isa* isa) {
  for (int i = 0; i < kIsaCount; i++) {
    if (name == IsaName(static_cast<Isa>(i))) {
      *isa = static_cast<Isa>(i);
      return 0;
    }
  }
  return -EINVAL;
}

int DefaultIsa(Isa* isa) {
  const char* env = std::getenv("HZRAM_ISA");
  if (!env || !*env) {
    *isa = BestIsa();
    return 0;
  }
  Isa want;
  if (ParseIsa(env, &want)) return -EINVAL;
  if (!IsaSupported(want)) return -ENOTSUP;
  *isa = want;
  return 0;
}

const PageKernels& KernelsFor(Isa isa) {
  switch (isa) {
    case Isa::kAvx2: return avx2::kKernels;
    case Isa::kAvx512: return avx512::kKernels;
    case Isa::kScalar: break;
  }
  return scalar::kKernels;
}

}  // namespace hzram
