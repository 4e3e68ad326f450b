"""Hypothesis takes the project's modules for its own and the installed dependencies not
(tests/hypothesis_locals.py): it reads the constants of the first, never the second's."""

from __future__ import annotations

import django
import rest_framework
from hypothesis.internal.constants_ast import is_local_module_file

import controlplane.logs.store
import vertexplan.logparse.events


def test_the_projects_modules_are_local_and_the_dependencies_are_not() -> None:
    assert is_local_module_file(controlplane.logs.store.__file__)
    assert is_local_module_file(vertexplan.logparse.events.__file__)
    assert not is_local_module_file(django.__file__)
    assert not is_local_module_file(rest_framework.__file__)
