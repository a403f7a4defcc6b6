"""The image processor makes what reaches a model independent of how its text was captured: polarity, colour,
crop tightness and scale. Unit checks of the normalisation, then released models reading the same text from
each variant of the same images."""

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont, ImageOps

from textrec.processing.image_processing_text_recognition import (
    TextRecognitionImageProcessor,
    estimate_glyph_height,
    has_light_text,
    ink_box,
    normalize_capture,
)

FIXTURES = Path(__file__).parent / "fixtures"


def line_image(width=120, height=30, ink=20, paper=235, box=(20, 8, 100, 22)) -> Image.Image:
    """A page-coloured image with one dark block of "ink" at `box` (left, top, right, bottom)."""
    values = np.full((height, width), paper, np.uint8)
    left, top, right, bottom = box
    values[top:bottom, left:right:3] = ink  # strokes, not a solid block: text covers part of its box
    return Image.fromarray(values)


def test_dark_text_on_light_is_kept():
    assert not has_light_text(np.asarray(line_image()))


def test_light_text_on_dark_is_told():
    assert has_light_text(255 - np.asarray(line_image()))


def test_light_text_filling_most_of_a_tight_crop_is_told():
    values = np.full((30, 60), 30, np.uint8)
    values[2:28, 1:59:2] = 240  # light strokes over half of the pixels, the border mostly dark
    assert has_light_text(values)


def test_blank_image_has_no_light_text_and_no_ink():
    blank = np.full((20, 50), 128, np.uint8)
    assert not has_light_text(blank)
    assert ink_box(blank) is None


def test_ink_box_finds_the_strokes_and_ignores_specks():
    values = np.asarray(line_image()).copy()
    values[1, 4] = values[27, 110] = 20  # specks
    assert ink_box(values) == (20, 8, 99, 22)


@pytest.mark.parametrize("polarity", ["auto", "light-on-dark"])
def test_inverted_input_normalises_to_the_original(polarity):
    original = line_image()
    assert np.array_equal(np.asarray(normalize_capture(ImageOps.invert(original), polarity)), np.asarray(original))


def test_dark_on_light_option_keeps_the_input():
    inverted = ImageOps.invert(line_image())
    assert np.array_equal(np.asarray(normalize_capture(inverted, "dark-on-light")), np.asarray(inverted))


def test_tight_and_loose_crops_frame_alike():
    loose = line_image(width=200, height=60, box=(50, 20, 130, 34))
    tight = loose.crop((48, 18, 133, 37))
    framed = [normalize_capture(image, crop_margin=0.25) for image in (loose, tight)]
    assert framed[0].size == framed[1].size
    assert np.array_equal(np.asarray(framed[0]), np.asarray(framed[1]))


def test_wide_blank_margins_are_cut_and_narrow_ones_kept():
    from textrec.processing import textrec_onnx
    from textrec.processing.image_processing_text_recognition import MAX_SIDE_MARGIN, MAX_VERTICAL_MARGIN

    wide = line_image(width=400, height=30, box=(150, 8, 230, 22))  # ink 14 rows high, 150 and 170 columns of blank
    trimmed = normalize_capture(wide, max_side_margin=MAX_SIDE_MARGIN)
    assert trimmed.size == (ink_box(np.asarray(wide))[2] - 150 + 2 * 14, 30)
    assert ink_box(np.asarray(trimmed))[0] == 14
    onnx_trimmed = textrec_onnx.normalize_capture(wide, "auto", None, max_side_margin=MAX_SIDE_MARGIN)
    assert np.array_equal(np.asarray(onnx_trimmed), np.asarray(trimmed))  # the ONNX reader's copy agrees
    tall = line_image(width=120, height=100, box=(20, 40, 100, 54))  # 40 and 46 rows of blank above and below
    cut = normalize_capture(tall, max_vertical_margin=MAX_VERTICAL_MARGIN)
    assert cut.size == (120, 14 + 2 * 7) and ink_box(np.asarray(cut))[1] == 7
    onnx_cut = textrec_onnx.normalize_capture(tall, "auto", None, max_vertical_margin=MAX_VERTICAL_MARGIN)
    assert np.array_equal(np.asarray(onnx_cut), np.asarray(cut))
    narrow = line_image()  # 20 columns of blank each side, 8 rows above and below: kept
    assert normalize_capture(narrow, max_side_margin=1.5, max_vertical_margin=0.6).size == narrow.size
    assert normalize_capture(wide).size == wide.size  # None keeps every margin
    blank = Image.new("L", (300, 30), 240)
    assert normalize_capture(blank, max_side_margin=1.0, max_vertical_margin=0.5).size == blank.size
    processor = TextRecognitionImageProcessor()
    assert (processor.max_side_margin, processor.max_vertical_margin) == (MAX_SIDE_MARGIN, MAX_VERTICAL_MARGIN)
    for setting in ("max_side_margin", "max_vertical_margin"):
        with pytest.raises(ValueError, match=f"{setting} must be"):
            TextRecognitionImageProcessor(**{setting: -1})


