"""The presets shipped with Coach: one experiment per file (``coach -l`` lists them)."""
