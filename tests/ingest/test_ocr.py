"""OCR: parsing and filtering (pure), preprocessing, the pool's one-thread Tesseract, real Tesseract on screens."""

from __future__ import annotations

import os
import stat
import threading

import pytest
from PIL import Image, ImageDraw

from mirix_py.errors import InvalidInput
from mirix_py.ingest import ocr
from mirix_py.ingest.ocr import (
    OcrConfig, OcrError, OcrPool, TesseractMissing, parse_tesseract_data, prepare_for_ocr,
)
from mirix_py.ingest.reread import looks_like_token
from tesseract_rows import tesseract_data


def test_words_group_into_lines_and_blocks_low_confidence_dropped():
    result = parse_tesseract_data(tesseract_data([
        (1, 1, 1, 1, 10, 10, 50, 12, 96, "Quarterly"), (1, 1, 1, 2, 65, 10, 40, 12, 91, "report"),
        (1, 1, 2, 1, 10, 30, 30, 12, 12, "~~"), (1, 1, 2, 2, 45, 30, 30, 12, 88, "draft"),
        (2, 1, 1, 1, 10, 200, 60, 12, 20, "Pneents"),
    ]), min_confidence=45)
    assert result.lines == ["Quarterly report", "draft"]
    assert result.text == "Quarterly report\ndraft"
    assert (result.words_kept, result.words_dropped) == (3, 2)
    assert len(result.blocks) == 1 and result.mean_confidence == pytest.approx((96 + 91 + 88) / 3)


def test_low_confidence_urls_addresses_and_keys_are_kept():
    result = parse_tesseract_data(tesseract_data([
        (1, 1, 1, 1, 10, 10, 300, 12, 0, "https://en.wikipedia.org/wiki/Lake_Baikal"),
        (1, 1, 2, 1, 10, 30, 200, 12, 20, '"sk_live_m62MNN6xaUVwecsVWwdGeJsV"'),
        (1, 1, 3, 1, 10, 50, 40, 12, 20, "Barco"),
    ]), min_confidence=45)
    assert result.lines == ["https://en.wikipedia.org/wiki/Lake_Baikal", '"sk_live_m62MNN6xaUVwecsVWwdGeJsV"']
    assert looks_like_token("alice.chen@acme.com") and looks_like_token("FALC-486")
    assert not looks_like_token("Barco") and not looks_like_token("|_—~") and not looks_like_token("a.b")
    strict = parse_tesseract_data(tesseract_data([(1, 1, 1, 1, 10, 10, 300, 12, 0, "https://x.org/a")]), min_confidence=45,
                                  keep_tokens=False)
    assert strict.lines == []


def test_boxes_map_back_to_the_frame_and_panes_are_split():
    # one Tesseract line reading across two panes: a list entry and a sentence 500 px to the right
    result = parse_tesseract_data(tesseract_data([
        (1, 1, 1, 1, 36, 350, 60, 20, 95, "Service"), (1, 1, 1, 2, 105, 350, 60, 20, 95, "Desk"),
        (1, 1, 1, 3, 990, 352, 60, 24, 95, "Sofia"), (1, 1, 1, 4, 1060, 352, 60, 24, 95, "works"),
        (1, 1, 2, 1, 36, 400, 60, 20, 95, "Payroll"), (1, 1, 2, 2, 990, 402, 60, 24, 95, "Best,"),
    ]), min_confidence=45, scale=1.5)
    assert [b.text for b in result.blocks] == ["Service Desk\nPayroll", "Sofia works\nBest,"]
    assert result.blocks[0].lines[0].words[0].box == (24, 233, 40, 13)
    joined = parse_tesseract_data(tesseract_data([
        (1, 1, 1, 1, 36, 350, 60, 20, 95, "Service"), (1, 1, 1, 3, 990, 352, 60, 24, 95, "Sofia"),
    ]), min_confidence=45, split_gap=None)
    assert joined.lines == ["Service Sofia"]


def test_malformed_output_is_an_ocr_error():
    with pytest.raises(OcrError):
        parse_tesseract_data({"text": []}, min_confidence=0)


def test_dark_regions_are_inverted_to_dark_on_light():
    image = Image.new("RGB", (800, 400), (250, 250, 250))
    draw = ImageDraw.Draw(image)
    draw.rectangle([400, 0, 800, 400], fill=(24, 24, 28))  # a terminal pane
    draw.rectangle([450, 100, 700, 110], fill=(230, 230, 230))  # light "text" in it
    draw.rectangle([50, 100, 300, 110], fill=(20, 20, 20))  # dark text on the light side
    grey = prepare_for_ocr(image, OcrConfig(scale=1.0))
    assert grey.mode == "L" and grey.size == (800, 400)
    assert grey.getpixel((600, 300)) > 200 and grey.getpixel((600, 105)) < 60  # inverted pane
    assert grey.getpixel((100, 300)) > 200 and grey.getpixel((100, 105)) < 60  # untouched
    assert prepare_for_ocr(image, OcrConfig(scale=0.5)).size == (400, 200)
    assert OcrConfig().scale_for(1080) == 1.25 and OcrConfig().scale_for(2160) == 0.625


@pytest.mark.parametrize("kwargs", [{"lang": ""}, {"lang": "eng;rm -rf"}, {"psm": 14}, {"min_confidence": 101},
                                    {"scale": 10}, {"timeout": 0}, {"reread_below": 101}, {"reread_scale": 0.5}])
def test_config_is_validated(kwargs):
    with pytest.raises(InvalidInput):
        OcrConfig(**kwargs)


# ---------------------------------------------------------------- a fake tesseract: pool wiring, errors


