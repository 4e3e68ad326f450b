"""Checks a database made at the old layout (apps `jobs` and `security`), loaded from a dump and
then migrated by the new code, through the NEW models only.

Run by tests/integration/test_old_layout_migration.py in a subprocess, with DATABASE_URL,
SECRET_KEY and DJANGO_SETTINGS_MODULE set, the repository root on PYTHONPATH:

    python tests/integration/old_layout/check_migrated.py tests/integration/old_layout/expected.json

Every old model in expected.json is found by its table: `apps.get_models()` indexed by
`_meta.db_table`, so the check never names an app label the split might have changed. Prints a
JSON summary on the last stdout line; `failures` lists every check that did not hold.
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import django

failures: list[str] = []


def check(condition: bool, what: str) -> bool:
    if not condition:
        failures.append(what)
    return condition


def equal(actual: Any, expected: Any, what: str) -> bool:
    return check(actual == expected, f"{what}: expected {expected!r}, got {actual!r}")


def main(expected_path: str) -> dict[str, Any]:
    django.setup()

    from django.apps import apps
    from django.contrib.admin.models import LogEntry
    from django.contrib.auth.models import Group, Permission, User
    from django.contrib.contenttypes.models import ContentType
    from django.db import connection

    from controlplane.core import secrets
    from controlplane.security import tokens

    expected = json.loads(Path(expected_path).read_text())
    spot = expected["spot_checks"]

    by_table = {m._meta.db_table: m for m in apps.get_models(include_auto_created=True)}

    # --- every table, by its db_table, through the new model ------------------------------
    old_to_new: dict[str, Any] = {}  # "jobs.job" -> new model class
    tables: dict[str, dict[str, Any]] = {}
    for dotted, info in expected["models"].items():
        model = by_table.get(info["db_table"])
        if not check(model is not None, f"{dotted}: no model has db_table {info['db_table']}"):
            continue
        old_to_new[dotted.lower()] = model
        check(model._meta.pk.attname == info["pk"] or model._meta.pk.name == info["pk"],
              f"{dotted}: primary key is {model._meta.pk.attname}, expected {info['pk']}")
        rows = model.objects.count()
        if info["db_table"] == "jobs_notification":
            # notifications.0003 adds the outbox rows of the old SLO alerts' deliveries (checked
            # below); the job notifications are the rows there were.
            rows = model.objects.filter(job__isnull=False).count()
        tables[info["db_table"]] = {"model": model._meta.label, "rows": rows}
        equal(rows, info["rows"], f"{dotted} ({info['db_table']}) row count")
    for dotted, info in expected["m2m_tables"].items():
        model = by_table.get(info["db_table"])
        if not check(model is not None, f"{dotted}: no model has db_table {info['db_table']}"):
            continue
        rows = model.objects.count()
        tables[info["db_table"]] = {"model": model._meta.label, "rows": rows}
        equal(rows, info["rows"], f"{dotted} ({info['db_table']}) row count")

    def new_model(old_label: str, model_name: str) -> Any:
        return old_to_new.get(f"{old_label}.{model_name}".lower())

    def new_label(old_label: str, model_name: str) -> str | None:
        model = new_model(old_label, model_name)
        return None if model is None else model._meta.app_label

    def table(name: str) -> Any:
        return by_table[name]

    Team = table("jobs_team")
    Membership = table("jobs_membership")
    Job = table("jobs_job")
    LogLine = table("jobs_logline")
    JobEvent = table("jobs_jobevent")
    JobRestart = table("jobs_jobrestart")
    LogCursor = table("jobs_logcursor")
    LogRetention = table("jobs_logretention")
    Lease = table("jobs_lease")
    TeamBudget = table("jobs_teambudget")
    BudgetCrossing = table("jobs_budgetcrossing")
    SlackChannel = table("jobs_slackchannel")
    Notification = table("jobs_notification")
    JobTemplate = table("jobs_jobtemplate")
    ComposerSettings = table("jobs_composersettings")
    ModelEntry = table("jobs_modelentry")
    Endpoint = table("jobs_endpoint")
    Deployment = table("jobs_deployment")
    LatencySample = table("jobs_latencysample")
    MonitoringWindow = table("jobs_monitoringwindow")
    Slo = table("jobs_slo")
    SloAlert = table("jobs_sloalert")
    ApiToken = table("security_apitoken")
    AuditEntry = table("security_auditentry")

    # --- contrib counts ------------------------------------------------------------------------
    contrib = expected["contrib"]
    equal(User.objects.count(), contrib["auth.User"], "auth.User count")
    equal(Group.objects.count(), contrib["auth.Group"], "auth.Group count")
    equal(User.user_permissions.through.objects.count(), contrib["auth_user_user_permissions"],
          "auth_user_user_permissions count")
    equal(Group.permissions.through.objects.count(), contrib["auth_group_permissions"],
          "auth_group_permissions count")
    equal(User.groups.through.objects.count(), contrib["auth_user_groups"],
          "auth_user_groups count")
    equal(LogEntry.objects.count(), contrib["admin.LogEntry"], "admin.LogEntry count")

    # --- teams and users -----------------------------------------------------------------------
    for t in spot["teams"]:
        team = Team.objects.filter(pk=t["id"]).first()
        if check(team is not None, f"team {t['id']} missing"):
            equal((team.slug, team.name), (t["slug"], t["name"]), f"team {t['id']}")
    for u in spot["users"]:
        user = User.objects.filter(pk=u["id"]).first()
        if not check(user is not None, f"user {u['id']} missing"):
            continue
        equal(user.username, u["username"], f"user {u['id']} username")
        equal((user.is_staff, user.is_superuser), (u["is_staff"], u["is_superuser"]),
              f"user {u['username']} staff/superuser")
        check(user.check_password(u["password"]), f"user {u['username']}: password rejected")
        memberships = {m.team.slug: m.role
                       for m in Membership.objects.filter(user=user).select_related("team")}
        equal(memberships, u["memberships"], f"user {u['username']} memberships")

    # --- jobs and what hangs off them ----------------------------------------------------------
    per_job = {
        "attempts": "jobs_jobattempt", "events": "jobs_jobevent",
        "step_metrics": "jobs_stepmetric", "log_lines": "jobs_logline",
        "log_failures": "jobs_logfailure", "restarts": "jobs_jobrestart",
        "notifications": "jobs_notification", "model_entries": "jobs_modelentry",
    }
    for j in spot["jobs"]:
        job = Job.objects.select_related("team", "created_by").filter(pk=j["id"]).first()
        if not check(job is not None, f"job {j['id']} missing"):
            continue
        actual = {
            "name": job.name, "team": job.team.slug,
            "created_by": job.created_by.username if job.created_by else None,
            "state": job.state, "error_message": job.error_message, "attempt": job.attempt,
            "restarts": job.restarts, "resubmitted_from": job.resubmitted_from_id,
            "resume_from": job.resume_from, "resume_from_step": job.resume_from_step,
            "cost_micros": job.cost_micros,
            "estimate_hours": None if job.estimate_hours is None else str(job.estimate_hours),
        }
        for field, value in actual.items():
            equal(value, j[field], f"job {j['id']} {field}")
        if j["resubmitted_from"] is not None:
            equal(job.resubmitted_from.name,
                  next(x["name"] for x in spot["jobs"] if x["id"] == j["resubmitted_from"]),
                  f"job {j['id']} resubmitted_from (through the relation)")
        for what, db_table in per_job.items():
            equal(table(db_table).objects.filter(job_id=job.pk).count(), j["counts"][what],
                  f"job {j['id']} {what}")

    log_lines_per_job = {str(job_id): LogLine.objects.filter(job_id=int(job_id)).count()
                         for job_id in spot["log_lines_per_job"]}
    equal(log_lines_per_job, spot["log_lines_per_job"], "log lines per job")
    by_severity: dict[str, int] = {}
    for severity in LogLine.objects.values_list("severity", flat=True):
        by_severity[str(severity)] = by_severity.get(str(severity), 0) + 1
    equal(by_severity, spot["log_lines_by_severity"], "log lines by severity")
    equal(LogLine.objects.filter(severity__gte=400).count(), spot["log_lines_severity_gte_400"],
          "log lines with severity >= 400")
    events_by_kind: dict[str, int] = {}
    for kind in JobEvent.objects.values_list("kind", flat=True):
        events_by_kind[kind] = events_by_kind.get(kind, 0) + 1
    equal(events_by_kind, spot["job_events_by_kind"], "job events by kind")

    for r in spot["job_restarts"]:
        restart = JobRestart.objects.filter(pk=r["id"]).first()
        if check(restart is not None, f"job restart {r['id']} missing"):
            equal({"job": restart.job_id, "attempt": restart.attempt, "cause": restart.cause,
                   "checkpoint_event": restart.checkpoint_id, "steps_lost": restart.steps_lost},
                  {k: r[k] for k in ("job", "attempt", "cause", "checkpoint_event",
                                     "steps_lost")},
                  f"job restart {r['id']}")
    for c in spot["log_cursors"]:
        cursor = LogCursor.objects.select_related("attempt").filter(pk=c["attempt_id"]).first()
        if check(cursor is not None, f"log cursor {c['attempt_id']} missing"):
            equal((cursor.attempt.job_id, cursor.done), (c["job"], c["done"]),
                  f"log cursor {c['attempt_id']}")
    for slug, r in spot["log_retention"].items():
        retention = LogRetention.objects.filter(team__slug=slug).first()
        if check(retention is not None, f"log retention of {slug} missing"):
            equal({"days": retention.days, "metric_points": retention.metric_points}, r,
                  f"log retention of {slug}")
    equal(sorted((x.name, x.holder) for x in Lease.objects.all()),
          sorted((x["name"], x["holder"]) for x in spot["leases"]), "leases")

    # --- costs ---------------------------------------------------------------------------------
    for b in spot["budgets"]:
        budget = TeamBudget.objects.filter(team__slug=b["team"]).first()
        if check(budget is not None, f"budget of {b['team']} missing"):
            equal({"team": b["team"], "monthly_micros": budget.monthly_micros,
                   "on_exceed": budget.on_exceed,
                   "updated_by": budget.updated_by.username if budget.updated_by else None},
                  b, f"budget of {b['team']}")
    for b in spot["budget_crossings"]:
        crossing = BudgetCrossing.objects.filter(team__slug=b["team"],
                                                 month=b["month"]).first()
        if check(crossing is not None, f"budget crossing {b['team']} {b['month']} missing"):
            equal((crossing.spent_micros, crossing.jobs), (b["spent_micros"], b["jobs"]),
                  f"budget crossing {b['team']} {b['month']}")

    # --- notifications: secrets decrypt with the recorded SECRET_KEY ----------------------------
    secrets_decrypted = 0
    for s in spot["slack_channels"]:
        channel = SlackChannel.objects.select_related("team").filter(pk=s["id"]).first()
        if not check(channel is not None, f"slack channel {s['id']} missing"):
            continue
        equal({"team": channel.team.slug, "name": channel.name, "kind": channel.kind,
               "secret_hint": channel.secret_hint, "slack_channel": channel.slack_channel,
               "notify_on": channel.notify_on},
              {k: s[k] for k in ("team", "name", "kind", "secret_hint", "slack_channel",
                                 "notify_on")},
              f"slack channel {s['id']}")
        try:
            plain = secrets.decrypt(channel.secret)
        except secrets.SecretUnreadable as exc:
            failures.append(f"slack channel {s['id']}: secret does not decrypt: {exc}")
        else:
            if equal(plain, s["secret_plain"], f"slack channel {s['id']} secret"):
                secrets_decrypted += 1
            equal(channel.get_secret(), s["secret_plain"],
                  f"slack channel {s['id']} get_secret()")
        equal(Notification.objects.filter(channel_id=channel.pk, job__isnull=False).count(),
              s["notifications"], f"slack channel {s['id']} notifications")
    statuses: dict[str, int] = {}
    for status in Notification.objects.filter(job__isnull=False).values_list("status",
                                                                               flat=True):
        statuses[status] = statuses.get(status, 0) + 1
    equal(statuses, spot["notifications_by_status"], "notifications by status")

    # --- compose -------------------------------------------------------------------------------
    equal(sorted((t.team.slug, t.name, t.created_by.username if t.created_by else None)
                 for t in JobTemplate.objects.select_related("team", "created_by")),
          sorted((t["team"], t["name"], t["created_by"]) for t in spot["job_templates"]),
          "job templates")
    equal({c.team.slug: c.memory_policy
           for c in ComposerSettings.objects.select_related("team")},
          spot["composer_settings"], "composer settings")

    # --- serving -------------------------------------------------------------------------------
    serving = spot["serving"]
    for m in serving["model_entries"]:
        entry = ModelEntry.objects.filter(pk=m["id"]).first()
        if check(entry is not None, f"model entry {m['id']} missing"):
            equal({"id": entry.pk, "job": entry.job_id, "display_name": entry.display_name,
                   "state": entry.state, "step": entry.step}, m, f"model entry {m['id']}")
    for e in serving["endpoints"]:
        endpoint = Endpoint.objects.filter(pk=e["id"]).first()
        if check(endpoint is not None, f"endpoint {e['id']} missing"):
            equal({"id": endpoint.pk, "name": endpoint.name, "state": endpoint.state,
                   "deployments": Deployment.objects.filter(endpoint_id=endpoint.pk).count(),
                   "latency_samples":
                       LatencySample.objects.filter(endpoint_id=endpoint.pk).count(),
                   "monitoring_windows":
                       MonitoringWindow.objects.filter(endpoint_id=endpoint.pk).count()},
                  e, f"endpoint {e['id']}")
    for s in serving["slo"]:
        slo = Slo.objects.filter(endpoint_id=s["endpoint"]).first()
        if check(slo is not None, f"SLO of endpoint {s['endpoint']} missing"):
            equal({"endpoint": slo.endpoint_id, "status": slo.status,
                   "alerts": SloAlert.objects.filter(slo_id=slo.pk).count()},
                  s, f"SLO of endpoint {s['endpoint']}")
            # Each old alert's delivery moved into the outbox: a row per enabled channel of
            # the team, with the status it had (these were all delivered or refused).
            enabled = SlackChannel.objects.filter(team_id=slo.endpoint.team_id,
                                                  enabled=True).count()
            for alert in SloAlert.objects.filter(slo_id=slo.pk):
                moved = list(Notification.objects.filter(slo_alert_id=alert.pk)
                             .values_list("status", flat=True))
                check(len(moved) == enabled and set(moved) <= {"sent", "failed"},
                      f"SLO alert {alert.pk}: outbox rows {moved}, {enabled} enabled channels")

    # --- API tokens: the plain keys go through the app's own lookup ----------------------------
    tokens_authenticated: list[int] = []
    tokens_refused: list[int] = []
    for t in spot["api_tokens"]:
        token = ApiToken.objects.filter(pk=t["id"]).first()
        if not check(token is not None, f"api token {t['id']} missing"):
            continue
        equal({"prefix": token.prefix, "key_hash": token.key_hash,
               "read_only": token.read_only, "user": token.user.username,
               "teams": sorted(team.slug for team in token.teams.all())},
              {"prefix": t["prefix"], "key_hash": t["key_hash"], "read_only": t["read_only"],
               "user": t["user"], "teams": sorted(t["teams"])},
              f"api token {t['id']}")
        equal(tokens.digest(t["key"]), t["key_hash"], f"api token {t['id']} digest of key")
        found = tokens.find(t["key"])
        if t["authenticates"]:
            if check(found is not None, f"api token {t['id']} ({t['name']}): key no longer "
                                        "authenticates"):
                equal(found.pk, t["id"], f"api token {t['id']}: key finds another token")
                tokens_authenticated.append(t["id"])
        else:
            if check(found is None, f"api token {t['id']} ({t['name']}): inactive key "
                                    "authenticates"):
                tokens_refused.append(t["id"])
    for t in spot["api_token_teams"]:
        equal(sorted(ApiToken.objects.get(pk=t["token_id"]).teams.values_list("slug",
                                                                              flat=True)),
              sorted(t["teams"]), f"api token {t['token_id']} teams")

    for a in spot["audit_entries"]:
        entry = AuditEntry.objects.select_related("actor", "team").filter(pk=a["id"]).first()
        if check(entry is not None, f"audit entry {a['id']} missing"):
            equal({"id": entry.pk, "actor": entry.actor.username if entry.actor else None,
                   "actor_name": entry.actor_name, "action": entry.action,
                   "team": entry.team.slug if entry.team else None,
                   "target_type": entry.target_type, "target_id": entry.target_id,
                   "via": entry.via}, a, f"audit entry {a['id']}")

    # --- content types, permissions, admin log -------------------------------------------------
    content_types: dict[str, list[str]] = {}
    for old_label, model_name in spot["content_types"]:
        label = new_label(old_label, model_name)
        if not check(label is not None, f"content type {old_label}.{model_name}: no new model"):
            continue
        ct = ContentType.objects.filter(app_label=label, model=model_name).first()
        if check(ct is not None, f"content type {label}.{model_name} (was {old_label}) "
                                 "missing"):
            equal(ct.model_class(), new_model(old_label, model_name),
                  f"content type {label}.{model_name} model class")
        content_types.setdefault(label, []).append(model_name)
    moved_names = {model_name for old_label, model_name in spot["content_types"]
                   if old_label == "jobs"}
    stale = sorted(ContentType.objects.filter(app_label="jobs", model__in=moved_names)
                   .values_list("model", flat=True))
    check(not stale, f"content types still labelled 'jobs' for moved models: {stale}")
    leftover_jobs = sorted(ContentType.objects.filter(app_label="jobs")
                           .values_list("model", flat=True))
    ours = ContentType.objects.none()  # looked up, never made (get_for_model would make them)
    for model in old_to_new.values():
        ours = ours | ContentType.objects.filter(app_label=model._meta.app_label,
                                                 model=model._meta.model_name)
    equal(ours.count(), contrib["contenttypes (jobs+security)"],
          "content types of the moved and security models")
    # No permission was made twice (post_migrate would do so under a fresh content type).
    equal(Permission.objects.filter(content_type__in=ours).count(),
          sum(contrib["auth.Permission by app_label"].values()),
          "permissions on the moved and security models")

    for p in spot["user_permissions"]:
        label = new_label(p["app_label"], p["model"])
        check(User.objects.get(username=p["user"]).user_permissions.filter(
                  content_type__app_label=label, content_type__model=p["model"],
                  codename=p["codename"]).exists(),
              f"user {p['user']} lost permission {p['app_label']}.{p['codename']} "
              f"(now {label}.{p['codename']})")
    for p in spot["group_permissions"]:
        label = new_label(p["app_label"], p["model"])
        check(Group.objects.get(name=p["group"]).permissions.filter(
                  content_type__app_label=label, content_type__model=p["model"],
                  codename=p["codename"]).exists(),
              f"group {p['group']} lost permission {p['app_label']}.{p['codename']} "
              f"(now {label}.{p['codename']})")
    for username, groups in spot["user_groups"].items():
        equal(sorted(User.objects.get(username=username).groups.values_list("name", flat=True)),
              sorted(groups), f"user {username} groups")

    has_perm: list[dict[str, Any]] = []
    perm_models = {p["codename"]: p["model"]
                   for p in spot["user_permissions"] + spot["group_permissions"]}
    for c in spot["has_perm_checks"]:
        old_label, codename = c["perm"].split(".", 1)
        model_name = perm_models.get(codename, codename.split("_", 1)[1])
        label = new_label(old_label, model_name)
        perm = f"{label}.{codename}"
        user = User.objects.get(username=c["user"])  # fresh: has_perm caches on the object
        granted = user.has_perm(perm)
        equal(granted, c["expected"], f"{c['user']}.has_perm({perm!r}) (was {c['perm']!r})")
        row = {"user": c["user"], "old": c["perm"], "new": perm, "granted": granted}
        if label != old_label and not user.is_superuser:
            old_granted = User.objects.get(username=c["user"]).has_perm(c["perm"])
            check(not old_granted, f"{c['user']}.has_perm({c['perm']!r}) still holds under "
                                   "the old label")
            row["old_granted"] = old_granted
        has_perm.append(row)

    admin_log: list[str] = []
    for e in spot["admin_log_entries"]:
        entry = LogEntry.objects.select_related("content_type", "user").filter(
            pk=e["id"]).first()
        if not check(entry is not None, f"admin log entry {e['id']} missing"):
            continue
        label = new_label(e["app_label"], e["model"])
        equal({"user": entry.user.username, "content_type":
               (entry.content_type.app_label, entry.content_type.model),
               "object_id": entry.object_id, "object_repr": entry.object_repr,
               "action_flag": entry.action_flag},
              {"user": e["user"], "content_type": (label, e["model"]),
               "object_id": e["object_id"], "object_repr": e["object_repr"],
               "action_flag": e["action_flag"]}, f"admin log entry {e['id']}")
        target = entry.get_edited_object() if entry.content_type.model_class() else None
        check(target is not None and str(target.pk) == e["object_id"],
              f"admin log entry {e['id']}: edited object not found through its content type")
        admin_log.append(f"{entry.content_type.app_label}.{entry.content_type.model}")

    return {
        "ok": not failures,
        "failures": failures,
        "vendor": connection.vendor,
        "tables": tables,
        "tables_checked": len(tables),
        "jobs_checked": len(spot["jobs"]),
        "log_lines_per_job": log_lines_per_job,
        "tokens_authenticated": tokens_authenticated,
        "tokens_refused": tokens_refused,
        "secrets_decrypted": secrets_decrypted,
        "has_perm": has_perm,
        "content_types": {k: sorted(v) for k, v in sorted(content_types.items())},
        "leftover_jobs_content_types": leftover_jobs,
        "admin_log_content_types": admin_log,
    }


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"not JSON: {value!r}")


if __name__ == "__main__":
    try:
        summary = main(sys.argv[1])
    except Exception as exc:  # the summary still comes out, naming what broke
        import traceback

        traceback.print_exc()
        summary = {"ok": False, "failures": [*failures, f"checker crashed: {exc!r}"]}
    print(json.dumps(summary, default=_default))
    sys.exit(0 if summary["ok"] else 1)
