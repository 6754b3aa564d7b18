"""Fixed parts of the generated kernel modules, kept as Python that a linter and an editor read.

Each template is a module of its own. Its text after :data:`TEMPLATE_MARKER` is copied, unchanged,
into the header of every generated module that needs it (:mod:`td2048.kernels.codegen`); above the
marker it imports the names that the generated module defines around that text (``np``, ``njit``,
the board's helpers), which are not copied. Each template's ``__all__`` lists the names it gives the
generated module.

- :mod:`~td2048.kernels.templates.narrow_board`: boards of 4-bit cells, one 64-bit word;
- :mod:`~td2048.kernels.templates.wide_board`: boards of 5-bit cells, a pair of words;
- :mod:`~td2048.kernels.templates.no_expectation`: the expectation functions of afterstate networks;
- :mod:`~td2048.kernels.templates.downgrade`: tile downgrading, for search;
- :mod:`~td2048.kernels.templates.network_calls`: a network's value and update one board at a time;
- :mod:`~td2048.kernels.templates.one_stage`: the stage functions of a network of one stage;
- :mod:`~td2048.kernels.templates.one_tuple_filler`: a one-tuple table filled from another network's values
  (:mod:`td2048.kernels.transfer`).
"""

TEMPLATE_MARKER = "# ---- text of the generated module (td2048.kernels.codegen copies what follows) ----"
