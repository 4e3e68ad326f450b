"""SLO alerts go through the one outbox: a Notification is about a job or about an SLO alert
(0003 moves the old alerts' delivery records into it)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('notifications', '0001_initial'),
        ('runs', '0001_initial'),
        ('serving', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='notification',
            name='slo_alert',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='notifications', to='serving.sloalert'),
        ),
        migrations.AlterField(
            model_name='notification',
            name='event',
            field=models.CharField(choices=[('submitted', 'Submitted to Vertex'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('failed', 'Failed'), ('cancelled', 'Cancelled'), ('preempted', 'Preempted or restarted'), ('recovered', 'Recovered'), ('budget', 'Budget alert'), ('slo', 'SLO breached or recovered')], max_length=20),
        ),
        migrations.AlterField(
            model_name='notification',
            name='job',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='notifications', to='runs.job'),
        ),
        migrations.AddConstraint(
            model_name='notification',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('job__isnull', False), ('slo_alert__isnull', True)), models.Q(('job__isnull', True), ('slo_alert__isnull', False)), _connector='OR'), name='notification_about_one_thing'),
        ),
    ]
