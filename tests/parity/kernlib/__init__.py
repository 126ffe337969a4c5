"""A small kernel library reached in many ways (the parity harness's subject).

Every ``fire_*`` function of ``shapes`` runs a TPU-only Pallas kernel in one of the ways
real libraries do; every ``silent_*`` twin does not (or runs a GPU one). The harness
(``tests/parity/test_parity.py``) calls each under a GPU guard, with the library laid
out three ways: as project code, installed without ``py.typed``, installed with it.
"""

from kernlib.shapes import *  # noqa: F403
