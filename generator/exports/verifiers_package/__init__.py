"""The verifiers environment package ``tracemill export --format verifiers`` writes.

``tracemill_env/`` is copied as it is, beside the exported tasks (``tracemill_env/data/``),
a ``pyproject.toml`` and a README; it imports ``verifiers`` (0.4, the v1 Taskset API) and
tracemill's simulated world, so it is type-checked where verifiers is installed
(``.ci/verifiers``), not here.
"""
