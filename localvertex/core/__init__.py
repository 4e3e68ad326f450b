"""What every room of the emulator shares: the API's errors, times, the filter language's parser,
the generic SQLite store, resource names and pages, and long-running operations."""
