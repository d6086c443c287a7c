"""A Mixtral 8x7B mixture-of-experts layer, forward and backward, with and
without scatterptx.torch.enable(), in one process.

The layer is Hugging Face transformers' MixtralSparseMoeBlock as of its 4.4x
releases (Apache-2.0), retyped below so that the example needs torch alone:
a linear router, softmax, top-2, and per expert a gather of its tokens'
rows (``hidden_states[None, top_x]``), its SwiGLU MLP scaled by the routing
weight, and the combine ``final_hidden_states.index_add_(0, top_x, ...)``.
Dimensions are Mixtral 8x7B's: hidden 4096, intermediate 14336, 8 experts,
top-2. The switch routes the combine (index_add_) and the gradient of the
gather (index_put_ with accumulate, one index); the gradient of the routing
weights' gather (two index tensors) stays torch's.

A step is forward, loss (mean square of the output), backward; the same
weights and input serve both modes, which take turns step by step.
Reported: median step times and their ratio, scatter kernel time per step
and share (torch.profiler, every kernel inside a scatter op), the switch's
loss and gradients against torch's (f32), and in bf16 (weights and
activations) the output's error against the combine done in float64 from
the same bf16 expert outputs, for each mode.

    python examples/dropin/moe.py --out results/dropin   # H200: about 1 minute
    python examples/dropin/moe.py --device cpu --tokens 256 --hidden 64 --ffn 128 --steps 3 --warmup 1 \\
        --out /tmp/moe   # a smoke test; the switch routes CUDA tensors only

Writes OUT/moe.md and OUT/moe.json.
"""

import argparse
import copy
import sys

import torch
import torch.nn.functional as F
from torch import nn

import measure
from measure import MODES, SCATTERPTX, TORCH


class MixtralBlockSparseTop2MLP(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.ffn_dim = intermediate_size
        self.hidden_dim = hidden_size
        self.w1 = nn.Linear(self.hidden_dim, self.ffn_dim, bias=False)
        self.w2 = nn.Linear(self.ffn_dim, self.hidden_dim, bias=False)
        self.w3 = nn.Linear(self.hidden_dim, self.ffn_dim, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, hidden_states):
        current_hidden_states = self.act_fn(self.w1(hidden_states)) * self.w3(hidden_states)
        current_hidden_states = self.w2(current_hidden_states)
        return current_hidden_states


class MixtralSparseMoeBlock(nn.Module):
    def __init__(self, hidden_size, intermediate_size, num_local_experts, num_experts_per_tok):
        super().__init__()
        self.hidden_dim = hidden_size
        self.ffn_dim = intermediate_size
        self.num_experts = num_local_experts
        self.top_k = num_experts_per_tok
        self.gate = nn.Linear(self.hidden_dim, self.num_experts, bias=False)
        self.experts = nn.ModuleList(
            [MixtralBlockSparseTop2MLP(hidden_size, intermediate_size) for _ in range(self.num_experts)])

    def forward(self, hidden_states):
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        # router_logits: (batch * sequence_length, n_experts)
        router_logits = self.gate(hidden_states)

        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        # we cast back to the input dtype
        routing_weights = routing_weights.to(hidden_states.dtype)

        final_hidden_states = torch.zeros(
            (batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype, device=hidden_states.device)

        # One hot encode the selected experts to create an expert mask
        # this will be used to easily index which expert is going to be sollicitated
        expert_mask = torch.nn.functional.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)

        # Loop over all available experts in the model and perform the computation on each expert
        for expert_idx in range(self.num_experts):
            expert_layer = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx])

            # Index the correct hidden states and compute the expert hidden state for
            # the current expert. We need to make sure to multiply the output hidden
            # states by `routing_weights` on the corresponding tokens (top-1 and top-2)
            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
            current_hidden_states = expert_layer(current_state) * routing_weights[top_x, idx, None]

            # However `index_add_` only support torch tensors for indexing so we'll use
            # the `top_x` tensor here.
            final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))
        final_hidden_states = final_hidden_states.reshape(batch_size, sequence_length, hidden_dim)
        return final_hidden_states, router_logits


