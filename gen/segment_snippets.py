"""PTX snippets of the summing kernels (ptx/group_segment_sum.ptx.in,
ptx/group_combine.ptx.in): one lane's slice of a row, loaded from src or
from a partial sum, added into the accumulators (f32 for f32/f16/bf16, f64
for f64), and added once into out or stored as a partial sum.

A lane's slice is VE consecutive elements: one 16-byte vector ("vec16"
variants: rows, strides and pointers 16-byte aligned) or one element
("scalar" variants: any layout)."""

ROWS_IN_FLIGHT = 4   # rows each lane of group_segment_sum loads before adding them, in order
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


def slice_regs(dtype, vectorized):
    kind, n, _ = _words(dtype, vectorized)
    ve = lane_elems(dtype, vectorized)
    acc = acc_type(dtype)
    raw = ", ".join(f"%x{u}_{i}" for u in range(ROWS_IN_FLIGHT) for i in range(n))
    partial = ", ".join(f"%y{u}_{i}" for u in range(ROWS_IN_FLIGHT) for i in range(ve))
    accs = ", ".join(f"%acc_{i}" for i in range(ve))
    outs = ", ".join(f"%o_{i}" for i in range(n))
    return (f".reg {kind}  {raw};\n"
            f"    .reg .{acc}  {partial};\n"
            f"    .reg .{acc}  {accs}, %f, %g;\n"
            f"    .reg {kind}  {outs};\n"
            "    .reg .b32   %w, %w_hi;\n"
            "    .reg .b16   %h, %h_hi;")


def zero_acc(dtype, vectorized):
    acc = acc_type(dtype)
    zero = "0d0000000000000000" if acc == "f64" else "0f00000000"
    return "\n".join(f"    mov.{acc}         %acc_{i}, {zero};"
                     for i in range(lane_elems(dtype, vectorized)))


def load_src(dtype, vectorized, u, pred, addr):
    _, n, suffix = _words(dtype, vectorized)
    return f"    @{pred} ld.global.nc{suffix} {_regs(f'%x{u}', n)}, [{addr}];"


def shift_rows(dtype, vectorized):
    """Row u + 1's slice becomes row u's (the next one to add)."""
    kind, n, _ = _words(dtype, vectorized)
    mov = "mov.b16" if kind == ".b16" else f"mov{kind}" if kind != ".b32" else "mov.b32"
    return "\n".join(f"    {mov:<19} %x{u}_{i}, %x{u + 1}_{i};"
                     for u in range(ROWS_IN_FLIGHT - 1) for i in range(n))


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


def add_src(dtype, vectorized, u, pred):
    """acc += row u's slice, under pred."""
    name = dtype.name
    if name in ("f32", "f64"):
        _, n, _ = _words(dtype, vectorized)
        return "\n".join(f"    @{pred} add.{name}    %acc_{i}, %acc_{i}, %x{u}_{i};" for i in range(n))
    if not vectorized:
        cvt = "cvt.f32.bf16" if name == "bf16" else "cvt.f32.f16"
        return (f"    @{pred} {cvt} %f, %x{u}_0;\n"
                f"    @{pred} add.f32     %acc_0, %acc_0, %f;")
    lines = []
    for i in range(4):
        lines.append(_unpack(dtype, f"%x{u}_{i}", "%f", "%g"))
        lines.append(f"    @{pred} add.f32     %acc_{2 * i}, %acc_{2 * i}, %f;\n"
                     f"    @{pred} add.f32     %acc_{2 * i + 1}, %acc_{2 * i + 1}, %g;")
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


def add_partial(dtype, vectorized, u, pred):
    acc = acc_type(dtype)
    return "\n".join(f"    @{pred} add.{acc}    %acc_{i}, %acc_{i}, %y{u}_{i};"
                     for i in range(lane_elems(dtype, vectorized)))


