"""The documentation site builds with warnings as errors, as ``make docs`` builds it.

One Sphinx build into a temporary directory (its pages that run code — the
scenario pages, the attack-model how-to and the reproduction report — are
executed, so their examples are tested too, with ``ADVERSARY_FAST=1``: the
pages with long Monte Carlo runs take a tenth of their replications); the tests
then look at what it wrote, including that no page loads anything from the network (the site is
read offline, its formulas typeset by its own MathJax). PyTensor's and
matplotlib's caches stay in the build tree.

The pages' kernels are forked from the session's fork server (tests/forking_kernel.py).
A page names its kernel, ``python3``, and docs/conf.py puts a ``python3`` spec of its own
(a normal kernel) before any other on JUPYTER_PATH when the build starts. So the forking
spec is given to the build under another name, :data:`KERNEL`, and MyST-NB's
``nb_kernel_rgx_aliases`` (``-D``) has the pages start it instead of ``python3``.
"""

import os
import pkgutil
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import adversary

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
KERNEL = "python3-forked"


@pytest.fixture(scope="module")
def site(tmp_path_factory, fork_server):
    """``(completed process, html directory, Sphinx's warnings)`` of one build of ``docs/``.

    Sphinx's own warnings and errors are read from its warning file (``-w``), not from
    stderr, where a page's kernel may log too (e.g. tornado's "Uncaught exception in
    ZMQStream callback" while a kernel shuts down under load), which is no fault of the docs.
    """
    out = tmp_path_factory.mktemp("docs")
    warnings = out / "warnings.txt"
    html = out / "html"
    # Errors only, as docs/conf.py's kernel: start-up notices would join the build's messages.
    kernel = fork_server.kernel_variables(out / "jupyter", KERNEL, "--IPKernelApp.log_level=ERROR")
    env = os.environ | {
        "ADVERSARY_FAST": "1",  # pages with long Monte Carlo runs take a tenth of them
        **kernel,  # PyTensor's and matplotlib's, as the server imported them; JUPYTER_PATH
    }
    command = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "--keep-going",
        # One process, where `make docs` uses every core: the suite's other worker keeps the
        # second core busy, and a parallel build cost 15 CPU seconds more (85 against 70; its
        # processes each import the package, and pickle and unpickle every page).
        "-j",
        "1",
        "-w",
        str(warnings),
        "-D",
        f"nb_kernel_rgx_aliases.python3={KERNEL}",
        "-b",
        "html",
        "-d",
        str(out / "doctrees"),
        str(DOCS),
        str(html),
    ]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    return result, html, warnings.read_text(encoding="utf-8") if warnings.exists() else None


def test_docs_build_without_warnings(site):
    result, _, warnings = site
    assert warnings is not None, "Sphinx wrote no warning file:\n" + result.stderr[-4000:]
    assert result.returncode == 0 and not warnings.strip(), warnings or "\n".join(
        result.stderr.splitlines()[-40:]
    )


def test_pages_are_written(site):
    _, html, _ = site
    for page in (
        "index",
        "getting-started",
        "concepts",
        "scenarios/single-block",
        "scenarios/block-group",
        "scenarios/multi-level",
        "scenarios/post-processing",
        "attack-models",
        "paper-differences",
        "api/index",
    ):
        assert (html / f"{page}.html").is_file(), page


def test_notebooks_are_rendered(site):
    _, html, _ = site
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert (html / "notebooks" / f"{notebook.stem}.html").is_file(), notebook.name


def test_reproduction_report_is_computed(site):
    _, html, _ = site
    page = (html / "reproduction.html").read_text(encoding="utf-8")
    assert page.count('class="reproduction-table"') >= 2
    for text in ("Sec. 4.2, Table 4", "Sec. 4.3, Table 8", "matches", "differs", "mass-shift"):
        assert text in page, text


def test_command_line_help_is_in_getting_started(site):
    _, html, _ = site
    page = (html / "getting-started.html").read_text(encoding="utf-8")
    for command in ("demo", "budget", "run"):
        assert f"usage: adversary {command}" in page, command


def _public_modules():
    names = ["adversary"]
    for info in pkgutil.walk_packages(adversary.__path__, "adversary."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


def test_every_public_module_is_in_the_api_reference(site):
    _, html, _ = site
    pages = "".join(path.read_text(encoding="utf-8") for path in (html / "api").glob("*.html"))
    missing = [
        name
        for name in _public_modules()
        if name != "adversary" and f'id="module-{name}"' not in pages
    ]
    assert not missing, missing


class _Resources(HTMLParser):
    """The addresses a page loads: every ``<script src>`` and ``<link href>``."""

    def __init__(self):
        super().__init__()
        self.addresses: list[str] = []

    def handle_starttag(self, tag, attrs):
        wanted = {"script": "src", "link": "href"}.get(tag)
        value = dict(attrs).get(wanted) if wanted else None
        if value:
            self.addresses.append(value)


def _loaded(page: Path) -> list[str]:
    parser = _Resources()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.addresses


_REMOTE = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)


def test_no_page_loads_a_script_or_stylesheet_from_the_network(site):
    _, html, _ = site
    pages = sorted(html.rglob("*.html"))
    assert len(pages) > 20
    remote = {
        f"{page.relative_to(html)}: {address}"
        for page in pages
        for address in _loaded(page)
        if _REMOTE.match(address)
    }
    assert not remote, sorted(remote)


def test_mathematics_is_typeset_by_the_sites_own_mathjax(site):
    _, html, _ = site
    concepts = html / "concepts.html"
    assert "\\(" in concepts.read_text(encoding="utf-8")  # the page has inline formulas
    scripts = [a.partition("?")[0] for a in _loaded(concepts) if "mathjax" in a.lower()]
    assert scripts == ["_static/mathjax/tex-chtml.js"]  # less Sphinx's "?v=<checksum>"
    assert (html / scripts[0]).stat().st_size > 100_000  # the real MathJax, not a stub
    fonts = html / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2"
    assert (fonts / "MathJax_Main-Regular.woff").is_file()


def test_the_front_page_and_readme_list_every_scenario():
    pages = sorted(p.stem for p in (DOCS / "scenarios").glob("*.md") if p.stem != "index")
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert not [p for p in pages if f"{{doc}}`scenarios/{p}`" not in index]
    assert not [p for p in pages if f"](docs/scenarios/{p}.md)" not in readme]
