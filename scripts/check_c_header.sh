#!/usr/bin/env bash
# Compiles include/scatterptx/scatterptx.h as C callers do: C99 and C11, on
# its own (-pedantic) and after cuda.h (not -pedantic: cuda.h itself needs
# C11's anonymous unions), warnings as errors. clang also refuses a typedef
# repeated in C99, which is why the header leaves CUstream to cuda.h there.
# Usage: scripts/check_c_header.sh C_COMPILER INCLUDE_DIR CUDA_INCLUDE_DIR
set -euo pipefail
cc=$1
include=$2
cuda=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/alone.c" <<'C'
#include "scatterptx/scatterptx.h"
int main(void) { return scatterptx_scatter_add(0, (CUstream)0) == SCATTERPTX_SUCCESS; }
C
cat >"$work/after_cuda.c" <<'C'
#include <cuda.h>
#include "scatterptx/scatterptx.h"
int main(void) { CUstream stream = 0; return scatterptx_scatter_add(0, stream) == SCATTERPTX_SUCCESS; }
C
for std in c99 c11; do
  "$cc" -std=$std -Wall -Wextra -Werror -pedantic -I"$include" -c "$work/alone.c" -o "$work/alone.o"
  "$cc" -std=$std -Wall -Wextra -Werror -I"$include" -I"$cuda" -c "$work/after_cuda.c" -o "$work/after_cuda.o"
  echo "$std: compiles alone and after cuda.h"
done
