"""YAML or JSON text (a CustomJob, or gcloud's --config CustomJobSpec) read as a CustomJob."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import yaml

GCLOUD_PREFIX = "# gcloud ai custom-jobs create"


class ImportFailed(ValueError):
    """The text is not a CustomJob or CustomJobSpec in YAML or JSON."""


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


def parse(text: str) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """(the CustomJob, 'CustomJob' or 'CustomJobSpec', header flags) from YAML or JSON text."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        try:
            document = json.loads(text)
        except ValueError:
            raise ImportFailed(f"not YAML or JSON: {exc}") from None
    if not isinstance(document, dict):
        raise ImportFailed("expected a CustomJob (with jobSpec) or a CustomJobSpec (with "
                           "workerPoolSpecs) as an object")
    header = _header(text)
    if "jobSpec" in document:
        return document, "CustomJob", header
    if "workerPoolSpecs" in document:
        job: dict[str, Any] = {"displayName": header.get("display-name", ""),
                               "jobSpec": document}
        if header.get("labels"):
            job["labels"] = header["labels"]
        encryption = _encryption(text)
        if encryption:
            job["encryptionSpec"] = encryption
        return job, "CustomJobSpec", header
    raise ImportFailed("no jobSpec or workerPoolSpecs: this is not a CustomJob or a "
                       "CustomJobSpec (gcloud's --config file)")
