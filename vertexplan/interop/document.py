"""YAML, JSON or Python text (a CustomJob, gcloud's --config CustomJobSpec, the dicts given to
the SDK's ``aiplatform.CustomJob``, or a W&B Launch Vertex queue config) read as a CustomJob in
REST JSON (camelCase).

A gcloud --config file has no display name (gcloud takes it as a flag): it comes from the
``--display-name`` of a gcloud command line in the file's comments, else from the name the
caller asks for, else from the file's name.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import json
import re
import shlex
from pathlib import PurePosixPath
from typing import Any

import yaml

from vertexplan.interop import wandb_launch

GCLOUD_PREFIX = "# gcloud ai custom-jobs create"


class ImportFailed(ValueError):
    """The text is not a CustomJob or CustomJobSpec in YAML or JSON."""


# A CustomJob nests about a dozen levels; anything far deeper is an attack on the parser.
MAX_DEPTH = 32


class _PlainLoader(yaml.SafeLoader):
    """YAML as plain data: no aliases (``*a`` repeating ``&a``), so a few hundred bytes cannot
    expand into megabytes (the "billion laughs"), and no deeper than MAX_DEPTH. Anchors alone
    are harmless and allowed; an export never writes either."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise ImportFailed(f"YAML aliases (*{event.anchor}) are not accepted: write the "
                               f"value out (line {event.start_mark.line + 1})")
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_DEPTH:
                raise ImportFailed(f"the document nests deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _finite_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    value = yaml.SafeLoader.construct_yaml_float(loader, node)
    if value != value or value in (float("inf"), float("-inf")):
        raise ImportFailed(f"{node.value} is not a finite number (line {node.start_mark.line + 1})")
    return value


_PlainLoader.add_constructor("tag:yaml.org,2002:float", _finite_float)


def load_yaml(text: str) -> Any:
    """One YAML document as plain data, bounded as _PlainLoader says."""
    loader = _PlainLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


_FLAG = re.compile(r"--(region|display-name|labels)=(.*)", re.S)


def _header(text: str) -> dict[str, Any]:
    """The flags of the gcloud command line an export starts with."""
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("#"):
            break
        if line.startswith(GCLOUD_PREFIX):
            try:
                words = shlex.split(line[1:])
            except ValueError:
                words = line[1:].split()
            out: dict[str, Any] = {}
            for word in words:
                match = _FLAG.fullmatch(word)
                if not match:
                    continue
                name, value = match.groups()
                if name == "labels":
                    out["labels"] = dict(pair.partition("=")[::2] for pair in value.split(",")
                                         if pair)
                else:
                    out[name] = value
            return out
        if line.startswith("# encryptionSpec"):
            continue
    return {}


def _encryption(text: str) -> dict[str, Any] | None:
    for line in text.splitlines():
        if line.startswith("# encryptionSpec"):
            try:
                return json.loads(line.partition(": ")[2])
            except ValueError:
                return None
    return None


_JOB_KEYS = ("jobSpec", "job_spec")
_SPEC_KEYS = ("workerPoolSpecs", "worker_pool_specs")
# Keyword arguments of aiplatform.CustomJob(...) that are CustomJob fields.
_SDK_JOB_KWARGS = {"display_name": "displayName", "labels": "labels"}
_SDK_SPEC_KWARGS = {"worker_pool_specs": "workerPoolSpecs",
                    "base_output_dir": "baseOutputDirectory"}


class _NotLiteral(ValueError):
    """A node that is not made of literals (and names bound to literals)."""


def _literal(node: ast.AST, names: dict[str, Any]) -> Any:
    """ast.literal_eval, plus names bound to literals earlier in the file and ``**`` in
    dicts, as SDK samples write pools (``[chief, {**chief, "replica_count": 2}]``)."""
    if isinstance(node, ast.Name):
        if node.id in names:
            return copy.deepcopy(names[node.id])
        raise _NotLiteral(node.id)
    if isinstance(node, ast.Dict):
        out: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                unpacked = _literal(value, names)
                if not isinstance(unpacked, dict):
                    raise _NotLiteral("**")
                out.update(unpacked)
            else:
                out[_literal(key, names)] = _literal(value, names)
        return out
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(e, names) for e in node.elts]
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise _NotLiteral(type(node).__name__) from None


