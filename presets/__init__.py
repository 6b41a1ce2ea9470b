"""The presets shipped with Coach: one experiment per file (``coach -l`` lists them).

This folder installs as the package ``coach_presets`` (a top-level ``presets`` would shadow a
user's own module of that name); a preset imports the shared pieces by that name
(``from coach_presets import _cartpole``).
"""
