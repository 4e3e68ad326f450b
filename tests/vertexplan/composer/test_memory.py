"""The memory plan: DeepSpeed's own estimators agree with it, and its parts add up."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from vertexplan import checkpointing, memory, memory_text

GIB = 2**30
# 5 model sizes (total, largest layer) x 3 device layouts (GPUs per node, nodes).
SIZES = [
    (1_300_000_000, 103_000_000),
    (2_350_000_000, 160_000_000),
    (6_700_000_000, 131_000_000),
    (13_000_000_000, 164_000_000),
    (70_000_000_000, 262_000_000),
]
LAYOUTS = [(8, 1), (8, 2), (8, 4)]
_ROW = re.compile(r"^\s*([\d.]+)GB \|\s*([\d.]+)GB \| (.*)$")


def _printed(function, *args) -> dict[str, tuple[float, float]]:
    """The table an ..._all_cold estimator prints: options -> (per CPU GB, per GPU GB)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        function(*args)
    rows = {}
    for line in out.getvalue().splitlines():
        match = _ROW.match(line)
        if match:
            # "offload_optimizer=OffloadDeviceEnum.cpu" on Pythons whose enums print so
            options = match.group(3).replace(" ", "").replace("OffloadDeviceEnum.", "")
            rows[options] = (float(match.group(1)),
                                                       float(match.group(2)))
    return rows


def _plan(strategy: str, total: int, layer: int, gpus: int, nodes: int,
          **options: bool) -> memory.MemoryPlan:
    return memory.plan(
        memory.ModelShape(parameters=total, dtype="bf16", largest_layer_parameters=layer),
        memory.Layout(strategy=strategy, devices_per_node=gpus, nodes=nodes, **options))


def _close(mine: float, theirs_printed: float, theirs_exact: float) -> None:
    # Their exact figure to 1%, and the rounded one they print to its 0.01 GB rounding.
    assert mine == pytest.approx(theirs_exact, rel=0.01)
    assert mine == pytest.approx(theirs_printed, rel=0.01, abs=0.006)


@pytest.mark.trainers
@pytest.mark.parametrize(("gpus", "nodes"), LAYOUTS)
@pytest.mark.parametrize(("total", "layer"), SIZES)
def test_zero2_and_zero3_agree_with_deepspeeds_estimators(total: int, layer: int, gpus: int,
                                                          nodes: int) -> None:
    # Imported here, not with the module: DeepSpeed takes seconds to import.
    from deepspeed.runtime.zero import stage3 as zero3
    from deepspeed.runtime.zero import stage_1_and_2 as zero2

    printed = _printed(zero2.estimate_zero2_model_states_mem_needs_all_cold, total, gpus, nodes)
    for offload, options in ((True, "offload_optimizer=cpu"), (False, "offload_optimizer=none")):
        cpu, gpu = zero2.estimate_zero2_model_states_mem_needs(
            total, gpus, nodes, cpu_offload=offload)
        plan = _plan("zero2", total, layer, gpus, nodes, offload_optimizer=offload)
        _close(plan.model_states_gib, printed[options][1], gpu / GIB)
        _close(plan.host_per_node_gib, printed[options][0], cpu / GIB)

    printed = _printed(zero3.estimate_zero3_model_states_mem_needs_all_cold, total, layer, gpus,
                       nodes)
    for opt, params in ((True, True), (True, False), (False, False)):
        cpu, gpu, _ = zero3.estimate_zero3_model_states_mem_needs(
            total, layer, gpus, nodes, cpu_offload=opt, cpu_offload_params=params,
            zero_init=True)
        key = (f"offload_param={'cpu' if params else 'none'},"
               f"offload_optimizer={'cpu' if opt else 'none'},zero_init=1")
        plan = _plan("zero3", total, layer, gpus, nodes, offload_optimizer=opt,
                     offload_params=params)
        _close(plan.model_states_gib, printed[key][1], gpu / GIB)
        _close(plan.host_per_node_gib, printed[key][0], cpu / GIB)


