"""Rules on what a pool runs: its container or Python package, arguments and environment."""

from __future__ import annotations

import re
from collections.abc import Iterator

from vertexplan.catalog.errors import FieldError, child, item
from vertexplan.catalog.rules._common import (
    C_IDENTIFIER,
    json_type,
    short,
    string_list_errors,
    wrong_type,
)
from vertexplan.catalog.view import Field, JobView, PoolView, read

ENV_MAX = 100
PACKAGE_URIS_MAX = 100
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


# Where a CustomJob's containerSpec.imageUri may live: Vertex pulls a custom training image
# from Artifact Registry (LOCATION-docker.pkg.dev, and gcr.io, which Artifact Registry now
# serves) or from Docker Hub (a name with no registry host, or docker.io). Any other registry
# (nvcr.io, ghcr.io, quay.io, ...) is not pulled: the job fails only once it starts.
# (cloud.google.com/vertex-ai/docs/training/configure-container-settings, containers-overview)
_ARTIFACT_REGISTRY_HOST = re.compile(r"[a-z][a-z0-9-]*-docker\.pkg\.dev")
_GCR_HOST = re.compile(r"(?:[a-z]+\.)?gcr\.io")
_DOCKER_HUB_HOSTS = frozenset({"docker.io", "index.docker.io", "registry-1.docker.io",
                               "registry.hub.docker.com"})
IMAGE_EXAMPLE = "us-central1-docker.pkg.dev/my-project/training/trainer:latest"


def image_registry(uri: str) -> str:
    """The registry host an image reference names ("docker.io" when it names none: docker's
    rule, a first part with a '.' or a ':' or "localhost" is a host)."""
    first, sep, _ = uri.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first.lower()
    return "docker.io"


def vertex_pulls(uri: str) -> bool:
    """Whether a custom job's worker can pull `uri` with no extra setup."""
    host = image_registry(uri)
    return (host in _DOCKER_HUB_HOSTS or _ARTIFACT_REGISTRY_HOST.fullmatch(host) is not None
            or _GCR_HOST.fullmatch(host) is not None)


def _env_errors(f: Field) -> Iterator[FieldError]:
    if not f.present:
        return
    if not isinstance(f.raw, list):
        yield wrong_type(
            f, "a list of {name, value} objects", '[{"name": "NCCL_DEBUG", "value": "INFO"}]'
        )
        return
    if len(f.raw) > ENV_MAX:
        yield FieldError(f.path, f"env has {len(f.raw)} entries; Vertex takes at most {ENV_MAX}")
    seen: dict[str, int] = {}
    for i, entry in enumerate(f.raw):
        entry_path = item(f.path, i)
        if not isinstance(entry, dict):
            yield FieldError(
                entry_path,
                f"env[{i}] must be an object with name and value, got {json_type(entry)}",
            )
            continue
        name = read(entry, entry_path, "name")
        if not name.present or name.raw == "":
            yield FieldError(name.path, f"env[{i}].name is required")
        elif not isinstance(name.raw, str):
            yield wrong_type(name, "a string")
        elif not C_IDENTIFIER.fullmatch(name.raw):
            fixed = re.sub(r"\W", "_", name.raw, flags=re.ASCII)
            fixed = "_" + fixed if fixed[0].isdigit() else fixed
            yield FieldError(
                name.path,
                f"env[{i}].name {short(name.raw)} is not a valid variable name: "
                "letters, digits and '_', not starting with a digit",
                (fixed,),
            )
        elif name.raw in seen:
            yield FieldError(
                name.path,
                f"env[{i}].name {name.raw} repeats env[{seen[name.raw]}]: set each variable once",
            )
        else:
            seen[name.raw] = i
        value = read(entry, entry_path, "value")
        if value.present and not isinstance(value.raw, str):
            fix = (str(value.raw).lower() if isinstance(value.raw, bool) else str(value.raw),)
            yield FieldError(
                value.path, f"env[{i}].value must be a string, got {json_type(value.raw)}", fix
            )


