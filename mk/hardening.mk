# hardening.mk — included by the Makefile: hardening (docs/RELIABILITY.md): multi-process stress, sanitizers, valgrind, fuzzing.
# `make test` with CI=true (the environment .ci/run runs in) runs all of them after the
# suite: `make hardening`.
.PHONY: hardening stress asan ubsan tsan valgrind valgrind-rest valgrind-llvm valgrind-families \
	fuzz gpu-runs-check
SAN_OPT := -O1 -g -fno-omit-frame-pointer
SAN_DIR := $(CURDIR)/tests/sanitizers
# CI fuzzes each target FUZZ_SECONDS; a longer search: `make fuzz FUZZ_SECONDS=600`.
FUZZ_SECONDS ?= 20
FUZZ_TARGETS := params schema entry template resp
FUZZ_BUILD := $(BUILD)/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -pthread -Iinclude -Isrc -Itests \
               -I$(CUDA_HOME)/include $(SAN_OPT) $(FUZZ_SAN)
STRESS_SECONDS ?= 600

# Longest first: they run side by side, as many as there are processors (tests/hardening.sh).
# What several of them share in $(BUILD) is built first, so that none builds it concurrently.
# With WITH_SUITE (CI: `make test` with CI=true) the plain suite (`suite-sampled`) and the
# install check are two of them, in their place by length.
HARDENING := valgrind-rest valgrind-llvm asan tsan fuzz $(if $(WITH_SUITE),suite-sampled) \
	$(if $(WITH_SUITE),install-check) test-no-llvm valgrind-families gpu-runs-check stress

# CI's plain suite: every test but the LLVM sweeps' whole walks (~2,100 kernels, ~6 of its
# ~8 minutes on the 2-core machine), which asan and tsan sample — every SWEEP_STRIDE-th
# request from an offset the commit picks (its hash modulo the stride), so that successive
# commits sample different requests; the log names the offset and PTXJIT_TEST_SWEEP_OFFSET=N
# repeats a sample. `make test` without CI runs the whole sweeps.
SWEEP_OFFSET ?= $(shell h=$$(git rev-parse --short=6 HEAD 2>/dev/null) && \
	echo $$(( 0x$$h % $(SWEEP_STRIDE) )) || echo 0)
.PHONY: suite-sampled
suite-sampled: $(TEST_RUNNER) $(CLI) $(PLUGIN_IF_LLVM) $(FAKE_CUDA) examples
	$(Q)CK_EXCLUDE_TAGS=sweep PTXJIT_CLI=$(abspath $(CLI)) PTXJIT_EXAMPLE_TOOL=$(EXAMPLE_TOOL) \
	    $(TEST_RUNNER)
	$(Q)echo "suite-sampled: the LLVM sweeps left to asan and tsan (every $(SWEEP_STRIDE)th request from offset $(SWEEP_OFFSET))"
hardening: $(TEST_RUNNER) $(CLI) $(PLUGIN) $(FAKE_CUDA) $(STRESS) $(NVRTC_MEMO) $(if $(WITH_SUITE),examples)
	$(Q)MAKE="$(MAKE)" sh tests/hardening.sh $(BUILD)/hardening $(HARDENING)

# 16 processes x 1000 requests on one cache dir (NVRTC and llvm keys), 4 killed mid-write and
# 2 at random; then 8 processes against a cap small enough to evict all the time. Passes on
# correctness.
stress: $(STRESS)
	$(Q)timeout $(STRESS_SECONDS) $(STRESS) -p 16 -r 1000 -k 4 -K 2
	$(Q)timeout $(STRESS_SECONDS) $(STRESS) -p 8 -r 300 -k 2 -K 1 -m 300000
	$(Q)$(MAKE) --no-print-directory stress-remote

# The same with a remote cache (tests/stress/remote.sh): 8 processes on one cache dir and one
# redis-server, which is SIGKILLed and restarted mid-run.
.PHONY: stress-remote
stress-remote: $(STRESS)
	$(Q)timeout $(STRESS_SECONDS) sh tests/stress/remote.sh $(STRESS) -p 8 -r 300 -k 2 -K 1

