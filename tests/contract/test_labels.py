"""Labels and names: deterministic names that parse back, labels Vertex accepts, keys only the
control plane writes, and Google's label rules as the CustomJob checks apply them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contract import labels
from vertexplan.catalog.rules.job import check_labels
from vertexplan.catalog.view import build_view
from vertexplan.composer.checks import RESERVED_LABEL_PREFIX

SLUGS = ("vision", "nlp-team_2", "a" * 50, "t" * 80)


@pytest.mark.parametrize(("job_id", "attempt"), [(1, 1), (42, 3), (10**17, 999_999_999)])
def test_a_job_attempts_display_name_parses_back(job_id: int, attempt: int) -> None:
    name = labels.job_display_name(job_id, attempt)
    assert name == f"cp-{job_id}-a{attempt}"
    assert labels.parse_job_display_name(name) == (job_id, attempt)
    assert len(name) <= 128  # Vertex's limit on a display name


@pytest.mark.parametrize("name", ["cp-0-a1", "cp-1-a0", "cp-01-a1", "cp-1-a1 ", "cp-1-a1\n",
                                  "cp--1-a1", "x-1-a1", "cp-1-b1", "cp-sweep-1", "cp-1-a",
                                  "CP-1-A1", "cp-1-a1-a2", ""])
def test_a_display_name_the_control_plane_did_not_write_does_not_parse(name: str) -> None:
    assert labels.parse_job_display_name(name) is None


def test_the_other_deterministic_names() -> None:
    assert labels.sweep_display_name(7) == "cp-sweep-7"
    assert labels.ray_submission_id(7) == "cp-ray-7"
    assert labels.vertex_model_id(7) == "cp-model-7"
    assert labels.packaging_display_name(7) == "cp-model-7-package"
    assert labels.vertex_endpoint_id(7) == "cp-ep-7"
    assert labels.cluster_resource_id(7) == "cp-cl-7"
    assert labels.parse_cluster_resource_id(labels.cluster_resource_id(10**17)) == 10**17
    for other in ("cp-cl-", "cp-cl-x", "cp-cl-7\n", "cp-cl-" + "9" * 19, "my-cluster", None):
        assert labels.parse_cluster_resource_id(other) is None  # type: ignore[arg-type]


def written() -> list[dict[str, str]]:
    """Every set of labels the control plane writes, for teams of several slugs."""
    out = []
    for slug in SLUGS:
        out += [labels.attempt_labels(12, 3, slug), labels.sweep_labels(5, slug),
                labels.model_labels(8, 12, slug), labels.packaging_labels(8, slug),
                labels.endpoint_labels(9, slug), labels.ray_job_labels(4, slug)]
    return out


def test_the_labels_written_are_ones_vertex_accepts_under_reserved_keys() -> None:
    for found in written():
        assert len(found) <= labels.MAX_LABELS
        for key, value in found.items():
            assert labels.label_problem(key, key=True) is None, key
            assert labels.label_problem(value, key=False) is None, value
            assert labels.is_reserved(key) and key.startswith(RESERVED_LABEL_PREFIX)


def test_an_attempts_labels_name_its_job_attempt_and_team() -> None:
    assert labels.attempt_labels(12, 3, "vision") == {
        "cp-job": "12", "cp-attempt": "3", "cp-team": "vision"}
    assert tuple(labels.attempt_labels(1, 1, "t")) == labels.ATTEMPT_KEYS
    assert labels.attempt_labels(1, 1, "t" * 80)["cp-team"] == "t" * 63
    assert labels.packaging_labels(8, "vision") == {
        "cp-model": "8", "cp-purpose": "packaging", "cp-team": "vision"}
    assert "cp-job" not in labels.packaging_labels(8, "vision")  # not an attempt of the job
    assert labels.model_labels(8, 12, "vision")["cp-job"] == "12"
    assert labels.RECOVERY_PREFIX.startswith(labels.PREFIX)


@pytest.mark.parametrize(("text", "key", "problem"), [
    ("tEam", True, "label key 'tEam' has 'E': only lowercase letters, digits, '_' and '-' "
                   "are allowed"),
    ("Team", True, "label key 'Team' must start with a lowercase letter"),
    ("1team", True, "label key '1team' must start with a lowercase letter"),
    ("-team", True, "label key '-team' must start with a lowercase letter"),
    ("", True, "label keys cannot be empty"),
    ("a" * 65, True, "label key has 65 characters; at most 64"),
    ("a.b", False, "label value 'a.b' has '.': only lowercase letters, digits, '_' and '-' "
                   "are allowed"),
    ("gs://x y", False, "label value 'gs://x y' has ' /:': only lowercase letters, digits, '_' "
                        "and '-' are allowed"),
    ("a" * 65, False, "label value has 65 characters; at most 64"),
])
def test_what_vertex_refuses_is_refused_with_the_reason(text: str, key: bool,
                                                        problem: str) -> None:
    assert labels.label_problem(text, key=key) == problem


@pytest.mark.parametrize(("text", "key"), [
    ("team", True), ("équipe", True), ("a_b-9", True), ("a" * 64, True),
    ("", False), ("9", False), ("-_", False), ("équipe-2", False), ("a" * 64, False),
])
def test_what_vertex_accepts_is_accepted(text: str, key: bool) -> None:
    assert labels.label_problem(text, key=key) is None


@given(st.text(max_size=80), st.booleans())
def test_the_suggested_fix_is_always_accepted(text: str, key: bool) -> None:
    assert labels.label_problem(labels.fixed_label(text, key), key) is None


def test_the_customjob_checks_apply_the_same_rules() -> None:
    mine = {"Team": "vision", "team": "A.B", "cost_center": "ok", **written()[0]}
    found = list(check_labels(build_view({"displayName": "x", "labels": mine})))
    assert [(e.path, e.message, e.suggestions) for e in found] == [
        ('labels["Team"]', labels.label_problem("Team", key=True), ("team",)),
        ('labels["team"]', labels.label_problem("A.B", key=False), ("a-b",)),
    ]
    many = {f"k{i}": "v" for i in range(labels.MAX_LABELS + 1)}
    [too_many] = check_labels(build_view({"displayName": "x", "labels": many}))
    assert too_many.message == f"labels has 65 entries; at most {labels.MAX_LABELS}"
