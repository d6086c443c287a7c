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
PRIVATE_PARAMS = ("u64 out_ptr, u64 out_row_stride_bytes, u64 src_ptr, u64 src_row_stride_bytes, "
                  "u64 index_ptr, u64 rows, u64 row_base, u32 out_rows, u32 cols, u32 slice_elems, "
                  "u32 stages, u32 staging_offset, u32 flags_offset, u32 ring_offset, "
                  "u32 barrier_offset, u64 error_record")
RED_PARAMS = ("u64 out_ptr, u64 out_row_stride_bytes, u64 src_ptr, u64 src_row_stride_bytes, "
              "u64 index_ptr, u64 rows, u64 row_base, u64 out_rows, u64 cols, "
              "u64 vectors_per_row, u32 lanes_per_row_log2, u64 error_record")


def scalar_add(dtype):
    return (f"{dtype.scalar_load:<20}%x, [%src_addr];\n"
            f"    {dtype.scalar_red} [%out_addr], %x;")


def vector_add(dtype, vector_bytes):
    """One vector_bytes load per lane and the widest red the ISA has for it."""
    words = vector_bytes // 4
    regs = "{" + ", ".join(f"%w{i}" for i in range(words)) + "}" if words > 1 else "%w0"
    vec = f".v{words}" if words > 1 else ""
    if dtype.name == "f32":
        return (f"ld.global.nc{vec}.f32 {regs}, [%src_addr];\n"
                f"    red.global.add{vec}.f32 [%out_addr], {regs};")
    if dtype.name in ("f16", "bf16"):
        # Packed pairs: .f16x2 / .bf16x2, in vectors of up to four pairs.
        return (f"ld.global.nc{vec}.b32 {regs}, [%src_addr];\n"
                f"    red.global.add.noftz{vec}.{dtype.name}x2 [%out_addr], {regs};")
    # No vector red exists for f64: two scalar reds behind one 16-byte load.
    return ("ld.global.nc.v2.f64 {%w0, %w1}, [%src_addr];\n"
            "    red.global.add.f64  [%out_addr], %w0;\n"
            "    red.global.add.f64  [%out_addr+8], %w1;")


# Access widths of the red path per dtype: its element, then the vectors the
# red instruction has (f64 has none: its 16-byte form is two scalar reds).
RED_VECTOR_BYTES = {"f32": (4, 8, 16), "f16": (2, 4, 8, 16), "bf16": (2, 4, 8, 16), "f64": (8, 16)}


def vector_regs(dtype):
    kind = {"f32": ".f32", "f16": ".b32", "bf16": ".b32", "f64": ".f64"}[dtype.name]
    return f".reg {kind}   %w<4>;"


# Rows per stage of the privatised path; its per-row code is unrolled, so
# each row's target lives in registers of its own.
ROWS_PER_STAGE = 8


def private_index_load(index, k):
    """Loads the raw index of row next_row0 + k when that row is in range."""
    load = (f"@%nin{k} ld.global.nc.s64 %nraw{k}, [%addr];" if index.size == 8 else
            f"@%nin{k} ld.global.nc.s32 %nraw32_{k}, [%addr];\n"
            f"    cvt.s64.s32         %nraw{k}, %nraw32_{k};")
    return (f"add.u64             %row, %next_row0, {k};\n"
            f"    setp.lt.u64         %nin{k}, %row, %row_end;\n"
            f"    mad.lo.u64          %addr, %row, {index.size}, %index;\n"
            f"    {load}")


def private_rotate(k):
    """Next stage's row k becomes current: range check, error record, flag."""
    return (f"setp.lt.u64         %p, %nraw{k}, %out_rows64;\n"
            f"    and.pred            %ok{k}, %nin{k}, %p;\n"
            f"    cvt.u32.u64         %tgt{k}, %nraw{k};\n"
            f"    // Bad row: in range as a source row, target outside [0, out_rows).\n"
            f"    not.pred            %p, %ok{k};\n"
            f"    and.pred            %p, %p, %nin{k};\n"
            f"    and.pred            %p, %p, %leader;\n"
            f"    add.u64             %t64, %next_row0, {k};\n"
            f"    add.u64             %t64, %t64, %row_base;\n"
            f"    @%p red.global.min.u64 [%record], %t64;\n"
            f"    and.pred            %p, %ok{k}, %leader;\n"
            f"    mad.lo.u32          %s, %tgt{k}, 4, %flags;\n"
            f"    @%p st.shared.u32   [%s], 1;")


def private_accumulate(dtype):
    """Adds the stage's rows into their targets' accumulators, for each column
    this thread owns: the stage's values are all loaded first, so that only
    the read-modify-writes of one accumulator column run one after another."""
    rows = range(ROWS_PER_STAGE)
    acc = "f64" if dtype.name == "f64" else "f32"
    acc_bytes = 8 if dtype.name == "f64" else 4
    lines = ["mov.u32             %c, %thread;",
             "ACCUMULATE_COLUMN:",
             "    setp.ge.u32         %p, %c, %width;",
             "    @%p bra             ACCUMULATE_DONE;",
             f"    mad.lo.u32          %s, %c, {dtype.size}, %slot;"]
    for k in rows:
        if dtype.name in ("f32", "f64"):
            lines.append(f"    @%ok{k} ld.shared.{dtype.name}   %v{k}, [%s];")
        else:
            lines.append(f"    @%ok{k} ld.shared.b16   %h{k}, [%s];")
            lines.append(f"    cvt.f32.{dtype.name}       %v{k}, %h{k};")
        lines.append("    add.u32             %s, %s, %row_pitch;")
    lines.append(f"    mul.lo.u32          %j, %c, {acc_bytes};")
    for k in rows:
        lines += [f"    // Row {k} of the stage.",
                  f"    @!%ok{k} bra        ROW{k}_DONE;",
                  f"    mad.lo.u32          %u, %tgt{k}, %acc_pitch, %smem;",
                  "    add.u32             %u, %u, %j;",
                  f"    ld.shared.{acc}       %a, [%u];",
                  f"    add.{acc}             %a, %a, %v{k};",
                  f"    st.shared.{acc}       [%u], %a;",
                  f"ROW{k}_DONE:"]
    lines += ["    add.u32             %c, %c, %threads;",
              "    bra.uni             ACCUMULATE_COLUMN;",
              "ACCUMULATE_DONE:"]
    return "\n".join(lines)


