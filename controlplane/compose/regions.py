"""A job's region: the regions that offer its hardware (the compose form's menu and the JSON that
refreshes it), the one chosen by default, and the region error the form and the API share.

Which region offers what is the catalogue's (vertexplan.catalog.hardware_regions). Two
strictnesses, on purpose: the form's menu lists only the regions the catalogue says offer the
hardware, so the form takes no other; the API takes any Vertex region the catalogue does not
say lacks it (the catalogue does not cover every region, and a guess would refuse valid jobs).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings

from vertexplan.catalog import get_catalog
from vertexplan.catalog.hardware_regions import (
    job_offerings,
    machine_offering,
    missing_in,
    offering_label,
    regions_offering_all,
)
from vertexplan.catalog.offerings import known_region, provenance

# The form's "no accelerator" and a pool's "same as chief" (vertexplan.composer.fields).
_NO_ACCELERATOR = ("", "none")


def offerings_of(hardware: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """The offerings of (machine type, accelerator type) pairs, each once; unknown machines
    are left to the composer, which names them."""
    found: dict[str, None] = {}
    for machine, accelerator in hardware:
        offering = machine_offering(machine, None if accelerator in _NO_ACCELERATOR
                                    else accelerator)
        if offering is not None:
            found[offering] = None
    return tuple(found)


def default_region(regions: tuple[str, ...]) -> str:
    """The server's region when it offers the hardware, else the first that does."""
    if settings.VERTEX_REGION in regions or not regions:
        return settings.VERTEX_REGION
    return regions[0]


def choices(regions: Iterable[str]) -> list[tuple[str, str]]:
    """Menu entries: "us-central1 (Iowa)"."""
    known = get_catalog().regions
    return [(r, f"{r} ({known[r].location})" if r in known else r) for r in regions]


def _hardware(offerings: tuple[str, ...]) -> str:
    return " + ".join(offering_label(o) for o in offerings) or "this job's hardware"


def _valid(offerings: tuple[str, ...]) -> str:
    valid = regions_offering_all(offerings)
    if not valid:
        return f"no region in the catalogue offers {_hardware(offerings)} together"
    return f"regions that offer {_hardware(offerings)}: {', '.join(valid)}"


def problem(region: Any, offerings: tuple[str, ...], *, menu: bool) -> str | None:
    """Why ``region`` cannot run hardware needing ``offerings``, naming the regions that can;
    None when it can. ``menu``: only the regions the catalogue says offer it are valid (the
    form); otherwise a Vertex region the catalogue does not cover passes (the API)."""
    if not isinstance(region, str) or region not in get_catalog().regions:
        return f"{region!r} is not a Vertex training region in the catalogue; " \
               f"{_valid(offerings)}"
    lacking = missing_in(region, offerings)
    if lacking:
        return (f"{region} does not offer {_hardware(lacking)} for Vertex training "
                f"({provenance(region)}); {_valid(offerings)}")
    if menu and not known_region(region):
        return (f"the region catalogue does not list {region} as offering "
                f"{_hardware(offerings)} for Vertex training; {_valid(offerings)}")
    return None


def menu(hardware: Iterable[tuple[str, str]], chosen: Any, *, bound: bool) -> tuple[
        str, list[tuple[str, str]], str | None]:
    """The compose form's region menu for the job's (machine, accelerator) pairs: the default
    region, the choices, and, for a stored job (a clone, a template, an import) from a region
    that does not offer its hardware as the catalogue knows it now, the warning that the form
    submits to the default instead (None otherwise)."""
    offered = regions_offering_all(offerings_of(hardware))
    default = default_region(offered)
    shown = list(offered)
    replaced = None
    if chosen and chosen not in offered:
        if bound:
            shown.append(str(chosen))  # kept in view beside the error it gets
        else:
            replaced = (f"the original ran in {chosen}, which the region catalogue does not "
                        f"list for this hardware; this form submits to {default}")
    return default, choices(shown), replaced


def menu_problem(chosen: Any, custom_job: dict[str, Any]) -> str | None:
    """The menu's region must be one the catalogue says offers the job's hardware: the API also
    takes a region the catalogue does not cover, the menu lists none."""
    if not chosen:
        return None
    return problem(chosen, job_offerings(custom_job), menu=True)
