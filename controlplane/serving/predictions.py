"""One prediction through an endpoint, in the product's shape whatever runtime serves it: the
API's "try it" and the prober both come here.

The product's own server (eager, compiled, aot) takes Vertex's Predict ({"instances": ...}).
Triton takes KServe v2 inference JSON through rawPredict (VERTEX_FACTS.md A6) and answers
logits, so the bytes are generated here, one rawPredict per byte (triton_kserve.py). An
endpoint splitting its traffic between Triton and another runtime cannot be sent one body
both understand, so a prediction to it is refused.
"""

from __future__ import annotations

import time
from typing import Any

from controlplane.backends import errors
from controlplane.backends.serving_base import PredictResult, get_serving_backend
from controlplane.serving import triton_kserve
from controlplane.serving.models import Deployment, Endpoint, ModelEntry

BadInstance = triton_kserve.BadInstance


class MixedRuntimes(ValueError):
    """The endpoint's traffic goes to Triton and to the product's server at once."""


def serves_triton(endpoint: Endpoint) -> bool:
    """Whether the deployed models taking the endpoint's traffic are Triton's."""
    runtimes = set(endpoint.deployments.filter(state=Deployment.State.DEPLOYED,
                                               traffic_percent__gt=0)
                   .values_list("model_entry__runtime", flat=True))
    triton = ModelEntry.Runtime.TRITON in runtimes
    if triton and len(runtimes) > 1:
        raise MixedRuntimes(
            "the endpoint splits its traffic between triton and "
            f"{', '.join(sorted(runtimes - {ModelEntry.Runtime.TRITON}))}, which take "
            "different request bodies: send all traffic to one runtime to predict")
    return triton


def predict(endpoint: Endpoint, instances: list[Any], parameters: Any = None,
            timeout_s: float | None = None) -> PredictResult:
    """BadInstance or MixedRuntimes for a request that cannot be sent; BackendError for one
    Vertex (or the server behind it) failed."""
    if not serves_triton(endpoint):
        return get_serving_backend().predict(endpoint.vertex_name, instances, parameters,
                                             timeout_s=timeout_s,
                                             dedicated_dns=endpoint.dedicated_dns)
    parsed = triton_kserve.parse_instances(instances, parameters)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    predictions: list[dict[str, Any]] = []
    served_by = ""
    for first in range(0, len(parsed), triton_kserve.MAX_BATCH):
        chunk = parsed[first:first + triton_kserve.MAX_BATCH]
        answers, served_by = _generate(endpoint, chunk, deadline)
        predictions += answers
    return PredictResult(predictions, served_by)


def _generate(endpoint: Endpoint, instances: list[triton_kserve.Instance],
              deadline: float | None) -> tuple[list[dict[str, Any]], str]:
    backend = get_serving_backend()
    sequences = [list(i.prompt) for i in instances]
    generated: list[list[int]] = [[] for _ in instances]
    active = list(range(len(instances)))
    served_by = ""
    while active:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise errors.TransientBackendError("RawPredict: the prediction ran past its "
                                               "timeout between steps")
        contexts = [sequences[i] for i in active]
        answer = backend.raw_predict(endpoint.vertex_name,
                                     triton_kserve.request_body(contexts),
                                     timeout_s=remaining, dedicated_dns=endpoint.dedicated_dns)
        served_by = answer.deployed_model_id or served_by
        try:
            tokens = triton_kserve.greedy_tokens(answer.body, [len(c) for c in contexts])
        except triton_kserve.BadAnswer as exc:
            raise errors.BackendError(f"RawPredict: the Triton server's answer: {exc}") from exc
        for i, token in zip(active, tokens, strict=True):
            sequences[i].append(token)
            generated[i].append(token)
        active = [i for i in active if len(generated[i]) < instances[i].max_tokens]
    return [{"text": bytes(g).decode("utf-8", "replace"), "tokens": len(g)}
            for g in generated], served_by
