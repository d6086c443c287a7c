"""PTX snippets of the privatised path (ptx/row_private.ptx.in): its per-row
decode and its accumulate loop, per dtype and index type."""



# Rows per stage of the privatised path (the tensor box's second dimension).
# Lane k of every consumer warp decodes row k % ROWS_PER_STAGE; one 32-bit
# word per row (its target and the rows sharing it) then reaches any lane by
# shfl. Each stage's indices get a slot of INDEX_SLOT_BYTES in shared memory
# (ROWS_PER_STAGE int64 indices).
ROWS_PER_STAGE = 16
INDEX_SLOT_BYTES = 128
# A decoded row's word: its target in the low 16 bits (the path takes at
# most 4096 targets), the rows of the stage that share it in the top 16.
ROWS_SHIFT = 16
TARGET_MASK = (1 << ROWS_SHIFT) - 1
assert ROWS_PER_STAGE <= 32 - ROWS_SHIFT


def accumulator_bytes(dtype):
    return 8 if dtype.name == "f64" else 4


def vector_elems(dtype):
    """Columns per accumulator access: 16 bytes of accumulators."""
    return 16 // accumulator_bytes(dtype)


def indent_block(lines):
    """Lines for a placeholder indented by four spaces: labels at column 0."""
    return "\n".join([lines[0]] + [line if line.endswith(":") else "    " + line for line in lines[1:]])


def private_decode_stage(index):
    """Each lane decodes row %my_row of the stage: its index from the stage's
    slot, the range check, and in warp 0 the error record and the target's
    flag. The row that comes first among those with its target leads them:
    its word holds the target and the mask of those rows; every other row's
    word is 0, so only leaders add to an accumulator and no two rows of a
    stage touch the same one. One decode per lane instead of one per row per
    lane: the decode is most of a stage's instructions otherwise."""
    load = ("@%in_mine ld.shared.s64 %raw, [%s];" if index.size == 8 else
            "@%in_mine ld.shared.s32 %raw32, [%s];\n"
            "    cvt.s64.s32         %raw, %raw32;")
    return "\n    ".join([
        "cvt.u64.u32         %t64, %my_row;",
        "add.u64             %row, %row0, %t64;",
        "setp.lt.u64         %in_mine, %row, %row_end;",
        f"mad.lo.u32          %s, %my_row, {index.size}, %index_slot;",
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
        "mov.u32             %target_mine, %t32;",
        "@!%ok_mine mov.u32  %target_mine, -1;",
        "// The rows of the stage with this row's target; the lowest leads.",
        "match.any.sync.b32  %same, %target_mine, -1;",
        f"and.b32             %same, %same, {(1 << ROWS_PER_STAGE) - 1};",
        "neg.s32             %t32, %same;",
        "and.b32             %t32, %t32, %same;",
        "setp.eq.u32         %p, %t32, %my_bit;",
        "and.pred            %p, %p, %ok_mine;",
        f"shl.b32             %word_mine, %same, {ROWS_SHIFT};",
        "or.b32              %word_mine, %word_mine, %target_mine;",
        "@!%p mov.u32        %word_mine, 0;"])


def private_copy_index(index):
    """One index from global memory (%t64) into the stage's slot (thread 0)."""
    if index.size == 8:
        return ("ld.global.nc.s64    %w64, [%t64];\n"
                "    st.shared.s64       [%index_dst], %w64;")
    return ("ld.global.nc.s32    %s, [%t64];\n"
            "    st.shared.s32       [%index_dst], %s;")


def load_values(dtype, regs, address, pred=""):
    """One vector of source values at shared `address` into accumulator-type
    registers `regs` (16-bit values are widened to f32)."""
    guard = f"@{pred} " if pred else ""
    if dtype.name in ("f32", "f64"):
        vec = f"v{len(regs)}"
        return [f"{guard}ld.shared.{vec}.{dtype.name} {{{', '.join(regs)}}}, [{address}];"]
    words = [f"{regs[0]}_w0", f"{regs[0]}_w1"]
    halves = [f"{regs[0]}_h{e}" for e in range(4)]
    lines = [f"{guard}ld.shared.v2.b32 {{{', '.join(words)}}}, [{address}];",
             f"mov.b32             {{{halves[0]}, {halves[1]}}}, {words[0]};",
             f"mov.b32             {{{halves[2]}, {halves[3]}}}, {words[1]};"]
    lines += [f"cvt.f32.{dtype.name}       {regs[e]}, {halves[e]};" for e in range(4)]
    return lines


def value_registers(dtype, names):
    """Declarations of the value registers `names` and their 16-bit scratch."""
    acc = ".f64" if dtype.name == "f64" else ".f32"
    lines = [f".reg {acc}   {', '.join(names)};"]
    if dtype.name in ("f16", "bf16"):
        for n in names[::4]:
            lines.append(f".reg .b32   {n}_w0, {n}_w1;")
            lines.append(f".reg .b16   {n}_h0, {n}_h1, {n}_h2, {n}_h3;")
    return lines


def item_registers(dtype):
    v = vector_elems(dtype)
    lines = []
    for item in "AB":
        lines += value_registers(dtype, [f"%x{item}{e}" for e in range(v)])
        lines += value_registers(dtype, [f"%y{item}{e}" for e in range(v)])
        acc = ".f64" if dtype.name == "f64" else ".f32"
        lines.append(f".reg {acc}   {', '.join(f'%a{item}{e}' for e in range(v))};")
    return lines


