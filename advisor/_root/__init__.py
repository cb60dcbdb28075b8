"""yarn-advisor: a sidecar for a Hadoop YARN ResourceManager that senses the cluster,
decides with five scheduling papers and an online task classifier, and acts through
one guarded actuator (dry-run by default).

The import package holds the repository's fixed top-level folders under one name
(``yarn_advisor.advisor``, ``.connectors``, ``.classifiers``, ``.config``,
``.simulator``); this module is its root, kept in ``advisor/_root`` so the
repository's top level stays as it is.
"""

from importlib import metadata

try:
    __version__ = metadata.version("yarn-advisor")
except metadata.PackageNotFoundError:  # run from a tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
