"""The scatterptx operators' schemas in torch.library, and their handles.

The one Library the package registers on: the kernels by device
(_torch_kernels), the fake kernels (_torch_fake) and the autograd kernels
(_torch_autograd).
"""

import torch

_lib = torch.library.Library("scatterptx", "DEF")
_TAGS = (torch.Tag.pt2_compliant_tag,)
_lib.define("index_add(Tensor out, Tensor index, Tensor source) -> Tensor", tags=_TAGS)
_lib.define("index_add_(Tensor(a!) out, Tensor index, Tensor source) -> ()", tags=_TAGS)
_lib.define("weighted_index_add(Tensor out, Tensor index, Tensor source, Tensor weights) -> Tensor", tags=_TAGS)
_lib.define("weighted_index_add_(Tensor(a!) out, Tensor index, Tensor source, Tensor weights) -> ()", tags=_TAGS)
_lib.define("scatter_reduce(Tensor out, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor",
            tags=_TAGS)
_lib.define("scatter_reduce_(Tensor(a!) out, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> ()",
            tags=_TAGS)
_index_add_op = torch.ops.scatterptx.index_add.default
_index_add__op = torch.ops.scatterptx.index_add_.default
_weighted_index_add_op = torch.ops.scatterptx.weighted_index_add.default
_weighted_index_add__op = torch.ops.scatterptx.weighted_index_add_.default
_scatter_reduce_op = torch.ops.scatterptx.scatter_reduce.default
_scatter_reduce__op = torch.ops.scatterptx.scatter_reduce_.default
