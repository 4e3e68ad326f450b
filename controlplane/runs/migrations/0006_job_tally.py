"""The jobs' tally (runs.models.JobTally): its table, the triggers on jobs_job that keep it
(PostgreSQL only: elsewhere the job list counts its rows), and the tally of the jobs there
already."""

from django.db import migrations, models

# One row of +1 for the job's new values and -1 for its old: an insert adds, a delete
# removes, an update that changes none of the four columns adds nothing (the trigger's WHEN).
FUNCTION = """
CREATE OR REPLACE FUNCTION jobs_job_tally() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO jobs_jobtally (team_id, kind, state, created_by_id, n)
        VALUES (OLD.team_id, OLD.kind, OLD.state, OLD.created_by_id, -1);
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO jobs_jobtally (team_id, kind, state, created_by_id, n)
        VALUES (NEW.team_id, NEW.kind, NEW.state, NEW.created_by_id, 1);
    END IF;
    RETURN NULL;
END
$$
"""

INSTALL = [
    FUNCTION,
    "CREATE TRIGGER jobs_job_tally_insert_delete AFTER INSERT OR DELETE ON jobs_job "
    "FOR EACH ROW EXECUTE FUNCTION jobs_job_tally()",
    "CREATE TRIGGER jobs_job_tally_update AFTER UPDATE OF team_id, kind, state, created_by_id "
    "ON jobs_job FOR EACH ROW WHEN ((OLD.team_id, OLD.kind, OLD.state, OLD.created_by_id) IS "
    "DISTINCT FROM (NEW.team_id, NEW.kind, NEW.state, NEW.created_by_id)) "
    "EXECUTE FUNCTION jobs_job_tally()",
]

REMOVE = [
    "DROP TRIGGER IF EXISTS jobs_job_tally_update ON jobs_job",
    "DROP TRIGGER IF EXISTS jobs_job_tally_insert_delete ON jobs_job",
    "DROP FUNCTION IF EXISTS jobs_job_tally()",
]


def install(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        # No job written between the tally of what is there and the triggers taking over.
        cursor.execute("LOCK TABLE jobs_job IN SHARE ROW EXCLUSIVE MODE")
        for statement in INSTALL:
            cursor.execute(statement)
        cursor.execute("INSERT INTO jobs_jobtally (team_id, kind, state, created_by_id, n) "
                       "SELECT team_id, kind, state, created_by_id, count(*) FROM jobs_job "
                       "GROUP BY team_id, kind, state, created_by_id")


def remove(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        for statement in REMOVE:
            cursor.execute(statement)


class Migration(migrations.Migration):

    dependencies = [
        ('runs', '0005_job_list_index_by_team_and_kind'),
    ]

    operations = [
        migrations.CreateModel(
            name='JobTally',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('team_id', models.BigIntegerField()),
                ('kind', models.CharField(max_length=8)),
                ('state', models.CharField(max_length=20)),
                ('created_by_id', models.BigIntegerField()),
                ('n', models.BigIntegerField()),
            ],
            options={
                'db_table': 'jobs_jobtally',
                'indexes': [models.Index(fields=['team_id', 'kind', 'state'], name='tally_by_team')],
            },
        ),
        migrations.RunPython(install, remove),
    ]
