"""Text to token ids: a `tokenizers` tokenizer.json, or the UTF-8 bytes (the byte-level GPT's
vocabulary of 256), each document followed by the end-of-text token."""

from __future__ import annotations

from typing import Any

import numpy as np

from trainers.storage import storage_for

# Names tokenizers give their end-of-text token, in the order they are looked for.
EOS_NAMES = ("<|endoftext|>", "</s>", "<eos>", "<|end_of_text|>", "<|eot_id|>", "<|im_end|>")
BYTES_EOS = 0  # NUL: never part of text, so it cannot be confused with a document's bytes


class TextEncoder:
    """Encodes documents for a model of `vocab_size` tokens."""

    def __init__(self, tokenizer: str | None, eos_id: int | None, vocab_size: int) -> None:
        self.vocab_size = vocab_size
        self.tokenizer: Any = None
        if eos_id is not None and not 0 <= eos_id < vocab_size:
            raise ValueError(f"--eos-id {eos_id} is outside the model's vocabulary (0.."
                             f"{vocab_size - 1})")
        if tokenizer is None:
            if vocab_size < 256:
                raise ValueError(f"byte-level text needs vocab_size >= 256, not {vocab_size}")
            self.eos_id = BYTES_EOS if eos_id is None else eos_id
            return
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_str(storage_for(tokenizer).read_bytes(tokenizer).decode())
        size = self.tokenizer.get_vocab_size(with_added_tokens=True)
        if size > vocab_size:
            raise ValueError(
                f"tokenizer {tokenizer} has {size} tokens, more than the model's vocab_size "
                f"{vocab_size}")
        self.eos_id = eos_id if eos_id is not None else self._eos_of(tokenizer)

    def _eos_of(self, path: str) -> int:
        for name in EOS_NAMES:
            found = self.tokenizer.token_to_id(name)
            if found is not None:
                return int(found)
        raise ValueError(
            f"tokenizer {path} has none of the end-of-text tokens {', '.join(EOS_NAMES)}: "
            "name one with --eos-id")

    def encode(self, text: str) -> np.ndarray:
        """The document's tokens (uint32) and the end-of-text token. No other special tokens:
        a packed sequence starts anywhere in a document."""
        if self.tokenizer is None:
            ids = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        else:
            ids = np.asarray(self.tokenizer.encode(text, add_special_tokens=False).ids)
        out = np.empty(len(ids) + 1, dtype=np.uint32)
        out[:-1] = ids
        out[-1] = self.eos_id
        return out
