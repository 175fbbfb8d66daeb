"""Sphinx configuration of the fastcdl documentation: the pages of docs/ (Markdown, read by
myst-parser) and the API reference generated from the numpydoc docstrings (docs/api/).

Build with ``make docs`` (warnings are errors); the HTML lands in docs/_build/html.
"""

import importlib
import inspect
import os
import re
import sys

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.docutils import SphinxDirective

sys.path.insert(0, os.path.abspath(".."))  # the checkout's fastcdl, whatever is installed
sys.path.insert(0, os.path.abspath("."))  # results_pages

import fastcdl  # noqa: E402

project = "fastcdl"
author = "fastcdl contributors"
copyright = "fastcdl contributors (BSD-3-Clause)"
version = release = fastcdl.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "sphinx_copybutton",
    "results_pages",
]

# The gallery: the scripts of gallery/ run at every build (their figures and printed output go
# into docs/auto_examples/, which is not committed). An example that fails stops the build with
# the example's name and its error (abort_on_example_error), never a page with a missing figure.
sphinx_gallery_conf = {
    "examples_dirs": "../gallery",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "show_memory": False,
    "line_numbers": False,
    "min_reported_time": 10**6,
}

# copy buttons skip the prompts of Python sessions and shells
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "results_pages.py", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]

# The Markdown pages link to each other's sections by their GitHub anchors (#an-explicit-bound).
myst_heading_anchors = 4

# Types are stated in the numpydoc Parameters/Returns sections; signatures stay short.
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autosummary_generate = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "pydata_sphinx_theme"
html_title = f"fastcdl {release}"
html_static_path = ["_static"]
html_theme_options = {
    "logo": {"text": "fastcdl"},
    "navbar_align": "left",
    "header_links_before_dropdown": 6,
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}


def _directive(obj) -> str:
    if inspect.ismodule(obj):
        return "automodule"
    if isinstance(obj, type):
        return "autoexception" if issubclass(obj, BaseException) else "autoclass"
    if callable(obj):
        return "autofunction"
    return "autodata"


class PublicNames(SphinxDirective):
    """``.. public-names:: module`` documents every name of ``module.__all__``: a summary table,
    then each function, class, constant or module, so a name added to ``__all__`` appears (and
    its docstring is checked) without editing the pages. ``:no-index:`` lists names documented
    on another page too (the same object under two modules), which are shown but not indexed."""

    required_arguments = 1
    option_spec = {"no-index": lambda text: text.split()}

    def run(self):
        modname = self.arguments[0]
        module = importlib.import_module(modname)
        names = list(module.__all__)
        elsewhere = set(self.options.get("no-index", ()))
        tabled = [n for n in names if n not in elsewhere and not inspect.ismodule(getattr(module, n))]
        lines = [f".. currentmodule:: {modname}", "", ".. autosummary::", ""]
        lines += [f"   {n}" for n in tabled] + [""]
        for n in names:
            obj = getattr(module, n)
            kind = _directive(obj)
            if kind == "automodule":
                lines += [f".. rubric:: {n}", "", f".. automodule:: {obj.__name__}", ""]
                continue
            if kind == "autodata":
                lines += _data(modname, n, obj, n in elsewhere)
                continue
            lines.append(f".. {kind}:: {n}")
            if kind in ("autoclass", "autoexception") and not _is_namedtuple(obj):
                lines.append("   :members:")
            if n in elsewhere:
                lines.append("   :no-index:")
            lines.append("")
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=f"<public-names {modname}>"), self.content_offset, container)
        return container.children


# Names a module computes when asked (a module __getattr__), which have no assignment to
# carry a ``#:`` comment.
COMPUTED = {
    "fastcdl.online.FORECASTERS": "The names of the built-in forecasters (a tuple), read from the registry when asked.",
    "fastcdl.online.ADVERSARIES": "The names of the built-in adversaries (a tuple), read from the registry when asked.",
}


def _data(modname, name, obj, no_index):
    """A constant with the ``#:`` comment of its assignment, in whichever fastcdl module
    assigns it (a re-exported constant is commented where it is defined)."""
    text = COMPUTED.get(f"{modname}.{name}")
    if text is None:
        for other in sorted(m for m in sys.modules if m == "fastcdl" or m.startswith("fastcdl.")):
            if getattr(sys.modules[other], name, None) is not obj:
                continue
            try:
                docs = ModuleAnalyzer.for_module(other).find_attr_docs()
            except PycodeError:
                continue
            if ("", name) in docs:
                text = "\n".join(docs[("", name)])
                break
    if text is None:
        raise ValueError(f"{modname}.{name}: no #: comment on its assignment to document it by")
    lines = [f".. py:data:: {name}"] + (["   :no-index:"] if no_index else []) + [""]
    return lines + [f"   {line}" for line in text.splitlines()] + [""]


def _is_namedtuple(obj) -> bool:
    return issubclass(obj, tuple) and hasattr(obj, "_fields")


# A Markdown link from docs/ to a file of the repository outside docs/ (results/, scripts/) works
# on the repository's web view; the site holds docs/ only, so there it becomes the file's path.
# A link to a file that does not exist is left alone, and the build reports it.
_OUTSIDE = re.compile(r"\[([^\]]+)\]\((\.\./[^)#\s]+)\)")


def _repository_links(app, docname, source):
    srcdir = os.path.abspath(app.srcdir)

    def path(match):
        target = os.path.normpath(os.path.join(srcdir, os.path.dirname(docname), match.group(2)))
        if target.startswith(srcdir + os.sep) or not os.path.exists(target):
            return match.group(0)
        where = os.path.relpath(target, os.path.dirname(srcdir))
        text = match.group(1).strip("`")
        return f"`{where}`" if text == where else f"{match.group(1)} (`{where}`)"

    if os.fspath(app.env.doc2path(docname)).endswith(".md"):
        source[0] = _OUTSIDE.sub(path, source[0])


def setup(app):
    app.add_directive("public-names", PublicNames)
    app.connect("source-read", _repository_links)
