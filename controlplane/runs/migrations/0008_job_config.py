"""Job.config: each job's request as flat keys (controlplane/runs/config_keys.py), which the
job list filters by and Compare lays out. Jobs made before it get theirs from their request."""

from django.db import migrations, models

BATCH = 500


def flatten_existing(apps, schema_editor):
    from controlplane.runs.config_keys import flatten

    Job = apps.get_model("runs", "Job")
    jobs = Job.objects.filter(config={}).exclude(request={}).only("pk", "request")
    for job in jobs.iterator(chunk_size=BATCH):
        Job.objects.filter(pk=job.pk).update(config=flatten(job.request))


class Migration(migrations.Migration):

    dependencies = [
        ('runs', '0007_job_tags_and_note'),
    ]

    operations = [
        migrations.AddField(
            model_name='job',
            name='config',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(flatten_existing, migrations.RunPython.noop, elidable=True),
    ]
