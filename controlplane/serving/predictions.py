"""One prediction through an endpoint, in the product's shape whatever runtime serves it: the
API's "try it" and the prober both come here.

The product's own server (eager, compiled, aot) takes Vertex's Predict ({"instances": ...}).
Triton (the triton and tensorrt runtimes) takes KServe v2 inference JSON through rawPredict
(VERTEX_FACTS.md A6). A triton model generates inside Triton: one rawPredict carries the whole
generation of up to MAX_BATCH instances, and its answer is proxied (triton_kserve.py). A
tensorrt engine, and a triton model registered before that (its container names the logits
model), answers logits, so their bytes are generated here, one rawPredict per byte. An
endpoint splitting its traffic between Triton and another runtime, or between Triton's two
kinds of model, cannot be sent one body all understand, so a prediction to it is refused.

Model Garden's vLLM container (the vllm runtime) takes the same instances at its /generate and
answers each with a string, "Prompt:\n<prompt>\nOutput:\n<text>" unless the instance asks for
`raw_response` (vertex-ai-samples' Model Garden notebooks): the instances go with
raw_response set and the strings come back as {"text": ...}. Its answer has no token count, so
a vllm prediction has no "tokens". It mixes with no other runtime either.
"""

from __future__ import annotations

import time
from typing import Any

from contract import prediction
from controlplane.backends import errors
from controlplane.backends.serving_base import (
    PredictResult,
    ServingBackend,
    get_serving_backend,
)
from controlplane.serving import registry, triton_kserve
from controlplane.serving.models import Deployment, Endpoint, ModelEntry

BadInstance = triton_kserve.BadInstance
VLLM = ModelEntry.Runtime.VLLM


class MixedRuntimes(ValueError):
    """The endpoint's traffic goes to Triton and to the product's server at once."""


def _runtimes(endpoint: Endpoint) -> set[str]:
    return set(endpoint.deployments.filter(state=Deployment.State.DEPLOYED,
                                           traffic_percent__gt=0)
               .values_list("model_entry__runtime", flat=True))


def serves_vllm(endpoint: Endpoint) -> bool:
    """Whether the deployed models taking the endpoint's traffic are vLLM's (MixedRuntimes
    when vLLM shares it with another runtime)."""
    runtimes = _runtimes(endpoint)
    if VLLM in runtimes and runtimes - {VLLM}:
        raise MixedRuntimes(
            f"the endpoint splits its traffic between vllm and "
            f"{', '.join(sorted(runtimes - {VLLM}))}, which answer predictions in different "
            "shapes: send all traffic to one runtime to predict")
    return VLLM in runtimes


def serves_triton(endpoint: Endpoint) -> bool:
    """Whether the deployed models taking the endpoint's traffic are Triton's."""
    runtimes = _runtimes(endpoint)
    # triton and tensorrt models are both Triton answering KServe v2: they mix freely.
    kserve = set(registry.TRITON_RUNTIMES)
    triton = bool(runtimes & kserve)
    if triton and runtimes - kserve:
        raise MixedRuntimes(
            f"the endpoint splits its traffic between {', '.join(sorted(runtimes & kserve))} "
            f"and {', '.join(sorted(runtimes - kserve))}, which take "
            "different request bodies: send all traffic to one runtime to predict")
    return triton


def predict(endpoint: Endpoint, instances: list[Any], parameters: Any = None,
            timeout_s: float | None = None) -> PredictResult:
    """BadInstance or MixedRuntimes for a request that cannot be sent; BackendError for one
    Vertex (or the server behind it) failed."""
    if serves_vllm(endpoint):
        result = get_serving_backend().predict(
            endpoint.vertex_name, [_raw_response(i) for i in instances], parameters,
            timeout_s=timeout_s, dedicated_dns=endpoint.dedicated_dns)
        return PredictResult([{"text": p} if isinstance(p, str) else p
                              for p in result.predictions], result.deployed_model_id)
    if not serves_triton(endpoint):
        return get_serving_backend().predict(endpoint.vertex_name, instances, parameters,
                                             timeout_s=timeout_s,
                                             dedicated_dns=endpoint.dedicated_dns)
    parsed = triton_kserve.parse_instances(instances, parameters)
    if generates_in_triton(endpoint):
        return proxy(get_serving_backend(), endpoint.vertex_name, parsed, timeout_s,
                     endpoint.dedicated_dns)
    return generate(get_serving_backend(), endpoint.vertex_name, parsed, timeout_s,
                    endpoint.dedicated_dns)


