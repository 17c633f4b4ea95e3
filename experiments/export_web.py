"""Build the static site that plays the shipped agents in a browser with no Python (ONNX in the page).

    python experiments/export_web.py --out site/

The code is :mod:`c4jax.cli.export_web` (its docstring says what the command does and writes), so that the
installed package has it too: ``c4jax export-web`` runs the same, with the same flags.
"""

from c4jax.cli import export_web
from c4jax.io import compile_cache

if __name__ == "__main__":
    compile_cache.configure_script()
    export_web.cli()
