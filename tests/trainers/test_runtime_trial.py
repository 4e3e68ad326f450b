"""The runtime trial's job (trainers/serving/runtime_trial.py) on this CPU: the eager runtime
served by `python -m trainers.serve` in its own process and measured under the asked traffic,
the figures written to the result file; a runtime this machine cannot run has its reason as
its row's note, and the others are measured all the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.serving.models import export_model
from trainers.serving import runtime_trial

pytestmark = pytest.mark.trainers


def test_the_eager_runtime_is_measured_and_the_others_say_why_they_are_not(
        tmp_path: Path) -> None:
    import torch

    model = export_model(tmp_path / "model")
    result = tmp_path / "model" / "trials" / "trial-1.json"
    assert runtime_trial.main([str(model), str(result), "--runtimes", "eager,triton,vllm",
                               "--prompt-tokens", "8", "--output-tokens", "4",
                               "--concurrency", "2", "--requests", "6",
                               "--triton-python", ""]) == 0
    written = json.loads(result.read_text())
    assert written["traffic"] == {"prompt_tokens": 8, "output_tokens": 4, "concurrency": 2,
                                  "requests": 6}
    eager, triton, vllm = written["rows"]
    assert (eager["runtime"], eager["note"], eager["errors"]) == ("eager", "", 0), eager
    # Every request answered, each with the tokens it asked for (the load, not the warm-up).
    assert eager["requests"] == 6 and eager["tokens_per_s"] > 0
    assert 0 < eager["p50_ms"] <= eager["p99_ms"] and eager["start_s"] > 0
    assert triton == {**triton, "tokens_per_s": None,
                      "note": "needs the Triton tools (tritonserver), not in this image"}
    if not torch.cuda.is_available():
        assert (vllm["tokens_per_s"], vllm["note"]) == (None, "needs a GPU")


def test_percentiles_are_nearest_rank_and_prompts_have_the_asked_length() -> None:
    latencies = [i / 1000 for i in range(1, 101)]  # 1 ms .. 100 ms
    assert runtime_trial.percentile_ms(latencies, 0.50) == 50.0
    assert runtime_trial.percentile_ms(latencies, 0.99) == 99.0
    assert runtime_trial.percentile_ms([0.25], 0.99) == 250.0
    assert [len(runtime_trial.prompt_of(n)) for n in (1, 64, 192)] == [1, 64, 192]


def test_figures_that_cannot_be_written_fail_the_job_with_one_structured_error_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert runtime_trial.main([str(tmp_path), str(blocked / "figures.json"),
                               "--runtimes", "vllm"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    error = json.loads(line)
    assert error["severity"] == "ERROR"
    assert error["message"].startswith(f"runtime trial: the figures were not written to "
                                       f"{blocked / 'figures.json'}")
