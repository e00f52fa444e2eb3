// SPDX-License-Identifier: GPL-2.0
//
// kvm-probe: whether this machine can run a virtual machine with KVM.
// Opens /dev/kvm, creates a VM with one page of memory and one vCPU in
// real mode, and runs a guest of four instructions that writes 42 to an
// I/O port and halts: the vCPU must exit with that write, then the halt.
// Prints one line saying what worked (or where it failed) and exits 0
// only if the guest ran. bench/gpu-run records it: where KVM works, the
// module's benchmarks can run in a guest that is not emulated.
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

static int fail(const char *what)
{
	printf("kvm-probe: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(void)
{
	/* mov $0x10, %dx; mov $42, %al; out %al, (%dx); hlt */
	static const uint8_t code[] = { 0xba, 0x10, 0x00, 0xb0, 42, 0xee, 0xf4 };
	struct kvm_userspace_memory_region region;
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	struct kvm_run *run;
	int kvm, vm, vcpu, api, size, max;
	uint8_t *mem;

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return fail("open /dev/kvm");
	api = ioctl(kvm, KVM_GET_API_VERSION, 0);
	if (api != KVM_API_VERSION) {
		printf("kvm-probe: KVM_GET_API_VERSION: %d, not %d\n", api, KVM_API_VERSION);
		return 1;
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		return fail("KVM_CREATE_VM");
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return fail("mmap");
	memcpy(mem, code, sizeof(code));
	memset(&region, 0, sizeof(region));
	region.guest_phys_addr = 0x1000;
	region.memory_size = 4096;
	region.userspace_addr = (uintptr_t)mem;
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return fail("KVM_SET_USER_MEMORY_REGION");
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		return fail("KVM_CREATE_VCPU");
	size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (size < (int)sizeof(*run))
		return fail("KVM_GET_VCPU_MMAP_SIZE");
	run = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED)
		return fail("mmap the vCPU");
	if (ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		return fail("KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0)
		return fail("KVM_SET_SREGS");
	memset(&regs, 0, sizeof(regs));
	regs.rip = 0x1000;
	regs.rflags = 0x2;
	if (ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		return fail("KVM_SET_REGS");

	int out = -1;
	for (int i = 0; i < 4; i++) {
		if (ioctl(vcpu, KVM_RUN, 0) < 0)
			return fail("KVM_RUN");
		if (run->exit_reason == KVM_EXIT_IO && run->io.direction == KVM_EXIT_IO_OUT &&
		    run->io.port == 0x10 && run->io.size == 1) {
			out = *((uint8_t *)run + run->io.data_offset);
			continue;
		}
		if (run->exit_reason == KVM_EXIT_HLT)
			break;
		printf("kvm-probe: the guest exited with reason %u\n", run->exit_reason);
		return 1;
	}
	if (run->exit_reason != KVM_EXIT_HLT || out != 42) {
		printf("kvm-probe: the guest did not write 42 and halt (wrote %d)\n", out);
		return 1;
	}
	max = ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	printf("kvm-probe: KVM works: a guest ran (wrote 42, halted); up to %d vCPUs a VM\n", max);
	return 0;
}
