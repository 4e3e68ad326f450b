from django.core.management.commands.createcachetable import Command as CreateCacheTable
from django.db import migrations

TABLE = "cp_shared_cache"


def create(apps, schema_editor):
    """The table of the default cache when CP_CACHE_URL names no Redis: login failures and
    API rate limits are counted there, shared by every web process."""
    command = CreateCacheTable()
    command.verbosity = 0
    command.create_table(schema_editor.connection.alias, TABLE, False)


def drop(apps, schema_editor):
    schema_editor.execute(f"DROP TABLE IF EXISTS {schema_editor.quote_name(TABLE)}")


class Migration(migrations.Migration):

    dependencies = [
        ("core", "0002_relabel_moved_models"),
    ]

    operations = [migrations.RunPython(create, drop)]
