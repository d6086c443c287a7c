"""PTX snippets of the summing kernels (ptx/group_segment_sum.ptx.in,
ptx/group_combine.ptx.in): one lane's slice of a row, loaded from src or
from a partial sum, added into the accumulators (f32 for f32/f16/bf16, f64
for f64), and added once into out or stored as a partial sum.

A lane's slice is VE consecutive elements: one 16-byte vector ("vec16"
variants: rows, strides and pointers 16-byte aligned) or one element
("scalar" variants: any layout).

Each variant combines with one operation (OPS): "sum" (the sum, and the
sum's partial sums for every reduce that adds), "weighted" (the sum of
weights[row] * row, the product fused into the f32/f64 sum), "mean" (the sum
and the number of rows, divided at the write), "amax" and "amin"
(NaN-propagating maximum and minimum). The write to out takes out's own
value as one more operand when include_self is set, else the operation's
identity, so each reached row is written once."""

import weight_snippets as weights

# The operations a summing variant combines with; "weighted" is a sum whose
# rows are scaled by per-row weights (group_combine adds its partial sums as
# "sum" does).
OPS = ("sum", "weighted", "mean", "amax", "amin")

ROWS_IN_FLIGHT = 4   # rows each lane of group_segment_sum loads before adding them, in order
# The f32 weighted vec16 sum held to the plain sum's 48 registers, so that it
# runs as many summing CTAs per SM: with its weights staged it needs no
# spill there (ptxas 13.0), where it would take 56 if free to.
WEIGHTED_VEC16_MAX_REGISTERS = {"f32": 48}
ITEMS_IN_FLIGHT = 4  # partial sums each lane of group_combine loads before adding them
SEGMENT_TILE_ROWS = 256  # grouped positions per summing warp (a tile)
LANE_SLICE_BYTES = 16    # one lane's slice in the vec16 variants


def lane_elems(dtype, vectorized):
    return LANE_SLICE_BYTES // dtype.size if vectorized else 1


def acc_type(dtype):
    return "f64" if dtype.name == "f64" else "f32"


def acc_bytes(dtype):
    return 8 if dtype.name == "f64" else 4


def _words(dtype, vectorized):
    """(register type, count, load suffix) of a lane's raw slice."""
    if not vectorized:
        return {"f32": (".f32", 1, ".f32"), "f16": (".b16", 1, ".b16"),
                "bf16": (".b16", 1, ".b16"), "f64": (".f64", 1, ".f64")}[dtype.name]
    return {"f32": (".f32", 4, ".v4.f32"), "f16": (".b32", 4, ".v4.b32"),
            "bf16": (".b32", 4, ".v4.b32"), "f64": (".f64", 2, ".v2.f64")}[dtype.name]


def _regs(name, n):
    return "{" + ", ".join(f"{name}_{i}" for i in range(n)) + "}" if n > 1 else f"{name}_0"


def slice_regs(dtype, vectorized, op="sum"):
    kind, n, _ = _words(dtype, vectorized)
    ve = lane_elems(dtype, vectorized)
    acc = acc_type(dtype)
    raw = ", ".join(f"%x{u}_{i}" for u in range(ROWS_IN_FLIGHT) for i in range(n))
    partial = ", ".join(f"%y{u}_{i}" for u in range(ROWS_IN_FLIGHT) for i in range(ve))
    accs = ", ".join(f"%acc_{i}" for i in range(ve))
    outs = ", ".join(f"%o_{i}" for i in range(n))
    regs = (f".reg {kind}  {raw};\n"
            f"    .reg .{acc}  {partial};\n"
            f"    .reg .{acc}  {accs}, %f, %g;\n"
            f"    .reg {kind}  {outs};\n"
            "    .reg .b32   %w, %w_hi;\n"
            "    .reg .b16   %h, %h_hi;")
    if op == "mean":
        regs += f"\n    .reg .b32   %cnt;\n    .reg .{acc}  %cntf;\n    .reg .b64   %run_first;"
    if op in ("amax", "amin") and acc == "f64":
        regs += "\n    .reg .pred  %nan;"
    if op == "weighted":
        # Raw weights of the positions a lane stages; the walk reads them back converted.
        regs += ("\n    " + weights.regs(dtype, STAGED_PER_LANE) +
                 "\n    .reg .b32   %staged_weights;\n    .reg .pred  %w_sorted;")
    return regs


