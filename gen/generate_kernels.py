#!/usr/bin/env python3
"""Expands the PTX templates in ptx/ into every kernel variant.

Writes, under --out:
  ptx/<variant>.ptx      one PTX module per variant, assembled later by ptxas
  kernel_manifest.hpp    variant -> entry symbol, parameters, shared memory,
                         minimum SM, as a constexpr table the host indexes

`--list` prints the variant names, one per line, for the build system.
Standard library only.
"""

import argparse
import os
import re
import sys
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
PTX_DIR = os.path.join(os.path.dirname(HERE), "ptx")


@dataclass(frozen=True)
class Dtype:
    name: str       # as in scatterptx_dtype, lower case
    enum: str       # SCATTERPTX_F32 ...
    size: int
    reduce: str     # cp.reduce.async.bulk type suffix
    scalar_load: str
    scalar_red: str
    value_reg: str  # register type of one scalar element


DTYPES = [
    Dtype("f32", "SCATTERPTX_F32", 4, "f32", "ld.global.nc.f32", "red.global.add.f32", ".f32"),
    Dtype("f16", "SCATTERPTX_F16", 2, "noftz.f16", "ld.global.nc.b16", "red.global.add.noftz.f16", ".b16"),
    Dtype("bf16", "SCATTERPTX_BF16", 2, "noftz.bf16", "ld.global.nc.b16", "red.global.add.noftz.bf16", ".b16"),
    Dtype("f64", "SCATTERPTX_F64", 8, "f64", "ld.global.nc.f64", "red.global.add.f64", ".f64"),
]


@dataclass(frozen=True)
class IndexType:
    name: str
    enum: str
    size: int
    regs: str
    load: str


INDEX_TYPES = [
    IndexType("i32", "SCATTERPTX_INDEX_INT32", 4, ".reg .b32   %index32;",
              "ld.global.nc.s32    %index32, [%addr];\n"
              "    cvt.s64.s32         %target, %index32;"),
    IndexType("i64", "SCATTERPTX_INDEX_INT64", 8, "",
              "ld.global.nc.s64    %target, [%addr];"),
]

# Parameter lists as the host packs them (host/launch.cpp), for the manifest.
TMA_PARAMS = ("CUtensorMap src_map, u64 out_ptr, u64 out_row_stride_bytes, u64 index_ptr, "
              "u64 rows, u64 row_base, u64 out_rows, u32 cols, u32 chunk_elems, "
              "u32 chunks_per_row, u32 box_elems, u32 stages, u64 error_record")
RED_PARAMS = ("u64 out_ptr, u64 out_row_stride_bytes, u64 src_ptr, u64 src_row_stride_bytes, "
              "u64 index_ptr, u64 rows, u64 row_base, u64 out_rows, u64 cols, "
              "u64 vectors_per_row, u32 lanes_per_row_log2, u64 error_record")


def scalar_add(dtype):
    return (f"{dtype.scalar_load:<20}%x, [%src_addr];\n"
            f"    {dtype.scalar_red} [%out_addr], %x;")


def vector_add(dtype):
    """16 bytes per lane: one 16-byte load and the widest red the ISA has."""
    if dtype.name == "f32":
        return ("ld.global.nc.v4.f32 {%w0, %w1, %w2, %w3}, [%src_addr];\n"
                "    red.global.add.v4.f32 [%out_addr], {%w0, %w1, %w2, %w3};")
    if dtype.name in ("f16", "bf16"):
        return ("ld.global.nc.v4.b32 {%w0, %w1, %w2, %w3}, [%src_addr];\n"
                f"    red.global.add.noftz.v4.{dtype.name}x2 [%out_addr], {{%w0, %w1, %w2, %w3}};")
    # No vector red exists for f64: two scalar reds behind one 16-byte load.
    return ("ld.global.nc.v2.f64 {%w0, %w1}, [%src_addr];\n"
            "    red.global.add.f64  [%out_addr], %w0;\n"
            "    red.global.add.f64  [%out_addr+8], %w1;")


def vector_regs(dtype):
    kind = {"f32": ".f32", "f16": ".b32", "bf16": ".b32", "f64": ".f64"}[dtype.name]
    return f".reg {kind}   %w<4>;"


@dataclass(frozen=True)
class Variant:
    name: str
    family: str          # row_tma_reduce | row_red
    dtype: Dtype
    index: IndexType
    vector_bytes: int    # row_red: bytes per lane access; row_tma_reduce: 16
    template: str
    substitutions: dict
    params: str
    min_sm: int = 90


