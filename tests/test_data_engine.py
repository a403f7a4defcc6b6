"""The data engine (`look="captured"`): scanner and camera effects, scene composites, and the real sets that
measure what it is for."""

import re

import numpy as np
import pytest
from PIL import Image, ImageDraw

from textrec.processing.data.capture_effects import SCAN_EFFECTS, scan_effects, scene_composite
from textrec.processing.image_processing_text_recognition import has_light_text


def dark_line() -> Image.Image:
    image = Image.new("L", (160, 32), 240)
    ImageDraw.Draw(image).text((6, 6), "Invoice 42.00", fill=15, font_size=20)
    return image


@pytest.mark.parametrize("name", list(SCAN_EFFECTS))
def test_each_scan_effect_keeps_size_and_mode_and_is_seeded(name):
    image = dark_line()
    first = SCAN_EFFECTS[name](image, np.random.default_rng(3))
    second = SCAN_EFFECTS[name](image, np.random.default_rng(3))
    assert (first.size, first.mode) == (image.size, "L")
    assert np.array_equal(np.asarray(first), np.asarray(second))


def test_scan_effects_turn_some_lines_light_on_dark():
    light = sum(has_light_text(np.asarray(scan_effects(dark_line(), np.random.default_rng(seed)))) for seed in range(60))
    assert 2 <= light <= 20  # INVERTED_PROBABILITY 0.15 of 60


def test_scene_composites_keep_the_text_readable_in_either_polarity():
    polarities = []
    for seed in range(30):
        composite = scene_composite(dark_line(), np.random.default_rng(seed))
        assert (composite.size, composite.mode) == ((160, 32), "L")
        values = np.asarray(composite, dtype=np.float32)
        assert np.percentile(values, 98) - np.percentile(values, 2) > 40  # the text stands out
        polarities.append(has_light_text(values.astype(np.uint8)))
    assert 5 <= sum(polarities) <= 25


def test_captured_lines_are_deterministic_and_differ_from_clean():
    from textrec.processing.data import make_synthetic_lines

    captured = make_synthetic_lines(6, seed=11, look="captured", cache_dir=False)
    again = make_synthetic_lines(6, seed=11, look="captured", cache_dir=False)
    clean = make_synthetic_lines(6, seed=11, cache_dir=False)
    assert list(captured["text"]) == list(again["text"])
    assert all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(captured["image"], again["image"]))
    assert any(np.asarray(a).shape != np.asarray(b).shape or not np.array_equal(np.asarray(a), np.asarray(b))
               for a, b in zip(captured["image"], clean["image"]))


def test_unknown_look_is_refused():
    from textrec.processing.data import make_synthetic_lines

    with pytest.raises(ValueError, match="look must be one of"):
        make_synthetic_lines(2, look="photo", cache_dir=False)


def test_the_engine_levers_change_what_they_name():
    """The ablation's levers: no scanner effects and no scene composites leave the captured crops only; a font
    subset draws from that many fonts."""
    from textrec.processing.data import make_synthetic_lines

    default = make_synthetic_lines(12, seed=5, look="captured", cache_dir=False)
    plain = make_synthetic_lines(12, seed=5, look="captured", scene_share=0.0, scan_effects=False, cache_dir=False)
    assert default["text"] == plain["text"] and default["font"] == plain["font"]
    assert sum(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(default["image"], plain["image"])) < 12
    few = make_synthetic_lines(30, seed=5, look="captured", max_fonts=2, cache_dir=False)
    assert 1 <= len(set(few["font"])) <= 2
    with pytest.raises(ValueError, match="scene_share"):
        make_synthetic_lines(2, look="captured", scene_share=1.5, cache_dir=False)


def test_small_capitals_are_drawn_smaller_than_capitals_and_labelled_as_capitals():
    """`small_caps_share`: a line's lower-case letters drawn as capitals `scale` times as high, on the baseline, and read
    as capitals (as forms and headings set in small capitals are transcribed); the other lines stay as they were."""
    from textrec.processing.data import make_synthetic_lines
    from textrec.processing.data.synthetic_lines import draw_small_caps, small_caps_label
    from PIL import ImageFont

    assert small_caps_label("Center for Indoor Air, 1986") == "CENTER FOR INDOOR AIR, 1986"
    face = ImageFont.load_default(size=60)
    canvas = Image.new("L", (400, 120), 255)
    draw_small_caps(ImageDraw.Draw(canvas), (10, 100), "Hhh", face, 0, scale=0.7)
    ink = np.asarray(canvas) < 128
    capital, small = ink[:, : 10 + round(face.getlength("H"))], ink[:, 10 + round(face.getlength("H")) :]
    rows = lambda part: np.flatnonzero(part.any(axis=1))  # noqa: E731
    assert rows(capital)[-1] == rows(small)[-1]  # one baseline
    assert abs((np.ptp(rows(small)) + 1) / (np.ptp(rows(capital)) + 1) - 0.7) < 0.06
    default = make_synthetic_lines(40, seed=5, look="captured", cache_dir=False)
    small_caps = make_synthetic_lines(40, seed=5, look="captured", small_caps_share=1.0, cache_dir=False)
    assert not any(re.search("[a-z]", text) for text in small_caps["text"])
    assert [text.upper() for text in default["text"]] == [text.upper() for text in small_caps["text"]]
    assert sum(a != b for a, b in zip(default["text"], small_caps["text"])) > 10
    assert make_synthetic_lines(12, seed=5, look="captured", small_caps_share=0.0, cache_dir=False)["text"] == \
        make_synthetic_lines(12, seed=5, look="captured", cache_dir=False)["text"]
    with pytest.raises(ValueError, match="small_caps_share"):
        make_synthetic_lines(2, look="captured", small_caps_share=2.0, cache_dir=False)


