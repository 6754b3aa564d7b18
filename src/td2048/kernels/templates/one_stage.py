"""The stage functions of a network of one stage: every board in stage 0, no stage to enter.

Multistage networks (``--stages``) get ``stage_of`` and ``enter_stage`` written for their thresholds
(:mod:`td2048.kernels.codegen`); every other network takes this text (:mod:`td2048.kernels.templates`).
"""

from td2048.config import njit

__all__ = ["enter_stage", "stage_of"]

# ---- text of the generated module (td2048.kernels.codegen copies what follows) ----
@njit(inline='always')
def stage_of(b):
    return 0


@njit(inline='always')
def enter_stage(w, dirty, b):
    return
