"""PTX snippets of the red path (ptx/row_red.ptx.in): one lane's access of a
row, scalar or vector, per dtype. The weighted variants scale every loaded
value by its row's weight before the red (and before the short-row loop
folds a row into the next one), with gen/weight_snippets.py."""

import weight_snippets as weights


def _scaled(dtype, vector_bytes, registers, weighted):
    """Weighted: lines scaling each of registers (one access's) by %wv."""
    if not weighted:
        return []
    packed = vector_bytes > dtype.size and dtype.size == 2
    return [line for reg in registers for line in weights.scale(dtype, reg, packed)]


def scalar_add(dtype, weighted=False):
    scale = _scaled(dtype, dtype.size, ["%x"], weighted)
    return "\n    ".join([f"{dtype.scalar_load:<20}%x, [%src_addr];"] + scale +
                         [f"{dtype.scalar_red} [%out_addr], %x;"])


def vector_add(dtype, vector_bytes, weighted=False):
    """One vector_bytes load per lane and the widest red the ISA has for it
    (the row loop's one-by-one vectors, registers %w0..)."""
    _, count, load, red = _plain_lane_access(dtype, vector_bytes)
    regs = _regs("w", count)
    scale = _scaled(dtype, vector_bytes, [f"%w{i}" for i in range(count)], weighted)
    return "\n    ".join([f"{load} {regs}, [%src_addr];"] + scale + [f"{red} [%out_addr], {regs};"])


def weight_regs(dtype, weighted):
    """The weighted variants' registers: one raw weight per row of a batch."""
    return weights.regs(dtype, RED_SHORT_ROWS_PER_BATCH) if weighted else ""


def weight_setup(weighted):
    return weights.setup() if weighted else ""


def row_weight(dtype, weighted):
    """The row loop, weighted: %wv := the weight of source row %row."""
    if not weighted:
        return ""
    return "\n    ".join(weights.load(dtype, "%wr0", "%row") + weights.value(dtype, "%wr0"))


# Access widths of the red path per dtype: its element, then the vectors the
# red instruction has. f64 has no vector red, and a 16-byte lane of two
# scalar reds ran 1.18-1.56 times slower than 8-byte lanes (each of its two
# instructions covers half of every 32-byte sector it touches, so L2 takes
# two atomic requests per sector; host/plan_red.cpp has the figures), so f64
# lanes are one element wide.
RED_VECTOR_BYTES = {"f32": (4, 8, 16), "f16": (2, 4, 8, 16), "bf16": (2, 4, 8, 16), "f64": (8,)}


def vector_regs(dtype):
    kind = {"f32": ".f32", "f16": ".b32", "bf16": ".b32", "f64": ".f64"}[dtype.name]
    return f".reg {kind}   %w<4>;"


# Rows each group of lanes has in flight in the red path's loop for short
# rows (all their indices and values are loaded before the first red): the
# host's kRedShortRowsPerBatch (gen/kernel_constants.py).
RED_SHORT_ROWS_PER_BATCH = 4
# Whole vectors a lane of the row loop loads before their reds: the host's
# kRedRowBatchVectors. One number with the above: the row loop reuses the
# short-row loop's registers.
RED_ROW_BATCH_VECTORS = RED_SHORT_ROWS_PER_BATCH


# Threads per CTA of every red launch: the host's kRedThreadsPerCta
# (gen/kernel_constants.py).
RED_THREADS_PER_CTA = 256


def cta_bounds(vector_bytes):
    """The entry's launch bounds. Unbounded, ptxas gave 16-byte lanes with
    64-bit indices 83 registers (the short-row loop keeps four rows of 16
    value registers live while it folds runs): room for two CTAs of 256
    threads per SM instead of three. With the block size known (.maxntid)
    it fits the registers to whole CTAs per SM instead, and every variant
    keeps the CTAs per SM it had before the fold: four (at most 64
    registers) for lanes of up to 4 bytes and for 8-byte lanes with 32-bit
    indices, three (at most 80) for 8-byte lanes with 64-bit indices (f64
    included) and for 16-byte lanes. 16-byte lanes also ask for three
    outright: with .maxntid alone the f32 variant with 32-bit indices
    spills 4 bytes at 80 registers, asked for three it takes 78 and none."""
    bounds = f".maxntid {RED_THREADS_PER_CTA}, 1, 1"
    return bounds + "\n.minnctapersm 3" if vector_bytes == 16 else bounds


