"""Pages of the costs app (included by config/urls.py)."""

from django.urls import path

from controlplane.costs import recommend_views, views

urlpatterns = [
    path("jobs/recommend/", recommend_views.recommend_page, name="job-recommend"),
    path("teams/<slug:team>/costs/", views.team_costs, name="team-costs"),
]
