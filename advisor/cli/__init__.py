"""The ``yarn-advisor`` command line, and the subcommands that are not the
daemon itself (``explain``, ``rollback``).
"""