def test_book_marks_set_footnotes_page_numbers_dashes_and_quotes_where_the_face_has_them():
    """`book_marks_share`: a line gets one of a book page's marks, in its label as drawn; a face without the dagger
    gets none of its marks; lines without the lever stay as they were."""
    from textrec.processing.data import make_synthetic_lines
    from textrec.processing.data.book_marks import BOOK_MARK_CHARACTERS, FOOTNOTE_MARKS, with_book_marks

    everything = lambda characters: True  # noqa: E731
    ascii_only = lambda characters: all(ord(character) < 128 for character in characters)  # noqa: E731
    rng = np.random.default_rng(0)
    marked = [with_book_marks("Der Senn hat es gesagt.", rng, everything, quotes=("„", "“")) for _ in range(400)]
    assert any(re.fullmatch(r"[*†‡]+\)? Der Senn hat es gesagt\.", line) for line in marked)  # a footnote
    assert any(re.search(r"\w[*†‡]+\)?[ .]", line) and not line[0] in "*†‡" for line in marked)  # a reference
    assert any(re.fullmatch(r"\W*\d+\W*", line) for line in marked)  # a page number
    assert any(" – " in line for line in marked) and any(line.startswith("„") for line in marked)
    assert all(line.replace(" – ", " ").replace("„", "").replace("“", "").strip("*†‡) ") for line in marked)
    plain = [with_book_marks("Der Senn hat es gesagt.", rng, ascii_only) for _ in range(200)]
    assert not any(set(line) & set(BOOK_MARK_CHARACTERS + "„“—") for line in plain)
    assert any(mark in line for line in plain for mark in FOOTNOTE_MARKS if ascii_only(mark))
    lines = make_synthetic_lines(30, seed=5, look="captured", book_marks_share=1.0, cache_dir=False)
    default = make_synthetic_lines(30, seed=5, look="captured", cache_dir=False)
    assert sum(a != b for a, b in zip(lines["text"], default["text"])) > 15
    assert any(set(text) & set(BOOK_MARK_CHARACTERS) for text in lines["text"])
    assert make_synthetic_lines(12, seed=5, look="captured", book_marks_share=0.0, cache_dir=False)["text"] == \
        default["text"][:12]
    with pytest.raises(ValueError, match="book_marks_share"):
        make_synthetic_lines(2, look="captured", book_marks_share=-0.1, cache_dir=False)


def test_page_numbers_between_dashes_are_drawn_spread_and_labelled_with_one_space():
    """`page_number_spaces`: books set a page number's dashes up to two heights from it (`—   170   —`); the engine
    draws them so, the label keeps one space, and any other line is drawn as labelled."""
    from textrec.processing.data.book_marks import spaced_page_number

    rng = np.random.default_rng(0)
    drawn = [spaced_page_number("— 170 —", rng, 7) for _ in range(200)]
    assert {len(re.fullmatch(r"—( +)170( +)—", line)[1]) for line in drawn} == set(range(1, 8))
    assert all(re.fullmatch(r"—( +)170\1—", line) for line in drawn)  # one count both sides
    assert spaced_page_number("— 170 —", rng, 1) == "— 170 —"
    for label in ("Seite 170 und", "170", "(170)", "- 12 - 13 -"):
        assert spaced_page_number(label, rng, 7) == label
    with pytest.raises(ValueError, match="page_number_spaces"):
        from textrec.processing.data import make_synthetic_lines
        make_synthetic_lines(2, look="captured", page_number_spaces=0, cache_dir=False)


def test_loose_crops_hold_blank_above_and_below_the_line_and_leave_other_lines_as_they_were():
    """`loose_crop_share`: lines made to look scanned are cut with blank of about one to two font sizes above and
    below (the text fills less of the image than in a tight crop); without the lever nothing changes."""
    from textrec.processing.data import make_synthetic_lines
    from textrec.processing.image_processing_text_recognition import ink_box

    def ink_height_shares(dataset):
        shares = []
        for image in dataset["image"]:
            luminance = np.asarray(image.convert("L"))
            box = ink_box(255 - luminance if has_light_text(luminance) else luminance)
            if box is not None:
                shares.append((box[3] - box[1]) / luminance.shape[0])
        return np.median(shares)

    loose = make_synthetic_lines(40, seed=5, look="captured", scene_share=0.0, loose_crop_share=1.0, cache_dir=False)
    default = make_synthetic_lines(40, seed=5, look="captured", scene_share=0.0, cache_dir=False)
    assert loose["text"] == default["text"]
    assert ink_height_shares(loose) < 0.4 < 0.55 < ink_height_shares(default)
    assert make_synthetic_lines(12, seed=5, look="captured", scene_share=0.0, loose_crop_share=0.0,
                                cache_dir=False)["text"] == default["text"][:12]
    with pytest.raises(ValueError, match="loose_crop_share"):
        make_synthetic_lines(2, look="captured", loose_crop_share=1.5, cache_dir=False)


