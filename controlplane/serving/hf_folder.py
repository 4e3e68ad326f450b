"""A Hugging Face model folder as the registry sees it before registering it: where it may be
(under the team's output prefix) and what it holds, read through the storage backend with
bounded reads (config.json, the safetensors index) and existence checks (the weights, every
shard the index lists, the tokenizer). The rules are vertexplan/hf_export.py's."""

from __future__ import annotations

from controlplane.backends import storage
from controlplane.teams import policy
from controlplane.teams.models import Team
from vertexplan import hf_export
from vertexplan.hf_export import ExportRefused, HfExport


def check_place(folder: str, team: Team, job_output: str = "") -> str:
    """`folder` without its trailing slash when it is a gs:// folder under the team's output
    prefix (or inside `job_output`, the output folder of the team's job it came from, which
    an older prefix of the team's may hold); ExportRefused otherwise. The serving replicas
    read it with the product's credentials, so a folder of another team's (or outside every
    team's) is never served."""
    folder = folder.strip().rstrip("/")
    prefix = policy.effective(team).output_prefix
    if policy.segments(folder) is None:
        raise ExportRefused(f"{folder or 'the folder'} is not a gs:// folder (gs://bucket/path, "
                            "no '.', '..' or empty parts)")
    if job_output and policy.inside(folder, job_output) and folder != job_output.rstrip("/"):
        return folder
    if not policy.inside(folder, prefix) or folder == prefix.rstrip("/"):
        raise ExportRefused(f"{folder} is outside team {team.slug}'s output prefix "
                            f"({prefix}/): register a folder under it")
    return folder


def inspect(folder: str) -> HfExport:
    """What the folder holds, checked; ExportRefused naming the file and the key, or
    TransientBackendError when storage cannot be read now."""

    def exists(name: str) -> bool:
        return storage.check_checkpoint(f"{folder}/{name}", None).complete

    raw = storage.read_small(folder, hf_export.CONFIG_FILE, hf_export.CONFIG_LIMIT)
    facts, model_type = hf_export.read_config(raw, folder)
    index = storage.read_small(folder, hf_export.INDEX_FILE, hf_export.INDEX_LIMIT)
    weights = hf_export.read_weights(index, exists, folder)
    tokenizer = hf_export.read_tokenizer(exists, folder)
    return HfExport(facts, model_type, weights, tokenizer)
