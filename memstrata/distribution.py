"""The name memstrata is published under, and the version that is installed.

The import name is `memstrata` and so is the command, but the distribution (what `pip install`
names) is `memstrata-ai`: `memstrata` on PyPI is another project. Version lookups therefore ask
for `memstrata-ai`; asking for `memstrata` would report that other project when it is installed.
"""

from __future__ import annotations

from importlib import metadata

DISTRIBUTION = "memstrata-ai"


def installed_version() -> str | None:
    """The installed `memstrata-ai` version, or None when the package runs from a source tree without
    being installed."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None


__all__ = ["DISTRIBUTION", "installed_version"]
