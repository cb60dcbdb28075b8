"""The advisor, grouped by role; each package imports only the ones above it
in this list (``tests/unit/test_layers.py`` checks it):

- ``model``: the data every layer shares (the Snapshot, recommendations);
- ``policies``: the five papers, each a pure ``advise`` over a Snapshot;
- ``engine``: the decide step (predictions, policies, conflicts) and the
  classifier as the daemon runs it;
- ``act``: the one writer (the actuator, its guardrails, the journal);
- ``ha``: two advisors, one writer (leader election, shared state);
- ``loop``: sense -> decide -> act -> learn -> observe, and its wiring;
- ``observe``: Prometheus metrics and the HTTP endpoints;
- ``cli``: the ``yarn-advisor`` command line.

``connectors`` and ``classifiers`` sit between ``model`` and ``policies``.
"""
