"""A job in a Python file, read with ``ast`` only (nothing in the file is ever run).

Two shapes are read: a dict literal holding jobSpec/workerPoolSpecs in either spelling (a GAPIC
``create_custom_job`` body, our own export), and the SDK's
``aiplatform.CustomJob(display_name=..., worker_pool_specs=..., ...)`` with the keyword arguments
of that job's ``run(...)`` or ``submit(...)`` and of ``aiplatform.init(...)``. Each argument the
SDK turns into a CustomJob field is written where the SDK writes it; one whose value is not a
literal, or that the importer has no place for, is refused on its own name (``run(timeout=)``)
rather than left out, so a job asked for as SPOT never imports as STANDARD.
"""

from __future__ import annotations

import ast
import contextlib
import copy
from dataclasses import dataclass, field
from typing import Any

_JOB_KEYS = ("jobSpec", "job_spec")
_SPEC_KEYS = ("workerPoolSpecs", "worker_pool_specs")
# aiplatform.CustomJob(...) keyword -> where the SDK puts it (a dotted CustomJob path).
CONSTRUCTOR = {"display_name": "displayName", "worker_pool_specs": "jobSpec.workerPoolSpecs",
               "base_output_dir": "jobSpec.baseOutputDirectory.outputUriPrefix",
               "labels": "labels", "encryption_spec_key_name": "encryptionSpec.kmsKeyName",
               "persistent_resource_id": "jobSpec.persistentResourceId"}
# job.run(...) / job.submit(...) keyword -> where the SDK puts it (CustomJob._run).
RUN = {"service_account": "jobSpec.serviceAccount", "network": "jobSpec.network",
       "timeout": "jobSpec.scheduling.timeout",
       "restart_job_on_worker_restart": "jobSpec.scheduling.restartJobOnWorkerRestart",
       "disable_retries": "jobSpec.scheduling.disableRetries",
       "scheduling_strategy": "jobSpec.scheduling.strategy",
       "max_wait_duration": "jobSpec.scheduling.maxWaitDuration",
       "enable_web_access": "jobSpec.enableWebAccess", "tensorboard": "jobSpec.tensorboard",
       "persistent_resource_id": "jobSpec.persistentResourceId",
       "psc_interface_config": "jobSpec.pscInterfaceConfig",
       "experiment": "jobSpec.experiment", "experiment_run": "jobSpec.experimentRun"}
SECONDS = ("timeout", "max_wait_duration")
# How the client waits or authenticates: nothing of the job.
CLIENT_ONLY = ("sync", "create_request_timeout", "credentials")
STRATEGIES = ("STRATEGY_UNSPECIFIED", "ON_DEMAND", "LOW_COST", "STANDARD", "SPOT", "FLEX_START")
# The most values (list items, dict entries, scalars) a file's literals may copy from names
# bound earlier, all uses together: a few hundred bytes of names that each repeat the one
# before 16 times would otherwise expand to millions (an import bomb). An SDK job file copies
# tens to hundreds (a pool reused for the workers).
MAX_VALUES = 10_000
_NOT_LITERAL = ("is not a literal: the importer reads literal values only (it never runs the "
                "file); write the value itself, or set it in the form after importing")


class _NotLiteral(ValueError):
    """A node that is not made of literals (and names bound to literals)."""


class TooLarge(Exception):
    """The file's literals expand past MAX_VALUES: the import is refused as a whole."""


class _Names(dict[str, Any]):
    """Names bound to literals, how many values each expands to, and how many values the
    file's literals have expanded to so far (checked before a name's value is copied)."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: dict[str, int] = {}
        self.spent = 0

    def spend(self, values: int) -> None:
        self.spent += values
        if self.spent > MAX_VALUES:
            raise TooLarge(f"the Python file's names expand to more than {MAX_VALUES} "
                           "values (each use of a name copies its value): write the job's "
                           "values out instead of repeating names")


@dataclass
class PythonJob:
    document: dict[str, Any]
    # Keyed by the argument as written: "run(timeout=)", "CustomJob(staging_bucket=)".
    errors: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    region: str | None = None  # aiplatform.init(location=...)


def _literal(node: ast.AST, names: _Names) -> Any:
    """ast.literal_eval, plus names bound to literals earlier in the file and ``**`` in
    dicts, as SDK samples write pools (``[chief, {**chief, "replica_count": 2}]``)."""
    return _sized(node, names)[0]


def _sized(node: ast.AST, names: _Names) -> tuple[Any, int]:
    """(the literal, how many values it holds). Each use of a name is counted against the
    file's budget before its value is copied: the rest of a literal is bounded by the text."""
    if isinstance(node, ast.Name):
        if node.id in names:
            size = names.sizes[node.id]
            names.spend(size)
            return copy.deepcopy(names[node.id]), size
        raise _NotLiteral(node.id)
    if isinstance(node, ast.Dict):
        out: dict[Any, Any] = {}
        size = 1
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                unpacked, count = _sized(value, names)
                if not isinstance(unpacked, dict):
                    raise _NotLiteral("**")
                out.update(unpacked)
            else:
                key_value, key_count = _sized(key, names)
                out[key_value], count = _sized(value, names)
                count += key_count
            size += count
        return out, size
    if isinstance(node, ast.List | ast.Tuple):
        items = [_sized(e, names) for e in node.elts]
        return [value for value, _ in items], 1 + sum(count for _, count in items)
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise _NotLiteral(type(node).__name__) from None
    return value, _count(value)


