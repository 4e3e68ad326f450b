"""localvertex: a local emulator of Vertex AI's training API and of Cloud Logging.

It serves the real gRPC protocols of google.cloud.aiplatform.v1.JobService (CustomJob methods)
and google.logging.v2.LoggingServiceV2 (ListLogEntries, WriteLogEntries, TailLogEntries), so
Google's own GAPIC clients work against it unchanged (see client.py). Jobs run as local
processes, one per replica, with the environment a Vertex replica gets; what they print becomes
Cloud Logging entries. Run it with `python -m localvertex --data-dir DIR`.

Modules: server.py (wiring), jobs_service.py / logging_service.py / admin_service.py (the APIs),
supervisor.py (a job's lifecycle) with replica_processes.py (its replicas' processes),
restart_policy.py, armed_preemptions.py and job_updates.py (its record), environment.py (a
replica's command and environment), jobstore.py / logstore.py (SQLite), filters.py /
logfilter.py / jobfilter.py (the filter languages), logentries.py (lines to LogEntry),
storage.py (gs:// to local folders), quota.py, faults.py, processes.py, admin.py (admin client
and CLI), client.py. Serving: serving.py (wiring), models_service.py / endpoints_service.py /
prediction_service.py (the APIs, with serving_checks.py and serving_messages.py),
deployments.py and endpoint_runner.py (model server replicas), endpointstore.py.
"""
