"""The corpus tokenized with a `tokenizers` tokenizer.json instead of read as bytes.

The text is tokenized once, on every rank alike, into int32 token arrays that stand where the
byte arrays stood: batches are still a pure function of (seed, step) over the token array
(trainers/corpus.py), so every world size trains on the same data and a resumed run needs no
loader state. The held-out part is the same text as the byte corpus's, tokenized on its own.
"""

from __future__ import annotations

import numpy as np

from trainers.corpus import Corpus
from trainers.torch.models.hf_config import read_tokenizer


def encode(tokenizer, raw: bytes) -> np.ndarray:
    # A cut between the training and held-out bytes may fall inside a character.
    text = raw.decode("utf-8", errors="replace")
    return np.asarray(tokenizer.encode(text, add_special_tokens=False).ids, dtype=np.int32)


def tokenized(corpus: Corpus, tokenizer_path: str, block_size: int) -> Corpus:
    tokenizer = read_tokenizer(tokenizer_path)
    train = encode(tokenizer, corpus.train.tobytes())
    val = encode(tokenizer, corpus.val.tobytes())
    for part, array in (("training", train), ("held-out", val)):
        if len(array) < 2 * (block_size + 1):
            raise ValueError(
                f"corpus {corpus.source}: its {part} text is {len(array)} tokens with "
                f"{tokenizer_path}, too few for model.block_size {block_size}")
    return Corpus(train=train, val=val, source=f"{corpus.source} ({tokenizer_path})",
                  sha256=corpus.sha256)
