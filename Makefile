# hzram: top-level build.
#
#   make                 build kmod/hzram.ko for the running kernel
#   make KDIR=<dir>      ... or against the kernel headers in <dir>
#   make userhelper      the helper's libraries, hzramd, tests and hzbench
#                        (build/userhelper/)
#   make hzramd          hzramd, hzramctl and hzram-setup, which the test
#                        guests run (build/userhelper/)
#   make hzram-setup     hzram-setup alone (build/userhelper/hzram-setup)
#   make gpu-bundle      tests, hzbench, gpukbench and hzramd linked to run on a GPU machine
#                        without packages (build/gpu-bundle/; run there
#                        with bench/gpu-run)
#   make fuzz            the fuzz targets of the decompressor and of the
#                        record path (build/fuzz/)
#   make fuzz-run        fuzz them for FUZZ_SECONDS in all (default 60,
#                        half each), from seeds made of the page corpus
#   make check           install what is missing, build everything for
#                        the test kernels and run every test
#   make demo            the quick-start demo in a virtual machine
#   make bench           the codec against liblz4; hzram against zram in
#                        a virtual machine, as a block device and as swap;
#                        hzram with hzramd against both
#   make dkms-install    install the module with DKMS (root)
#   make dkms-uninstall  remove it
#   make deb             the Debian packages hzram-dkms and hzram-tools
#                        (debian/; into build/deb/)

KDIR ?= /lib/modules/$(shell uname -r)/build
VM_KERNELS ?= 6.1 6.12 newest 6.12-debug
# Debian kernels that make check builds the module for but boots no guest
# of (tests/vm/fetch-headers).
HEADER_SETS ?= 6.12-trixie 7.2

# Userspace objects go through ccache when it is installed, with its cache
# beside the debug kernel's ($HZRAM_CACHE), so that a clean clone on the
# same machine does not compile again what did not change. Paths are
# hashed relative to the clone, so the clone's location does not matter.
HZRAM_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/hzram
CCACHE := $(shell command -v ccache 2>/dev/null)
ifneq ($(CCACHE),)
export CCACHE_DIR ?= $(HZRAM_CACHE)/ccache
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
CMAKE_LAUNCHER := -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE) \
	-DCMAKE_CUDA_COMPILER_LAUNCHER=$(CCACHE)
endif
CMAKE_CONFIGURE = cmake -S userhelper -B build/userhelper \
	-DHZRAM_CORPUS=$(CURDIR)/$(CORPUS) $(CMAKE_LAUNCHER) >/dev/null

.PHONY: all kmod clean-kmod clean check demo bench deps dkms-install dkms-uninstall deb \
	userhelper hzramd hzram-setup fuzz fuzz-run linux-source corpus hzbench gpu-bundle

all: kmod

kmod:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod modules

