"""The launch gate ({{GATE}}, the first instructions of every row and
grouping kernel) and group_histogram's check of the index's order, which
sets the flag the gates read: the default call launches both the grouped
kernels and a streaming plan and lets the index decide on the device which
of them runs, with no host synchronisation. The host sets the flag to all
ones (in order) before the check; the check writes 0."""


def gate_prologue():
    """Leaves the kernel at once when the gate's flag does not hold
    gate_value; a gate of 0 always runs. Uniform over the grid, so the
    early exit precedes every barrier."""
    return (
        "// The launch gate: with a flag address, run only when the flag holds gate_value.\n"
        "    {\n"
        "    .reg .pred  %gate_closed;\n"
        "    .reg .b64   %gate_flag;\n"
        "    .reg .b32   %gate_seen, %gate_wanted;\n"
        "    ld.param.u64        %gate_flag, [gate];\n"
        "    setp.eq.u64         %gate_closed, %gate_flag, 0;\n"
        "    @%gate_closed bra.uni GATE_OPEN;\n"
        "    ld.global.u32       %gate_seen, [%gate_flag];\n"
        "    ld.param.u32        %gate_wanted, [gate_value];\n"
        "    setp.ne.u32         %gate_closed, %gate_seen, %gate_wanted;\n"
        "    @%gate_closed exit;\n"
        "GATE_OPEN:\n"
        "    }")


def order_check(rounds, load_key):
    """group_histogram's first pass: clears the sorted flag (u32, when given)
    if a key of the warp's 32 * rounds positions is below the key before it,
    or if all of them are one target (a hot target: grouping wins there).
    Needs the loaded rounds (%k r under %in r), %first (lane 0's: the warp's
    first position) and the index load of %key at %pos under %active."""
    per_round = []
    for r in range(rounds):
        previous = "%oc_before" if r == 0 else "%oc_wrap"
        wrap = ("" if r == 0 else
                f"    shfl.sync.idx.b32   %oc_wrap, %k{r - 1}, 31, 31, 0xFFFFFFFF;\n")
        per_round.append(
            f"    shfl.sync.up.b32    %oc_prev, %k{r}, 1, 0, 0xFFFFFFFF;\n"
            + wrap +
            f"    @%oc_lead mov.u32   %oc_prev, {previous};\n"
            f"    setp.gt.and.u32     %oc_p, %oc_prev, %k{r}, %in{r};\n"
            + ("    @%oc_lead and.pred  %oc_p, %oc_p, %oc_has_before;\n" if r == 0 else "") +
            "    or.pred             %oc_down, %oc_down, %oc_p;\n")
    last = rounds - 1
    return (
        "    {\n"
        "    .reg .pred  %oc_lead, %oc_has_before, %oc_down, %oc_p;\n"
        "    .reg .b32   %oc_before, %oc_prev, %oc_wrap, %oc_zero;\n"
        "    .reg .b64   %oc_flag;\n"
        "    ld.param.u64        %oc_flag, [sorted_flag];\n"
        "    // The key before the warp's first position, for lane 0's round 0.\n"
        "    setp.eq.u32         %oc_lead, %lane, 0;\n"
        "    sub.u64             %pos, %first, 1;\n"
        "    setp.lt.and.u64     %active, %pos, %count, %oc_lead;\n"
        f"    {load_key}\n"
        "    mov.pred            %oc_has_before, %active;\n"
        "    mov.u32             %oc_before, %key;\n"
        "    mov.u32             %oc_zero, 0;\n"
        "    setp.ne.u32         %oc_down, %oc_zero, 0;\n"
        + "".join(per_round) +
        "    // A warp of one target: lane 31's last key equals lane 0's first.\n"
        "    shfl.sync.idx.b32   %oc_wrap, %k0, 0, 31, 0xFFFFFFFF;\n"
        f"    setp.eq.and.u32     %oc_p, %oc_wrap, %k{last}, %in{last};\n"
        "    setp.eq.and.u32     %oc_p, %lane, 31, %oc_p;\n"
        "    or.pred             %oc_down, %oc_down, %oc_p;\n"
        "    vote.sync.any.pred  %oc_down, %oc_down, 0xFFFFFFFF;\n"
        "    setp.ne.and.u64     %oc_p, %oc_flag, 0, %oc_lead;\n"
        "    and.pred            %oc_p, %oc_p, %oc_down;\n"
        "    @%oc_p st.global.u32 [%oc_flag], %oc_zero;\n"
        "    }")
