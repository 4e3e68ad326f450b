"""Which framework a job runs, from its command or, failing that, its first lines.

The command is the container's command and args as the job gives them (a list of words;
a word holding spaces, like `bash -c "torchrun ..."`, is split as a shell would, never run).
"""

from __future__ import annotations

import posixpath
import shlex

from vertexplan.logparse.frameworks import registry

# Module or script paths that name a framework's entry point; the product's own trainers first.
_BUILTIN_MODULES = ("trainers.train", "trainers.jax", "trainers.xla", "trainers.serve",
                    "trainers.ray_train")
_ENTRY_POINTS = (
    *((module, registry.BUILTIN) for module in _BUILTIN_MODULES),
    ("torchtitan.train", "torchtitan"), ("torchtitan/train.py", "torchtitan"),
    ("MaxText.train", "maxtext"), ("MaxText/train.py", "maxtext"),
    ("maxtext.trainers.pre_train.train", "maxtext"),
)
# What a program's name (or `python -m` module) says.
_PROGRAMS = {
    "deepspeed": "deepspeed", "accelerate": "accelerate", "lightning": "lightning",
    "torchrun": "torchrun", "torch.distributed.run": "torchrun",
    "accelerate.commands.launch": "accelerate",
}
# The words after which the next word is a program (or a module run with -m).
_PROGRAM_PLACES = frozenset({"-m", "-c", "&&", ";", "||", "|", "exec"})
# Lines a framework prints at start whatever the script does.
_FIRST_LINES = (
    ("[titan]", "torchtitan"),
    ("Checkpoints will be loaded from and saved to", "torchtitan"),
    ("GPU available: ", "lightning"),
    ("DeepSpeed info: version=", "deepspeed"),
    ("***** Running training *****", "hf_trainer"),
    # An Accelerate loop shaped as transformers' *_no_trainer.py examples logs its
    # Accelerator's state first (`logger.info(accelerator.state)`, accelerate 1.15's repr).
    ("Distributed environment: ", "accelerate"),
)
MAX_WORDS = 200
# Launchers, not frameworks: a job started by one runs some framework's script (an Accelerate
# loop, a DeepSpeed engine, a Trainer) that its first lines may tell.
LAUNCHERS = frozenset({"torchrun"})


def _words(command: list[str]) -> list[str]:
    words: list[str] = []
    for word in command[:MAX_WORDS]:
        if any(ch.isspace() for ch in word):
            try:
                words.extend(shlex.split(word)[:MAX_WORDS])
            except ValueError:  # an unbalanced quote: the word as it is
                words.append(word)
        else:
            words.append(word)
    return words


def from_command(command: list[str]) -> str | None:
    words = _words(command)
    for word in words:
        for entry, framework in _ENTRY_POINTS:
            if word == entry or word.endswith("/" + entry) or word == entry.replace("/", "."):
                return framework
    for index, word in enumerate(words):
        before = words[index - 1] if index else ""
        # Only a word in a program's place names one: not a flag's value or a config path
        # (`--deepspeed configs/deepspeed`).
        if index and before not in _PROGRAM_PLACES:
            continue
        name = word if before == "-m" else posixpath.basename(word)
        if name in _PROGRAMS:
            return _PROGRAMS[name]
    return None


def from_start_lines(lines: list[str]) -> str | None:
    """The framework a line it prints at start names, or None."""
    for line in lines:
        for marker, framework in _FIRST_LINES:
            if marker in line:
                return framework
    return None


def from_lines(lines: list[str]) -> str | None:
    told = from_start_lines(lines)
    if told is not None:
        return told
    job = registry.JobState()
    for line in lines:
        found = registry.recognize(line, job)
        if found is not None:
            return str(found.fields["recognizer"]).split("@", 1)[0]
    return None


def detect(command: list[str], first_lines: list[str]) -> str | None:
    """The framework (a key of registry.FRAMEWORKS), or None when nothing tells."""
    return from_command(command) or from_lines(first_lines)