# The identity of each operation in the accumulator type: what a sum starts
# from, and what the write combines with when out's own value does not join.
_IDENTITY = {
    "f32": {"sum": "0f00000000", "amax": "0fFF800000", "amin": "0f7F800000"},
    "f64": {"sum": "0d0000000000000000", "amax": "0dFFF0000000000000", "amin": "0d7FF0000000000000"},
}
# The same, as the raw element bits out's registers hold (f16/bf16 in pairs).
_RAW_IDENTITY = {
    "f16": {"sum": 0x0000, "amax": 0xFC00, "amin": 0x7C00},
    "bf16": {"sum": 0x0000, "amax": 0xFF80, "amin": 0x7F80},
}
_CANONICAL_NAN = {"f32": "0f7FFFFFFF", "f64": "0d7FF8000000000000"}


def _identity_op(op):
    return op if op in ("amax", "amin") else "sum"


def zero_acc(dtype, vectorized, op="sum"):
    """Accumulators := the operation's identity (0, -inf or +inf)."""
    acc = acc_type(dtype)
    value = _IDENTITY[acc][_identity_op(op)]
    return "\n".join(f"    mov.{acc}         %acc_{i}, {value};"
                     for i in range(lane_elems(dtype, vectorized)))


def _fold(op, acc, dst, src, pred):
    """dst := op(dst, src) in the accumulator type: an add, or a maximum or
    minimum that is NaN as soon as either operand is (torch's amax/amin).
    f32 has max.NaN/min.NaN (PTX 7.0, sm_80); f64 has no .NaN form, so a NaN
    operand is caught by setp.nan and replaces the result. That flag is set
    on every path, false where pred is: a guarded setp would leave the last
    fold's flag for the unguarded NaN move."""
    guard = f"@{pred} " if pred else ""
    if op not in ("amax", "amin"):
        return [f"    {guard}{'add.' + acc:<19} {dst}, {dst}, {src};"]
    ins = "max" if op == "amax" else "min"
    if acc == "f32":
        return [f"    {guard}{ins + '.NaN.f32':<19} {dst}, {dst}, {src};"]
    flag = f"setp.nan.and.f64    %nan, {dst}, {src}, {pred};" if pred else f"setp.nan.f64        %nan, {dst}, {src};"
    return [f"    {flag}",
            f"    {guard}{ins + '.f64':<19} {dst}, {dst}, {src};",
            f"    @%nan mov.f64       {dst}, {_CANONICAL_NAN['f64']};"]


def load_src(dtype, vectorized, u, pred, addr):
    _, n, suffix = _words(dtype, vectorized)
    return f"    @{pred} ld.global.nc{suffix} {_regs(f'%x{u}', n)}, [{addr}];"


def shift_rows(dtype, vectorized, op="sum"):
    """Row u + 1's slice becomes row u's (the next one to add)."""
    kind, n, _ = _words(dtype, vectorized)
    mov = "mov.b16" if kind == ".b16" else f"mov{kind}" if kind != ".b32" else "mov.b32"
    lines = [f"    {mov:<19} %x{u}_{i}, %x{u + 1}_{i};"
             for u in range(ROWS_IN_FLIGHT - 1) for i in range(n)]
    return "\n".join(lines)


