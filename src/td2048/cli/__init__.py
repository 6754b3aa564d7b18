"""The ``td2048`` command: one module per subcommand, each with ``add_arguments`` and ``run``."""