def test_the_parts_add_up_and_sharding_divides_the_states() -> None:
    model = memory.ModelShape(parameters=7_000_000_000, dtype="bf16")
    ddp = memory.plan(model, memory.Layout("ddp", 8, 1))
    zero2 = memory.plan(model, memory.Layout("zero2", 8, 1))
    zero3 = memory.plan(model, memory.Layout("zero3", 8, 1))
    fsdp = memory.plan(model, memory.Layout("fsdp", 8, 1))
    # DDP: fp32 weights, gradients and Adam's moments (16 bytes a parameter), and the
    # reducer's buckets, a second copy of the gradients (4).
    assert ddp.model_states_gib == pytest.approx(20 * 7e9 / GIB)
    assert "gradient buckets" in " ".join(ddp.notes)
    assert ddp.total_gib == pytest.approx(ddp.model_states_gib + ddp.reserve_gib)
    assert ddp.model_states_gib > zero2.model_states_gib > zero3.model_states_gib
    # FSDP full_shard keeps 16 bytes a parameter, all sharded, plus one gathered layer.
    assert fsdp.model_states_gib == pytest.approx(16 * 7e9 / 8 / GIB + fsdp.gathered_gib)


def test_fsdp_gathers_blocks_and_the_root_unit_where_the_shape_gives_them() -> None:
    """FSDP2 as the trainers wrap it (each block, then the root): at the peak a rank holds a
    block with its gradients, the next block's weights and the root unit (embeddings, head)
    with its gradients, which the memory-fit runs measured (bench/memory_fit.py)."""
    h, vocab, inter, layers = 4096, 128256, 14336, 32
    model = memory.ModelShape(parameters=8_030_261_248, dtype="bf16", hidden_size=h,
                              layers=layers, vocab_size=vocab, attention_heads=32,
                              kv_heads=8, intermediate_size=inter, sequence_length=8192)
    block = h * h * (2 + 2 * 8 / 32) + 3 * h * inter
    assert model.block_parameters == block  # Llama-3-8B's: 218,103,808
    root = 8_030_261_248 - layers * block
    assert model.outside_blocks_parameters == root  # 2 x vocab x h and the final norm
    fsdp = memory.plan(model, memory.Layout("fsdp", 8, 1))
    assert fsdp.gathered_gib == pytest.approx(2 * (3 * block + 2 * root) / GIB)
    tp2 = memory.plan(model, memory.Layout("fsdp", 8, 1, tensor_parallel=2))
    assert tp2.gathered_gib == pytest.approx(fsdp.gathered_gib / 2)
    # A largest layer the user gives is what is gathered, as before.
    given = memory.plan(memory.ModelShape(parameters=8_030_261_248, dtype="bf16",
                                          largest_layer_parameters=block),
                        memory.Layout("fsdp", 8, 1))
    assert given.gathered_gib == pytest.approx(4 * block / GIB)


def test_hybrid_shard_shards_within_a_node_only() -> None:
    model = memory.ModelShape(parameters=7_000_000_000, dtype="bf16")
    full = memory.plan(model, memory.Layout("fsdp", 8, 4, fsdp_mode="full_shard"))
    hybrid = memory.plan(model, memory.Layout("fsdp", 8, 4, fsdp_mode="hybrid_shard"))
    assert (full.shard_group, hybrid.shard_group) == (32, 8)
    assert hybrid.optimizer_gib == pytest.approx(full.optimizer_gib * 4)


def test_tensor_and_pipeline_parallelism_slice_the_model_first() -> None:
    model = memory.ModelShape(parameters=70_000_000_000, dtype="bf16")
    plain = memory.plan(model, memory.Layout("zero1", 8, 4))
    sliced = memory.plan(model, memory.Layout("zero1", 8, 4, tensor_parallel=8,
                                              pipeline_parallel=2))
    assert sliced.data_parallel == 2
    assert sliced.parameters_gib == pytest.approx(plain.parameters_gib / 16)


