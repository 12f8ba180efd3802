"""What to change: the settings that fit, as the commands to run.

search.py    plan(model, engine, devices=..., goals=Goals(...)) -> Plan: the Pareto front, best first, three tiers
options.py   one choice of an engine's knob space on the devices -> Option (its command re-estimated), Goals
fit.py       fit(argv, devices) -> Fit: the user's own command with the fewest knobs turned
hardware.py  the third tier: the smallest catalog GPU, or number of GPUs, that runs it
family.py    a family's largest member that fits; the whole catalog surveyed
together.py  models planned side by side (a draft model, an embedding server)
rating.py    bits, published quality (quality.py, data/quality.json) and the decode bound (speed.py) of an option
"""