def test_blank_higher_than_the_limit_is_cut_closer_and_a_tight_crop_kept():
    """`cut_vertical_margin`: a side whose blank is over `max_vertical_margin` ink heights keeps `cut_vertical_margin`
    of them; a side under the limit stays as it is, so a tight crop is never cut into; the cut is never looser than
    the limit; the processor, its saved settings and the ONNX reader's copy agree."""
    from textrec.processing import textrec_onnx
    from textrec.processing.image_processing_text_recognition import CUT_VERTICAL_MARGIN, MAX_VERTICAL_MARGIN

    assert CUT_VERTICAL_MARGIN < MAX_VERTICAL_MARGIN
    loose_above = line_image(width=120, height=100, box=(20, 80, 100, 100))  # ink 20 rows: 80 rows above, none below
    cut = normalize_capture(loose_above, max_vertical_margin=0.5, cut_vertical_margin=0.2)
    assert cut.size == (120, 20 + 4) and ink_box(np.asarray(cut))[1] == 4
    onnx_cut = textrec_onnx.normalize_capture(loose_above, "auto", None, max_vertical_margin=0.5, cut_vertical_margin=0.2)
    assert np.array_equal(np.asarray(onnx_cut), np.asarray(cut))
    tight = line_image(width=120, height=36, box=(20, 8, 100, 28))  # 8 rows of blank above and below: 0.4 ink heights
    assert normalize_capture(tight, max_vertical_margin=0.5, cut_vertical_margin=0.2).size == tight.size
    one_side = line_image(width=120, height=68, box=(20, 8, 100, 28))  # 8 rows above (kept), 40 below (cut to 4)
    assert normalize_capture(one_side, max_vertical_margin=0.5, cut_vertical_margin=0.2).size == (120, 8 + 20 + 4)
    at_limit = normalize_capture(loose_above, max_vertical_margin=0.15, cut_vertical_margin=0.2)
    assert at_limit.size == (120, 20 + 3)  # a cut above the limit keeps the limit
    assert normalize_capture(loose_above, max_vertical_margin=0.5).size == (120, 20 + 10)  # None: cut to the limit
    processor = TextRecognitionImageProcessor()
    assert processor.cut_vertical_margin == CUT_VERTICAL_MARGIN
    assert TextRecognitionImageProcessor.from_dict(processor.to_dict()).cut_vertical_margin == CUT_VERTICAL_MARGIN
    onnx_preprocessor = textrec_onnx.LinePreprocessor(processor.to_dict())  # the ONNX folder's settings
    assert onnx_preprocessor.cut_vertical_margin == CUT_VERTICAL_MARGIN
    assert np.allclose(onnx_preprocessor.image_to_array(loose_above), processor._image_to_array(processor.normalize_capture_of(loose_above)))
    assert TextRecognitionImageProcessor(resize_mode="limits").margin_limits == (None, None, None, None)
    with pytest.raises(ValueError, match="cut_vertical_margin must be"):
        TextRecognitionImageProcessor(cut_vertical_margin=-0.1)



def test_a_line_whose_ink_is_under_two_percent_of_its_crop_is_cut_and_its_polarity_told():
    """A line 14 rows high with 143 and 143 rows of blank above and below: its ink is 1% of the pixels, which made the
    2nd and 98th percentiles both the blank's, so that the image was taken as blank, nothing was cut and a light line
    on dark was not inverted."""
    from textrec.processing import textrec_onnx

    loose = line_image(width=300, height=300, box=(40, 143, 260, 157))
    assert (np.asarray(loose) < 128).mean() < 0.02
    assert ink_box(np.asarray(loose)) == (40, 143, 260, 157)
    cut = normalize_capture(loose, max_side_margin=1.0, max_vertical_margin=0.5)
    assert cut.size == (220 + 2 * 14, 14 + 2 * 7)
    onnx_cut = textrec_onnx.normalize_capture(loose, "auto", None, max_side_margin=1.0, max_vertical_margin=0.5)
    assert np.array_equal(np.asarray(onnx_cut), np.asarray(cut))
    assert has_light_text(255 - np.asarray(loose)) and not has_light_text(np.asarray(loose))
    assert np.array_equal(np.asarray(normalize_capture(ImageOps.invert(loose), max_side_margin=1.0,
                                                       max_vertical_margin=0.5)), np.asarray(cut))

def test_a_margin_holding_text_the_ink_threshold_missed_is_kept_and_noisy_paper_cut():
    """A sign's faint letters (grey 180 on white) over a black bar: the ink's threshold puts the letters with the
    white, so the ink box holds the bar alone and the letters lay in a margin 'wider than the limit', which was cut
    (the real scene crop `FAHRENHEIT` read as nothing). A margin is cut only where it is blank
    (`is_blank_margin`), so the letters stay; the same margin as paper noise, at three times a scan's spread, is cut
    as before; the ONNX reader's copy agrees."""
    from textrec.processing import textrec_onnx
    from textrec.processing.luminance import is_blank_margin

    generator = np.random.default_rng(0)
    sign = np.full((120, 300), 255, np.uint8)
    for column in range(4):  # strokes 4 columns wide
        sign[10:80, 20 + column:280:12] = 180
    sign[10:14, 20:280] = 180
    sign[100:112, 10:290] = 0  # the bar: 12 rows, the only ink the threshold finds
    assert ink_box(sign)[1] == 100
    kept = normalize_capture(Image.fromarray(sign), max_side_margin=1.0, max_vertical_margin=0.5, cut_vertical_margin=0.15)
    assert kept.size[1] >= 112 - 10  # the letters' rows are still there
    onnx_kept = textrec_onnx.normalize_capture(Image.fromarray(sign), "auto", None, max_side_margin=1.0,
                                               max_vertical_margin=0.5, cut_vertical_margin=0.15)
    assert np.array_equal(np.asarray(onnx_kept), np.asarray(kept))
    paper = sign.copy()
    paper[:100] = np.clip(generator.normal(245, 3 * 3.0, (100, 300)), 0, 255).astype(np.uint8)
    cut = normalize_capture(Image.fromarray(paper), max_side_margin=1.0, max_vertical_margin=0.5, cut_vertical_margin=0.15)
    assert cut.size[1] == 2 + 12 + 2  # 0.15 of the bar's 12 rows kept above and below
    assert not is_blank_margin(sign[:90], 255, 12) and is_blank_margin(paper[:90], 255, 12)
    assert is_blank_margin(sign[:2], 255, 12)  # narrower than the averaging window


