"""Controllers of the twin, each a watch-driven loop like its real counterpart."""