def test_dot_matrix_print_draws_the_glyphs_as_dots_where_they_were():
    """`dot_matrix`: a solid bar comes out as dots where the bar was (dark, the paper around it as it was), dots of
    uneven strength that in most draws stand apart with paper between them; seeded; a blank image is left alone."""
    from textrec.processing.data.capture_effects import dot_matrix

    image = Image.new("L", (240, 80), 230)
    ImageDraw.Draw(image).rectangle([40, 30, 199, 49], fill=30)
    apart = 0
    for seed in range(8):
        printed = np.asarray(dot_matrix(image, np.random.default_rng(seed), font_size=60), dtype=np.float32)
        bar = printed[32:48, 42:198]
        assert printed.shape == (80, 240)
        assert bar.mean() < 130 and printed[:18].min() >= 229 and printed[:, :28].min() >= 229
        assert bar.std() > 5  # dots, not the solid bar
        apart += (bar > 180).mean() > 0.05
    assert apart >= 3
    again = dot_matrix(image, np.random.default_rng(3), font_size=60)
    assert np.array_equal(np.asarray(again), np.asarray(dot_matrix(image, np.random.default_rng(3), font_size=60)))
    blank = Image.new("L", (50, 20), 200)
    assert dot_matrix(blank, np.random.default_rng(0), font_size=20) is blank


def test_the_scanner_thins_and_fades_fine_strokes_and_dots_but_never_wipes_them():
    """Ink erosion goes part of the way to a 3-px maximum filter, so a 1-px stroke or a small printer's dot fades
    instead of vanishing (a line whose ink is gone would be labelled with text it lacks); bleed thickens; a line at
    `LOW_RESOLUTION_MIN_HEIGHT` pixels is not shrunk further."""
    from textrec.processing.data.capture_effects import LOW_RESOLUTION_MIN_HEIGHT, ink_spread, low_resolution

    image = Image.new("L", (120, 30), 230)
    draw = ImageDraw.Draw(image)
    for x in range(10, 110, 12):
        draw.line([(x, 6), (x, 23)], fill=30)  # 1-px strokes
        draw.ellipse([x + 4, 13, x + 5, 14], fill=30)  # 2-px dots
    ink = (230 - np.asarray(image, dtype=np.float32)).sum()
    thinned = 0
    for seed in range(30):
        spread = np.asarray(ink_spread(image, np.random.default_rng(seed)), dtype=np.float32)
        kept = (230 - spread).sum() / ink
        assert kept >= 0.25, f"seed {seed}: the strokes kept {kept:.0%} of their ink"
        thinned += kept < 0.8
    assert thinned >= 5  # erosion drawn in some seeds: the strokes fade
    low = Image.fromarray(np.asarray(image)[:LOW_RESOLUTION_MIN_HEIGHT])
    for seed in range(10):
        assert low_resolution(low, np.random.default_rng(seed)).tobytes() == low.tobytes()


def test_small_dot_matrix_lines_keep_their_ink_through_the_scanner():
    """Every dotted line of the engine at its smallest font size still shows its text after the scanner effects:
    ink standing out from its paper (in either polarity) across most of its width, and not faded to the paper's
    grey."""
    from PIL import ImageFont

    from textrec.processing.data.fonts import list_fonts
    from textrec.processing.data.synthetic_lines import FONT_SIZES, render_line

    fonts = [ImageFont.truetype(str(path), FONT_SIZES[0]) for path in list_fonts("print")[:8]]
    if not fonts:
        fonts = [ImageFont.load_default(size=FONT_SIZES[0])]
    rng = np.random.default_rng(0)
    for index in range(80):
        line = render_line("Total 12.50 Cash 20.00", fonts[index % len(fonts)], rng, look="captured",
                           scene_share=0.0, dot_matrix_print=True)
        contrast = np.abs(np.asarray(line, dtype=np.float32) - np.median(np.asarray(line)))
        inked_columns = (contrast > max(20, np.percentile(contrast, 99.5) / 2)).any(axis=0).mean()
        assert inked_columns > 0.45, f"line {index} (font {index % len(fonts)}): ink in {inked_columns:.0%} of columns"
        assert np.percentile(contrast, 95) > 30, f"line {index} (font {index % len(fonts)}): its ink faded to paper"


def test_dot_matrix_lines_are_drawn_only_when_asked_and_labelled_as_the_others():
    """`dot_matrix_share` changes how modern lines are drawn, never their labels; at 0 the engine's lines stay as
    they were."""
    from textrec.processing.data import make_synthetic_lines

    arguments = dict(seed=4, max_chars=30, look="captured", scene_share=0.0, cache_dir=False)
    dotted = make_synthetic_lines(8, dot_matrix_share=1.0, **arguments)
    default = make_synthetic_lines(8, **arguments)
    assert dotted["text"] == default["text"]
    assert sum(a.tobytes() != b.tobytes() for a, b in zip(dotted["image"], default["image"])) >= 6
    assert [image.tobytes() for image in make_synthetic_lines(8, dot_matrix_share=0.0, **arguments)["image"]] == \
        [image.tobytes() for image in default["image"]]
    with pytest.raises(ValueError, match="dot_matrix_share"):
        make_synthetic_lines(2, look="captured", dot_matrix_share=1.5, cache_dir=False)


def test_double_width_dot_print_is_drawn_wider_with_its_dot_columns_apart_only_when_asked():
    """`double_width_share` prints dotted lines as a receipt printer's double-width mode prints totals: the same line
    drawn twice as wide (its dot columns twice as far apart); labelled as the others; at 0 the dotted lines stay as
    they were."""
    from textrec.processing.data import make_synthetic_lines
    from textrec.processing.data.synthetic_lines import _load_font, render_line

    font = _load_font(None, 36)
    single, double = (render_line("TOTAL 16.00", font, np.random.default_rng(0), augment=False, look="clean",
                                  dot_matrix_print=True, double_width=double_width) for double_width in (False, True))
    assert abs(double.height - single.height) <= 2 and double.width > 1.6 * single.width  # the margins stay as wide
    arguments = dict(seed=4, max_chars=30, look="captured", scene_share=0.0, dot_matrix_share=1.0, cache_dir=False)
    single = make_synthetic_lines(6, **arguments)
    assert make_synthetic_lines(6, double_width_share=1.0, **arguments)["text"] == single["text"]
    assert [image.tobytes() for image in make_synthetic_lines(6, double_width_share=0.0, **arguments)["image"]] == \
        [image.tobytes() for image in single["image"]]
    with pytest.raises(ValueError, match="double_width_share"):
        make_synthetic_lines(2, look="captured", double_width_share=2.0, cache_dir=False)


