"""Every path a price cites exists: the shipped table's source, each row's, the flex rates',
a snapshot stored before the table moved, and the README's pointers to the price data.

A source that cites a file of this repository which is gone (the shipped table once moved from
jobs/pricing/data/ to vertexplan/pricing/data/) sends a reader nowhere; citations of other
repositories (``github:owner/repo path@commit``) and web addresses are not checked here.
"""

from __future__ import annotations

import csv
import re
from importlib import resources
from pathlib import Path

import pytest

from tests.vertexplan.pricing.factories import job, pool
from vertexplan.pricing import default_table
from vertexplan.pricing.job_estimate import hourly
from vertexplan.pricing.snapshot import restore, snapshot
from vertexplan.pricing.table import SHIPPED_SOURCE

ROOT = Path(__file__).resolve().parents[3]
# Citations of elsewhere: another repository's file (up to its commit), a web address.
_ELSEWHERE = re.compile(r"github:[\w.-]+/[\w.-]+ [^\s\])]+|https?://\S+")
# A path of this repository: folders (no dots, so no host names) down to a file.
_PATH = re.compile(r"(?<![\w./-])(?:[A-Za-z_][\w-]*/)+[\w.-]+\.(?:csv|py|md|ya?ml|json|txt)\b")
OLD_SOURCE = ("price table shipped with the control plane (jobs/pricing/data/"
              "vertex_training_prices.csv; each figure CONFIRMED, PAGE VALUE or DERIVED as its "
              "row says)")


def cited_paths(source: str) -> list[str]:
    return _PATH.findall(_ELSEWHERE.sub(" ", source))


def missing(source: str) -> list[str]:
    return [path for path in cited_paths(source) if not (ROOT / path).exists()]


def _flex_sources() -> list[str]:
    text = resources.files("vertexplan.pricing").joinpath("data", "flex_rates.csv").read_text(
        "utf-8")
    return [row["source"] for row in csv.DictReader(text.splitlines())]


def test_the_reader_finds_a_path_and_leaves_other_repositories_alone() -> None:
    assert cited_paths(OLD_SOURCE) == ["jobs/pricing/data/vertex_training_prices.csv"]
    assert missing(OLD_SOURCE) == ["jobs/pricing/data/vertex_training_prices.csv"]
    assert cited_paths("DERIVED [github:skypilot-org/skypilot-catalog catalogs/v8/gcp/vms.csv"
                       "@006059e0 (CE list)]; see https://cloud.google.com/x/y.json") == []


def test_the_shipped_tables_source_cites_a_file_that_exists() -> None:
    assert cited_paths(SHIPPED_SOURCE) == ["vertexplan/pricing/data/vertex_training_prices.csv"]
    assert missing(SHIPPED_SOURCE) == []
    assert default_table().source == SHIPPED_SOURCE


def test_every_price_rows_source_cites_only_files_that_exist() -> None:
    sources = {row.source for row in default_table().rows} | set(_flex_sources())
    gone = {source: missing(source) for source in sources if missing(source)}
    assert gone == {}


def test_a_snapshot_stored_before_the_table_moved_cites_where_it_is_now() -> None:
    data = snapshot(hourly(job(pool("n1-standard-4")), "us-central1"))
    data["table"]["source"] = OLD_SOURCE  # what a job submitted before the move stored
    source = restore(data).table_source
    assert cited_paths(source) == ["vertexplan/pricing/data/vertex_training_prices.csv"]
    assert missing(source) == []


@pytest.mark.parametrize("document", ["README.md", "vertexplan/pricing/data/README.md"])
def test_the_docs_point_at_price_files_that_exist(document: str) -> None:
    text = (ROOT / document).read_text("utf-8")
    cited = [p for p in re.findall(r"`([\w./-]+)`", text) if p.startswith("vertexplan/pricing")]
    assert cited, f"{document} names no price file"
    assert [p for p in cited if not (ROOT / p).exists()] == []
    # README.md's "the rules in its README": the price data's folder has one.
    assert (ROOT / "vertexplan/pricing/data/README.md").exists()
