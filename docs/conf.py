"""Sphinx configuration of the pystencils-perf documentation.

    python3 -m pip install -e '.[docs]'
    python3 -m sphinx -W --keep-going -b html docs docs/_build/html

The notebooks (tutorials, the model's figures) are executed on every build, and an
error in any cell fails it. They, autodoc and the CLI reference import the
pystencils_perf of this source tree.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

# this tree's package first, for autodoc here and for the notebooks' kernels (they inherit PYTHONPATH)
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])

# pystencils creates its disk cache when it is imported (autodoc imports it): a temporary folder,
# never ~/.cache/pystencils; the notebooks' kernels inherit it
from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-docs-")

import pystencils_perf  # noqa: E402

project = "pystencils-perf"
author = "pystencils-perf developers"
copyright = "pystencils-perf developers, GNU AGPL v3 or later"
release = version = pystencils_perf.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax served from the built pages, not a CDN: formulas render offline
    "sphinxarg.ext",
    "repo_files",
]

exclude_patterns = ["_build", "jupyter_execute", "**.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
# `--option` in help texts and docstrings stays two dashes, quotes stay straight
smartquotes = False

# -- MyST and notebooks --------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3
# every build executes every notebook; an error in a cell fails the build
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_timeout = 300
nb_merge_streams = True

# -- autodoc -------------------------------------------------------------------------------------
# NumPy-style docstrings (as pystencils); single backticks in docstrings name Python objects
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
default_role = "py:obj"
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_description_target = "documented_params"
autodoc_default_options = {"show-inheritance": False}

# -- HTML ----------------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"pystencils-perf {release}"
html_static_path = []
