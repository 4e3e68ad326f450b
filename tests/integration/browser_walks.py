"""What the browser walks of tests/integration/test_browser_pages.py share: a page opened and
watched for console errors (Visit), what no walk's page may do, and the serving walk's steps
(deploying from the endpoint page, the split as the emulator, the API and the page show it)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from config.devstack import Stack
from tests.stacks import Api

ROOT = Path(__file__).resolve().parents[2]
SCREENS = ROOT / "var" / "screens"
AXE_SOURCE = (Path(__file__).parent / "vendor" / "axe-core-4.14.1.min.js").read_text()
AXE_RULES = ["color-contrast", "label"]


class Visit:
    """A page opened in a context, with the console errors it logged."""

    def __init__(self, context: Any, path: str) -> None:
        self.page = context.new_page()
        self.errors: list[str] = []
        self.page.on("console",
                     lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: d.dismiss())
        self.response = self.page.goto(path)
        self.page.wait_for_load_state("networkidle")

    def overflow_px(self) -> int:
        return self.page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth")

    def words_broken_in_tables(self) -> list[str]:
        """Words of table cells laid out over two lines ("Dem/o"): a run of letters and
        digits split where no line may break (a line may break after a hyphen, as in
        "n1-/standard-4"); a path's cell breaks anywhere by design."""
        return self.page.evaluate("""() => {
            const broken = [];
            for (const cell of document.querySelectorAll('.grid td:not(.path), .grid th')) {
                const texts = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
                for (let node = texts.nextNode(); node; node = texts.nextNode()) {
                    for (const word of node.textContent.matchAll(/[\\p{L}\\p{N}_]+/gu)) {
                        const range = document.createRange();
                        range.setStart(node, word.index);
                        range.setEnd(node, word.index + word[0].length);
                        const lines = new Set(Array.from(range.getClientRects())
                            .filter(r => r.width > 0).map(r => Math.round(r.top)));
                        if (lines.size > 1) broken.push(word[0]);
                    }
                }
            }
            return broken.slice(0, 10);
        }""")

    def axe_violations(self) -> list[dict[str, Any]]:
        self.page.evaluate(AXE_SOURCE + "\n;undefined")
        return self.page.evaluate(
            """async (rules) => (await window.axe.run(document, {
                   runOnly: {type: 'rule', values: rules}})).violations.map(v => ({
                   id: v.id, nodes: v.nodes.slice(0, 6).map(
                       n => n.target.join(' ') + ': ' + (n.failureSummary || ''))}))""",
            AXE_RULES)

    def shot(self, name: str) -> None:
        SCREENS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SCREENS / f"{name}.png"), full_page=True)


def transferred(page: Any) -> int:
    """Bytes the browser fetched over the network for the page: the document, its scripts,
    styles and data; a file served from the cache counts 0."""
    return page.evaluate("""() => performance.getEntriesByType('navigation')
                                  .concat(performance.getEntriesByType('resource'))
                                  .reduce((sum, e) => sum + (e.transferSize || 0), 0)""")


# Every runtime the model registry serves; triton and tensorrt name the team's own copy of
# Triton's image (pushed to the emulator's Artifact Registry here).
RUNTIMES = ("eager", "compiled", "aot", "triton", "tensorrt")
TRITON_COPY = "us-docker.pkg.dev/pages/serving/tritonserver:24.10-py3"
# A bound for a hang, not a measure: the AOTInductor build and the ONNX export of the
# packaging jobs, and a compiled replica's torch.compile, share two cores with the rest.
SERVING_TIMEOUT_S = 240
# The shares the deploy form asks, in order, as issue 33 found them shown (100/50/34, "Traffic
# 184%"), and the split the endpoint really has after them: each deploy gives the new model
# its share and the others keep their proportions of the rest (Vertex's DeployModel).
ASKED = {"eager": 100, "compiled": 50, "aot": 34}
REAL_SPLIT = {"eager": 33, "compiled": 33, "aot": 34}
# Predictions sent through the API to see every deployed model answer: with shares of about a
# third, one of three models left out of 60 weighted draws is a 3 x (2/3)^60 ~ 1e-10 chance.
PREDICTIONS = 60
ONE_TOKEN = {"instances": [{"prompt": "def ", "max_tokens": 1}]}


