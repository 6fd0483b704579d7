"""The learned policy's training: search-bot self-play turned into decision samples
(``data``, ``generate``), suit renamings that multiply them (``augment``) and the
networks' training (``train``, the ``learn`` extra), which writes the weights beside
:mod:`sample_bots.learned.policy`. Apart from the learned package, which plays with
the weights and which the search bot imports for its inference, so that the search
bot and its trainer do not import each other. docs/bots.md, "The learned bot"."""