def private_accumulate(dtype):
    """Adds the stage's rows into their targets' accumulators, over this
    warp's column vectors [cg_lo, cg_end). The work items are (row, vector)
    pairs, row-major; lane l takes items l, l + 32, ... two at a time, with
    both items' loads issued before any add. Only leading rows add
    (private_decode_stage): the rows after them with the same target are
    summed into the leader's values first, so the items of a stage write
    disjoint accumulators and their read-modify-writes run side by side. The
    loop test is a warp vote, so that every lane runs the shfls of each pass."""
    v = vector_elems(dtype)
    acc = "f64" if dtype.name == "f64" else "f32"
    src_vec_bytes = v * dtype.size
    lines = ["mov.u32             %k, %k_first;",
             "mov.u32             %cg, %cg_first;",
             "ACCUMULATE_PAIR:",
             f"setp.lt.u32         %p, %k, {ROWS_PER_STAGE};",
             "vote.sync.any.pred  %p, %p, -1;",
             "@!%p bra            ACCUMULATE_DONE;",
             "// Item B follows item A by 32 items.",
             "add.u32             %kB, %k, %k_step;",
             "add.u32             %cgB, %cg, %cg_step;",
             "setp.ge.u32         %p, %cgB, %cg_end;",
             "@%p sub.u32         %cgB, %cgB, %cg_count;",
             "@%p add.u32         %kB, %kB, 1;"]
    for item, k, cg in (("A", "%k", "%cg"), ("B", "%kB", "%cgB")):
        lines += [f"shfl.sync.idx.b32   %word{item}, %word_mine, {k}, 31, -1;",
                  f"setp.lt.u32         %ok{item}, {k}, {ROWS_PER_STAGE};",
                  f"setp.ne.u32         %p, %word{item}, 0;",
                  f"and.pred            %ok{item}, %ok{item}, %p;",
                  f"@!%ok{item} mov.u32 %word{item}, 0;",
                  f"mul.lo.u32          %col{item}, {cg}, {src_vec_bytes};",
                  f"add.u32             %col{item}, %col{item}, %slot;",
                  f"mad.lo.u32          %val{item}, {k}, %row_pitch, %col{item};",
                  f"and.b32             %acc{item}, %word{item}, {TARGET_MASK};",
                  f"mad.lo.u32          %acc{item}, %acc{item}, %acc_pitch, %smem;",
                  f"mad.lo.u32          %acc{item}, {cg}, 16, %acc{item};",
                  "// The other rows with this target.",
                  f"shr.u32             %rest{item}, %word{item}, {ROWS_SHIFT};",
                  f"shl.b32             %t32, 1, {k};",
                  f"xor.b32             %rest{item}, %rest{item}, %t32;",
                  f"@!%ok{item} mov.u32 %rest{item}, 0;"]
    for item in "AB":
        lines += load_values(dtype, [f"%x{item}{e}" for e in range(v)], f"%val{item}", f"%ok{item}")
    for item in "AB":
        lines.append(f"@%ok{item} ld.shared.v{v}.{acc} {{{', '.join(f'%a{item}{e}' for e in range(v))}}}, [%acc{item}];")
    for item in "AB":
        lines += [f"FOLLOWERS_{item}:",
                  f"setp.eq.u32         %p, %rest{item}, 0;",
                  f"@%p bra             FOLLOWERS_{item}_DONE;",
                  f"bfind.u32           %j, %rest{item};",
                  f"mad.lo.u32          %s, %j, %row_pitch, %col{item};"]
        lines += load_values(dtype, [f"%y{item}{e}" for e in range(v)], "%s")
        lines += [f"add.{acc}             %x{item}{e}, %x{item}{e}, %y{item}{e};" for e in range(v)]
        lines += ["shl.b32             %t32, 1, %j;",
                  f"xor.b32             %rest{item}, %rest{item}, %t32;",
                  f"bra                 FOLLOWERS_{item};",
                  f"FOLLOWERS_{item}_DONE:"]
    for item in "AB":
        lines += [f"add.{acc}             %a{item}{e}, %a{item}{e}, %x{item}{e};" for e in range(v)]
        lines.append(f"@%ok{item} st.shared.v{v}.{acc} [%acc{item}], {{{', '.join(f'%a{item}{e}' for e in range(v))}}};")
    lines += ["// The next pair starts 32 items after item B.",
              "add.u32             %k, %kB, %k_step;",
              "add.u32             %cg, %cgB, %cg_step;",
              "setp.ge.u32         %p, %cg, %cg_end;",
              "@%p sub.u32         %cg, %cg, %cg_count;",
              "@%p add.u32         %k, %k, 1;",
              "bra                 ACCUMULATE_PAIR;",
              "ACCUMULATE_DONE:"]
    return indent_block(lines)


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
    sixteen_bit = dtype.name in ("f16", "bf16")
    regs = [".reg .pred  %in_mine, %ok_mine, %okA, %okB;",
            ".reg .b32   %my_row, %my_bit, %same, %target_mine, %word_mine, %wordA, %wordB;",
            ".reg .b32   %groups, %cg_lo, %cg_end, %cg_count, %k_first, %cg_first, %k_step, %cg_step;",
            ".reg .b32   %k, %cg, %kB, %cgB;",
            ".reg .b32   %colA, %colB, %valA, %valB, %accA, %accB, %restA, %restB;",
            ".reg .b64   %raw;"]
    if index.size == 4:
        regs.append(".reg .b32   %raw32;")
    regs += item_registers(dtype)
    return {
        "ACC_TYPE": "f64" if dtype.name == "f64" else "f32",
        "ACC_TYPE_REG": ".f64" if dtype.name == "f64" else ".f32",
        "ACC_BYTES": str(accumulator_bytes(dtype)),
        "VECTOR_ELEMS": str(vector_elems(dtype)),
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
