"""The command a triton model's packaging job runs: the model repository of
``triton_repo.py`` for a registered model folder, checked and published with ``--check``.

    python -m trainers.serving.triton_package MODEL_FOLDER REPOSITORY [--name gpt] [--check]
    python -m trainers.serving.triton_package MODEL_FOLDER REPOSITORY --engine tensorrt \
        [--precision fp16|fp32|int8 [--calibration-cache FILE]]

``--engine tensorrt`` (a tensorrt model's packaging job, on a GPU machine in the TensorRT
image) exports the same ONNX graph, checks it, then builds a TensorRT engine from it
(``tensorrt_repo.py``, ``tensorrt_publish.py``); it is always checked and published, as if
``--check`` were given. Where TensorRT is missing it fails at once with an ERROR line that
names what the build needs.

Apart from ``triton_repo.py`` because it drives the checks and the publishing, which build on
that module's layout.
"""

from __future__ import annotations

import argparse
import json
import sys

from trainers.serving import loader, tensorrt_publish, tensorrt_repo, triton_check, triton_publish
from trainers.serving.triton_repo import Batching, RepositoryError, write
from trainers.storage import StorageError, storage_for


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_folder", help="an exported model or a committed checkpoint")
    parser.add_argument("repository", help="the folder to write the repository into "
                                           "(local, /gcs/... or, with --check, gs://)")
    parser.add_argument("--name", default="gpt")
    parser.add_argument("--max-batch-size", type=int, default=Batching.max_batch_size)
    parser.add_argument("--preferred", type=int, nargs="+", default=list(Batching.preferred))
    parser.add_argument("--max-queue-delay-us", type=int, default=Batching.max_queue_delay_us)
    parser.add_argument("--check", action="store_true",
                        help="validate the config with Triton's proto and compare with eager, "
                             "and publish the checked repository (any storage, gs:// too)")
    parser.add_argument("--engine", choices=("onnx", "tensorrt"), default="onnx",
                        help="what Triton serves: the ONNX graph (onnxruntime) or a TensorRT "
                             "engine built from it (needs a GPU and the TensorRT image)")
    parser.add_argument("--precision", choices=tensorrt_repo.PRECISIONS, default="fp16",
                        help="the engine's precision (--engine tensorrt); int8 needs "
                             "--calibration-cache")
    parser.add_argument("--calibration-cache", default="",
                        help="a TensorRT INT8 calibration cache file (precision int8 only)")
    args = parser.parse_args(argv)
    batching = Batching(args.max_batch_size, tuple(args.preferred), args.max_queue_delay_us)
    engine = tensorrt_repo.EngineSettings(args.precision, args.calibration_cache)
    try:
        if args.engine == "tensorrt":
            engine.check()
            tensorrt_repo.require_tensorrt()  # before loading: nothing to do without it
        loaded = loader.require_gpt(loader.load(args.model_folder), "the Triton package")
        if args.engine == "tensorrt":
            try:
                result = tensorrt_publish.publish(loaded.model, args.repository, args.name,
                                                  batching, engine)
            except triton_check.RepositoryInvalid as exc:
                raise RepositoryError(str(exc)) from exc
        elif args.check:
            try:
                result = triton_publish.publish(loaded.model, args.repository, args.name,
                                                batching)
            except triton_check.RepositoryInvalid as exc:
                raise RepositoryError(str(exc)) from exc
        else:
            if not storage_for(args.repository).local:
                raise RepositoryError(f"{args.repository}: a repository outside the local "
                                      "file system is written only checked (--check)")
            result = {"model": write(loaded.model, args.repository, args.name, batching)}
    except (loader.ModelLoadError, RepositoryError, StorageError,
            tensorrt_repo.EngineUnavailable) as exc:
        # A structured line (Cloud Logging lifts its severity): what a packaging job failed of.
        what = "tensorrt engine" if args.engine == "tensorrt" else "triton repository"
        print(json.dumps({"severity": "ERROR", "message": f"{what}: {exc}",
                          "error": str(exc)}), file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
