"""'Did you mean' helpers and the small wording helpers messages share."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable


def _parts(name: str) -> frozenset[str]:
    return frozenset(p for p in re.split(r"[_\-\s]+", name.strip().lower()) if p)


def _by_parts(word: str, pool: list[str]) -> list[str]:
    """Candidates holding every part of the word (NVIDIA_A100: NVIDIA_TESLA_A100 and
    NVIDIA_A100_80GB), fewest other parts first, where a part most candidates share (NVIDIA,
    TESLA) hardly counts: the word most likely left it out."""
    parts = _parts(word)
    if not parts:
        return []
    shared = Counter(p for c in pool for p in _parts(c))
    common = {p for p, n in shared.items() if n >= max(3, len(pool) // 3)}
    holding = [c for c in pool if parts <= _parts(c)]
    return sorted(holding, key=lambda c: (len(_parts(c) - parts - common),
                                          len(_parts(c) - parts), len(c)))


def did_you_mean(word: str, candidates: Iterable[str], limit: int = 3) -> tuple[str, ...]:
    """Close matches for a mistyped name, best first.

    Case-insensitive exact matches win, then candidates holding each part of the word (people
    type "A100" or "NVIDIA_A100" for NVIDIA_TESLA_A100, "t4" for NVIDIA_TESLA_T4), then those
    containing it, then difflib's similarity.
    """
    pool = list(dict.fromkeys(candidates))
    if not word or not pool:
        return ()
    folded = word.strip().lower().replace("_", "-")
    by_fold = {c.lower().replace("_", "-"): c for c in pool}
    if folded in by_fold:
        return (by_fold[folded],)
    found: list[str] = _by_parts(word, pool)
    if len(folded) >= 2:
        # The shortest containing name is the least surprising one.
        found += sorted((c for f, c in by_fold.items() if folded in f), key=len)
    close = difflib.get_close_matches(folded, list(by_fold), n=limit, cutoff=0.6)
    found += [by_fold[f] for f in close]
    return tuple(dict.fromkeys(found))[:limit]


def or_list(items: Iterable[object]) -> str:
    """'a', 'a or b', 'a, b or c'."""
    words = [str(i) for i in items]
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " or " + words[-1]


def mean_clause(suggestions: tuple[str, ...]) -> str:
    """'; did you mean x?' or '' when there is nothing to suggest."""
    return f"; did you mean {or_list(suggestions)}?" if suggestions else ""
