"""Cloud Monitoring's MetricService (ListTimeSeries): Vertex's per-replica system metrics,
sampled from the emulator's own replica processes."""