def combine_reference(block, x):
    """The combine's float64 reference: the block's forward with hooks on its
    router and experts, then its routing recomputed from the router's logits
    (the block's own ops, so the same choices) and each expert's bf16 output,
    scaled as the block scales it, added up in float64 by torch. Another
    layer in float64 would route near-tied tokens differently and measure
    that instead of the combine."""
    logits, expert_outputs = [], {}
    hooks = [block.gate.register_forward_hook(lambda module, inputs, output: logits.append(output))]
    for number, expert in enumerate(block.experts):
        hooks.append(expert.register_forward_hook(
            lambda module, inputs, output, number=number: expert_outputs.__setitem__(number, output)))
    try:
        with torch.no_grad(), measure.switch(TORCH):
            block(x)
            routing_weights = F.softmax(logits[0], dim=1, dtype=torch.float)
            routing_weights, selected_experts = torch.topk(routing_weights, block.top_k, dim=-1)
            routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
            routing_weights = routing_weights.to(x.dtype)
            expert_mask = F.one_hot(selected_experts, num_classes=block.num_experts).permute(2, 1, 0)
            reference = torch.zeros(x.shape[0] * x.shape[1], x.shape[2], dtype=torch.float64, device=x.device)
            for number in range(block.num_experts):
                idx, top_x = torch.where(expert_mask[number])
                contribution = expert_outputs[number] * routing_weights[top_x, idx, None]
                reference.index_add_(0, top_x, contribution.double())
    finally:
        for hook in hooks:
            hook.remove()
    return reference.view(x.shape)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for moe.md and moe.json")
    parser.add_argument("--tokens", type=int, default=8192, help="batch x sequence (e.g. 2 x 4096)")
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--ffn", type=int, default=14336)
    parser.add_argument("--experts", type=int, default=8)
    parser.add_argument("--top-k", type=int, default=2)
    parser.add_argument("--steps", type=int, default=12, help="steps of each mode, warmup included")
    parser.add_argument("--warmup", type=int, default=2, help="first steps left out of the timing")
    parser.add_argument("--profile-steps", type=int, default=2)
    parser.add_argument("--precisions", nargs="+", default=["f32", "bf16"], choices=["f32", "bf16"])
    parser.add_argument("--rtol", type=float, default=1e-5, help="f32: loss and gradients agree within this")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.steps - args.warmup < 10 and args.device != "cpu":
        parser.error("time at least 10 steps: --steps - --warmup >= 10")
    device = torch.device(args.device)
    measure.require_device(device, "moe.py")

    torch.manual_seed(args.seed)
    with device:  # 1.4B parameters: initialised where they live
        layer = MixtralSparseMoeBlock(args.hidden, args.ffn, args.experts, args.top_k)
    hidden_states = torch.randn(1, args.tokens, args.hidden, device=device)
    shape = {"tokens": args.tokens, "hidden": args.hidden, "intermediate": args.ffn, "experts": args.experts,
             "top_k": args.top_k, "parameters": sum(p.numel() for p in layer.parameters())}
    figures = {"environment": measure.environment(device), "layer": shape, "args": vars(args)}
    sections = []
    for precision in args.precisions:
        dtype = torch.float32 if precision == "f32" else torch.bfloat16
        layer.zero_grad(set_to_none=True)
        block = layer if dtype == torch.float32 else copy.deepcopy(layer).to(dtype)
        x = hidden_states.detach().clone().to(dtype).requires_grad_()

        def step(mode):
            block.zero_grad(set_to_none=True)
            x.grad = None
            output, _ = block(x)
            loss = output.float().pow(2).mean()
            loss.backward()
            return loss.detach()

        gradients, losses, outputs = {}, {}, {}
        for mode in MODES:
            with measure.switch(mode):
                losses[mode] = step(mode)
                gradients[mode] = [x.grad.clone()] + [torch.zeros_like(p) if p.grad is None else p.grad.clone()
                                                      for p in block.parameters()]
                with torch.no_grad():
                    outputs[mode] = block(x)[0]
        loss_difference = measure.relative_difference(losses[SCATTERPTX], losses[TORCH])
        gradient_difference = max(measure.relative_difference(a, b)
                                  for a, b in zip(gradients[SCATTERPTX], gradients[TORCH]))
        outputs_equal = bool(torch.equal(outputs[SCATTERPTX], outputs[TORCH]))
        del gradients

        print(f"{precision}: {args.steps} steps of each mode, alternating", flush=True)
        seconds, _ = measure.alternate(step, args.steps - args.warmup, args.warmup, device)
        times = measure.step_times(seconds)
        kernels = measure.scatter_figures(step, args.profile_steps, device,
                                          {mode: times[mode]["median_ms"] for mode in MODES})
        result = {"step_times": times, "scatter_kernels": kernels, "loss_relative_difference": loss_difference,
                  "gradients_max_relative_difference": gradient_difference, "outputs_bitwise_equal": outputs_equal}
        if dtype == torch.float32:
            result["agrees_within_rtol"] = loss_difference <= args.rtol and gradient_difference <= args.rtol
        else:
            reference = combine_reference(block, x.detach())
            result["bf16_combine_error_against_float64"] = {
                mode: measure.error_against(reference, outputs[mode]) for mode in MODES}
            del reference
        figures[precision] = result
        print(f"{precision}: {times[TORCH]['median_ms']:.1f} ms with torch, {times[SCATTERPTX]['median_ms']:.1f} ms "
              f"with the switch ({times['speedup']:.2f}x); scatter kernels "
              f"{kernels[TORCH]['scatter_us_per_step']:.0f} -> {kernels[SCATTERPTX]['scatter_us_per_step']:.0f} "
              f"us/step ({measure.ratio(kernels['scatter_time_ratio'])} lower); loss within {loss_difference:.2g}, "
              f"gradients within {gradient_difference:.2g}", flush=True)
        sections.append((precision, times, kernels, result))
        del block, x, outputs

    figures["routes_seen"] = measure.spt.route_counts()
    for path in measure.write_report(args.out, "moe", figures, report(figures, sections, args)):
        print(f"wrote {path}")
    return measure.agreement_status("moe.py", figures, args.precisions)


