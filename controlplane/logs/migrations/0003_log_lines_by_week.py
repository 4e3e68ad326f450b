"""The log table partitioned by week (controlplane/logs/partitions.py), on PostgreSQL only:
the rows stay; weeks are made from the oldest line's, eight weeks back at most, and older
lines go to the DEFAULT partition (retention deletes them as it did). Elsewhere the table stays as it is."""

from datetime import UTC, datetime, timedelta

from django.db import migrations

from controlplane.logs import partitions


def forwards(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql" or partitions.is_partitioned():
        return
    now = datetime.now(UTC)
    partitions.partition(now, back=timedelta(weeks=8))


class Migration(migrations.Migration):

    dependencies = [
        ("logs", "0002_log_key_holds_the_time"),
    ]

    # A plain table again would need every row copied back: rolling back past here is a
    # restore from a backup.
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop, elidable=False)]
