"""Play Connect Four against any c4jax agent in the browser: ``python -m c4jax.play``.

:mod:`c4jax.play.server` is the standard-library HTTP server and its stateless JSON API;
``static/`` holds the page (plain HTML, CSS and JavaScript, no build step, no CDN).
"""
