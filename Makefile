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
# The remote cache tier (src/remote/) links nothing: Redis is spoken by src/remote/resp.c,
# and nettle's HMAC-SHA-256 is loaded with dlopen when a signed remote tier is configured
# (src/remote/nettle.c; its headers are needed to build: make deps installs nettle-dev).
# Check linked statically so the test runner travels to machines without Check installed.
CHECK_LIBS := -Wl,-Bstatic -lcheck_pic -lsubunit -Wl,-Bdynamic -lrt

# The families, as src/catalog/list.h names them: each is a folder of src/families/ and
# templates/NAME.cu. A family's files go by their names: gen*.c into the LLVM plugin, cli*.c
# into the CLI, test*.c into the test runner, every other .c into the library. Adding a
# family, or a file to one, adds a line to list.h, not here.
FAMILIES := $(shell sed -n 's/^ *X(\([a-z0-9_]*\)).*/\1/p' src/catalog/list.h)
FAMILY_DIRS := $(FAMILIES:%=src/families/%)
FAMILY_C := $(sort $(wildcard $(FAMILY_DIRS:%=%/*.c)))
FAMILY_GEN := $(filter %/gen.c $(FAMILY_DIRS:%=%/gen_%),$(FAMILY_C))
FAMILY_CLI := $(filter $(FAMILY_DIRS:%=%/cli%),$(FAMILY_C))
FAMILY_TEST := $(filter $(FAMILY_DIRS:%=%/test%),$(FAMILY_C))
FAMILY_LIB := $(filter-out $(FAMILY_GEN) $(FAMILY_CLI) $(FAMILY_TEST),$(FAMILY_C))

# The library: every .c of its folders, lowest layer first (docs/ARCHITECTURE.md, "House").
LIB_DIRS := util params catalog binary driver compilers cache remote records request gpu pool tune
LIB_SRC := $(sort $(wildcard $(LIB_DIRS:%=src/%/*.c))) $(FAMILY_LIB)
# The LLVM backend's plugin: the builder layer, the IR generators and LLVM (static), loaded by
# libptxjit with dlopen.
PLUGIN_SRC := $(sort $(wildcard src/plugin/*.c)) $(FAMILY_GEN)
CLI_SRC := $(sort $(wildcard src/cli/*.c src/cli/*/*.c)) $(FAMILY_CLI)
TEST_SRC := $(filter-out tests/fuzz/libfuzzer_main.c,$(sort $(wildcard tests/*.c tests/fuzz/*.c))) \
            $(FAMILY_TEST)
TEMPLATES := $(FAMILIES:%=templates/%.cu)

OBJ_DIR := $(BUILD)/obj
LIB_OBJ := $(LIB_SRC:%.c=$(OBJ_DIR)/%.o) $(OBJ_DIR)/gen/templates_embedded.o
CLI_OBJ := $(CLI_SRC:%.c=$(OBJ_DIR)/%.o)
# The CLI's chart writer is tested on its own (tests/test_chart.c): it needs no other CLI code.
TEST_OBJ := $(TEST_SRC:%.c=$(OBJ_DIR)/%.o) $(OBJ_DIR)/src/cli/chart.o
PLUGIN_OBJ := $(PLUGIN_SRC:%.c=$(OBJ_DIR)/%.o)

STATIC_LIB := $(BUILD)/libptxjit.a
SHARED_LIB := $(BUILD)/libptxjit.so
CLI := $(BUILD)/ptxjit
TEST_RUNNER := $(BUILD)/ptxjit_tests
# A stand-in NVRTC that counts compiles in flight, for the threads test (tests/shim/).
TEST_SHIM := $(BUILD)/libpjtest_nvrtc_shim.so
NVRTC_MEMO := $(BUILD)/libpjtest_nvrtc_memo.so
STRESS := $(BUILD)/ptxjit_stress
PLUGIN := $(BUILD)/libptxjit_llvm.so
# A stand-in libcuda that logs cuInit: test_cli checks that --no-gpu keeps the driver unstarted;
# with $PJ_FAKE_DEVICES=N a driver of N devices that runs nothing (tests/test_multigpu.c).
FAKE_CUDA := $(BUILD)/fake_cuda/libcuda.so.1

# LLVM 19 (Debian's llvm-19-dev), linked statically into the plugin only: one ~30 MB file that
# travels with the CLI and the tests, which stay small; nothing of LLVM is needed at run time.
# Without llvm-config the library, the CLI and the tests still build: the llvm route then
# reports itself unavailable with the fix, and its tests say they were left out.
LLVM_CONFIG ?= llvm-config-19
# Recursive (=): `make deps test` parses this Makefile before deps installs LLVM.
LLVM_VERSION = $(shell $(LLVM_CONFIG) --version 2>/dev/null)
LLVM_COMPONENTS := nvptx passes core support target analysis
LLVM_CFLAGS = $(shell $(LLVM_CONFIG) --cflags)
LLVM_LIBS = $(shell $(LLVM_CONFIG) --ldflags) \
            $(shell $(LLVM_CONFIG) --link-static --libs $(LLVM_COMPONENTS))
# zlib and zstd statically as well, and only the plugin's entry point exported.
PLUGIN_LDFLAGS := -shared -static-libstdc++ -static-libgcc -Wl,--gc-sections \
                  -Wl,--exclude-libs,ALL -Wl,--version-script=src/plugin/plugin.map \
                  -Wl,-Bsymbolic -Wl,--strip-all -Wl,-z,defs
PLUGIN_SYSLIBS := -Wl,-Bstatic -lzstd -lz -Wl,-Bdynamic -ldl -lpthread -lm

# The plugin where LLVM is there; nothing in its place where it is not.
PLUGIN_IF_LLVM = $(if $(LLVM_VERSION),$(PLUGIN))

.PHONY: all test demo install install-check clean deps examples check-cuda house
all: $(STATIC_LIB) $(SHARED_LIB) $(CLI) $(PLUGIN_IF_LLVM)

check-cuda:
	@test -f $(CUDA_HOME)/include/nvrtc.h || { \
	  echo "error: no CUDA toolkit at CUDA_HOME=$(CUDA_HOME) (nvrtc.h missing)."; \
	  echo "fix: install the CUDA toolkit (12.0 or newer) or run make CUDA_HOME=/path/to/cuda"; exit 1; }

$(OBJ_DIR)/%.o: %.c | check-cuda
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OBJ_DIR)/gen/templates_embedded.o: $(BUILD)/gen/templates_embedded.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(ALL_CFLAGS) -c $< -o $@

# The build tool links the schema parser itself (plain, without the build's sanitizers), so
# that the built-in schemas it writes are what pj_schema_parse makes of each template.
EMBED_SRC := src/tools/embed_templates.c $(wildcard src/params/*.c) src/util/strbuf.c \
             src/util/file.c src/util/error.c src/util/hash.c
$(BUILD)/embed_templates: $(EMBED_SRC) $(wildcard src/params/*.h) src/internal.h include/ptxjit.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(filter-out -MMD -MP,$(CFLAGS_BASE)) -O1 $(EMBED_SRC) -o $@ -lpthread

# Templates and their schemas are compiled into the library; the generated file changes when
# any template or the parser does.
$(BUILD)/gen/templates_embedded.c: $(BUILD)/embed_templates $(TEMPLATES)
	@mkdir -p $(dir $@)
	$(call say,EMBED,$@)$(BUILD)/embed_templates $@ $(TEMPLATES)

$(STATIC_LIB): $(LIB_OBJ)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

# Full RELRO: the GOT read-only after loading, and (-z now) every import bound then, not at
# its first call, which is why it is also here: a fresh process's first request calls ~30 libc
# functions first, and binding them inside it cost a disk hit ~12 of its ~88 us (dev machine,
# bench jit); the whole process takes as long either way.
BIND_NOW := -Wl,-z,relro,-z,now

$(SHARED_LIB): $(LIB_OBJ) src/libptxjit.map
	$(call say,LD,$@)$(CC) -shared $(SAN) $(BIND_NOW) -Wl,-soname,libptxjit.so.0 \
	    -Wl,--version-script=src/libptxjit.map -o $@ $(LIB_OBJ) $(LDLIBS_BASE)

$(CLI): $(CLI_OBJ) $(STATIC_LIB)
	$(call say,LD,$@)$(CC) $(SAN) $(BIND_NOW) -o $@ $(CLI_OBJ) $(STATIC_LIB) \
	    $(LDLIBS_BASE)

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
$(NVRTC_MEMO): tests/shim/nvrtc_memo.c | check-cuda
	$(call say,LD,$@)$(CC) $(ALL_CFLAGS) -shared -o $@ $< -ldl -lpthread

$(TEST_OBJ): CFLAGS_BASE += -Itests -DPJ_SOURCE_DIR='"$(CURDIR)"'
# The LLVM version this build's plugin holds: part of the llvm route's cache keys.
$(OBJ_DIR)/src/request/route_llvm.o: CFLAGS_BASE += -DPJ_LLVM_VERSION='"$(LLVM_VERSION)"'
$(PLUGIN_OBJ): CFLAGS_BASE += $(LLVM_CFLAGS) -fvisibility=hidden

$(PLUGIN): $(PLUGIN_OBJ) src/plugin/plugin.map
	@test -n "$(LLVM_VERSION)" || { \
	  echo "error: $(LLVM_CONFIG) not found (the llvm backend's plugin needs LLVM 19's static"; \
	  echo "libraries). fix: run make deps (installs llvm-19-dev), or make LLVM_CONFIG=PATH"; \
	  exit 1; }
	$(call say,LD,$@)$(CXX) $(PLUGIN_LDFLAGS) $(SAN) -o $@ $(PLUGIN_OBJ) $(LLVM_LIBS) \
	    $(PLUGIN_SYSLIBS)

# Installs what a fresh Debian 12 machine lacks (needs root or sudo); a no-op when present.
deps:
	$(Q)sh tests/install_deps.sh

$(FAKE_CUDA): tests/fake_cuda/libcuda.c
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -shared -fPIC -O1 -Wall -Wextra -Werror -pthread \
	    -I$(CUDA_HOME)/include -o $@ $<

# The suite runs the embedding example too (tests/test_examples.c), built as its users build
# it; the sanitizer builds leave it out (their library needs their runtime).
EXAMPLE_TOOL = $(if $(SAN),,$(abspath $(BUILD))/tool)
# With CI=true the suite (less the LLVM sweeps' whole walks, which the sanitizers sample:
# suite-sampled) and the install check run as two more of the hardening targets, side by side
# with the others (each mostly uses one processor; mk/hardening.mk).
test: $(TEST_RUNNER) $(CLI) $(PLUGIN_IF_LLVM) $(FAKE_CUDA) $(if $(SAN),,examples)
	$(Q)$(if $(SAN),:,$(MAKE) --no-print-directory house)
	$(Q)$(if $(filter true,$(CI)),$(MAKE) --no-print-directory CI= WITH_SUITE=1 hardening,\
	    $(MAKE) --no-print-directory CI= suite)
	$(Q)$(if $(SAN)$(filter true,$(CI)),:,$(MAKE) --no-print-directory install-check)
	$(Q)$(if $(SAN)$(filter true,$(CI)),:,$(MAKE) --no-print-directory python-test)

.PHONY: suite
suite: $(TEST_RUNNER) $(CLI) $(PLUGIN_IF_LLVM) $(FAKE_CUDA) $(if $(SAN),,examples)
	$(Q)PTXJIT_CLI=$(abspath $(CLI)) PTXJIT_EXAMPLE_TOOL=$(EXAMPLE_TOOL) $(TEST_RUNNER)

# The house plan (docs/ARCHITECTURE.md) held against the code: no file uses one on a higher
# floor, no two files use each other (tests/house.sh reads the objects' symbols and the
# includes).
house: all
	$(Q)sh tests/house.sh $(OBJ_DIR) $(LIB_DIRS)

demo: all examples
	$(Q)sh examples/demo.sh $(CLI)

# The example builds the way an embedding program would: installed, found by pkg-config.
examples: all
	$(Q)$(MAKE) --no-print-directory install PREFIX=$(abspath $(BUILD))/prefix >/dev/null
	$(Q)PKG_CONFIG_PATH=$(abspath $(BUILD))/prefix/lib/pkgconfig $(MAKE) --no-print-directory \
	    -C examples OUT=$(abspath $(BUILD))

# ptxjit.pc links libptxjit.so (with --static, its Libs.private are what libptxjit.a needs);
# ptxjit-static.pc names libptxjit.a itself. The built-in templates go along as examples.
PC_VERSION = $(shell sed -n 's/^\#define PTXJIT_VERSION "\(.*\)"/\1/p' include/ptxjit.h)
install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin \
	    $(DESTDIR)$(PREFIX)/share/ptxjit/templates
	install -m 644 include/ptxjit.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(PREFIX)/lib/libptxjit.so.0
	$(if $(LLVM_VERSION),install -m 755 $(PLUGIN) $(DESTDIR)$(PREFIX)/lib/)
	ln -sf libptxjit.so.0 $(DESTDIR)$(PREFIX)/lib/libptxjit.so
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(TEMPLATES) $(DESTDIR)$(PREFIX)/share/ptxjit/templates/
	for pc in ptxjit ptxjit-static; do \
	    sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(PC_VERSION)|' src/$$pc.pc.in \
	        > $(DESTDIR)$(PREFIX)/lib/pkgconfig/$$pc.pc || exit 1; \
	done

# A program built from outside the tree against the installed static library through
# pkg-config, run offline (tests/install_check.sh); `make test` runs it (not under the
# sanitizers, whose libraries an outside program would not link).
INSTALL_CHECK_PREFIX = $(abspath $(BUILD))/install-check
install-check: all
	$(Q)rm -rf $(INSTALL_CHECK_PREFIX)
	$(Q)$(MAKE) --no-print-directory install PREFIX=$(INSTALL_CHECK_PREFIX) >/dev/null
	$(Q)sh tests/install_check.sh $(INSTALL_CHECK_PREFIX)

clean:
	rm -rf $(BUILD)

include mk/hardening.mk
include mk/python.mk

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
