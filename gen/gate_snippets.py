"""The launch gate ({{GATE}}, the first instructions of every row and
grouping kernel) and group_histogram's check of the index's order, which
sets the flag the gates read: the default call launches both the grouped
kernels and a streaming plan and lets the index decide on the device which
of them runs, with no host synchronisation. The host sets the flag to all
ones (in order) before the check; the check writes 0."""


def gate_prologue():
    """Leaves the kernel at once when the gate's flag does not hold
    gate_value; a gate of 0 always runs. Uniform over the grid, so the
    early exit precedes every barrier. First, the programmatic launch's
    handshake (host/kernel_launch.hpp): let the stream's next kernel start
    its CTAs, then wait until the kernel before this one has finished and
    its writes show; both are no-ops for a plain launch."""
    return (
        "// Programmatic launch: the next kernel may start; nothing is read before the wait.\n"
        "    griddepcontrol.launch_dependents;\n"
        "    griddepcontrol.wait;\n"
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


# A warp's 256 sorted keys over fewer targets than this (runs averaging 8
# rows or more) group: grouping won at 64 rows a target and streaming at 4
# on the H200 (docs/tuning.md#sorted-index).
MIN_TARGETS_PER_WARP = 32


def order_init():
    """Thread 0 clears the CTA's out-of-order mark (before a bar.sync)."""
    return ("    setp.eq.u32         %p, %thread, 0;\n"
            "    @%p st.shared.u32   [order_broken], 0;")


def order_check(rounds, load_key):
    """group_histogram's first pass: marks the CTA out of order when a key
    of a warp's 32 * rounds positions is below the key before it, or when a
    full warp's keys span fewer than MIN_TARGETS_PER_WARP targets (long runs
    group faster). Needs the loaded rounds (%k r under %in r), %first (lane
    0's: the warp's first position) and the index load of %key at %pos
    under %active."""
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
            "    or.pred             %oc_down, %oc_down, %oc_p;\n"
            f"    setp.ne.and.u32     %oc_p, %oc_prev, %k{r}, %in{r};\n"
            "    vote.sync.ballot.b32 %oc_ballot, %oc_p, 0xFFFFFFFF;\n"
            "    popc.b32            %oc_ballot, %oc_ballot;\n"
            "    add.u32             %oc_targets, %oc_targets, %oc_ballot;\n")
    last = rounds - 1
    return (
        "    {\n"
        "    .reg .pred  %oc_lead, %oc_has_before, %oc_down, %oc_p;\n"
        "    .reg .b32   %oc_before, %oc_prev, %oc_wrap, %oc_ballot, %oc_targets, %oc_one;\n"
        "    // The key before the warp's first position, for lane 0's round 0.\n"
        "    setp.eq.u32         %oc_lead, %lane, 0;\n"
        "    sub.u64             %pos, %first, 1;\n"
        "    setp.lt.and.u64     %active, %pos, %count, %oc_lead;\n"
        f"    {load_key}\n"
        "    mov.pred            %oc_has_before, %active;\n"
        "    mov.u32             %oc_before, %key;\n"
        "    mov.u32             %oc_targets, 0;\n"
        "    setp.ne.u32         %oc_down, %oc_targets, 0;\n"
        + "".join(per_round) +
        f"    // A full warp (lane 31's last round in range) of long runs.\n"
        f"    vote.sync.all.pred  %oc_p, %in{last}, 0xFFFFFFFF;\n"
        f"    setp.lt.and.u32     %oc_p, %oc_targets, {MIN_TARGETS_PER_WARP}, %oc_p;\n"
        "    or.pred             %oc_down, %oc_down, %oc_p;\n"
        "    vote.sync.any.pred  %oc_down, %oc_down, 0xFFFFFFFF;\n"
        "    and.pred            %oc_p, %oc_down, %oc_lead;\n"
        "    mov.u32             %oc_one, 1;\n"
        "    @%oc_p st.shared.u32 [order_broken], %oc_one;\n"
        "    }")


def order_store():
    """After the CTA's last bar.sync: thread 0 of a CTA marked out of order
    clears the flag (u32 sorted_flag, when given), once per CTA and only
    while it is set, so that a random index costs few same-address stores."""
    return (
        "    {\n"
        "    .reg .pred  %os_p;\n"
        "    .reg .b32   %os_broken, %os_seen;\n"
        "    .reg .b64   %os_flag;\n"
        "    ld.param.u64        %os_flag, [sorted_flag];\n"
        "    setp.ne.u64         %os_p, %os_flag, 0;\n"
        "    setp.eq.and.u32     %os_p, %thread, 0, %os_p;\n"
        "    @%os_p ld.shared.u32 %os_broken, [order_broken];\n"
        "    @%os_p setp.ne.u32  %os_p, %os_broken, 0;\n"
        "    @%os_p ld.relaxed.gpu.global.u32 %os_seen, [%os_flag];\n"
        "    @%os_p setp.ne.u32  %os_p, %os_seen, 0;\n"
        "    mov.u32             %os_seen, 0;\n"
        "    @%os_p st.relaxed.gpu.global.u32 [%os_flag], %os_seen;\n"
        "    }")
