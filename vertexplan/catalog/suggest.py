"""'Did you mean' helpers and the small wording helpers messages share."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(word: str, candidates: Iterable[str], limit: int = 3) -> tuple[str, ...]:
    """Close matches for a mistyped name, best first.

    Case-insensitive exact matches win, then candidates containing the word (people type "A100"
    for NVIDIA_TESLA_A100 or "t4" for NVIDIA_TESLA_T4), then difflib's similarity.
    """
    pool = list(dict.fromkeys(candidates))
    if not word or not pool:
        return ()
    folded = word.strip().lower().replace("_", "-")
    by_fold = {c.lower().replace("_", "-"): c for c in pool}
    if folded in by_fold:
        return (by_fold[folded],)
    found: list[str] = []
    if len(folded) >= 2:
        found = [c for f, c in by_fold.items() if folded in f]
        found.sort(key=len)  # the shortest containing name is the least surprising one
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
