"""The streamed data's settings: `--data-files` and friends, the rest through
`--set stream.<field>=<value>`."""

from __future__ import annotations

from dataclasses import dataclass

TOKEN_DTYPES = ("uint16", "uint32")


@dataclass(frozen=True)
class StreamConfig:
    data_files: str | None = None  # a glob, folder or file (local or gs://); None = the corpus
    # Held-out files read the same way; None = no evaluation while streaming (the default
    # corpus is other text than the data: its loss would say nothing about this model).
    eval_data_files: str | None = None
    text_field: str = "text"  # the JSONL field / Parquet string column holding a document
    eos_id: int | None = None  # None = the tokenizer's end-of-text token (byte 0 without one)
    token_dtype: str = "uint16"  # the tokens of raw .bin files (.npy files say their own)
    # The units ranks share out: tokens of a token file, bytes of a JSONL file (Parquet's are
    # its row groups). More units than data-parallel ranks, or some ranks read nothing.
    shard_tokens: int = 1 << 22
    shard_bytes: int = 1 << 26
    buffer_sequences: int = 8  # the shuffle buffer, in sequences per rank


def stream_problems(stream: StreamConfig, corpus_file: str | None = None) -> list[str]:
    """What is wrong with the settings, each with what to change (`corpus_file`: --data)."""
    problems = []
    if stream.data_files and corpus_file:
        problems.append("--data (a text file read whole) and --data-files (streamed files) both "
                        "name the training data: give one")
    if stream.token_dtype not in TOKEN_DTYPES:
        problems.append(
            f"stream.token_dtype must be one of {', '.join(TOKEN_DTYPES)}, "
            f"not {stream.token_dtype!r}")
    for name in ("shard_tokens", "shard_bytes"):
        if getattr(stream, name) < 1:
            problems.append(f"stream.{name} must be >= 1")
    if stream.buffer_sequences < 1:
        problems.append("stream.buffer_sequences must be >= 1")
    if stream.eval_data_files and not stream.data_files:
        problems.append("--eval-data-files needs --data-files")
    return problems
