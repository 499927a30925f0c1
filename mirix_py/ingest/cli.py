"""`mirix ingest-screenshots DIR` and `mirix capture`: registered on the main `mirix` command.

Pillow and pytesseract are imported inside the commands, so the rest of the CLI works without
the `screenshots` extra. The engine is opened by the function `register` is given (the main
command's), so this package never imports it.
"""

from __future__ import annotations

from mirix_py.text.words import human_bytes

import json
import signal
import sys
import threading
from datetime import timedelta, tzinfo
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mirix_py.ingest import defaults
from mirix_py.ingest.env import ENV_VARS

console = Console()
err = Console(stderr=True)

DataDir = typer.Option(None, "--data-dir", "-d", envvar="MIRIX_DATA_DIR", help="Data directory (default ~/.mirix).")
User = typer.Option(..., "--user", "-u", help="User id the memories belong to.")
Lang = typer.Option(None, "--lang", help="Tesseract language(s), e.g. eng or eng+deu (tesseract-ocr-<lang>) "
                    f"(default: {ENV_VARS['lang']}, else {defaults.OCR_LANG}).")
Workers = typer.Option(None, "--workers", help=f"OCR processes (default: {ENV_VARS['workers']}, else one per core).")
Similarity = typer.Option(None, "--similarity", min=0.01, max=1.0,
                          help="Skip a frame at least this similar to the last kept one of its window "
                          f"(default: {ENV_VARS['similarity']}, else {defaults.SIMILARITY:g}).")
BatchFrames = typer.Option(None, "--batch-frames", min=1, help="Frames per memory update (per app) "
                           f"(default: {ENV_VARS['batch_frames']}, else {defaults.BATCH_FRAMES}).")
BatchSeconds = typer.Option(None, "--batch-seconds", min=0.1, help="Seconds of screen time per memory update "
                            f"(default: {ENV_VARS['batch_seconds']}, else {defaults.BATCH_SECONDS:g}).")
Thumbs = typer.Option(None, "--keep-thumbnails/--no-keep-thumbnails",
                      help="Keep a small WebP per processed frame, never the frame "
                      f"(default: {ENV_VARS['keep_thumbnails']}, else no).")
Retention = typer.Option(None, "--thumbnail-days", min=0.01, help="Delete thumbnails after this many days "
                         f"(default: {ENV_VARS['thumbnail_days']}, else {defaults.THUMBNAIL_DAYS:g}).")

def _fail(exc: BaseException) -> None:
    err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)  # one line: scripts grep it
    raise typer.Exit(2)


def _zone(name: Optional[str]) -> tzinfo | None:
    if not name:
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        _fail(ValueError(f"unknown time zone {name!r} (use an IANA name such as Europe/Berlin or UTC)"))
    return None


OpenEngine = Callable[..., Any]  # (data dir, create=bool) -> an engine with the screenshot methods (a Mirix)
Create = typer.Option(False, "--create", help="Start a new store if the data directory does not exist.")


def _open(open_engine: OpenEngine, data_dir: Optional[Path], *, create: bool = False, lang: Optional[str],
          workers: Optional[int], similarity: Optional[float], batch_frames: Optional[int],
          batch_seconds: Optional[float], keep_thumbnails: Optional[bool], thumbnail_days: Optional[float]) -> Any:
    """The engine, reading screenshots with the flags given over the environment's settings."""
    config = _config_with_flags(lang=lang, workers=workers, similarity=similarity, batch_frames=batch_frames,
                                batch_seconds=batch_seconds, keep_thumbnails=keep_thumbnails,
                                thumbnail_days=thumbnail_days)
    mx = open_engine(data_dir, create=create)
    mx.configure_screenshots(config)
    return mx


def _given(**flags: Any) -> dict[str, Any]:
    """The flags the command line gave (None: not given)."""
    return {name: value for name, value in flags.items() if value is not None}


