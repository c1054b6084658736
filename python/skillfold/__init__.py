"""Verified, pinned Agent Skills for Python agent hosts.

The same runtime as the ``skillfold`` Rust library and CLI: every bundle is read with the safe
reader and verified against its reviewed pin before it is served; bundles that do not verify are
listed in ``Runtime.refused`` and never served.

    >>> import skillfold
    >>> runtime = skillfold.Runtime.load("skillfold.yaml")          # doctest: +SKIP
    >>> catalogue = runtime.catalogue("writer")                     # doctest: +SKIP
    >>> catalogue.prompt()            # the block for the system prompt   # doctest: +SKIP
    >>> catalogue.tools("openai")     # tool definitions for a request    # doctest: +SKIP
    >>> output, record = catalogue.call("load_skill", {"name": "pdf", "reference": None})  # doctest: +SKIP

See ``docs/python.md`` for the builder, the policy callable and the framework adapters.
"""

from ._skillfold import (
    AgentBuilder,
    Catalogue,
    CatalogueError,
    ConfigurationError,
    PolicyError,
    Runtime,
    RuntimeBuilder,
    SkillfoldError,
    ToolError,
    __version__,
)

__all__ = [
    "AgentBuilder",
    "Catalogue",
    "CatalogueError",
    "ConfigurationError",
    "PolicyError",
    "Runtime",
    "RuntimeBuilder",
    "SkillfoldError",
    "ToolError",
    "__version__",
]