def receipt_row(gap_marks: int = 0, width=600, height=40, paper=238, ink=60) -> np.ndarray:
    """A receipt's row: a word at each end (strokes of `ink`, 20 rows high) and between them 430 columns of paper
    speckled as thermal paper and show-through are (grey down to `paper` - 28, a fifth of the ink's depth at most
    being 0.2 * 178 = 35.6), or, with `gap_marks` > 0, faded print that deep below the paper."""
    generator = np.random.default_rng(1)
    row = np.full((height, width), paper, np.uint8)
    row[10:30, 10:80:4] = ink
    row[10:30, 520:590:4] = ink
    speckles = generator.random((height, 430)) < 0.05
    row[:, 85:515][speckles] = paper - generator.integers(10, 28, speckles.sum())
    if gap_marks:
        row[12:28, 200:320:5] = paper - gap_marks
    return row


def test_a_wide_blank_gap_is_filled_with_the_paper_and_faint_print_in_it_kept():
    """Between a receipt row's `CASH` and `RM 23.00`, paper texture read as words (`CASH IN THE NORTHENRM 23.00`):
    a gap wider than `MAX_BLANK_GAP` ink heights is filled with the paper's colour but for `BLANK_GAP_KEPT` ink
    heights beside the ink, the words untouched; print fainter than the ink's threshold in the gap keeps it as it is;
    `max_blank_gap=None`, and a gap narrower than the limit, keep every pixel; the ONNX reader's copy agrees."""
    from textrec.processing import textrec_onnx
    from textrec.processing.luminance import BLANK_GAP_KEPT, MAX_BLANK_GAP

    settings = dict(max_side_margin=1.0, max_vertical_margin=0.5, cut_vertical_margin=0.15)
    row = receipt_row()
    filled = np.asarray(normalize_capture(Image.fromarray(row), **settings, max_blank_gap=MAX_BLANK_GAP))
    assert filled.shape == row.shape
    kept = round(BLANK_GAP_KEPT * 20)  # the ink is 20 rows high
    assert np.array_equal(filled[:, : 78 + kept + 1], row[:, : 78 + kept + 1])  # the left word and its edge
    assert np.array_equal(filled[:, 520 - kept:], row[:, 520 - kept:])  # the right word and its edge
    assert (filled[:, 78 + kept + 1: 520 - kept] == 238).all()  # the texture is gone: paper's median, 238
    onnx_filled = textrec_onnx.normalize_capture(Image.fromarray(row), "auto", None, **settings,
                                                 max_blank_gap=MAX_BLANK_GAP)
    assert np.array_equal(np.asarray(onnx_filled), filled)
    for image, max_blank_gap in ((receipt_row(gap_marks=40), MAX_BLANK_GAP), (row, None), (row, 500 / 20)):
        unchanged = normalize_capture(Image.fromarray(image), **settings, max_blank_gap=max_blank_gap)
        assert np.array_equal(np.asarray(unchanged), image)
    processor = TextRecognitionImageProcessor()
    assert processor.max_blank_gap == MAX_BLANK_GAP
    assert np.array_equal(np.asarray(processor.normalize_capture_of(Image.fromarray(row))), filled)
    assert TextRecognitionImageProcessor.from_dict(processor.to_dict()).max_blank_gap == MAX_BLANK_GAP
    assert textrec_onnx.LinePreprocessor(processor.to_dict()).max_blank_gap == MAX_BLANK_GAP


def test_rgb_image_keeps_its_mode_and_background_colour():
    rgb = Image.merge("RGB", [line_image(), line_image(paper=200), line_image(paper=120)])
    framed = normalize_capture(rgb, crop_margin=0.5)
    assert framed.mode == "RGB"
    assert framed.getpixel((0, 0)) == (235, 200, 120)


@pytest.mark.parametrize(
    "settings, message",
    [({"text_polarity": "white"}, "text_polarity must be one of"), ({"crop_margin": -1}, "crop_margin must be"),
     ({"deslant": "yes"}, "deslant must be True or False"), ({"max_blank_gap": -1}, "max_blank_gap must be")],
)
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        TextRecognitionImageProcessor(**settings)


def test_settings_round_trip(tmp_path):
    processor = TextRecognitionImageProcessor(text_polarity="dark-on-light", crop_margin=0.3, deslant=True)
    processor.save_pretrained(tmp_path)
    loaded = TextRecognitionImageProcessor.from_pretrained(tmp_path)
    assert (loaded.text_polarity, loaded.crop_margin, loaded.deslant) == ("dark-on-light", 0.3, True)


# The released models read each variant of the same images as they read the original.


