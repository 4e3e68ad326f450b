"""google.logging.v2.LoggingServiceV2 in the emulator: every line a replica prints as a LogEntry,
stored in SQLite, read back through List and Tail with Cloud Logging's filter language and its
read quota."""
