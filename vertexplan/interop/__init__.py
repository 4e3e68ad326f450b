"""A composed job in the formats people already use, and back into a job request.

Exports (``export``):
* YAML for ``gcloud ai custom-jobs create --config FILE``: gcloud reads a CustomJobSpec there
  (display name, labels and region are flags), so the file is the jobSpec and its first line is
  the gcloud command with those flags; an import reads them back from that line.
* REST JSON: the CustomJob exactly as JobService.CreateCustomJob takes it.
* Python: a google-cloud-aiplatform (GAPIC) snippet that submits the same CustomJob.
* wandb: a W&B Launch Vertex queue config (``wandb_launch``), with the CustomJob's fields it
  has no place for named by ``wandb_launch.unsupported``.

Imports take a CustomJob, a CustomJobSpec or a W&B Launch Vertex queue config (YAML or JSON:
``document``) and give the job
request that composes to it (``request``). The strategy's configuration is read back from the
generated arguments and environment only when composing the reading gives the very same
container (``launch``); otherwise the command, arguments and environment are kept verbatim, so
nothing is lost either way.
"""

from vertexplan.interop import wandb_launch
from vertexplan.interop.document import GCLOUD_PREFIX, ImportFailed, parse
from vertexplan.interop.export import FORMATS, export, gcloud_command, to_json, to_python, to_yaml
from vertexplan.interop.request import (
    OUTPUT_ONLY,
    UNSUPPORTED_MACHINE,
    UNSUPPORTED_POOL,
    Imported,
    import_text,
    to_request,
)

__all__ = [
    "FORMATS",
    "GCLOUD_PREFIX",
    "OUTPUT_ONLY",
    "UNSUPPORTED_MACHINE",
    "UNSUPPORTED_POOL",
    "ImportFailed",
    "Imported",
    "export",
    "gcloud_command",
    "import_text",
    "parse",
    "to_json",
    "to_python",
    "to_request",
    "to_yaml",
    "wandb_launch",
]