clean-kmod:
	rm -f kmod/*.o kmod/*.ko kmod/*.mod kmod/*.mod.c kmod/.*.cmd \
		kmod/modules.order kmod/Module.symvers kmod/hzram_config.h kmod/hzram_config.log
	rm -rf kmod/.probes.*

clean: clean-kmod
	rm -rf build/userhelper build/fuzz build/portable build/gpu-bundle build/deb
	rm -rf debian/.debhelper debian/tmp debian/hzram-dkms debian/hzram-tools \
		debian/files debian/*.substvars debian/*.debhelper debian/*.debhelper.log

deps:
	scripts/setup-debian

check: deps
	HZRAM_HEADER_SETS="$(HEADER_SETS)" tests/run-all $(VM_KERNELS)

demo:
	scripts/demo

bench: deps userhelper
	build/userhelper/hzbench --corpus $(CORPUS)
	bench/zram-compare
	bench/swap-compare
	bench/offload-compare
	bench/offload-profile
	bench/writeback-compare
	bench/recomp-compare

dkms-install:
	scripts/dkms install

dkms-uninstall:
	scripts/dkms uninstall

# The Debian packages (debian/; Documentation/admin-guide.rst), built in
# build/deb/userhelper, with ccache as above, into build/deb/. As
# dpkg-buildpackage -b would, less the source clean and the .changes
# (debian/control says Rules-Requires-Root: no: no fakeroot needed).
deb:
	dpkg-checkbuilddeps
	rm -f build/deb/*.deb
	mkdir -p build/deb
	DEB_RULES_REQUIRES_ROOT=no DEB_BUILD_OPTIONS="parallel=$(shell nproc) $(DEB_BUILD_OPTIONS)" \
		HZRAM_DEB_CMAKE_ARGS="$(CMAKE_LAUNCHER)" HZRAM_DEB_DIR=$(CURDIR)/build/deb \
		debian/rules binary
	@ls build/deb/*.deb

# The page corpus, decompressed, for the userspace tests and benchmarks.
CORPUS := build/data/procmem-64m.pages
corpus: $(CORPUS)
$(CORPUS): tests/data/procmem-64m.pages.xz
	mkdir -p $(dir $@)
	xz -dc $< >$@.tmp && mv $@.tmp $@

linux-source:
	scripts/fetch-linux-source

userhelper: linux-source corpus
	$(CMAKE_CONFIGURE)
	cmake --build build/userhelper -j $(shell nproc)

hzramd: linux-source corpus
	$(CMAKE_CONFIGURE)
	cmake --build build/userhelper -j $(shell nproc) --target hzramd hzramctl hzram-setup

hzram-setup: linux-source corpus
	$(CMAKE_CONFIGURE)
	cmake --build build/userhelper -j $(shell nproc) --target hzram-setup

hzbench: userhelper
	build/userhelper/hzbench --corpus $(CORPUS)

gpu-bundle: linux-source
	@command -v nvcc >/dev/null || test -x /usr/local/cuda/bin/nvcc || \
		{ echo "gpu-bundle: nvcc not found (CUDA in /usr/local/cuda)" >&2; exit 1; }
	PATH=$$PATH:/usr/local/cuda/bin cmake -S userhelper -B build/portable -DHZRAM_PORTABLE=ON >/dev/null
	cmake --build build/portable -j $(shell nproc) --target hzbench hzram_codec_test gpukbench hzramd
	rm -rf build/gpu-bundle
	mkdir -p build/gpu-bundle/lib
	cp build/portable/hzbench build/portable/tests/hzram_codec_test build/portable/gpukbench \
		build/portable/hzramd build/gpu-bundle/
	strip --strip-debug build/gpu-bundle/hzbench build/gpu-bundle/hzram_codec_test \
		build/gpu-bundle/gpukbench build/gpu-bundle/hzramd
	$(CC) -static -O2 -Wall -Wextra -Werror bench/kvm-probe.c -o build/gpu-bundle/kvm-probe
	# hzramd's liburing stays shared (userhelper/CMakeLists.txt): it goes along.
	cp -L $$(ldd build/portable/hzramd | awk '/liburing/ { print $$3 }') build/gpu-bundle/lib/
	build/gpu-bundle/hzram_codec_test --gtest_list_tests | grep -q '^GpuCodecTest' || \
		{ echo "gpu-bundle: built without the CUDA backend" >&2; exit 1; }

# libFuzzer needs clang; the library is built again with the sanitizers.
# fuzz_decompress: the page decompressor of every ISA; fuzz_records: the
# record path of a batch decompression (Codec, HybridCodec).
FUZZ_PAGE := isa pages lz4_scalar lz4_avx2 lz4_avx512
FUZZ_BATCH := $(FUZZ_PAGE) thread_pool codec hybrid
FUZZ_FLAGS := -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -Wall -Wextra -Werror \
	-Iuserhelper/lib/include -Iuserhelper/lib -Iinclude/uapi
FUZZ_HEADERS := userhelper/lib/lz4_format.h userhelper/lib/lz4_impl.h userhelper/lib/lz4_vec.h \
	userhelper/lib/thread_pool.h include/uapi/linux/hzram.h \
	userhelper/lib/include/hzram/page_codec.h userhelper/lib/include/hzram/codec.h \
	userhelper/lib/include/hzram/backend.h userhelper/lib/include/hzram/pages.h \
	userhelper/lib/page_codec_isa.h userhelper/lib/hybrid_model.h \
	tests/user/fuzz_records.h tests/user/slow_backend.h
fuzz: build/fuzz/fuzz_decompress build/fuzz/fuzz_records
build/fuzz/lz4_avx2.o: FUZZ_ISA := -mavx2 -mbmi -mbmi2
build/fuzz/lz4_avx512.o: FUZZ_ISA := -mavx512f -mavx512bw -mavx512vl -mbmi -mbmi2
build/fuzz/%.o: userhelper/lib/%.cc $(FUZZ_HEADERS)
	mkdir -p build/fuzz
	$(CCACHE) clang++ $(FUZZ_FLAGS) $(FUZZ_ISA) -c $< -o $@
build/fuzz/%.o: tests/user/%.cc $(FUZZ_HEADERS)
	mkdir -p build/fuzz
	$(CCACHE) clang++ $(FUZZ_FLAGS) -c $< -o $@
build/fuzz/fuzz_decompress: build/fuzz/fuzz_decompress.o $(FUZZ_PAGE:%=build/fuzz/%.o)
	clang++ $(FUZZ_FLAGS) -o $@ $^ -llz4
build/fuzz/fuzz_records: build/fuzz/fuzz_records.o $(FUZZ_BATCH:%=build/fuzz/%.o)
	clang++ $(FUZZ_FLAGS) -o $@ $^ -lzstd

# Fuzz both for FUZZ_SECONDS in all, half each (make check: 30 s), from
# seeds made of the page corpus, and the inputs that once failed
# (tests/data/fuzz-records/: each is run first).
FUZZ_SECONDS ?= 60
fuzz-run: fuzz userhelper
	rm -rf build/fuzz/corpus build/fuzz/corpus-records
	mkdir -p build/fuzz/corpus build/fuzz/corpus-records
	build/userhelper/tests/fuzz_seeds $(CORPUS) build/fuzz/corpus 200
	build/userhelper/tests/fuzz_seeds --records $(CORPUS) build/fuzz/corpus-records 200
	cp tests/data/fuzz-records/* build/fuzz/corpus-records/
	cd build/fuzz && ./fuzz_decompress -max_total_time=$$(( $(FUZZ_SECONDS) - $(FUZZ_SECONDS) / 2 )) \
		-print_final_stats=1 corpus
	cd build/fuzz && ./fuzz_records -max_total_time=$$(( $(FUZZ_SECONDS) / 2 )) \
		-print_final_stats=1 corpus-records
