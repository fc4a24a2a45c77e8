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
TEST_SRC := $(sort $(wildcard tests/*.c))
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

$(SHARED_LIB): $(LIB_OBJ)
	$(call say,LD,$@)$(CC) -shared $(SAN) -Wl,-soname,libptxjit.so.0 -o $@ $^ $(LDLIBS_BASE)

$(CLI): $(CLI_OBJ) $(STATIC_LIB)
	$(call say,LD,$@)$(CC) $(SAN) -o $@ $(CLI_OBJ) $(STATIC_LIB) $(LDLIBS_BASE)

$(TEST_RUNNER): $(TEST_OBJ) $(STATIC_LIB)
	$(call say,LD,$@)$(CC) $(SAN) -o $@ $(TEST_OBJ) $(STATIC_LIB) $(CHECK_LIBS) $(LDLIBS_BASE)

$(TEST_OBJ): CFLAGS_BASE += -Itests
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

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
