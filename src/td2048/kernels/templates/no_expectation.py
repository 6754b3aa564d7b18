"""The expectation functions of afterstate networks, which never take an expectation.

Networks of state values (``--method state``) get ``expected_value_of`` and ``expected_value``
written for their tuples (:func:`td2048.kernels.codegen.generate_source`); the kernels of afterstate
networks name them only in branches that ``STATE_VALUES`` turns off, and take this text
(:mod:`td2048.kernels.templates`).
"""

from td2048.config import njit

__all__ = ["expected_value", "expected_value_of"]

# ---- text of the generated module (td2048.kernels.codegen copies what follows) ----
@njit(inline='always')
def expected_value_of(w, b, x, r):
    return 0.0  # afterstate networks never take an expectation


@njit
def expected_value(w, b):
    return 0.0