def variants():
    out = []
    for dtype in DTYPES:
        for index in INDEX_TYPES:
            common = {
                "ELEM_BYTES": str(dtype.size),
                "INDEX_BYTES": str(index.size),
                "INDEX_REGS": index.regs,
                "LOAD_INDEX": index.load,
            }
            name = f"row_tma_reduce_{dtype.name}_{index.name}"
            out.append(Variant(name, "row_tma_reduce", dtype, index, 16, "row_tma_reduce.ptx.in",
                               dict(common, ENTRY=name, REDUCE_TYPE=dtype.reduce), TMA_PARAMS))
            for vector_bytes in (dtype.size, 16):
                shape = "scalar" if vector_bytes == dtype.size else "vec16"
                name = f"row_red_{shape}_{dtype.name}_{index.name}"
                body = scalar_add(dtype) if vector_bytes == dtype.size else vector_add(dtype)
                out.append(Variant(name, "row_red", dtype, index, vector_bytes, "row_red.ptx.in",
                                   dict(common, ENTRY=name,
                                        VECTOR_BYTES=str(vector_bytes),
                                        VECTOR_ELEMS=str(vector_bytes // dtype.size),
                                        VALUE_REGS=f".reg {dtype.value_reg}  %x;\n    "
                                                   + vector_regs(dtype),
                                        VECTOR_ADD=body,
                                        SCALAR_ADD=scalar_add(dtype)),
                                   RED_PARAMS))
    return out


PLACEHOLDER = re.compile(r"\{\{([A-Z0-9_]+)\}\}")


def expand(template_text, substitutions, where):
    def replace(match):
        key = match.group(1)
        if key not in substitutions:
            raise SystemExit(f"{where}: no value for placeholder {{{{{key}}}}}")
        return substitutions[key]
    return PLACEHOLDER.sub(replace, template_text)


def banner(comment, source):
    return (f"{comment} Generated by gen/generate_kernels.py from ptx/{source}: do not edit.\n")


def write_if_changed(path, text):
    """Keeps timestamps of unchanged outputs so ptxas does not rerun."""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def manifest(all_variants):
    family = {"row_tma_reduce": "KernelFamily::row_tma_reduce", "row_red": "KernelFamily::row_red"}
    rows = []
    for v in all_variants:
        rows.append(
            f'    {{"{v.name}", {family[v.family]}, {v.dtype.enum}, {v.index.enum}, '
            f'{v.vector_bytes}u, "{v.substitutions["ENTRY"]}", "{v.params}", '
            f'/*static_smem=*/0u, /*min_sm=*/{v.min_sm}}},')
    return (
        "// Generated by gen/generate_kernels.py: do not edit.\n"
        "#pragma once\n\n"
        "#include <cstddef>\n\n"
        '#include "scatterptx/scatterptx.h"\n\n'
        "namespace scatterptx::detail {\n\n"
        "enum class KernelFamily { row_tma_reduce, row_red };\n\n"
        "struct KernelVariant {\n"
        "  const char* name;\n"
        "  KernelFamily family;\n"
        "  scatterptx_dtype dtype;\n"
        "  scatterptx_index_type index_type;\n"
        "  unsigned vector_bytes;  // row_red: bytes per lane access\n"
        "  const char* entry;      // .entry symbol in the module\n"
        "  const char* params;     // parameter list, in launch order\n"
        "  unsigned static_smem;   // bytes; all shared memory else is dynamic\n"
        "  int min_sm;             // 10 * major + minor\n"
        "};\n\n"
        "inline constexpr KernelVariant kKernelVariants[] = {\n"
        + "\n".join(rows) + "\n"
        "};\n\n"
        "inline constexpr std::size_t kKernelVariantCount =\n"
        "    sizeof(kKernelVariants) / sizeof(kKernelVariants[0]);\n\n"
        "}  // namespace scatterptx::detail\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="output directory")
    parser.add_argument("--list", action="store_true", help="print variant names and exit")
    args = parser.parse_args()
    all_variants = variants()
    if args.list:
        print("\n".join(v.name for v in all_variants))
        return 0
    if not args.out:
        parser.error("--out is required unless --list is given")
    os.makedirs(os.path.join(args.out, "ptx"), exist_ok=True)
    templates = {}
    for v in all_variants:
        if v.template not in templates:
            with open(os.path.join(PTX_DIR, v.template), encoding="utf-8") as f:
                templates[v.template] = f.read()
        text = banner("//", v.template) + expand(templates[v.template], v.substitutions, v.name)
        write_if_changed(os.path.join(args.out, "ptx", v.name + ".ptx"), text)
    write_if_changed(os.path.join(args.out, "kernel_manifest.hpp"), manifest(all_variants))
    return 0


if __name__ == "__main__":
    sys.exit(main())
