"""Pages of the composer (included by config/urls.py)."""

from django.urls import path

from controlplane.compose import sweep_views, views

urlpatterns = [
    path("jobs/new/", views.JobComposeView.as_view(), name="job-compose"),
    path("jobs/regions/", views.job_regions, name="job-regions"),
    path("jobs/validate/", views.JobValidateView.as_view(), name="job-validate"),
    path("jobs/export/", views.JobExportView.as_view(), name="job-export-form"),
    path("jobs/import/", views.JobImportView.as_view(), name="job-import"),
    path("jobs/<int:pk>/export/<slug:fmt>/", views.job_export, name="job-export"),
    path("jobs/<int:pk>/resubmit/", views.job_resubmit, name="job-resubmit"),
    # Under /sweeps/ beside the sweeps app's pages: the form combines the compose form (this
    # app) with the study, and compose sits above sweeps in the import order.
    path("sweeps/compose/", sweep_views.SweepComposeView.as_view(), name="sweep-compose"),
    path("sweeps/compose/validate/", sweep_views.SweepValidateView.as_view(),
         name="sweep-compose-validate"),
    path("templates/", views.TemplateListView.as_view(), name="template-list"),
    path("templates/save/", views.TemplateSaveView.as_view(), name="template-save"),
    path("templates/<int:pk>/delete/", views.template_delete, name="template-delete"),
]
