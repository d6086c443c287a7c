"""PTX snippets of the grouping kernels (ptx/group_*.ptx.in): the block-wide
scan, where the keys of a radix pass come from, and the unrolled per-key
blocks of the stable scatter."""

# Keys per thread in group_histogram and group_scatter: 8 warps x 8 rounds
# x 32 lanes = 2048 keys per CTA (the host's kSortTileKeys, gen/kernel_constants.py).
# Measured on the H200 (7.77M keys, 21 bits, three passes): 0.42 ms against
# 0.47 ms for 16 rounds, whose register cap left two CTAs per SM.
SCATTER_ROUNDS = 8
SORT_TILE_KEYS = 8 * 32 * SCATTER_ROUNDS
# group_scatter's register cap: each round keeps a key, a value and a rank
# in registers until they are written; the cap sets how many CTAs fit on a
# multiprocessor (65536 registers / 256 threads / 80: three), and 8 rounds
# fit under it without spilling.
SCATTER_MAX_REGISTERS = 80


def tile_substitutions():
    """The tile shape as the radix templates spell it."""
    return {"TILE_KEYS": str(SORT_TILE_KEYS), "TILE_KEYS_LOG2": str(SORT_TILE_KEYS.bit_length() - 1),
            "WARP_KEYS": str(32 * SCATTER_ROUNDS), "ROUNDS": str(SCATTER_ROUNDS),
            "LAST_ROUND": str(SCATTER_ROUNDS - 1), "MAX_REGISTERS": str(SCATTER_MAX_REGISTERS)}


def block_exclusive_scan(value, prefix, total, warp_sums):
    """Exclusive scan of one u32 per thread over a 256-thread CTA: prefix
    gets the sum of the lower threads' values, total the CTA's sum. Needs
    %lane and %warp, and an 8-word shared array warp_sums; every thread of
    the CTA must execute it (it holds two bar.sync)."""
    steps = "".join(
        f"    shfl.sync.up.b32    %scan_y|%scan_p, %scan_x, {d}, 0, 0xFFFFFFFF;\n"
        f"    @%scan_p add.u32    %scan_x, %scan_x, %scan_y;\n" for d in (1, 2, 4, 8, 16))
    sums = "".join(
        f"    ld.shared.u32       %scan_y, [%scan_a+{4 * w}];\n"
        f"    add.u32             {total}, {total}, %scan_y;\n"
        f"    setp.gt.u32         %scan_p, %warp, {w};\n"
        f"    @%scan_p add.u32    {prefix}, {prefix}, %scan_y;\n" for w in range(8))
    return (
        "    {\n"
        "    .reg .pred  %scan_p;\n"
        "    .reg .b32   %scan_x, %scan_y, %scan_a;\n"
        f"    mov.u32             %scan_x, {value};\n"
        + steps +
        "    // %scan_x: inclusive scan within the warp; lane 31 holds the warp's sum.\n"
        f"    mov.u32             %scan_a, {warp_sums};\n"
        "    setp.eq.u32         %scan_p, %lane, 31;\n"
        "    mad.lo.u32          %scan_y, %warp, 4, %scan_a;\n"
        "    @%scan_p st.shared.u32 [%scan_y], %scan_x;\n"
        "    bar.sync            0;\n"
        f"    mov.u32             {total}, 0;\n"
        f"    sub.u32             {prefix}, %scan_x, {value};\n"
        + sums +
        "    // The warp sums may be overwritten by the next scan only once all are read.\n"
        "    bar.sync            0;\n"
        "    }")


