"""Activations of a gated-MLP, grouped-query model (Llama, Qwen, Gemma) in the memory plan:
with intermediate_size and kv_heads given, a layer keeps Q and the projection's input (2 + 2),
K and V (2 x kv/a each), the gated MLP's four I-wide tensors (8I/h) and, untouched by tensor
parallelism, its norms' and products' inputs (8); the GPT's Korthikanti figure otherwise."""

from __future__ import annotations

import pytest

from vertexplan import memory

S, H, A, KV, MLP, L = 4096, 4096, 32, 8, 14336, 32  # Llama-3-8B at a 4,096-token context


def activations(tensor: int = 1, checkpointing: str = "none", gated: bool = True) -> float:
    model = memory.ModelShape(
        parameters=8_030_261_248, dtype="bf16", hidden_size=H, layers=L, sequence_length=S,
        attention_heads=A, activation_checkpointing=checkpointing,
        **({"intermediate_size": MLP, "kv_heads": KV} if gated else {}))
    layout = memory.Layout(strategy="fsdp", devices_per_node=8, nodes=1, tensor_parallel=tensor)
    return memory.plan(model, layout).activations_gib * memory.GIB


def test_a_gated_mlp_with_grouped_query_attention_keeps_its_own_tensors() -> None:
    scores = 5 * A * S / H
    split = 4 + 4 * KV / A + 8 * MLP / H
    assert activations() == pytest.approx(S * H * (8 + split + scores) * L)
    assert activations(tensor=2) == pytest.approx(S * H * (8 + (split + scores) / 2) * L)
    assert activations(checkpointing="selective") == pytest.approx(S * H * (8 + split) * L)


def test_without_them_the_gpt_figure_stands() -> None:
    assert activations(gated=False) == pytest.approx(S * H * (34 + 5 * A * S / H) * L)
