"""Surfaces of other memory libraries over the mirix-py engine, so code written for them runs unchanged."""
