"""What the emulated project may run: accelerator quotas by region (the metric table, enforced at
CreateCustomJob), injected stockouts, and the Cloud Quotas API that reports the limits."""
