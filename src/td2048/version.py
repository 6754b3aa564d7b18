"""The installed version (read by model files, run settings and ``--version``)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("td2048")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+src"
