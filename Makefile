# ptxjit — one Makefile: library (static + shared), CLI, tests, demo, install.
# Quiet by default; `make V=1` shows the commands.

CUDA_HOME ?= /usr/local/cuda
PREFIX ?= /usr/local
CC ?= cc
BUILD ?= build

Q := $(if $(V),,@)
say = $(if $(V),,@printf '  %-7s %s\n' $(1) $(2);)

CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fPIC -pthread -MMD -MP \
               -Iinclude -Isrc -I$(CUDA_HOME)/include
OPT ?= -O2 -g
CFLAGS ?=
ALL_CFLAGS = $(CFLAGS_BASE) $(OPT) $(SAN) $(CFLAGS)
LDLIBS_BASE := -ldl -lpthread -lm
# Check linked statically so the test runner travels to machines without Check installed.
CHECK_LIBS := -Wl,-Bstatic -lcheck_pic -lsubunit -Wl,-Bdynamic -lrt

LIB_SRC := $(sort $(filter-out src/cli/% src/tools/%,$(wildcard src/*.c src/*/*.c)))
# The LLVM backend's plugin: IR generators and LLVM (static), loaded by libptxjit with dlopen.
PLUGIN_SRC := $(sort $(wildcard src/backend/llvm/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/*.c tests/fuzz/fuzz_*.c))
TEMPLATES := $(sort $(wildcard templates/*.cu))

OBJ_DIR := $(BUILD)/obj
LIB_OBJ := $(LIB_SRC:%.c=$(OBJ_DIR)/%.o) $(OBJ_DIR)/gen/templates_embedded.o
CLI_OBJ := $(CLI_SRC:%.c=$(OBJ_DIR)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(OBJ_DIR)/%.o)
PLUGIN_OBJ := $(PLUGIN_SRC:%.c=$(OBJ_DIR)/%.o)

STATIC_LIB := $(BUILD)/libptxjit.a
SHARED_LIB := $(BUILD)/libptxjit.so
CLI := $(BUILD)/ptxjit
TEST_RUNNER := $(BUILD)/ptxjit_tests
# A stand-in NVRTC that counts compiles in flight, for the threads test (tests/shim/).
TEST_SHIM := $(BUILD)/libpjtest_nvrtc_shim.so
STRESS := $(BUILD)/ptxjit_stress
PLUGIN := $(BUILD)/libptxjit_llvm.so
# A stand-in libcuda that logs cuInit: test_cli checks that --no-gpu keeps the driver unstarted.
FAKE_CUDA := $(BUILD)/fake_cuda/libcuda.so.1

# LLVM 19 (Debian's llvm-19-dev), linked statically into the plugin only: one ~30 MB file that
# travels with the CLI and the tests, which stay small; nothing of LLVM is needed at run time.
LLVM_CONFIG ?= llvm-config-19
# Recursive (=): `make deps test` parses this Makefile before deps installs LLVM.
LLVM_VERSION = $(shell $(LLVM_CONFIG) --version 2>/dev/null)
LLVM_COMPONENTS := nvptx passes core support target analysis
LLVM_CFLAGS = $(shell $(LLVM_CONFIG) --cflags)
LLVM_LIBS = $(shell $(LLVM_CONFIG) --ldflags) \
            $(shell $(LLVM_CONFIG) --link-static --libs $(LLVM_COMPONENTS))
# zlib and zstd statically as well, and only the plugin's entry point exported.
PLUGIN_LDFLAGS := -shared -static-libstdc++ -static-libgcc -Wl,--gc-sections \
                  -Wl,--exclude-libs,ALL -Wl,--version-script=src/backend/llvm/plugin.map \
                  -Wl,-Bsymbolic -Wl,--strip-all
PLUGIN_SYSLIBS := -Wl,-Bstatic -lzstd -lz -Wl,-Bdynamic -ldl -lpthread -lm

.PHONY: all test demo install clean deps examples check-cuda check-llvm
all: $(STATIC_LIB) $(SHARED_LIB) $(CLI) $(PLUGIN)

check-cuda:
	@test -f $(CUDA_HOME)/include/nvrtc.h || { \
	  echo "error: no CUDA toolkit at CUDA_HOME=$(CUDA_HOME) (nvrtc.h missing)."; \
	  echo "fix: install the CUDA toolkit (12.0 or newer) or run make CUDA_HOME=/path/to/cuda"; exit 1; }

check-llvm:
	@test -n "$(LLVM_VERSION)" || { \
	  echo "error: $(LLVM_CONFIG) not found (the llvm backend needs LLVM 19's static libraries)."; \
	  echo "fix: run make deps (installs llvm-19-dev), or make LLVM_CONFIG=/path/to/llvm-config"; \
	  exit 1; }

$(OBJ_DIR)/%.o: %.c | check-cuda check-llvm
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OBJ_DIR)/gen/templates_embedded.o: $(BUILD)/gen/templates_embedded.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/embed_templates: src/tools/embed_templates.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) -std=c11 -O1 -Wall -Wextra -Werror $< -o $@

# Templates are compiled into the library; the generated file changes when any template does.
$(BUILD)/gen/templates_embedded.c: $(BUILD)/embed_templates $(TEMPLATES)
	@mkdir -p $(dir $@)
	$(call say,EMBED,$@)$(BUILD)/embed_templates $@ $(TEMPLATES)

$(STATIC_LIB): $(LIB_OBJ)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

$(SHARED_LIB): $(LIB_OBJ) src/libptxjit.map
	$(call say,LD,$@)$(CC) -shared $(SAN) -Wl,-soname,libptxjit.so.0 \
	    -Wl,--version-script=src/libptxjit.map -o $@ $(LIB_OBJ) $(LDLIBS_BASE)

$(CLI): $(CLI_OBJ) $(STATIC_LIB)
	$(call say,LD,$@)$(CC) $(SAN) -o $@ $(CLI_OBJ) $(STATIC_LIB) $(LDLIBS_BASE)

# --wrap: every allocation ptxjit makes can be made to fail (tests/test_out_of_memory.c),
# and every cache write (tests/fileio_faults.c; the library's seam does nothing).
SEAM_WRAP := -Wl,--wrap=pj_fileio_seam
TEST_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc $(SEAM_WRAP)
$(TEST_RUNNER): $(TEST_OBJ) $(STATIC_LIB) | $(TEST_SHIM)
	$(call say,LD,$@)$(CC) $(SAN) $(TEST_WRAP) -o $@ $(TEST_OBJ) $(STATIC_LIB) $(CHECK_LIBS) \
	    $(LDLIBS_BASE)

$(STRESS): tests/stress/stress.c tests/fileio_faults.c $(STATIC_LIB)
	$(call say,LD,$@)$(CC) $(ALL_CFLAGS) -Itests $(SEAM_WRAP) -o $@ $^ $(LDLIBS_BASE)

$(TEST_SHIM): tests/shim/nvrtc_shim.c | check-cuda
	$(call say,LD,$@)$(CC) $(ALL_CFLAGS) -shared -o $@ $< -ldl -lpthread

$(TEST_OBJ): CFLAGS_BASE += -Itests -DPJ_SOURCE_DIR='"$(CURDIR)"'
# The LLVM version this build's plugin holds: part of the llvm route's cache keys.
$(OBJ_DIR)/src/backend/llvm.o: CFLAGS_BASE += -DPJ_LLVM_VERSION='"$(LLVM_VERSION)"'
$(PLUGIN_OBJ): CFLAGS_BASE += $(LLVM_CFLAGS) -fvisibility=hidden

$(PLUGIN): $(PLUGIN_OBJ) src/backend/llvm/plugin.map
	$(call say,LD,$@)$(CXX) $(PLUGIN_LDFLAGS) $(SAN) -o $@ $(PLUGIN_OBJ) $(LLVM_LIBS) \
	    $(PLUGIN_SYSLIBS)

# Installs what a fresh Debian 12 machine lacks (needs root or sudo); a no-op when present.
deps:
	$(Q)sh tests/install_deps.sh

$(FAKE_CUDA): tests/fake_cuda/libcuda.c
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -shared -fPIC -O1 -Wall -Wextra -Werror -o $@ $<

test: $(TEST_RUNNER) $(CLI) $(PLUGIN) $(FAKE_CUDA)
	$(Q)PTXJIT_CLI=$(abspath $(CLI)) $(TEST_RUNNER)
	$(Q)$(if $(filter true,$(CI)),$(MAKE) --no-print-directory CI= hardening,:)

demo: all examples
	$(Q)sh examples/demo.sh $(CLI)

# The example builds the way an embedding program would: installed, found by pkg-config.
examples: all
	$(Q)$(MAKE) --no-print-directory install PREFIX=$(abspath $(BUILD))/prefix >/dev/null
	$(Q)PKG_CONFIG_PATH=$(abspath $(BUILD))/prefix/lib/pkgconfig $(MAKE) --no-print-directory \
	    -C examples OUT=$(abspath $(BUILD))

install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/ptxjit.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(PREFIX)/lib/libptxjit.so.0
	install -m 755 $(PLUGIN) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libptxjit.so.0 $(DESTDIR)$(PREFIX)/lib/libptxjit.so
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(shell sed -n 's/^#define PTXJIT_VERSION "\(.*\)"/\1/p' include/ptxjit.h)|' \
	    src/ptxjit.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/ptxjit.pc

clean:
	rm -rf $(BUILD)

# ---- hardening (docs/RELIABILITY.md): multi-process stress, sanitizers, valgrind, fuzzing.
# `make test` with CI=true (the environment .ci/run runs in) runs all of them after the
# suite: `make hardening`.
.PHONY: hardening stress asan ubsan tsan valgrind valgrind-rest valgrind-llvm valgrind-families \
	fuzz gpu-runs-check
SAN_OPT := -O1 -g -fno-omit-frame-pointer
SAN_DIR := $(CURDIR)/tests/sanitizers
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := params schema entry
FUZZ_BUILD := $(BUILD)/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -pthread -Iinclude -Isrc -Itests \
               -I$(CUDA_HOME)/include $(SAN_OPT) $(FUZZ_SAN)
STRESS_SECONDS ?= 600

# Longest first: they run side by side, as many as there are processors (tests/hardening.sh).
# What several of them share in $(BUILD) is built first, so that none builds it concurrently.
HARDENING := valgrind-llvm valgrind-rest valgrind-families fuzz tsan asan ubsan gpu-runs-check stress
hardening: $(TEST_RUNNER) $(CLI) $(PLUGIN) $(FAKE_CUDA) $(STRESS)
	$(Q)MAKE="$(MAKE)" sh tests/hardening.sh $(BUILD)/hardening $(HARDENING)

# 16 processes x 1000 requests on one cache dir (NVRTC and llvm keys), 4 killed mid-write and
# 2 at random; then 8 processes against a cap small enough to evict all the time. Passes on
# correctness.
stress: $(STRESS)
	$(Q)timeout $(STRESS_SECONDS) $(STRESS) -p 16 -r 1000 -k 4 -K 2
	$(Q)timeout $(STRESS_SECONDS) $(STRESS) -p 8 -r 300 -k 2 -K 1 -m 300000

# The same objects and suite, each with a sanitizer, in a build folder of its own. The LLVM
# sweeps (~2,100 kernels, ~2 min natively) and the matmul generator's comparisons with NVRTC
# compile a sample there: every SWEEP_STRIDE-th request (and the first configuration of each
# matmul variant). LLVM itself is not instrumented; the generators and libptxjit's side are.
SWEEP_STRIDE ?= 10
SAN_TESTS = PTXJIT_TEST_SWEEP_STRIDE=$(SWEEP_STRIDE)
# intercept_tls_get_addr=0: LSan's tracking of dynamic TLS records a block of libnvrtc with
# an impossible address and its tracer dies on it; ptxjit keeps no heap pointer in dynamic TLS.
asan:
	$(Q)$(SAN_TESTS) \
	    ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:intercept_tls_get_addr=0 \
	    $(MAKE) --no-print-directory CI= BUILD=$(BUILD)/asan OPT="$(SAN_OPT)" \
	    SAN="-fsanitize=address" test
ubsan:
	$(Q)$(SAN_TESTS) UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    $(MAKE) --no-print-directory CI= BUILD=$(BUILD)/ubsan OPT="$(SAN_OPT)" \
	    SAN="-fsanitize=undefined -fno-sanitize-recover=all" test
tsan:
	$(Q)$(SAN_TESTS) \
	    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(SAN_DIR)/tsan.supp \
	    $(MAKE) --no-print-directory CI= BUILD=$(BUILD)/tsan OPT="$(SAN_OPT)" \
	    SAN="-fsanitize=thread" test

# memcheck over the whole CPU suite; every child process Check forks is checked and exits 99
# on an error or a leak. In three parts, which CI runs side by side: the suites that compile
# through the llvm backend, with NVRTC, the plugin and nvJitLink warmed in the runner before it
# forks; the matmul and transpose suites (NVRTC compiling the family templates, ~6 min); and
# the rest, both with NVRTC warmed (tests/warm.c says why). Under memcheck a compile takes
# seconds (a matmul template through NVRTC ~12 s): the sweeps compile their first request
# only and the matmul generator's comparisons the first configuration of each variant.
VALGRIND := valgrind --quiet --error-exitcode=99 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect,possible \
	--show-leak-kinds=definite,indirect,possible --suppressions=$(SAN_DIR)/valgrind.supp
VALGRIND_LLVM_SUITES := llvm llvm_reduce llvm_transpose llvm_matmul
VALGRIND_FAMILY_SUITES := matmul transpose
VALGRIND_SWEEP_STRIDE ?= 1000
valgrind: valgrind-rest valgrind-llvm valgrind-families
valgrind-rest: $(TEST_RUNNER) $(CLI) $(PLUGIN) $(FAKE_CUDA)
	$(Q)PTXJIT_TEST_SUITES_EXCLUDE="$(VALGRIND_LLVM_SUITES) $(VALGRIND_FAMILY_SUITES)" \
	    PTXJIT_TEST_WARM_COMPILERS=nvrtc CK_TIMEOUT_MULTIPLIER=10 \
	    PTXJIT_CLI=$(abspath $(CLI)) $(VALGRIND) $(TEST_RUNNER)
valgrind-llvm: $(TEST_RUNNER) $(CLI) $(PLUGIN) $(FAKE_CUDA)
	$(Q)PTXJIT_TEST_SUITES="$(VALGRIND_LLVM_SUITES)" PTXJIT_TEST_WARM_COMPILERS=nvrtc,llvm,nvjitlink \
	    PTXJIT_TEST_SWEEP_STRIDE=$(VALGRIND_SWEEP_STRIDE) CK_TIMEOUT_MULTIPLIER=10 \
	    PTXJIT_CLI=$(abspath $(CLI)) $(VALGRIND) $(TEST_RUNNER)
valgrind-families: $(TEST_RUNNER) $(CLI) $(PLUGIN) $(FAKE_CUDA)
	$(Q)PTXJIT_TEST_SUITES="$(VALGRIND_FAMILY_SUITES)" PTXJIT_TEST_WARM_COMPILERS=nvrtc \
	    CK_TIMEOUT_MULTIPLIER=10 PTXJIT_CLI=$(abspath $(CLI)) $(VALGRIND) $(TEST_RUNNER)

# Every run of bench/sanitize_gpu.sh (which needs a GPU) still names valid parameters.
gpu-runs-check: $(CLI)
	$(Q)PTXJIT=$(CLI) OUT=$(BUILD)/gpu-runs-check bash bench/sanitize_gpu.sh --check >/dev/null \
	    && echo "bench/sanitize_gpu.sh: every run's kernel compiles"

# libFuzzer (clang) with ASan+UBSan: each target FUZZ_SECONDS on a copy of its seed corpus,
# after replaying its regressions. A crash fails the build and names the input to keep.
$(FUZZ_BUILD)/libptxjit.a: FORCE
	$(Q)$(MAKE) --no-print-directory CI= CC=clang BUILD=$(FUZZ_BUILD) OPT="$(SAN_OPT)" \
	    SAN="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" $@
$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/libptxjit.a tests/fuzz/fuzz_%.c tests/fuzz/fuzz_util.c
	$(call say,LD,$@)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer \
	    -DPJ_FUZZ_TARGET=fuzz_$* -o $@ tests/fuzz/libfuzzer_main.c tests/fuzz/fuzz_$*.c \
	    tests/fuzz/fuzz_util.c $(FUZZ_BUILD)/libptxjit.a $(LDLIBS_BASE)
fuzz: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)
	$(Q)sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)
.PHONY: FORCE
FORCE:

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
