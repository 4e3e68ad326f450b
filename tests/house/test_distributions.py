"""What each installable folder ships, read from its pyproject.toml as setuptools reads it: the
client (`pip install ./client`) ships the API client and `vcp`, never the callbacks (they
import the training frameworks); the callbacks (`pip install ./callbacks`) ship only
`vcp_callbacks`; the project ships both beside its own packages."""

from __future__ import annotations

import tomllib

from setuptools import find_packages

from tests.house.packaging import ROOT


def shipped(folder: str) -> set[str]:
    config = tomllib.loads((ROOT / folder / "pyproject.toml").read_text())
    find = config["tool"]["setuptools"]["packages"]["find"]
    found: set[str] = set()
    for where in find.get("where", ["."]):
        found |= set(find_packages(where=str(ROOT / folder / where),
                                   include=find.get("include", ["*"])))
    return {name.split(".")[0] for name in found}


def test_the_client_ships_no_callbacks() -> None:
    assert shipped("client") == {"vertex_control_plane_client", "vcp"}


def test_the_callbacks_ship_alone() -> None:
    assert shipped("callbacks") == {"vcp_callbacks"}


def test_the_project_ships_the_client_and_the_callbacks() -> None:
    assert {"vertex_control_plane_client", "vcp", "vcp_callbacks"} <= shipped(".")
