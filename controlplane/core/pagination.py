"""The REST API's paging: limit and offset, with a ceiling on the limit.

Without one, `?limit=10000000` makes one request serialize a team's whole history; a script
that wants everything pages through it instead.
"""

from rest_framework.pagination import LimitOffsetPagination


class CappedLimitOffsetPagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 1000
