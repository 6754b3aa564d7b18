"""``td2048 serve``: a model as an engine people can talk to, over HTTP.

- :mod:`td2048.server.engine`: the model's searches on worker threads, bounded (plain Python);
- :mod:`td2048.server.games`: the games the server runs, bounded in count and age (plain Python);
- :mod:`td2048.server.app`: the JSON API and the one-page web app (FastAPI; the ``serve`` extra);
- ``static/``: the web app's page, script and style, served inline with the replay viewer of
  :mod:`td2048.io.replay_html`.
"""

DEFAULT_QUEUE = 64  # searches that may wait for a thread before a request gets 503
DEFAULT_MAX_GAMES = 1000  # games kept in memory
DEFAULT_MAX_AGE = 3600.0  # seconds a game is kept after its last request
