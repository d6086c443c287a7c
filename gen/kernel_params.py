"""Each kernel family's parameter list, the one place it is written down.

From it the generator writes each template's .param block ({{PARAMS}}, laid
out as the templates had it by hand) and, for the host, a typed argument
struct per family whose packed() gives cuLaunchKernel its kernelParams in
.param order (kernel_params.hpp). check_entry_params() re-reads every
expanded entry and fails the generator when its .param list is not the
spec's; test/kernel_params_test.cpp does the same on the built PTX."""

import re
import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class ParamType:
    ptx: str        # as the .param line spells the type
    cpp: str        # the host's field type
    bytes: int
    array: str = ""  # the .param line's suffix after the name


PARAM_TYPES = {
    "u64": ParamType(".u64", "uint64_t", 8),
    "u32": ParamType(".u32", "uint32_t", 4),
    "f32": ParamType(".f32", "float", 4),
    # A CUtensorMap passed by value: 128 bytes, 64-byte aligned (PTX ISA 5.5.2.3.1).
    "tensor_map": ParamType(".align 64 .b8", "CUtensorMap", 128, "[128]"),
}


@dataclass(frozen=True)
class Param:
    type: str           # a key of PARAM_TYPES
    name: str
    doc: str = ""       # the template's comment; may hold placeholders
    host_doc: str = ""  # the struct's comment where doc has placeholders


@dataclass(frozen=True)
class KernelParams:
    struct: str         # the host's struct name
    comment_column: int  # where the template's comments start (0-based)
    params: tuple


def _p(type_, name, doc="", host_doc=""):
    return Param(type_, name, doc, host_doc)


# Every row and grouping kernel ends its list with the launch gate
# (gen/gate_snippets.py): a u32 flag's address, or 0, and the value it needs.
GATE_PARAMS = (
    Param("u64", "gate", "u32 flag, or 0: the launch runs only when the flag holds gate_value"),
    Param("u32", "gate_value"),
)