FAKE = """\
#!/bin/sh
# stands in for tesseract: records its OMP_THREAD_LIMIT and answers like Tesseract 5
if [ "$1" = "--version" ]; then echo "tesseract 5.3.0"; exit 0; fi
if [ "$1" = "--list-langs" ]; then printf 'List of available languages (2):\\neng\\nosd\\n'; exit 0; fi
echo "${OMP_THREAD_LIMIT:-unset}" >> "%(log)s"
# the frame comes on stdin (no file of it is written) and the TSV goes to stdout
[ "$1" = "stdin" ] && [ "$2" = "stdout" ] || { echo "expected: tesseract stdin stdout ..." >&2; exit 2; }
first="$(head -c 1 | od -An -c | tr -d ' ')"; cat > /dev/null
case "$first" in P) ;; *) echo "Error in pixReadStream" >&2; exit 1;; esac
if grep -q FAILME "%(flag)s" 2>/dev/null; then echo "Error: boom" >&2; exit 1; fi
printf 'level\\tpage_num\\tblock_num\\tpar_num\\tline_num\\tword_num\\tleft\\ttop\\twidth\\theight\\tconf\\ttext\\n'
printf '5\\t1\\t1\\t1\\t1\\t1\\t10\\t10\\t40\\t12\\t95\\thello\\n'
"""


@pytest.fixture
def fake_tesseract(tmp_path):
    log, flag = tmp_path / "omp.log", tmp_path / "flag"
    script = tmp_path / "tesseract"
    script.write_text(FAKE % {"log": log, "flag": flag})
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script), log, flag


def test_pool_runs_each_tesseract_with_one_thread_without_touching_this_process(fake_tesseract):
    cmd, log, _ = fake_tesseract
    before = os.environ.get("OMP_THREAD_LIMIT")
    with OcrPool(OcrConfig(), workers=2, cmd=cmd) as pool:
        assert pool.check() == "5.3.0"
        results = pool.map([Image.new("RGB", (200, 100), "white")] * 4)
    assert [r.text for r in results] == ["hello"] * 4
    assert log.read_text().split() == ["1"] * 4
    assert os.environ.get("OMP_THREAD_LIMIT") == before
    # outside the pool's threads, pytesseract's environment is this process's own
    import pytesseract

    assert dict(pytesseract.pytesseract.environ).get("OMP_THREAD_LIMIT") == before


def test_workers_zero_runs_in_the_calling_thread_with_default_threads(fake_tesseract, monkeypatch):
    cmd, log, _ = fake_tesseract
    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)
    pool = OcrPool(workers=0, cmd=cmd)
    assert pool.submit(Image.new("RGB", (200, 100))).result().text == "hello"
    assert log.read_text().split() == ["unset"]


def test_a_failing_frame_is_an_ocr_error_and_the_rest_go_through(fake_tesseract):
    cmd, _, flag = fake_tesseract
    with OcrPool(workers=2, cmd=cmd) as pool:
        ok = pool.submit(Image.new("RGB", (200, 100))).result()
        flag.write_text("FAILME")
        bad = pool.map([Image.new("RGB", (200, 100))])[0]
        flag.write_text("")
        again = pool.submit(Image.new("RGB", (200, 100))).result()
    assert ok.text == "hello" and isinstance(bad, OcrError) and "boom" in str(bad) and again.text == "hello"


def test_no_file_of_the_frame_is_written(fake_tesseract, tmp_path, monkeypatch):
    """pytesseract's own call saved the whole frame, secrets not yet painted out, in the system's
    temp dir (mode 0644), and left it there when the process was killed during OCR."""
    import tempfile

    cmd, _, _ = fake_tesseract
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    assert OcrPool(workers=0, cmd=cmd).submit(Image.new("RGB", (200, 100))).result().text == "hello"
    assert list(temp.iterdir()) == []


def test_missing_tesseract_names_the_package(tmp_path):
    with pytest.raises(TesseractMissing, match="tesseract-ocr"):
        OcrPool(cmd=str(tmp_path / "no-such-tesseract")).check()
    assert issubclass(TesseractMissing, InvalidInput)


def test_missing_language_names_the_package(fake_tesseract):
    cmd, _, _ = fake_tesseract
    with pytest.raises(InvalidInput, match="tesseract-ocr-deu"):
        OcrPool(OcrConfig(lang="eng+deu"), cmd=cmd).check()


# ---------------------------------------------------------------- the real Tesseract


def test_real_tesseract_reads_a_synthetic_email(tesseract, synth):
    result = ocr.ocr_image(synth.frame("email"))
    text = result.text
    sender = synth.facts["mail-address"].secret
    assert sender in text
    assert "product manager" in text and "You can reach me at" in text
    assert len(result.blocks) > 3 and result.mean_confidence > 80
    assert result.size == (1920, 1080)
    # boxes are in the frame's own pixels (OCR ran on a 1.25x upscaled copy)
    box = next(w.box for b in result.blocks for ln in b.lines for w in ln.words if sender in w.text)
    assert 660 <= box[0] < 1400 and 90 < box[1] < 140 and box[3] < 30  # "From: … <address>" in the message pane


def test_real_tesseract_reads_light_on_dark_terminal_text(tesseract, synth):
    text = ocr.ocr_image(synth.frame("terminal", 0, progress=2)).text
    assert "git pull --rebase" in text and "deploy.sh" in text


def test_real_pool_in_parallel(tesseract, synth):
    frames = [synth.frame(scene) for scene in ("chat", "document")]
    with OcrPool(workers=2) as pool:
        results = pool.map(frames)
    assert all(not isinstance(r, Exception) for r in results)
    assert "morning! standup notes are in the doc" in results[0].text
    assert synth.facts["doc-project"].text in results[1].text.replace("\n", " ")
    assert threading.active_count() >= 1
