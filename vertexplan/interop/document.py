"""YAML, JSON or Python text (a CustomJob, gcloud's --config CustomJobSpec, the dicts given to
the SDK's ``aiplatform.CustomJob``, or a W&B Launch Vertex queue config) read as a CustomJob in
REST JSON (camelCase).

A gcloud --config file has no display name (gcloud takes it as a flag): it comes from the
``--display-name`` of a gcloud command line in the file's comments, else from the name the
caller asks for, else from the file's name.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import yaml

from vertexplan.interop.python_sdk import PythonJob, TooLarge
from vertexplan.interop.python_sdk import read as read_python_sdk
from vertexplan.interop.wandb_launch import KIND as WANDB_KIND
from vertexplan.interop.wandb_launch import from_queue_config, is_queue_config

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


@dataclass
class Document:
    job: dict[str, Any]
    kind: str  # "CustomJob", "CustomJobSpec" or WANDB_KIND
    header: dict[str, Any]  # the gcloud line's flags (region, display-name, labels)
    # What a Python file asks for that cannot be read, keyed by the argument ("run(timeout=)").
    errors: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def read_python(text: str) -> PythonJob | None:
    """A Python file's job (python_sdk.read); one whose names expand past the importer's bound
    is refused as a whole."""
    try:
        return read_python_sdk(text)
    except TooLarge as exc:
        raise ImportFailed(str(exc)) from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ImportFailed(f"{text[:40]} is not a finite number")
    return value


def _load(text: str) -> Any:
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        # JSON that YAML cannot read (a key over 1024 characters): numbers as bounded as
        # YAML's (_finite_float), so 1e400 is refused rather than read as infinity.
        try:
            return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
        except ImportFailed:
            raise
        except (ValueError, RecursionError):
            pass
        if read_python(text) is None:
            raise ImportFailed(f"not YAML, JSON or a Python dict: {exc}") from None
        return text  # read as Python by read_document


def parse(text: str, *, name: str = "", filename: str = ""
          ) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """(the CustomJob, its kind, header flags): ``read_document`` without a Python file's
    notes."""
    document = read_document(text, name=name, filename=filename)
    return document.job, document.kind, document.header


def read_document(text: str, *, name: str = "", filename: str = "") -> Document:
    """The CustomJob of a YAML, JSON or Python text, and what kind of document it was.

    ``name`` names a CustomJobSpec without a ``--display-name`` line; ``filename`` (its stem)
    when there is no name either."""
    document = _load(text)
    python: PythonJob | None = None
    if isinstance(document, str):  # a Python file reads as one YAML string
        python = read_python(text)
        document = python.document if python is not None else None
    if not isinstance(document, dict):
        raise ImportFailed("expected a CustomJob (with jobSpec) or a CustomJobSpec (with "
                           "workerPoolSpecs) as an object")
    header = _header(text)
    if python is not None and python.region and not header.get("region"):
        header["region"] = python.region
    job, kind = _job(document, text, header, name or _stem(filename))
    out = Document(job=job, kind=kind, header=header)
    if python is not None:
        out.errors, out.warnings = python.errors, python.warnings
    return out


def _job(document: dict[str, Any], text: str, header: dict[str, Any],
         fallback: str) -> tuple[dict[str, Any], str]:
    if is_queue_config(document):
        return from_queue_config(document, display_name=fallback), \
            WANDB_KIND
    if any(k in document for k in _JOB_KEYS):
        job_doc = dict(document)
        if not job_doc.get("displayName") and not job_doc.get("display_name") and fallback:
            job_doc["displayName"] = fallback
        return job_doc, "CustomJob"
    if any(k in document for k in _SPEC_KEYS):
        display = header.get("display-name") or fallback
        job: dict[str, Any] = {"displayName": display, "jobSpec": document}
        if header.get("labels"):
            job["labels"] = header["labels"]
        encryption = _encryption(text)
        if encryption:
            job["encryptionSpec"] = encryption
        return job, "CustomJobSpec"
    raise ImportFailed("no jobSpec or workerPoolSpecs: this is not a CustomJob or a "
                       "CustomJobSpec (gcloud's --config file)")


def _stem(filename: str) -> str:
    """``configs/train-a100.yaml`` -> ``train-a100``."""
    return PurePosixPath(filename.replace("\\", "/")).stem if filename else ""
