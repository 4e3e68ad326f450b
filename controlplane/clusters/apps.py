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
