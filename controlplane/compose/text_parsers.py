"""Request parsers for the import endpoint: a job file sent as it is, YAML or JSON as text
(``curl --data-binary @job.yaml -H 'Content-Type: application/yaml'``), at most the body
limit every endpoint has (controlplane.core.bounded)."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from controlplane.core import bounded


class TextParser(BaseParser):
    """YAML or JSON sent as text (curl --data-binary @job.yaml -H 'Content-Type: ...')."""

    media_type = "text/*"

    def parse(self, stream: Any, media_type: str | None = None,
              parser_context: Any = None) -> str:
        limit = bounded.max_body_bytes()
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise ParseError(f"the request body is larger than {limit} bytes")
        return raw.decode("utf-8", "replace")


class YamlParser(TextParser):
    media_type = "application/yaml"


class XYamlParser(TextParser):
    media_type = "application/x-yaml"
