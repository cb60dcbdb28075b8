"""The loop: sense -> decide -> act -> learn -> observe, the cycle's report,
and the wiring that builds an advisor from a configuration (live or from a
recording).
"""
