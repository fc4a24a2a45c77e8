#!/bin/bash
# lt_names.sh — the names of the numbers `bench matmul shapes=` prints for the peer's cuBLASLt
# algorithm ("peer's algorithm: id I, tile T, stages S, cluster C, splits K"), read from the
# toolkit's cublasLt.h: cublasLtMatmulTile_t, cublasLtMatmulStages_t, cublasLtClusterShape_t.
# The names are this header's: where the bench loaded another version of the library
# (libcublasLt.so.12 against a 13 toolkit), read them from that version's header instead.
# Usage: bash bench/experiments/lt_names.sh TILE STAGES CLUSTER, or pipe bench output in
# (every "peer's algorithm:" line is decoded).
set -uo pipefail
header=${CUDA_HOME:-/usr/local/cuda}/include/cublasLt.h
[ -r "$header" ] || header=/usr/local/include/cublasLt.h
[ -r "$header" ] || { echo "lt_names.sh: no cublasLt.h (set CUDA_HOME to the toolkit)" >&2; exit 1; }
name_of() { # enum prefix, value
    grep -oE "^\s*$1[A-Za-z0-9_]+ = $2," "$header" | head -1 | sed -E 's/^\s*//; s/ = .*//'
}
decode() {
    echo "tile $(name_of CUBLASLT_MATMUL_TILE_ "$1"), stages $(name_of CUBLASLT_MATMUL_STAGES_ "$2"), cluster $(name_of CUBLASLT_CLUSTER_SHAPE_ "$3")"
}
if [ $# -eq 3 ]; then
    decode "$1" "$2" "$3"
else
    grep "^peer's algorithm:" | while read -r line; do
        t=$(sed -E 's/.*tile ([0-9]+).*/\1/' <<<"$line")
        s=$(sed -E 's/.*stages ([0-9]+).*/\1/' <<<"$line")
        c=$(sed -E 's/.*cluster ([0-9]+).*/\1/' <<<"$line")
        echo "$line -> $(decode "$t" "$s" "$c")"
    done
fi
