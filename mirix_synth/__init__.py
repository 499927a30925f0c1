"""Synthetic data for tests, benchmarks and `mirix eval`: not part of the memory engine.

`mirix_synth.screens` draws seeded desktop sessions with planted facts (each with structured
values, so questions and checks are built from the facts rather than from the drawn text).
Needs Pillow (the `screenshots` extra).
"""
