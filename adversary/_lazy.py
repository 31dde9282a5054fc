"""A package's names imported on first use (PEP 562), so that importing it stays cheap."""

from importlib import import_module


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