# The same objects and suite, each with a sanitizer, in a build folder of its own. The LLVM
# sweeps (~2,100 kernels, ~2 min natively) and the matmul generator's comparisons with NVRTC
# compile a sample there: every SWEEP_STRIDE-th request (and the first configuration of each
# matmul variant). LLVM itself is not instrumented; the generators and libptxjit's side are.
SWEEP_STRIDE ?= 10
SAN_TESTS = PTXJIT_TEST_SWEEP_STRIDE=$(SWEEP_STRIDE) PTXJIT_TEST_SWEEP_OFFSET=$(SWEEP_OFFSET)
# intercept_tls_get_addr=0: LSan's tracking of dynamic TLS records a block of libnvrtc with
# an impossible address and its tracer dies on it; ptxjit keeps no heap pointer in dynamic TLS.
# asan builds with UBSan too (one build, one run of the suite for both); `make ubsan` alone
# remains for a build without ASan's shadow memory.
asan:
	$(Q)$(SAN_TESTS) \
	    ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:intercept_tls_get_addr=0 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    $(MAKE) --no-print-directory CI= BUILD=$(BUILD)/asan OPT="$(SAN_OPT)" \
	    SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" test
ubsan:
	$(Q)$(SAN_TESTS) UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    $(MAKE) --no-print-directory CI= BUILD=$(BUILD)/ubsan OPT="$(SAN_OPT)" \
	    SAN="-fsanitize=undefined -fno-sanitize-recover=all" test
# tsan runs the suites where ptxjit's threads meet: the compile pool, the tuner, the caches
# and their copier, the remote tier, the threads and pipeline suites, templates reloaded under
# requests, several GPUs, the hit path, launches and the llvm plugin's threaded sweep. The
# suites below make one request at a time (the copier's thread is the only other one, and
# the cache suites above exercise it): asan and memcheck run them.
TSAN_SUITES_EXCLUDE := strbuf dynlib params families backend_select fuzz_replay conventions \
	examples builtins plan cli faults cache_trust out_of_memory compile_inputs inspect \
	llvm_reduce llvm_transpose reduce transpose matmul softmax
tsan:
	$(Q)$(SAN_TESTS) PTXJIT_TEST_SUITES_EXCLUDE="$(TSAN_SUITES_EXCLUDE)" \
	    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(SAN_DIR)/tsan.supp \
	    $(MAKE) --no-print-directory CI= BUILD=$(BUILD)/tsan OPT="$(SAN_OPT)" \
	    SAN="-fsanitize=thread" test

# memcheck over the whole CPU suite; every child process Check forks is checked and exits 99
# on an error or a leak. In three parts, which CI runs side by side: the suites that compile
# through the llvm backend (softmax and inspect too: their tests compile through both), with
# NVRTC, the plugin and nvJitLink warmed in the runner before it
# forks; the matmul and transpose suites (NVRTC compiling the family templates, ~6 min); and
# the rest, both with NVRTC warmed (tests/warm_compilers.c says why). Under memcheck a compile
# takes seconds (a matmul template through NVRTC ~12 s): the sweeps compile their first
# request only.
# launch_api is among the llvm suites: its tests compile through both routes too. Cases
# tagged ptx_content (what the PTX of many compiles holds: the matmul suite's ~40 template
# compiles, each llvm generator compared variant by variant with its template's kernel) and
# cpu_model (softmax's model of its kernels, pure arithmetic) run natively and under the
# sanitizers, not under memcheck: there they were half of its time, and the code they reach
# in ptxjit runs under memcheck in the other cases (every generator's variants, compiles,
# the cubin readers).
VALGRIND := valgrind --quiet --error-exitcode=99 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect,possible \
	--show-leak-kinds=definite,indirect,possible --suppressions=$(SAN_DIR)/valgrind.supp
VALGRIND_LLVM_SUITES := llvm llvm_reduce llvm_transpose llvm_matmul softmax inspect launch_api
VALGRIND_FAMILY_SUITES := matmul transpose
VALGRIND_SWEEP_STRIDE ?= 1000
# The allocation-failure tests fail every allocation of an operation in turn; under memcheck
# every 16th (those that compile make a compile per allocation, seconds each there); asan's
# LeakSanitizer takes every one. Cases tagged many_compiles (tests/test_util.h) are left out
# here: their point is many compiles of the same code, which asan, ubsan and tsan run.
VALGRIND_OOM_STRIDE ?= 16
# tune_search: ptxjit_tune's rounds on the fake driver, each case a tuning of a compiled space
# (384 s under memcheck, 2026-11-28); natively and under asan and tsan it runs whole.
VALGRIND_LEFT_OUT := tune_search
# NVRTC itself is answered from a memo (tests/shim/nvrtc_memo.c) for the compiles the part
# made before — the same source, options and headers in another test's process; about half
# of them — and the log says how many; ptxjit's side of each compile runs as before.
MEMO_DIR = $(abspath $(BUILD))/nvrtc-memo/$@
MEMO = rm -rf $(MEMO_DIR) && mkdir -p $(MEMO_DIR) && \
	PTXJIT_NVRTC_LIBRARY=$(abspath $(NVRTC_MEMO)) PJTEST_NVRTC_MEMO=$(MEMO_DIR)
