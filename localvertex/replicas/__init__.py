"""The process runtime that jobs, deployed models and Ray clusters share: what a replica runs and
the environment it gets, its process group, the sandbox it runs in, the local stand-in for Cloud
Storage, and pythonPackageSpec packages."""