# Where a pass's keys come from. The first pass reads the index and turns
# it into keys: a target outside [0, out_rows) (negative ones included,
# compared unsigned) becomes the key out_rows, which sorts after every valid
# one, and group_histogram records its position. Later passes read the keys
# the previous pass wrote. Each snippet loads the key of position %pos into
# %key under %active.
def key_source(index_type):
    """(doc, param comment, registers, load of %key, record of a bad one)."""
    if index_type is None:
        return ("Later passes: the keys the previous pass's group_scatter wrote.",
                "u32 keys of the previous pass", "",
                "@%active shl.b64    %addr, %pos, 2;\n"
                "    @%active add.u64    %addr, %addr, %source;\n"
                "    @%active ld.global.nc.u32 %key, [%addr];", "")
    load = ("ld.global.nc.s32 %index32, [%addr];\n"
            "    @%active cvt.s64.s32 %target, %index32;" if index_type.size == 4 else
            "ld.global.nc.s64 %target, [%addr];")
    return ("First pass: the index itself; an entry outside [0, out_rows), negative or "
            "too large,\n// becomes the key out_rows (sorted last, never summed) and its "
            "position is recorded.",
            f"{index_type.name} index (the first pass)",
            ".reg .b64   %target;\n    .reg .b32   %index32;" if index_type.size == 4 else
            ".reg .b64   %target;",
            f"@%active mul.lo.u64 %addr, %pos, {index_type.size};\n"
            "    @%active add.u64    %addr, %addr, %source;\n"
            f"    @%active {load}\n"
            "    setp.ge.and.u64     %bad, %target, %out_rows, %active;\n"
            "    @%bad mov.u64       %target, %out_rows;\n"
            "    @%active cvt.u32.u64 %key, %target;",
            "@%bad red.global.min.u64 [%record], %pos;")


def scatter_round_regs():
    rounds = SCATTER_ROUNDS
    return (f".reg .pred  %in<{rounds}>, %set;\n"
            f"    .reg .b32   %k<{rounds}>, %v<{rounds}>, %l<{rounds}>, %bit, %ballot;")


def load_rounds(load_key, record_bad, value_load):
    """All rounds' loads first, so that the SCATTER_ROUNDS loads of a thread are in
    flight together: round r loads the key at %first + 32 r into %k r
    (valid under %in r) and, when value_load is "index", the position as
    its value, when "keys", the previous pass's value into %v r."""
    blocks = []
    for r in range(SCATTER_ROUNDS):
        if value_load == "index":
            value = f"    cvt.u32.u64         %v{r}, %pos;\n"
        elif value_load == "keys":
            # Weighted: the values are (position, weight bits) pairs.
            value = (f"    shl.b64             %addr, %pos, 2;\n"
                     f"    @%weighted shl.b64  %addr, %pos, 3;\n"
                     f"    @%active add.u64    %addr, %addr, %values;\n"
                     f"    @%active ld.global.nc.u32 %v{r}, [%addr];\n")
        else:
            value = ""
        blocks.append(
            f"    add.u64             %pos, %first, {32 * r};\n"
            "    setp.lt.u64         %active, %pos, %count;\n"
            f"    {load_key}\n"
            + (f"    {record_bad}\n" if record_bad else "") +
            f"    mov.pred            %in{r}, %active;\n"
            f"    mov.u32             %k{r}, %key;\n"
            + value)
    return "".join(blocks)


def _match_round(r):
    """%peers: the active lanes whose digit equals this lane's, from one
    ballot per digit bit (match.any.sync would loop over the distinct
    digits of the warp); %leader: the lowest of them, if this lane is
    active; %n: how many they are."""
    bits = "".join(
        f"    and.b32             %bit, %digit, {1 << b};\n"
        "    setp.ne.u32         %set, %bit, 0;\n"
        "    vote.sync.ballot.b32 %ballot, %set, 0xFFFFFFFF;\n"
        "    @!%set not.b32      %ballot, %ballot;\n"
        "    and.b32             %peers, %peers, %ballot;\n" for b in range(8))
    return (f"    @%in{r} shr.b32     %digit, %k{r}, %shift;\n"
            f"    vote.sync.ballot.b32 %peers, %in{r}, 0xFFFFFFFF;\n"
            + bits +
            "    mov.u32             %before, %lanemask_lt;\n"
            "    and.b32             %before, %before, %peers;\n"
            f"    setp.eq.and.u32     %leader, %before, 0, %in{r};\n"
            "    popc.b32            %n, %peers;\n"
            "    and.b32             %digit, %digit, 255;\n")


