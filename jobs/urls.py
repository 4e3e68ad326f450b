"""The pages (the REST API has its own urls under api/v1/)."""

from django.urls import include, path

from jobs import recommend_views, views
from jobs.budgets import views as budget_views

urlpatterns = [
    path("", views.JobListView.as_view(), name="job-list"),
    path("jobs/rows/", views.JobRowsView.as_view(), name="job-list-rows"),
    path("jobs/new/", views.JobComposeView.as_view(), name="job-compose"),
    path("jobs/recommend/", recommend_views.recommend_page, name="job-recommend"),
    path("jobs/validate/", views.JobValidateView.as_view(), name="job-validate"),
    path("jobs/export/", views.JobExportView.as_view(), name="job-export-form"),
    path("jobs/import/", views.JobImportView.as_view(), name="job-import"),
    path("jobs/<int:pk>/export/<slug:fmt>/", views.job_export, name="job-export"),
    path("templates/", views.TemplateListView.as_view(), name="template-list"),
    path("templates/save/", views.TemplateSaveView.as_view(), name="template-save"),
    path("templates/<int:pk>/delete/", views.template_delete, name="template-delete"),
    path("jobs/<int:pk>/", views.JobDetailView.as_view(), name="job-detail"),
    path("jobs/<int:pk>/cancel/", views.job_cancel, name="job-cancel"),
    path("jobs/<int:pk>/resubmit/", views.job_resubmit, name="job-resubmit"),
    path("jobs/<int:pk>/metrics.json", views.job_metrics, name="job-metrics"),
    path("jobs/<int:pk>/partials/<slug:name>/", views.job_partial, name="job-partial"),
    path("teams/<slug:team>/costs/", budget_views.team_costs, name="team-costs"),
    path("serving/", include("jobs.serving.urls")),
    path("", include("jobs.notifications.urls")),
]
