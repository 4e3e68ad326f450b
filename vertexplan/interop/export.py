"""A composed CustomJob as gcloud's --config YAML, REST JSON or a Python snippet."""

from __future__ import annotations

import json
import pprint
import shlex
import string
import unicodedata
from pathlib import Path
from typing import Any

import yaml

from vertexplan.interop.wandb_launch import to_text

# wandb: a W&B Launch Vertex queue config (vertexplan/interop/wandb_launch.py).
FORMATS = ("yaml", "json", "python", "wandb")


def gcloud_command(custom_job: dict[str, Any], *, region: str, filename: str = "job.yaml") -> str:
    parts = ["gcloud", "ai", "custom-jobs", "create", f"--region={region}",
             f"--display-name={custom_job.get('displayName', '')}"]
    labels = custom_job.get("labels") or {}
    if labels:
        parts.append("--labels=" + ",".join(f"{k}={v}" for k, v in labels.items()))
    parts.append(f"--config={filename}")
    return shlex.join(parts)


class _Dumper(yaml.SafeDumper):
    """Block style, keys in the composer's order, long strings (JSON in env) on one line."""

    def ignore_aliases(self, data: Any) -> bool:
        return True  # pools share their container's lists: write each out, no &anchors


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def _one_line(text: str) -> str:
    """Control characters written as escapes, so a value can never end the comment line it
    sits on and start YAML of its own (names with them are refused; this holds regardless)."""
    return "".join(
        ch.encode("unicode_escape").decode("ascii")
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch
        for ch in text)


def to_yaml(custom_job: dict[str, Any], *, region: str, filename: str = "job.yaml") -> str:
    """The gcloud --config file: the jobSpec, after a comment line with the gcloud command."""
    body = yaml.dump(custom_job.get("jobSpec") or {}, Dumper=_Dumper, sort_keys=False,
                     default_flow_style=False, allow_unicode=True, width=10**6)
    extra = ""
    if custom_job.get("encryptionSpec"):
        # json.dumps escapes every control character: the value stays on its line.
        extra = ("# encryptionSpec (not a gcloud --config field): "
                 + json.dumps(custom_job["encryptionSpec"], sort_keys=True) + "\n")
    command = _one_line(gcloud_command(custom_job, region=region, filename=filename))
    return f"# {command}\n{extra}{body}"


def to_json(custom_job: dict[str, Any]) -> str:
    return json.dumps(custom_job, indent=2) + "\n"


# The snippet is a file of its own: it is the user's program, not this package's, and the
# Google client it imports belongs to them (this package imports Google's libraries only in
# controlplane/backends/). It lives in vertexplan/interop_templates/, not in a templates/
# directory, where Django's template finders (and the packaging test,
# tests/house/test_wheel.py) would look for it.
_PYTHON_SNIPPET = string.Template(
    (Path(__file__).parent.parent / "interop_templates" / "submit_custom_job.py.txt")
    .read_text())


def to_python(custom_job: dict[str, Any], *, region: str, project: str) -> str:
    """A script that submits the job. Every value that came from a user is a Python literal
    written by repr (pprint), never text spliced into code, a docstring or a comment."""
    literal = pprint.pformat(custom_job, indent=1, width=96, sort_dicts=False)
    return _PYTHON_SNIPPET.substitute(
        display_name=repr(str(custom_job.get("displayName") or "")),
        project=repr(project), region=repr(region), literal=literal)


def export(custom_job: dict[str, Any], fmt: str, *, region: str, project: str = "my-project",
           filename: str = "job.yaml") -> str:
    if fmt == "yaml":
        return to_yaml(custom_job, region=region, filename=filename)
    if fmt == "json":
        return to_json(custom_job)
    if fmt == "python":
        return to_python(custom_job, region=region, project=project)
    if fmt == "wandb":
        return to_text(custom_job)
    raise ValueError(f"unknown export format {fmt!r}; valid: {', '.join(FORMATS)}")
