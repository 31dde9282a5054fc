"""Sphinx configuration of the ``adversary`` documentation site.

Pages are MyST Markdown; the API reference is generated from the docstrings
(autodoc, numpy-style sections through napoleon). Notebooks come from the
repository's ``notebooks/`` folder (``docs/notebooks`` is a symbolic link to it)
and are rendered with their stored outputs, never executed; the reproduction
report (``reproduction.md``, a MyST-NB text notebook) asks for execution in its
own front matter, so its table is computed at every build.

Build with ``make docs`` (warnings are errors; output in ``build/docs``).
Nothing here needs the network, at build time or when the site is read:
intersphinx is not used, and MathJax is served from the site itself (a copy
from the ``sphinx-mathjax-offline`` package of the ``dev`` extras) instead of
a CDN.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import importlib.util
import json
import logging as std_logging
import os
import pkgutil
import re
import sys
import types
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.domains.python import PythonDomain
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
BUILD = ROOT / "build"

# Code run at build time (autodoc imports, the kernels of the executed pages)
# keeps its caches and files in the build tree, as the Makefile does.
os.environ.setdefault("PYTENSOR_FLAGS", f"base_compiledir={BUILD / 'pytensor'}")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("MPLCONFIGDIR", str(BUILD / "matplotlib"))
os.environ.setdefault("IPYTHONDIR", str(BUILD / "ipython"))  # the kernels' IPython profile
Path(os.environ["IPYTHONDIR"]).mkdir(parents=True, exist_ok=True)  # IPython needs its parent

logger = logging.getLogger(__name__)

import adversary  # noqa: E402  (after the environment above: it reaches PyTensor)

# -- Project -----------------------------------------------------------------------------------

project = "adversary"
author = "The adversary developers"
copyright = "2025–2026, The adversary developers"  # as in LICENSE
version = release = adversary.__version__

# -- General -----------------------------------------------------------------------------------

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]

exclude_patterns = [
    "_build",
    "jupyter_execute",
    "**/.ipynb_checkpoints",
]

myst_enable_extensions = ["amsmath", "colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3

# Notebooks: stored outputs are shown as they are; a page that must be computed
# (the reproduction report) sets ``mystnb: execution_mode: force`` itself.
nb_execution_mode = "off"
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

# -- API reference -----------------------------------------------------------------------------

autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# The sources annotate; no ``# type:`` comments to read (parsing each function's source for
# them took about 0.9 s of the build).
autodoc_use_type_comments = False
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

# -- HTML --------------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"adversary {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_sidebars = {"index": [], "getting-started": [], "concepts": []}
html_show_sourcelink = False
html_copy_source = False


def _local_mathjax() -> Path:
    """The folder holding ``mathjax/`` (MathJax 3) installed by the ``dev`` extras."""
    # The distribution installs a folder named with hyphens, found like a module.
    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the documentation serves MathJax from the package sphinx-mathjax-offline; "
            "install the dev extras: pip install -e '.[dev]'"
        )
    return Path(spec.submodule_search_locations[0]) / "static"


# Formulas are typeset by a MathJax copied into the site's _static/mathjax/, not
# fetched from a CDN, so they render without network access.
html_static_path = [str(_local_mathjax())]
mathjax_path = "mathjax/tex-chtml.js"


# -- API pages: every public module, found at build time -----------------------------------------


def _is_public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def public_modules(package: str) -> list[str]:
    """``package`` and every public module below it (no part of the name starts with ``_``)."""
    module = importlib.import_module(package)
    names = [package]
    if hasattr(module, "__path__"):
        for info in pkgutil.walk_packages(module.__path__, f"{package}."):
            if _is_public(info.name):
                names.append(info.name)
    return sorted(names)


def _import_public_modules() -> None:
    """Import every public module of ``adversary`` now, in the process that runs Sphinx.

    A parallel build (``-j``) forks its readers and writers from this process; they
    inherit the modules instead of each importing PyMC and the rest again (the readers
    of API pages, and this process itself while it resolves references for the writers).
    A module that fails to import is reported by the API page that documents it.
    """
    for name in public_modules("adversary"):
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def _api_page_packages() -> dict[str, list[str]]:
    """``{page: [package, …]}`` for every ``.. adversary-modules::`` line of ``api/*.rst``."""
    pattern = re.compile(r"^\.\. adversary-modules::[ \t]*(\S.*)$", re.MULTILINE)
    pages = {}
    for page in sorted((DOCS / "api").glob("*.rst")):
        found = pattern.findall(page.read_text(encoding="utf-8"))
        pages[page.stem] = [name for line in found for name in line.split()]
    return pages


def _title(text: str, underline: str) -> list[str]:
    return [text, underline * len(text), ""]


def _reexports(package: types.ModuleType, documented: set[str]) -> tuple[list[str], list[str]]:
    """Split a package's ``__all__`` into names documented elsewhere and names to document here."""
    linked, here = [], []
    for name in getattr(package, "__all__", ()):
        obj = getattr(package, name)
        home = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", "")
        if isinstance(obj, types.ModuleType) and home in documented:
            linked.append(f":py:mod:`{name} <{home}>`")
        elif home in documented and home != package.__name__:
            linked.append(f":py:obj:`{name} <{home}.{name}>`")
        else:
            here.append(name)
    return linked, here


def module_rst(names: list[str], documented: set[str]) -> list[str]:
    """reStructuredText documenting ``names``: one section per module, its docstring and members.

    A package re-exports names defined in its modules; those are linked, not
    described twice (each is described in the module that defines it).
    """
    lines: list[str] = []
    for name in names:
        module = importlib.import_module(name)
        lines += _title(f"``{name}``", "-")
        lines += [f".. automodule:: {name}"]
        if hasattr(module, "__path__"):
            linked, here = _reexports(module, documented)
            lines += [f"   :members: {', '.join(here)}" if here else "   :no-members:", ""]
            if linked:
                lines += [f"Exported from its modules: {', '.join(linked)}.", ""]
        lines.append("")
    return lines


class AdversaryModules(SphinxDirective):
    """``.. adversary-modules:: PACKAGE …`` — the API of each package and all its public modules.

    With the ``:rest:`` flag and no argument: every public module of
    ``adversary`` that no ``api/*.rst`` page names (so a new module is in the
    reference the day it is added).
    """

    optional_arguments = 20
    option_spec: ClassVar[dict] = {"rest": directives.flag}

    def run(self) -> list[nodes.Node]:
        pages = _api_page_packages()
        everything = public_modules("adversary")
        covered = {
            module
            for packages in pages.values()
            for package in packages
            for module in public_modules(package)
        }
        if "rest" in self.options:
            names = [name for name in everything if name not in covered and name != "adversary"]
            if not names:
                text = "None: every public module is on one of the pages above."
                return [nodes.paragraph(text, text)]
        else:
            names = [module for package in self.arguments for module in public_modules(package)]
        importable = []
        for name in names:
            try:
                module = importlib.import_module(name)
            except Exception as error:  # a module that cannot be imported cannot be documented
                logger.warning(
                    "cannot import %s: %s: %s",
                    name,
                    type(error).__name__,
                    error,
                    location=self.get_location(),
                    type="adversary",
                    subtype="import",
                )
                continue
            self.env.note_dependency(module.__file__)
            importable.append(name)
        names = importable
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(
            self.state, StringList(module_rst(names, set(everything))), container
        )
        return container.children


# -- Docstrings: two rendering rules applied at build time (the sources stay as they are) ---------

# A reference written relative to the package, ``:mod:`.single_block```, means
# the sibling module, as in a relative import. Sphinx instead searches every
# module whose name ends so (three modules are called ``single_block``); point
# it at the sibling.
_RELATIVE_REF = re.compile(r"(:[a-z]+:`)(~?)\.([A-Za-z_][\w.]*)`")


def _package_of(what: str, name: str, obj) -> str | None:
    module_name = name if what == "module" else getattr(obj, "__module__", None)
    if not module_name:
        return None
    module = sys.modules.get(module_name)
    return module_name if hasattr(module, "__path__") else module_name.rpartition(".")[0]


def _absolute_relative_refs(app, what, name, obj, options, lines) -> None:
    package = _package_of(what, name, obj)
    if not package:
        return

    def absolute(match: re.Match) -> str:
        role, short, target = match.groups()
        if importlib.util.find_spec(f"{package}.{target.split('.')[0]}") is None:
            return match.group(0)
        title = target.rpartition(".")[2] if short else target
        return f"{role}{title} <{package}.{target}>`"

    lines[:] = [_RELATIVE_REF.sub(absolute, line) for line in lines]


# -- The command line, as its own --help prints it -----------------------------------------------


def _help_text(parser: argparse.ArgumentParser) -> str:
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "90"
    try:
        return parser.format_help()
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


class AdversaryCliHelp(SphinxDirective):
    """``.. adversary-cli-help:: [COMMAND]`` — ``adversary [COMMAND] --help``, from the parser.

    Without an argument: the top-level help. ``:all:`` — every sub-command's
    help, each under its own rubric, in the order the command line lists them.
    """

    optional_arguments = 1
    option_spec: ClassVar[dict] = {"all": directives.flag}

    def run(self) -> list[nodes.Node]:
        from adversary.cli import build_parser

        parser = build_parser()
        choices = next(
            action.choices
            for action in parser._actions
            if isinstance(action, argparse._SubParsersAction)
        )
        if "all" in self.options:
            wanted = list(choices)
        elif self.arguments:
            wanted = [self.arguments[0]]
        else:
            wanted = [None]
        out: list[nodes.Node] = []
        for command in wanted:
            if command is not None and command not in choices:
                raise self.error(f"adversary has no sub-command {command!r}")
            text = _help_text(parser if command is None else choices[command])
            if "all" in self.options:
                out.append(nodes.rubric(text=f"adversary {command}"))
            block = nodes.literal_block(text, text)
            block["language"] = "text"
            out.append(block)
        return out


def _kernel_for_this_interpreter(app) -> None:
    """Make the ``python3`` kernel of the executed pages this interpreter (the project's venv).

    A ``python3`` kernel spec in the user's Jupyter directories would otherwise
    win and could run another Python without the package.
    """
    spec = Path(app.doctreedir) / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    kernel = {
        # Errors only: the kernel's start-up notices would end up among the build's messages.
        "argv": [
            sys.executable,
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
            "--IPKernelApp.log_level=ERROR",
        ],
        "display_name": "Python 3 (adversary)",
        "language": "python",
    }
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    paths = [str(spec.parent.parent), os.environ.get("JUPYTER_PATH", "")]
    os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, paths))


def _executed_pages_are_always_outdated(app, env, added, changed, removed) -> list[str]:
    """Re-read (so re-execute) every page that runs its code, whatever changed.

    Their output depends on the installed package, which Sphinx does not track,
    so an incremental build would otherwise keep a stale reproduction table.
    """
    return [
        docname
        for docname in env.found_docs
        if "execution_mode: force" in Path(env.doc2path(docname)).read_text(encoding="utf-8")
    ]


def _resolve_reexports(app, env, node, contnode):
    """Resolve ``adversary.inference.sample`` — a name a package re-exports — to its definition.

    The reference documents each object once, in the module that defines it
    (``adversary.inference.sampling.sample``); references written with the
    public path users import from would otherwise find nothing.
    """
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "").lstrip("~.")
    candidates = [target]
    if node.get("py:module"):  # a bare name in a package's docstring: the package's export
        candidates.append(f"{node['py:module']}.{target}")
    for candidate in candidates:
        package_name, _, name = candidate.rpartition(".")
        if package_name.split(".")[0] != "adversary":
            continue
        try:  # a parallel build resolves references in a process that may not have imported it
            package = importlib.import_module(package_name)
        except ImportError:
            continue
        obj = getattr(package, name, None)
        if isinstance(obj, types.ModuleType):
            role, home = "mod", obj.__name__
        else:
            module = getattr(obj, "__module__", None)
            if not module or module == package_name:
                continue
            role, home = "obj", f"{module}.{getattr(obj, '__qualname__', name)}"
        found = env.domains["py"].resolve_xref(
            env, node["refdoc"], app.builder, role, home, node, contnode
        )
        if found is not None:
            return found
    return None


class _PythonDomain(PythonDomain):
    """Sphinx's Python domain, answering at once for a name no documented object ends with.

    A reference Sphinx cannot resolve by its full name (the type hints of every signature:
    ``str``, ``int``, ``numpy.ndarray``, ``pandas.DataFrame`` …) is searched for by scanning
    every object's name for that ending, as a class, then data, then an attribute: on the API
    pages 13 700 searches, 18 million ``str.endswith`` calls, 1.9 of the build's CPU seconds.
    Every name :meth:`find_obj` can return ends with the last part of the name it is given
    (``ndarray`` of ``numpy.ndarray``), so when no object's name ends with that part it returns
    nothing, as the scan would have found (0.04 s for all of them); any other name is searched
    as before. The API pages' HTML is the same, in a serial build and in a parallel one.
    """

    _last_parts_of: tuple[dict, set[str]] | None = None

    def _last_parts(self) -> set[str]:
        """The last part of every object's name (a name added since is added by note_object)."""
        if self._last_parts_of is None or self._last_parts_of[0] is not self.objects:
            parts = {name.rpartition(".")[2] for name in self.objects}
            self._last_parts_of = (self.objects, parts)
        return self._last_parts_of[1]

    def note_object(self, name, *args, **kwargs):
        super().note_object(name, *args, **kwargs)
        if self._last_parts_of is not None:
            self._last_parts_of[1].add(name.rpartition(".")[2])

    def merge_domaindata(self, docnames, otherdata):
        super().merge_domaindata(docnames, otherdata)
        self._last_parts_of = None

    def find_obj(self, env, modname, classname, name, type, searchmode=0):
        if name.removesuffix("()").rpartition(".")[2] not in self._last_parts():
            return []
        return super().find_obj(env, modname, classname, name, type, searchmode)


def _collect_less(app) -> None:
    """Keep Python's cycle collector off the objects that live as long as the build.

    The build's process holds what its imports made (the scientific stack: millions of
    objects, never garbage), then the build's environment and doctrees; each full pass of the
    collector walks all of them, and so does the interpreter's last pass at exit. Measured on
    the test's build (Python 3.12): 5.4 CPU s of collections during the build (14 full
    passes), and 3 to 3.7 s at exit. Now the objects of the imports are moved out of the
    collector's reach (:func:`gc.freeze`); the young generation is collected after 10 000
    allocations instead of 700, so fewer objects are promoted and fewer full passes are
    due (1.9 to 2.1 s of collections, 6 full passes; peak memory unchanged, 0.53 GB on the
    API pages); and what is alive when the build has finished is frozen too, so the exit
    does not walk it (0.1 s).
    """
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
    app.connect("build-finished", lambda app, exception: gc.freeze())


def setup(app):
    # Sphinx's logger lets debug messages through (one for every event it emits, with the
    # event's arguments, and many from autodoc) to its handlers, which drop them unless -vv is
    # given: about 1 s of the build. Without -vv they stop at the logger's level check.
    if app.verbosity < 2:
        level = logging.VERBOSITY_MAP[app.verbosity]
        std_logging.getLogger(logging.NAMESPACE).setLevel(level)
    _import_public_modules()
    _collect_less(app)
    app.add_domain(_PythonDomain, override=True)
    app.add_directive("adversary-modules", AdversaryModules)
    app.add_directive("adversary-cli-help", AdversaryCliHelp)
    app.connect("builder-inited", _kernel_for_this_interpreter)
    app.connect("env-get-outdated", _executed_pages_are_always_outdated)
    app.connect("missing-reference", _resolve_reexports)
    # Before napoleon (priority 500) turns numpy-style sections into fields.
    app.connect("autodoc-process-docstring", _absolute_relative_refs, priority=400)
    return {"parallel_read_safe": True}
