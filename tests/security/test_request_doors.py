"""The request-level doors a hostile second team found (issue 40, doors 6-13): each test
reproduces one against the API or the pages as that team would, and asserts the refusal."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.security.conftest import World
from vertexplan.interop import ImportFailed, import_text


def import_bomb(levels: int) -> str:
    """A Python file of nested list names, each level 16 references to the one before: a few
    hundred bytes that expand to 16**levels values."""
    lines = ["l0 = [0]\n"]
    lines += [f"l{i} = [{', '.join([f'l{i - 1}'] * 16)}]\n" for i in range(1, levels + 1)]
    lines.append(f"job = {{'workerPoolSpecs': [{{'replicaCount': 1, 'x': l{levels}}}]}}\n")
    return "".join(lines)


@pytest.mark.parametrize("levels", [4, 6])
def test_an_import_bomb_is_refused_before_it_expands(levels: int) -> None:
    with pytest.raises(ImportFailed, match="expand to more than"):
        import_text(import_bomb(levels), region="us-central1")


def test_an_import_bomb_is_a_400_even_for_a_viewer(
        world: World, token_client: Callable[[Any], APIClient]) -> None:
    answer = token_client(world.users["viewer"]).post(
        "/api/v1/jobs/import/", {"text": import_bomb(6)}, format="json")
    assert answer.status_code == 400, answer.content[:300]
    assert "expand to more than" in json.dumps(answer.json())
