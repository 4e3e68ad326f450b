"""The routes of vLLM's own server beside OpenAI's, for a replica that stands in for Vertex's
prebuilt vLLM container (Model Garden) where vLLM cannot run (`--vllm-compat`; the emulator
starts it so: localvertex/serving/vllm_local.py).

Model Garden deploys that container with the predict route /generate and the health route
/ping (vertex-ai-samples, notebooks/community/model_garden/*vllm*: serving_container_
predict_route="/generate", serving_container_health_route="/ping"); vLLM's OpenAI server
answers /health and /ping with 200 once the model is loaded, and so does this one.

POST /generate (whatever the predict route is: Model Garden makes it the predict route) takes
two bodies:
- Vertex's, {"instances": [{"prompt", "max_tokens", "temperature", "top_p", "seed", "stop",
  "top_k", "raw_response"}]}: one prediction per instance, a string: "Prompt:\\n<prompt>\\n
  Output:\\n<text>", or the text alone with "raw_response": true (Model Garden's build of
  vLLM answers so; its exact layout is UNCONFIRMED against Google's current image);
- vLLM's own (vllm.entrypoints.api_server), {"prompt": str, ...sampling fields}: {"text":
  [prompt + generated text]}. Its streamed form is not served (refused naming "stream").
top_k has no sampler here: -1 or 0 (off) are accepted, 1 is greedy (temperature 0), any other
value is refused naming it.
"""

from __future__ import annotations

from typing import Any

from contract.prediction import BadInstance, Instance, parse_instance, parse_instances

GENERATE = "/generate"
HEALTH_ROUTES = ("/ping", "/health")
MODEL_GARDEN_KEYS = ("raw_response", "top_k")


def parse_generate(body: dict[str, Any]) -> tuple[list[Instance], list[bool], bool]:
    """(instances, raw_response of each, whether the body was Vertex's) of a /generate body;
    BadInstance naming the field at fault."""
    if "instances" in body:
        raw, plain = [], []
        values = body.get("instances")
        if not isinstance(values, list) or not values:
            raise BadInstance("instances: a non-empty list")
        for i, value in enumerate(values):
            if isinstance(value, dict):
                value = dict(value)
                raw_response = value.pop("raw_response", False)
                if not isinstance(raw_response, bool):
                    raise BadInstance(f"instances[{i}].raw_response: true or false")
                raw.append(raw_response)
                _top_k(value, f"instances[{i}].")
            else:
                raw.append(False)
            plain.append(value)
        return parse_instances(plain, body.get("parameters")), raw, True
    fields = dict(body)
    if fields.pop("stream", False) is not False:
        raise BadInstance("stream: a streamed /generate is not served here; use "
                          "/v1/completions with \"stream\": true")
    _top_k(fields, "")
    if not isinstance(fields.get("prompt"), str):
        raise BadInstance("prompt: a string (or {\"instances\": [...]})")
    return [parse_instance(fields)], [True], False


def _top_k(fields: dict[str, Any], where: str) -> None:
    top_k = fields.pop("top_k", -1)
    if top_k in (-1, 0) and not isinstance(top_k, bool):
        return
    if top_k == 1 and not isinstance(top_k, bool):
        fields["temperature"] = 0
        return
    raise BadInstance(f"{where}top_k: -1 (off) or 1 (greedy) on this server, not {top_k!r}")


def answer(instances: list[Instance], texts: list[str], raw: list[bool],
           vertex: bool) -> dict[str, Any]:
    if not vertex:
        return {"text": [instances[0].prompt.decode("utf-8", "replace") + texts[0]]}
    predictions = [
        text if raw_response else
        f"Prompt:\n{instance.prompt.decode('utf-8', 'replace')}\nOutput:\n{text}"
        for instance, text, raw_response in zip(instances, texts, raw, strict=True)
    ]
    return {"predictions": predictions}