def add_to_out(dtype, vectorized, pred, addr):
    """out slice += acc, rounded once to the element type. The caller owns
    the out row (no other lane or warp writes it), so this is a plain
    read-modify-write, not an atomic."""
    name = dtype.name
    kind, n, suffix = _words(dtype, vectorized)
    outs = _regs("%o", n)
    load = f"    @{pred} ld.global{suffix} {outs}, [{addr}];"
    store = f"    @{pred} st.global{suffix} [{addr}], {outs};"
    if name in ("f32", "f64"):
        adds = "\n".join(f"    @{pred} add.{name}    %o_{i}, %o_{i}, %acc_{i};" for i in range(n))
        return "\n".join([load, adds, store])
    if not vectorized:
        up = "cvt.f32.bf16" if name == "bf16" else "cvt.f32.f16"
        down = "cvt.rn.bf16.f32" if name == "bf16" else "cvt.rn.f16.f32"
        return "\n".join([load,
                          f"    @{pred} {up} %f, %o_0;",
                          f"    @{pred} add.f32     %f, %f, %acc_0;",
                          f"    @{pred} {down} %o_0, %f;",
                          store])
    lines = [load]
    pack = "cvt.rn.bf16x2.f32" if name == "bf16" else "cvt.rn.f16x2.f32"
    for i in range(4):
        lines.append(_unpack(dtype, f"%o_{i}", "%f", "%g"))
        lines.append(f"    add.f32             %f, %f, %acc_{2 * i};\n"
                     f"    add.f32             %g, %g, %acc_{2 * i + 1};\n"
                     # The first source goes to the upper half.
                     f"    {pack} %o_{i}, %g, %f;")
    lines.append(store)
    return "\n".join(lines)


def segment_substitutions(dtype, vectorized):
    ve = lane_elems(dtype, vectorized)
    return {
        "ELEM_BYTES": str(dtype.size),
        "LANE_ELEMS": str(ve),
        "ACC_BYTES": str(acc_bytes(dtype)),
        "SLICE_REGS": slice_regs(dtype, vectorized),
        "ZERO_ACC": zero_acc(dtype, vectorized),
        "SHIFT_ROWS": shift_rows(dtype, vectorized),
        "ADD_ROW0": add_src(dtype, vectorized, 0, "%lane_on"),
        "ADD_TO_OUT": add_to_out(dtype, vectorized, "%lane_on", "%out_addr"),
        "STORE_PARTIAL": store_partial(dtype, vectorized, "%lane_on", "%partial_addr"),
        **{f"ADD_PARTIAL{u}": add_partial(dtype, vectorized, u, f"%load{u}")
           for u in range(ITEMS_IN_FLIGHT)},
    }


STAGED_PER_LANE = SEGMENT_TILE_ROWS // 32  # positions of a tile each lane stages in shared memory


def stage_positions():
    """Each lane loads keys and rows of tile positions tb + 32 i + lane (all
    loads first, so they are in flight together) and stores them in the
    warp's staging area; positions past te stage as the sentinel."""
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
                     f"    add.u64             %addr, %rows, %t64;\n"
                     f"    @%staged_in{i} ld.global.nc.u32 %staged_r{i}, [%addr];")
    lines.append("    shl.b32             %slot, %lane, 2;")
    for i in range(n):
        lines.append(f"    add.u32             %r, %staged_keys, %slot;\n"
                     f"    st.shared.u32       [%r+{128 * i}], %staged_k{i};\n"
                     f"    add.u32             %r, %staged_rows, %slot;\n"
                     f"    st.shared.u32       [%r+{128 * i}], %staged_r{i};")
    return "\n".join(lines)


def staging_regs():
    n = STAGED_PER_LANE
    return f".reg .pred  %staged_in<{n}>;\n    .reg .b32   %staged_k<{n}>, %staged_r<{n}>;"


def prefetch_out(dtype):
    """The lane's slice of the out row of segment %cur into L2."""
    return ("    cvt.u64.u32         %t64, %cur;\n"
            "    mad.lo.u64          %out_addr, %t64, %out_stride, %out;\n"
            f"    mad.lo.u64          %out_addr, %col, {dtype.size}, %out_addr;\n"
            "    @%lane_on prefetch.global.L2 [%out_addr];")


def load_position(dtype, vectorized, u):
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


def load_positions(dtype, vectorized):
    return "\n".join(f"    add.u64             %jj, %j, {u};\n" + load_position(dtype, vectorized, u)
                      for u in range(ROWS_IN_FLIGHT))


def shift_keys():
    return "\n".join(f"    mov.u32             %k{u}, %k{u + 1};" for u in range(ROWS_IN_FLIGHT - 1))
