"""Vertex AI planning, pure Python: the catalogue and its rules, the composer, interop, presets,
the memory plan, pricing, the recommender and the log-line parser. No Django, Google or torch."""