def _hinted(instruction, family):
    """instruction with .L2::cache_hint following its family (ld.global.nc or
    red.global.add) and .noftz, where the ISA's grammar puts it: the
    short-row loop passes an L2 eviction policy."""
    assert instruction.startswith(family), instruction
    head = family + ".noftz" if instruction.startswith(family + ".noftz") else family
    return head + ".L2::cache_hint" + instruction[len(head):]


def _lane_access(dtype, vector_bytes):
    """(register type, registers per access, load, red) of one lane's access
    of vector_bytes, in the short-row loop's hinted forms (the load takes
    %stream_policy, the red %out_policy). The load keeps L2's own fetch
    size (docs/tuning.md#red-load-prefetch-size)."""
    kind, count, load, red = _plain_lane_access(dtype, vector_bytes)
    return kind, count, _hinted(load, "ld.global.nc"), _hinted(red, "red.global.add")


def _plain_lane_access(dtype, vector_bytes):
    """(register type, registers per access, load, red) of one lane's access
    of vector_bytes: one load and one red of all its registers."""
    if vector_bytes == dtype.size:
        return dtype.value_reg, 1, dtype.scalar_load, dtype.scalar_red
    assert dtype.name != "f64", "f64 has no vector red"
    words = vector_bytes // 4
    vec = f".v{words}" if words > 1 else ""
    if dtype.name == "f32":
        return ".f32", words, f"ld.global.nc{vec}.f32", f"red.global.add{vec}.f32"
    return ".b32", words, f"ld.global.nc{vec}.b32", f"red.global.add.noftz{vec}.{dtype.name}x2"


def _regs(prefix, count):
    """The registers %{prefix}0.. of one access, as a vector operand where
    there are several."""
    names = [f"%{prefix}{i}" for i in range(count)]
    return "{" + ", ".join(names) + "}" if len(names) > 1 else names[0]


def _lane_sum(dtype, vector_bytes):
    """The add of two lane values of vector_bytes, register by register (f16
    and bf16 pairs packed in .b32, as their vector reds take them)."""
    if dtype.name == "f32":
        return "add.rn.ftz.f32"  # as red.add.f32, which flushes subnormals
    if dtype.name == "f64":
        return "add.rn.f64"
    return f"add.rn.{dtype.name}" if vector_bytes == dtype.size else f"add.rn.{dtype.name}x2"


def inflight_regs(dtype, vector_bytes, index):
    kind, count, _, _ = _lane_access(dtype, vector_bytes)
    rows = range(RED_SHORT_ROWS_PER_BATCH)
    regs = [f".reg {kind}   {', '.join(f'%y{u}_{i}' for u in rows for i in range(count))};",
            f".reg .pred  %merge, {', '.join(f'%in{u}, %go{u}, %nin{u}' for u in rows)};",
            f".reg .b64   {', '.join(f'%tg{u}, %ra{u}, %ntg{u}, %na{u}' for u in rows)};"]
    if index.size == 4:
        regs.append(f".reg .b32   {', '.join(f'%ntgs{u}' for u in rows)};")
    return "\n    ".join(regs)


def _index_load(index, pred, row, u):
    """Row `row`'s index into %ntg{u}; an int32 index goes to %ntgs{u} and is
    widened by _index_widen where the prefetch needs it."""
    target = f"%ntg{u}" if index.size == 8 else f"%ntgs{u}"
    return [f"mad.lo.u64          %addr, {row}, {index.size}, %index;",
            f"@{pred} ld.global.nc.L2::cache_hint.s{index.size * 8} {target}, [%addr], %stream_policy;"]


