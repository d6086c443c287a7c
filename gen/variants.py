"""Every kernel variant the build makes: the dtypes and index types and the
template substitutions of each variant (each template's parameter list is
in kernel_params.py)."""

from dataclasses import dataclass

import gate_snippets as gate
import group_snippets as group
import segment_snippets as segment
from private_snippets import private_substitutions
from red_snippets import (RED_ROW_BATCH_VECTORS, RED_SHORT_ROWS_PER_BATCH, RED_VECTOR_BYTES, cta_bounds, inflight_preload, inflight_loads, inflight_reds,
                          inflight_regs, row_vector_batch, row_weight, scalar_add, vector_add, vector_regs, weight_regs,
                          weight_setup)


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

@dataclass(frozen=True)
class Variant:
    name: str
    family: str          # row_tma_reduce | row_red | row_private | group_* (KernelFamily)
    dtype: Dtype
    index: IndexType
    vector_bytes: int    # row_red: bytes per lane access; row_tma_reduce: 16
    template: str
    substitutions: dict
    min_sm: int = 90
    reduce: str = "sum"   # scatterptx_reduce the variant computes: sum, mean, amax, amin
    weighted: bool = False  # scales each source row by its weight


def row_substitutions(dtype, index):
    """What every per-row template takes from the dtype and the index type."""
    return {
        "ELEM_BYTES": str(dtype.size),
        "INDEX_BYTES": str(index.size),
        "INDEX_REGS": index.regs,
        "LOAD_INDEX": index.load,
    }