def _config_with_flags(*, lang: Optional[str], workers: Optional[int], similarity: Optional[float],
                       batch_frames: Optional[int], batch_seconds: Optional[float],
                       keep_thumbnails: Optional[bool], thumbnail_days: Optional[float]) -> Any:
    """The ScreenshotConfig the SDK reads from the environment, with each given flag over it,
    so a flag not given keeps MIRIX_OCR_LANG and the others (or their defaults)."""
    from dataclasses import replace

    from mirix_py.errors import InvalidInput
    from mirix_py.ingest.env import screenshot_config_from_env

    given = _given(lang=lang, workers=workers, similarity=similarity, batch_frames=batch_frames,
                   batch_seconds=batch_seconds, keep_thumbnails=keep_thumbnails, thumbnail_days=thumbnail_days)
    base = screenshot_config_from_env(overridden=given)  # a flag given: its variable is not read
    retention = None if thumbnail_days is None else timedelta(days=thumbnail_days)
    try:
        return replace(base, ocr=replace(base.ocr, **_given(lang=lang)),
                       batch=replace(base.batch, **_given(max_frames=batch_frames, max_seconds=batch_seconds)),
                       **_given(workers=workers, similarity_threshold=similarity, keep_thumbnails=keep_thumbnails,
                                thumbnail_retention=retention))
    except ValueError as exc:
        raise InvalidInput(f"screenshot settings: {exc}") from exc


