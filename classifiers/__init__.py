"""The online short/long task classifier (OPERA, paper 002, section III-B).

Three parts, each a package:

- ``model``: the online model the daemon runs. ``features`` builds the
  hierarchical features from a trace or the live Snapshot; ``naive_bayes`` is
  the model and its decision rule, on the back-off estimate of ``backoff``;
  ``budget`` its account of long tasks called short; ``checkpoint`` validates
  its saved state; ``live`` wires it to the daemon's cycle.
- ``readers``: the history readers, which all yield the job and task records
  of ``records``: ``rumen`` (Rumen traces), ``jhist`` (JobHistory files;
  binary ones through ``avro_binary``), ``spark`` (Spark event logs),
  ``tasks_csv`` (a task CSV); ``sources`` holds what they share (the read
  report, opening files).
- ``evaluation``: ``evaluate`` and ``cli`` replay a history through the model
  (``classify-eval``); ``eval_result`` holds what they count.

The model imports no reader; the readers import nothing of the model.
"""
