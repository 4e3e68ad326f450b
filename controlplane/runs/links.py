"""Links from a job (or an endpoint) to Google's own pages about it: the Vertex console, Logs
Explorer with the job's Cloud Logging filter, Error Reporting, Cloud Monitoring charts of its
nodes' GPUs, and TensorBoard when the job writes to one (formats: VERTEX_FACTS.md, A9).

Every component is percent-encoded on its own (a path segment with no '/' left, a query value
with no '&', '#' or '=' left), so no project, region, id, tensorboard name or filter can end its
part of a URL early. Against the local emulator there are no Google pages: the links point at
the product's own pages about the same thing instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from django.conf import settings
from django.urls import reverse

from controlplane.runs.models import Job
from vertexplan.logparse.events import tracking_link
from vertexplan.logparse.filters import job_filter
from vertexplan.logparse.filters import quote as filter_quote

CONSOLE = "https://console.cloud.google.com"
# Cloud Monitoring's metrics of a training job's nodes (VERTEX_FACTS.md A9: the metric names come
# from secondary sources). Should a name or the Metrics Explorer page state be wrong, the link
# still opens Metrics Explorer in the job's project, where the chart can be picked by hand.
GPU_METRICS = (
    ("gpu_utilisation", "GPU utilisation", "ml.googleapis.com/training/accelerator/utilization"),
    ("gpu_memory", "GPU memory", "ml.googleapis.com/training/accelerator/memory/utilization"),
)
TRAINING_RESOURCE = "cloudml_job"
_TENSORBOARD = re.compile(
    r"projects/(?P<project>[^/\s]+)/locations/(?P<location>[a-z][a-z0-9-]{0,62})"
    r"/tensorboards/(?P<id>[^/\s]+)")
# An experiment (or experiment run) is a Vertex ML Metadata context: CustomJobSpec.experiment
# and experimentRun are projects/{p}/locations/{l}/metadataStores/{store}/contexts/{id}, a run's
# id being "{experiment}-{run}" (vertexplan/composer/tracking.py).
_CONTEXT = re.compile(
    r"projects/(?P<project>[^/\s]+)/locations/(?P<location>[^/\s]+)"
    r"/metadataStores/[^/\s]+/contexts/(?P<id>[^/\s]+)")


@dataclass(frozen=True)
class Link:
    key: str      # stable name in the API: console, logs, errors, gpu_utilisation, ...
    label: str    # what the link says on the page
    url: str


def _segment(value: str) -> str:
    return quote(str(value), safe="")


def _query(**params: str) -> str:
    return urlencode(params, quote_via=quote, safe="")


def console_url(project: str, region: str, job_id: str) -> str:
    """The Vertex console page of a CustomJob (or a HyperparameterTuningJob)."""
    return (f"{CONSOLE}/agent-platform/locations/{_segment(region)}/training/"
            f"{_segment(job_id)}?{_query(project=project)}")


def logs_url(project: str, log_filter: str) -> str:
    return f"{CONSOLE}/logs/query?{_query(project=project, query=log_filter)}"


def errors_url(project: str) -> str:
    # Error Reporting for the project (UNCONFIRMED in VERTEX_FACTS.md: no per-job filter known).
    return f"{CONSOLE}/errors?{_query(project=project)}"


def metrics_url(project: str, metric_type: str, resource_type: str, label: str,
                value: str) -> str:
    """Metrics Explorer charting one metric of one resource. The page state's shape is the
    one the console writes into its own URLs (UNCONFIRMED); the project always holds."""
    series = (f'metric.type="{metric_type}" resource.type="{resource_type}" '
              f'resource.label."{label}"={json.dumps(str(value))}')
    state = {"xyChart": {"dataSets": [{"timeSeriesFilter": {
        "filter": series, "perSeriesAligner": "ALIGN_MEAN"}, "plotType": "LINE"}]},
        "timeSelection": {"timeRange": "1d"}}
    return (f"{CONSOLE}/monitoring/metrics-explorer?"
            f"{_query(project=project, pageState=json.dumps(state, separators=(',', ':')))}")


def tensorboard_url(tensorboard: str, job_id: str) -> str | None:
    """The TensorBoard experiment Vertex writes a job's logs to; None unless `tensorboard` is a
    full resource name (projects/<p>/locations/<l>/tensorboards/<id>)."""
    match = _TENSORBOARD.fullmatch(tensorboard or "")
    if match is None:
        return None
    name = "+".join(_segment(part) for part in tensorboard.split("/"))
    return (f"https://{match.group('location')}.tensorboard.googleusercontent.com/experiment/"
            f"{name}+experiments+{_segment(job_id)}")


def experiment_url(experiment: str, experiment_run: str = "") -> str | None:
    """The Vertex Experiments page of an experiment, or of one of its runs; None unless the
    names are full context resource names. Formats of python-aiplatform
    (google/cloud/aiplatform/metadata/experiment_resources.py Experiment.dashboard_url, and
    utils/_ipython_utils.py display_experiment_run_button, read 2026-08):
      https://console.cloud.google.com/vertex-ai/experiments/locations/{location}/experiments/
      {experiment}?project={project}   and   .../experiments/{experiment}/runs/
      {experiment}-{run}?project={project}
    (still under /vertex-ai/ there, where the training pages moved to /agent-platform/)."""
    match = _CONTEXT.fullmatch(experiment or "")
    if match is None:
        return None
    url = (f"{CONSOLE}/vertex-ai/experiments/locations/{_segment(match['location'])}/"
           f"experiments/{_segment(match['id'])}")
    run = _CONTEXT.fullmatch(experiment_run or "")
    if run is not None:
        url += f"/runs/{_segment(run['id'])}"
    return f"{url}?{_query(project=match['project'])}"


def spec_links(project: str, region: str, job_id: str, job_spec: Any) -> list[Link]:
    """A CustomJob's links with what its jobSpec adds: TensorBoard, Vertex Experiments."""
    spec = job_spec if isinstance(job_spec, dict) else {}

    def text(key: str) -> str:
        value = spec.get(key)
        return value if isinstance(value, str) else ""

    found = google_job_links(project, region, job_id, text("tensorboard"))
    experiment = experiment_url(text("experiment"))
    if experiment is not None:
        found.append(Link("experiment", "Vertex Experiments", experiment))
        run = experiment_url(text("experiment"), text("experimentRun"))
        if run is not None and run != experiment:
            found.append(Link("experiment_run", "Experiment run", run))
    return found


