"""The generation loop inside Triton: one request is one whole generation. Copied into a
repository as ``<name>_generate/1/model.py`` (triton_repo.py) and run by Triton's Python
backend; ``triton_python_backend_utils`` exists only there, and the project is not importable
there either: the contract's own instance parsing and stop logic come from the copy of
contract/prediction.py beside this file (``prediction.py``), so an instance means here what it
means to the product's own server.

    input  instance     BYTES [rows, 1]  each row one instance as JSON, the contract's keys
                                          (prompt, max_tokens, temperature, top_p, seed, stop)
    output text_output  BYTES [rows, 1]  the generated continuation (a stop sequence left out)
           tokens       INT32 [rows, 1]  how many bytes were generated

Every step goes to the ``<name>_step`` model by BLS (Triton's in-process inference call): the
ONNX graph of triton_step.py, served by the onnxruntime backend on Vertex, with the keys and
values of every earlier position kept here, a cache row per sequence. Rows of every request the
dynamic batcher hands over run together, as decoding.py's decoder runs them: a prefill of each
prompt, then one byte per step each at its own position, and past block_size bytes the last
block_size bytes again from position 0 (the window the eager server slides), so greedy bytes
are the eager server's. A draw at a temperature uses the contract's generator (Python's random,
seeded by the instance): a seed repeats Triton's answer, not the eager server's (torch's).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from typing import Any

STEP_OUTPUTS = ("logits", "keys", "values")


class _Row:
    """One instance being generated, with its cache row."""

    def __init__(self, instance: Any, shape: tuple[int, ...], np: Any) -> None:
        self.instance = instance
        self.tokens = list(instance.prompt)
        self.generated: list[int] = []
        self.cached = 0  # positions whose keys and values are in the row
        self.keys = np.zeros(shape, dtype=np.float32)
        self.values = np.zeros(shape, dtype=np.float32)
        self.draws = instance.generator() if instance.temperature else None
        self.text_end: int | None = None
        self.done = False


class TritonPythonModel:
    def initialize(self, args: dict[str, str]) -> None:
        here = os.path.join(args["model_repository"], args["model_version"])
        self.prediction = _load(os.path.join(here, "prediction.py"), "vcp_prediction")
        parameters = {key: value["string_value"] for key, value in
                      json.loads(args["model_config"]).get("parameters", {}).items()}
        self.step_model = parameters["step_model"]
        self.step_batch = int(parameters["step_max_batch_size"])
        # (layers, heads, block_size, head width): the step graph's cache row.
        self.shape = tuple(int(d) for d in parameters["cache_dims"].split(","))
        self.block = self.shape[2]

    def execute(self, requests: list[Any]) -> list[Any]:
        import numpy as np
        import triton_python_backend_utils as pb_utils

        rows: list[list[_Row] | None] = []
        errors: dict[int, str] = {}
        for index, request in enumerate(requests):
            values = pb_utils.get_input_tensor_by_name(request, "instance").as_numpy()
            try:
                rows.append([_Row(self._instance(value, i), self.shape, np)
                             for i, value in enumerate(values.reshape(-1))])
            except ValueError as exc:  # BadInstance, or JSON that does not parse
                rows.append(None)
                errors[index] = str(exc)
        running = [row for group in rows if group for row in group]
        try:
            while running:
                self._step(running, np, pb_utils)
                running = [row for row in running if not row.done]
        except pb_utils.TritonModelException as exc:
            return [pb_utils.InferenceResponse(error=pb_utils.TritonError(str(exc)))
                    for _ in requests]
        responses = []
        for index, group in enumerate(rows):
            if group is None:
                # A 400 naming the field, as the product's own server answers.
                responses.append(pb_utils.InferenceResponse(error=pb_utils.TritonError(
                    errors[index], pb_utils.TritonError.INVALID_ARG)))
                continue
            answers = [self.prediction.prediction(r.generated, r.text_end) for r in group]
            text = np.array([[a["text"].encode("utf-8")] for a in answers], dtype=np.object_)
            tokens = np.array([[a["tokens"]] for a in answers], dtype=np.int32)
            responses.append(pb_utils.InferenceResponse([
                pb_utils.Tensor("text_output", text), pb_utils.Tensor("tokens", tokens)]))
        return responses

    def _instance(self, value: Any, index: int) -> Any:
        try:
            parsed = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"instance[{index}]: not JSON ({exc})") from exc
        return self.prediction.parse_instance(parsed, None, f"instance[{index}]")

    def _step(self, running: list[_Row], np: Any, pb_utils: Any) -> None:
        """One byte for every running row: the prompts not prefilled yet together, the rows
        in their cache one byte each, the rows past the window whole."""
        window = [r for r in running if len(r.tokens) > self.block]
        prefill = [r for r in running if len(r.tokens) <= self.block and r.cached == 0]
        decode = [r for r in running if len(r.tokens) <= self.block and r.cached > 0]
        for group, kind in ((prefill, "prefill"), (decode, "decode"), (window, "window")):
            for first in range(0, len(group), self.step_batch):
                self._run(group[first:first + self.step_batch], kind, np, pb_utils)

    def _run(self, rows: list[_Row], kind: str, np: Any, pb_utils: Any) -> None:
        if kind == "decode":
            contexts = [[r.tokens[-1]] for r in rows]
            starts = [r.cached for r in rows]
        elif kind == "prefill":
            contexts = [r.tokens for r in rows]
            starts = [0] * len(rows)
        else:  # every cached position masked: the window from position 0
            contexts = [r.tokens[-self.block:] for r in rows]
            starts = [0] * len(rows)
        width = max(len(c) for c in contexts)
        tokens = np.zeros((len(rows), width), dtype=np.int64)
        for i, context in enumerate(contexts):
            tokens[i, :len(context)] = context
        request = pb_utils.InferenceRequest(
            model_name=self.step_model, requested_output_names=list(STEP_OUTPUTS),
            inputs=[pb_utils.Tensor("tokens", tokens),
                    pb_utils.Tensor("start", np.array(starts, dtype=np.int64)[:, None]),
                    pb_utils.Tensor("past_keys", np.stack([r.keys for r in rows])),
                    pb_utils.Tensor("past_values", np.stack([r.values for r in rows]))])
        answer = request.exec()
        if answer.has_error():
            raise pb_utils.TritonModelException(
                f"{self.step_model}: {answer.error().message()}")
        logits, keys, values = (pb_utils.get_output_tensor_by_name(answer, name).as_numpy()
                                for name in STEP_OUTPUTS)
        for i, row in enumerate(rows):
            length = len(contexts[i])
            if kind == "prefill":
                row.keys[:, :, :length] = keys[i, :, :, :length]
                row.values[:, :, :length] = values[i, :, :, :length]
                row.cached = length
            elif kind == "decode":
                row.keys[:, :, row.cached] = keys[i, :, :, 0]
                row.values[:, :, row.cached] = values[i, :, :, 0]
                row.cached += 1
            self._append(row, self._choose(logits[i, length - 1], row, np))

    def _choose(self, scores: Any, row: _Row, np: Any) -> int:
        """The greedy byte at temperature 0 (the first of equal maxima, as torch.argmax picks
        on CPU), else a draw from softmax(scores / temperature) cut to the top-p nucleus."""
        instance = row.instance
        if not instance.temperature:
            return int(np.argmax(scores))
        z = scores.astype(np.float64) / instance.temperature
        probs = np.exp(z - z.max())
        probs /= probs.sum()
        if instance.top_p < 1.0:
            order = np.argsort(-probs, kind="stable")
            ordered = probs[order]
            keep = (np.cumsum(ordered) - ordered) < instance.top_p  # the likelier bytes' mass
            probs = np.zeros_like(probs)
            probs[order[keep]] = ordered[keep]
        total = np.cumsum(probs)
        point = row.draws.random() * total[-1]
        return int(min(np.searchsorted(total, point, side="right"), len(total) - 1))

    def _append(self, row: _Row, token: int) -> None:
        row.tokens.append(token)
        row.generated.append(token)
        stops = row.instance.stop
        stop = self.prediction.stop_start(row.generated, stops) if stops else None
        if stop is not None:
            row.text_end, row.done = stop, True
        elif len(row.generated) >= row.instance.max_tokens:
            row.done = True


def _load(path: str, name: str) -> Any:
    """A module from a file beside this one (the Python backend imports model.py by path)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module
