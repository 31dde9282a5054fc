"""Imports deferred until needed, so that importing the package stays cheap.

- :func:`lazy_names`: a package's names imported on first use (PEP 562);
- :func:`after_import`: code run once another module has been imported (a
  post-import hook), for registrations with a library that is slow to import.
"""

import sys
from collections.abc import Callable
from importlib import import_module
from importlib.abc import Loader, MetaPathFinder
from importlib.util import find_spec


def lazy_names(package: str, table: dict, namespace: dict):
    """``(__getattr__, __dir__)`` for ``package``.

    ``table`` maps each public name to the module that holds it (absolute, or relative
    to ``package``), or to ``None`` for ``package``'s submodule of that name; a name is
    imported once and then kept in ``namespace`` (the package's ``globals()``).
    """

    def __getattr__(name: str):
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        where = table[name]
        if where is None:
            value = import_module(f".{name}", package)
        else:
            value = getattr(import_module(where, package), name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__


def after_import(module: str, callback: Callable[[], None]) -> None:
    """Call ``callback()`` once ``module`` is imported: now if it already is, else right after
    its import completes (before the importer gets it), in whichever code imports it first."""
    if module in sys.modules:
        callback()
    else:
        sys.meta_path.insert(0, _AfterImport(module, callback))


class _AfterImport(MetaPathFinder):
    """Finds ``module`` as the other finders do, with its loader wrapped to call ``callback``
    after executing it; then leaves ``sys.meta_path``."""

    def __init__(self, module: str, callback):
        self.module, self.callback = module, callback

    def find_spec(self, name, path=None, target=None):
        if name != self.module:
            return None
        sys.meta_path.remove(self)
        spec = find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _CallingBack(spec.loader, self.callback)
        return spec


class _CallingBack(Loader):
    def __init__(self, loader, callback):
        self.loader, self.callback = loader, callback

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.callback()
