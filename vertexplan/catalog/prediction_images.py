"""Google's prebuilt prediction containers (data/prediction_images.csv), offered by the image
picker beside a team's own images; each row carries its source and date."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from vertexplan.catalog.loader import CatalogError, read_rows

ACCELERATORS = ("cpu", "gpu")


@dataclass(frozen=True)
class PredictionImage:
    uri: str
    framework: str
    accelerator: str  # cpu or gpu
    note: str
    source: str
    retrieved: str


@cache
def prediction_images() -> tuple[PredictionImage, ...]:
    images = []
    for row in read_rows("prediction_images.csv"):
        if row["accelerator"] not in ACCELERATORS:
            raise CatalogError(f"prediction_images.csv: {row['uri']}: accelerator "
                               f"{row['accelerator']!r} is not one of {ACCELERATORS}")
        images.append(PredictionImage(**row))
    return tuple(images)
