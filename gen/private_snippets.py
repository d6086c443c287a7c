"""PTX snippets of the privatised path (ptx/row_private.ptx.in): its per-row
code, unrolled over the rows of a stage, per dtype and index type."""



# Rows per stage of the privatised path (the tensor box's second dimension);
# its per-row code is unrolled, so each row's target lives in registers of
# its own. Each stage's indices get a slot of INDEX_SLOT_BYTES in shared
# memory (ROWS_PER_STAGE int64 indices).
ROWS_PER_STAGE = 8
INDEX_SLOT_BYTES = 64


def private_decode_stage(index):
    """Each lane k of a warp decodes row k % ROWS_PER_STAGE of the stage (its
    index from the stage's slot, the range check, and in warp 0 the error
    record and the target's flag) into the offset of its accumulator row,
    all ones to skip; then every lane takes row k's offset from lane k. One
    decode per lane instead of one per row per lane: the decode is most of
    the instructions of a stage otherwise."""
    load = ("@%in_mine ld.shared.s64 %raw, [%s];" if index.size == 8 else
            "@%in_mine ld.shared.s32 %raw32, [%s];\n"
            "    cvt.s64.s32         %raw, %raw32;")
    lines = [f"and.b32             %t32, %lane, {ROWS_PER_STAGE - 1};",
             "cvt.u64.u32         %t64, %t32;",
             "add.u64             %row, %row0, %t64;",
             "setp.lt.u64         %in_mine, %row, %row_end;",
             f"mad.lo.u32          %s, %t32, {index.size}, %index_slot;",
             load,
             "setp.lt.u64         %p, %raw, %out_rows64;",
             "and.pred            %ok_mine, %in_mine, %p;",
             "cvt.u32.u64         %t32, %raw;",
             "// Bad row: in range as a source row, target outside [0, out_rows).",
             "not.pred            %p, %ok_mine;",
             "and.pred            %p, %p, %in_mine;",
             "and.pred            %p, %p, %decoder;",
             "add.u64             %t64, %row, %row_base;",
             "@%p red.global.min.u64 [%record], %t64;",
             "and.pred            %p, %ok_mine, %decoder;",
             "mad.lo.u32          %s, %t32, 4, %flags;",
             "@%p st.shared.u32   [%s], 1;",
             "mad.lo.u32          %off_mine, %t32, %acc_pitch, %smem;",
             "@!%ok_mine mov.u32  %off_mine, -1;"]
    for k in range(ROWS_PER_STAGE):
        lines += [f"shfl.sync.idx.b32   %off{k}, %off_mine, {k}, 31, -1;",
                  f"setp.ne.u32         %ok{k}, %off{k}, -1;"]
    return "\n    ".join(lines)


def private_copy_index(index):
    """One index from global memory (%t64) into the stage's slot (thread 0)."""
    if index.size == 8:
        return ("ld.global.nc.s64    %w64, [%t64];\n"
                "    st.shared.s64       [%index_dst], %w64;")
    return ("ld.global.nc.s32    %s, [%t64];\n"
            "    st.shared.s32       [%index_dst], %s;")


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
                  f"    add.u32             %u, %off{k}, %j;",
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
    regs = [f".reg .pred  %in_mine, %ok_mine, {', '.join(f'%ok{k}' for k in rows)};",
            f".reg {value_type}   {', '.join(f'%v{k}' for k in rows)};",
            f".reg .b16   {', '.join(f'%h{k}' for k in rows)};",
            f".reg .b32   %off_mine, {', '.join(f'%off{k}' for k in rows)};",
            ".reg .b64   %raw;"]
    if index.size == 4:
        regs.append(".reg .b32   %raw32;")
    return {
        "ACC_TYPE": "f64" if dtype.name == "f64" else "f32",
        "ACC_TYPE_REG": ".f64" if dtype.name == "f64" else ".f32",
        "ACC_BYTES": "8" if dtype.name == "f64" else "4",
        "DTYPE": dtype.name,
        "ROWS_PER_STAGE": str(ROWS_PER_STAGE),
        "ROWS_PER_STAGE_MINUS_1": str(ROWS_PER_STAGE - 1),
        "ROWS_PER_STAGE_MASK": str(2 ** 64 - ROWS_PER_STAGE),
        "INDEX_SLOT_BYTES": str(INDEX_SLOT_BYTES),
        "STAGE_INDEX_BYTES": str(ROWS_PER_STAGE * index.size),
        "COPY_ONE_INDEX": private_copy_index(index),
        "STAGE_TARGET_REGS": "\n    ".join(regs),
        "DECODE_STAGE": private_decode_stage(index),
        "ACCUMULATE_ROWS": private_accumulate(dtype),
        "CONVERT_TO_STAGING": private_convert(dtype),
        "FLUSH_PITCH": "%row_pitch" if sixteen_bit else "%acc_pitch",
        "FLUSH_BASE": "%staging" if sixteen_bit else "%smem",
    }
