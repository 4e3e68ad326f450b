"""Small model folders as training writes them, for the serving tests and benchmarks."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from trainers.config import ModelConfig


def export_model(folder: Path, seed: int = 1, step: int = 60, **model: int) -> Path:
    """An exported model folder (AIP_MODEL_DIR's layout): model.pt + config.json."""
    import torch

    from trainers.torch.model import GPT

    config = ModelConfig(**model)
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(GPT(config, seed=seed).state_dict(), folder / "model.pt")
    (folder / "config.json").write_text(json.dumps({"model": asdict(config), "step": step}))
    return folder


def ddp_checkpoint(folder: Path, step: int = 30, fmt: str = "torch") -> Path:
    """A committed step folder as the ddp strategy writes it (weights, config, marker)."""
    export_model(folder, step=step)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({"model": config["model"],
                                                    "strategy": "ddp", "steps": 300}))
    (folder / "COMMITTED").write_text(json.dumps({"step": step, "format": fmt,
                                                  "strategy": "ddp"}))
    return folder
