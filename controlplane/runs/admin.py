from django.contrib import admin

from controlplane.runs.models import Job, JobAttempt


class AttemptInline(admin.TabularInline):
    model = JobAttempt
    extra = 0
    readonly_fields = ["number", "display_name", "vertex_name", "vertex_state", "submitted_at",
                       "started_at", "ended_at", "error_message"]


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "team", "state", "attempt", "restarts", "created_at"]
    list_filter = ["state", "team"]
    # State changes go through Job.update_state only: the admin shows, it does not edit.
    readonly_fields = ["state", "state_changed_at", "attempt", "restarts", "started_at",
                       "ended_at", "error_message"]
    inlines = [AttemptInline]
