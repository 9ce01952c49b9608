"""Sphinx configuration of gemmkit's documentation site (docs/): theme, numpydoc, MyST for the generated
performance pages, autodoc of the installed gemmkit package (never the source folder, which has no extension)."""
import os
import sys

# autodoc imports gemmkit: it must be the installed package. Drop the checkout's root from sys.path so that
# its source folder gemmkit/ (no compiled extension) cannot shadow it.
_repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.getcwd()) != _repo]

import gemmkit  # noqa: E402

project = "gemmkit"
author = "the gemmkit developers"
copyright = "the gemmkit developers, BSD-3-Clause"
release = gemmkit.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "**/_build"]
root_doc = "index"

# No intersphinx: CI builds offline (inventories would have to be fetched); names of NumPy, SciPy, Dask and
# ONNX are written as literals.
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
myst_heading_anchors = 3

html_theme = "pydata_sphinx_theme"
html_title = f"gemmkit {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": {"performance/zen*": []},   # wide tables: no right-hand sidebar
}
html_static_path = []
