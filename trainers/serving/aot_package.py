"""The command an aot model's packaging job runs: the model's AOTInductor package built and
stored beside its weights before the model is uploaded, so no replica compiles at start.

    python -m trainers.serving.aot_package MODEL_FOLDER [--device auto|cpu|cuda]

It runs in the serving image, the image the replicas run: a package holds code generated for
one torch version and device type, and only a replica with the same ones can load it. A
package that is there already and answers as the weights do is kept (a retried job builds
nothing). On failure it prints one structured ERROR line, which the packaging job's error
names, and exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch

from trainers.serving import aot, loader
from trainers.storage import StorageError, storage_for


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_folder", help="an exported model or a committed checkpoint "
                                             "(local, /gcs/... or gs://)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="the device the package is built for (auto: cuda where there is "
                             "one): the replicas' own")
    args = parser.parse_args(argv)
    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        loaded = loader.require_gpt(loader.load(args.model_folder, device), "the package")
        storage = storage_for(loaded.source)
        path = aot.package_path(storage, loaded.source, torch.device(device))
        # Kept where it is there and answers as the weights do (a retried job), else built.
        built = not storage.exists(path) or aot.load_stored(loaded.model, storage, path) is None
        if built:
            aot.build_and_store(loaded.model, storage, loaded.source)
    except (loader.ModelLoadError, StorageError, OSError, aot.PackageMismatch) as exc:
        print(json.dumps({"severity": "ERROR", "message": f"aot package: {exc}",
                          "error": str(exc)}), file=sys.stderr)
        return 2
    print(json.dumps({"package": path, "built": built, "device": device,
                      "torch": torch.__version__}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