def report(figures, sections, args):
    layer = figures["layer"]
    env = figures["environment"]
    lines = measure.report_header("Mixtral MoE layer with and without scatterptx.torch.enable()", env, args.device)
    lines += [f"MixtralSparseMoeBlock (transformers 4.4x code): {layer['tokens']:,} tokens, hidden {layer['hidden']}, "
              f"intermediate {layer['intermediate']}, {layer['experts']} experts, top-{layer['top_k']} "
              f"({layer['parameters'] / 1e9:.2f}B parameters). Step: forward, mean-square loss, backward; the modes "
              f"take turns; medians of {args.steps - args.warmup} steps after {args.warmup}; scatter kernels: every "
              f"kernel inside a scatter op (torch.profiler, {args.profile_steps} steps). bf16: weights and "
              f"activations in bf16.", "",
              measure.timing_table(sections), ""]
    for precision, times, kernels, result in sections:
        lines += [f"## {precision}", "",
                  f"- step: {times['speedup']:.2f}x the speed of torch's; scatter kernel time "
                  f"{measure.ratio(kernels['scatter_time_ratio'])} lower",
                  f"- the switch's loss against torch's: relative difference {result['loss_relative_difference']:.3g}; "
                  f"gradients (input and every weight): {result['gradients_max_relative_difference']:.3g}"
                  + (f" (within {args.rtol}: {'yes' if result['agrees_within_rtol'] else 'NO'})"
                     if "agrees_within_rtol" in result else "")
                  + f"; outputs bitwise equal: {'yes' if result['outputs_bitwise_equal'] else 'no'}"]
        if "bf16_combine_error_against_float64" in result:
            lines += ["- bf16 output against the combine in float64 (of the same bf16 expert outputs): "
                      + "; ".join(f"{mode} {e['normwise_relative']:.3g} normwise, {e['max_abs_over_max_ref']:.3g} "
                                  f"max-abs" for mode, e in result["bf16_combine_error_against_float64"].items())]
        lines += measure.scatter_kernel_tables(kernels, digits=1)
    lines += measure.routes_seen(figures)
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
