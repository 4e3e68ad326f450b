"""A database made at the old layout (the apps `jobs` and `security`, before the split into
controlplane/<app>/) migrates to the new layout with nothing lost, on SQLite and PostgreSQL.

The assets in old_layout/ were made by the old code (commit in expected.json's
`source_commit`): a filled database dumped as SQL for each backend, and expected.json with its
row counts and spot checks. Each test loads a dump into a fresh database, runs the NEW code's
`manage.py migrate` in a subprocess (settings are read once per process), and checks the result
through the NEW models in another (old_layout/check_migrated.py). On PostgreSQL the migrated
schema is also compared with that of a database migrated from scratch.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.conftest import require

pytestmark = pytest.mark.integration

HERE = Path(__file__).resolve().parent
ASSETS = HERE / "old_layout"
REPO = HERE.parent.parent  # tests/integration/ -> the repository root (manage.py)
EXPECTED = json.loads((ASSETS / "expected.json").read_text())
SECRET_KEY = EXPECTED["secret_key"]
TIMEOUT_S = 120

# The apps split out of `jobs`: their 0001_initial replaces jobs 0001..0006, so on an old
# database they count as applied and must never run (they would create the tables again).
SPLIT_APPS = ("core", "teams", "runs", "logs", "costs", "serving", "notifications", "compose")
RELABEL = "core.0002_relabel_moved_models"
# What a plan may never do to a database that already holds the data (a migration added after
# the split that must, say, drop a field, is reviewed and listed here by name).
DESTRUCTIVE = re.compile(r"^(Delete|Remove|Rename)\b", re.IGNORECASE)
REVIEWED = {
    # SLO alerts are delivered through the notifications outbox (notifications.0002, which
    # hands the alerts still waiting to it first); their own delivery columns go.
    "serving.0002_sloalert_delivery_in_the_outbox": [
        "Remove field delivered_at from sloalert", "Remove field delivery from sloalert",
        "Remove field delivery_error from sloalert"],
    # A notification may now be about an idle cluster: the check that it is about exactly one
    # thing is replaced by one that counts the idle flag too (added back in the same
    # migration, before anything can write a row it would refuse).
    "notifications.0005_idle_clusters_in_the_outbox": [
        "Remove constraint notification_about_one_thing from model notification"],
    # The log table's key takes the time in (a partitioned table's keys must hold it), in the
    # same migration, and serves as the log tail's index, which goes: no row is touched.
    "logs.0002_log_key_holds_the_time": [
        "Remove constraint log_once_per_entry from model logline",
        "Remove index log_tail from logline"],
    # A checkpoint may be registered once in each runtime: the one-entry-per-checkpoint rule
    # is replaced, in the same migration, by one per checkpoint and runtime, which every row
    # the old rule allowed keeps; no row is touched.
    "serving.0008_model_entry_one_per_runtime": [
        "Remove constraint one_entry_per_artifact from model modelentry"],
    # A job's flat configuration is a new column filled from each job's own request (its
    # RunPython only writes the new column): nothing is removed or renamed.
    "runs.0008_job_config": [],
    # A team's idle-cluster limit is a new column, 0 (never) for every team: nothing goes.
    "teams.0004_idle_cluster_deletion_policy": [],
}
# The tables whose schema must come out the same as on a database migrated from scratch.
COMPARED = re.compile(r"^(jobs|security)_")


@dataclass
class OldDatabase:
    """An old-layout dump loaded, then migrated by the new code; what each step printed."""

    backend: str
    url: str
    env: dict[str, str]
    showmigrations_before: str = ""
    plan: str = ""
    migrate: subprocess.CompletedProcess[str] | None = None
    showmigrations_after: str = ""
    plan_after: str = ""


# --- subprocesses -------------------------------------------------------------------------------

def _env(database_url: str, var_dir: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items()
           # Nothing from the caller's shell (an encryption key, a settings module, a database)
           # may change how the old data is read.
           if not name.startswith(("CP_", "DJANGO_", "SECRET_KEY", "DATABASE_URL"))}
    env.update({
        "DATABASE_URL": database_url,
        "DEBUG": "true",
        "SECRET_KEY": SECRET_KEY,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "CP_VAR_DIR": str(var_dir),
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p),
    })
    return env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)


def _manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "manage.py", *args], env)


def _ok(result: subprocess.CompletedProcess[str], what: str) -> str:
    assert result.returncode == 0, (f"{what} failed (rc={result.returncode})\n--- stdout ---\n"
                                    f"{result.stdout[-6000:]}\n--- stderr ---\n"
                                    f"{result.stderr[-6000:]}")
    return result.stdout


def _showmigrations(text: str) -> dict[str, str]:
    """`showmigrations` as {"app.name": mark}: "X" applied, "-" applied through the migrations
    it replaces (recorded by the next migrate), " " not applied."""
    marks: dict[str, str] = {}
    app = ""
    for line in text.splitlines():
        if line and not line[0].isspace():
            app = line.strip()
            continue
        found = re.match(r"^\s*\[(.)\]\s+(\S+)", line)
        if found:
            marks[f"{app}.{found.group(2)}"] = found.group(1)
    return marks


def _plan(text: str) -> dict[str, list[str]]:
    """`migrate --plan` as {"app.name": [operation, ...]}."""
    plan: dict[str, list[str]] = {}
    current: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("Planned operations"):
            continue
        if "No planned migration operations" in line:
            return {}
        if line[0].isspace():
            current.append(line.strip())
        else:
            current = plan.setdefault(line.strip(), [])
    return plan


def _migrate(db: OldDatabase) -> OldDatabase:
    db.showmigrations_before = _ok(_manage(db.env, "showmigrations"), "showmigrations (before)")
    db.plan = _ok(_manage(db.env, "migrate", "--plan"), "migrate --plan")
    db.migrate = _manage(db.env, "migrate", "--noinput")
    if db.migrate.returncode == 0:
        db.showmigrations_after = _ok(_manage(db.env, "showmigrations"),
                                      "showmigrations (after)")
        db.plan_after = _ok(_manage(db.env, "migrate", "--plan"), "migrate --plan (after)")
    return db


# --- the databases ------------------------------------------------------------------------------

def _database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def _pg_admin(postgres_url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(sql)


@pytest.fixture(scope="module")
def old_sqlite(tmp_path_factory: pytest.TempPathFactory) -> OldDatabase:
    where = tmp_path_factory.mktemp("old_layout_sqlite")
    path = where / "old.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.executescript((ASSETS / EXPECTED["dumps"]["sqlite"]).read_text())
    conn.close()
    url = f"sqlite:///{path}"
    return _migrate(OldDatabase("sqlite", url, _env(url, where / "var")))


def _pg_tools() -> None:
    for tool in ("psql", "pg_dump"):
        require(shutil.which(tool) is not None, f"{tool} is not on PATH")


@pytest.fixture(scope="module")
def old_postgres(postgres_url: str, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[OldDatabase]:
    _pg_tools()
    name = f"cp_oldlayout_{uuid.uuid4().hex[:10]}"
    _pg_admin(postgres_url, f'CREATE DATABASE "{name}"')
    try:
        url = _database(postgres_url, name)
        loaded = _run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1",
                       "-f", str(ASSETS / EXPECTED["dumps"]["postgres"]), url], dict(os.environ))
        _ok(loaded, "loading the PostgreSQL dump with psql")
        yield _migrate(OldDatabase("postgres", url,
                                   _env(url, tmp_path_factory.mktemp("old_layout_pg") / "var")))
    finally:
        _pg_admin(postgres_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgres"])
def old_db(request: pytest.FixtureRequest) -> OldDatabase:
    return request.getfixturevalue(f"old_{request.param}")


# --- migrate ------------------------------------------------------------------------------------

def test_migrate_only_relabels_content_types(old_db: OldDatabase) -> None:
    before = _showmigrations(old_db.showmigrations_before)
    plan = _plan(old_db.plan)

    # The old layout's history is all there: the split apps' 0001 count as applied (through
    # the jobs migrations they replace), security's own two are applied as they were.
    for app in SPLIT_APPS:
        assert before.get(f"{app}.0001_initial") in ("X", "-"), (
            f"{app}.0001_initial is not applied on the old database:\n"
            f"{old_db.showmigrations_before}")
    for name in ("security.0001_initial", "security.0002_token_scopes"):
        assert before.get(name) == "X", f"{name}:\n{old_db.showmigrations_before}"

    # Only the relabelling (and whatever came after the split) is planned, nothing that
    # creates, drops or renames what the old database holds.
    assert RELABEL in plan, old_db.plan
    assert next(iter(plan)) == RELABEL, f"something runs before {RELABEL}:\n{old_db.plan}"
    assert plan[RELABEL] == ["Raw Python operation"], old_db.plan
    for name, operations in plan.items():
        # A split app's first migration would create its tables again; an app added after the
        # split (sweeps, clusters) creates its own tables for the first time.
        app = name.split(".", 1)[0]
        assert not (app in SPLIT_APPS and name.endswith(".0001_initial")), (
            f"{name} would run again:\n{old_db.plan}")
        assert before.get(name) == " ", f"{name} planned but shown as {before.get(name)!r}"
        destructive = [op for op in operations
                       if DESTRUCTIVE.match(op) and op not in REVIEWED.get(name, [])]
        assert not destructive, f"{name} plans {destructive} on the old data"
    unapplied = sorted(name for name, mark in before.items() if mark == " ")
    assert unapplied == sorted(plan), (unapplied, sorted(plan))

    assert old_db.migrate is not None
    out = _ok(old_db.migrate, "migrate --noinput")
    applied = re.findall(r"Applying (\S+)\.\.\. OK", out)
    assert applied == list(plan), out

    after = _showmigrations(old_db.showmigrations_after)
    assert after, old_db.showmigrations_after
    assert all(mark == "X" for mark in after.values()), old_db.showmigrations_after
    assert set(after) == set(before)
    assert _plan(old_db.plan_after) == {}, old_db.plan_after


# --- the data, through the new models -----------------------------------------------------------

def test_old_data_reads_through_new_models(old_db: OldDatabase) -> None:
    assert old_db.migrate is not None
    _ok(old_db.migrate, "migrate --noinput")
    result = _run([sys.executable, str(ASSETS / "check_migrated.py"),
                   str(ASSETS / "expected.json")], old_db.env)
    lines = result.stdout.strip().splitlines()
    assert lines, f"the checker printed nothing\n{result.stderr[-6000:]}"
    try:
        summary: dict[str, Any] = json.loads(lines[-1])
    except json.JSONDecodeError as exc:
        raise AssertionError(f"the checker's last line is not JSON\n{result.stdout[-6000:]}\n"
                             f"{result.stderr[-6000:]}") from exc

    assert summary["failures"] == [], (
        "\n".join(summary["failures"]) + f"\n--- stderr ---\n{result.stderr[-6000:]}")
    assert summary["ok"] is True and result.returncode == 0, result.stderr[-6000:]
    assert summary["vendor"] == ("postgresql" if old_db.backend == "postgres" else "sqlite")

    # Every table checked, with the row count the old code left in it.
    expected_rows = {info["db_table"]: info["rows"]
                     for info in [*EXPECTED["models"].values(), *EXPECTED["m2m_tables"].values()]}
    assert {t: v["rows"] for t, v in summary["tables"].items()} == expected_rows
    assert summary["tables"]["jobs_job"]["model"] == "runs.Job"
    assert summary["tables"]["jobs_logline"]["model"] == "logs.LogLine"
    assert summary["tables"]["security_apitoken"]["model"] == "security.ApiToken"

    spot = EXPECTED["spot_checks"]
    assert summary["jobs_checked"] == len(spot["jobs"])
    assert summary["log_lines_per_job"] == spot["log_lines_per_job"]
    assert summary["tokens_authenticated"] == [
        t["id"] for t in spot["api_tokens"] if t["authenticates"]]
    assert summary["tokens_refused"] == [
        t["id"] for t in spot["api_tokens"] if not t["authenticates"]]
    assert summary["secrets_decrypted"] == len(spot["slack_channels"])

    granted = {(c["user"], c["new"]): c["granted"] for c in summary["has_perm"]}
    assert granted[("bob", "runs.view_job")] is True
    assert granted[("carol", "runs.view_job")] is True
    assert granted[("bob", "serving.view_endpoint")] is True
    assert granted[("bob", "security.view_auditentry")] is False

    assert "jobs" not in summary["content_types"]
    assert summary["leftover_jobs_content_types"] == []
    assert summary["admin_log_content_types"] == [
        "runs.job", "security.apitoken", "teams.team"]


# --- PostgreSQL: the migrated schema is the one a fresh database gets ---------------------------

def _statements(dump: str) -> list[str]:
    statements: list[str] = []
    current: list[str] = []
    for line in dump.splitlines():
        if not current and (not line.strip() or line.startswith(("--", "SET ", "\\"))
                            or line.startswith("SELECT pg_catalog.set_config")):
            continue
        current.append(line)
        if line.rstrip().endswith(";"):
            statements.append("\n".join(current))
            current = []
    assert not current, f"unterminated statement in pg_dump output: {current}"
    return statements


_TABLE_OF = (
    re.compile(r"^CREATE TABLE public\.(\w+)"),
    re.compile(r"^ALTER TABLE (?:ONLY )?public\.(\w+)"),
    re.compile(r"^CREATE (?:UNIQUE )?INDEX \w+ ON (?:ONLY )?public\.(\w+)"),
    re.compile(r"public\.(\w+)"),
)


# The log table's weekly partitions (controlplane/logs/partitions.py): which weeks there are
# depends on how old the lines are, so they are compared as a set of names, not table by table.
_WEEK = re.compile(r"\bjobs_logline_w\d{8}\b")


@dataclass
class Schema:
    statements: dict[str, list[str]]  # table -> its normalised statements, sorted
    columns: dict[str, list[str]]  # table -> column definitions, in the table's order
    weeks: set[str] = field(default_factory=set)  # the log table's weekly partitions


def _schema(url: str) -> Schema:
    result = _run(["pg_dump", "--schema-only", "--no-owner", "--no-privileges", url],
                  dict(os.environ))
    dump = _ok(result, f"pg_dump --schema-only {url}")
    schema = Schema({}, {})
    for statement in _statements(dump):
        if weeks := _WEEK.findall(statement):
            schema.weeks.update(weeks)
            continue
        table = next((m.group(1) for pattern in _TABLE_OF
                      if (m := pattern.search(statement))), "(none)")
        lines = statement.splitlines()
        if statement.startswith("CREATE TABLE"):
            # Columns added by later old migrations come last; a fresh CreateModel puts them in
            # model order. The order is cosmetic: each column (and inline CHECK) is compared on
            # its own, so a difference names it; the order is kept for the report.
            body = [line.strip().rstrip(",") for line in lines[1:-1]]
            schema.columns[table] = body
            schema.statements.setdefault(table, []).extend(
                f"{table} column/check: {' '.join(line.split())}" for line in body)
            continue
        schema.statements.setdefault(table, []).append(" ".join(statement.split()))
    for statements in schema.statements.values():
        statements.sort()
    return schema


@pytest.fixture(scope="module")
def fresh_postgres(postgres_url: str, tmp_path_factory: pytest.TempPathFactory
                   ) -> Iterator[str]:
    _pg_tools()
    name = f"cp_freshlayout_{uuid.uuid4().hex[:10]}"
    _pg_admin(postgres_url, f'CREATE DATABASE "{name}"')
    try:
        url = _database(postgres_url, name)
        env = _env(url, tmp_path_factory.mktemp("fresh_layout_pg") / "var")
        _ok(_manage(env, "migrate", "--noinput"), "migrate --noinput (fresh database)")
        yield url
    finally:
        _pg_admin(postgres_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_postgres_schema_matches_a_fresh_migrate(old_postgres: OldDatabase,
                                                 fresh_postgres: str) -> None:
    assert old_postgres.migrate is not None
    _ok(old_postgres.migrate, "migrate --noinput")
    old = _schema(old_postgres.url)
    fresh = _schema(fresh_postgres)

    tables_old = {t for t in old.statements if t in old.columns}
    tables_fresh = {t for t in fresh.statements if t in fresh.columns}
    assert tables_old == tables_fresh, {"only after migrating the old database":
                                        sorted(tables_old - tables_fresh),
                                        "only on a fresh database":
                                        sorted(tables_fresh - tables_old)}

    # The old lines' weeks are kept beside the weeks a fresh database starts with.
    assert fresh.weeks and fresh.weeks <= old.weeks, (sorted(fresh.weeks), sorted(old.weeks))

    compared = sorted(t for t in tables_old | tables_fresh if COMPARED.match(t))
    assert "jobs_job" in compared and "security_apitoken" in compared, compared
    differences: dict[str, dict[str, list[str]]] = {}
    for table in compared:
        was, now = set(old.statements.get(table, [])), set(fresh.statements.get(table, []))
        if was != now:
            differences[table] = {"only_migrated_old": sorted(was - now),
                                  "only_fresh": sorted(now - was)}
    assert not differences, "schema of the migrated old database differs from a fresh one:\n" + (
        json.dumps(differences, indent=1))

    # Reported, not failed: the same columns in another order (see _schema).
    reordered = sorted(t for t in compared if old.columns.get(t) != fresh.columns.get(t))
    if reordered:
        print(f"column order differs (cosmetic) in: {', '.join(reordered)}")
