"""Content types of the models that moved out of the app `jobs` follow them to their new apps,
so permissions granted on them and the admin's history keep pointing at the right model."""

from django.db import migrations

NEW_HOME = {
    "team": "teams", "membership": "teams",
    "job": "runs", "jobattempt": "runs", "jobevent": "runs", "jobrestart": "runs",
    "stepmetric": "logs", "logline": "logs", "logcursor": "logs", "logreadquota": "logs",
    "logfailure": "logs", "logretention": "logs",
    "lease": "core",
    "teambudget": "costs", "budgetcrossing": "costs",
    "slackchannel": "notifications", "notification": "notifications",
    "modelentry": "serving", "endpoint": "serving", "deployment": "serving",
    "latencysample": "serving", "monitoringwindow": "serving", "slo": "serving",
    "sloalert": "serving",
    "jobtemplate": "compose", "composersettings": "compose",
}


def relabel(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    for row in content_type.objects.filter(app_label="jobs"):
        new = NEW_HOME.get(row.model)
        if new is None:
            continue
        # A content type the new app made already (a migrate that ran before this one): keep the
        # old row, the one permissions and the admin log refer to.
        content_type.objects.filter(app_label=new, model=row.model).delete()
        row.app_label = new
        row.save(update_fields=["app_label"])


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(relabel, migrations.RunPython.noop)]
