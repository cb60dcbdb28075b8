"""The online short/long task classifier (OPERA, paper 002, section III-B).

``rumen`` reads Rumen job traces; ``features`` builds the hierarchical features
from a trace or the live Snapshot; ``naive_bayes`` is the online model and its
decision rule; ``checkpoint`` validates its saved state; ``live`` wires it to
the daemon's cycle; ``evaluate`` and ``cli`` replay traces (``classify-eval``).
"""