def test_frozen_parameters_need_only_their_weights() -> None:
    full = memory.plan(memory.ModelShape(parameters=2_350_000_000, dtype="bf16"),
                       memory.Layout("ddp", 1, 1))
    adapters = memory.plan(memory.ModelShape(parameters=2_350_000_000, dtype="bf16",
                                             trainable_parameters=350_000_000),
                           memory.Layout("ddp", 1, 1))
    assert adapters.model_states_gib == pytest.approx(
        (16 * 350e6 + 2 * 2_000e6) / GIB)
    assert adapters.model_states_gib < full.model_states_gib / 3


def test_activations_follow_the_model_shape_and_checkpointing() -> None:
    shape = dict(parameters=7_000_000_000, dtype="bf16", hidden_size=4096, layers=32,
                 sequence_length=4096, attention_heads=32, micro_batch_size=1)
    plain = memory.plan(memory.ModelShape(**shape), memory.Layout("zero3", 8, 1))
    checkpointed = memory.plan(memory.ModelShape(**shape, activation_checkpointing="full"),
                               memory.Layout("zero3", 8, 1))
    s, h, a = 4096, 4096, 32
    assert plain.activations_gib == pytest.approx(32 * s * h * (34 + 5 * a * s / h) / GIB)
    assert checkpointed.activations_gib < plain.activations_gib / 10
    assert any("each layer keeps only its input" in n for n in checkpointed.notes)
    no_shape = memory.plan(memory.ModelShape(parameters=7_000_000_000),
                           memory.Layout("zero3", 8, 1))
    assert no_shape.activations_gib is None
    assert any("activations not estimated" in n for n in no_shape.notes)


@pytest.mark.parametrize(("tp", "sequence_parallel"), [(1, False), (4, False), (4, True)])
def test_selective_checkpointing_saves_the_attention_scores(tp, sequence_parallel) -> None:
    """none > selective > full, and selective saves exactly the 5as/h term (split by tensor
    parallelism as the attention is)."""
    shape = dict(parameters=7_000_000_000, dtype="bf16", hidden_size=4096, layers=32,
                 sequence_length=4096, attention_heads=32, micro_batch_size=2)
    layout = memory.Layout("fsdp", 8, 1, tensor_parallel=tp, sequence_parallel=sequence_parallel)
    planned = {mode: memory.plan(memory.ModelShape(**shape, activation_checkpointing=mode), layout)
               for mode in checkpointing.CHECKPOINTING}
    none, selective, full = (planned[m].activations_gib for m in ("none", "selective", "full"))
    assert none > selective > full
    s, b, h, a = 4096, 2, 4096, 32
    scores = 32 * s * b * h * (5 * a * s / h) / tp
    assert none - selective == pytest.approx(scores / GIB)
    assert any("attention scores, softmax and dropout" in n for n in planned["selective"].notes)
    assert not any("checkpointing" in n for n in planned["none"].notes)


def test_older_requests_said_true_or_false() -> None:
    mode = checkpointing.checkpointing_mode
    assert mode(True) == "full"
    assert mode(False) == mode(None) == "none"
    assert mode("selective") == "selective"
    with pytest.raises(ValueError, match=r"model\.activation_checkpointing must be one of "
                       r"none, selective, full, not 'partial'"):
        checkpointing.checkpointing_mode("partial")


def test_fits_compares_with_the_device() -> None:
    model = memory.ModelShape(parameters=7_000_000_000, dtype="bf16")
    assert memory.plan(model, memory.Layout("ddp", 8, 1), device_memory_gib=40).fits is False
    assert memory.plan(model, memory.Layout("zero3", 8, 1), device_memory_gib=40).fits is True
    assert memory.plan(model, memory.Layout("zero3", 8, 1)).fits is None