def _python(text: str) -> dict[str, Any] | None:
    """The job in a Python file: a dict literal holding jobSpec/workerPoolSpecs (either
    spelling), or the literal arguments of an ``aiplatform.CustomJob(...)`` call. Nothing is
    run: only literals (and names bound to them) are read."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: dict[str, Any] = {}
    found: dict[str, Any] | None = None
    for statement in tree.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Dict):
                try:
                    value = _literal(node, names)
                except (_NotLiteral, RecursionError):
                    continue
                if isinstance(value, dict) and any(k in value for k in (*_JOB_KEYS,
                                                                         *_SPEC_KEYS)):
                    return value
            if isinstance(node, ast.Call) and found is None:
                kwargs = {}
                for keyword in node.keywords:
                    try:
                        kwargs[keyword.arg] = _literal(keyword.value, names)
                    except (_NotLiteral, RecursionError):
                        continue
                if "worker_pool_specs" in kwargs:
                    found = _sdk_call(kwargs)
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            with contextlib.suppress(_NotLiteral, RecursionError):
                names[statement.targets[0].id] = _literal(statement.value, names)
    return found


def _sdk_call(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``aiplatform.CustomJob(display_name=..., worker_pool_specs=..., base_output_dir=...)``
    as the CustomJob the SDK sends."""
    job: dict[str, Any] = {k: kwargs[a] for a, k in _SDK_JOB_KWARGS.items() if a in kwargs}
    spec: dict[str, Any] = {}
    for arg, key in _SDK_SPEC_KWARGS.items():
        if arg in kwargs:
            spec[key] = ({"outputUriPrefix": kwargs[arg]} if key == "baseOutputDirectory"
                         else kwargs[arg])
    job["jobSpec"] = spec
    return job


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _load(text: str) -> Any:
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        try:
            return json.loads(text, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            pass
        document = _python(text)
        if document is None:
            raise ImportFailed(f"not YAML, JSON or a Python dict: {exc}") from None
        return document


def parse(text: str, *, name: str = "", filename: str = ""
          ) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """(the CustomJob, 'CustomJob' or 'CustomJobSpec', header flags) from YAML, JSON or Python.

    ``name`` names a CustomJobSpec without a ``--display-name`` line; ``filename`` (its stem)
    when there is no name either."""
    document = _load(text)
    if not isinstance(document, dict) and not isinstance(document, str):
        document = None
    if isinstance(document, str):  # a Python file reads as one YAML string
        document = _python(text)
    if not isinstance(document, dict):
        raise ImportFailed("expected a CustomJob (with jobSpec) or a CustomJobSpec (with "
                           "workerPoolSpecs) as an object")
    header = _header(text)
    if wandb_launch.is_queue_config(document):
        job_doc = wandb_launch.from_queue_config(document, display_name=name or _stem(filename))
        return job_doc, wandb_launch.KIND, header
    if any(k in document for k in _JOB_KEYS):
        job_doc = dict(document)
        if not job_doc.get("displayName") and not job_doc.get("display_name"):
            fallback = name or _stem(filename)
            if fallback:
                job_doc["displayName"] = fallback
        return job_doc, "CustomJob", header
    if any(k in document for k in _SPEC_KEYS):
        display = header.get("display-name") or name or _stem(filename)
        job: dict[str, Any] = {"displayName": display, "jobSpec": document}
        if header.get("labels"):
            job["labels"] = header["labels"]
        encryption = _encryption(text)
        if encryption:
            job["encryptionSpec"] = encryption
        return job, "CustomJobSpec", header
    raise ImportFailed("no jobSpec or workerPoolSpecs: this is not a CustomJob or a "
                       "CustomJobSpec (gcloud's --config file)")


def _stem(filename: str) -> str:
    """``configs/train-a100.yaml`` -> ``train-a100``."""
    return PurePosixPath(filename.replace("\\", "/")).stem if filename else ""