def _index_widen(index, u):
    return [f"cvt.s64.s32         %ntg{u}, %ntgs{u};"] if index.size == 4 else []


def _make_current(u):
    """Row u of the next batch becomes row u of this one."""
    return [f"mov.u64             %tg{u}, %ntg{u};",
            f"mov.u64             %ra{u}, %na{u};",
            f"mov.pred            %in{u}, %nin{u};"]


def inflight_preload(index):
    """The first batch's rows and indices, before the loop; the loop's last
    step (inflight_reds) makes them current."""
    lines = []
    for u in range(RED_SHORT_ROWS_PER_BATCH):
        lines.append(f"add.u64             %na{u}, %na{u - 1}, 1;" if u else "mov.u64             %na0, %row;")
        lines.append(f"setp.lt.u64         %nin{u}, %na{u}, %rows;")
        lines += _index_load(index, f"%nin{u}", f"%na{u}", u)
    for u in range(RED_SHORT_ROWS_PER_BATCH):
        lines += _index_widen(index, u) + _make_current(u)
    return "\n    ".join(lines)


def inflight_loads(dtype, vector_bytes, index, weighted=False):
    """This batch's values (its indices are loaded), and weighted their
    rows' weights, then the next batch's indices, for the prefetch after
    this batch's reds."""
    _, count, load, _ = _lane_access(dtype, vector_bytes)
    lines = []
    for u in range(RED_SHORT_ROWS_PER_BATCH):
        lines.append(f"and.pred            %go{u}, %in{u}, %lane_on;")
        lines.append(f"mad.lo.u64          %src_addr, %ra{u}, %src_stride, %src;")
        lines.append("add.u64             %src_addr, %src_addr, %lane_off;")
        lines.append(f"@%go{u} {load} {_regs(f'y{u}_', count)}, [%src_addr], %stream_policy;")
        if weighted:
            lines += weights.load(dtype, f"%wr{u}", f"%ra{u}", f"%go{u}", "%stream_policy")
    for u in range(RED_SHORT_ROWS_PER_BATCH):
        lines.append(f"mad.lo.u64          %na{u}, %row_step, {RED_SHORT_ROWS_PER_BATCH}, %ra{u};")
        lines.append(f"setp.lt.u64         %nin{u}, %na{u}, %rows;")
        lines += _index_load(index, f"%nin{u}", f"%na{u}", u)
    return "\n    ".join(lines)


