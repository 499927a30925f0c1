"""Screenshot settings from the environment."""

from __future__ import annotations

from datetime import timedelta

import pytest

from mirix_py.errors import InvalidInput
from mirix_py.ingest.env import screenshot_config_from_env


def test_settings_come_from_the_environment():
    config = screenshot_config_from_env({"MIRIX_SCREENSHOT_BATCH_FRAMES": "5", "MIRIX_KEEP_OCR_TEXT": "1",
                                         "MIRIX_THUMBNAIL_RETENTION_DAYS": "2", "MIRIX_OCR_WORKERS": "1"})
    assert config.batch.max_frames == 5 and config.keep_ocr_text and config.workers == 1
    assert config.thumbnail_retention == timedelta(days=2)
    default = screenshot_config_from_env({})
    assert not default.keep_ocr_text and not default.keep_thumbnails and default.similarity_threshold == 0.99
    with pytest.raises(InvalidInput, match="screenshot settings"):
        screenshot_config_from_env({"MIRIX_SCREENSHOT_BATCH_FRAMES": "many"})