def _container_errors(pool: PoolView) -> Iterator[FieldError]:
    spec = pool.container_spec
    if spec.bad:
        yield wrong_type(spec, "an object (a ContainerSpec)")
        return
    uri = read(spec.value, spec.path, "imageUri")
    if not uri.present or uri.raw == "":
        yield FieldError(
            uri.path,
            "containerSpec.imageUri is required: the training image, e.g. "
            "us-docker.pkg.dev/my-project/training/trainer:latest",
        )
    elif not isinstance(uri.raw, str):
        yield wrong_type(uri, "an image URI")
    elif any(ch.isspace() for ch in uri.raw):
        yield FieldError(uri.path, f"containerSpec.imageUri {short(uri.raw)} contains spaces")
    elif not vertex_pulls(uri.raw):
        image = uri.raw.partition("/")[2]
        yield FieldError(
            uri.path,
            f"containerSpec.imageUri {short(uri.raw)} is on {image_registry(uri.raw)}, which "
            "Vertex does not pull training images from: push it to Artifact Registry and name "
            f"that copy, <region>-docker.pkg.dev/<project>/<repository>/{image} (e.g. "
            f"{IMAGE_EXAMPLE}); Docker Hub images are pulled as they are",
        )
    yield from string_list_errors(read(spec.value, spec.path, "command"), "the entrypoint")
    yield from string_list_errors(read(spec.value, spec.path, "args"), "its arguments")
    yield from _env_errors(read(spec.value, spec.path, "env"))


def _python_package_errors(pool: PoolView) -> Iterator[FieldError]:
    spec = pool.python_package_spec
    if spec.bad:
        yield wrong_type(spec, "an object (a PythonPackageSpec)")
        return
    image = read(spec.value, spec.path, "executorImageUri")
    if not image.present or image.raw == "":
        yield FieldError(
            image.path,
            "pythonPackageSpec.executorImageUri is required: one of Vertex's "
            "prebuilt training images",
        )
    elif not isinstance(image.raw, str):
        yield wrong_type(image, "an image URI")
    uris = read(spec.value, spec.path, "packageUris")
    if not uris.present or uris.raw == []:
        yield FieldError(
            uris.path,
            "pythonPackageSpec.packageUris is required: the gs:// URIs of the "
            "training package and its dependencies",
        )
    elif isinstance(uris.raw, list):
        yield from string_list_errors(uris, "gs:// URIs")
        if len(uris.raw) > PACKAGE_URIS_MAX:
            yield FieldError(
                uris.path, f"packageUris has {len(uris.raw)} entries; at most {PACKAGE_URIS_MAX}"
            )
        for i, uri in enumerate(uris.raw):
            if isinstance(uri, str) and not uri.startswith("gs://"):
                yield FieldError(
                    item(uris.path, i), f"packageUris[{i}] must be a gs:// URI, got {short(uri)}"
                )
    else:
        yield wrong_type(uris, "a list of gs:// URIs")
    module = read(spec.value, spec.path, "pythonModule")
    if not module.present or module.raw == "":
        yield FieldError(
            module.path,
            "pythonPackageSpec.pythonModule is required: the module to run, e.g. trainer.task",
        )
    elif not isinstance(module.raw, str) or not _MODULE.fullmatch(module.raw):
        yield FieldError(
            module.path,
            f"pythonModule must be a dotted Python module name such as "
            f"trainer.task, got {short(module.raw)}",
        )
    yield from string_list_errors(read(spec.value, spec.path, "args"), "its arguments")
    yield from _env_errors(read(spec.value, spec.path, "env"))


def check_tasks(view: JobView) -> Iterator[FieldError]:
    """Each pool runs exactly one of containerSpec and pythonPackageSpec, well formed."""
    for pool in view.active_pools:
        container, package = pool.container_spec, pool.python_package_spec
        if container.present and package.present:
            yield FieldError(
                package.path,
                f"workerPoolSpecs[{pool.index}] has both containerSpec and "
                "pythonPackageSpec: a pool runs one of them",
            )
        elif not container.present and not package.present:
            yield FieldError(
                child(pool.path, "containerSpec"),
                f"workerPoolSpecs[{pool.index}] needs a "
                "containerSpec (the training image and its command) or a pythonPackageSpec",
            )
            continue
        if container.present:
            yield from _container_errors(pool)
        if package.present:
            yield from _python_package_errors(pool)
