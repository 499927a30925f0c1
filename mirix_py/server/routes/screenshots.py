"""Screenshots of one user: a multipart upload, read with OCR and remembered like text."""

import io

from fastapi import APIRouter, File, Form, Response, UploadFile

from mirix_py.records import AddResult, utcnow
from mirix_py.server.deps import Engine, RequestLimits, User
from mirix_py.server.errors import ApiError
from mirix_py.server.limits import API_PREFIX, upload
from mirix_py.server.models import ErrorOut, When, clean_text
from mirix_py.server.routes.memories import input_location

try:  # the engine's screenshot result (an AddResult plus what happened to the frame)
    from mirix_py.ingest.screenshots import ScreenshotResult as ScreenshotOut
except ImportError:  # pragma: no cover - Pillow missing: the endpoint still answers with an AddResult
    ScreenshotOut = AddResult  # type: ignore[misc, assignment]

router = APIRouter(prefix=f"{API_PREFIX}/users/{{user_id}}/screenshots", tags=["memories"])


@router.post("", response_model=ScreenshotOut, status_code=202,
             responses={200: {"model": ScreenshotOut, "description": "Processed (wait=true)."},
                        202: {"description": "Accepted: OCR and memories in the background."},
                        503: {"model": ErrorOut, "description": "OCR (Tesseract) is not installed on the server."}})
@upload
def add_screenshot(user_id: User, response: Response, mx: Engine, limits: RequestLimits,
                   image: UploadFile = File(description="PNG, JPEG or WebP screenshot."),
                   captured_at: When | None = Form(None, description="When it was taken; now if unset."),
                   app_name: str | None = Form(None, alias="app", max_length=200),
                   window_title: str | None = Form(None, max_length=1000),
                   wait: bool = Form(False)) -> AddResult:
    """Upload a screenshot (multipart): OCR, then memories, as with text. A frame that nearly repeats the
    last one of its window, or holds no text, is `processed` with no input (`frame.outcome` says which).
    The image itself is never stored."""
    from PIL import Image, UnidentifiedImageError

    try:
        for value in (app_name, window_title):
            if value is not None:
                clean_text(value)
    except ValueError as exc:
        raise ApiError(422, "invalid_input", str(exc)) from exc
    data = image.file.read()
    if not data:
        raise ApiError(422, "invalid_input", "the image is empty")
    try:
        with Image.open(io.BytesIO(data)) as probe:  # the header only: the engine reads the pixels, as the SDK's
            width, height = probe.size                # add_screenshot does (a frame whose end chunk is cut but
        if width * height > limits.max_image_pixels:  # whose pixels are whole is read by both, not refused here)
            raise ApiError(413, "too_large", f"image is {width}x{height}, over {limits.max_image_pixels} pixels")
    except ApiError:
        raise
    except Image.DecompressionBombError as exc:  # Pillow's own check, past ~179 MP: over our limit too
        raise ApiError(413, "too_large", f"image is over {limits.max_image_pixels} pixels ({exc})") from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        why = "not an image, or a format Pillow cannot read" if isinstance(exc, UnidentifiedImageError) else str(exc)
        raise ApiError(422, "invalid_input", f"not a readable image: {why}") from exc
    # the bytes, not a decoded picture: the engine's own check takes the formats it supports only
    result = mx.add_screenshot(data, user_id=user_id, captured_at=captured_at or utcnow(), app=app_name,
                               window_title=window_title, wait=wait)
    response.status_code = 200 if wait else 202
    if result.input_ids:
        response.headers["Location"] = input_location(user_id, result.input_ids[0])
    return result
