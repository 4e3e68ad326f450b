"""The Cloud Billing Catalog API: the SKUs of a service, as plain records.

``CloudCatalogClient.list_skus`` pages through every SKU of a service (Vertex AI, Compute
Engine, Cloud TPU: VERTEX_FACTS.md section 7). With CP_BILLING_CATALOG_ADDR set it talks
plaintext gRPC to that address (the tests' local fake); otherwise to Google with Application
Default Credentials. Google's errors become BillingCatalogError here, so the refresh command
never sees a google exception.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

import grpc
from google.api_core import exceptions as gexc
from google.auth import exceptions as auth_exc
from google.cloud import billing_v1
from google.cloud.billing_v1.services.cloud_catalog.transports import CloudCatalogGrpcTransport

VERTEX_AI_SERVICE = "C7E2-9256-1C43"
COMPUTE_ENGINE_SERVICE = "6F81-5844-456A"
CLOUD_TPU_SERVICE = "E000-3F24-B8AA"
RPC_TIMEOUT_S = 60.0


class BillingCatalogError(Exception):
    """The catalogue could not be read (unreachable, refused, malformed answer)."""


@dataclass(frozen=True)
class SkuPrice:
    """One SKU's first-tier USD price per usage unit (h, GiBy.mo, ...)."""

    sku_id: str
    description: str
    resource_family: str
    resource_group: str
    usage_type: str  # OnDemand, Preemptible, Commit1Yr ...
    regions: tuple[str, ...]
    usage_unit: str
    usd: Decimal
    effective_time: str


def client(addr: str = "") -> billing_v1.CloudCatalogClient:
    if addr:
        channel = grpc.insecure_channel(addr)
        return billing_v1.CloudCatalogClient(transport=CloudCatalogGrpcTransport(channel=channel))
    return billing_v1.CloudCatalogClient()


def list_skus(service_id: str, *, addr: str = "") -> list[SkuPrice]:
    """Every SKU of the service with a USD price; BillingCatalogError on any failure."""
    try:
        catalog = client(addr)
        pages = catalog.list_skus(
            request=billing_v1.ListSkusRequest(parent=f"services/{service_id}",
                                               currency_code="USD"),
            timeout=RPC_TIMEOUT_S)
        return list(_prices(pages))
    except gexc.GoogleAPICallError as exc:
        raise BillingCatalogError(f"ListSkus of services/{service_id}: {exc}") from exc
    except (auth_exc.GoogleAuthError, gexc.RetryError) as exc:
        raise BillingCatalogError(f"ListSkus of services/{service_id}: {exc}") from exc


def _prices(skus: Iterator[billing_v1.Sku]) -> Iterator[SkuPrice]:
    for sku in skus:
        if not sku.pricing_info:
            continue
        info = sku.pricing_info[0]
        expression = info.pricing_expression
        rates = [r for r in expression.tiered_rates if r.unit_price.currency_code in ("USD", "")]
        if not rates:
            continue
        # The first tier that charges anything: free tiers start some SKUs at 0.
        rate = next((r for r in rates if r.unit_price.units or r.unit_price.nanos), rates[0])
        money = rate.unit_price
        usd = Decimal(money.units) + Decimal(money.nanos).scaleb(-9)
        yield SkuPrice(
            sku_id=sku.sku_id, description=sku.description,
            resource_family=sku.category.resource_family,
            resource_group=sku.category.resource_group,
            usage_type=sku.category.usage_type,
            regions=tuple(sku.service_regions),
            usage_unit=expression.usage_unit,
            usd=usd,
            effective_time=info.effective_time.isoformat() if info.effective_time else "",
        )
