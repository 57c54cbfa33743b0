"""A package's public names imported on first use (PEP 562), so that importing the package, or a plugin's entry
point in it, loads no heavy library (sympy, numpy, pystencils) before a name is asked for."""

from __future__ import annotations

import importlib
import sys


def lazy_names(package: str, public: dict[str, str]):
    """`__getattr__` and `__dir__` for the module `package`, whose `public` names (name -> the module, relative to
    `package`, that defines it) are imported when first asked for and kept in `package` after that."""

    def __getattr__(name: str):
        if name not in public:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(public[name], package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *public})

    return __getattr__, __dir__