def inflight_reds(dtype, vector_bytes, index, weighted=False):
    """Each row's range check, error record and red, in row order; a row whose
    target is the next row's adds its values into that row's instead of
    sending its own red (the batch's rows are consecutive, so sorted or
    clustered targets send one red per run in the batch); then the next
    batch made current, with its out lines prefetched into L2 by the lanes
    at offsets 0, 128, ... of their row (%prefetch_lane), once per run."""
    _, count, _, red = _lane_access(dtype, vector_bytes)
    add = _lane_sum(dtype, vector_bytes)
    lines = []
    if weighted:
        # Each row scaled by its weight first: a row folded into the next
        # one then carries its own weight.
        for u in range(RED_SHORT_ROWS_PER_BATCH):
            lines += weights.value(dtype, f"%wr{u}")
            lines += _scaled(dtype, vector_bytes, [f"%y{u}_{i}" for i in range(count)], True)
    for u in range(RED_SHORT_ROWS_PER_BATCH):
        lines += [f"// Row {u}: unsigned compare, so negative indices fail it too.",
                  f"setp.lt.u64         %p, %tg{u}, %out_rows;",
                  f"not.pred            %bad, %p;",
                  f"and.pred            %bad, %bad, %in{u};",
                  f"and.pred            %bad, %bad, %lane0;",
                  f"add.u64             %t64, %row_base, %ra{u};",
                  f"@%bad red.global.min.u64 [%record], %t64;",
                  f"and.pred            %go{u}, %go{u}, %p;"]
        if u + 1 < RED_SHORT_ROWS_PER_BATCH:
            # Row u + 1 exists (in range of the launch) and has row u's
            # target: it carries row u's values (a bad target's rows send
            # nothing either way).
            lines += [f"setp.eq.and.u64     %merge, %tg{u + 1}, %tg{u}, %in{u + 1};"]
            lines += [f"@%merge {add:<15} %y{u + 1}_{i}, %y{u + 1}_{i}, %y{u}_{i};" for i in range(count)]
            lines += [f"@%merge mov.pred    %go{u}, 0;"]
        lines += [f"mad.lo.u64          %out_addr, %tg{u}, %out_stride, %out;",
                  "add.u64             %out_addr, %out_addr, %lane_off;"]
        lines.append(f"@%go{u} {red} [%out_addr], {_regs(f'y{u}_', count)}, %out_policy;")
    for u in range(RED_SHORT_ROWS_PER_BATCH):
        lines += _index_widen(index, u)
        lines += [f"// Next row {u}: its out line, unless the index is bad"
                  + (" or the row before has the same target." if u else "."),
                  f"setp.lt.u64         %p, %ntg{u}, %out_rows;",
                  f"and.pred            %p, %p, %nin{u};",
                  "and.pred            %p, %p, %prefetch_lane;"]
        if u:
            lines += [f"setp.ne.and.u64     %p, %ntg{u}, %ntg{u - 1}, %p;"]
        lines += [f"mad.lo.u64          %out_addr, %ntg{u}, %out_stride, %out;",
                  "add.u64             %out_addr, %out_addr, %lane_off;",
                  "@%p prefetch.global.L2 [%out_addr];"]
        lines += _make_current(u)
    return "\n    ".join(lines)


def row_vector_batch(dtype, vector_bytes, weighted=False):
    """The row loop's batch of RED_ROW_BATCH_VECTORS whole vectors of one row, at
    %off + u * %v_step_bytes: all loads, then all reds, so that a lane has
    that many loads in flight instead of one load-then-red at a time. With
    %prefetch_on, a lane whose out vector starts a 128-byte line prefetches
    the batch's lines into L2 before its loads: the same addresses its reds
    then write. The planner gives a row fewer than 256 lanes only when they
    have one vector each, so a batch runs with 256 lanes and a step of
    256 x vector bytes x CTAs along y, a multiple of 128 bytes: the other
    three vectors start lines too. The registers are the short-row loop's
    (the two loops never meet)."""
    _, count, load, red = _plain_lane_access(dtype, vector_bytes)
    lines = ["add.u64             %src_addr, %src_row, %off;",
             "add.u64             %out_addr, %out_row, %off;",
             "and.b64             %t64, %out_addr, 127;",
             "setp.eq.and.u64     %p, %t64, 0, %prefetch_on;"]
    for u in range(RED_ROW_BATCH_VECTORS):
        step = f"mad.lo.u64          %tg{u}, %v_step_bytes, {u}, %out_addr;"
        lines.append(step if u else "mov.u64             %tg0, %out_addr;")
        lines.append(f"@%p prefetch.global.L2 [%tg{u}];")
    for u in range(RED_ROW_BATCH_VECTORS):
        step = f"mad.lo.u64          %ra{u}, %v_step_bytes, {u}, %src_addr;"
        lines.append(step if u else "mov.u64             %ra0, %src_addr;")
        lines.append(f"{load} {_regs(f'y{u}_', count)}, [%ra{u}];")
    for u in range(RED_ROW_BATCH_VECTORS):
        lines += _scaled(dtype, vector_bytes, [f"%y{u}_{i}" for i in range(count)], weighted)
    for u in range(RED_ROW_BATCH_VECTORS):
        lines.append(f"{red} [%tg{u}], {_regs(f'y{u}_', count)};")
    return "\n    ".join(lines)
