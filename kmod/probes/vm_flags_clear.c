// SPDX-License-Identifier: GPL-2.0
/*
 * vma->vm_flags is changed with vm_flags_set()/vm_flags_clear() (6.3); it
 * is read-only otherwise.
 */
#include <linux/mm.h>

static void __maybe_unused hzram_probe(struct vm_area_struct *vma)
{
	vm_flags_clear(vma, VM_MAYWRITE);
}