def print_report(report: Any, title: str) -> None:
    table = Table(title=title, show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("frames", str(report.frames))
    table.add_row("already ingested (skipped)", str(report.ingested))
    if report.claimed:
        table.add_row("claimed by another run (skipped, not logged yet)", str(report.claimed))
    if report.resumed:
        table.add_row("finished from an earlier run's log", str(report.resumed))
    table.add_row("read (OCR)", str(report.unique))
    table.add_row("skipped as near-duplicates", f"{report.duplicates} ({report.duplicate_share:.0%})")
    table.add_row("no text", str(report.no_text))
    table.add_row("invalid", str(report.invalid))
    table.add_row("failed", str(report.failed))
    table.add_row("memory updates (batches)", str(report.batches))
    table.add_row("memories written", ", ".join(f"{k} {v}" for k, v in sorted(report.changes.items())) or "0")
    table.add_row("raw PNG bytes", human_bytes(report.png_bytes))
    table.add_row("bytes stored (text + thumbnails)",
                  f"{human_bytes(report.stored_bytes)} ({report.stored_share:.3%} of the PNGs)")
    table.add_row("OCR time / wall time", f"{report.ocr_seconds:.1f} s / {report.wall_seconds:.1f} s")
    console.print(table)
    for name, error in report.errors[:20]:
        message = error if error.startswith(name) else f"{name}: {error}"
        err.print(f"[yellow]skipped[/] {escape(message)}")
    if len(report.errors) > 20:
        err.print(f"[yellow]… and {len(report.errors) - 20} more[/]")


def register(app: typer.Typer, open_engine: OpenEngine) -> None:
    @app.command("ingest-screenshots")
    def ingest_screenshots(directory: Path = typer.Argument(..., help="Folder of PNG/JPEG/WebP screenshots."),
                           user: str = User,
                           recursive: bool = typer.Option(False, "--recursive", "-r", help="Descend into folders."),
                           app_name: Optional[str] = typer.Option(None, "--app", help="App of every frame, when "
                                                                  "the files do not say."),
                           tz: Optional[str] = typer.Option(None, "--tz", help="Zone of time stamps written "
                                                            "without one, with its offset on each stamp's date "
                                                            "(default: MIRIX_TIMEZONE, else this machine's)."),
                           lang: Optional[str] = Lang, workers: Optional[int] = Workers,
                           similarity: Optional[float] = Similarity, batch_frames: Optional[int] = BatchFrames,
                           batch_seconds: Optional[float] = BatchSeconds, keep_thumbnails: Optional[bool] = Thumbs,
                           thumbnail_days: Optional[float] = Retention,
                           data_dir: Optional[Path] = DataDir, create: bool = Create,
                           as_json: bool = typer.Option(False, "--json", help="Print the report as JSON.")) -> None:
        """Remember what a folder of screenshots shows (times from metadata or file names). Run again on a
        folder that grew, it reads only the new files: those the user's input log holds are skipped."""
        from tqdm import tqdm

        from mirix_py.errors import MirixError
        from mirix_py.ingest.frames import list_image_files

        zone = _zone(tz)
        try:
            files = list_image_files(directory, recursive=recursive)
        except MirixError as exc:
            _fail(exc)
        if not files:
            _fail(FileNotFoundError(f"no PNG/JPEG/WebP/BMP/TIFF/GIF files in {directory}"))
        try:
            with _open(open_engine, data_dir, create=create, lang=lang, workers=workers, similarity=similarity,
                       batch_frames=batch_frames, batch_seconds=batch_seconds, keep_thumbnails=keep_thumbnails,
                       thumbnail_days=thumbnail_days) as mx:
                with tqdm(total=len(files), desc="screenshots", unit="frame", disable=as_json) as bar:
                    report = mx.ingest_screenshots(files, user_id=user, app=app_name, default_tz=zone,
                                                   progress=bar.update)
        except MirixError as exc:
            _fail(exc)
        if as_json:
            sys.stdout.write(json.dumps(report.to_dict(), indent=2) + "\n")
        else:
            print_report(report, f"{directory}: {len(files)} file(s)")

    @app.command()
    def capture(user: str = User,
                interval: float = typer.Option(1.5, "--interval", min=0.1, help="Seconds between grabs."),
                duration: Optional[float] = typer.Option(None, "--duration", help="Stop after this many seconds."),
                max_frames: Optional[int] = typer.Option(None, "--max-frames", min=1, help="Stop after N grabs."),
                all_screens: bool = typer.Option(False, "--all-screens", help="Every monitor, not just the main one."),
                lang: Optional[str] = Lang, workers: Optional[int] = Workers,
                similarity: Optional[float] = Similarity, batch_frames: Optional[int] = BatchFrames,
                batch_seconds: Optional[float] = BatchSeconds, keep_thumbnails: Optional[bool] = Thumbs,
                thumbnail_days: Optional[float] = Retention,
                data_dir: Optional[Path] = DataDir, create: bool = Create) -> None:
        """Capture the screen every --interval seconds and remember what it shows (Ctrl-C stops)."""
        from mirix_py.errors import MirixError
        from mirix_py.ingest.capture import CaptureUnavailable, ImageGrabSource, run_capture

        source = ImageGrabSource(all_screens=all_screens)
        try:
            source.check()
        except CaptureUnavailable as exc:
            _fail(exc)
        stop = threading.Event()
        previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
        try:
            with _open(open_engine, data_dir, create=create, lang=lang, workers=workers, similarity=similarity,
                       batch_frames=batch_frames, batch_seconds=batch_seconds, keep_thumbnails=keep_thumbnails,
                       thumbnail_days=thumbnail_days) as mx:
                console.print(f"capturing every {interval:g} s for {user}; Ctrl-C stops")
                with console.status("capturing…") as status:
                    def show(frame, result) -> None:
                        r = mx.screenshots.totals
                        status.update(f"{r.frames} frames, {r.duplicates} duplicates, {r.batches} updates, "
                                      f"{r.pending} pending")

                    stats = run_capture(source, mx, user_id=user, interval=interval, duration=duration,
                                        max_frames=max_frames, stop=stop, on_frame=show)
                print_report(mx.screenshots.totals, f"capture: {stats.seconds:.0f} s")
                for error in stats.errors[:10]:
                    err.print(f"[yellow]frame skipped:[/] {escape(error)}")
        except CaptureUnavailable as exc:
            _fail(exc)
        except MirixError as exc:
            _fail(exc)
        finally:
            signal.signal(signal.SIGINT, previous)