def generates_in_triton(endpoint: Endpoint) -> bool:
    """Whether the Triton models taking the endpoint's traffic run the generation loop
    themselves (their container serves the generation model); MixedRuntimes when some do and
    some answer logits."""
    models = {registry.triton_model(args) for args in endpoint.deployments.filter(
        state=Deployment.State.DEPLOYED, traffic_percent__gt=0,
        model_entry__runtime__in=registry.TRITON_RUNTIMES).values_list("model_entry__args",
                                                                        flat=True)}
    if len(models) > 1:
        raise MixedRuntimes(
            f"the endpoint splits its traffic between Triton models serving "
            f"{', '.join(sorted(models))}, which take different request bodies (a generation, "
            "or one step's logits): send all traffic to one kind to predict")
    return models == {registry.TRITON_GENERATE_MODEL}


def proxy(backend: ServingBackend, vertex_name: str, instances: list[triton_kserve.Instance],
          timeout_s: float | None = None, dedicated_dns: str = "") -> PredictResult:
    """The instances' predictions from a triton deployment generating inside Triton: one
    rawPredict for each MAX_BATCH instances, each row's whole generation in its answer."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    predictions: list[dict[str, Any]] = []
    served_by = ""
    for first in range(0, len(instances), triton_kserve.MAX_BATCH):
        chunk = instances[first:first + triton_kserve.MAX_BATCH]
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise errors.TransientBackendError("RawPredict: the prediction ran past its "
                                               "timeout between requests")
        answer = backend.raw_predict(vertex_name, triton_kserve.generation_body(chunk),
                                     timeout_s=remaining, dedicated_dns=dedicated_dns)
        served_by = answer.deployed_model_id or served_by
        try:
            predictions += triton_kserve.generations(answer.body, len(chunk))
        except triton_kserve.BadAnswer as exc:
            raise errors.BackendError(f"RawPredict: the Triton server's answer: {exc}") from exc
    return PredictResult(predictions, served_by)


def _raw_response(instance: Any) -> Any:
    """A vllm instance asking for the generated text alone (not Model Garden's
    "Prompt:/Output:" layout)."""
    if isinstance(instance, str):
        return {"prompt": instance, "raw_response": True}
    if isinstance(instance, dict):
        return {**instance, "raw_response": True}
    return instance


def generate(backend: ServingBackend, vertex_name: str,
             instances: list[triton_kserve.Instance], timeout_s: float | None = None,
             dedicated_dns: str = "") -> PredictResult:
    """Bytes for `instances` (greedy, or drawn at their temperature) from the triton
    deployment behind `vertex_name`, at most the config's max_batch_size prompts per
    rawPredict."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    predictions: list[dict[str, Any]] = []
    served_by = ""
    for first in range(0, len(instances), triton_kserve.MAX_BATCH):
        chunk = instances[first:first + triton_kserve.MAX_BATCH]
        answers, served_by = _generate(backend, vertex_name, chunk, deadline, dedicated_dns)
        predictions += answers
    return PredictResult(predictions, served_by)


def _generate(backend: ServingBackend, vertex_name: str,
              instances: list[triton_kserve.Instance], deadline: float | None,
              dedicated_dns: str) -> tuple[list[dict[str, Any]], str]:
    sequences = [list(i.prompt) for i in instances]
    draws = [i.generator() if i.temperature else None for i in instances]
    generated: list[list[int]] = [[] for _ in instances]
    active = list(range(len(instances)))
    served_by = ""
    while active:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise errors.TransientBackendError("RawPredict: the prediction ran past its "
                                               "timeout between steps")
        contexts = [sequences[i] for i in active]
        answer = backend.raw_predict(vertex_name, triton_kserve.request_body(contexts),
                                     timeout_s=remaining, dedicated_dns=dedicated_dns)
        served_by = answer.deployed_model_id or served_by
        try:
            rows = triton_kserve.last_logits(answer.body, [len(c) for c in contexts])
        except triton_kserve.BadAnswer as exc:
            raise errors.BackendError(f"RawPredict: the Triton server's answer: {exc}") from exc
        tokens = [triton_kserve.choose(scores, instances[i].temperature, draws[i])
                  for i, scores in zip(active, rows, strict=True)]
        for i, token in zip(active, tokens, strict=True):
            sequences[i].append(token)
            generated[i].append(token)
        active = [i for i in active if len(generated[i]) < instances[i].max_tokens]
    return [prediction.prediction(g) for g in generated], served_by