def variants():
    out = []
    for dtype in DTYPES:
        for index in INDEX_TYPES:
            common = row_substitutions(dtype, index)
            name = f"row_tma_reduce_{dtype.name}_{index.name}"
            out.append(Variant(name, "row_tma_reduce", dtype, index, 16, "row_tma_reduce.ptx.in",
                               dict(common, ENTRY=name, REDUCE_TYPE=dtype.reduce)))
            name = f"row_private_{dtype.name}_{index.name}"
            out.append(Variant(name, "row_private", dtype, index, 16, "row_private.ptx.in",
                               dict(common, **private_substitutions(dtype, index), ENTRY=name,
                                    REDUCE_TYPE=dtype.reduce)))
            for vector_bytes in RED_VECTOR_BYTES[dtype.name]:
                for weighted in (False, True):
                    shape = "scalar" if vector_bytes == dtype.size else f"vec{vector_bytes}"
                    # The unweighted variants keep their names.
                    prefix = "row_red_weighted" if weighted else "row_red"
                    name = f"{prefix}_{shape}_{dtype.name}_{index.name}"
                    body = (scalar_add(dtype, weighted) if vector_bytes == dtype.size
                            else vector_add(dtype, vector_bytes, weighted))
                    out.append(Variant(name, "row_red", dtype, index, vector_bytes, "row_red.ptx.in",
                                       dict(common, ENTRY=name,
                                            CTA_BOUNDS=cta_bounds(vector_bytes),
                                            VECTOR_BYTES=str(vector_bytes),
                                            VECTOR_ELEMS=str(vector_bytes // dtype.size),
                                            VALUE_REGS=f".reg {dtype.value_reg}  %x;\n    "
                                                       + vector_regs(dtype),
                                            VECTOR_ADD=body,
                                            SCALAR_ADD=scalar_add(dtype, weighted),
                                            SHORT_ROWS_PER_BATCH=str(RED_SHORT_ROWS_PER_BATCH),
                                            ROW_BATCH_VECTORS=str(RED_ROW_BATCH_VECTORS),
                                            INFLIGHT_REGS=inflight_regs(dtype, vector_bytes, index),
                                            WEIGHT_REGS=weight_regs(dtype, weighted),
                                            WEIGHT_SETUP=weight_setup(weighted),
                                            ROW_WEIGHT=row_weight(dtype, weighted),
                                            INFLIGHT_PRELOAD=inflight_preload(index),
                                            INFLIGHT_LOADS=inflight_loads(dtype, vector_bytes, index, weighted),
                                            INFLIGHT_REDS=inflight_reds(dtype, vector_bytes, index, weighted),
                                            ROW_VECTOR_BATCH=row_vector_batch(dtype, vector_bytes, weighted)),
                                       weighted=weighted))
    return out + group_variants() + [index_record_take_variant()]


def index_record_take_variant():
    """The read-and-clear of the RECORD-mode index-error record (no dtype:
    f32 and the first index type stand in)."""
    return Variant("index_record_take", "index_record_take", DTYPES[0], INDEX_TYPES[0], 0,
                   "index_record_take.ptx.in", {"ENTRY": "index_record_take"})


def group_variants():
    """The grouping kernels (radix passes of the index) and the summing
    kernels of grouped execution. The radix kernels do not depend on the
    dtype (f32 stands in); the first pass reads the index, later ones keys."""
    out = []
    f32 = DTYPES[0]
    scan = group.block_exclusive_scan
    sources = [(index, f"_{index.name}") for index in INDEX_TYPES] + [(None, "_keys")]
    for index, suffix in sources:
        doc, param, regs, load, record = group.key_source(index)
        common = {"KEY_SOURCE_DOC": doc, "KEY_SOURCE_PARAM": param, "KEY_REGS": regs, "LOAD_KEY": load,
                  **group.tile_substitutions()}
        family = "index" if index else "keys"
        as_index = index or INDEX_TYPES[0]
        name = "group_histogram" + suffix
        out.append(Variant(name, f"group_histogram_{family}", f32, as_index, 0, "group_histogram.ptx.in",
                           dict(common, ENTRY=name, ROUND_REGS=group.scatter_round_regs(),
                                LOAD_ROUNDS=group.load_rounds(load, record, None),
                                COUNT_ROUNDS=group.histogram_count_rounds(),
                                ORDER_INIT=gate.order_init() if index else "",
                                ORDER_CHECK=gate.order_check(group.SCATTER_ROUNDS, load) if index else "",
                                ORDER_STORE=gate.order_store() if index else "")))
        name = "group_scatter" + suffix
        out.append(Variant(name, f"group_scatter_{family}", f32, as_index, 0, "group_scatter.ptx.in",
                           dict(common, ENTRY=name, ROUND_REGS=group.scatter_round_regs(),
                                BLOCK_EXCLUSIVE_SCAN=scan("%total", "%digit_first", "%n", "warp_sums"),
                                TILE_SCAN=scan("%run", "%local_first", "%n", "warp_sums"),
                                LOAD_ROUNDS=group.load_rounds(load, "", "index" if index else "keys"),
                                COUNT_ROUNDS=group.scatter_count_rounds(),
                                WRITE_ROUNDS=group.scatter_write_rounds(),
                                WEIGHT_REGS=group.scatter_weight_regs(),
                                PREFETCH_WEIGHTS=group.scatter_prefetch_weights("index" if index else "keys"),
                                STAGE_WEIGHTS=group.scatter_stage_weights("index" if index else "keys"))))
    out.append(Variant("group_scan", "group_scan", f32, INDEX_TYPES[0], 0, "group_scan.ptx.in",
                       {"ENTRY": "group_scan",
                        "BLOCK_EXCLUSIVE_SCAN": scan("%sum", "%prefix", "%total", "warp_sums")}))
    for dtype in DTYPES:
        for vectorized in (True, False):
            shape = "vec16" if vectorized else "scalar"
            vector_bytes = 16 if vectorized else dtype.size
            for op in segment.OPS:
                # The sum keeps its names; the other operations add theirs.
                suffix = "" if op == "sum" else f"_{op}"
                reduce = "sum" if op == "weighted" else op
                subs = segment.segment_substitutions(dtype, vectorized, op)
                subs["ACC"] = segment.acc_type(dtype)
                subs["ROWS_IN_FLIGHT"] = str(segment.ROWS_IN_FLIGHT)
                subs["CHUNK_ELEMS"] = str(32 * segment.lane_elems(dtype, vectorized))
                name = f"group_segment_sum_{shape}_{dtype.name}{suffix}"
                out.append(Variant(name, "group_segment_sum", dtype, INDEX_TYPES[0], vector_bytes,
                                   "group_segment_sum.ptx.in",
                                   dict(subs, ENTRY=name,
                                        POSITION_REGS=segment.position_regs() + "\n    " + segment.staging_regs(),
                                        STAGE_POSITIONS=segment.stage_positions(dtype, op),
                                        PREFETCH_OUT=segment.prefetch_out(dtype),
                                        LOAD_POSITIONS=segment.load_positions(dtype, vectorized, op),
                                        SHIFT_KEYS=segment.shift_keys(),
                                        OP_SETUP=segment.weight_setup(op),
                                        ENTRY_LIMITS=segment.entry_limits(dtype, vectorized, op),
                                        ZERO_COUNT=segment.zero_count(op)),
                                   reduce=reduce, weighted=op == "weighted"))
                if op == "weighted":
                    continue  # its partial sums combine as the sum's do
                name = f"group_combine_{shape}_{dtype.name}{suffix}"
                out.append(Variant(name, "group_combine", dtype, INDEX_TYPES[0], vector_bytes,
                                   "group_combine.ptx.in",
                                   dict(subs, ENTRY=name, RUN_COUNT=segment.run_count(op),
                                        **{f"LOAD_ITEM{u}": segment.load_item(dtype, vectorized, u)
                                           for u in range(segment.ITEMS_IN_FLIGHT)}),
                                   reduce=reduce))
    return out
