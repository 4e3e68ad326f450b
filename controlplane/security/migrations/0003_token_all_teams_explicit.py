from django.db import migrations, models


def mark_unnarrowed_tokens(apps, schema_editor):
    """Tokens made without teams were all-teams tokens: say so explicitly, so a narrowed token
    whose teams are later deleted is never read as one."""
    ApiToken = apps.get_model("security", "ApiToken")
    ApiToken.objects.filter(teams__isnull=True).update(all_teams=True)


class Migration(migrations.Migration):

    dependencies = [
        ("security", "0002_token_scopes"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="all_teams",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(mark_unnarrowed_tokens, migrations.RunPython.noop),
    ]
