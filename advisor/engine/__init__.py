"""The decide step: predictions, then the enabled policies, then conflicts
(pure); the classifier as the daemon runs it; the configuration every policy
registers into.
"""
