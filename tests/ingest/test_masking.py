"""Secret lines painted out of a frame's copies (`mask_regions`); which lines is `secrets.masking`'s."""

from __future__ import annotations

import pytest
from PIL import Image

from mirix_py.ingest.masking import MASK_FILL, mask_regions

WHITE = (255, 255, 255)


def test_boxes_are_painted_solid_at_the_images_scale_with_a_margin():
    small = Image.new("RGB", (1000, 500), WHITE)  # the frame was 2000 x 1000
    masked = mask_regions(small, [(10, 100, 310, 20)], source_size=(2000, 1000))
    assert masked is not small and small.getcolors() == [(1000 * 500, WHITE)]  # the given image is untouched
    region = masked.crop((5, 50, 160, 60))  # the box at half scale: (5, 50) - (160, 60)
    assert region.getcolors() == [(155 * 10, MASK_FILL)]
    # grown by 0.3 of the line's height (6 px of the frame, 3 here) and at least 3 px on every side
    assert masked.getpixel((2, 47)) == MASK_FILL and masked.getpixel((162, 62)) == MASK_FILL
    assert masked.getpixel((170, 55)) == WHITE and masked.getpixel((80, 70)) == WHITE and masked.getpixel((80, 40)) == WHITE


def test_painting_clips_to_the_image_and_skips_empty_boxes():
    image = Image.new("L", (100, 50), 255)
    masked = mask_regions(image, [(90, 40, 30, 30), (10, 10, 0, 5)], source_size=(100, 50))
    assert masked.mode == "RGB" and masked.getpixel((99, 49)) == MASK_FILL and masked.getpixel((10, 10)) == WHITE
    assert mask_regions(image, [], source_size=(100, 50)).getcolors() == [(100 * 50, WHITE)]
    with pytest.raises(ValueError, match="source_size"):
        mask_regions(image, [(0, 0, 5, 5)], source_size=(0, 0))