@pytest.mark.parametrize(("model", "layout"), [
    (memory.ModelShape(parameters=0), memory.Layout("ddp", 1, 1)),
    (memory.ModelShape(parameters=10, dtype="int8"), memory.Layout("ddp", 1, 1)),
    (memory.ModelShape(parameters=10, trainable_parameters=11), memory.Layout("ddp", 1, 1)),
    (memory.ModelShape(parameters=10), memory.Layout("ddp", 0, 1)),
])
def test_inputs_it_cannot_plan_are_refused(model: memory.ModelShape,
                                           layout: memory.Layout) -> None:
    with pytest.raises(ValueError):
        memory.plan(model, layout)


PIPELINE_SHAPE = dict(parameters=70_000_000_000, dtype="bf16", hidden_size=8192, layers=80,
                      sequence_length=2048, attention_heads=64, micro_batch_size=1)


def _per_layer(t: int, sequence_parallel: bool) -> float:
    s, h, a = 2048, 8192, 64
    if sequence_parallel:
        return s * h * (34 + 5 * a * s / h) / t
    return s * h * (10 + (24 + 5 * a * s / h) / t)


def test_tensor_parallelism_splits_attention_and_mlp_activations_and_sp_the_rest() -> None:
    model = memory.ModelShape(**PIPELINE_SHAPE)
    tp = memory.plan(model, memory.Layout("fsdp", 8, 1, tensor_parallel=8))
    sp = memory.plan(model, memory.Layout("fsdp", 8, 1, tensor_parallel=8,
                                          sequence_parallel=True))
    assert tp.activations_gib == pytest.approx(80 * _per_layer(8, False) / GIB)
    assert sp.activations_gib == pytest.approx(80 * _per_layer(8, True) / GIB)
    assert sp.activations_gib < tp.activations_gib


@pytest.mark.parametrize(("schedule", "virtual", "microbatches", "in_flight", "bubble"), [
    ("1f1b", 1, 8, 2, 1 / 9),  # at most pp micro-batches held
    ("gpipe", 1, 8, 8, 1 / 9),  # every micro-batch held
    ("1f1b", 1, 0, 2, 1 / 3),  # 0: one micro-batch per stage
    ("interleaved_1f1b", 2, 8, 2 * (1 + 1 / 4), 1 / 17),  # Megatron's interleaving factor
])
def test_pipeline_activations_follow_the_schedule_and_the_bubble_is_planned(
        schedule: str, virtual: int, microbatches: int, in_flight: float, bubble: float) -> None:
    layout = memory.Layout("fsdp", 8, 4, tensor_parallel=8, pipeline_parallel=2,
                           pipeline_schedule=schedule, virtual_stages=virtual,
                           microbatches=microbatches)
    plan = memory.plan(memory.ModelShape(**PIPELINE_SHAPE), layout)
    assert plan.activations_gib == pytest.approx(40 * in_flight * _per_layer(8, False) / GIB)
    assert plan.pipeline_bubble == pytest.approx(bubble)
    assert any("the bubble" in note for note in plan.notes)
    assert plan.parameters_gib + plan.gradients_gib + plan.optimizer_gib == pytest.approx(
        16 * 70e9 / 16 / 2 / GIB)  # sliced by tp x pp, then sharded over dp 2 (fsdp, bf16)


