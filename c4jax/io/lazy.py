"""Lazy package attributes: a package's public names and submodules imported on first use, so that
importing the package alone imports neither JAX nor NumPy."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Callable


def attributes(package: str, names: dict[str, str], public: list[str], namespace: dict) -> tuple[Callable, Callable]:
    """``(__getattr__, __dir__)`` for ``package``: a name of ``names`` (name -> the module that defines
    it) or a submodule is imported on first use and kept in ``namespace`` (the package's globals);
    ``__dir__`` lists ``public`` with what is loaded."""

    def getattr_(name: str):
        if name in names:
            value = getattr(importlib.import_module(names[name]), name)
        elif not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}") is not None:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(public))

    return getattr_, dir_
