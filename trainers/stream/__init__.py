"""Streamed training data: sharded files read per rank, tokenized on the fly, packed into
sequences, with the read position as checkpointable state. numpy, pyarrow and fsspec only (no
torch), so the JAX and TPU images can use it as the PyTorch trainer does.

    --data-files 'gs://bucket/data/train-*.parquet'   a glob, a folder or one file; local or gs://
    --text-field body                                  JSONL field / Parquet column (default text)
    --tokenizer tokenizer.json                         a `tokenizers` file; none = UTF-8 bytes
    --eos-id 0                                         the separator between documents

Formats (trainers/stream/files.py): JSON lines (.jsonl) and Parquet (.parquet) text, tokenized
as read; pre-tokenized arrays (.npy, or raw .bin of uint16 / uint32 tokens as nanoGPT and
Megatron write them, `--set stream.token_dtype=uint32`), read by memory mapping or ranged reads
and never tokenized. Documents end with the EOS token; the token stream is cut into sequences
of block_size + 1 tokens (a context and its shifted targets), each starting on the last token
of the one before, so every token is a target once.

Who reads what (trainers/stream/reader.py): the files split into units (a Parquet row group,
`stream.shard_bytes` of a JSONL file, `stream.shard_tokens` tokens of a token file). Every epoch
the units are shuffled by (seed, epoch) and data-parallel rank i of n reads units i, i+n, ...:
the ranks' portions are disjoint and together cover the data. Sequences pass through a
shuffle buffer of `stream.buffer_sequences` sequences. Memory is that buffer, one document and
one partial sequence per rank, whatever the dataset's size.

The position (`TokenStream.state()`, a JSON-serialisable dict: epoch, unit, document, offset in
it, the partial sequence, the buffer and its draw count) goes into each rank's checkpoint, and
`restore` continues exactly where it was: a resumed run sees the batches an uninterrupted one
would. Unlike the corpus's batches, which global batch a step trains on depends on the number
of data-parallel ranks (each reads its own units): a position saved with another number, other
files or another block size is refused (`StreamChanged`), and the trainer starts the stream
over with a data_changed warning.
"""

from trainers.stream.config import StreamConfig, stream_problems
from trainers.stream.reader import StreamChanged, TokenStream, open_stream
from trainers.stream.tokens import TextEncoder

__all__ = [
    "StreamChanged",
    "StreamConfig",
    "TextEncoder",
    "TokenStream",
    "open_stream",
    "stream_problems",
]