def test_width_scale_condenses_and_extends_the_line_and_only_its_width():
    """`render_line(width_scale=...)` draws the same line narrower or wider at the same height; the engine scales
    lines only where asked (`width_scale_share`), labelled as the others."""
    from PIL import ImageFont

    from textrec.processing.data import make_synthetic_lines
    from textrec.processing.data.fonts import list_fonts
    from textrec.processing.data.synthetic_lines import render_line

    paths = list_fonts("print")[:1]
    font = ImageFont.truetype(str(paths[0]), 32) if paths else ImageFont.load_default(size=32)
    text = "Total incl. GST 6% RM 42.90 CHANGE"
    sizes = {scale: render_line(text, font, np.random.default_rng(1), augment=False, width_scale=scale).size
             for scale in (0.75, 1.0, 1.3)}
    assert sizes[0.75][1] == sizes[1.0][1] == sizes[1.3][1]
    assert sizes[0.75][0] < 0.82 * sizes[1.0][0] and sizes[1.3][0] > 1.2 * sizes[1.0][0]
    arguments = dict(seed=6, max_chars=30, look="captured", scene_share=0.0, cache_dir=False)
    scaled = make_synthetic_lines(8, width_scale_share=1.0, **arguments)
    default = make_synthetic_lines(8, **arguments)
    assert scaled["text"] == default["text"]
    assert [image.tobytes() for image in make_synthetic_lines(8, width_scale_share=0.0, **arguments)["image"]] == \
        [image.tobytes() for image in default["image"]]
    with pytest.raises(ValueError, match="width_scale_share"):
        make_synthetic_lines(2, look="captured", width_scale_share=-0.1, cache_dir=False)


def test_clipped_crops_cut_through_the_descenders_or_ascenders():
    """`render_line(clipped=True)`: the crop's edge runs through the glyphs (ink in its first or last row, as in a
    receipt box drawn to the baseline), where the engine's other crops mostly keep a margin; `clipped_crop_share`
    draws it only where asked, labels unchanged."""
    from PIL import ImageFont

    from textrec.processing.data import make_synthetic_lines
    from textrec.processing.data.fonts import list_fonts
    from textrec.processing.data.synthetic_lines import render_line
    from textrec.processing.image_processing_text_recognition import otsu_threshold

    paths = list_fonts("print")[:4] or [None]
    fonts = [ImageFont.truetype(str(path), 30) if path else ImageFont.load_default(size=30) for path in paths]

    def edge_inked(clipped: bool) -> float:
        rng, inked = np.random.default_rng(2), 0
        for index in range(40):
            line = render_line("gypsy queue, jolly HEIGHT", fonts[index % len(fonts)], rng, look="captured",
                               scene_share=0.0, scan_effects_on=False, clipped=clipped)
            luminance = np.asarray(line, dtype=np.float32)
            ink = luminance < otsu_threshold(luminance.astype(np.uint8))
            if has_light_text(luminance.astype(np.uint8)):
                ink = ~ink
            inked += max(ink[0].mean(), ink[-1].mean()) > 0.03
        return inked / 40

    assert edge_inked(True) >= 0.85 and edge_inked(False) <= 0.5
    arguments = dict(seed=7, max_chars=30, look="captured", scene_share=0.0, cache_dir=False)
    assert make_synthetic_lines(6, clipped_crop_share=1.0, **arguments)["text"] == \
        make_synthetic_lines(6, **arguments)["text"]
    with pytest.raises(ValueError, match="clipped_crop_share"):
        make_synthetic_lines(2, look="captured", clipped_crop_share=2.0, cache_dir=False)


def test_math_fraktur_letters_map_to_unicode_fraktur_and_the_rest_stays():
    from textrec.processing.data.fraktur import to_math_fraktur

    assert to_math_fraktur("Aa Cz 1848.") == "\U0001D504\U0001D51E \u212D\U0001D537 1848."
    assert to_math_fraktur("Ab", bold=True) == "\U0001D56C\U0001D587"


def test_fraktur_lines_are_drawn_in_fraktur_with_plain_labels():
    from textrec.processing.data import make_synthetic_lines
    from textrec.processing.data.fraktur import fraktur_fonts

    if not fraktur_fonts():
        pytest.skip("no font draws Fraktur here (fonts-dejavu-extra, fonts-noto-core or fonts-blankenburg)")
    fraktur_names = {path.name for path, _ in fraktur_fonts()}
    lines = make_synthetic_lines(40, seed=2, look="captured", fraktur_share=0.5, cache_dir=False)
    drawn_in_fraktur = [row for row in lines if row["font"] in fraktur_names]
    assert 8 <= len(drawn_in_fraktur) <= 32
    assert all(text.isascii() for text in lines["text"])  # labels are the plain text
    plain = make_synthetic_lines(40, seed=2, look="captured", cache_dir=False)
    assert not fraktur_names & set(plain["font"])
    with pytest.raises(ValueError, match="fraktur_share must be within 0 and 1"):
        make_synthetic_lines(2, fraktur_share=1.5, cache_dir=False)


