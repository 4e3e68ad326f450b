from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="PythonPackageRequest")


@_attrs_define
class PythonPackageRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        executor_image_uri (str): One of Vertex's prebuilt training images.
        package_uris (list[str]): gs:// URIs of the training package (sdist or wheel) and its dependencies.
        python_module (str): e.g. trainer.task
    """

    executor_image_uri: str
    package_uris: list[str]
    python_module: str

    def to_dict(self) -> dict[str, Any]:
        executor_image_uri = self.executor_image_uri

        package_uris = self.package_uris

        python_module = self.python_module

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "executor_image_uri": executor_image_uri,
                "package_uris": package_uris,
                "python_module": python_module,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        executor_image_uri = d.pop("executor_image_uri")

        package_uris = cast(list[str], d.pop("package_uris"))

        python_module = d.pop("python_module")

        python_package_request = cls(
            executor_image_uri=executor_image_uri,
            package_uris=package_uris,
            python_module=python_module,
        )

        return python_package_request
