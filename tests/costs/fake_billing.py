"""A local gRPC server of google.cloud.billing.v1.CloudCatalog/ListSkus, with pages, for the
refresh_prices tests: the real client library talks to it over plaintext gRPC."""

from __future__ import annotations

from concurrent import futures
from decimal import Decimal

import grpc
from google.cloud.billing_v1 import types
from google.type import money_pb2

SERVICE = "google.cloud.billing.v1.CloudCatalog"


def sku(sku_id: str, description: str, usd: str, *, unit: str = "h",
        usage_type: str = "OnDemand", regions: tuple[str, ...] = ("us-central1",)
        ) -> types.Sku:
    price = Decimal(usd)
    units = int(price)
    nanos = int((price - units) * 1_000_000_000)
    return types.Sku(
        name=f"services/C7E2-9256-1C43/skus/{sku_id}", sku_id=sku_id, description=description,
        category=types.Category(service_display_name="Vertex AI", resource_family="Compute",
                                resource_group="GPU", usage_type=usage_type),
        service_regions=list(regions),
        pricing_info=[types.PricingInfo(pricing_expression=types.PricingExpression(
            usage_unit=unit, tiered_rates=[types.PricingExpression.TierRate(
                start_usage_amount=0,
                unit_price=money_pb2.Money(currency_code="USD", units=units, nanos=nanos))]))],
    )


class FakeCatalog:
    """Serves ``skus`` of service C7E2-9256-1C43 two to a page; ``fail`` aborts every call."""

    def __init__(self) -> None:
        self.skus: list[types.Sku] = []
        self.fail: grpc.StatusCode | None = None
        self.requests: list[types.ListSkusRequest] = []
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        handler = grpc.unary_unary_rpc_method_handler(
            self._list_skus, request_deserializer=types.ListSkusRequest.deserialize,
            response_serializer=types.ListSkusResponse.serialize)
        self.server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE, {"ListSkus": handler}),))
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.stop(grace=None)

    def _list_skus(self, request: types.ListSkusRequest,
                   context: grpc.ServicerContext) -> types.ListSkusResponse:
        self.requests.append(request)
        if self.fail is not None:
            context.abort(self.fail, "the billing catalogue is not answering")
        if request.parent != "services/C7E2-9256-1C43":
            context.abort(grpc.StatusCode.NOT_FOUND, f"no service {request.parent}")
        start = int(request.page_token or 0)
        page = self.skus[start:start + 2]
        following = start + 2 if start + 2 < len(self.skus) else None
        return types.ListSkusResponse(
            skus=page, next_page_token="" if following is None else str(following))