# A string or bytes counts one value per this many characters: names repeating a long string
# are as costly downstream (the document is serialised, validated, shown) as many values.
CHARS_PER_VALUE = 100


def _count(value: Any) -> int:
    """How many values a literal_eval result holds (a set literal holds its items, a long
    string counts by its length): a name bound to it copies them all."""
    if isinstance(value, list | tuple | set | frozenset):
        return 1 + sum(_count(item) for item in value)
    if isinstance(value, str | bytes):
        return 1 + len(value) // CHARS_PER_VALUE
    return 1


def _dotted(node: ast.AST) -> str:
    """``aiplatform.gapic.Scheduling.Strategy.SPOT`` -> that text ('' for anything else)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else ""
    return ""


@dataclass
class _Calls:
    """The calls of the file that make up the SDK job."""

    job: ast.Call | None = None
    variable: str | None = None
    runs: list[ast.Call] = field(default_factory=list)
    init: ast.Call | None = None
    names: _Names = field(default_factory=_Names)


def _is_job_call(node: ast.Call) -> bool:
    return any(k.arg == "worker_pool_specs" for k in node.keywords)


def _collect(tree: ast.Module) -> tuple[dict[str, Any] | None, _Calls]:
    """(a job dict literal, if the file has one; the SDK calls) in the order they run."""
    calls = _Calls()
    for statement in tree.body:
        nodes = list(ast.walk(statement))
        for node in nodes:
            if isinstance(node, ast.Dict):
                try:
                    value = _literal(node, calls.names)
                except (_NotLiteral, RecursionError):
                    continue
                if isinstance(value, dict) and any(k in value for k in (*_JOB_KEYS,
                                                                         *_SPEC_KEYS)):
                    return value, calls
            elif isinstance(node, ast.Call) and calls.job is None and _is_job_call(node):
                calls.job = node
                if isinstance(statement, ast.Assign) and statement.value is node and \
                        len(statement.targets) == 1 and \
                        isinstance(statement.targets[0], ast.Name):
                    calls.variable = statement.targets[0].id
        # Then the calls on the job: ``CustomJob(...).submit()`` has the job inside.
        for node in nodes:
            if isinstance(node, ast.Call) and node is not calls.job:
                _note_call(node, calls)
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            with contextlib.suppress(_NotLiteral, RecursionError):
                name = statement.targets[0].id
                calls.names[name], calls.names.sizes[name] = _sized(statement.value,
                                                                    calls.names)
    return None, calls


def _note_call(node: ast.Call, calls: _Calls) -> None:
    """Keep ``node`` if it is the job's run()/submit() or aiplatform.init()."""
    if isinstance(node.func, ast.Attribute) and node.func.attr in ("run", "submit"):
        owner = node.func.value
        if (isinstance(owner, ast.Name) and calls.variable and owner.id == calls.variable) \
                or (calls.job is not None and owner is calls.job):
            calls.runs.append(node)
    elif _dotted(node.func).endswith(".init") or _dotted(node.func) == "init":
        calls.init = calls.init or node


