"""The ``tensorrt`` runtime: a Triton model repository serving a TensorRT engine built from the
ONNX export of ``triton_repo.py``.

``python -m trainers.serving.triton_package MODEL_FOLDER REPOSITORY --engine tensorrt --check``
writes, under REPOSITORY::

    <name>/config.pbtxt   platform tensorrt_plan, the same tensors and dynamic batching
    <name>/1/model.plan   the engine: tokens [batch, width] int64 -> logits [batch, width, vocab]

An engine is built for one GPU family and one TensorRT version: it loads only on the GPU type
it was built on, in a Triton image whose TensorRT is the builder's. So the build runs where
the model is served, on the same accelerator (the control plane's packaging job asks for
it), in NVIDIA's TensorRT image; ``import tensorrt`` exists only there. Without it the build
fails with an ``EngineUnavailable`` that says so (the packaging job logs it as its ERROR line).

Precision: FP16 by default (the builder may pick FP16 kernels; layers that lose too much stay
FP32, TensorRT's own choice), FP32 on request. INT8 needs calibration: the scales of every
activation, measured on representative prompts. Without a calibration cache (TensorRT's own
file, written by an earlier calibration run) INT8 is refused rather than built with made-up
scales that would serve wrong logits.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from trainers.serving import triton_repo

PLAN_FILE = "model.plan"
PRECISIONS = ("fp16", "fp32", "int8")
# The builder's scratch memory (its workspace pool); a small GPT needs far less, an L4 has 24 GiB.
WORKSPACE_BYTES = 2 << 30


class EngineUnavailable(RuntimeError):
    """TensorRT is not importable here: the build needs a GPU machine and the TensorRT image."""


@dataclass(frozen=True)
class EngineSettings:
    """How the engine is built. ``calibration_cache``: a TensorRT INT8 calibration cache file,
    required with ``int8`` and refused without it."""

    precision: str = "fp16"
    calibration_cache: str = ""

    def check(self) -> None:
        if self.precision not in PRECISIONS:
            raise triton_repo.RepositoryError(f"precision {self.precision!r}: one of "
                                              f"{', '.join(PRECISIONS)}")
        if self.precision == "int8" and not self.calibration_cache:
            raise triton_repo.RepositoryError(
                "precision int8 needs calibration (--calibration-cache, a TensorRT calibration "
                "cache measured on representative prompts); without it use fp16")
        if self.calibration_cache and self.precision != "int8":
            raise triton_repo.RepositoryError("--calibration-cache is for precision int8 only")
        if self.calibration_cache and not os.path.isfile(self.calibration_cache):
            raise triton_repo.RepositoryError(f"calibration cache {self.calibration_cache!r}: "
                                              "no such file")


def config_text(name: str, vocab_size: int, batching: triton_repo.Batching) -> str:
    """config.pbtxt for the engine: the ONNX repository's, with TensorRT's platform. Triton's
    tensorrt backend reads ``<name>/1/model.plan`` by default, as onnxruntime reads model.onnx."""
    text = triton_repo.config_text(name, vocab_size, batching)
    return text.replace('platform: "onnxruntime_onnx"', 'platform: "tensorrt_plan"', 1)


def require_tensorrt():  # type: ignore[no-untyped-def]
    """TensorRT's module, or EngineUnavailable naming what the build needs."""
    try:
        import tensorrt
    except ImportError as exc:
        raise EngineUnavailable(
            "building a TensorRT engine needs TensorRT's Python module (import tensorrt), "
            "which only NVIDIA's TensorRT image has (nvcr.io/nvidia/tensorrt:<yy.mm>-py3), "
            "on a GPU machine of the type the engine will serve on") from exc
    return tensorrt


def build_plan(onnx_path: str, plan_path: str, batching: triton_repo.Batching,
               block_size: int, settings: EngineSettings) -> None:
    """Build the engine for the ONNX graph at ``onnx_path`` and write it to ``plan_path``: one
    optimisation profile covering every batch up to max_batch_size and every width up to the
    model's context, tuned for the preferred batch at a full context."""
    settings.check()
    trt = require_tensorrt()
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(0)  # explicit batch is the only mode in TensorRT 10
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(onnx_path):
        problems = "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors))
        raise triton_repo.RepositoryError(f"TensorRT cannot parse {onnx_path}: {problems}")
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, WORKSPACE_BYTES)
    if settings.precision in ("fp16", "int8"):
        config.set_flag(trt.BuilderFlag.FP16)
    if settings.precision == "int8":
        config.set_flag(trt.BuilderFlag.INT8)
        config.int8_calibrator = _cache_calibrator(trt, settings.calibration_cache)
    profile = builder.create_optimization_profile()
    top = batching.max_batch_size
    profile.set_shape(triton_repo.INPUT_NAME, (1, 1), (max(batching.preferred), block_size),
                      (top, block_size))
    config.add_optimization_profile(profile)
    plan = builder.build_serialized_network(network, config)
    if plan is None:
        raise triton_repo.RepositoryError("TensorRT could not build an engine (its log above "
                                          "says why)")
    staged = f"{plan_path}.tmp"
    with open(staged, "wb") as f:
        f.write(bytes(plan))
    os.replace(staged, plan_path)


def _cache_calibrator(trt, path: str):  # type: ignore[no-untyped-def]
    """An INT8 calibrator that only replays a calibration cache: it offers no batches, so
    TensorRT takes every scale from the cache (and fails if the cache does not fit the graph)."""
    with open(path, "rb") as f:
        cache = f.read()

    class CacheOnly(trt.IInt8EntropyCalibrator2):
        def get_batch_size(self) -> int:
            return 1

        def get_batch(self, names):  # type: ignore[no-untyped-def]
            return None

        def read_calibration_cache(self) -> bytes:
            return cache

        def write_calibration_cache(self, data) -> None:  # type: ignore[no-untyped-def]
            return None

    return CacheOnly()
