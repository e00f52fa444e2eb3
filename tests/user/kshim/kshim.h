/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of the kernel's headers to build lib/lz4/ as userspace C,
 * so that the codec tests can run the kernel's own LZ4 (see
 * tests/user/CMakeLists.txt).
 */
#ifndef KSHIM_H
#define KSHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#define CONFIG_64BIT 1
#define __LITTLE_ENDIAN 1234
#define BITS_PER_LONG 64

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define __init
#define __exit
#define EXPORT_SYMBOL(sym) extern int kshim_unused_export
#define MODULE_LICENSE(x) extern int kshim_unused_license
#define MODULE_DESCRIPTION(x) extern int kshim_unused_description

#define min(a, b) ((a) < (b) ? (a) : (b))
#define BUILD_BUG_ON(cond) ((void)sizeof(char[1 - 2 * !!(cond)]))

static inline unsigned long __ffs(unsigned long word) { return __builtin_ctzl(word); }
static inline unsigned long __fls(unsigned long word) { return 63 - __builtin_clzl(word); }

#define get_unaligned(ptr) ({ __typeof__(*(ptr)) v_; memcpy(&v_, (ptr), sizeof(v_)); v_; })
#define put_unaligned(val, ptr) ({ __typeof__(*(ptr)) v_ = (val); memcpy((ptr), &v_, sizeof(v_)); (void)0; })
#define get_unaligned_le16(ptr) ({ u16 v_; memcpy(&v_, (ptr), 2); v_; })
#define put_unaligned_le16(val, ptr) ({ u16 v_ = (val); memcpy((ptr), &v_, 2); (void)0; })

#endif
