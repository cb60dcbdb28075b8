"""The online short/long task classifier (OPERA, paper 002, section III-B).

``features`` builds the hierarchical features from a trace or the live
Snapshot; ``naive_bayes`` is the online model and its decision rule, on the
back-off estimate of ``backoff``; ``checkpoint`` validates its saved state;
``live`` wires it to the daemon's cycle; ``evaluate`` and ``cli`` replay a
history (``classify-eval``), ``eval_result`` holds what they count.
The history readers all yield the job and task records of ``records``:
``rumen`` (Rumen traces), ``jhist`` (JobHistory files; binary ones through
``avro_binary``), ``spark`` (Spark event logs), ``tasks_csv`` (a task CSV);
``sources`` holds what they share (the read report, opening files).
"""
