"""An ONNX graph of a generated repository behind Triton's Python backend: what the local Triton
server (``triton_local.py``) serves in place of an ``onnxruntime_onnx`` model when its
tritonserver has no onnxruntime backend (the one PyTriton bundles has none). Copied into a
repository as ``<model>/1/model.py``; tritonserver's Python stub imports it
(``triton_python_backend_utils`` exists only there).

Any graph: every input the graph declares is read from the request by name, every output
answered. The dynamic batcher (and a BLS caller, which sends one request of many rows) hands
``execute`` every request it gathered; requests whose inputs have the same shapes but for the
batch are run as one batch through onnxruntime, as the onnxruntime backend does on Vertex.
"""

from __future__ import annotations

import os
from typing import Any


class TritonPythonModel:
    def initialize(self, args: dict[str, str]) -> None:
        import onnxruntime

        path = os.path.join(args["model_repository"], args["model_version"], "model.onnx")
        self.session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.outputs = [o.name for o in self.session.get_outputs()]

    def execute(self, requests: list[Any]) -> list[Any]:
        import numpy as np
        import triton_python_backend_utils as pb_utils

        feeds = [{name: pb_utils.get_input_tensor_by_name(r, name).as_numpy()
                  for name in self.inputs} for r in requests]
        by_shape: dict[tuple, list[int]] = {}
        for index, feed in enumerate(feeds):
            key = tuple(feed[name].shape[1:] for name in self.inputs)
            by_shape.setdefault(key, []).append(index)
        answers: list[Any] = [None] * len(requests)
        for indices in by_shape.values():
            batch = {name: np.concatenate([feeds[i][name] for i in indices])
                     for name in self.inputs}
            out = self.session.run(self.outputs, batch)
            start = 0
            for i in indices:
                rows = feeds[i][self.inputs[0]].shape[0]
                answers[i] = [value[start:start + rows] for value in out]
                start += rows
        return [pb_utils.InferenceResponse([pb_utils.Tensor(name, value)
                                            for name, value in zip(self.outputs, values,
                                                                   strict=True)])
                for values in answers]
