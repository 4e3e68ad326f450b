"""How a team's own framework is told to start from a checkpoint, and how its checkpoint shows
it is complete (issue 36): what a resubmission from a chosen checkpoint adds to the job's
arguments, and what the control plane looks for before it pays for one.

The product's own trainers read CP_RESUME_FROM; another framework reads its own argument, as
its documentation gives it:
- Hugging Face Trainer scripts (HfArgumentParser over TrainingArguments, and so the example
  scripts launched by Accelerate or DeepSpeed): `--resume_from_checkpoint <folder>`, a local
  path (a bucket is read through Vertex's Cloud Storage FUSE mount, /gcs/<bucket>/...); the
  folder is complete once `trainer_state.json` is in it (Trainer writes it after the weights
  and optimizer, transformers 4.40-5.24). An Accelerate loop's save_state folder is complete
  once the first process's `random_states_0.pkl` is in it (written last, accelerate 1.15).
  A DeepSpeed engine loop's checkpoint is its tag folder (`<save_dir>/global_step<N>`, what
  `load_checkpoint(save_dir, tag)` reads), given to the script as --resume_from_checkpoint too;
  complete once the first model-parallel rank's `mp_rank_00_model_states.pt` is in it (with
  ZeRO, each rank's optimizer shard is written after it: not checked; deepspeed 0.19).
- PyTorch Lightning's LightningCLI: `--ckpt_path <file>` (fsspec reads gs://); one `.ckpt`
  file.
- torchtitan: `--checkpoint.initial_load_path <step folder>` (a run that loads another run's
  checkpoint; its own `--checkpoint.folder` stays empty until it saves; torchtitan's
  docs/checkpoint.md); a DCP folder is complete once its `.metadata` is written.
- MaxText: `load_parameters_path=<step folder>/items` (its key=value arguments; gs:// as is;
  the checkpoint the log names is Orbax's step folder); an Orbax step is complete once
  `_CHECKPOINT_METADATA` is written.
An argument the job already gives for the same purpose is replaced, never doubled.
"""

from __future__ import annotations

from dataclasses import dataclass

GCS = "gs://"
FUSE = "/gcs/"


@dataclass(frozen=True)
class Resume:
    flag: str
    # "separate": `flag value`; "key=value": MaxText's `flag=value`.
    form: str
    # Whether the framework reads a local path (a bucket through the FUSE mount).
    local_path: bool
    # What a complete checkpoint holds (a file in its folder; any of several), or None: the
    # path is a file.
    marker: str | tuple[str, ...] | None
    # What the framework reads below the checkpoint's folder ("" for the folder itself).
    below: str = ""


_HF = Resume("--resume_from_checkpoint", "separate", local_path=True,
             marker="trainer_state.json")
# Accelerate runs HF Trainer scripts (trainer_state.json) and loops of a team's own, whose
# save_state writes the first process's random states last (random_states_0.pkl); its
# examples take the folder as --resume_from_checkpoint too.
_ACCELERATE = Resume("--resume_from_checkpoint", "separate", local_path=True,
                     marker=("trainer_state.json", "random_states_0.pkl"))
# DeepSpeed runs HF Trainer scripts (trainer_state.json) and engine loops of a team's own.
_DEEPSPEED = Resume("--resume_from_checkpoint", "separate", local_path=True,
                    marker=("trainer_state.json", "mp_rank_00_model_states.pt"))
RESUMES: dict[str, Resume] = {
    "hf_trainer": _HF,
    "accelerate": _ACCELERATE,
    "deepspeed": _DEEPSPEED,
    "lightning": Resume("--ckpt_path", "separate", local_path=False, marker=None),
    "torchtitan": Resume("--checkpoint.initial_load_path", "separate", local_path=False,
                         marker=".metadata"),
    "maxtext": Resume("load_parameters_path", "key=value", local_path=False,
                      marker="_CHECKPOINT_METADATA", below="items"),
}


def as_fuse(path: str) -> str:
    """gs://bucket/key as Vertex mounts it in every replica (/gcs/bucket/key)."""
    return FUSE + path[len(GCS):] if path.startswith(GCS) else path


def as_gcs(path: str) -> str:
    """/gcs/bucket/key as the bucket's URI (what storage is asked about)."""
    return GCS + path[len(FUSE):] if path.startswith(FUSE) else path


def resume_args(framework: str | None, args: list[str], path: str) -> list[str] | None:
    """The job's arguments that start `framework` from the checkpoint at `path`, or None when
    the framework has no argument for it (the product's own trainers read CP_RESUME_FROM)."""
    resume = RESUMES.get(framework or "")
    if resume is None:
        return None
    where = as_fuse(path) if resume.local_path else as_gcs(path)
    if resume.below and not where.rstrip("/").endswith("/" + resume.below):
        where = f"{where.rstrip('/')}/{resume.below}"
    kept: list[str] = []
    skip_next = False
    for arg in args:
        if skip_next:
            skip_next = False
            continue
        if resume.form == "separate" and arg == resume.flag:
            skip_next = True
            continue
        if arg.startswith(resume.flag + "="):
            continue
        kept.append(arg)
    if resume.form == "key=value":
        return [*kept, f"{resume.flag}={where}"]
    return [*kept, resume.flag, where]
