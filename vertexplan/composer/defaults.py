"""Where a request that names no region runs, and the image a job that names none runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DEFAULT_IMAGE = "us-central1-docker.pkg.dev/local-project/training/trainers:0.1.0"
# The TPU strategies' images (Dockerfile.tpu-jax and Dockerfile.tpu-xla at the repository root).
# Our own builds: Google lists no prebuilt training containers for v5e, and the URIs of prebuilt
# JAX and PyTorch/XLA ones are UNCONFIRMED (VERTEX_FACTS.md A5).
DEFAULT_TPU_IMAGES = {
    "tpu_jax": "us-central1-docker.pkg.dev/local-project/training/trainers-tpu-jax:0.1.0",
    "tpu_xla": "us-central1-docker.pkg.dev/local-project/training/trainers-tpu-xla:0.1.0",
}


@dataclass
class Defaults:
    """Where a request that names no region runs, and the image a pool that names none runs.

    Providers, read at each call: the control plane connects its settings here at start
    (controlplane/core/apps.py), so a changed setting applies at once; plain Python callers
    get these values."""

    region: Callable[[], str] = lambda: "us-central1"
    image: Callable[[], str] = lambda: DEFAULT_IMAGE
    tpu_images: Callable[[], dict[str, str]] = lambda: DEFAULT_TPU_IMAGES

    def image_for(self, strategy: Any) -> str:
        """The image a job of ``strategy`` runs when it names none: the TPU strategies' own
        images, the PyTorch image otherwise."""
        return self.tpu_images().get(strategy) or self.image()


DEFAULTS = Defaults()
