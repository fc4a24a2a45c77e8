# python.mk — included by the Makefile: the Python package (python/, docs/PYTHON.md).
# `make python` builds build/python/ptxjit/ (importable with PYTHONPATH=build/python): the C
# extension _ptxjit.abi3.so against CPython's stable ABI (3.11 and later: one build imports on
# every newer Python) with libptxjit.a linked in, the package's Python files, the ptxjit
# program (its compile workers) and a link to the LLVM plugin beside it, and the launch
# bench's floor extension. `make python-test` runs the CPU tests (GPU tests skip without one).
.PHONY: python python-test

# The Python that builds and tests: the first of these that has pytest, else python3 (the
# tests then run under python/tests/run.py, which needs nothing beyond the standard library).
# Both are looked up once, when first used ($(eval) caches them), not at every make.
FIND_PYTHON = $(or $(shell for p in python3 /usr/bin/python3; do \
    $$p -c 'import pytest' >/dev/null 2>&1 && { echo $$p; break; }; done),python3)
PYTHON ?= $(eval PYTHON := $(FIND_PYTHON))$(PYTHON)
PY_INCLUDE = $(eval PY_INCLUDE := $(shell $(PYTHON) -c \
    'import sysconfig; print(sysconfig.get_paths()["include"])'))$(PY_INCLUDE)
PY_BUILD := $(BUILD)/python
PY_PACKAGE := $(PY_BUILD)/ptxjit
PY_EXT := $(PY_PACKAGE)/_ptxjit.abi3.so
PY_FLOOR := $(PY_BUILD)/_floor_launch.abi3.so
PY_SRC := $(sort $(wildcard python/src/*.c))
PY_OBJ := $(PY_SRC:%.c=$(OBJ_DIR)/%.o)
PY_FILES := $(sort $(wildcard python/ptxjit/*.py))
# Only PyInit__ptxjit leaves the extension: libptxjit's symbols stay inside it.
PY_LDFLAGS := -shared $(BIND_NOW) -Wl,--version-script=python/src/extension.map \
              -Wl,--exclude-libs,ALL

$(PY_OBJ): CFLAGS_BASE += -I$(PY_INCLUDE) -fvisibility=hidden

$(PY_EXT): $(PY_OBJ) $(STATIC_LIB) python/src/extension.map
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(PY_LDFLAGS) $(SAN) -o $@ $(PY_OBJ) $(STATIC_LIB) $(LDLIBS_BASE)

$(PY_FLOOR): bench/floor_launch.c
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -shared -fPIC -O2 -Wall -Wextra -Werror -I$(PY_INCLUDE) \
	    -Wl,--version-script=python/src/floor.map -o $@ $< -ldl

# The package as pip installs it, in the tree: the extension, the Python files, the ptxjit
# program for compile workers (found beside the extension), and the plugin where LLVM is.
python: $(PY_EXT) $(PY_FLOOR) $(CLI) $(FAKE_CUDA) $(PLUGIN_IF_LLVM)
	$(Q)cp $(PY_FILES) $(PY_PACKAGE)/
	$(Q)cp $(CLI) $(PY_PACKAGE)/ptxjit
	$(Q)$(if $(LLVM_VERSION),ln -sf ../../libptxjit_llvm.so $(PY_PACKAGE)/libptxjit_llvm.so)

# The CPU tests (and the GPU ones where there is a GPU), < 60 s on 2 cores.
python-test: python
	$(Q)PYTHONPATH=$(abspath $(PY_BUILD)) PTXJIT_TEST_BUILD=$(abspath $(BUILD)) \
	    sh python/tests/run.sh $(PYTHON)

# `make test` runs the tests (Makefile); with CI=true they are one more lane of the hardening
# targets, side by side with the others.
HARDENING += $(if $(WITH_SUITE),python-test)
hardening: $(if $(WITH_SUITE),python)

# What `pip install ./python` leaves in the source tree (it builds in place).
.PHONY: python-clean
clean: python-clean
python-clean:
	rm -rf python/build python/ptxjit.egg-info
