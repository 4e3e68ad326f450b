"""Pages for tokens, teams and members, and the audit log (included by config/urls.py)."""

from django.urls import path

from controlplane.security import views

urlpatterns = [
    path("tokens/", views.token_list, name="token-list"),
    path("tokens/<int:pk>/revoke/", views.token_revoke, name="token-revoke"),
    path("teams/<slug:team>/audit/", views.team_audit, name="team-audit"),
    path("teams/", views.team_list, name="team-list"),
    path("teams/<slug:team>/members/", views.team_members, name="team-members"),
]
