#!/bin/sh
# install_check.sh — an embedding program built as its author would: from outside the source
# tree, against the static library of an installed ptxjit, through pkg-config; then run
# offline (no GPU): it compiles a reduce kernel to PTX.
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
echo "install check: a program built outside the tree against $prefix/lib/libptxjit.a" \
    "(ptxjit-static.pc, and ptxjit.pc --static) compiles reduce offline"
