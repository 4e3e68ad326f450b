"""An SLO alert's delivery is the notifications outbox's now (its rows, one per channel, from
which SloAlert.delivery is derived): the alert's own delivery columns go, after
notifications.0003 has moved every alert's delivery record into the outbox."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('serving', '0001_initial'),
        ('notifications', '0003_old_slo_alert_deliveries'),
    ]

    operations = [
        migrations.RemoveField(
            model_name='sloalert',
            name='delivered_at',
        ),
        migrations.RemoveField(
            model_name='sloalert',
            name='delivery',
        ),
        migrations.RemoveField(
            model_name='sloalert',
            name='delivery_error',
        ),
    ]
