from django.urls import include, path

from jobs.api import actions, budgets, compose, costs, logs, recommend, views
from jobs.notifications import api as notifications_api

urlpatterns = [
    path("jobs/", views.JobList.as_view(), name="api-job-list"),
    path("jobs/validate/", compose.JobValidate.as_view(), name="api-job-validate"),
    path("jobs/estimate/", costs.JobEstimate.as_view(), name="api-job-estimate"),
    path("jobs/recommend/", recommend.JobRecommend.as_view(), name="api-job-recommend"),
    path("teams/<slug:team>/budget/", budgets.TeamBudgetView.as_view(), name="api-team-budget"),
    path("teams/<slug:team>/spend/", budgets.TeamSpendView.as_view(), name="api-team-spend"),
    path("jobs/export/", compose.JobExport.as_view(), name="api-job-export"),
    path("jobs/import/", compose.JobImport.as_view(), name="api-job-import"),
    path("jobs/<int:pk>/export/", compose.StoredJobExport.as_view(),
         name="api-job-export-stored"),
    path("presets/", compose.PresetList.as_view(), name="api-preset-list"),
    path("templates/", compose.TemplateList.as_view(), name="api-template-list"),
    path("templates/<int:pk>/", compose.TemplateDetail.as_view(), name="api-template-detail"),
    path("jobs/<int:pk>/", views.JobDetail.as_view(), name="api-job-detail"),
    path("jobs/<int:pk>/cancel/", actions.JobCancel.as_view(), name="api-job-cancel"),
    path("jobs/<int:pk>/clone/", actions.JobClone.as_view(), name="api-job-clone"),
    path("jobs/<int:pk>/resubmit/", actions.JobResubmit.as_view(), name="api-job-resubmit"),
    path("jobs/<int:pk>/attempts/", actions.JobAttempts.as_view(), name="api-job-attempts"),
    path("jobs/<int:pk>/restarts/", actions.JobRestarts.as_view(), name="api-job-restarts"),
    path("teams/<slug:team>/channels/", notifications_api.ChannelList.as_view(),
         name="api-channel-list"),
    path("teams/<slug:team>/channels/<int:pk>/", notifications_api.ChannelDetail.as_view(),
         name="api-channel-detail"),
    path("jobs/<int:pk>/events/", views.JobEvents.as_view(), name="api-job-events"),
    path("jobs/<int:pk>/steps/", logs.JobSteps.as_view(), name="api-job-steps"),
    path("jobs/<int:pk>/logs/", logs.JobLogs.as_view(), name="api-job-logs"),
    path("jobs/<int:pk>/metrics/", logs.JobMetrics.as_view(), name="api-job-metrics"),
    path("serving/", include("jobs.serving.api")),
]