MEMO_TALLY = echo "nvrtc memo: $$(cat $(MEMO_DIR)/hits 2>/dev/null | wc -c) of \
	$$(cat $(MEMO_DIR)/hits $(MEMO_DIR)/misses 2>/dev/null | wc -c) compiles answered from the memo"
valgrind: valgrind-rest valgrind-llvm valgrind-families
valgrind-rest: $(TEST_RUNNER) $(CLI) $(PLUGIN) $(FAKE_CUDA) $(NVRTC_MEMO)
	$(Q)$(MEMO) PTXJIT_TEST_SUITES_EXCLUDE="$(VALGRIND_LLVM_SUITES) $(VALGRIND_FAMILY_SUITES) \
	    $(VALGRIND_LEFT_OUT)" \
	    PTXJIT_TEST_WARM_COMPILERS=nvrtc PTXJIT_TEST_OOM_STRIDE=$(VALGRIND_OOM_STRIDE) \
	    CK_EXCLUDE_TAGS=many_compiles CK_TIMEOUT_MULTIPLIER=10 \
	    PTXJIT_CLI=$(abspath $(CLI)) $(VALGRIND) $(TEST_RUNNER)
	$(Q)$(MEMO_TALLY)
valgrind-llvm: $(TEST_RUNNER) $(CLI) $(PLUGIN) $(FAKE_CUDA) $(NVRTC_MEMO)
	$(Q)$(MEMO) PTXJIT_TEST_SUITES="$(VALGRIND_LLVM_SUITES)" \
	    PTXJIT_TEST_WARM_COMPILERS=nvrtc,llvm,nvjitlink \
	    PTXJIT_TEST_SWEEP_STRIDE=$(VALGRIND_SWEEP_STRIDE) CK_EXCLUDE_TAGS="ptx_content cpu_model many_compiles" \
	    CK_TIMEOUT_MULTIPLIER=10 \
	    PTXJIT_CLI=$(abspath $(CLI)) $(VALGRIND) $(TEST_RUNNER)
	$(Q)$(MEMO_TALLY)
valgrind-families: $(TEST_RUNNER) $(CLI) $(PLUGIN) $(FAKE_CUDA) $(NVRTC_MEMO)
	$(Q)$(MEMO) PTXJIT_TEST_SUITES="$(VALGRIND_FAMILY_SUITES)" PTXJIT_TEST_WARM_COMPILERS=nvrtc \
	    CK_EXCLUDE_TAGS="ptx_content many_compiles" CK_TIMEOUT_MULTIPLIER=10 \
	    PTXJIT_CLI=$(abspath $(CLI)) \
	    $(VALGRIND) $(TEST_RUNNER)
	$(Q)$(MEMO_TALLY)

# The library, the CLI and the suite as a machine without llvm-19-dev builds them: no plugin,
# the llvm route refusing with the fix, its tests saying they were skipped. The suites that
# reach the llvm route (the rest do not change without it).
NO_LLVM_SUITES := llvm llvm_reduce llvm_transpose llvm_matmul backend_select bench_compile cli \
	compile_inputs inspect launch_api out_of_memory pipeline threads plan reduce transpose \
	matmul softmax
.PHONY: test-no-llvm
test-no-llvm:
	$(Q)$(MAKE) --no-print-directory CI= BUILD=$(BUILD)/no-llvm LLVM_CONFIG=none \
	    $(BUILD)/no-llvm/ptxjit_tests $(BUILD)/no-llvm/ptxjit $(BUILD)/no-llvm/fake_cuda/libcuda.so.1
	$(Q)PTXJIT_TEST_SUITES="$(NO_LLVM_SUITES)" PTXJIT_CLI=$(abspath $(BUILD))/no-llvm/ptxjit \
	    $(BUILD)/no-llvm/ptxjit_tests

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
	    tests/fuzz/fuzz_util.c $(FUZZ_BUILD)/libptxjit.a $(REMOTE_LIBS) $(LDLIBS_BASE)
fuzz: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)
	$(Q)sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)
.PHONY: FORCE
FORCE:

