"""The REST API under /api/v1/: each app's views, in one table."""

from django.urls import include, path

from controlplane.compose import actions_api, estimate_api
from controlplane.compose import api as compose_api
from controlplane.costs import budgets_api, goodput_api, recommend_api
from controlplane.logs import api as logs_api
from controlplane.notifications import api as notifications_api
from controlplane.runs import api as runs_api
from controlplane.runs import queue_api, system_api
from controlplane.sweeps import api as sweeps_api

urlpatterns = [
    path("jobs/", compose_api.JobListCreate.as_view(), name="api-job-list"),
    path("jobs/groups/", runs_api.JobGroups.as_view(), name="api-job-groups"),
    path("jobs/validate/", compose_api.JobValidate.as_view(), name="api-job-validate"),
    path("jobs/estimate/", estimate_api.JobEstimate.as_view(), name="api-job-estimate"),
    path("jobs/recommend/", recommend_api.JobRecommend.as_view(), name="api-job-recommend"),
    path("teams/<slug:team>/budget/", budgets_api.TeamBudgetView.as_view(), name="api-team-budget"),
    path("teams/<slug:team>/spend/", budgets_api.TeamSpendView.as_view(), name="api-team-spend"),
    path("teams/<slug:team>/goodput/", goodput_api.TeamGoodputView.as_view(),
         name="api-team-goodput"),
    path("teams/<slug:team>/quotas/", queue_api.TeamQuotaView.as_view(), name="api-team-quotas"),
    path("queue/", queue_api.QueueView.as_view(), name="api-queue"),
    path("jobs/export/", compose_api.JobExport.as_view(), name="api-job-export"),
    path("jobs/import/", compose_api.JobImport.as_view(), name="api-job-import"),
    path("jobs/<int:pk>/export/", compose_api.StoredJobExport.as_view(),
         name="api-job-export-stored"),
    path("presets/", compose_api.PresetList.as_view(), name="api-preset-list"),
    path("templates/", compose_api.TemplateList.as_view(), name="api-template-list"),
    path("templates/<int:pk>/", compose_api.TemplateDetail.as_view(), name="api-template-detail"),
    path("jobs/<int:pk>/", runs_api.JobDetail.as_view(), name="api-job-detail"),
    path("jobs/<int:pk>/cancel/", runs_api.JobCancel.as_view(), name="api-job-cancel"),
    path("jobs/<int:pk>/clone/", actions_api.JobClone.as_view(), name="api-job-clone"),
    path("jobs/<int:pk>/resubmit/", actions_api.JobResubmit.as_view(), name="api-job-resubmit"),
    path("jobs/<int:pk>/attempts/", runs_api.JobAttempts.as_view(), name="api-job-attempts"),
    path("jobs/<int:pk>/restarts/", runs_api.JobRestarts.as_view(), name="api-job-restarts"),
    path("jobs/<int:pk>/goodput/", goodput_api.JobGoodputView.as_view(), name="api-job-goodput"),
    path("jobs/<int:pk>/system/", system_api.JobSystemView.as_view(), name="api-job-system"),
    path("teams/<slug:team>/channels/", notifications_api.ChannelList.as_view(),
         name="api-channel-list"),
    path("teams/<slug:team>/channels/<int:pk>/", notifications_api.ChannelDetail.as_view(),
         name="api-channel-detail"),
    path("jobs/<int:pk>/events/", runs_api.JobEvents.as_view(), name="api-job-events"),
    path("jobs/<int:pk>/steps/", logs_api.JobSteps.as_view(), name="api-job-steps"),
    path("jobs/<int:pk>/logs/", logs_api.JobLogs.as_view(), name="api-job-logs"),
    path("jobs/<int:pk>/metrics/", logs_api.JobMetrics.as_view(), name="api-job-metrics"),
    path("serving/", include("controlplane.serving.api")),
    path("sweeps/", sweeps_api.SweepListCreate.as_view(), name="api-sweep-list"),
    path("sweeps/validate/", sweeps_api.SweepValidate.as_view(), name="api-sweep-validate"),
    path("sweeps/import/", sweeps_api.SweepImport.as_view(), name="api-sweep-import"),
    path("sweeps/<int:pk>/", sweeps_api.SweepDetail.as_view(), name="api-sweep-detail"),
    path("sweeps/<int:pk>/cancel/", sweeps_api.SweepCancel.as_view(), name="api-sweep-cancel"),
    path("sweeps/<int:pk>/clone/", sweeps_api.SweepClone.as_view(), name="api-sweep-clone"),
    path("sweeps/<int:pk>/export/", sweeps_api.SweepExport.as_view(), name="api-sweep-export"),
    path("clusters/", include("controlplane.clusters.api")),
]
