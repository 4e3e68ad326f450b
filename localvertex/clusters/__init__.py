"""Persistent resources in the emulator: the PersistentResourceService and the local Ray
clusters that stand in for Ray on Vertex AI."""