def walk_problems(visit: Visit, what: str) -> list[str]:
    """What a walk's page must not do: scroll sideways, log a console error."""
    problems = []
    if visit.overflow_px() > 0:
        problems.append(f"{what}: scrolls sideways by {visit.overflow_px()} px")
    if visit.errors:
        problems.append(f"{what}: console errors {visit.errors}")
    return problems


def until(what: str, probe: Any, timeout_s: float = SERVING_TIMEOUT_S) -> Any:
    """probe()'s first truthy answer, asked every half second."""
    deadline = time.monotonic() + timeout_s
    while not (found := probe()):
        assert time.monotonic() < deadline, f"waited {timeout_s} s for {what}"
        time.sleep(0.5)
    return found


def entry_in(api: Api, entry: dict[str, Any], *states: str) -> dict[str, Any] | None:
    """The registry entry once in one of `states`; a failure other than those says why."""
    now = api.get(f"/api/v1/serving/models/{entry['id']}/")
    if now["state"] in states:
        return now
    assert now["state"] != "FAILED", (entry["runtime"], now["error_message"])
    return None


def deployed(api: Api, deployment_id: int) -> dict[str, Any] | None:
    now = api.get(f"/api/v1/serving/deployments/{deployment_id}/")
    assert now["state"] != "FAILED", now["error_message"]
    return now if now["state"] == "DEPLOYED" else None


def deploy_from_page(context: Any, api: Api, world: dict[str, Any], endpoint_id: int,
                     entry: dict[str, Any], **fields: str) -> tuple[Visit, dict[str, Any]]:
    """The endpoint page's Deploy form, as a user fills it: the model, then `fields`."""
    until("the endpoint to be ready", lambda: api.get(
        f"/api/v1/serving/endpoints/{endpoint_id}/")["state"] == "READY")
    visit = Visit(context, f"/serving/endpoints/{endpoint_id}/")
    form = visit.page.locator("#deploy-form")
    form.locator("select[name=model]").select_option(str(entry["id"]))
    for name, value in fields.items():
        field = form.locator(f"[name={name}]")
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)
            field.dispatch_event("input")
    form.locator("button[type=submit]").click()
    visit.page.wait_for_load_state()
    said = visit.page.locator(".messages").inner_text()
    assert f"Deploying {entry['display_name']}" in said and "$" in said, said
    [deployment] = [d for d in api.get(f"/api/v1/serving/endpoints/{endpoint_id}/deployments/")
                    if d["model"] == entry["id"]]
    world["undeploy"].append(deployment["id"])
    return visit, deployment


def emulator_split(stack: Stack, vertex_name: str) -> dict[str, int]:
    """The endpoint's traffic split as the emulator holds it, asked with Google's client."""
    from google.cloud import aiplatform_v1
    from google.cloud.aiplatform_v1.services.endpoint_service.transports import (
        EndpointServiceGrpcTransport,
    )

    from localvertex import auth

    channel = auth.channel(f"127.0.0.1:{stack.config.emulator_port}", stack.emulator_token)
    try:
        client = aiplatform_v1.EndpointServiceClient(
            transport=EndpointServiceGrpcTransport(channel=channel))
        return dict(client.get_endpoint(name=vertex_name).traffic_split)
    finally:
        channel.close()


def traffic_on_page(visit: Visit, where: str) -> dict[str, int]:
    """{deployed model id: percent} as a table of the endpoint page shows the split."""
    rows = visit.page.locator(f"{where} tr[data-deployed-model]")
    return {row.get_attribute("data-deployed-model"):
            int(row.locator("td.traffic").inner_text().rstrip("%"))
            for row in rows.all()}
