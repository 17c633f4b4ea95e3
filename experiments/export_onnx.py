"""Export a network agent's scores to ONNX and check the file against the JAX agent.

    python experiments/export_onnx.py --help

The code is :mod:`c4jax.cli.export_onnx` (its docstring says what the command does and writes), so that the
installed package has it too: ``c4jax export-onnx`` runs the same, with the same flags.
"""

from c4jax.cli import export_onnx
from c4jax.io import compile_cache

if __name__ == "__main__":
    compile_cache.configure_script()
    export_onnx.cli()