def google_job_links(project: str, region: str, job_id: str,
                     tensorboard: str = "") -> list[Link]:
    links = [
        Link("console", "Vertex AI console", console_url(project, region, job_id)),
        Link("logs", "Logs Explorer", logs_url(project, job_filter(job_id))),
        Link("errors", "Error Reporting", errors_url(project)),
    ]
    links += [Link(key, label, metrics_url(project, metric, TRAINING_RESOURCE, "job_id", job_id))
              for key, label, metric in GPU_METRICS]
    board = tensorboard_url(tensorboard, job_id)
    if board is not None:
        links.append(Link("tensorboard", "TensorBoard", board))
    return links


def local_job_links(job_pk: int) -> list[Link]:
    """The emulator has no console: the job's own page and its parts stand in for it (its
    System panel for Cloud Monitoring's per-replica metrics)."""
    page = reverse("job-detail", args=[job_pk])
    return [
        Link("console", "Job page", page),
        Link("logs", "Logs", f"{page}#job-logs"),
        Link("errors", "Errors", f"{page}?{_query(severity='ERROR')}#job-logs"),
        Link("gpu_utilisation", "System metrics", f"{page}#job-system"),
    ]


# An endpoint's pages. The console path follows the training page's (A9) and, like the logging
# resource type, is UNCONFIRMED; the monitored resource and metric are from VERTEX_FACTS.md
# section 6.
ENDPOINT_RESOURCE = "aiplatform.googleapis.com/Endpoint"
ENDPOINT_LATENCY = "aiplatform.googleapis.com/prediction/online/prediction_latencies"
ENDPOINT_ERRORS = "aiplatform.googleapis.com/prediction/online/error_count"
_ENDPOINT = re.compile(
    r"projects/(?P<project>[^/\s]+)/locations/(?P<location>[^/\s]+)/endpoints/(?P<id>[^/\s]+)")


def endpoint_filter(endpoint_id: str) -> str:
    return (f"resource.type={filter_quote(ENDPOINT_RESOURCE)} AND "
            f"resource.labels.endpoint_id={filter_quote(endpoint_id)}")


def google_endpoint_links(project: str, region: str, endpoint_id: str) -> list[Link]:
    return [
        Link("console", "Vertex AI console",
             f"{CONSOLE}/agent-platform/locations/{_segment(region)}/endpoints/"
             f"{_segment(endpoint_id)}?{_query(project=project)}"),
        Link("logs", "Logs Explorer", logs_url(project, endpoint_filter(endpoint_id))),
        Link("errors", "Error Reporting", errors_url(project)),
        Link("latency", "Latency", metrics_url(project, ENDPOINT_LATENCY, ENDPOINT_RESOURCE,
                                               "endpoint_id", endpoint_id)),
        Link("error_count", "Prediction errors",
             metrics_url(project, ENDPOINT_ERRORS, ENDPOINT_RESOURCE, "endpoint_id",
                         endpoint_id)),
    ]


def for_endpoint(vertex_name: str, page: str) -> list[Link]:
    """An endpoint's links from its Vertex resource name (none before it has one); against
    the emulator, its own page (`page`) and latency chart."""
    if emulated():
        return [Link("console", "Endpoint page", page),
                Link("latency", "Latency", f"{page}#latency-chart")]
    match = _ENDPOINT.fullmatch(vertex_name or "")
    if match is None:
        return []
    return google_endpoint_links(match.group("project"), match.group("location"),
                                 match.group("id"))


TRACKING_LABELS = {"wandb": "W&B run", "vertex_experiments": "Vertex Experiments",
                   "tensorboard": "TensorBoard"}


def tracking_for(job: Job) -> list[Link]:
    """Where the trainer said the run is tracked, checked again as it is shown: only http(s)
    URLs ever become links."""
    found = []
    for provider, url in sorted((job.tracking or {}).items()):
        checked = tracking_link({"provider": provider, "run_url": url})
        if checked is not None:
            found.append(Link(provider, TRACKING_LABELS[provider], checked[1]))
    return found


def emulated() -> bool:
    return bool(settings.VERTEX_EMULATOR_ADDR)


def for_job(job: Job) -> list[Link]:
    """The links of the job's current attempt; none before Vertex has given it an id."""
    if emulated():
        return local_job_links(job.pk)
    attempt = job.current_attempt()
    if attempt is None or not attempt.vertex_job_id:
        return []
    return spec_links(job.project, attempt.region or job.region, attempt.vertex_job_id,
                      (job.custom_job or {}).get("jobSpec"))