def private_convert(dtype):
    """16-bit dtypes: round the f32 sums of touched targets into the staging rows."""
    if dtype.name not in ("f16", "bf16"):
        return "bar.sync            0;"
    return f"""bar.sync            0;
    mov.u32             %t32, %warp;
CONVERT_ROW:
    setp.ge.u32         %p, %t32, %out_rows;
    @%p bra             CONVERT_DONE;
    mad.lo.u32          %s, %t32, 4, %flags;
    ld.shared.u32       %u, [%s];
    setp.eq.u32         %p, %u, 0;
    @%p bra             CONVERT_NEXT;
    mad.lo.u32          %acc_row, %t32, %acc_pitch, %smem;
    mad.lo.u32          %stage_row, %t32, %row_pitch, %staging;
    mov.u32             %c, %lane;
CONVERT_COLUMN:
    setp.ge.u32         %p, %c, %width;
    @%p bra             CONVERT_NEXT;
    mad.lo.u32          %s, %c, 4, %acc_row;
    ld.shared.f32       %a, [%s];
    cvt.rn.{dtype.name}.f32      %h, %a;
    mad.lo.u32          %s, %c, 2, %stage_row;
    st.shared.b16       [%s], %h;
    add.u32             %c, %c, 32;
    bra.uni             CONVERT_COLUMN;
CONVERT_NEXT:
    add.u32             %t32, %t32, %warps;
    bra.uni             CONVERT_ROW;
CONVERT_DONE:"""


def private_substitutions(dtype, index):
    rows = range(ROWS_PER_STAGE)
    sixteen_bit = dtype.name in ("f16", "bf16")
    value_type = ".f64" if dtype.name == "f64" else ".f32"
    regs = [f".reg .pred  {', '.join(f'%nin{k}, %ok{k}' for k in rows)};",
            f".reg {value_type}   {', '.join(f'%v{k}' for k in rows)};",
            f".reg .b16   {', '.join(f'%h{k}' for k in rows)};",
            f".reg .b32   {', '.join(f'%tgt{k}' for k in rows)};",
            f".reg .b64   {', '.join(f'%nraw{k}' for k in rows)};"]
    if index.size == 4:
        regs.append(f".reg .b32   {', '.join(f'%nraw32_{k}' for k in rows)};")
    return {
        "ACC_TYPE": "f64" if dtype.name == "f64" else "f32",
        "ACC_TYPE_REG": ".f64" if dtype.name == "f64" else ".f32",
        "ACC_BYTES": "8" if dtype.name == "f64" else "4",
        "DTYPE": dtype.name,
        "ROWS_PER_STAGE": str(ROWS_PER_STAGE),
        "ROWS_PER_STAGE_MINUS_1": str(ROWS_PER_STAGE - 1),
        "LAST_INDEX_OFFSET": str((ROWS_PER_STAGE - 1) * index.size),
        "STAGE_TARGET_REGS": "\n    ".join(regs),
        "LOAD_NEXT_TARGETS": "\n    ".join(private_index_load(index, k) for k in rows),
        "ROTATE_TARGETS": "\n    ".join(private_rotate(k) for k in rows),
        "ACCUMULATE_ROWS": private_accumulate(dtype),
        "CONVERT_TO_STAGING": private_convert(dtype),
        "FLUSH_PITCH": "%row_pitch" if sixteen_bit else "%acc_pitch",
        "FLUSH_BASE": "%staging" if sixteen_bit else "%smem",
    }


@dataclass(frozen=True)
class Variant:
    name: str
    family: str          # row_tma_reduce | row_red | row_private
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
            name = f"row_private_{dtype.name}_{index.name}"
            out.append(Variant(name, "row_private", dtype, index, 16, "row_private.ptx.in",
                               dict(common, **private_substitutions(dtype, index), ENTRY=name,
                                    REDUCE_TYPE=dtype.reduce), PRIVATE_PARAMS))
            for vector_bytes in RED_VECTOR_BYTES[dtype.name]:
                shape = "scalar" if vector_bytes == dtype.size else f"vec{vector_bytes}"
                name = f"row_red_{shape}_{dtype.name}_{index.name}"
                body = scalar_add(dtype) if vector_bytes == dtype.size else vector_add(dtype, vector_bytes)
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
    family = {"row_tma_reduce": "KernelFamily::row_tma_reduce", "row_red": "KernelFamily::row_red",
              "row_private": "KernelFamily::row_private"}
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
        "enum class KernelFamily { row_tma_reduce, row_red, row_private };\n\n"
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
