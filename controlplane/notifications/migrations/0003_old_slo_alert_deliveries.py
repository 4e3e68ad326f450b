"""SLO alerts' delivery records move into the one outbox.

Every alert of the old per-alert outbox (serving's SloAlert.delivery columns, which
serving.0002 removes) gets its rows here, one per enabled channel of its team, so its delivery
is still on record: one still PENDING is then sent by the outbox's sweep; one SENT or FAILED
keeps that status, time and error; one that was SENDING becomes UNKNOWN (it may have gone, so
it is never sent again).
"""

from django.db import migrations

# The old SloAlert.delivery values -> the outbox's statuses.
OLD_DELIVERY = {"PENDING": "pending", "SENDING": "unknown", "SENT": "sent", "FAILED": "failed"}


def move_deliveries(apps, schema_editor):
    slo_alert = apps.get_model("serving", "SloAlert")
    slack_channel = apps.get_model("notifications", "SlackChannel")
    notification = apps.get_model("notifications", "Notification")
    for alert in slo_alert.objects.select_related("slo__endpoint"):
        status = OLD_DELIVERY.get(alert.delivery, "unknown")
        for channel in slack_channel.objects.filter(team_id=alert.slo.endpoint.team_id,
                                                    enabled=True):
            notification.objects.get_or_create(
                channel=channel, key=f"slo-alert-{alert.pk}",
                defaults={"slo_alert": alert, "event": "slo", "status": status,
                          "sent_at": alert.delivered_at if status == "sent" else None,
                          "last_error": alert.delivery_error if status == "failed" else ""})


def drop_alert_rows(apps, schema_editor):
    # Going back, a notification must have a job again.
    apps.get_model("notifications", "Notification").objects.filter(
        slo_alert__isnull=False).delete()


class Migration(migrations.Migration):
    # Its own migration: on PostgreSQL, rows written in the migration that adds the foreign
    # key would hold its deferred index creation back ("pending trigger events").
    dependencies = [
        ("notifications", "0002_slo_alerts_in_the_outbox"),
        ("serving", "0001_initial"),
    ]

    operations = [migrations.RunPython(move_deliveries, drop_alert_rows)]
