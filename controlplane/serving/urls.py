"""Serving pages, under /serving/ (controlplane/runs/urls.py includes this module)."""

from django.urls import path

from controlplane.serving import trial_views, views

urlpatterns = [
    path("", views.index, name="serving-index"),
    path("endpoints/new/", views.endpoint_create, name="serving-endpoint-create"),
    path("models/new/", views.model_register, name="serving-model-register"),
    path("models/<int:pk>/", trial_views.model_detail, name="serving-model"),
    path("models/<int:pk>/trial/", trial_views.model_trial, name="serving-model-trial"),
    path("endpoints/<int:pk>/", views.endpoint_detail, name="serving-endpoint"),
    path("endpoints/<int:pk>/latency.json", views.endpoint_latency,
         name="serving-endpoint-latency"),
    path("endpoints/<int:pk>/deploy/", views.endpoint_deploy, name="serving-endpoint-deploy"),
    path("endpoints/<int:pk>/predict/", views.endpoint_predict, name="serving-endpoint-predict"),
    path("endpoints/<int:pk>/slo/", views.endpoint_slo, name="serving-endpoint-slo"),
    path("endpoints/<int:pk>/probe/", views.endpoint_probe, name="serving-endpoint-probe"),
    path("endpoints/<int:pk>/delete/", views.endpoint_delete, name="serving-endpoint-delete"),
    path("deployments/<int:pk>/undeploy/", views.deployment_undeploy,
         name="serving-deployment-undeploy"),
    path("deployments/<int:pk>/autoscaling/", views.deployment_autoscaling,
         name="serving-deployment-autoscaling"),
    path("jobs/<int:pk>/panel/", views.job_panel, name="serving-job-panel"),
    path("jobs/<int:pk>/latency.json", views.job_latency, name="serving-job-latency"),
]
