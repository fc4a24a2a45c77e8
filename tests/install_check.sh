#!/bin/sh
# install_check.sh — an embedding program built as its author would: from outside the source
# tree, against the static library of an installed ptxjit, through pkg-config; then run
# offline (no GPU): it compiles a reduce kernel to PTX. The installed libptxjit.so needs only
# libc (and its loader) and libm to load. Then the install's compile workers,
# found at run time wherever PREFIX is (pool/worker_program.c): the installed ptxjit tunes
# with worker processes, and so do programs linked with the installed libptxjit.so (worker
# beside the library) and libptxjit.a (worker on $PATH), without $PTXJIT_COMPILE_WORKER.
# Usage: sh tests/install_check.sh PREFIX   (PREFIX: where make install put ptxjit)
set -eu
prefix=$1
source_dir=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ptxjit-install-check-XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$source_dir/examples/offline.c" "$work/"
cd "$work"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
CC=${CC:-cc}

fail() { echo "install check: $*" >&2; exit 1; }

# The program must not need libptxjit.so, and must say what it compiled.
check() {
    program=$1
    ! readelf -d "$program" | grep -q 'libptxjit' || fail "$program needs libptxjit.so"
    ./"$program" >"$program.out" 2>&1 || fail "$program failed: $(cat "$program.out")"
    grep -q '^reduce batch=4 dtype=i32 tpb=256 variant=vectorized for sm_90a$' "$program.out" &&
        grep -q '^.visible .entry reduce_kernel$' "$program.out" &&
        grep -q 'at most 256 threads per block$' "$program.out" ||
        fail "$program printed: $(cat "$program.out")"
}

# ptxjit-static.pc: the archive by its path.
# shellcheck disable=SC2046 # pkg-config's words are meant to split
$CC -std=c11 -Wall -Wextra -Werror offline.c $(pkg-config --cflags --libs ptxjit-static) \
    -o offline-static
check offline-static
# ptxjit.pc with --static, -lptxjit made the archive by name (ld's -l:FILE): its
# Libs.private must be all that the archive needs.
# shellcheck disable=SC2046
$CC -std=c11 -Wall -Wextra -Werror offline.c $(pkg-config --cflags ptxjit) \
    $(pkg-config --static --libs ptxjit | sed 's/-lptxjit/-l:libptxjit.a/') -o offline-archive
check offline-archive
# ptxjit.pc --static as given: the linker takes -lptxjit as libptxjit.so, which no later
# word can undo (an archive after it, even --whole-archive, leaves DT_NEEDED): the program
# still needs the .so, but runs, linked with its rpath. The static link is ptxjit-static.pc
# (above); README.md and docs/EMBEDDING.md say so.
# shellcheck disable=SC2046
$CC -std=c11 -Wall -Wextra -Werror offline.c $(pkg-config --cflags --static --libs ptxjit) \
    -Wl,-rpath,"$prefix/lib" -o offline-pc-static
readelf -d offline-pc-static | grep -q 'NEEDED.*libptxjit.so' ||
    fail "pkg-config --static --libs ptxjit now links the archive: update README.md, EMBEDDING.md"
./offline-pc-static >/dev/null 2>&1 || fail "offline-pc-static failed"
# What libptxjit.so needs to load: libc and libm. The rest (the CUDA driver, NVRTC,
# nvJitLink, the LLVM plugin, nettle) is loaded with dlopen when first used, and Redis is
# spoken by ptxjit itself, so that a program linked with it starts on a machine without them.
needed=$(readelf -d "$prefix/lib/libptxjit.so.0" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for library in $needed; do
    case $library in
    libc.so.* | libm.so.* | ld-linux*.so.*) ;;
    *) fail "libptxjit.so needs $library to load: open it with dlopen when first used" \
        "(src/util/dynlib.h), as the remote cache's nettle (src/remote/nettle.c)" ;;
    esac
done

# The compile workers of an install anywhere: the line the pool logs ($PTXJIT_VERBOSE) names
# the program it found and how many of its processes answered.
installed=$(cd "$prefix" && pwd -P)/bin/ptxjit
expect_workers() { # what, file of its stderr
    grep -q "^ptxjit: info: [1-9][0-9]* of [0-9]* compile worker process\(es\)\? answered ($installed)\$" "$2" ||
        fail "$1 did not tune with compile workers of $installed: $(cat "$2")"
}
unset PTXJIT_COMPILE_WORKER
export PTXJIT_VERBOSE=1 PTXJIT_CACHE_DIR="$work/cache"
"$prefix/bin/ptxjit" tune reduce n=1000000 --compile-only --space "tpb=128,256 batch=2" \
    >cli.out 2>cli.err || fail "ptxjit tune failed: $(cat cli.err)"
expect_workers "$prefix/bin/ptxjit tune" cli.err
grep -q '^compiled by [1-9][0-9]* compile worker process' cli.err || fail "$(cat cli.err)"
cat >tune.c <<'PROGRAM'
#include <stdio.h>
#include <ptxjit.h>
/* Compile-only tuning of two reduce points: no GPU; two compiles on two pool threads. */
int main(void)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    ptxjit_context *context;
    ptxjit_tune_options tune;
    ptxjit_tune_options_init(&tune);
    tune.problem = "n=1000000";
    tune.space = "tpb=64,512 batch=2";
    tune.compile_only = 1;
    tune.threads = 2;
    tune.retune = 1;
    ptxjit_tune_result *result;
    if (ptxjit_open(&context, &options) != PTXJIT_OK ||
        ptxjit_tune(&result, context, "reduce", &tune) != PTXJIT_OK) {
        fprintf(stderr, "tune: %s\n", ptxjit_last_error());
        return 1;
    }
    ptxjit_tune_info info;
    ptxjit_tune_result_info(&info, result);
    printf("%d compile worker processes\n", info.compile_processes);
    ptxjit_tune_result_free(result);
    ptxjit_close(context);
    return info.compile_processes > 0 ? 0 : 1;
}
PROGRAM
# shellcheck disable=SC2046
$CC -std=c11 -Wall -Wextra -Werror tune.c $(pkg-config --cflags --libs ptxjit) \
    -Wl,-rpath,"$prefix/lib" -o tune-shared
rm -rf cache
PATH=/usr/bin:/bin ./tune-shared >shared.out 2>shared.err ||
    fail "tune-shared: $(cat shared.out shared.err)"
expect_workers "a program linked with $prefix/lib/libptxjit.so" shared.err
# shellcheck disable=SC2046
$CC -std=c11 -Wall -Wextra -Werror tune.c $(pkg-config --cflags --libs ptxjit-static) \
    -o tune-static
rm -rf cache
PATH="$prefix/bin:/usr/bin:/bin" ./tune-static >static.out 2>static.err ||
    fail "tune-static: $(cat static.out static.err)"
expect_workers "a program linked with libptxjit.a, $prefix/bin on PATH" static.err
echo "install check: a program built outside the tree against $prefix/lib/libptxjit.a" \
    "(ptxjit-static.pc, and ptxjit.pc --static) compiles reduce offline; the install's" \
    "ptxjit, and programs linked with its libptxjit.so and libptxjit.a, tune with its" \
    "compile workers"
