"""The application core: the composition root (settings, services, runtime, logs, workers),
entering a conversation, the local workspace, and the surface-neutral use cases."""
