"""The job list page's pages: counted by the jobs' tally, read by their ids first.

Django's paginator counts the jobs (every visible job visited, on every page and every 5 s
refresh of a list with a running job) and reads the page as whole rows sorted whole: each
visible job's row, its CustomJob included, goes through the sort to keep fifty. Here the
count comes from the tally where it can tell (controlplane/runs/counts.py: exact, kept by
PostgreSQL's triggers), and the sort moves the sort keys and ids alone, then the page's fifty
rows are read by id.
"""

from __future__ import annotations

from typing import Any

from django.core.paginator import Page, Paginator


class JobPaginator(Paginator):
    def __init__(self, object_list: Any, per_page: int, *, count: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(object_list, per_page, **kwargs)
        if count is not None:
            self.count = count  # read instead of counting (count is a cached property)

    def _get_page(self, object_list: Any, number: int, paginator: Paginator) -> Page:
        """object_list: the page's slice of the sorted jobs."""
        ids = list(object_list.values_list("pk", flat=True))
        found = {job.pk: job for job in self.object_list.filter(pk__in=ids).order_by()}
        # A job deleted between the two reads is left out, not an error.
        return super()._get_page([found[pk] for pk in ids if pk in found], number, paginator)