def test_fraktur_ligatures_are_drawn_joined_and_the_rest_as_before():
    """ch, ck and tz are drawn with no paper between their letters (as Fraktur print casts them); a text without them,
    drawn without pairs, or whose pairs the font shapes itself (its own ligatures), is what one `ImageDraw.text` call
    draws."""
    from textrec.processing.data.fraktur import (
        FRAKTUR_LIGATURES,
        draw_joined,
        fraktur_fonts,
        shapes_pair,
        to_math_fraktur,
    )

    if not fraktur_fonts():
        pytest.skip("no font draws Fraktur here (fonts-dejavu-extra, fonts-noto-core or fonts-blankenburg)")
    from PIL import ImageFont

    def ink_columns(text, font, pairs):
        image = Image.new("L", (400, 80), 255)
        draw_joined(ImageDraw.Draw(image), (10, 60), text, font, 0, pairs)
        return np.asarray(image).min(axis=0) < 128, image

    for path, math_alphabet in fraktur_fonts():
        font = ImageFont.truetype(str(path), 48)
        pairs = tuple(to_math_fraktur(pair) for pair in FRAKTUR_LIGATURES) if math_alphabet else FRAKTUR_LIGATURES
        for pair in pairs:
            columns, joined = ink_columns(pair, font, pairs)
            if shapes_pair(font, pair):
                one_call = Image.new("L", (400, 80), 255)
                ImageDraw.Draw(one_call).text((10, 60), pair, font=font, fill=0, anchor="ls")
                assert np.array_equal(np.asarray(joined), np.asarray(one_call))
                continue
            inked = np.flatnonzero(columns)
            assert columns[inked[0]:inked[-1] + 1].all(), (path.name, pair)  # one piece: no blank column inside
            apart, _ = ink_columns(pair, font, ())
            assert np.flatnonzero(apart)[-1] > inked[-1]  # drawn apart it is wider
        plain = Image.new("L", (400, 80), 255)
        ImageDraw.Draw(plain).text((10, 60), "ab", font=font, fill=0, anchor="ls")
        assert np.array_equal(np.asarray(ink_columns("ab", font, pairs)[1]), np.asarray(plain))


def test_historic_spelling_sets_long_s_german_quotes_and_dashes():
    import numpy as np

    from textrec.processing.data.german_print import decomposed_umlauts, historic_spelling, long_s

    assert long_s("Sonnenschein: das ist es, Haus.") == "Sonnenſchein: das iſt es, Haus."
    spelled = historic_spelling('Er sagte "Rast" - dann ging er --', np.random.default_rng(0))
    assert spelled.startswith("Er ſagte ") and spelled.count("—") == 2 and '"' not in spelled
    assert spelled[9] + spelled[14] in ("„“", "»«")
    assert historic_spelling("Ich sah Ihn in Jena", np.random.default_rng(0)) == "Jch ſah Jhn in Jena"
    assert decomposed_umlauts("Grüße") == "Gru\u0308ße" and decomposed_umlauts("abc") == "abc"


def test_old_umlauts_are_labelled_with_the_small_e_in_the_share_of_historic_lines_asked_for():
    """``über`` printed as the early 1800s did is labelled ``uͤber`` (the letter and U+0364, as the DTA writes it); in
    the share of historic lines asked for, never capitals, and none (nor any draw) unless asked."""
    import numpy as np

    from textrec.processing.data import make_synthetic_lines
    from textrec.processing.data.german_print import COMBINING_SMALL_E, historic_spelling, load_german_corpus, old_umlauts

    assert old_umlauts("Über die Brücke, schön und spät") == "Über die Bru\u0364cke, scho\u0364n und spa\u0364t"
    assert old_umlauts("ohne") == "ohne"
    rng = np.random.default_rng(0)
    spelled = [historic_spelling("über", rng, old_umlaut_share=0.3) for _ in range(2000)]
    assert set(spelled) == {"über", "u\u0364ber"}
    assert abs(sum(COMBINING_SMALL_E in text for text in spelled) / 2000 - 0.3) < 0.04
    first, second = np.random.default_rng(1), np.random.default_rng(1)
    assert [historic_spelling("über", first) for _ in range(50)] == ["über"] * 50
    assert first.random() == second.random(51)[-1]  # one draw a line (the quotes'): none for old umlauts
    with pytest.raises(ValueError, match="old_umlaut_share must be within 0 and 1"):
        make_synthetic_lines(2, old_umlaut_share=2.0, cache_dir=False)
    if load_german_corpus():
        lines = make_synthetic_lines(40, seed=3, look="captured", fraktur_share=1.0, german_share=1.0,
                                     old_umlaut_share=1.0, cache_dir=False)
        assert any(COMBINING_SMALL_E in text for text in lines["text"])
        assert not any(set(text) & set("äöü") for text in lines["text"])  # every line German, in Fraktur


def fraktur_text_face() -> str:
    """A Fraktur text face of this machine's, or the test is skipped: a math alphabet's Fraktur letters (DejaVu's,
    Noto's) are no text face and carry no marks of their own."""
    from textrec.processing.data.fraktur import fraktur_fonts

    path = next((str(path) for path, math_alphabet in fraktur_fonts() if not math_alphabet), None)
    if path is None:
        pytest.skip("no Fraktur text face here (fonts-blankenburg, or the web faces of setup.sh --release_fonts)")
    return path