# Keyed by template: a template's entries (every variant) take the same list.
KERNEL_PARAMS = {
    "row_tma_reduce.ptx.in": KernelParams("RowTmaReduceParams", 41, (
        _p("tensor_map", "src_map", "CUtensorMap over src (cols, rows), box (box_elems, 1)"),
        _p("u64", "out_ptr", "out row 0"),
        _p("u64", "out_row_stride_bytes"),
        _p("u64", "index_ptr", "index of this launch's row 0"),
        _p("u64", "rows", "rows in this launch (< 2^31: map coordinates are s32)"),
        _p("u64", "row_base", "source position of this launch's row 0"),
        _p("u64", "out_rows"),
        _p("u32", "cols"),
        _p("u32", "chunk_elems", "a multiple of box_elems"),
        _p("u32", "chunks_per_row"),
        _p("u32", "box_elems"),
        _p("u32", "stages"),
        _p("u64", "error_record", "u64: smallest bad source position"),
        _p("u32", "prefetch_out", "nonzero: prefetch each pair's out chunk into L2"),
        *GATE_PARAMS,
    )),
    "row_private.ptx.in": KernelParams("RowPrivateParams", 41, (
        _p("tensor_map", "src_map", "CUtensorMap over src (cols, rows), box (slice_elems, {{ROWS_PER_STAGE}})",
           "CUtensorMap over src (cols, rows), box (slice_elems, kPrivateRowsPerStage)"),
        _p("u64", "out_ptr"),
        _p("u64", "out_row_stride_bytes"),
        _p("u64", "index_ptr"),
        _p("u64", "rows", "below 2^31: tensor-map coordinates are s32"),
        _p("u64", "row_base", "source position of row 0"),
        _p("u32", "out_rows"),
        _p("u32", "cols"),
        _p("u32", "slice_elems"),
        _p("u32", "stages"),
        _p("u32", "staging_offset"),
        _p("u32", "flags_offset"),
        _p("u32", "ring_offset"),
        _p("u32", "index_offset"),
        _p("u32", "barrier_offset"),
        _p("u64", "error_record"),
        *GATE_PARAMS,
    )),
    "row_red.ptx.in": KernelParams("RowRedParams", 42, (
        _p("u64", "out_ptr"),
        _p("u64", "out_row_stride_bytes"),
        _p("u64", "src_ptr"),
        _p("u64", "src_row_stride_bytes"),
        _p("u64", "index_ptr", "index of this launch's row 0"),
        _p("u64", "rows"),
        _p("u64", "row_base", "source position of this launch's row 0"),
        _p("u64", "out_rows"),
        _p("u64", "cols"),
        _p("u64", "vectors_per_row", "ceil(cols / elements per vector)"),
        _p("u32", "lanes_per_row_log2", "at most log2(threads per CTA)"),
        _p("u64", "error_record", "u64: smallest bad source position"),
        _p("u32", "prefetch_out", "nonzero: prefetch out lines into L2 ahead of their reds"),
        _p("f32", "out_keep_fraction", "short rows: chance that a red marks its line evict_last, 0 to 1"),
        _p("u64", "weights", "weighted variants: the weight of this launch's row 0"),
        _p("u32", "weight_bytes", "4: f32 weights, else of the rows' dtype"),
        *GATE_PARAMS,
    )),
    "group_histogram.ptx.in": KernelParams("GroupHistogramParams", 32, (
        _p("u64", "key_source", "{{KEY_SOURCE_PARAM}}",
           "pass 0: the index (i32 or i64); later passes: u32 keys of the previous pass"),
        _p("u64", "count", "keys in all tiles (M)"),
        _p("u32", "shift", "first bit of this pass's digit"),
        _p("u64", "counts", "u32 [256][tiles]"),
        _p("u64", "tiles"),
        _p("u64", "out_rows", "index pass: keys outside [0, out_rows) become out_rows"),
        _p("u64", "error_record", "index pass: u64, smallest bad source position"),
        _p("u64", "sorted_flag", "index pass: u32 cleared if the index is out of order, or 0"),
        _p("u32", "tile_step", "CTA x counts tile x * tile_step: 1, or the order check's sample step"),
        *GATE_PARAMS,
    )),
    "group_scan.ptx.in": KernelParams("GroupScanParams", 28, (
        _p("u64", "counts", "u32 [256][tiles], scanned in place"),
        _p("u64", "tiles"),
        _p("u64", "totals", "u32 [256]"),
        *GATE_PARAMS,
    )),
    "group_scatter.ptx.in": KernelParams("GroupScatterParams", 32, (
        _p("u64", "key_source", "{{KEY_SOURCE_PARAM}}",
           "pass 0: the index (i32 or i64); later passes: u32 keys of the previous pass"),
        _p("u64", "value_source", "later passes: the previous pass's values (u32 positions, or pairs)"),
        _p("u64", "count", "keys in all tiles (M)"),
        _p("u32", "shift", "first bit of this pass's digit"),
        _p("u64", "counts", "u32 [256][tiles], scanned by group_scan"),
        _p("u64", "tiles"),
        _p("u64", "totals", "u32 [256] keys per digit"),
        _p("u64", "keys_out", "u32 [M]"),
        _p("u64", "values_out", "[M] u32 positions, or (position, weight bits) pairs"),
        _p("u64", "out_rows", "index pass: keys outside [0, out_rows) become out_rows"),
        _p("u64", "weights_in", "pass 0: the caller's weight_bytes-wide weights"),
        _p("u32", "weight_bytes", "0: no weights; 2 or 4: values are pairs"),
        *GATE_PARAMS,
    )),
    "group_segment_sum.ptx.in": KernelParams("GroupSegmentSumParams", 36, (
        _p("u64", "out_ptr"),
        _p("u64", "out_row_stride_bytes"),
        _p("u64", "src_ptr"),
        _p("u64", "src_row_stride_bytes"),
        _p("u64", "keys", "u32 [count], ascending"),
        _p("u64", "rows", "u32 [count] positions, or pairs"),
        _p("u64", "count", "M"),
        _p("u32", "sentinel", "out_rows: the key of skipped rows"),
        _p("u64", "cols"),
        _p("u64", "tiles", "ceil(count / 256)"),
        _p("u64", "partials", "[2 * tiles] rows of partial_stride bytes"),
        _p("u64", "partial_stride"),
        _p("u64", "plan_error", "u64: smallest bad source position, all ones if none"),
        _p("u64", "error_record", "u64: smallest bad source position"),
        _p("u64", "weights", "weighted: by source row, or rows + 4"),
        _p("u32", "weight_bytes", "4: f32 weights, else of the rows' dtype"),
        _p("u32", "include_self", "nonzero: out's own value joins each reduce"),
        _p("u32", "weights_sorted", "nonzero: rows holds (pos, weight) pairs"),
        *GATE_PARAMS,
    )),
    "group_combine.ptx.in": KernelParams("GroupCombineParams", 36, (
        _p("u64", "out_ptr"),
        _p("u64", "out_row_stride_bytes"),
        _p("u64", "keys", "u32 [count], ascending"),
        _p("u64", "count", "M"),
        _p("u32", "sentinel", "out_rows: the key of skipped rows"),
        _p("u64", "cols"),
        _p("u64", "tiles", "ceil(count / 256), below 2^24"),
        _p("u64", "partials", "[2 * tiles] rows: group_segment_sum's partial sums"),
        _p("u64", "level_sums", "[2 * tiles] rows: sums of the previous level, this level's"),
        _p("u64", "partial_stride", "bytes per row of partials and level_sums"),
        _p("u64", "step", "32^(level - 1); level 1 reads partials"),
        _p("u32", "include_self", "nonzero: out's own value joins each reduce"),
        *GATE_PARAMS,
    )),
    "index_record_take.ptx.in": KernelParams("IndexRecordTakeParams", 42, (
        _p("u64", "record", "u64: smallest bad source position"),
        _p("u64", "taken", "u64: receives the record's value"),
    )),
}


