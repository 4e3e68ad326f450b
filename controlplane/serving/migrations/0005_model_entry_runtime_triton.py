from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('serving', '0004_endpoint_access'),
    ]

    operations = [
        migrations.AlterField(
            model_name='modelentry',
            name='runtime',
            field=models.CharField(choices=[('eager', 'eager (PyTorch as trained)'), ('compiled', 'compiled (torch.compile before serving)'), ('aot', 'aot (AOTInductor package, built once, kept beside the weights)'), ('triton', 'triton (NVIDIA Triton serving an ONNX model repository)')], default='eager', max_length=16),
        ),
    ]
