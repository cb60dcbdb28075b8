"""A discrete-event simulator of a YARN cluster, for what-if runs of the advisor.

It lives outside the production path: the daemon never imports it. See
``simulation.Simulation`` for a run, ``workload.load_workload`` for the input
format, ``snapshot.snapshot`` and ``writer.SimWriter`` for the advisor's hooks.
"""
