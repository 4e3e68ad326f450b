"""Pages for tokens, teams and members, and the audit log (included by config/urls.py)."""

from django.contrib.auth import views as auth_views
from django.urls import path

from controlplane.security import login, views

urlpatterns = [
    path("tokens/", views.token_list, name="token-list"),
    path("tokens/<int:pk>/revoke/", views.token_revoke, name="token-revoke"),
    path("teams/<slug:team>/audit/", views.team_audit, name="team-audit"),
    path("teams/", views.team_list, name="team-list"),
    path("teams/<slug:team>/members/", views.team_members, name="team-members"),
    path("teams/<slug:team>/tracking/", views.team_tracking_settings, name="team-tracking"),
    # Changing and resetting one's own password: Django's own views (changing it in the
    # site's pages; resetting, with the admin installed, in its templates); the names are the
    # ones those views expect.
    path("password/change/", auth_views.PasswordChangeView.as_view(
        template_name="security/password_change.html"), name="password_change"),
    path("password/change/done/", auth_views.PasswordChangeDoneView.as_view(
        template_name="security/password_change_done.html"), name="password_change_done"),
    path("password/reset/", login.PasswordResetView.as_view(), name="password_reset"),
    path("password/reset/sent/", auth_views.PasswordResetDoneView.as_view(),
         name="password_reset_done"),
    path("password/reset/<uidb64>/<token>/", auth_views.PasswordResetConfirmView.as_view(),
         name="password_reset_confirm"),
    path("password/reset/done/", auth_views.PasswordResetCompleteView.as_view(),
         name="password_reset_complete"),
]
