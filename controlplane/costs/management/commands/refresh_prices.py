"""Read current Vertex AI training SKUs from the Cloud Billing Catalog API and write a new
price table to CP_PRICES_FILE; on any failure the table in use stays as it was.

    python manage.py refresh_prices

The new table is the one in use with the mapped rows replaced (vertexplan/pricing/refresh.py says
which), checked by loading it, then written to a temporary file and renamed over the old one,
so a reader sees the old table or the new one, never half of one. Jobs already submitted keep
the price snapshot they stored.
"""

from __future__ import annotations

import os
import tempfile
from datetime import date
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from controlplane.backends.billing_catalog import VERTEX_AI_SERVICE, BillingCatalogError, list_skus
from controlplane.core import price_table
from vertexplan.pricing import PriceTableError, load_table
from vertexplan.pricing.refresh import RefreshError, apply, to_csv


class Command(BaseCommand):
    help = "Refresh the Vertex AI training price table from the Cloud Billing Catalog API."

    def handle(self, *args: Any, **options: Any) -> None:
        old = price_table.current_table()
        path = price_table.prices_file()
        today = date.today().isoformat()
        try:
            skus = list_skus(VERTEX_AI_SERVICE, addr=settings.CP_BILLING_CATALOG_ADDR)
            rows, changed = apply(old.rows, skus, today)
            if not changed:
                raise RefreshError(f"none of the {len(skus)} SKUs read maps onto a row of the "
                                   "table")
            text = to_csv(rows)
            load_table(text, source=price_table.REFRESHED_SOURCE)  # refuse a table that cannot load
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".prices-", suffix=".csv")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(text)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        except (BillingCatalogError, RefreshError, PriceTableError, OSError) as exc:
            raise CommandError(
                f"price refresh failed: {exc}. The price table in use is unchanged: "
                f"{old.source}, prices read {old.oldest_retrieved} to {old.newest_retrieved}"
            ) from exc
        self.stdout.write(
            f"price table refreshed from the Cloud Billing Catalog API ({len(skus)} SKUs): "
            f"{len(changed)} of {len(rows)} rows updated, read {today}; written to {path}")
        for row in changed:
            self.stdout.write(f"  {row.kind} {row.key} {row.region}: on demand "
                              f"{row.on_demand}, spot {row.spot}")