def gated(template):
    return any(p.name == "gate" for p in KERNEL_PARAMS[template].params)


def param_block(template):
    """The template's .param lines, for {{PARAMS}}: one per parameter, comma
    after all but the last, comments from the family's column."""
    spec = KERNEL_PARAMS[template]
    lines = []
    for i, param in enumerate(spec.params):
        t = PARAM_TYPES[param.type]
        line = f"    .param {t.ptx} {param.name}{t.array}" + ("," if i + 1 < len(spec.params) else "")
        if param.doc:
            line = line.ljust(spec.comment_column - 1) + " // " + param.doc
        lines.append(line)
    return "\n".join(lines)


ENTRY = re.compile(r"\.entry\s+(\w+)\s*\((.*?)\)", re.S)
PARAM_LINE = re.compile(r"\.param\s+(.*?)\s*(\w+)(\[\d+\])?\s*$")


def entry_params(ptx_text):
    """(ptx type, name) of each .param of the module's one .entry, in order,
    as read back from expanded PTX."""
    match = ENTRY.search(re.sub(r"//[^\n]*", "", ptx_text))
    if not match:
        return None
    out = []
    for item in match.group(2).split(","):
        item = " ".join(item.split())
        if not item:
            continue
        param = PARAM_LINE.match(item)
        out.append((param.group(1), param.group(2) + (param.group(3) or "")) if param else (item, ""))
    return out


def spec_params(template):
    """(ptx type, name) of each parameter as the spec has it."""
    return [(PARAM_TYPES[p.type].ptx, p.name + PARAM_TYPES[p.type].array)
            for p in KERNEL_PARAMS[template].params]


def check_entry_params(ptx_text, template, where):
    """Fails the generator when an expanded entry's .param list is not its
    template's spec (a template that spells its own .param lines)."""
    found = entry_params(ptx_text)
    expected = spec_params(template)
    if found != expected:
        raise SystemExit(f"{where}: the entry's .param list is {found}, gen/kernel_params.py says {expected}")


def _struct(template):
    spec = KERNEL_PARAMS[template]
    n = len(spec.params)
    decls = [f"  {PARAM_TYPES[p.type].cpp} {p.name};" for p in spec.params]
    width = max(len(d) for d in decls) + 2
    fields = [(d.ljust(width) + "// " + (p.host_doc or p.doc)) if p.doc else d
              for d, p in zip(decls, spec.params)]
    table = ",\n".join(f'      {{"{p.name}{PARAM_TYPES[p.type].array}", "{PARAM_TYPES[p.type].ptx}", '
                       f'{PARAM_TYPES[p.type].bytes}}}' for p in spec.params)
    addresses = "\n".join(textwrap.wrap(", ".join(f"&{p.name}" for p in spec.params), 100,
                                         initial_indent="    return {", subsequent_indent="            "))
    sizes = "\n".join(f"static_assert(sizeof({spec.struct}::{p.name}) == {PARAM_TYPES[p.type].bytes});"
                      for p in spec.params)
    return (f"// The parameters of ptx/{template}'s entries, in .param order.\n"
            f"struct {spec.struct} {{\n" + "\n".join(fields) + "\n\n"
            f"  static constexpr KernelParamField kFields[{n}] = {{\n{table}}};\n\n"
            "  // cuLaunchKernel's kernelParams: each field's address, in .param order.\n"
            f"  std::array<void*, {n}> packed() {{\n{addresses}}};\n  }}\n"
            "};\n" + sizes + "\n")


def struct_name(template):
    return KERNEL_PARAMS[template].struct


def params_header():
    return ("// Generated by gen/generate_kernels.py from gen/kernel_params.py: do not edit.\n"
            "// Each kernel family's arguments as a struct: a launch fills the fields by\n"
            "// name and passes packed(); test/kernel_params_test.cpp checks the fields\n"
            "// against the built PTX.\n"
            "#pragma once\n\n"
            "#include <cuda.h>\n\n"
            "#include <array>\n"
            "#include <cstddef>\n"
            "#include <cstdint>\n\n"
            "namespace scatterptx::detail {\n\n"
            "// One .param of an entry as its template declares it.\n"
            "struct KernelParamField {\n"
            "  const char* name;      // with an array's extent: src_map[128]\n"
            "  const char* ptx_type;  // .u64, .u32, .f32, .align 64 .b8\n"
            "  std::size_t bytes;\n"
            "};\n\n"
            + "\n".join(_struct(t) for t in KERNEL_PARAMS) +
            "\n}  // namespace scatterptx::detail\n")
