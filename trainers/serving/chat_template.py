"""A Hugging Face export's own chat template, rendered as transformers renders it.

The template is Jinja from the export (chat_template.jinja or tokenizer_config.json): code
that came with the model, so it runs in Jinja's immutable sandbox (no attribute of Python's
internals, no change to the values it is given, ranges bounded), as transformers runs it.
It sees `messages`, `add_generation_prompt` (true: the prompt ends where the assistant's turn
begins), the tokenizer's `bos_token` and `eos_token` and `raise_exception`, which a template
calls to refuse a conversation (a 400 naming `messages`, with its message).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment


class ChatTemplateError(ValueError):
    """The template refused the conversation, or failed on it; the message says why."""


def render(template: str, messages: list[dict[str, Any]], special: dict[str, str]) -> str:
    try:
        return _compiled(template).render(
            messages=messages, add_generation_prompt=True,
            bos_token=special.get("bos_token", ""), eos_token=special.get("eos_token", ""))
    except ChatTemplateError:
        raise
    except (TemplateError, TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
        raise ChatTemplateError(f"the model's chat template failed: {exc}") from None


def _raise(message: str) -> None:
    raise ChatTemplateError(str(message))


@lru_cache(maxsize=4)
def _compiled(template: str) -> Any:
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = _raise
    return env.from_string(template)
