# hzram: top-level build.
#
#   make                 build kmod/hzram.ko for the running kernel
#   make KDIR=<dir>      ... or against the kernel headers in <dir>
#   make check           install what is missing, build everything for
#                        the test kernels and run every test
#   make demo            the quick-start demo in a virtual machine
#   make bench           hzram against zram in a virtual machine
#   make dkms-install    install the module with DKMS (root)
#   make dkms-uninstall  remove it

KDIR ?= /lib/modules/$(shell uname -r)/build
VM_KERNELS ?= 6.1 6.12

.PHONY: all kmod clean-kmod clean check demo bench deps dkms-install dkms-uninstall

all: kmod

kmod:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod modules

clean-kmod:
	rm -f kmod/*.o kmod/*.ko kmod/*.mod kmod/*.mod.c kmod/.*.cmd \
		kmod/modules.order kmod/Module.symvers

clean: clean-kmod
	rm -rf build/out

deps:
	scripts/setup-debian

check: deps
	tests/run-all $(VM_KERNELS)

demo:
	scripts/demo

bench: deps
	bench/zram-compare

dkms-install:
	scripts/dkms install

dkms-uninstall:
	scripts/dkms uninstall