def test_the_marks_no_face_draws_are_drawn_by_the_engine():
    """The small e stands over its letter (ink above the letter, none beside it), the double oblique hyphen is two
    strokes rising to the right; neither leaves a missing-glyph box, and the rest of the line is drawn as before."""
    from PIL import ImageFont

    from textrec.processing.data.fraktur import draw_joined, without_engine_drawn_marks
    from textrec.processing.data.german_print import COMBINING_SMALL_E, DOUBLE_OBLIQUE_HYPHEN

    path = fraktur_text_face()
    font = ImageFont.truetype(path, 48)

    def drawn(text):
        image = Image.new("L", (300, 120), 255)
        draw_joined(ImageDraw.Draw(image), (10, 90), text, font, 0, ())
        return np.asarray(image) < 128

    plain, marked = drawn("u"), drawn("u" + COMBINING_SMALL_E)
    added = marked & ~plain
    rows, columns = np.flatnonzero(added.any(axis=1)), np.flatnonzero(added.any(axis=0))
    letter_rows, letter_columns = np.flatnonzero(plain.any(axis=1)), np.flatnonzero(plain.any(axis=0))
    assert rows.size and rows[-1] < letter_rows[0]  # above the letter
    assert letter_columns[0] <= columns.mean() <= letter_columns[-1]  # over it
    assert (marked[:, letter_columns[-1] + 2:] == plain[:, letter_columns[-1] + 2:]).all()  # nothing beside it
    assert without_engine_drawn_marks("Bru\u0364cke⸗") == "Brucke="

    hyphen = drawn("a" + DOUBLE_OBLIQUE_HYPHEN) & ~drawn("a")
    from scipy import ndimage

    strokes, count = ndimage.label(hyphen)
    assert count == 2
    for label in (1, 2):
        ys, xs = np.nonzero(strokes == label)
        assert np.ptp(xs) > np.ptp(ys) > 0 and np.corrcoef(xs, ys)[0, 1] < -0.5  # longer than high, rising to the right


def test_early_print_marks_are_drawn_as_short_steep_strokes_and_hairlines():
    """As print of about 1780-1840 draws them: the short double hyphen is two heavy strokes, higher than long, the upper
    one right of the lower; the opening „ two hairlines leaning right from the baseline, where the face draws two
    commas. The text they replace keeps their room."""
    from PIL import ImageFont
    from scipy import ndimage

    from textrec.processing.data.fraktur import draw_joined, without_engine_drawn_marks
    from textrec.processing.data.german_print import HAIRLINE_LOW_QUOTE, SHORT_DOUBLE_HYPHEN

    path = fraktur_text_face()
    font = ImageFont.truetype(path, 60)
    baseline = 90

    def drawn(text):
        image = Image.new("L", (300, 120), 255)
        draw_joined(ImageDraw.Draw(image), (10, baseline), text, font, 0, ())
        return np.asarray(image) < 128

    def strokes(mark_image):
        labels, count = ndimage.label(mark_image)
        assert count == 2
        return [np.nonzero(labels == label) for label in (1, 2)]

    hyphen = drawn("a" + SHORT_DOUBLE_HYPHEN) & ~drawn("a")
    (upper_ys, upper_xs), (lower_ys, lower_xs) = sorted(strokes(hyphen), key=lambda stroke: stroke[0].mean())
    for ys, xs in ((upper_ys, upper_xs), (lower_ys, lower_xs)):
        assert np.ptp(ys) >= np.ptp(xs) and np.corrcoef(xs, ys)[0, 1] < -0.5  # steep, rising to the right
    assert upper_xs.mean() > lower_xs.mean() and lower_ys.max() < baseline  # above the baseline
    assert np.ptp(np.concatenate([upper_xs, lower_xs])) < font.size * 0.3  # short

    for ys, xs in strokes(drawn(HAIRLINE_LOW_QUOTE)):
        assert np.ptp(ys) > 2 * np.ptp(xs) and np.corrcoef(xs, ys)[0, 1] < -0.5  # upright-ish, leaning right
        assert abs(ys.max() - baseline) <= font.size * 0.1  # standing on the baseline
    assert (drawn(HAIRLINE_LOW_QUOTE) != drawn("„")).any()
    assert without_engine_drawn_marks(f"{HAIRLINE_LOW_QUOTE}Wer Unmün{SHORT_DOUBLE_HYPHEN}") == "„Wer Unmün-"


def test_early_print_marks_are_drawn_only_when_asked_and_labelled_as_the_others():
    """`early_fraktur_marks_share` changes how German Fraktur lines are drawn, never their labels; at 0 the engine's
    lines stay as they were."""
    from textrec.processing.data import make_synthetic_lines
    from textrec.processing.data.fraktur import fraktur_fonts
    from textrec.processing.data.german_print import (
        DOUBLE_HYPHEN_LABEL,
        HAIRLINE_LOW_QUOTE,
        SHORT_DOUBLE_HYPHEN,
        as_printed,
        load_german_corpus,
    )

    assert as_printed("„Wer Unmün—", early_marks=True) == f"{HAIRLINE_LOW_QUOTE}Wer Unmün{SHORT_DOUBLE_HYPHEN}"
    assert as_printed("ein — kurzer „Satz“", early_marks=True) == f"ein — kurzer {HAIRLINE_LOW_QUOTE}Satz“"
    assert as_printed("„Wer Unmün" + DOUBLE_HYPHEN_LABEL) == "„Wer Unmün-"
    if not load_german_corpus() or not fraktur_fonts():
        pytest.skip("needs Debian's fortunes-de and a font drawing Fraktur (bash scripts/setup.sh --release_fonts)")
    arguments = dict(seed=3, max_chars=60, look="captured", fraktur_share=1.0, german_share=1.0, cache_dir=False)
    early = make_synthetic_lines(24, early_fraktur_marks_share=1.0, **arguments)
    default = make_synthetic_lines(24, **arguments)
    assert early["text"] == default["text"]
    assert any(a.tobytes() != b.tobytes() for a, b in zip(early["image"], default["image"]))
    assert make_synthetic_lines(24, early_fraktur_marks_share=0.0, **arguments)["image"][5].tobytes() == \
        default["image"][5].tobytes()
    with pytest.raises(ValueError, match="early_fraktur_marks_share"):
        make_synthetic_lines(2, early_fraktur_marks_share=-0.1, cache_dir=False)


