"""ZooKeeper: the client side shared by its users (``client``), the advisors'
leader election and session safety (``election``), and their versioned shared
state (``state``). Finding the active ResourceManager through the RMs' own
election is :mod:`yarn_advisor.connectors.rm.active`."""