@pytest.mark.parametrize("layout", [
    memory.Layout("fsdp", 8, 1),
    memory.Layout("fsdp", 8, 1, tensor_parallel=2, pipeline_parallel=2),
    memory.Layout("tpu_jax", 4, 1, tpu_sharding="fsdp"),
    memory.Layout("tpu_xla", 4, 1, tpu_sharding="fsdp"),
], ids=["fsdp", "fsdp-tp2-pp2", "tpu_jax-fsdp", "tpu_xla-fsdp"])
def test_sharded_mixed_precision_books_its_fp32_parameter_shards_as_parameters(
        layout: memory.Layout) -> None:
    """FSDP's and a sharded TPU program's fp32 parameters are the weights themselves: they
    were booked with the optimizer's states, and the plan said parameters 0."""
    model = memory.ModelShape(parameters=7_000_000_000, dtype="bf16")
    planned = memory.plan(model, layout)
    share = 7e9 / layout.model_parallel / planned.shard_group / GIB
    assert planned.parameters_gib > 0
    assert planned.parameters_gib == pytest.approx(4 * share)
    assert planned.gradients_gib == pytest.approx(4 * share)
    assert planned.optimizer_gib == pytest.approx(8 * share)  # Adam's two fp32 moments
    # The total is what it was: 16 bytes a parameter, sharded.
    assert planned.model_states_gib == pytest.approx(16 * share + planned.gathered_gib)


def test_shard_grad_op_keeps_the_gathered_weights_and_its_fp32_shard() -> None:
    model = memory.ModelShape(parameters=7_000_000_000, dtype="bf16")
    planned = memory.plan(model, memory.Layout("fsdp", 8, 1, fsdp_mode="shard_grad_op"))
    assert planned.parameters_gib == pytest.approx((2 * 7e9 + 4 * 7e9 / 8) / GIB)
    assert planned.optimizer_gib == pytest.approx(8 * 7e9 / 8 / GIB)


@pytest.mark.parametrize(("gib", "shown"), [
    (37.234, "37.2 GB"), (1.0, "1.00 GB"), (1234.5, "1,234 GB"), (0.5, "512 MB"),
    (4 * 1_000_000 / 8 / GIB, "488 KB"), (0.001, "1.02 MB"), (0.0, "0 GB"),
    (None, "not estimated"),
])
def test_sizes_read_in_the_unit_that_shows_them(gib: float | None, shown: str) -> None:
    assert memory_text.size_text(gib) == shown


def test_a_toy_models_share_is_never_shown_as_nothing() -> None:
    model = memory.ModelShape(parameters=1_000_000, dtype="bf16")
    for layout in (memory.Layout("fsdp", 8, 1),
                   memory.Layout("ddp", 8, 1, tensor_parallel=2, pipeline_parallel=2),
                   memory.Layout("tpu_jax", 4, 1, tpu_sharding="fsdp")):
        planned = memory.plan(model, layout)
        for figure in (planned.parameters_gib, planned.gradients_gib, planned.optimizer_gib):
            assert figure > 0 and memory_text.size_text(figure)[0] != "0"
        # The API's figures keep it too (they were rounded to the MB, to 0.0).
        assert planned.as_dict()["parameters_gib"] > 0
    assert "parameters 488 KB" in memory_text.describe(
        memory.plan(model, memory.Layout("fsdp", 8, 1)))


def test_the_runtime_reserve_is_the_devices_own() -> None:
    model = memory.ModelShape(parameters=1_000_000_000, dtype="bf16")
    gpu = memory.plan(model, memory.Layout("fsdp", 8, 1), gpu=True)
    tpu = memory.plan(model, memory.Layout("tpu_jax", 4, 1), gpu=True)
    cpu = memory.plan(model, memory.Layout("ddp", 1, 1), gpu=False)
    assert (gpu.reserve_gib, gpu.runtime) == (memory.GPU_RUNTIME_RESERVE_GIB, memory.GPU_RUNTIME)
    assert "CUDA" in gpu.runtime and "NCCL" in gpu.runtime
    # A TPU has no CUDA or NCCL: libtpu keeps HBM of its own.
    assert (tpu.reserve_gib, tpu.runtime) == (memory.TPU_RUNTIME_RESERVE_GIB, memory.TPU_RUNTIME)
    assert "CUDA" not in tpu.runtime and "NCCL" not in tpu.runtime and "libtpu" in tpu.runtime
    assert (cpu.reserve_gib, cpu.runtime) == (0.0, "")