def test_a_word_broken_at_the_line_end_is_labelled_as_the_transcriptions_write_the_double_hyphen():
    """The last word is cut after its second letter at the earliest and two before its end at the latest, and ends
    in the double hyphen's label; it is drawn as the face's hyphen or with two strokes, an em dash after a space
    staying one."""
    import numpy as np

    from textrec.processing.data.german_print import DOUBLE_HYPHEN_LABEL, as_printed, break_last_word

    rng = np.random.default_rng(0)
    broken = {break_last_word("Er ging nach Geſchichte", rng) for _ in range(200)}
    assert broken == {f"Er ging nach {'Geſchichte'[:cut]}{DOUBLE_HYPHEN_LABEL}" for cut in range(2, 9)}
    assert break_last_word("Er ging nach Hof", rng) == "Er ging nach Hof"  # too short to break
    assert break_last_word("Er ging 1848.", rng) == "Er ging 1848."
    assert as_printed("nach Geſchich—") == "nach Geſchich-" and as_printed("nach Hauſe —") == "nach Hauſe —"
    assert as_printed("nach Geſchich—", double=True) == "nach Geſchich⸗" and as_printed("ein —", double=True) == "ein —"
    assert as_printed("ein — kurzer") == "ein — kurzer"


def test_german_lines_carry_german_letters_and_long_s_only_where_drawn_in_fraktur():
    """German lines (Debian's fortunes-de) label what is drawn: umlauts and ß in roman type, the long s and
    German quotes too in Fraktur, old umlauts' small e only there; every label stays within printable ASCII, the
    German print characters and the small e."""
    from textrec.processing.data import make_synthetic_lines
    from textrec.processing.data.fonts import PRINTABLE_ASCII
    from textrec.processing.data.fraktur import font_covers, fraktur_fonts
    from textrec.processing.data.german_print import COMBINING_SMALL_E, GERMAN_PRINT_CHARACTERS, load_german_corpus

    if not load_german_corpus():
        pytest.skip("Debian's fortunes-de is not installed (bash scripts/setup.sh installs it)")
    if not fraktur_fonts():
        pytest.skip("no font draws Fraktur here (fonts-dejavu-extra or fonts-blankenburg)")
    fraktur_names = {path.name for path, _ in fraktur_fonts()}
    lines = make_synthetic_lines(30, seed=4, max_chars=60, look="captured", fraktur_share=0.5, german_share=1.0,
                                 cache_dir=False)
    allowed = set(PRINTABLE_ASCII + GERMAN_PRINT_CHARACTERS + COMBINING_SMALL_E)
    assert all(set(text) <= allowed for text in lines["text"])
    in_fraktur = [row["text"] for row in lines if row["font"] in fraktur_names]
    in_roman = [row["text"] for row in lines if row["font"] not in fraktur_names]
    assert in_fraktur and in_roman
    assert not any("ſ" in text or COMBINING_SMALL_E in text for text in in_roman)
    assert not any(re.search(r"[^\W\d_]—$", text) for text in in_roman)  # words broken at the end only in Fraktur
    assert any("ſ" in text for text in in_fraktur)
    assert any(set(text) & set("äöüß") for text in lines["text"])
    without_long_s = {path.name for path, _ in fraktur_fonts() if not font_covers(path, "ſ")}
    assert not any("ſ" in row["text"] for row in lines if row["font"] in without_long_s)  # set round where lacking
    with pytest.raises(ValueError, match="german_share must be within 0 and 1"):
        make_synthetic_lines(2, german_share=-0.1, cache_dir=False)


def test_blackletter_fonts_are_not_print_fonts():
    from textrec.processing.data.fonts import classify_family

    assert classify_family("Blankenburg_UNZ1A") == "blackletter" and classify_family("UnifrakturMaguntia") == "blackletter"
    assert classify_family("Grenze Gotisch") == "blackletter"
    assert classify_family("DejaVu Serif") == "print"


