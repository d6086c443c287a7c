"""PTX snippets of the red path (ptx/row_red.ptx.in): one lane's access of a
row, scalar or vector, per dtype."""


def scalar_add(dtype):
    return (f"{dtype.scalar_load:<20}%x, [%src_addr];\n"
            f"    {dtype.scalar_red} [%out_addr], %x;")


def vector_add(dtype, vector_bytes):
    """One vector_bytes load per lane and the widest red the ISA has for it."""
    words = vector_bytes // 4
    regs = "{" + ", ".join(f"%w{i}" for i in range(words)) + "}" if words > 1 else "%w0"
    vec = f".v{words}" if words > 1 else ""
    if dtype.name == "f32":
        return (f"ld.global.nc{vec}.f32 {regs}, [%src_addr];\n"
                f"    red.global.add{vec}.f32 [%out_addr], {regs};")
    if dtype.name in ("f16", "bf16"):
        # Packed pairs: .f16x2 / .bf16x2, in vectors of up to four pairs.
        return (f"ld.global.nc{vec}.b32 {regs}, [%src_addr];\n"
                f"    red.global.add.noftz{vec}.{dtype.name}x2 [%out_addr], {regs};")
    # No vector red exists for f64: two scalar reds behind one 16-byte load.
    return ("ld.global.nc.v2.f64 {%w0, %w1}, [%src_addr];\n"
            "    red.global.add.f64  [%out_addr], %w0;\n"
            "    red.global.add.f64  [%out_addr+8], %w1;")


# Access widths of the red path per dtype: its element, then the vectors the
# red instruction has (f64 has none: its 16-byte form is two scalar reds).
RED_VECTOR_BYTES = {"f32": (4, 8, 16), "f16": (2, 4, 8, 16), "bf16": (2, 4, 8, 16), "f64": (8, 16)}


def vector_regs(dtype):
    kind = {"f32": ".f32", "f16": ".b32", "bf16": ".b32", "f64": ".f64"}[dtype.name]
    return f".reg {kind}   %w<4>;"