def _unpack(dtype, word, lo, hi):
    """A packed pair of 16-bit values in `word` as f32 `lo`, `hi`."""
    if dtype.name == "bf16":
        # bf16 is the upper half of an f32: shifting is the conversion.
        return (f"    shl.b32             %w, {word}, 16;\n"
                f"    mov.b32             {lo}, %w;\n"
                f"    and.b32             %w, {word}, 0xFFFF0000;\n"
                f"    mov.b32             {hi}, %w;")
    return (f"    mov.b32             {{%h, %h_hi}}, {word};\n"
            f"    cvt.f32.f16         {lo}, %h;\n"
            f"    cvt.f32.f16         {hi}, %h_hi;")


def _indented(lines):
    return ["    " + line for line in lines]


def _accumulate(dtype, op, i, value, pred, u):
    """acc_i := op(acc_i, value), value already in the accumulator type;
    weighted: acc_i += value * weight, rounded once (fma)."""
    acc = acc_type(dtype)
    if op == "weighted":
        return [f"    @{pred} fma.rn.{acc}  %acc_{i}, {value}, %wv, %acc_{i};"]
    return _fold(op, acc, f"%acc_{i}", value, pred)


def add_src(dtype, vectorized, u, pred, op="sum"):
    """acc op= row u's slice, under pred; mean also counts the row."""
    name = dtype.name
    lines = []
    if op == "mean":
        lines.append("    add.u32             %cnt, %cnt, 1;")
    if op == "weighted":
        lines.append(staged_weight(dtype))
    if name in ("f32", "f64"):
        _, n, _ = _words(dtype, vectorized)
        for i in range(n):
            lines += _accumulate(dtype, op, i, f"%x{u}_{i}", pred, u)
        return "\n".join(lines)
    if not vectorized:
        cvt = "cvt.f32.bf16" if name == "bf16" else "cvt.f32.f16"
        lines.append(f"    @{pred} {cvt} %f, %x{u}_0;")
        lines += _accumulate(dtype, op, 0, "%f", pred, u)
        return "\n".join(lines)
    for i in range(4):
        lines.append(_unpack(dtype, f"%x{u}_{i}", "%f", "%g"))
        lines += _accumulate(dtype, op, 2 * i, "%f", pred, u)
        lines += _accumulate(dtype, op, 2 * i + 1, "%g", pred, u)
    return "\n".join(lines)


