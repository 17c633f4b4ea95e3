"""Play Connect Four or Checkers against any c4jax agent in the browser: ``python -m c4jax.play``.

:mod:`c4jax.play.server` is the standard-library HTTP server (routes, limits, static files),
:mod:`c4jax.play.catalogue` the opponents of every game and their warm-up, and
:mod:`c4jax.play.answers` the stateless JSON API's answers, for any game through its view
(:mod:`c4jax.games.viewbase`); ``static/`` holds the page (plain HTML, CSS and JavaScript, no
build step, no CDN).

:mod:`c4jax.play.pettingzoo_env` (the ``pettingzoo`` extra) and :mod:`c4jax.play.gymnasium_env`
(the ``gymnasium`` extra) let other libraries' learners play the games: a PettingZoo AEC
environment of any c4jax game, and a Gymnasium environment against a c4jax agent.
"""
