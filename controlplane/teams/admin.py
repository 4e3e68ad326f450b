from django.contrib import admin

from controlplane.teams.models import Membership, Team, TeamPolicy


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    inlines = [MembershipInline]


@admin.register(TeamPolicy)
class TeamPolicyAdmin(admin.ModelAdmin):
    list_display = ["team", "output_prefix", "allow_web_access", "updated_at"]