def _acc_vector_accesses(dtype, vectorized):
    """(byte offset, register list, suffix) of a lane's accumulator slice in
    memory: at most 16 bytes per access."""
    ve = lane_elems(dtype, vectorized)
    acc = acc_type(dtype)
    per = min(ve, 16 // acc_bytes(dtype))
    out = []
    for first in range(0, ve, per):
        suffix = f".v{per}.{acc}" if per > 1 else f".{acc}"
        out.append((first * acc_bytes(dtype), first, per, suffix))
    return out


def store_partial(dtype, vectorized, pred, addr):
    lines = []
    for offset, first, per, suffix in _acc_vector_accesses(dtype, vectorized):
        regs = ", ".join(f"%acc_{first + i}" for i in range(per))
        regs = "{" + regs + "}" if per > 1 else regs
        lines.append(f"    @{pred} st.global{suffix} [{addr}+{offset}], {regs};")
    return "\n".join(lines)


def load_partial(dtype, vectorized, u, pred, addr):
    lines = []
    for offset, first, per, suffix in _acc_vector_accesses(dtype, vectorized):
        regs = ", ".join(f"%y{u}_{first + i}" for i in range(per))
        regs = "{" + regs + "}" if per > 1 else regs
        lines.append(f"    @{pred} ld.global{suffix} {regs}, [{addr}+{offset}];")
    return "\n".join(lines)


def add_partial(dtype, vectorized, u, pred, op="sum"):
    """acc op= partial u; weighted and mean partials are sums."""
    acc = acc_type(dtype)
    fold = _identity_op(op)
    lines = []
    for i in range(lane_elems(dtype, vectorized)):
        lines += _fold(fold, acc, f"%acc_{i}", f"%y{u}_{i}", pred)
    return "\n".join(lines)


def _out_identity(dtype, vectorized, op):
    """out's registers := the operation's identity, for a write without
    include_self (the predicated load of out replaces it otherwise)."""
    kind, n, _ = _words(dtype, vectorized)
    ident = _identity_op(op)
    if dtype.name in ("f32", "f64"):
        value = _IDENTITY[dtype.name][ident]
        return [f"    mov.{dtype.name}             %o_{i}, {value};" for i in range(n)]
    bits = _RAW_IDENTITY[dtype.name][ident]
    if kind == ".b16":
        return [f"    mov.b16             %o_0, 0x{bits:04X};"]
    return [f"    mov.b32             %o_{i}, 0x{bits:04X}{bits:04X};" for i in range(n)]


def _finish(dtype, op, value):
    """mean: value := value / rows (%cntf, include_self counted)."""
    if op != "mean":
        return []
    return [f"    div.rn.{acc_type(dtype)}          {value}, {value}, %cntf;"]


def _count(dtype, op):
    """mean: %cntf := %cnt rows, plus one for out's own row with include_self."""
    if op != "mean":
        return []
    acc = acc_type(dtype)
    one = "0d3FF0000000000000" if acc == "f64" else "0f3F800000"
    return [f"    cvt.rn.{acc}.u32    %cntf, %cnt;",
            f"    @%self_on add.{acc} %cntf, %cntf, {one};"]


def add_to_out(dtype, vectorized, pred, addr, op="sum"):
    """out slice := op(out slice, acc), rounded once to the element type;
    out's value joins only with include_self (%self_on), else the
    operation's identity stands for it (so a sum stores acc). The caller owns
    the out row (no other lane or warp writes it), so this is a plain
    read-modify-write, not an atomic."""
    name = dtype.name
    kind, n, suffix = _words(dtype, vectorized)
    outs = _regs("%o", n)
    fold = _identity_op(op)
    lines = [f"    and.pred            %self_lane, {pred}, %self_on;"]
    lines += _out_identity(dtype, vectorized, op)
    lines.append(f"    @%self_lane ld.global{suffix} {outs}, [{addr}];")
    lines += _count(dtype, op)
    store = f"    @{pred} st.global{suffix} [{addr}], {outs};"
    if name in ("f32", "f64"):
        for i in range(n):
            lines += _fold(fold, name, f"%o_{i}", f"%acc_{i}", pred)
            lines += _finish(dtype, op, f"%o_{i}")
        return "\n".join(lines + [store])
    if not vectorized:
        up = "cvt.f32.bf16" if name == "bf16" else "cvt.f32.f16"
        down = "cvt.rn.bf16.f32" if name == "bf16" else "cvt.rn.f16.f32"
        lines.append(f"    @{pred} {up} %f, %o_0;")
        lines += _fold(fold, "f32", "%f", "%acc_0", pred)
        lines += _finish(dtype, op, "%f")
        lines.append(f"    @{pred} {down} %o_0, %f;")
        return "\n".join(lines + [store])
    pack = "cvt.rn.bf16x2.f32" if name == "bf16" else "cvt.rn.f16x2.f32"
    for i in range(4):
        lines.append(_unpack(dtype, f"%o_{i}", "%f", "%g"))
        lines += _fold(fold, "f32", "%f", f"%acc_{2 * i}", "")
        lines += _fold(fold, "f32", "%g", f"%acc_{2 * i + 1}", "")
        lines += _finish(dtype, op, "%f") + _finish(dtype, op, "%g")
        # The first source goes to the upper half.
        lines.append(f"    {pack} %o_{i}, %g, %f;")
    return "\n".join(lines + [store])


def segment_substitutions(dtype, vectorized, op="sum"):
    ve = lane_elems(dtype, vectorized)
    return {
        "ELEM_BYTES": str(dtype.size),
        "LANE_ELEMS": str(ve),
        "ACC_BYTES": str(acc_bytes(dtype)),
        "SLICE_REGS": slice_regs(dtype, vectorized, op),
        "ZERO_ACC": zero_acc(dtype, vectorized, op),
        "SHIFT_ROWS": shift_rows(dtype, vectorized, op),
        "ADD_ROW0": add_src(dtype, vectorized, 0, "%lane_on", op),
        "ADD_TO_OUT": add_to_out(dtype, vectorized, "%lane_on", "%out_addr", op),
        "STORE_PARTIAL": store_partial(dtype, vectorized, "%lane_on", "%partial_addr"),
        **{f"ADD_PARTIAL{u}": add_partial(dtype, vectorized, u, f"%load{u}", op)
           for u in range(ITEMS_IN_FLIGHT)},
    }


def zero_count(op):
    """group_segment_sum, mean: a segment's row count starts at 0."""
    return "    mov.u32             %cnt, 0;" if op == "mean" else ""


def weight_setup(op):
    """group_segment_sum, weighted: the weights and how to read them;
    %w_sorted: the sort carried them, so grouped position j's weight is the
    second word of rows' pair j (else the weight of its source row)."""
    if op != "weighted":
        return ""
    return (weights.setup() + "\n"
            "    ld.param.u32        %wb32, [weights_sorted];\n"
            "    setp.ne.u32         %w_sorted, %wb32, 0;\n"
            "    // Sorted: rows holds (position, weight bits) pairs, weights points at\n"
            "    // the first pair's second word.\n"
            "    @%w_sorted mov.u64  %weight_bytes, 8;")


def run_count(op):
    """group_combine, mean: %cnt := the rows of the run whose whole sum this
    warp has (%whole), from the sorted keys alone: the first position past
    key %h_key in the run's last tile a + n - 1, less its first position in
    its first tile a (both binary searches within one tile of 256 keys)."""
    if op != "mean":
        return ""
    def search(label, compare):
        return (f"{label}:\n"
                "    setp.ge.u64         %p, %lo, %hi;\n"
                f"    @%p bra             {label}_DONE;\n"
                "    add.u64             %mid, %lo, %hi;\n"
                "    shr.u64             %mid, %mid, 1;\n"
                "    shl.b64             %t64, %mid, 2;\n"
                "    add.u64             %addr, %keys, %t64;\n"
                "    ld.global.nc.u32    %k, [%addr];\n"
                f"    setp.{compare}.u32         %p, %k, %h_key;\n"
                "    @%p add.u64         %lo, %mid, 1;\n"
                "    @!%p mov.u64        %hi, %mid;\n"
                f"    bra                 {label};\n"
                f"{label}_DONE:\n")
    return ("    @!%whole bra        RUN_COUNTED;\n"
            "    shl.b64             %lo, %a, 8;\n"
            "    add.u64             %hi, %lo, 256;\n"
            "    min.u64             %hi, %hi, %count;\n"
            + search("RUN_FIRST", "lt") +
            "    mov.u64             %run_first, %lo;\n"
            "    add.u64             %lo, %a, %n;\n"
            "    sub.u64             %lo, %lo, 1;\n"
            "    shl.b64             %lo, %lo, 8;\n"
            "    add.u64             %hi, %lo, 256;\n"
            "    min.u64             %hi, %hi, %count;\n"
            + search("RUN_END", "le") +
            "    sub.u64             %t64, %lo, %run_first;\n"
            "    cvt.u32.u64         %cnt, %t64;\n"
            "RUN_COUNTED:")


STAGED_PER_LANE = SEGMENT_TILE_ROWS // 32  # positions of a tile each lane stages in shared memory


def staged_weight_bytes(dtype):
    """Bytes of one staged weight: the weight in the compute type."""
    return 8 if dtype.name == "f64" else 4


def stage_positions(dtype=None, op="sum"):
    """Each lane loads keys and rows of tile positions tb + 32 i + lane (all
    loads first, so they are in flight together) and stores them in the
    warp's staging area; positions past te stage as the sentinel. Weighted:
    then the weights of those rows (a second round of loads in flight
    together), converted to the compute type into the warp's weight area, so
    that the walk reads each row's weight at shared-memory latency and holds
    no weight registers across its rows in flight."""
    n = STAGED_PER_LANE
    lines = []
    for i in range(n):
        lines.append(f"    cvt.u64.u32         %t64, %lane;\n"
                     f"    add.u64             %jj, %tb, %t64;\n"
                     f"    add.u64             %jj, %jj, {32 * i};\n"
                     f"    setp.lt.u64         %staged_in{i}, %jj, %te;\n"
                     f"    mov.u32             %staged_k{i}, %sentinel;\n"
                     f"    mov.u32             %staged_r{i}, 0;\n"
                     f"    shl.b64             %t64, %jj, 2;\n"
                     f"    add.u64             %addr, %keys, %t64;\n"
                     f"    @%staged_in{i} ld.global.nc.u32 %staged_k{i}, [%addr];\n"
                     + (f"    @%w_sorted shl.b64  %t64, %jj, 3;\n" if op == "weighted" else "") +
                     f"    add.u64             %addr, %rows, %t64;\n"
                     f"    @%staged_in{i} ld.global.nc.u32 %staged_r{i}, [%addr];")
    lines.append("    shl.b32             %slot, %lane, 2;")
    for i in range(n):
        lines.append(f"    add.u32             %r, %staged_keys, %slot;\n"
                     f"    st.shared.u32       [%r+{128 * i}], %staged_k{i};\n"
                     f"    add.u32             %r, %staged_rows, %slot;\n"
                     f"    st.shared.u32       [%r+{128 * i}], %staged_r{i};")
    if op == "weighted":
        lines.append(_stage_weights(dtype))
    return "\n".join(lines)


def _stage_weights(dtype):
    n = STAGED_PER_LANE
    wb = staged_weight_bytes(dtype)
    zero = {"f32": "mov.f32             %wr{i}, 0f00000000;", "f64": "mov.b64             %wr{i}, 0;"}.get(
        dtype.name, "mov.b32             %wr{i}, 0;")
    lines = ["    // The warp's weight area, past both [warps][256] u32 areas: [warps][256] weights.",
             "    shl.b32             %r, %warps, 11;",
             "    mov.u32             %staged_weights, dynamic_smem;",
             "    add.u32             %staged_weights, %staged_weights, %r;",
             f"    mul.lo.u32          %r, %warp, {256 * wb};",
             "    add.u32             %staged_weights, %staged_weights, %r;"]
    for i in range(n):
        lines.append("    " + zero.format(i=i))
        lines.append("    cvt.u64.u32         %t64, %staged_r" + str(i) + ";\n"
                     "    @%w_sorted cvt.u64.u32 %t64, %lane;\n"
                     "    @%w_sorted add.u64  %t64, %t64, %tb;\n"
                     f"    @%w_sorted add.u64  %t64, %t64, {32 * i};")
        lines += _indented(weights.load(dtype, f"%wr{i}", "%t64", f"%staged_in{i}"))
    lines.append(f"    shl.b32             %slot, %lane, {wb.bit_length() - 1};")
    acc = acc_type(dtype)
    for i in range(n):
        lines += _indented(weights.value(dtype, f"%wr{i}"))
        lines.append(f"    add.u32             %r, %staged_weights, %slot;\n"
                     f"    st.shared.{acc}       [%r+{32 * wb * i}], %wv;")
    return "\n".join(lines)


def staged_weight(dtype):
    """%wv := the staged weight of row 0, grouped position %j + %u."""
    wb = staged_weight_bytes(dtype)
    return ("    sub.u64             %t64, %j, %tb;\n"
            "    cvt.u32.u64         %slot, %t64;\n"
            "    add.u32             %slot, %slot, %u;\n"
            f"    shl.b32             %slot, %slot, {wb.bit_length() - 1};\n"
            "    add.u32             %r, %staged_weights, %slot;\n"
            f"    ld.shared.{acc_type(dtype)}       %wv, [%r];")


def staging_regs():
    n = STAGED_PER_LANE
    return f".reg .pred  %staged_in<{n}>;\n    .reg .b32   %staged_k<{n}>, %staged_r<{n}>;"


def prefetch_out(dtype):
    """The lane's slice of the out row of segment %cur into L2."""
    return ("    cvt.u64.u32         %t64, %cur;\n"
            "    mad.lo.u64          %out_addr, %t64, %out_stride, %out;\n"
            f"    mad.lo.u64          %out_addr, %col, {dtype.size}, %out_addr;\n"
            "    @%lane_on prefetch.global.L2 [%out_addr];")


def load_position(dtype, vectorized, u, op="sum"):
    """Key, source row and slice of grouped position %jj (tile-relative
    slot u of the four in flight), key and row from the staging area."""
    return (f"    setp.lt.u64         %in{u}, %jj, %te;\n"
            f"    sub.u64             %t64, %jj, %tb;\n"
            f"    cvt.u32.u64         %slot, %t64;\n"
            f"    shl.b32             %slot, %slot, 2;\n"
            f"    add.u32             %r, %staged_keys, %slot;\n"
            f"    ld.shared.u32       %k{u}, [%r];\n"
            f"    add.u32             %r, %staged_rows, %slot;\n"
            f"    ld.shared.u32       %row{u}, [%r];\n"
            f"    and.pred            %load{u}, %in{u}, %lane_on;\n"
            f"    cvt.u64.u32         %t64, %row{u};\n"
            f"    mad.lo.u64          %src_addr{u}, %t64, %src_stride, %src;\n"
            f"    mad.lo.u64          %src_addr{u}, %col, {dtype.size}, %src_addr{u};\n"
            + load_src(dtype, vectorized, u, f"%load{u}", f"%src_addr{u}"))


def load_item(dtype, vectorized, u):
    """Item %item + u * step of the run starting at tile %a: a partial sum
    of group_segment_sum at level 1, a sum of the previous level above. Both
    arrays hold two rows per tile: item 0, the part that starts in tile a,
    at 2a + 1, and item t > 0, the part in tile a + t, at 2(a + t)."""
    return (f"    mad.lo.u64          %t, %step, {u}, %item;\n"
            f"    setp.lt.u64         %load{u}, %t, %item_end;\n"
            f"    and.pred            %load{u}, %load{u}, %lane_on;\n"
            "    add.u64             %slot, %a, %t;\n"
            "    shl.b64             %slot, %slot, 1;\n"
            "    setp.eq.u64         %p, %t, 0;\n"
            "    @%p add.u64         %slot, %slot, 1;\n"
            f"    mad.lo.u64          %item_addr{u}, %slot, %partial_stride, %items;\n"
            f"    mad.lo.u64          %item_addr{u}, %col, {acc_bytes(dtype)}, %item_addr{u};\n"
            + load_partial(dtype, vectorized, u, f"%load{u}", f"%item_addr{u}"))


def position_regs():
    n = ROWS_IN_FLIGHT
    return (f".reg .pred  %in<{n}>, %load<{n}>;\n"
            f"    .reg .b32   %k<{n}>, %row<{n}>;\n"
            f"    .reg .b64   %src_addr<{n}>;")


def load_positions(dtype, vectorized, op="sum"):
    return "\n".join(f"    add.u64             %jj, %j, {u};\n" + load_position(dtype, vectorized, u, op)
                      for u in range(ROWS_IN_FLIGHT))


def shift_keys():
    return "\n".join(f"    mov.u32             %k{u}, %k{u + 1};" for u in range(ROWS_IN_FLIGHT - 1))


def entry_limits(dtype, vectorized, op):
    """group_segment_sum's performance directives: a register cap for the
    weighted vec16 f32 variant, else none."""
    cap = WEIGHTED_VEC16_MAX_REGISTERS.get(dtype.name) if op == "weighted" and vectorized else None
    return f".maxnreg {cap}" if cap else ""
