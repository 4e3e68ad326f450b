"""What the model list shows of an entry's Vertex spec: the container a deployment's replicas
run (image, command, args, port and routes), and a vllm entry's fit on its GPUs."""

from __future__ import annotations

from django import template

from controlplane.backends.serving_base import Container
from controlplane.serving import registry, vllm_runtime
from controlplane.serving.models import ModelEntry

register = template.Library()


@register.filter
def container_spec(entry: ModelEntry) -> Container:
    return registry.container_for(entry)


@register.filter
def vllm_fit(entry: ModelEntry) -> str:
    if entry.runtime != ModelEntry.Runtime.VLLM or not entry.vllm:
        return ""
    return vllm_runtime.fit_text(entry)
