"""PTX snippets of per-row weights (scatterptx_scatter_add_args.weights), for
the weighted variants of the red path (ptx/row_red.ptx.in) and of the
summing kernel (ptx/group_segment_sum.ptx.in).

Every weighted kernel takes two parameters: `weights` (the launch's row 0's
weight) and `weight_bytes`, 4 for f32 weights, else the size of the rows'
dtype for weights of that dtype. A row's weight is read as raw bits (raw
registers %wr<u>), so that the loads of several rows in flight are not held
up by a conversion, and turned into %wv, the weight in the rows' compute
type (f32 for f32/f16/bf16 rows, f64 for f64 rows), where it is used. f32
rows take f32 weights only.

The red path multiplies each value by %wv in f32 (f64) and rounds the
product once to the rows' dtype before its red, as torch's
index_add_(0, index, src * w[:, None]) rounds src * w; the summing kernel
fuses the product into its f32 (f64) sum instead (fma)."""


def compute_type(dtype):
    return "f64" if dtype.name == "f64" else "f32"


def _raw_type(dtype):
    return {"f32": ".f32", "f64": ".b64"}.get(dtype.name, ".b32")


def regs(dtype, rows):
    """The weight registers: raw bits of `rows` rows in flight, the value,
    and the scratch of conversions and scaling."""
    raws = ", ".join(f"%wr{u}" for u in range(rows))
    return (f".reg {_raw_type(dtype)}  {raws};\n"
            f"    .reg .{compute_type(dtype)}  %wv;\n"
            "    .reg .f32   %wvf, %sf, %sg;\n"
            "    .reg .b32   %wb32, %wlo, %st;\n"
            "    .reg .b16   %sh, %sh_hi;\n"
            "    .reg .b64   %weights, %weight_bytes, %w_addr;\n"
            "    .reg .pred  %w_f32, %w_native, %wl;")


def setup():
    """Reads the weight parameters: %w_f32 for f32 weights, %w_native for
    weights of the rows' dtype."""
    return ("    ld.param.u64        %weights, [weights];\n"
            "    ld.param.u32        %wb32, [weight_bytes];\n"
            "    cvt.u64.u32         %weight_bytes, %wb32;\n"
            "    setp.eq.u32         %w_f32, %wb32, 4;\n"
            "    not.pred            %w_native, %w_f32;")


def load(dtype, raw, row, pred=None, policy=""):
    """Lines: the weight of row `row` (a .b64 register, relative to the
    launch's row 0) into raw, under pred (None: always); with policy, as an
    L2 cache-hinted load with that eviction policy."""
    hint, operand = (".L2::cache_hint", f", {policy}") if policy else ("", "")
    lines = [f"mad.lo.u64          %w_addr, {row}, %weight_bytes, %weights;"]
    if dtype.name == "f32":
        guard = f"@{pred} " if pred else ""
        return lines + [f"{guard}ld.global.nc{hint}.f32 {raw}, [%w_addr]{operand};"]
    native = ".b64" if dtype.name == "f64" else ".u16"
    if pred is None:
        f32, own = "%w_f32", "%w_native"
    else:
        f32 = own = "%wl"
    return lines + ([f"and.pred            %wl, {pred}, %w_f32;"] if pred else []) + [
        f"@{f32} ld.global.nc{hint}.u32 {raw}, [%w_addr]{operand};"] + (
        [f"and.pred            %wl, {pred}, %w_native;"] if pred else []) + [
        f"@{own} ld.global.nc{hint}{native} {raw}, [%w_addr]{operand};"]


def value(dtype, raw):
    """Lines: %wv := the weight whose raw bits are in raw."""
    if dtype.name == "f32":
        return [f"mov.f32             %wv, {raw};"]
    if dtype.name == "f64":
        return [f"@%w_f32 cvt.u32.u64 %wlo, {raw};",
                "@%w_f32 mov.b32     %wvf, %wlo;",
                "@%w_f32 cvt.f64.f32 %wv, %wvf;",
                f"@%w_native mov.b64  %wv, {raw};"]
    cvt = "cvt.f32.bf16" if dtype.name == "bf16" else "cvt.f32.f16"
    return [f"@%w_f32 mov.b32     %wv, {raw};",
            f"@%w_native cvt.u16.u32 %sh, {raw};",
            f"@%w_native {cvt} %wv, %sh;"]


def scale(dtype, reg, packed):
    """Lines: the value register reg := reg * %wv, rounded once to the
    rows' dtype. packed: reg is a .b32 pair of f16/bf16 values (as the
    vector reds take them), else one element of the dtype."""
    name = dtype.name
    if name in ("f32", "f64"):
        return [f"mul.rn.{name}          {reg}, {reg}, %wv;"]
    up = "cvt.f32.bf16" if name == "bf16" else "cvt.f32.f16"
    if not packed:
        down = "cvt.rn.bf16.f32" if name == "bf16" else "cvt.rn.f16.f32"
        return [f"{up}        %sf, {reg};",
                "mul.rn.f32          %sf, %sf, %wv;",
                f"{down}     {reg}, %sf;"]
    if name == "bf16":
        # bf16 is the upper half of an f32: shifting is the conversion.
        unpack = [f"shl.b32             %st, {reg}, 16;",
                  "mov.b32             %sf, %st;",
                  f"and.b32             %st, {reg}, 0xFFFF0000;",
                  "mov.b32             %sg, %st;"]
    else:
        unpack = [f"mov.b32             {{%sh, %sh_hi}}, {reg};",
                  "cvt.f32.f16         %sf, %sh;",
                  "cvt.f32.f16         %sg, %sh_hi;"]
    pack = "cvt.rn.bf16x2.f32" if name == "bf16" else "cvt.rn.f16x2.f32"
    # The first source goes to the upper half.
    return unpack + ["mul.rn.f32          %sf, %sf, %wv;",
                     "mul.rn.f32          %sg, %sg, %wv;",
                     f"{pack}   {reg}, %sg, %sf;"]