def histogram_count_rounds():
    """Round r: the lanes sharing lane 0's digit are added by lane 0 at once,
    then those sharing the lowest remaining lane's digit by that lane, and
    every other lane adds itself. A hot digit (a hot target) costs one
    shared atomic in most rounds; scattered digits cost about half the
    instructions that finding each lane's equal lanes (_match_round) does."""
    return "".join(
        f"    // round {r}\n"
        f"    @%in{r} shr.b32     %digit, %k{r}, %shift;\n"
        "    and.b32             %digit, %digit, 255;\n"
        "    mad.lo.u32          %a, %digit, 4, %histogram;\n"
        "    shfl.sync.idx.b32   %bit, %digit, 0, 31, 0xFFFFFFFF;\n"
        f"    setp.eq.and.u32     %set, %digit, %bit, %in{r};\n"
        "    vote.sync.ballot.b32 %ballot, %set, 0xFFFFFFFF;\n"
        "    popc.b32            %n, %ballot;\n"
        f"    setp.eq.and.u32     %leader, %lane, 0, %in{r};\n"
        "    @%leader red.shared.add.u32 [%a], %n;\n"
        f"    setp.ne.and.u32     %p, %digit, %bit, %in{r};\n"
        "    vote.sync.ballot.b32 %peers, %p, 0xFFFFFFFF;\n"
        "    neg.s32             %before, %peers;\n"
        "    and.b32             %before, %before, %peers;\n"
        "    bfind.u32           %before, %before;\n"
        "    shfl.sync.idx.b32   %bit, %digit, %before, 31, 0xFFFFFFFF;\n"
        "    setp.eq.and.u32     %set, %digit, %bit, %p;\n"
        "    vote.sync.ballot.b32 %ballot, %set, 0xFFFFFFFF;\n"
        "    popc.b32            %n, %ballot;\n"
        "    setp.eq.and.u32     %leader, %lane, %before, %p;\n"
        "    @%leader red.shared.add.u32 [%a], %n;\n"
        "    setp.ne.and.u32     %p, %digit, %bit, %p;\n"
        "    @%p red.shared.add.u32 [%a], 1;\n" for r in range(SCATTER_ROUNDS))


def scatter_count_rounds():
    """Round r: rank the key among the equal digits before it in the warp,
    into %l r."""
    blocks = []
    for r in range(SCATTER_ROUNDS):
        blocks.append(
            f"    // round {r}\n" + _match_round(r) +
            "    popc.b32            %rank, %before;\n"
            "    mad.lo.u32          %a, %digit, 4, %my_counters;\n"
            "    mov.u32             %prior, 0;\n"
            f"    @%in{r} ld.shared.u32 %prior, [%a];\n"
            "    // Every equal lane has read the counter before the lowest moves it on.\n"
            "    bar.warp.sync       0xFFFFFFFF;\n"
            "    add.u32             %n, %n, %prior;\n"
            "    @%leader st.shared.u32 [%a], %n;\n"
            "    bar.warp.sync       0xFFFFFFFF;\n"
            f"    add.u32             %l{r}, %prior, %rank;\n")
    return "".join(blocks)


def scatter_write_rounds():
    """Round r's pair to its place in the tile's digit order (staged_keys,
    staged_values): the warp's first place for the digit + the rank."""
    blocks = []
    for r in range(SCATTER_ROUNDS):
        blocks.append(
            f"    @%in{r} shr.b32     %digit, %k{r}, %shift;\n"
            f"    @%in{r} and.b32     %digit, %digit, 255;\n"
            f"    @%in{r} mad.lo.u32  %a, %digit, 4, %my_counters;\n"
            f"    @%in{r} ld.shared.u32 %dst, [%a];\n"
            f"    @%in{r} add.u32     %dst, %dst, %l{r};\n"
            f"    @%in{r} mov.u32     %a, staged_keys;\n"
            f"    @%in{r} mad.lo.u32  %a, %dst, 4, %a;\n"
            f"    @%in{r} st.shared.u32 [%a], %k{r};\n"
            f"    @%in{r} mov.u32     %a, staged_values;\n"
            f"    @%in{r} mad.lo.u32  %a, %dst, 4, %a;\n"
            f"    @%in{r} st.shared.u32 [%a], %v{r};\n"
            f"    and.pred            %wp, %in{r}, %weighted;\n"
            f"    @%wp mov.u32        %a, staged_places;\n"
            f"    @%wp mad.lo.u32     %a, %local_input, 4, %a;\n"
            f"    @%wp st.shared.u32  [%a+{128 * r}], %dst;\n")
    return "".join(blocks)


