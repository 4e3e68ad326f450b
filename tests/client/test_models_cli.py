"""`vcp models register | list`, answered by the control plane in the test's process: a
Hugging Face model folder registered for the vllm runtime, and a refusal exiting 1 with the
field at fault (the file and key, the fit's figures)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.client.test_job_notes_cli import Vcp, vcp  # noqa: F401 (a fixture)
from tests.serving.test_register_hf import FOLDER, bucket, write_export  # noqa: F401


def test_vcp_registers_an_hf_folder_for_vllm_and_lists_it(
        vcp: Vcp, bucket: Path, settings: Any) -> None:  # noqa: F811 (the fixtures)
    write_export(bucket)
    done = vcp("models", "register", "--hf", FOLDER, "--team", "vision", "--runtime", "vllm",
               "--machine-type", "g2-standard-8", "--max-model-len", "96")
    assert done.exit_code == 0, done.output
    entry = json.loads(done.stdout)
    assert (entry["format"], entry["architecture"], entry["runtime"]) == (
        "hf", "LlamaForCausalLM", "vllm")
    listed = json.loads(vcp("models", "list").stdout)
    assert [m["id"] for m in listed] == [entry["id"]]

    done = vcp("models", "register", "--hf", FOLDER, "--team", "vision", "--runtime", "vllm",
               "--machine-type", "g2-standard-8", "--max-model-len", "4096")
    assert done.exit_code == 1
    assert "max_model_len" in done.output and "max_position_embeddings (128)" in done.output
    done = vcp("models", "register", "--hf", f"{FOLDER}-missing", "--team", "vision")
    assert done.exit_code == 1 and "config.json: missing" in done.output