def read(text: str) -> PythonJob | None:
    """The job of a Python file, or None when it has neither shape; TooLarge when its
    literals expand past MAX_VALUES."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    document, calls = _collect(tree)
    if document is not None:
        return PythonJob(document=document)
    if calls.job is None:
        return None
    out = PythonJob(document={})
    init = _init(calls, out)
    _arguments(calls.job, "CustomJob", CONSTRUCTOR, calls.names, out, init)
    for call in calls.runs:
        _arguments(call, call.func.attr if isinstance(call.func, ast.Attribute) else "run",
                   RUN, calls.names, out, init)
    out.document.setdefault("jobSpec", {})
    return out


# aiplatform.init(...) keywords the SDK's CustomJob takes as defaults, and those that say
# nothing about the job (where the client connects, how it authenticates).
INIT_DEFAULTS = {"staging_bucket": "CustomJob", "encryption_spec_key_name": "CustomJob",
                 "service_account": "run"}
INIT_IGNORED = ("project", "location", "credentials", "api_endpoint", "api_key",
                "api_transport", "request_metadata", "experiment", "experiment_description",
                "experiment_tensorboard", "network")


def _init(calls: _Calls, out: PythonJob) -> dict[str, Any]:
    """aiplatform.init's literal keywords; its location is the job's region."""
    found: dict[str, Any] = {}
    for keyword in calls.init.keywords if calls.init is not None else ():
        if keyword.arg is None:
            continue
        try:
            found[keyword.arg] = _literal(keyword.value, calls.names)
        except (_NotLiteral, RecursionError):
            if keyword.arg in INIT_DEFAULTS or keyword.arg == "location":
                out.errors.setdefault(f"aiplatform.init({keyword.arg}=)", []).append(
                    f"aiplatform.init({keyword.arg}=...) {_NOT_LITERAL}")
    if isinstance(found.get("location"), str):
        out.region = found["location"]
    return found


def _put(document: dict[str, Any], path: str, value: Any) -> None:
    *parents, leaf = path.split(".")
    node = document
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


def _arguments(call: ast.Call, method: str, mapping: dict[str, str], names: _Names,
               out: PythonJob, init: dict[str, Any]) -> None:
    """Each keyword of ``call`` written where the SDK writes it, or refused on its name."""
    if call.args:
        out.errors.setdefault(f"{method}(...)", []).append(
            f"{method}(...) has positional arguments: the importer reads arguments given by "
            "name only (service_account=..., timeout=...)")
    given: dict[str, Any] = {}
    for keyword in call.keywords:
        where = f"{method}({keyword.arg}=)" if keyword.arg else f"{method}(**)"
        if keyword.arg is None:
            out.errors.setdefault(where, []).append(
                f"{method}(**...) is not read: write each argument by name")
        elif keyword.arg in CLIENT_ONLY:
            continue
        elif method == "CustomJob" and keyword.arg in ("project", "location"):
            # The control plane submits to its own project; the location is the region.
            with contextlib.suppress(_NotLiteral, RecursionError):
                location = _literal(keyword.value, names)
                if keyword.arg == "location" and isinstance(location, str):
                    out.region = location
        elif keyword.arg not in mapping and not (keyword.arg == "staging_bucket"
                                                 and method == "CustomJob"):
            out.errors.setdefault(where, []).append(
                f"{method}({keyword.arg}=...) is not an argument the importer knows how to "
                f"carry to the job; it reads: {', '.join(sorted(mapping))}")
        else:
            try:
                given[keyword.arg] = _value(keyword.arg, keyword.value, names)
            except (_NotLiteral, RecursionError):
                out.errors.setdefault(where, []).append(f"{method}({keyword.arg}=...) "
                                                        f"{_NOT_LITERAL}")
            except ValueError as exc:
                out.errors.setdefault(where, []).append(f"{method}({keyword.arg}=...): {exc}")
    for name, source in INIT_DEFAULTS.items():
        if source == method.replace("submit", "run") and name not in given and name in init:
            given[name] = init[name]
    _map(given, method, mapping, out)


def _value(arg: str, node: ast.AST, names: _Names) -> Any:
    """A keyword's value: a literal, a Scheduling.Strategy member or a PscInterfaceConfig."""
    if arg == "scheduling_strategy":
        dotted = _dotted(node)
        if dotted.rsplit(".", 1)[-1] in STRATEGIES and "." in dotted:
            return dotted.rsplit(".", 1)[-1]
        value = _literal(node, names)
        if isinstance(value, str) and value in STRATEGIES:
            return value
        if isinstance(value, int) and not isinstance(value, bool) and \
                value in (0, 1, 2, 3, 4, 6):
            return STRATEGIES[min(value, 5)]
        raise ValueError(f"{value!r} is not a Scheduling.Strategy: write "
                         "aiplatform.gapic.Scheduling.Strategy.SPOT, FLEX_START or STANDARD")
    if arg == "psc_interface_config" and isinstance(node, ast.Call) and \
            _dotted(node.func).endswith("PscInterfaceConfig") and not node.args:
        return {k.arg: _literal(k.value, names) for k in node.keywords if k.arg}
    return _literal(node, names)


def _seconds(arg: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{arg} is a whole number of seconds (the SDK's int), got {value!r}")
    return f"{value}s"


def _map(given: dict[str, Any], method: str, mapping: dict[str, str], out: PythonJob) -> None:
    """The keywords read, written into the document where the SDK writes them."""
    bucket = given.pop("staging_bucket", None)
    if bucket is not None and "base_output_dir" not in given and method == "CustomJob":
        out.warnings.append(
            f"staging_bucket {bucket!r}: the SDK writes the job's output under "
            f"{bucket}/aiplatform-custom-job-<time>; the control plane writes each job's "
            "output under its own folder instead. Give base_output_dir to choose the folder")
    for arg, value in given.items():
        where = f"{method}({arg}=)"
        try:
            if arg in SECONDS:
                if arg == "timeout" and not value:
                    continue  # the SDK sends no timeout for 0 or None: Vertex's 7 days
                value = _seconds(arg, value)
            elif arg in ("experiment", "experiment_run") and value is not None and not (
                    isinstance(value, str) and value.startswith("projects/")):
                raise ValueError(f"{value!r} is a name the SDK looks up in the project "
                                 "(a call to Vertex); write the resource name, "
                                 "projects/<p>/locations/<l>/metadataStores/default/"
                                 "contexts/<name>")
        except ValueError as exc:
            out.errors.setdefault(where, []).append(f"{method}({arg}=...): {exc}")
            continue
        if value is None or (value is False and arg != "restart_job_on_worker_restart"):
            continue  # the SDK leaves the field out
        _put(out.document, mapping[arg], value)