def scatter_weight_regs():
    return f".reg .b32   %w<{SCATTER_ROUNDS}>;"


def scatter_prefetch_weights(value_load):
    """Weighted, first pass: thread t prefetches the 128-byte line at byte
    128 t of the tile's weights into L2, for the lines the tile has (an
    address inside them, never past the last weight). Later passes read the
    weights from the pairs whose positions the load rounds just read."""
    if value_load != "index":
        return ""
    return ("    @!%weighted bra.uni WEIGHTS_PREFETCHED;\n"
            "    sub.u64             %t64, %count, %tile_first;\n"
            f"    min.u64             %t64, %t64, {SORT_TILE_KEYS};\n"
            "    mul.lo.u64          %t64, %t64, %weight_bytes;\n"
            "    mul.wide.u32        %addr, %thread, 128;\n"
            "    setp.lt.u64         %wp, %addr, %t64;\n"
            "    mad.lo.u64          %t64, %tile_first, %weight_bytes, %weights_in;\n"
            "    add.u64             %addr, %addr, %t64;\n"
            "    @%wp prefetch.global.L2 [%addr];\n"
            "WEIGHTS_PREFETCHED:")


def _weight_load(value_load, r):
    """Input %r's weight bits into %w r: the first pass reads the caller's
    weights (a 2-byte one zero-extended), later passes the second word of
    the previous pass's pair."""
    if value_load == "index":
        return ("    mad.lo.u64          %addr, %t64, %weight_bytes, %weights_in;\n"
                f"    and.pred            %wp, %in{r}, %w_half;\n"
                f"    @%wp ld.global.nc.u16 %w{r}, [%addr];\n"
                f"    and.pred            %wp, %in{r}, %w_word;\n"
                f"    @%wp ld.global.nc.u32 %w{r}, [%addr];\n")
    return ("    shl.b64             %t64, %t64, 3;\n"
            "    add.u64             %addr, %t64, %values;\n"
            f"    @%in{r} ld.global.nc.u32 %w{r}, [%addr+4];\n")


def scatter_stage_weights(value_load):
    """Weighted: the tile's weights, read in input order (round r: input
    %thread + 256 r, every round's load in flight together), each stored at
    its input's place in the tile's digit order (staged_places) in
    warp_counters, which the write rounds no longer need. Unweighted CTAs
    skip it."""
    loads = "".join(
        f"    add.u32             %r, %thread, {256 * r};\n"
        f"    setp.lt.u32         %in{r}, %r, %tile_keys;\n"
        "    cvt.u64.u32         %t64, %r;\n"
        "    add.u64             %t64, %t64, %tile_first;\n"
        + _weight_load(value_load, r) for r in range(SCATTER_ROUNDS))
    stores = "".join(
        f"    @%in{r} ld.shared.u32 %dst, [%a+{1024 * r}];\n"
        f"    @%in{r} mad.lo.u32  %n, %dst, 4, %weight_area;\n"
        f"    @%in{r} st.shared.u32 [%n], %w{r};\n" for r in range(SCATTER_ROUNDS))
    return ("    @!%weighted bra.uni WEIGHTS_STAGED;\n" + loads +
            "    mov.u32             %a, staged_places;\n"
            "    mad.lo.u32          %a, %thread, 4, %a;\n"
            "    mov.u32             %weight_area, warp_counters;\n" + stores +
            "    bar.sync            0;\n"
            "WEIGHTS_STAGED:")
