"""The ONNX opsets that :mod:`c4jax.agents.onnx_export` writes, as plain data (imported without JAX, for
``c4jax export-onnx``'s flag and its check)."""

from __future__ import annotations

OPSETS = range(17, 24)  # the opsets a graph may be written in
DEFAULT_OPSET = 21
