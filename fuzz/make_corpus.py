#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets: the bench's shapes, sizes at
the 2^31 and 2^32 boundaries, zero sizes, forced paths and schedules, in the
byte layouts fuzz_validate.cpp and fuzz_planners.cpp read (little-endian
fields from the front). Run from anywhere; rewrites fuzz/corpus/."""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {"f32": (0, 4), "f16": (1, 2), "bf16": (2, 2), "f64": (3, 8)}


def bench_shapes():
    """(name, src_rows, out_rows, cols, dtype) of bench/scenarios.tsv."""
    path = os.path.join(HERE, "..", "bench", "scenarios.tsv")
    with open(path) as lines:
        for line in lines:
            if line.startswith("#") or not line.strip():
                continue
            f = line.rstrip("\n").split("\t")
            yield f[0], int(f[2]), int(f[3]), int(f[4]), f[5]


def boundary_shapes():
    big = 1 << 31
    yield "empty-src", 0, 100, 128, "f32"
    yield "empty-cols", 1000, 100, 0, "f16"
    yield "empty-all", 0, 0, 0, "f64"
    yield "rows-2p31-minus-1", big - 1, 4096, 4, "f32"
    yield "rows-2p31-plus-5", big + 5, 1000, 8, "bf16"
    yield "rows-2p32", 1 << 32, 65536, 4, "f32"
    yield "targets-2p32-minus-2", 70000, (1 << 32) - 2, 64, "f32"
    yield "cols-2p31", 16, 16, big, "f16"
    yield "few-targets-4096", 4000000, 4096, 256, "f32"
    yield "few-targets-4097", 4000000, 4097, 256, "f32"
    yield "one-col-f16", 65536, 100, 1, "f16"
    yield "odd-cols-f64", 100000, 1000, 127, "f64"


def validate_seed(src_rows, out_rows, cols, dtype, *, path=0, grouping=0, schedule=None, mode=0,
                  deterministic=0, offset=0, options=True, index_type=1, index_check=0):
    code, elem = DTYPES[dtype]
    stride = (cols * elem + 15) // 16 * 16 // elem if cols else 0
    out = (1 << 40) + offset * elem
    src = out + ((max(out_rows, 1) * stride * elem + 4095) // 4096 + 1) * 4096
    index = src + ((max(src_rows, 1) * stride * elem + 4095) // 4096 + 1) * 4096
    flags = (1 if schedule else 0) | (2 if options else 0)
    data = struct.pack("<B5q5i3Q", flags, out_rows, stride, src_rows, stride, cols, code, index_type,
                       index_check, path, grouping, out, src, index)
    data += struct.pack("<4I", *(schedule or (0, 0, 0, 0)))
    data += struct.pack("<iiI", mode, deterministic, 0)
    data += struct.pack("<B", 0)  # an H200's limits
    data += struct.pack("<QQ", 1 << 45, 1 << 40)
    return data


def planner_size(value, mask):
    return struct.pack("<BQ", 3, value & mask)


def planners_seed(src_rows, out_rows, cols, dtype, *, path=0, grouping=0, schedule=None, mode=0, padded=True,
                  options=True):
    flags = (4 | 16 if padded else 0) | (64 if schedule else 0) | (128 if options else 0)
    data = struct.pack("<BBBB", flags, DTYPES[dtype][0], path, grouping)
    data += planner_size(cols, (1 << 36) - 1) + planner_size(src_rows, (1 << 40) - 1)
    data += planner_size(out_rows, (1 << 40) - 1)
    data += struct.pack("<BBIBBB", 0, 0, 0, 0, 0, 0)
    s = schedule or (0, 0, 0, 0)
    data += struct.pack("<IBBB", s[0], s[1], s[2], s[3])
    data += struct.pack("<BBB", mode, 0, 0)
    data += struct.pack("<B", 0)  # an H200's limits
    return data


def variants():
    """(suffix, keyword arguments) applied to every shape."""
    yield "", {}
    yield "-red", {"path": 2}
    yield "-tma", {"path": 1}
    yield "-private", {"path": 3}
    yield "-segmented", {"mode": 2}
    yield "-grouping-off", {"grouping": 1}


def main():
    corpus = os.path.join(HERE, "corpus")
    shutil.rmtree(corpus, ignore_errors=True)
    for target in ("fuzz_validate", "fuzz_planners"):
        os.makedirs(os.path.join(corpus, target))
    shapes = list(bench_shapes())[::3] + list(boundary_shapes())
    for name, src_rows, out_rows, cols, dtype in shapes:
        for suffix, kwargs in variants():
            if suffix not in ("", "-red", "-segmented") and not name.startswith(("few", "rows", "empty")):
                continue
            with open(os.path.join(corpus, "fuzz_validate", name + suffix), "wb") as f:
                f.write(validate_seed(src_rows, out_rows, cols, dtype, **kwargs))
            with open(os.path.join(corpus, "fuzz_planners", name + suffix), "wb") as f:
                f.write(planners_seed(src_rows, out_rows, cols, dtype, **kwargs))
    extra = [("schedule-chunk-4096", dict(schedule=(4096, 4, 4, 2))),
             ("deterministic", dict(deterministic=1)),
             ("offset-pointers", dict(offset=1)),
             ("null-options", dict(options=False)),
             ("int32-checked", dict(index_type=0, index_check=1)),
             ("bad-enums", dict(path=7, grouping=-1, mode=3))]
    for name, kwargs in extra:
        with open(os.path.join(corpus, "fuzz_validate", name), "wb") as f:
            f.write(validate_seed(65536, 1000, 256, "f32", **kwargs))


if __name__ == "__main__":
    main()
