"""Play the games against any c4jax agent in the browser (``python -m c4jax.play``): ``server`` (HTTP),
``catalogue`` (the opponents and their warm-up), ``answers`` (the JSON API), ``static/`` (the page); and
other libraries' environments of the games: ``pettingzoo_env``, ``gymnasium_env``."""
