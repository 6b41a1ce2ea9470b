"""Studies: what Coach makes of many runs at once (seeds of a group, presets side by side)."""
