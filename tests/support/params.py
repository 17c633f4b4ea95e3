"""Counting a network's parameters, for the tests that pin the networks' sizes."""

import jax


def num_params(params) -> int:
    """The number of scalars in the pytree ``params``."""
    return sum(int(x.size) for x in jax.tree.leaves(params))
