"""Pages of the composer (included by config/urls.py)."""

from django.urls import path

from controlplane.compose import views

urlpatterns = [
    path("jobs/new/", views.JobComposeView.as_view(), name="job-compose"),
    path("jobs/validate/", views.JobValidateView.as_view(), name="job-validate"),
    path("jobs/export/", views.JobExportView.as_view(), name="job-export-form"),
    path("jobs/import/", views.JobImportView.as_view(), name="job-import"),
    path("jobs/<int:pk>/export/<slug:fmt>/", views.job_export, name="job-export"),
    path("jobs/<int:pk>/resubmit/", views.job_resubmit, name="job-resubmit"),
    path("templates/", views.TemplateListView.as_view(), name="template-list"),
    path("templates/save/", views.TemplateSaveView.as_view(), name="template-save"),
    path("templates/<int:pk>/delete/", views.template_delete, name="template-delete"),
]
