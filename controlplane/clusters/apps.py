from django.apps import AppConfig


class ClustersConfig(AppConfig):
    name = "controlplane.clusters"
    label = "clusters"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # A cluster bills while it exists: its spend counts in its team's month (budgets, the
        # team costs page). Registered here because costs may not import clusters.
        from controlplane.clusters import spend as cluster_spend
        from controlplane.costs import spend

        spend.register_spend("clusters", cluster_spend.month_micros)
        spend.register_spend_series("clusters", cluster_spend.month_series)
        # Its time up with nothing on it is the idle category of the team's goodput.
        from controlplane.clusters import idle_time
        from controlplane.costs import goodput

        goodput.register_idle("clusters", idle_time.month_idle)

        # Its accelerators count against its team's quota in the queue in front of Vertex.
        from controlplane.clusters import holdings
        from controlplane.runs import holders

        holders.register("clusters", holdings.held_since)

        # A Ray job's job page and API record say which cluster it ran on.
        from controlplane.clusters import ray_jobs
        from controlplane.runs import panels

        panels.register_report("origin-ray", ray_jobs.origin)
        panels.register_reports("origin-ray", ray_jobs.origins)
