"""The learned policy: a small network that predicts the search bot's decisions from a
seat's observation, and its inference in plain numpy (``policy``); its training is
:mod:`sample_bots.training`. ``sample_bots.learned_bot`` plays with it; the search bot weighs its
sampled worlds with it (``--inference policy``). docs/bots.md, "The learned policy"."""

import os

# A decision's matrices are small: a BLAS thread pool only waits for busy cores (weighing
# 40 worlds took 14-25 ms with it on a loaded 2-core machine, 0.5-2 ms without). Set before
# numpy is first imported; a caller's own setting stands.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
