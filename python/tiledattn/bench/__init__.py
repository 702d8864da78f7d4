"""The tiledattn benchmark harness: `python -m tiledattn.bench --help`.

Modules: cli (arguments, presets), backends (what is timed), sweep (check
then time each case), measure (FLOPs, reference, timer), report (JSON, CSV,
markdown, plots, compare), env (machine record), progress (the bar).
"""