def variants(image: Image.Image) -> dict[str, Image.Image]:
    grey = image.convert("L")
    coloured = Image.merge("RGB", [grey.point(lambda v: 40 + v * 0.8), grey.point(lambda v: v * 0.9), grey.point(lambda v: 90 + v * 0.3)])
    # Red ink on a blue ground of nearly its brightness (luminance 88 against 73): told apart by colour alone.
    paper = np.asarray(grey, dtype=np.float64)[..., None] / 255
    iso_luminant = np.round((1 - paper) * [200, 40, 40] + paper * [50, 60, 200]).astype(np.uint8)
    return {
        "inverted": ImageOps.invert(grey),
        "coloured": coloured,
        "red on blue of like brightness": Image.fromarray(iso_luminant),
        "coloured and inverted": ImageOps.invert(coloured),
        "half size": grey.resize((grey.width // 2, grey.height // 2), Image.Resampling.LANCZOS),
        "twice the size": grey.resize((grey.width * 2, grey.height * 2), Image.Resampling.BICUBIC),
        "loose crop": ImageOps.expand(grey, border=grey.height // 2, fill=int(np.median(np.asarray(grey)))),
        "wide side margins": ImageOps.expand(grey, border=(5 * grey.height, 0, 4 * grey.height, 0),
                                             fill=int(np.median(np.asarray(grey)))),
    }


def read(name: str, images: list, num_beams: int | None = None, **processor_settings) -> list[str]:
    """The model's readings of `images` (with its own decoding settings, or `num_beams` of them)."""
    from textrec.processing.inference import load_recognizer, recognize

    model, processor = load_recognizer(name)
    for setting, value in processor_settings.items():
        setattr(processor.image_processor, setting, value)
    decoding_settings = {} if num_beams is None else {"num_beams": num_beams}
    return recognize(model, processor, images, progress=False, **decoding_settings).texts


@pytest.fixture(scope="module")
def variant_lines():
    """Eight lines, about 200 characters: enough that three in a hundred is a rate, not one line's luck."""
    from textrec.processing.data import make_synthetic_lines

    lines = make_synthetic_lines(8, seed=321, augment=False, min_chars=15, max_chars=40)
    return [image.convert("L") for image in lines["image"]], list(lines["text"])


@pytest.fixture(scope="module")
def print_lines(variant_lines):
    """The first four of them (line i of a seed's stream is drawn alike however many are drawn)."""
    images, texts = variant_lines
    return images[:4], texts[:4]


@pytest.mark.parametrize("crop_margin", [None, 0.25])
def test_line_model_reads_every_variant_alike(variant_lines, crop_margin):
    """Inverting is undone exactly, so it reads identically, language model and all; colour, scale and margins change
    pixels, so what the network sees (its best path) may differ from the original's by three characters in a hundred
    (an O read as 0; the fourteenth `crnn-lines`, at half and twice the size cropped to its ink, reads 4 characters in
    196 otherwise: a faint apostrophe and a parenthesis of a random line as nothing, a hyphen as an en dash; on the
    first four lines alone that was 4 in 94, over the bound by one line's luck, hence eight). A crop with blank margins of several line heights left and right reads alike by default (they
    are cut to one ink height: `max_side_margin`; before, characters were made up in the blank); one loose on every
    side only where the processor crops to the ink (`crop_margin`). The character n-gram `crnn-lines` reads with is left out of the second comparison: on the
    engine's lines of random characters it weighs a faint apostrophe against a small change of pixels (at half size
    3 characters in 94 differ, 2 of them in `NCeLUR 0ah2aC'{ {)EMi*`); the real-data tables measure it."""
    from textrec.processing.metrics.error_rate import error_rate

    images, _ = variant_lines
    assert read("crnn-lines", [ImageOps.invert(image) for image in images], crop_margin=crop_margin) == read(
        "crnn-lines", images, crop_margin=crop_margin)
    expected = read("crnn-lines", images, num_beams=1, crop_margin=crop_margin)
    kinds = [kind for kind in variants(images[0]) if crop_margin is not None or kind != "loose crop"]
    assert "wide side margins" in kinds
    readings = {
        kind: read("crnn-lines", [variants(image)[kind] for image in images], num_beams=1, crop_margin=crop_margin)
        for kind in kinds
    }
    assert readings.pop("inverted") == expected
    characters = sum(len(text) for text in expected)
    differences = {kind: round(error_rate(texts, expected, "character") * characters) for kind, texts in readings.items()}
    assert max(differences.values()) <= max(3, characters // 30), (differences, characters)  # three in a hundred


def test_a_line_with_wide_blank_margins_reads_as_its_tight_crop():
    """A line cropped with blank on either side several times its height, or above and below it, reads as cropped
    tightly, language model and all (`crnn-lines` read `Hello world 123` in a 300-pixel-wide image as
    `Hello world 123-`, and with more blank `a Hello world 123-`, before `max_side_margin` cut such margins)."""
    texts = ["Hello world 123", "Total due: 45.10", "Chapter IV. The river"]
    tight, loose = [], []
    for text in texts:
        image = Image.new("L", (900, 40), 255)
        ImageDraw.Draw(image).text((250, 6), text, fill=0, font_size=24)
        left, _, right, _ = ink_box(np.asarray(image))
        tight.append(image.crop((left - 6, 0, right + 6, 40)))
        loose.append(image)
    readings = read("crnn-lines", tight)
    assert readings == read("crnn-lines", loose)
    tall = [ImageOps.expand(image, border=(0, 60, 0, 80), fill=255) for image in tight]  # blank of 1.5-2 line heights
    assert read("crnn-lines", tall) == readings  # read as `--—` before `max_vertical_margin`
    assert sum(reading == text for reading, text in zip(readings, texts)) >= 2


def test_digit_reader_reads_mnist_polarity():
    rows = [json.loads(line) for line in (FIXTURES / "mnist-13-digits" / "metadata.jsonl").read_text().splitlines()][:6]
    images = [Image.open(FIXTURES / "mnist-13-digits" / row["file_name"]).convert("L") for row in rows]
    expected = read("sharp-attention-digits", images)
    assert read("sharp-attention-digits", [ImageOps.invert(image) for image in images]) == expected
    assert sum(text == row["text"] for text, row in zip(expected, rows)) >= 5


def test_formula_reader_reads_either_polarity():
    from textrec.processing.data.synthetic_math import make_synthetic_formulas

    formulas = make_synthetic_formulas(4, seed=7, cache_dir=False)
    images = [image.convert("L") for image in formulas["image"]]
    expected = read("comer-math", images)
    assert read("comer-math", [ImageOps.invert(image) for image in images]) == expected



def typeset_formulas(count: int, scale: float, seed: int = 11) -> tuple[list[Image.Image], list[str]]:
    """`count` random formulas typeset by mathtext at `scale` times the resolution each was drawn with for
    training (black on white, as users have them), and their token strings."""
    from textrec.processing.data.synthetic_math import DPI_RANGE, MATH_FONTSETS, render_formula, sample_formula

    images, texts = [], []
    for index in range(count):
        rng = np.random.default_rng([seed, index])
        tokens = sample_formula(rng, 3, 48)
        fontset = MATH_FONTSETS[rng.integers(len(MATH_FONTSETS))]
        dpi = int(rng.integers(DPI_RANGE[0], DPI_RANGE[1] + 1))
        images.append(ImageOps.invert(render_formula(tokens, fontset, round(dpi * scale), 6)))
        texts.append(" ".join(tokens))
    return images, texts


def test_glyph_height_follows_the_typesetting_scale():
    ratios = []
    for scale in (0.5, 2.0):
        small, _ = typeset_formulas(12, 1.0)
        scaled, _ = typeset_formulas(12, scale)
        ratios.append(np.median([estimate_glyph_height(np.asarray(b)) / estimate_glyph_height(np.asarray(a))
                                 for a, b in zip(small, scaled)]) / scale)
    assert all(0.85 <= ratio <= 1.15 for ratio in ratios), ratios


def test_glyph_height_range_scales_only_glyphs_outside_it():
    processor = TextRecognitionImageProcessor(resize_mode="limits", max_height=512, max_width=2048, glyph_height_range=[10, 14])
    for scale, scaled in ((0.5, True), (1.0, False), (3.0, True)):
        for image in typeset_formulas(3, scale)[0]:
            glyphs = estimate_glyph_height(np.asarray(image))
            height = processor(image, return_tensors="np")["pixel_values"].shape[2]
            if scaled or not 10 <= glyphs <= 14:
                assert 9.5 <= glyphs * height / image.height <= 14.5, (scale, glyphs, height, image.height)
            else:
                assert height == image.height
    with pytest.raises(ValueError, match="glyph_height_range"):
        TextRecognitionImageProcessor(resize_mode="keep_aspect", glyph_height_range=[10, 14])


def test_formula_reader_reads_formulas_typeset_twice_as_large():
    """Without glyph normalisation `comer-math` read 45% of formulas typeset at twice its training scale exactly
    (91.7% at its own, 60 formulas); with it, it reads them about as at its own scale."""
    images, texts = typeset_formulas(12, 2.0)
    readings = read("comer-math", images)
    assert sum(reading == text for reading, text in zip(readings, texts)) >= 9


@pytest.mark.slow
def test_a_formula_reads_the_same_alone_and_in_a_batch():
    """Formulas are padded at the bottom as well as on the right, and no padding covers the DenseNet's reach over the
    rows: batched with formulas of other sizes, 10 of 180 read differently than alone. They share a batch only with
    formulas of their size, in `recognize()` and in the pipeline."""
    from transformers import pipeline

    from textrec.model_cards import released_model_path
    from textrec.processing.inference import load_recognizer, recognize

    images, _ = typeset_formulas(16, 0.5, seed=987654)
    model, processor = load_recognizer("comer-math")
    alone = recognize(model, processor, images, batch_size=1, progress=False).texts
    assert recognize(model, processor, images, batch_size=16, progress=False).texts == alone
    reader = pipeline("text-recognition", model=model, processor=processor)
    assert [item["generated_text"] for item in reader(images, batch_size=16)] == alone
    with_confidences = reader(images, batch_size=16, return_confidence=True)
    assert [item["generated_text"] for item in with_confidences] == alone
    assert [len(item["characters"]) for item in with_confidences] == [len(text.split()) for text in alone]


# A line model given several lines says so (it reads one line per image).


def test_text_line_count_of_one_and_of_stacked_lines(print_lines):
    from textrec.processing.image_processing_text_recognition import text_line_count

    images, _ = print_lines
    assert [text_line_count(np.asarray(image)) for image in images] == [1] * len(images)
    width = max(image.width for image in images)
    stacked = Image.new("L", (width, sum(image.height + 6 for image in images)), 255)
    top = 0
    for image in images:
        stacked.paste(image, (0, top))
        top += image.height + 6
    assert text_line_count(np.asarray(stacked)) == len(images)
    assert text_line_count(np.full((30, 90), 200, np.uint8)) == 0
    specks = np.full((40, 2000), 255, np.uint8)
    specks[20, 5] = specks[0, 0] = 0
    assert text_line_count(specks) == 0


def test_a_line_boxed_by_a_forms_rules_or_sloping_is_one_line(print_lines):
    """A field cut from a form with the rules of its box above and below holds one line, at its own size and at a
    form's 20 pixels (where the rules outweigh the glyphs' thin strokes, which counted as 3 lines before the rules were
    left out: FUNSD's development form lines were warned of as several lines 109 times in 1,242, now 29), and so
    does a line that climbs."""
    from textrec.processing.image_processing_text_recognition import text_line_count

    images, _ = print_lines
    for image in images:
        boxed = Image.new("L", (image.width, image.height + 8), 255)
        boxed.paste(image, (0, 4))
        lines = np.asarray(boxed).copy()
        lines[:3] = lines[-3:] = 0  # the box's rules, across the crop
        assert text_line_count(lines) == 1
        small = boxed.resize((max(1, boxed.width * 20 // boxed.height), 20))
        lines = np.asarray(small).copy()
        lines[:2] = lines[-2:] = 0
        assert text_line_count(lines) == 1
        sloping = image.rotate(6, expand=True, fillcolor=255)
        assert text_line_count(np.asarray(sloping)) == 1



def test_a_colon_or_a_digit_alone_is_neither_lines_nor_a_line_on_its_side():
    """A colon cut from a receipt (two dots, one above the other, taller than wide) was told it was a line of text
    turned on its side; a glyph or two is not lines (`MIN_PIECES_FOR_LINES`)."""
    from textrec.processing.inference import load_recognizer

    _, processor = load_recognizer("crnn-lines")
    for character, size in ((":", (30, 64)), (":", (28, 35)), ("3", (44, 44))):
        image = Image.new("L", size, 255)
        ImageDraw.Draw(image).text((size[0] // 2, size[1] // 2), character, fill=0, anchor="mm",
                                   font=ImageFont.load_default(size=int(size[1] * 0.9)))
        assert processor.image_processor.size_warning(image.width, image.height, image) is None, character

def two_column_page_on_dark_ground(images: list) -> Image.Image:
    """A page of two columns of `images` (twelve lines each), the second set half a line lower (so that the page's
    rows blur its lines together), photographed on a dark ground."""
    line_height = max(image.height for image in images) + 6
    column_width = max(image.width for image in images)
    page = Image.new("L", (2 * column_width + 60, 13 * line_height), 255)
    for row in range(12):
        page.paste(images[row % len(images)], (20, row * line_height))
        page.paste(images[(row + 1) % len(images)], (column_width + 40, row * line_height + line_height // 2))
    ground = Image.new("L", (page.width + 160, page.height + 160), 40)
    ground.paste(page, (80, 80))
    return ground


def test_a_page_on_a_dark_ground_given_to_a_line_model_is_warned_of(print_lines):
    """Of the 105 real pages of the pages benchmark given to `crnn-lines` as one line, 33 were warned of as several
    lines before: columns whose lines do not align blur the page's row profile into one band (counted now in
    strips a few words wide too), a receipt's ink is under 2% of its photograph, and a page on a dark ground passed
    for light text on dark (counted now in the other polarity too); now all 105 are."""
    from textrec.processing.inference import load_recognizer

    images, _ = print_lines
    page = two_column_page_on_dark_ground(images)
    _, processor = load_recognizer("crnn-lines")
    for image in (page, page.crop((80, 80, page.width - 80, page.height - 80))):  # on its ground, and cut from it
        warning = processor.image_processor.size_warning(image.width, image.height, image)
        assert warning is not None and "lines of text" in warning, warning



@pytest.mark.parametrize("grey", [255, 30])
def test_a_blank_image_is_said_to_hold_no_text(print_lines, grey, caplog):
    """A blank scan or an empty crop read "I" or "a" without a word before; now it warns, naming the image, and reads
    nothing. A real line does not warn (the least contrast on the real line sets is 17 grey levels, a scene word's)."""
    from textrec.processing.inference import load_recognizer, recognize

    images, _ = print_lines
    blank = np.full((60, 400), grey, np.uint8)
    blank[::7, ::11] = grey + 3 if grey < 128 else grey - 3  # a scanner's noise
    model, processor = load_recognizer("crnn-lines")
    with caplog.at_level("WARNING"):
        result = recognize(model, processor, [images[0], Image.fromarray(blank)], progress=False)
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 1 and "image 2 of 2" in warnings[0] and "it looks blank" in warnings[0], warnings
    assert result.texts[0] and result.texts[1] == ""  # read by its n-gram beam search, it made up "I" or "1" before

def test_reading_several_lines_as_one_warns(print_lines, caplog):
    from textrec.processing.inference import load_recognizer, recognize

    images, _ = print_lines
    stacked = Image.new("L", (max(image.width for image in images), images[0].height + images[1].height + 8), 255)
    stacked.paste(images[0], (0, 0))
    stacked.paste(images[1], (0, images[0].height + 8))
    model, processor = load_recognizer("crnn-lines")
    with caplog.at_level("WARNING"):
        recognize(model, processor, [images[2], stacked], progress=False)
    warnings = [record.getMessage() for record in caplog.records if "lines of text" in record.getMessage()]
    assert len(warnings) == 1 and "image 2 of 2" in warnings[0] and "2 lines of text" in warnings[0]


def test_the_processor_called_directly_warns_of_a_page_and_a_tiny_image(print_lines, caplog):
    """README's `generate()` snippet calls the processor itself: it warns there too, once per image (and
    `recognize()` above, which names the file itself, asks it not to)."""
    from textrec.processing.inference import load_recognizer

    images, _ = print_lines
    stacked = Image.new("L", (max(image.width for image in images), images[0].height + images[1].height + 8), 255)
    stacked.paste(images[0], (0, 0))
    stacked.paste(images[1], (0, images[0].height + 8))
    _, processor = load_recognizer("crnn-lines")
    with caplog.at_level("WARNING"):
        processor(images=[images[2], stacked, Image.new("L", (1, 1), 0)], return_tensors="pt")
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 2, warnings
    assert "image at index 1" in warnings[0] and "2 lines of text" in warnings[0]
    assert "image at index 2" in warnings[1] and "tiny image" in warnings[1]
    caplog.clear()
    with caplog.at_level("WARNING"):
        processor(images=[stacked], return_tensors="pt", warn_images_out_of_range=False)
    assert caplog.records == []


@pytest.mark.parametrize("name", ["crnn-lines", "self-attention-lines"])
def test_a_line_reads_the_same_alone_and_in_a_batch(print_lines, name):
    """Every image ends in padding (`min_right_padding`), the widest of a batch and one read alone included:
    without it 16 and 26 of 160 real receipt lines read differently alone and in batches of 32."""
    from textrec.processing.inference import load_recognizer, recognize

    images, _ = print_lines
    model, processor = load_recognizer(name)
    cut = [image.crop((0, 0, image.width * (index + 2) // 8, image.height)) for index, image in enumerate(images * 2)]
    batched = recognize(model, processor, cut, batch_size=len(cut), progress=False).texts
    alone = recognize(model, processor, cut, batch_size=1, progress=False).texts
    assert alone == batched


@pytest.mark.parametrize(
    "name", ["crnn-lines", "crnn-handwriting", "self-attention-lines", "resnet-transformer-lines", "trocr-lines"]
)
def test_padding_past_min_right_padding_leaves_a_lines_logits_unchanged(name):
    """The released line readers' `min_right_padding` covers their convolutions' reach: a line padded to the end of
    a batch 80 columns wider gives the logits it gives alone, on every frame it reads (CRNN's VGG reaches 23 columns
    past its last column read; 16 columns of padding moved them by up to 0.6 nats)."""
    import torch

    from textrec.processing.inference import load_recognizer

    model, processor = load_recognizer(name)
    noise = np.random.default_rng(0).integers(0, 256, (32, 203), np.uint8)
    wide = np.full((32, 283), 255, np.uint8)
    alone = processor.image_processor([noise], return_tensors="pt")
    batch = processor.image_processor([noise, wide], return_tensors="pt")
    assert batch["pixel_values"].shape[-1] > alone["pixel_values"].shape[-1]
    with torch.no_grad():  # every line reader has a CTC head, whose logits come with what it reads
        read_alone = model.ctc_decode(**alone, return_dict_in_generate=True)
        read_batch = model.ctc_decode(**batch, return_dict_in_generate=True)
    frames = int(read_alone.attention_mask[0].sum())
    assert frames > 40 and read_batch.attention_mask[0].sum() == frames
    logits_alone, logits_batch = read_alone.logits[0, :frames], read_batch.logits[0, :frames]
    torch.testing.assert_close(logits_batch, logits_alone, atol=1e-4, rtol=0)


# Slant: leaning handwriting sheared upright (`deslant`).


def strokes(lean: float, width=240, height=48, paper=230, ink=30) -> Image.Image:
    """Vertical strokes 3 pixels wide every 12 columns, over the middle two thirds of the rows, leaning by `lean`
    (columns moved right per row of height, upwards): a line of handwriting's downstrokes."""
    values = np.full((height, width), paper, np.uint8)
    for row in range(height // 6, height - height // 6):
        shift = round(lean * (height / 2 - row))
        for start in range(40, width - 40, 12):
            values[row, start + shift:start + shift + 3] = ink
    return Image.fromarray(values)


def slant_of(image: Image.Image) -> float:
    from textrec.processing.image_processing_text_recognition import otsu_threshold
    from textrec.processing.slant_correction import estimate_slant

    luminance = np.asarray(image)
    return estimate_slant(luminance, otsu_threshold(luminance))


@pytest.mark.parametrize("lean", [-0.5, 0.0, 0.4, 0.8])
def test_estimate_slant_measures_the_strokes_lean(lean):
    assert slant_of(strokes(lean)) == pytest.approx(lean, abs=0.06)


def test_a_blank_image_has_no_slant():
    assert slant_of(Image.new("L", (90, 30), 200)) == 0.0


def test_ink_too_thin_to_measure_has_no_slant_and_deslant_keeps_the_image():
    # Hairlines in a tall image: contrast enough, but no ink left once reduced to the rows slant is measured at.
    values = np.full((400, 300), 230, np.uint8)
    values[10:400:20, 20:280] = 20
    image = Image.fromarray(values)
    assert slant_of(image) == 0.0
    assert normalize_capture(image, deslant=True).size[1] == 400


@pytest.mark.parametrize("lean", [-0.5, 0.8])
def test_deslant_stands_the_strokes_upright_without_cutting_them(lean):
    leaning = strokes(lean)
    upright = normalize_capture(leaning, deslant=True)
    assert abs(slant_of(upright)) <= 0.06
    assert upright.width == leaning.width + np.ceil(abs(slant_of(leaning)) * leaning.height)
    ink = np.asarray(upright) < 128
    assert ink.sum() == pytest.approx((np.asarray(strokes(lean)) < 128).sum(), rel=0.05)
    assert upright.getpixel((0, 0)) == 230 and upright.getpixel((upright.width - 1, upright.height - 1)) == 230


def test_deslant_leaves_upright_strokes_and_rgb_mode_alone():
    upright = strokes(0.0)
    assert np.array_equal(np.asarray(normalize_capture(upright, deslant=True)), np.asarray(upright))
    rgb = normalize_capture(strokes(0.6).convert("RGB"), deslant=True)
    assert rgb.mode == "RGB" and rgb.getpixel((0, 0)) == (230, 230, 230)


def test_deslant_reads_light_handwriting_on_dark_as_dark_on_light():
    leaning = strokes(0.6)
    assert np.array_equal(np.asarray(normalize_capture(ImageOps.invert(leaning), deslant=True)),
                          np.asarray(normalize_capture(leaning, deslant=True)))


@pytest.mark.parametrize("colour", [0, 128, 255])
@pytest.mark.parametrize("mode", ["L", "RGB"])
def test_an_image_of_one_colour_passes_every_normalisation_unchanged(colour, mode):
    plain = Image.new(mode, (60, 20), colour if mode == "L" else (colour,) * 3)
    assert np.array_equal(np.asarray(normalize_capture(plain, crop_margin=0.2, deslant=True)), np.asarray(plain))


def test_grey_percentiles_of_an_8_bit_image_are_numpys():
    """`grey_percentiles` counts the percentiles the image processor asks for from an 8-bit image's histogram: the
    values `np.percentile` gives (its linear interpolation), on images of one grey, a few greys and all of them."""
    from textrec.processing.luminance import grey_percentiles

    generator = np.random.default_rng(0)
    images = [generator.integers(0, 256, (31, 97), dtype=np.uint8), np.full((5, 7), 200, np.uint8),
              generator.choice(np.array([0, 17, 255], np.uint8), (40, 300), p=[0.01, 0.04, 0.95]),
              np.array([[3]], np.uint8)]
    for image in images:
        for percentiles in ((0.5, 99.5), (1, 99), (5,), (60,), (0, 100), (50,)):
            assert np.array_equal(grey_percentiles(image, percentiles), np.percentile(image, percentiles))
    floats = generator.random((4, 6))
    assert np.array_equal(grey_percentiles(floats, (10, 90)), np.percentile(floats, (10, 90)))


def test_a_long_line_reads_as_its_parts_and_a_squeezed_one_warns(print_lines, caplog):
    """A line much longer than the model's training lines (the engine's lines set side by side, several thousand
    pixels at its height) is read unsqueezed by the released line models (`max_width` 4096: squeezed into 1,024 it read
    as junk with no warning), as its parts are read one by one; a processor that would squeeze a line more than
    `MAX_LINE_SQUEEZE` times says so."""
    from textrec.processing.image_processing_text_recognition import MAX_LINE_SQUEEZE
    from textrec.processing.inference import load_recognizer, recognize
    from textrec.processing.metrics.error_rate import error_rate

    images, _ = print_lines
    height = 48
    parts = [image.convert("L").resize((round(image.width * height / image.height), height)) for image in images] * 2
    long_line = Image.new("L", (sum(part.width for part in parts) + 30 * len(parts), height), 255)
    left = 0
    for part in parts:
        long_line.paste(part, (left, 0))
        left += part.width + 30
    model, processor = load_recognizer("crnn-lines")
    assert processor.image_processor.max_width >= 4096 > long_line.width * 32 / height > 2 * 1024
    one_by_one = " ".join(recognize(model, processor, parts, progress=False).texts)
    with caplog.at_level("WARNING"):
        whole = recognize(model, processor, [long_line], progress=False).texts[0]
    assert not caplog.records
    assert error_rate([whole], [one_by_one], "character") < 0.05, (whole, one_by_one)
    processor.image_processor.max_width = 1024
    try:
        warning = processor.image_processor.size_warning(long_line.width, long_line.height, long_line)
    finally:
        processor.image_processor.max_width = 4096
    assert warning and "squeezed" in warning and float(warning.split("squeezed ")[1].split(" ")[0]) > MAX_LINE_SQUEEZE


def test_a_line_in_a_large_blank_image_reads_as_cropped_and_a_noisy_blank_scan_stays_blank(print_lines, caplog):
    """A line whose ink is under 0.5% of its image (a word in a blank of 20 times its size) was taken for blank (its
    darkest pixels by `CONTRAST_PERCENTILES` the paper's): it warned "it looks blank" and read junk. It reads as the line
    cropped to it does (`sparse_ink_contrast`; but for a faint mark); a blank scan with a scanner's grain still warns blank."""
    from textrec.processing.inference import load_recognizer, recognize
    from textrec.processing.luminance import sparse_ink_contrast
    from textrec.processing.metrics.error_rate import error_rate

    images, _ = print_lines
    line = images[0].convert("L")
    canvas = Image.new("L", (line.width * 5, line.height * 20), int(np.percentile(np.asarray(line), 90)))
    canvas.paste(line, (line.width * 2, line.height * 10))
    ink = np.asarray(canvas) < 128
    assert ink.mean() < 0.005  # under the processor's percentiles
    grain = np.clip(np.random.default_rng(0).normal(225, 2, (600, 1600)), 0, 255).astype(np.uint8)
    assert sparse_ink_contrast(grain) < 12
    model, processor = load_recognizer("crnn-lines")
    with caplog.at_level("WARNING"):
        texts = recognize(model, processor, [line, canvas, Image.fromarray(grain)], progress=False).texts
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 1 and "image 3 of 3" in warnings[0] and "it looks blank" in warnings[0], warnings
    # junk reads at about 100%; a faint apostrophe and the n-gram's space beside it may go (2 of the first line's 20)
    assert error_rate([texts[1]], [texts[0]], "character") <= 0.1 and texts[2] == "", texts


def test_a_short_line_under_a_long_one_is_two_lines(print_lines, caplog):
    """A heading's long line with a short one under it (`Page 1`): the short line's rows hold under 15% of the long
    one's ink, which a row needed to count, so the image was one line, read squeezed into junk in both modes.
    Line mode now warns of two lines, and the page reader reads it as a page: both lines."""
    from textrec.processing.inference import load_recognizer, recognize
    from textrec.processing.page_reading import is_line_image, load_line_detector, read_page

    images, _ = print_lines
    long_line = Image.new("L", (sum(image.width for image in images) + 60, images[0].height), 255)
    left = 0
    for image in images:
        long_line.paste(image.convert("L"), (left, 0))
        left += image.width + 20
    short = images[1].convert("L").crop((0, 0, long_line.width // 16, images[1].height))
    both = Image.new("L", (long_line.width + 40, long_line.height * 2 + short.height + 40), 255)
    both.paste(long_line, (20, 20))
    both.paste(short, (20, 20 + long_line.height * 2))
    luminance = np.asarray(both)
    rows = (luminance < 128).sum(axis=1)
    assert rows[20 + long_line.height * 2:].max() < 0.15 * rows.max()
    assert not is_line_image(both)
    model, processor = load_recognizer("crnn-lines")
    with caplog.at_level("WARNING"):
        recognize(model, processor, [both], progress=False)
    assert any("2 lines of text" in record.getMessage() for record in caplog.records)
    page = read_page(both, (model, processor), load_line_detector("line-detector"))
    assert len(page.lines) == 2, page.text
