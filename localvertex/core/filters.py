"""A parser for the filter languages of Cloud Logging and Vertex AI (AIP-160), the subset in use.

Both languages share a shape: comparisons `field OP value` joined by AND, OR, NOT and
parentheses, with juxtaposition (including newlines) meaning AND. As in both of Google's
languages, OR binds tighter than AND: `a OR b AND c` is `(a OR b) AND c`.

The parser only builds a tree; what a field means is up to the caller (cloudlogging/filter.py
compiles it to SQL, jobs/filter.py evaluates it against a job). Anything outside the subset
raises FilterError with the position and text that was not understood.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OPERATORS = (">=", "<=", "!=", "=~", "!~", "=", "<", ">", ":")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_KEYWORDS = ("AND", "OR", "NOT")


class FilterError(ValueError):
    pass


@dataclass(frozen=True)
class Comparison:
    field: str  # dotted path, quoted segments unquoted: labels."a.b/c" -> ("labels", "a.b/c")
    path: tuple[str, ...]
    op: str
    value: str
    quoted: bool


@dataclass(frozen=True)
class And:
    terms: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    terms: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    term: Node


Node = Comparison | And | Or | Not


def parse(text: str) -> Node | None:
    """The filter's tree, or None for an empty filter."""
    parser = _Parser(text)
    parser.skip_space()
    if parser.at_end():
        return None
    node = parser.conjunction()
    parser.skip_space()
    if not parser.at_end():
        raise parser.error("unexpected text")
    return node


def comparisons(node: Node | None) -> list[Comparison]:
    """Every comparison in the tree, in order."""
    if node is None:
        return []
    if isinstance(node, Comparison):
        return [node]
    if isinstance(node, Not):
        return comparisons(node.term)
    found: list[Comparison] = []
    for term in node.terms:
        found.extend(comparisons(term))
    return found


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, what: str) -> FilterError:
        snippet = self.text[self.pos : self.pos + 40]
        return FilterError(f"{what} at position {self.pos}: {snippet!r}")

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek_keyword(self) -> str | None:
        for word in _KEYWORDS:
            end = self.pos + len(word)
            if self.text.startswith(word, self.pos) and (
                end == len(self.text) or self.text[end].isspace() or self.text[end] == "("
            ):
                return word
        return None

    def conjunction(self) -> Node:
        terms = [self.disjunction()]
        while True:
            self.skip_space()
            if self.at_end() or self.text[self.pos] == ")":
                break
            if self.peek_keyword() == "AND":
                self.pos += 3
                self.skip_space()
            terms.append(self.disjunction())
        return terms[0] if len(terms) == 1 else And(tuple(terms))

    def disjunction(self) -> Node:
        terms = [self.unary()]
        while True:
            save = self.pos
            self.skip_space()
            if self.peek_keyword() != "OR":
                self.pos = save
                break
            self.pos += 2
            self.skip_space()
            terms.append(self.unary())
        return terms[0] if len(terms) == 1 else Or(tuple(terms))

    def unary(self) -> Node:
        self.skip_space()
        if self.peek_keyword() == "NOT":
            self.pos += 3
            return Not(self.unary())
        if self.text.startswith("-", self.pos):
            self.pos += 1
            return Not(self.unary())
        if self.peek_keyword() in ("AND", "OR"):
            raise self.error("operator without a left-hand side")
        return self.primary()

    def primary(self) -> Node:
        if self.at_end():
            raise self.error("filter ends where a comparison was expected")
        if self.text[self.pos] == "(":
            self.pos += 1
            self.skip_space()
            node = self.conjunction()
            self.skip_space()
            if self.at_end() or self.text[self.pos] != ")":
                raise self.error("missing ')'")
            self.pos += 1
            return node
        return self.comparison()

    def comparison(self) -> Comparison:
        start = self.pos
        path = self.field_path()
        self.skip_space()
        op = next((o for o in OPERATORS if self.text.startswith(o, self.pos)), None)
        if op is None:
            self.pos = start
            raise self.error(
                "expected a comparison 'field OP value' (free-text search is not supported)"
            )
        self.pos += len(op)
        self.skip_space()
        value, quoted = self.value()
        field = ".".join(path)
        return Comparison(field=field, path=path, op=op, value=value, quoted=quoted)

    def field_path(self) -> tuple[str, ...]:
        segments: list[str] = []
        while True:
            if self.text.startswith('"', self.pos):
                segments.append(self.quoted())
            else:
                m = _IDENT.match(self.text, self.pos)
                if not m:
                    raise self.error("expected a field name")
                segments.append(m.group())
                self.pos = m.end()
            if self.text.startswith(".", self.pos):
                self.pos += 1
                continue
            return tuple(segments)

    def value(self) -> tuple[str, bool]:
        if self.text.startswith('"', self.pos):
            return self.quoted(), True
        start = self.pos
        while (
            self.pos < len(self.text)
            and not self.text[self.pos].isspace()
            and self.text[self.pos] not in "()"
        ):
            self.pos += 1
        if self.pos == start:
            raise self.error("expected a value")
        return self.text[start : self.pos], False

    def quoted(self) -> str:
        self.pos += 1  # opening quote
        out: list[str] = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == "\\" and self.pos + 1 < len(self.text):
                out.append(self.text[self.pos + 1])
                self.pos += 2
                continue
            if ch == '"':
                self.pos += 1
                return "".join(out)
            out.append(ch)
            self.pos += 1
        raise self.error("unterminated string")
