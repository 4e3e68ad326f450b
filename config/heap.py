"""The web server's heap, settled once its application is loaded.

A worker holds about 280,000 objects the collector tracks once Django, DRF and every view are
imported, and they live as long as the process. Python's cyclic collector walks all of them in
each full collection, which an ordinary request's allocations trigger now and then: measured
on the job list, about 3 ms a request on average and far more on the requests that pay for a
whole walk. gc.freeze() moves what exists at that moment out of the collector's sight (it is
never freed, as it never would be anyway), so collections walk only what requests make.

Everything a request would otherwise import on first use (the URL configuration, and with it
every view, serializer and API schema class) is imported first, so it is frozen too.
"""

from __future__ import annotations

import gc

from django.urls import get_resolver


def settle() -> int:
    """Import what the first request would, then freeze the heap; returns the number of
    objects frozen."""
    get_resolver().url_patterns  # noqa: B018 - imports config.urls and every view it names
    gc.collect()  # what startup left as garbage is freed, not frozen
    gc.freeze()
    return gc.get_freeze_count()
