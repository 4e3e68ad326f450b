"""The generated ONNX graph behind Triton's Python backend: what the local Triton server
(``triton_local.py``) serves, because the server PyTriton bundles has no onnxruntime backend.
Copied into a repository as ``<model>/1/model.py``; tritonserver's Python stub imports it
(``triton_python_backend_utils`` exists only there).

The dynamic batcher hands ``execute`` every request it gathered; requests of one width are
run as one batch through onnxruntime, as the onnxruntime backend does on Vertex.
"""

from __future__ import annotations

import os
from typing import Any

INPUT_NAME = "tokens"  # triton_repo.INPUT_NAME: this file is loaded without the project
OUTPUT_NAME = "logits"


class TritonPythonModel:
    def initialize(self, args: dict[str, str]) -> None:
        import onnxruntime

        path = os.path.join(args["model_repository"], args["model_version"], "model.onnx")
        self.session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])

    def execute(self, requests: list[Any]) -> list[Any]:
        import numpy as np
        import triton_python_backend_utils as pb_utils

        inputs = [pb_utils.get_input_tensor_by_name(r, INPUT_NAME).as_numpy() for r in requests]
        by_width: dict[int, list[int]] = {}
        for index, tokens in enumerate(inputs):
            by_width.setdefault(tokens.shape[1], []).append(index)
        logits: list[Any] = [None] * len(inputs)
        for indices in by_width.values():
            batch = np.concatenate([inputs[i] for i in indices])
            out = self.session.run([OUTPUT_NAME], {INPUT_NAME: batch})[0]
            start = 0
            for i in indices:
                rows = inputs[i].shape[0]
                logits[i] = out[start:start + rows]
                start += rows
        return [pb_utils.InferenceResponse([pb_utils.Tensor(OUTPUT_NAME, value)])
                for value in logits]
