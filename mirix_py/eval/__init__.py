"""Evaluation: LoCoMo loading, ingestion, retrieval metrics and raw-turn baselines."""