def _web_font_subset(path, characters: str, family: str = "Test Fraktur") -> None:
    """A one-glyph-per-character font saved as a web font subset (``.woff``) at ``path``."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    names = [".notdef"] + [f"uni{ord(character):04X}" for character in characters]
    builder = FontBuilder(1000, isTTF=True)
    builder.setupGlyphOrder(names)
    builder.setupCharacterMap({ord(character): name for character, name in zip(characters, names[1:])})
    glyphs = {}
    for name in names:
        pen = TTGlyphPen(None)
        pen.moveTo((100, 0)), pen.lineTo((100, 700)), pen.lineTo((500, 700)), pen.closePath()
        glyphs[name] = pen.glyph()
    builder.setupGlyf(glyphs)
    builder.setupHorizontalMetrics({name: (600, 100) for name in names})
    builder.setupHorizontalHeader(ascent=800, descent=-200)
    builder.setupNameTable({"familyName": family, "styleName": "Regular"})
    builder.setupOS2()
    builder.setupPost()
    builder.font.flavor = "woff"
    builder.save(path)


def test_web_font_subsets_merge_into_one_truetype_file_per_weight(tmp_path):
    """A Fontsource package's Latin and Latin-extended files of one weight become one font with both ranges (the
    long s lies in the extension); other weights are left out on request, other subsets always."""
    from fontTools.ttLib import TTFont

    from textrec.processing.data.fonts import merge_web_font_subsets

    files = tmp_path / "package" / "files"
    files.mkdir(parents=True)
    _web_font_subset(files / "test-fraktur-latin-400-normal.woff", "abs")
    _web_font_subset(files / "test-fraktur-latin-ext-400-normal.woff", "ſĀ")
    _web_font_subset(files / "test-fraktur-latin-700-normal.woff", "abs")
    _web_font_subset(files / "test-fraktur-cyrillic-400-normal.woff", "ж")
    written = merge_web_font_subsets(tmp_path / "package", tmp_path / "fonts", weights=("400",))
    assert [path.name for path in written] == ["test-fraktur-400-normal.ttf"]
    merged = TTFont(written[0])
    assert merged.flavor is None and set(map(chr, merged.getBestCmap())) == set("absſĀ")
    assert merged["name"].getBestFamilyName() == "Test Fraktur"
    assert sorted(path.name for path in (tmp_path / "fonts").iterdir()) == ["test-fraktur-400-normal.ttf"]
    every_weight = merge_web_font_subsets(tmp_path / "package", tmp_path / "all")
    assert [path.name for path in every_weight] == ["test-fraktur-400-normal.ttf", "test-fraktur-700-normal.ttf"]
    with pytest.raises(FileNotFoundError, match="in weights 300"):
        merge_web_font_subsets(tmp_path / "package", tmp_path / "none", weights=("300",))


def _font_with_f(path) -> None:
    """A TrueType font of ``x`` (a 500-unit square) and a Fraktur-like ``f``: a stem (x 100-200), a bar across it at
    the x-height (x 50-350), a hook right of its top (x 200-400)."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    def rectangles(*boxes):
        pen = TTGlyphPen(None)
        for x_min, y_min, x_max, y_max in boxes:
            pen.moveTo((x_min, y_min)), pen.lineTo((x_min, y_max)), pen.lineTo((x_max, y_max))
            pen.lineTo((x_max, y_min)), pen.closePath()
        return pen.glyph()

    builder = FontBuilder(1000, isTTF=True)
    builder.setupGlyphOrder([".notdef", "f", "x"])
    builder.setupCharacterMap({ord("f"): "f", ord("x"): "x"})
    builder.setupGlyf({".notdef": rectangles(), "x": rectangles((0, 0, 500, 500)),
                       "f": rectangles((100, 0, 200, 800), (50, 450, 350, 520), (200, 750, 400, 800))})
    builder.setupHorizontalMetrics({".notdef": (500, 0), "f": (450, 50), "x": (550, 0)})
    builder.setupHorizontalHeader(ascent=900, descent=-200)
    builder.setupNameTable({"familyName": "Test F", "styleName": "Regular"})
    builder.setupOS2()
    builder.setupPost()
    builder.save(path)


def test_a_face_without_the_long_s_gets_one_made_from_its_f(tmp_path):
    """The long s is the f without the part of its bar right of the stem: the left nub, the stem and the hook stay,
    the advance is the f's; a face with a long s, or without an f, is left as it is."""
    from fontTools.ttLib import TTFont
    from PIL import Image, ImageDraw, ImageFont

    from textrec.processing.data.fonts import LONG_S, add_long_s

    _font_with_f(tmp_path / "f.ttf")
    font = TTFont(tmp_path / "f.ttf")
    assert add_long_s(font)
    font.save(tmp_path / "long-s.ttf")
    assert not add_long_s(TTFont(tmp_path / "long-s.ttf"))  # has one now
    drawn = ImageFont.truetype(str(tmp_path / "long-s.ttf"), 100)  # 1 unit = 0.1 px; baseline at y 90
    assert drawn.getlength(LONG_S) == drawn.getlength("f") == 45

    def ink(character):
        image = Image.new("L", (60, 120), 255)
        ImageDraw.Draw(image).text((0, 90), character, font=drawn, fill=0, anchor="ls")
        return np.asarray(image) < 128

    f, long_s = ink("f"), ink(LONG_S)
    bar, hook, foot = slice(90 - 51, 90 - 46), slice(90 - 79, 90 - 76), slice(90 - 30, 90 - 2)
    assert f[bar, 25:34].all() and not long_s[bar, 25:34].any()  # right of the stem: the bar is cut away
    assert long_s[bar, 6:9].all() and long_s[bar, 11:19].all()  # the left nub and the stem stay
    assert np.array_equal(f[hook], long_s[hook]) and np.array_equal(f[foot], long_s[foot])

    other = tmp_path / "no-f.ttf"
    _web_font_subset(other, "abs")
    assert not add_long_s(TTFont(other))


def test_receipt_lines_are_seeded_varied_and_print_what_receipts_print():
    from textrec.processing.data import receipt_text

    lines = receipt_text.receipt_lines(2000, seed=3)
    assert lines == receipt_text.receipt_lines(2000, seed=3)
    assert lines != receipt_text.receipt_lines(2000, seed=4)
    assert receipt_text.receipt_lines(0) == []
    with pytest.raises(ValueError, match="at least 0"):
        receipt_text.receipt_lines(-1)
    assert all(line and line == line.strip() for line in lines)
    assert len(set(lines)) > 1500  # drawn, not a list repeated
    capitals = sum(line == line.upper() for line in lines) / len(lines)
    assert receipt_text.CAPITALS_SHARE - 0.05 < capitals < 1.0  # the rest in title case
    text = "\n".join(line.upper() for line in lines)
    for printed in ("TOTAL", "GST", "SDN BHD", "THANK YOU", "INVOICE NO", "JALAN"):
        assert printed in text
    assert re.search(r"\b\d+\.\d\d\b", text)  # amounts
    assert re.search(r"\b\d\d/\d\d/\d{2,4}\b", text)  # dates
    assert re.search(r"\b\d{1,2}:\d\d\b", text)  # times
