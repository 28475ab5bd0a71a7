"""What the framework adapters (``headrace.torch``, ``headrace.jax``) share: resharding a pipeline
for a rank, reading it epoch by epoch with a checkpoint per delivered batch, and the bounded
device queue fed by a background thread. Nothing here imports a framework."""
