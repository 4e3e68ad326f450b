"""The API's rate-limit counters (controlplane/security/throttling.py): UNLOGGED on
PostgreSQL, where a count need not survive a crash and should cost no WAL."""

from typing import Any

from django.db import migrations, models


def unlogged(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE security_ratewindow SET UNLOGGED")


def logged(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE security_ratewindow SET LOGGED")


class Migration(migrations.Migration):

    dependencies = [
        ('security', '0003_token_all_teams_explicit'),
    ]

    operations = [
        migrations.CreateModel(
            name='RateWindow',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(max_length=200)),
                ('slot', models.BigIntegerField()),
                ('n', models.IntegerField(default=0)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('key', 'slot'), name='rate_window_once')],
            },
        ),
        migrations.RunPython(unlogged, logged),
    ]
