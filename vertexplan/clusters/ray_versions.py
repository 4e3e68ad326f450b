"""The Ray versions Ray on Vertex AI offers and the prebuilt images that carry them.

VERTEX_FACTS.md A2 (python-aiplatform vertex_ray/util/_validation_utils.py): Ray 2.33.0,
2.42.0 and 2.47.1 (the default); Python 3.10 images exist for 2.33 and 2.42, Python 3.11 images
for 2.42 and 2.47; images are `{us,europe,asia}-docker.pkg.dev/vertex-ai/training/
ray-{cpu,gpu}.2-47.py311:latest`.
"""

from __future__ import annotations

OFFERED: dict[str, tuple[str, ...]] = {
    "2.33.0": ("3.10",),
    "2.42.0": ("3.10", "3.11"),
    "2.47.1": ("3.11",),
}
DEFAULT_VERSION = "2.47.1"
IMAGE_REPO = "vertex-ai/training"
# The prebuilt images live in three multi-region Artifact Registry hosts. Which host serves a
# region is not written in the facts: the region's continent is used (UNCONFIRMED), and regions
# outside the three continents get the us host.
_HOSTS = {"us": "us", "northamerica": "us", "southamerica": "us", "europe": "europe",
          "asia": "asia", "australia": "asia", "me": "europe", "africa": "europe"}


def default_python(version: str) -> str:
    """The newest Python the version's images carry."""
    return OFFERED[version][-1]


def image_uri(version: str, python: str, gpu: bool, region: str) -> str:
    host = _HOSTS.get(region.split("-", 1)[0], "us")
    major_minor = "-".join(version.split(".")[:2])
    kind = "gpu" if gpu else "cpu"
    py = "py" + python.replace(".", "")
    return f"{host}-docker.pkg.dev/{IMAGE_REPO}/ray-{kind}.{major_minor}.{py}:latest"


def version_of_image(uri: str) -> str | None:
    """The offered Ray version a prebuilt image carries (`ray-cpu.2-47.py311` -> 2.47.1); None
    for an image that is not one of Vertex's."""
    name = uri.rsplit("/", 1)[-1].split(":", 1)[0]
    if not name.startswith(("ray-cpu.", "ray-gpu.")):
        return None
    parts = name.split(".")
    if len(parts) < 2:
        return None
    wanted = parts[1].replace("-", ".")
    for version in OFFERED:
        if version.startswith(wanted + "."):
            return version
    return None
