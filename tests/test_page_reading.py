"""The text-line detector, its image processor, the data engine's pages, reading order and the page reader."""

import copy
import json
import math
import re

import numpy as np
import pytest
import torch
from PIL import Image, ImageDraw, ImageFont

from textrec.modeling import LineDetectorConfig, LineDetectorForTextLineDetection
from textrec.processing import LineDetectionImageProcessor
from textrec.processing.image_processing_line_detection import (
    box_to_polygon,
    even_light,
    line_core,
    page_has_light_text,
    polygon_part,
    polygon_to_box,
)
from textrec.processing.page_reading import (
    PageLine,
    PageReading,
    crop_line,
    flanking_dashes,
    horizontal_rules,
    join_line_pieces,
    page_skew,
    reading_order,
    split_at_column_rules,
    split_at_gutters,
    column_gutters,
    split_at_columns,
    speck_rows,
    split_stacked_lines,
    table_rules,
    vertical_rules,
)

TINY = dict(stage_channels=[4, 4, 8, 8, 8], decoder_channels=8)


def iou(a, b):
    width, height = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    return width * height / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - width * height)


class MapOutput:
    def __init__(self, logits):
        self.logits = logits


def perfect_logits(processor, boxes, size, stride=2):
    """The logits a detector would give if it marked exactly the cores of `boxes` on a page of `size`."""
    width, height = size
    padded_width, padded_height = processor.padded_size(width, height)
    scale = processor.scale_for(width, height) / stride
    cores = processor.core_map(boxes, scale, (padded_height // stride, padded_width // stride))
    return torch.from_numpy(cores * 20 - 10)[None]


def test_the_core_is_the_middle_band_inside_the_ends():
    core = line_core(box_to_polygon([0, 0, 100, 20]), height_ratio=0.5, inset_ratio=0.25)
    assert polygon_to_box(core) == pytest.approx([5, 5, 95, 15])


@pytest.mark.parametrize("size", [(800, 1100), (1500, 600)])
def test_post_processing_rebuilds_the_lines_from_their_cores(size):
    processor = LineDetectionImageProcessor()
    boxes = [[50, 100, 600, 130], [50, 150, 420, 180], [60, 300, 500, 340], [300, 500, 700, 520]]
    found = processor.post_process_line_detection(MapOutput(perfect_logits(processor, boxes, size)),
                                                  target_sizes=[(size[1], size[0])])[0]
    assert len(found["boxes"]) == len(boxes)
    for box in boxes:
        assert max(iou(box, other) for other in found["boxes"]) > 0.75, (box, found["boxes"])
    assert all(0.9 < score <= 1 for score in found["scores"])


def test_post_processing_follows_a_skewed_line():
    processor = LineDetectionImageProcessor()
    angle = math.radians(4)
    polygon = [[100, 200], [700, 200], [700, 236], [100, 236]]
    centre = np.array([400, 218])
    turned = [(centre + np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
               @ (np.array(point) - centre)).tolist() for point in polygon]
    width, height = 900, 500
    padded_width, padded_height = processor.padded_size(width, height)
    scale = processor.scale_for(width, height) / 2
    logits = torch.from_numpy(processor.core_map([turned], scale, (padded_height // 2, padded_width // 2)) * 20 - 10)[None]
    found = processor.post_process_line_detection(MapOutput(logits), target_sizes=[(height, width)])[0]
    assert len(found["polygons"]) == 1
    assert page_skew(found["polygons"]) == pytest.approx(angle, abs=math.radians(1))
    top_left, top_right = found["polygons"][0][:2]
    assert math.dist(top_left, top_right) == pytest.approx(600, rel=0.08)


def test_the_detector_learns_a_page_and_keeps_shapes():
    """A tiny detector's loss falls on one batch; its logits are at the output stride; bad input is refused."""
    torch.manual_seed(0)
    model = LineDetectorForTextLineDetection(LineDetectorConfig(**TINY))
    processor = LineDetectionImageProcessor(longest_edge=256)
    page = Image.new("L", (256, 192), 255)
    ImageDraw.Draw(page).rectangle([20, 40, 200, 52], fill=0)
    inputs = processor.preprocess([page], annotations=[[[20, 40, 200, 52]]])
    assert inputs["pixel_values"].shape == (1, 1, 192, 256) and inputs["labels"].shape == (1, 96, 128)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(15):
        loss = model(**inputs).loss
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert losses[-1] < 0.6 * losses[0]
    with pytest.raises(ValueError, match="multiples of 32"):
        model(pixel_values=torch.zeros(1, 1, 100, 64))
    with pytest.raises(ValueError, match="batch, 1, height, width"):
        model(pixel_values=torch.zeros(1, 3, 64, 64))


def test_the_evaluated_detector_computes_what_its_layers_do_unfused():
    """Evaluated, each batch norm folded into its convolution, the 1 x 1 convolutions as matrix products and the
    pyramid's upsampling added in place give the logits of the layers run one by one (`nn.Sequential`,
    `F.interpolate`); a feature map not exactly twice as large is still upsampled to its size."""
    from torch.nn import functional as F

    from textrec.modeling.line_detector.modeling_line_detector import add_upsampled, pointwise_convolution

    torch.manual_seed(0)
    model = LineDetectorForTextLineDetection(LineDetectorConfig(**TINY))
    model.train()
    model(pixel_values=torch.rand(2, 1, 128, 160))  # running statistics of their own
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.weight.data.uniform_(0.5, 1.5)
            module.bias.data.uniform_(-0.5, 0.5)
    model.eval()
    pixel_values = torch.rand(1, 1, 128, 160)

    def unfused(pixel_values):
        features, hidden = [], pixel_values
        for stage in model.stages:
            hidden = torch.nn.Sequential.forward(stage[1], torch.nn.Sequential.forward(stage[0], hidden))
            features.append(hidden)
        kept = features[max(model.first_kept_stage - 1, 0):]
        merged = model.lateral[-1](kept[-1])
        for lateral, feature in zip(reversed(model.lateral[:-1]), reversed(kept[:-1])):
            merged = lateral(feature) + F.interpolate(merged, size=feature.shape[2:], mode="nearest")
        return model.head[1](torch.nn.Sequential.forward(model.head[0], merged)).squeeze(1)

    with torch.no_grad():
        expected = unfused(pixel_values)
        torch.testing.assert_close(model(pixel_values=pixel_values).logits, expected, rtol=1e-4, atol=1e-5)
        coarse, fine = torch.rand(1, 3, 4, 5), torch.rand(1, 3, 8, 10)
        assert torch.equal(add_upsampled(fine.clone(), coarse), fine + F.interpolate(coarse, size=(8, 10), mode="nearest"))
        odd = torch.rand(1, 3, 9, 11)
        assert torch.equal(add_upsampled(odd.clone(), coarse), odd + F.interpolate(coarse, size=(9, 11), mode="nearest"))
        convolution = torch.nn.Conv2d(3, 4, 1)
        torch.testing.assert_close(pointwise_convolution(convolution, fine), convolution(fine))


def test_light_pages_are_inverted_and_padding_is_paper():
    processor = LineDetectionImageProcessor(longest_edge=64)
    dark = Image.new("L", (64, 40), 20)
    ImageDraw.Draw(dark).rectangle([5, 10, 50, 16], fill=240)
    inverted = processor.preprocess([dark])["pixel_values"][0, 0]
    assert inverted[0, 0] > 0.5 and inverted[12, 20] < -0.5  # paper light, text dark
    assert inverted[63, 0] == inverted.max()  # the padding below the page reads as paper


def test_the_detector_is_given_a_light_page_inverted_and_its_polarity_is_told_once(monkeypatch):
    """`detect_lines` makes the page grey and tells its polarity once, for the page's print pitch (its size to detect
    at) and the detector's input alike: what the model is given is the processor's input of the page as it is."""
    from textrec.processing import image_processing_line_detection, page_reading

    torch.manual_seed(0)
    model = LineDetectorForTextLineDetection(LineDetectorConfig(**TINY)).eval()
    processor = LineDetectionImageProcessor(longest_edge=256)
    dark = Image.new("L", (256, 192), 20)
    for y in range(20, 180, 10):  # small print: 10 pixels from line to line
        ImageDraw.Draw(dark).text((20, y), "light print on a dark page, small and set close", fill=240, font_size=8)
    given, told = [], []
    monkeypatch.setattr(model, "forward", lambda pixel_values: given.append(pixel_values) or {
        "logits": torch.zeros(1, 1, pixel_values.shape[2] // 2, pixel_values.shape[3] // 2)})
    monkeypatch.setattr(image_processing_line_detection, "page_has_light_text",
                        lambda grey: told.append(grey.shape) or page_has_light_text(grey))
    assert page_reading.detect_lines(model, processor, dark.convert("RGB"))["boxes"] == []
    assert len(told) == 1
    expected = copy.copy(processor)
    expected.longest_edge = processor.longest_edge_for(dark)  # a page of small print is detected larger
    assert expected.longest_edge > processor.longest_edge
    assert torch.equal(given[0], expected.preprocess([dark])["pixel_values"])


def test_reading_order_reads_columns_then_lines_and_joins_a_rows_runs():
    column = [box_to_polygon([x, y, x + 280, y + 20]) for x in (50, 400) for y in range(100, 400, 30)]
    heading = [box_to_polygon([50, 40, 680, 70])]
    order = reading_order(heading + column)
    assert order[0] == [0]
    assert [row[0] for row in order[1:]] == list(range(1, 21))  # left column top to bottom, then the right one
    receipt = [box_to_polygon(box) for y in range(0, 300, 30)
               for box in ([10, y, 200, y + 20], [320, y, 380, y + 20])]
    rows = reading_order(receipt)
    assert rows == [[2 * index, 2 * index + 1] for index in range(10)]  # item and price on one line


def masthead(ear_lines: int = 6) -> tuple[list, list[int], list[int], list[int]]:
    """A newspaper's masthead: a box of `ear_lines` short lines of small print at each side, and between them the
    issue's number, the title set more than three times as high, the dateline and the imprint, each higher than the
    ears' print; the ears' lines level with each other. The polygons and the indices of the left ear, the middle and
    the right ear."""
    left = [box_to_polygon([20, 20 + 22 * row, 110, 38 + 22 * row]) for row in range(ear_lines)]
    middle = [box_to_polygon(box) for box in ([300, 10, 560, 40], [160, 45, 700, 110], [170, 115, 690, 150],
                                              [250, 155, 610, 185])]
    right = [box_to_polygon([760, 20 + 22 * row, 850, 38 + 22 * row]) for row in range(ear_lines)]
    return (left + middle + right, list(range(ear_lines)), list(range(ear_lines, ear_lines + 4)),
            list(range(ear_lines + 4, 2 * ear_lines + 4)))


def test_a_mastheads_ears_are_read_as_boxes_of_their_own_not_across_the_title():
    """The ears' lines stand level with each other, but the title stands between them: each ear is read as a column
    of its own (left ear, title, right ear), not its lines joined with the other ear's across the title. Three lines
    are no box: read row by row, as before."""
    polygons, left, middle, right = masthead()
    rows = reading_order(polygons)
    assert rows == [[index] for index in left + middle + right]
    polygons, left, middle, right = masthead(ear_lines=3)
    assert any(set(row) & set(left) and set(row) & set(right) for row in reading_order(polygons))


def test_a_receipts_prices_stay_with_their_items():
    """Prices beside their items, and prices printed a line apart between their items' lines, are not a box of
    lines of their own: each price is read on its line, in the order of the page."""
    beside = [box_to_polygon(box) for y in range(0, 300, 30) for box in ([10, y, 200, y + 20], [320, y, 380, y + 20])]
    assert reading_order(beside) == [[2 * index, 2 * index + 1] for index in range(10)]
    between = [box_to_polygon(box) for y in range(0, 600, 60)
               for box in ([10, y, 150, y + 20], [320, y + 30, 380, y + 50])]
    assert reading_order(between) == [[index] for index in range(20)]


def test_lines_one_above_the_other_are_two_rows_however_much_their_boxes_overlap():
    """A photographed receipt: its detected lines are tall for their spacing (perspective, a curved page), so that
    neighbours overlap vertically by more than half their height; one lies above the other, not beside it, so each is
    an output line of its own. Two pieces of one line that the detector found overlapping a little stay one line."""
    above, below = box_to_polygon([100, 0, 500, 40]), box_to_polygon([130, 18, 470, 58])
    assert reading_order([below, above]) == [[1], [0]]
    first_piece, second_piece = box_to_polygon([10, 100, 200, 120]), box_to_polygon([180, 101, 300, 121])
    assert reading_order([second_piece, first_piece]) == [[1, 0]]


def test_pieces_of_a_line_the_detector_found_apart_are_read_as_one_image():
    """Two detected pieces of one printed line a word space apart are joined into one run covering both (read once, the
    glyph between them no longer read twice); a skewed page's pieces are joined along their slant. Pieces of one
    detection cut apart, pieces a rule parts, a receipt's item and price far apart, type of another size and a page
    number between dashes stay apart."""
    first, second = box_to_polygon([100, 100, 300, 120]), box_to_polygon([305, 101, 480, 121])
    polygons, rows, members = join_line_pieces([first, second], [[0, 1]], detections=[0, 1])
    assert rows == [[0]] and members == [[0, 1]]
    assert np.allclose(polygon_to_box(polygons[0]), [100, 100, 480, 121])
    assert join_line_pieces([first, second], [[0, 1]], detections=[0, 0])[2] == [[0], [1]]  # cut from one run
    assert join_line_pieces([first, second], [[0, 1]], [0, 1], column_rules=[(302, 90, 130)])[2] == [[0], [1]]
    assert join_line_pieces([first, second], [[0, 1]], [0, 1], keep_apart=[1])[2] == [[0], [1]]
    price = box_to_polygon([400, 100, 480, 120])
    assert join_line_pieces([box_to_polygon([100, 100, 300, 120]), price], [[0, 1]], [0, 1])[2] == [[0], [1]]
    large = box_to_polygon([305, 95, 480, 135])
    assert join_line_pieces([first, large], [[0, 1]], [0, 1])[2] == [[0], [1]]
    angle = math.radians(3)
    turn = lambda x, y: [x * math.cos(angle) - y * math.sin(angle), x * math.sin(angle) + y * math.cos(angle)]
    skewed = [[turn(x, y) for x, y in polygon] for polygon in (first, second)]
    joined, _, members = join_line_pieces(skewed, [[0, 1]], [0, 1])
    assert members == [[0, 1]]
    assert np.allclose(joined[0], [turn(100, 100), turn(480, 100), turn(480, 121), turn(100, 121)], atol=1e-6)


def test_pieces_sharing_a_glyph_are_read_as_one_image_whatever_their_heights():
    """A footnote's `*)` found as a run of its own, the line's run reaching into it (the `)` in both): read as one image,
    though the mark is lower than the line (0.6 of its height), not `*) ) Neuerdings`. A run far lower than the line
    beside it (a receipt's short label beside a run twice its height) or reaching below it is read apart."""
    line = box_to_polygon([115, 98, 480, 128])
    mark = box_to_polygon([95, 104, 123, 122])
    polygons, rows, members = join_line_pieces([mark, line], [[0, 1]], detections=[0, 1])
    assert members == [[0, 1]] and rows == [[0]]
    assert np.allclose(polygon_to_box(polygons[0]), [95, 98, 480, 128])
    low_label = box_to_polygon([95, 108, 123, 120])
    assert join_line_pieces([low_label, line], [[0, 1]], [0, 1])[2] == [[0], [1]]
    below = box_to_polygon([95, 115, 123, 133])
    assert join_line_pieces([below, line], [[0, 1]], [0, 1])[2] == [[0], [1]]


def test_rows_of_specks_are_not_read():
    """Rows far less high than the page's printed lines (a noisy fax's specks, more of them than lines) are found
    before reading: the typical row is the height under which half the rows' width lies, not the median row. A speck
    in a printed line's row is that line's; a page of specks alone has no speck rows."""
    lines = [box_to_polygon([100, y, 500, y + 20]) for y in (100, 140, 180)]
    specks = [box_to_polygon([x, 300 + 3 * x, x + 8, 305 + 3 * x]) for x in range(20, 200, 18)]
    beside = box_to_polygon([520, 110, 528, 115])
    polygons = lines + specks + [beside]
    rows = [[0, len(polygons) - 1], [1], [2]] + [[3 + k] for k in range(len(specks))]
    assert len(specks) > len(lines)
    assert speck_rows(polygons, rows) == set(range(3, 3 + len(specks)))
    assert speck_rows(specks, [[k] for k in range(len(specks))]) == set()
    assert speck_rows(lines[:1], [[0]]) == set()


def test_columns_are_found_when_a_detection_joins_two_of_their_lines():
    """A newspaper's narrow gutter: one detection ran across it (two lines joined); the columns are still read one
    after the other, the joined detection where its middle lies."""
    column = [box_to_polygon([x, y, x + 280, y + 20]) for x in (50, 350) for y in range(100, 700, 30)]
    joined = [box_to_polygon([50, 400, 630, 420])]
    order = reading_order(column + joined)
    flat = [index for row in order for index in row]
    assert sorted(flat) == list(range(41))
    assert flat.index(19) < flat.index(20)  # the left column ends before the right one begins
    assert max(flat.index(index) for index in range(20)) < min(flat.index(index) for index in range(20, 40))


def test_a_newspapers_lines_joined_across_its_gutters_are_cut_there():
    """Three justified columns, a third of their lines joined with the next column's by the detector (a narrow gutter):
    the columns are found, the joined lines cut at the gutters, and each column is read before the next."""
    width, gap, lines = 300, 16, 24
    polygons, expected = [], []
    for row in range(lines):
        y = 100 + 26 * row
        starts = [50 + column * (width + gap) for column in range(3)]
        if row % 3 == 0:  # the first two columns' lines joined
            polygons.append(box_to_polygon([starts[0], y, starts[1] + width, y + 20]))
            polygons.append(box_to_polygon([starts[2], y, starts[2] + width, y + 20]))
        else:
            polygons.extend(box_to_polygon([start, y, start + width, y + 20]) for start in starts)
    pieces, sources = split_at_columns(polygons)
    assert len(pieces) == 3 * lines and sorted(set(sources)) == list(range(len(polygons)))
    boxes = np.asarray([polygon_to_box(piece) for piece in pieces])
    assert np.all(boxes[:, 2] - boxes[:, 0] < width + gap)  # no piece runs across a gutter
    order = [index for row in reading_order(pieces) for index in row]
    columns = [int((boxes[index, 0] - 50 + gap) // (width + gap)) for index in order]
    assert columns == sorted(columns)  # column by column
    tops = [boxes[index, 1] for index in order]
    assert all(tops[i] < tops[i + 1] for i in range(len(tops) - 1) if columns[i] == columns[i + 1])


def newspaper_with_a_feuilleton(skew: float = 0.0) -> tuple[Image.Image, list, list[int]]:
    """Two columns of news, a rule across the page, two columns of feuilleton below it (the same gutter): the page,
    its lines' polygons and their section (0 above the rule, 1 below)."""
    page = Image.new("L", (760, 820), 250)
    draw = ImageDraw.Draw(page)
    polygons, sections = [], []
    for section, (top, bottom) in enumerate(((40, 400), (440, 800))):
        for x in (40, 400):
            for y in range(top, bottom, 30):
                box = [x, y, x + 320, y + 18]
                draw.text((x, y + 15), "justified lines of print", fill=30, font_size=24, anchor="ls")
                polygons.append(box_to_polygon(box))
                sections.append(section)
    draw.line([(30, 420), (730, 420)], fill=20, width=3)
    if skew:
        page = page.rotate(-math.degrees(skew), center=(0, 0), fillcolor=250, resample=Image.Resampling.BILINEAR)
        turn = lambda point: (point[0] * math.cos(skew) - point[1] * math.sin(skew),  # noqa: E731
                              point[0] * math.sin(skew) + point[1] * math.cos(skew))
        polygons = [[turn(point) for point in polygon] for polygon in polygons]
    return page, polygons, sections


@pytest.mark.parametrize("skew", [0.0, 0.01])
def test_a_rule_across_the_columns_parts_sections_read_one_after_the_other(skew):
    """A newspaper's feuilleton below a rule is read after the columns above it, each section column by column;
    without the rule the page's columns would run through both."""
    page, polygons, sections = newspaper_with_a_feuilleton(skew)
    rules = horizontal_rules(np.asarray(page), polygons)
    assert len(rules) == 1 and abs(rules[0] - 420) < 8
    flat = [index for row in reading_order(polygons, rules) for index in row]
    assert sorted(flat) == list(range(len(polygons)))
    assert [sections[index] for index in flat] == sorted(sections)  # the news first, then the feuilleton
    news = [index for index in flat if sections[index] == 0]
    assert news == sorted(news)  # the left column top to bottom, then the right one
    without = [index for row in reading_order(polygons) for index in row]
    assert [sections[index] for index in without] != sorted(sections)  # columns through the whole page
    blank = Image.new("L", page.size, 250)
    assert horizontal_rules(np.asarray(blank), polygons) == []  # no ink, no rule
    text_only = page.copy()
    ImageDraw.Draw(text_only).rectangle([0, 405, 759, 435], fill=250)
    assert horizontal_rules(np.asarray(text_only), polygons) == []  # the print is no rule
    if not skew:
        broken = text_only.copy()  # broken in the gutter, less than a line height apart: still one rule
        ImageDraw.Draw(broken).line([(30, 420), (372, 420)], fill=20, width=3)
        ImageDraw.Draw(broken).line([(384, 420), (730, 420)], fill=20, width=3)
        assert len(horizontal_rules(np.asarray(broken), polygons)) == 1
        # a rule one column wide, and a row of the other column's small print closed up into a bar beside it
        one_column = text_only.copy()
        ImageDraw.Draw(one_column).line([(30, 420), (350, 420)], fill=20, width=3)
        ImageDraw.Draw(one_column).rectangle([410, 416, 730, 423], fill=20)
        assert horizontal_rules(np.asarray(one_column), polygons) == []


def newspaper_with_column_rules(wander: int = 0) -> tuple[Image.Image, list, list[int]]:
    """Three justified columns parted by printed vertical rules in gutters too narrow to tell (a third of a line
    height), every line of the first two columns detected as one run across the rule: the page, the detections and
    each detection's column (0 for a joined one). A rule drifts `wander` pixels sideways from top to bottom, as on a
    page scanned skewed."""
    page = Image.new("L", (1000, 760), 250)
    draw = ImageDraw.Draw(page)
    polygons, columns = [], []
    starts, width = (40, 355, 670), 305
    for y in range(60, 700, 26):
        polygons.append(box_to_polygon([starts[0], y, starts[1] + width, y + 20]))
        columns.append(0)
        polygons.append(box_to_polygon([starts[2], y, starts[2] + width, y + 20]))
        columns.append(2)
        for start in starts:  # words in another order on each line, filling it: their spaces do not line up
            words = iter(np.random.default_rng([y, start]).permutation(["justified", "lines", "of", "print", "set",
                                                                       "in", "narrow", "columns", "a", "page"]))
            line = next(words)
            for word in words:
                if draw.textlength(f"{line} {word}", font_size=22) > width - 5:
                    break
                line = f"{line} {word}"
            draw.text((start, y + 16), line, fill=30, font_size=22, anchor="ls")
    for x in (350, 665):
        draw.line([(x - wander // 2, 50), (x + wander - wander // 2, 710)], fill=20, width=2)
    return page, polygons, columns


def test_printed_rules_between_columns_are_found_and_part_the_lines_joined_across_them():
    page, polygons, columns = newspaper_with_column_rules()
    rules = vertical_rules(np.asarray(page), polygons)
    assert [x for x, _, _ in rules] == [pytest.approx(350, abs=1.5), pytest.approx(665, abs=1.5)]
    assert all(top <= 60 and bottom >= 700 for _, top, bottom in rules)
    pieces, sources = split_at_column_rules(polygons, rules)
    boxes = np.asarray([polygon_to_box(piece) for piece in pieces])
    assert len(pieces) == 3 * (len(polygons) // 2) and np.all(boxes[:, 2] - boxes[:, 0] < 320)
    assert sorted(set(sources)) == list(range(len(polygons)))
    flat = [index for row in reading_order(pieces, (), rules) for index in row]
    assert sorted(flat) == list(range(len(pieces)))
    read_columns = [int(boxes[index, 0] // 315) for index in flat]
    assert read_columns == sorted(read_columns)  # column by column
    joined_rows = reading_order(pieces)  # without the rules the gutters are too narrow: rows across the page
    assert max(len(row) for row in joined_rows) > 1
    blank = Image.new("L", page.size, 250)
    assert vertical_rules(np.asarray(blank), polygons) == []
    text_only = page.copy()
    for x in (350, 665):
        ImageDraw.Draw(text_only).line([(x, 50), (x, 710)], fill=250, width=4)
    assert vertical_rules(np.asarray(text_only), polygons) == []  # the letters' strokes are no rule


def test_a_rule_wandering_wider_than_a_rule_is_thick_is_still_found():
    # Over its length the rule drifts 10 pixels, more than a rule may be thick (0.35 line heights, 7 pixels): a
    # page scanned small or skewed. Row by row it is 2 pixels thick.
    page, polygons, _ = newspaper_with_column_rules(wander=10)
    rules = vertical_rules(np.asarray(page), polygons)
    assert [x for x, _, _ in rules] == [pytest.approx(350, abs=4), pytest.approx(665, abs=4)]
    pieces, _ = split_at_column_rules(polygons, rules)
    assert len(pieces) == 3 * (len(polygons) // 2)
    band = page.copy()
    ImageDraw.Draw(band).rectangle([(880, 50), (905, 710)], fill=20)  # a picture's edge: thick in every row
    assert len(vertical_rules(np.asarray(band), polygons)) == 2


def ruled_table(row_rules_every: int | None = 1) -> tuple[Image.Image, list]:
    """A table of three columns of ragged cells parted by vertical rules, each row detected as one run across them,
    with a short horizontal rule crossing each vertical one below every `row_rules_every`-th row (None: none; too
    short to be a rule across the page): the page and the detections."""
    page = Image.new("L", (1000, 760), 250)
    draw = ImageDraw.Draw(page)
    polygons = []
    for row, y in enumerate(range(60, 700, 26)):
        polygons.append(box_to_polygon([40, y, 975, y + 20]))
        for start in (40, 360, 680):
            words = np.random.default_rng([row, start]).permutation(["cells", "of", "a", "ruled", "table", "figures"])
            draw.text((start, y + 16), " ".join(words[: 1 + (row + start) % 3]), fill=30, font_size=22, anchor="ls")
        if row_rules_every and row % row_rules_every == 0:
            for x in (350, 670):
                draw.line([(x - 60, y + 23), (x + 60, y + 23)], fill=20, width=1)
    for x in (350, 670):
        draw.line([(x, 50), (x, 710)], fill=20, width=2)
    return page, polygons


def test_a_tables_rules_cut_the_lines_across_them_but_part_no_columns(monkeypatch):
    """Vertical rules crossed by a rule below every row are a table's (a form's ruled table of figures): the runs
    joined across them are cut there all the same, but the table reads row by row, each row's cells one output line;
    rules crossed now and then (a newspaper's, by its rules across the page) part the columns."""
    from textrec.processing import page_reading
    from textrec.processing.inference import LineReading

    page, polygons = ruled_table()
    grey = np.asarray(page)
    rules = vertical_rules(grey, polygons)
    assert len(rules) == 2 and table_rules(grey, polygons, rules) == rules
    assert horizontal_rules(grey, polygons) == []
    for every in (None, 12):
        sparse, _ = ruled_table(every)
        assert table_rules(np.asarray(sparse), polygons, vertical_rules(np.asarray(sparse), polygons)) == []
    monkeypatch.setattr(page_reading, "iter_recognize", lambda model, processor, crops, **kwargs: (
        (index, LineReading("cell", 0.9, []), None) for index in range(len(crops))))
    detector = lambda image: {"scores": [0.9] * len(polygons), "polygons": polygons,
                              "boxes": [polygon_to_box(polygon) for polygon in polygons]}
    table = page_reading.read_page(page, (None, None), detector)
    assert [line.text for line in table.lines] == ["cell cell cell"] * len(polygons)
    columns = page_reading.read_page(ruled_table(None)[0], (None, None), detector)
    assert [line.text for line in columns.lines] == ["cell"] * 3 * len(polygons)


def test_columns_detected_in_pieces_of_lines_are_still_parted_at_their_rules():
    # A page scanned small: the detector finds each line in word-long pieces, none 6 line heights long, few
    # ending against the rule; taken together, each printed line is as long and as flush as its column.
    page, polygons, _ = newspaper_with_column_rules()
    rules = vertical_rules(np.asarray(page), polygons)
    lines, _ = split_at_column_rules(polygons, rules)
    pieces = [polygon_part(line, start, end) for line in lines for start, end in ((0, 0.3), (0.35, 0.65), (0.7, 1))]
    boxes = np.asarray([polygon_to_box(piece) for piece in pieces])
    rows = reading_order(pieces, (), rules)
    read_columns = [int(boxes[row[0], 0] // 315) for row in rows]
    assert read_columns == sorted(read_columns)  # column by column
    assert all(len({int(boxes[index, 0] // 315) for index in row}) == 1 for row in rows)  # no row across a rule


def test_gutters_without_rules_part_the_lines_joined_across_them():
    """The newspaper without its rules: the paper between the first two columns is found as a gutter, the lines the
    detector joined across it are cut there and the columns read one after the other; the third column's own lines
    (the paper before them a gutter too, the columns set against it) and a skewed copy of the page alike."""
    page, polygons, columns = newspaper_with_column_rules()
    for x in (350, 665):
        ImageDraw.Draw(page).line([(x, 50), (x, 710)], fill=250, width=4)
    ink = np.flatnonzero((np.asarray(page)[60:700] < 128).any(axis=0))
    first_column_end, second_column_start = ink[ink < 350].max(), ink[(ink > 350) & (ink < 665)].min()
    second_column_end, third_column_start = ink[(ink > 350) & (ink < 665)].max(), ink[ink > 665].min()
    gutters = column_gutters(np.asarray(page), polygons)
    assert len(gutters) == 2  # the second, which no line crosses, for the columns set against it
    (x, top, bottom), (second_x, _, _) = gutters
    assert first_column_end < x < second_column_start and top <= 70 and bottom >= 690
    assert second_column_end < second_x < third_column_start
    pieces, sources = split_at_column_rules(polygons, gutters, reach_heights=0, side_heights=6)
    assert len(pieces) == 3 * (len(polygons) // 2) and sorted(set(sources)) == list(range(len(polygons)))
    boxes = np.asarray([polygon_to_box(piece) for piece in pieces])
    flat = [index for row in reading_order(pieces, (), gutters) for index in row]
    read_columns = [int(boxes[index, 0] // 315) for index in flat]
    assert sorted(flat) == list(range(len(pieces))) and read_columns == sorted(read_columns)

    skew = math.radians(1.0)
    turned = page.rotate(-math.degrees(skew), center=(0, 0), fillcolor=250)
    turned_polygons = [[(px * math.cos(skew) - py * math.sin(skew), px * math.sin(skew) + py * math.cos(skew))
                        for px, py in polygon] for polygon in polygons]
    [(turned_x, _, _), _] = column_gutters(np.asarray(turned), turned_polygons)
    middle = 380  # the gutter's middle height: its x there, on the turned page
    assert first_column_end - middle * math.sin(skew) < turned_x < second_column_start - middle * math.sin(skew)


def test_a_lines_last_word_joined_to_the_next_columns_line_is_cut_at_the_gutter():
    """Columns a narrow gutter apart, no rule: the detector found some lines of the first column in two runs, the
    second of which runs on across the gutter into the second column's line (a few words on the gutter's left). That
    run is cut at the gutter too, and no output line holds print of both columns."""
    page, polygons, columns = newspaper_with_column_rules()
    for x in (350, 665):
        ImageDraw.Draw(page).line([(x, 50), (x, 710)], fill=250, width=4)
    detections = []
    for index, (polygon, column) in enumerate(zip(polygons, columns)):
        left, top, right, bottom = polygon_to_box(polygon)
        if column == 0 and index % 4 == 0:  # a line's last words joined to the next column's line
            detections += [box_to_polygon([left, top, 290, bottom]), box_to_polygon([290, top, right, bottom])]
        else:
            detections.append(polygon)
    gutters = column_gutters(np.asarray(page), detections)
    pieces, _ = split_at_gutters(detections, gutters)
    boxes = np.asarray([polygon_to_box(piece) for piece in pieces])
    assert not ((boxes[:, 0] < 340) & (boxes[:, 2] > 360)).any()  # nothing runs across the first gutter
    rows = reading_order(pieces, (), gutters)
    assert all(len({int(boxes[index, 0] // 315) for index in row}) == 1 for row in rows)
    read_columns = [int(boxes[row[0], 0] // 315) for row in rows]
    assert read_columns == sorted(read_columns)


def test_a_title_pages_short_lines_beside_a_column_of_text_are_a_column_of_their_own():
    """Two columns about two line heights apart: a title page's centred lines of many lengths, none level with the text's
    lines beside them, are read first, then the justified column (not each title line with the text line beside it).
    Short lines level with the lines beside them (a form's labels, a receipt's quantities) stay on their rows."""
    text = [box_to_polygon([300, y, 700, y + 20]) for y in range(40, 560, 26)]
    text[5] = box_to_polygon([300, 170, 540, 190])  # a paragraph's last line
    title = [box_to_polygon([200 - half, y, 200 + half, y + 20])
             for half, y in [(50, 53), (20, 131), (45, 209), (30, 287), (55, 365), (25, 443)]]
    rows = reading_order(title + text)
    assert rows == [[index] for index in range(len(title) + len(text))]
    level = [box_to_polygon([200 - half, y, 200 + half, y + 20])
             for half, y in [(50, 40), (20, 118), (45, 196), (30, 274), (55, 352), (25, 430)]]
    rows = reading_order(level + text)
    assert all([index, len(level) + 3 * index] in rows for index in range(len(level)))  # each on its text line's row


def test_a_title_pages_short_lines_beside_a_column_of_text_across_a_printed_rule_are_a_column_of_their_own():
    """A title page beside a page of text, a rule between them: the title's first line runs up to the rule and a piece
    of the rule is detected as a line, so no gap parts them; the text is set against the rule and the title's centred
    lines stand level with none of its lines: the title is read first, then the text. Labels level with the lines
    beside the rule (a form's) stay on their rows."""
    text = [box_to_polygon([500, y, 900, y + 20]) for y in range(60, 580, 26)]
    text[5] = box_to_polygon([500, 190, 740, 210])  # a paragraph's last line
    heading = box_to_polygon([40, 10, 478, 46])
    title = [box_to_polygon([240 - half, y, 240 + half, y + 20])
             for half, y in [(50, 125), (20, 203), (45, 281), (30, 359), (55, 437), (25, 515)]]  # between the text's lines
    fragment = box_to_polygon([472, 60, 488, 90])  # a piece of the rule, detected as a line
    rules = [(480.0, 30.0, 590.0)]
    polygons = [heading, *title, fragment, *text]
    rows = reading_order(polygons, (), rules)
    assert [index for row in rows for index in row][: 1 + len(title)] == list(range(1 + len(title)))
    first_text = len(polygons) - len(text)
    assert not any(min(row) <= len(title) and max(row) >= first_text for row in rows)  # none with a text line
    level = [box_to_polygon([240 - half, y, 240 + half, y + 20])
             for half, y in [(50, 112), (20, 190), (45, 268), (30, 346), (55, 424), (25, 502)]]
    rows = reading_order([heading, *level, fragment, *text], (), rules)
    assert any(min(row) <= len(level) and max(row) >= first_text for row in rows)  # labels: on their rows


def columns_nearly_touching() -> tuple[Image.Image, list, list[int]]:
    """Two justified columns 18 pixels apart (0.7 of a line's height), the second a third as long, each line detected
    alone, its box reaching a quarter of its height beyond its print at each end as the detector's do: the page, the
    detections and each one's column."""
    page = Image.new("L", (700, 760), 250)
    draw = ImageDraw.Draw(page)
    polygons, columns = [], []
    starts, width = (40, 363), 305
    for column, (start, lines) in enumerate(zip(starts, (24, 8))):
        for y in range(60, 60 + 26 * lines, 26):
            words = iter(np.random.default_rng([y, start]).permutation(["justified", "lines", "of", "print", "set",
                                                                       "in", "narrow", "columns", "a", "page"]))
            line = next(words)
            for word in words:
                if draw.textlength(f"{line} {word}", font_size=22) > width:
                    break
                line = f"{line} {word}"
            draw.text((start, y + 18), line, fill=30, font_size=22, anchor="ls")
            polygons.append(box_to_polygon([start - 6, y - 3, start + width + 6, y + 23]))
            columns.append(column)
    return page, polygons, columns


def test_columns_whose_boxes_nearly_touch_are_parted_at_the_paper_between_them():
    """Columns set a line's height apart, none of whose lines the detector joined: their boxes leave too narrow a gap
    for the XY-cut, which reads each line of the short column with the line of the long one beside it; the paper
    between them, lines on its left ending by it and lines on its right beginning by it, is a gutter, and the columns
    are read one after the other."""
    page, polygons, columns = columns_nearly_touching()
    assert any(len({columns[index] for index in row}) == 2 for row in reading_order(polygons))
    gutters = column_gutters(np.asarray(page), polygons)
    assert len(gutters) == 1 and 345 < gutters[0][0] < 363
    rows = reading_order(polygons, (), gutters)
    assert [columns[row[0]] for row in rows] == sorted(columns) and all(len(row) == 1 for row in rows)


def test_a_short_columns_lines_run_on_from_the_last_words_beside_them_still_part_the_columns():
    """The short column's every line run on from the last word of the long column's line beside it (the detector's
    joins, none of them long on both sides of the gutter): those lines begin by the gutter too, which parts the columns,
    and each joined run is cut there."""
    page, polygons, columns = columns_nearly_touching()
    boxes = [polygon_to_box(polygon) for polygon in polygons]
    joined, joined_columns = [], []
    for box, column in zip(boxes, columns):
        if column == 1:
            continue
        partner = next((other for other, side in zip(boxes, columns) if side == 1 and other[1] == box[1]), None)
        if partner is None:
            joined.append(box_to_polygon(box))
        else:  # the line's last word (30 pixels) joined to the short column's line
            joined += [box_to_polygon([box[0], box[1], box[2] - 30, box[3]]),
                       box_to_polygon([box[2] - 30, box[1], partner[2], box[3]])]
    gutters = column_gutters(np.asarray(page), joined)
    assert len(gutters) == 1 and 345 < gutters[0][0] < 363
    pieces, _ = split_at_gutters(joined, gutters)
    cut = np.asarray([polygon_to_box(piece) for piece in pieces])
    assert len(pieces) == len(joined) + 8 and not ((cut[:, 0] < 340) & (cut[:, 2] > 365)).any()
    rows = reading_order(pieces, (), gutters)
    sides = [[int(cut[index, 0] + cut[index, 2] > 2 * 354) for index in row] for row in rows]
    assert all(len(set(side)) == 1 for side in sides) and [side[0] for side in sides] == [0] * 24 + [1] * 8


def test_no_gutter_in_one_column_of_text_or_between_a_receipts_items_and_prices():
    """Word spaces of lines above one another, and the paper between a receipt's items and its prices (short runs:
    no column of text), are no gutter."""
    page = Image.new("L", (900, 700), 250)
    draw = ImageDraw.Draw(page)
    words = "the quick brown fox jumps over a lazy dog and then some more words follow".split()
    text_lines, receipt_lines = [], []
    rng = np.random.default_rng(0)
    for row, y in enumerate(range(40, 360, 26)):
        line = " ".join(rng.permutation(words)[:9])
        draw.text((40, y + 16), line, fill=30, font_size=22, anchor="ls")
        text_lines.append(box_to_polygon([40, y, 40 + draw.textlength(line, font_size=22), y + 20]))
    for y in range(380, 680, 26):
        draw.text((40, y + 16), "ITEM NAME 2X", fill=30, font_size=22, anchor="ls")
        draw.text((760, y + 16), "12.50", fill=30, font_size=22, anchor="ls")
        receipt_lines.append(box_to_polygon([40, y, 820, y + 20]))
    assert column_gutters(np.asarray(page), text_lines) == []
    assert column_gutters(np.asarray(page), receipt_lines) == []
    # items of many lengths and their prices, right-aligned, a line's height or two apart, each detected alone: the
    # prices begin by the paper, but the items end ragged
    receipt = Image.new("L", (500, 700), 250)
    draw = ImageDraw.Draw(receipt)
    runs = []
    for index, y in enumerate(range(40, 660, 26)):
        item, price = ["CHICKEN RICE", "TEA", "NASI LEMAK SPECIAL", "MILO ICE", "ROTI"][index % 5], f"{3 + 7 * index}.50"
        draw.text((40, y + 18), item, fill=30, font_size=22, anchor="ls")
        draw.text((460, y + 18), price, fill=30, font_size=22, anchor="rs")
        runs.append(box_to_polygon([34, y - 3, 46 + draw.textlength(item, font_size=22), y + 23]))
        runs.append(box_to_polygon([454 - draw.textlength(price, font_size=22), y - 3, 466, y + 23]))
    assert column_gutters(np.asarray(receipt), runs) == []
    assert column_gutters(np.asarray(Image.new("L", (900, 700), 250)), text_lines) == []


def test_a_rule_beside_a_forms_short_fields_does_not_make_columns():
    """A form's table: short labels and values beside a vertical line read row by row, each row's fields joined."""
    polygons = []
    for y in range(60, 500, 30):
        polygons.append(box_to_polygon([40, y, 140, y + 18]))
        polygons.append(box_to_polygon([320, y, 420, y + 18]))
    rules = [(300.0, 40.0, 520.0)]
    assert reading_order(polygons, (), rules) == reading_order(polygons)


def test_rules_do_not_cut_a_page_without_columns():
    """A form's rules and underlines: no column on the page, so its order is the XY-cut's alone."""
    lines = [box_to_polygon([40, y, 700, y + 18]) for y in range(40, 400, 30)]
    assert reading_order(lines, [205.0]) == reading_order(lines)


def test_a_forms_wide_lines_do_not_make_its_ragged_halves_columns():
    """A form: fields on the left and right (ragged, not justified) with paragraphs across the page between them.
    Too many lines cross the gap for columns of ragged text: read line by line, each row's fields joined."""
    polygons = []
    for row in range(16):
        y = 100 + 30 * row
        if row % 4 == 0:
            polygons.append(box_to_polygon([40, y, 700, y + 18]))  # a paragraph line across the page
        else:
            polygons.append(box_to_polygon([40, y, 140 + 37 * (row % 5), y + 18]))
            polygons.append(box_to_polygon([400, y, 520 + 29 * (row % 4), y + 18]))
    rows = reading_order(polygons)
    assert len(rows) == 16
    tops = [min(polygon_to_box(polygons[index])[1] for index in row) for row in rows]
    assert tops == sorted(tops)
    assert split_at_columns(polygons)[0] == polygons


def test_a_page_with_a_dark_scanner_border_has_dark_text():
    """A light page scanned on a black lid (a wide black border, most of the border dark): dark text on light paper;
    the same page inverted is light text; a blank page has dark text."""
    page = np.full((600, 400), 235, dtype=np.uint8)
    for y in range(150, 450, 20):
        page[y:y + 8, 120:280] = 30
    scanned = np.zeros((800, 600), dtype=np.uint8)
    scanned[100:700, 100:500] = page
    assert not page_has_light_text(scanned) and not page_has_light_text(page)
    assert page_has_light_text(255 - page)
    assert not page_has_light_text(np.full((50, 50), 128, dtype=np.uint8))
    processor = LineDetectionImageProcessor(longest_edge=200)
    values = processor.preprocess([Image.fromarray(scanned)])["pixel_values"][0, 0].numpy()
    assert values[100, 100] > 0.5  # the paper's middle stays light: the page was not inverted


def in_shadow(page: Image.Image, start: int, light: float = 0.5, edge: int = 40) -> Image.Image:
    """`page` with the light falling to `light` right of `start` (a hand's or a phone's shadow), over `edge` pixels."""
    pixels = np.asarray(page, dtype=np.float64)
    ramp = np.clip((np.arange(pixels.shape[1]) - start) / edge, 0, 1)
    return Image.fromarray((pixels * (1 - (1 - light) * ramp)[None, :]).round().astype(np.uint8))


def test_even_light_lifts_a_shadow_and_keeps_an_evenly_lit_page_and_a_box_printed_in_reverse():
    page, _, _ = newspaper_with_column_rules()
    even = np.asarray(page)
    shadowed = np.asarray(in_shadow(page, 500))
    assert not page_has_light_text(shadowed)  # told with the light evened, in either polarity
    assert page_has_light_text(np.asarray(in_shadow(Image.fromarray(255 - even), 500)))
    lifted = even_light(shadowed)
    paper = even > 200
    assert abs(np.median(lifted[:, 600:][paper[:, 600:]]) - np.median(lifted[:, :400][paper[:, :400]])) <= 12
    assert np.abs(even_light(even).astype(int) - even)[paper].max() <= 8 and np.median(even_light(even)[~paper]) <= 60
    boxed = even.copy()
    boxed[200:600, 100:500] = 20  # a box printed in reverse, wider than the window the light is measured over
    boxed[380:400, 150:450] = 240
    evened = even_light(boxed)
    assert np.median(evened[220:360, 120:480]) <= 45 and np.median(evened[382:398, 160:440]) >= 200


def test_a_page_in_shadow_is_read_as_the_page_lit_evenly(monkeypatch):
    """The shadow of a hand over a third of a page of three columns parted by printed rules: the page is not taken
    for light print on dark, the rule in the shadow is found, and every line is read column by column as on the page
    lit evenly; the detector's input is the page evened too."""
    from textrec.processing import page_reading
    from textrec.processing.inference import LineReading

    page, polygons, _ = newspaper_with_column_rules()
    monkeypatch.setattr(page_reading, "iter_recognize", lambda model, processor, crops, **kwargs: (
        (index, LineReading("print", 0.99, []), None) for index in range(len(crops))))
    detector = lambda image: {"scores": [0.9] * len(polygons), "polygons": polygons,
                              "boxes": [polygon_to_box(polygon) for polygon in polygons]}
    lit = page_reading.read_page(page, (None, None), detector, auto_rotate=False)
    shaded = page_reading.read_page(in_shadow(page, 500), (None, None), detector, auto_rotate=False)
    assert len(lit.lines) == 3 * len(polygons) // 2
    assert [line.box for line in shaded.lines] == [line.box for line in lit.lines]
    starts = [line.box[0] for line in lit.lines]
    assert starts == sorted(starts)  # column by column
    values = LineDetectionImageProcessor(longest_edge=500).preprocess([in_shadow(page, 500)])["pixel_values"][0, 0]
    assert values[5, 5] > 0.9  # the paper in the light stays light: the detector is given dark print on light


def test_a_pages_polarity_is_told_once_and_its_looks_at_the_ink_read_alike_told_or_not(monkeypatch):
    """`read_page` tells the page's polarity once for all its looks at the ink (each told it alone measures the
    page's light again); each look given it finds what it finds telling it itself, in either polarity."""
    from textrec.processing import page_reading
    from textrec.processing.inference import LineReading

    page, polygons, _ = newspaper_with_column_rules()
    boxes = [polygon_to_box(polygon) for polygon in polygons]
    for grey, light_text in ((np.asarray(page), False), (255 - np.asarray(page), True)):
        assert page_reading.vertical_rules(grey, polygons, light_text) == page_reading.vertical_rules(grey, polygons)
        assert page_reading.horizontal_rules(grey, polygons, light_text) == page_reading.horizontal_rules(
            grey, polygons)
        assert page_reading.column_gutters(grey, polygons, light_text) == page_reading.column_gutters(grey, polygons)
        assert page_reading.distinct_lines(grey, boxes, light_text) == page_reading.distinct_lines(grey, boxes)
        assert page_reading.missed_marks(grey, polygons, light_text) == page_reading.missed_marks(grey, polygons)
        assert len(page_reading.vertical_rules(grey, polygons, light_text)) == 2  # found in either polarity
    told = []
    monkeypatch.setattr(page_reading, "page_has_light_text",
                        lambda grey: told.append(grey.shape) or page_has_light_text(grey))
    monkeypatch.setattr(page_reading, "iter_recognize", lambda model, processor, crops, **kwargs: (
        (index, LineReading("print", 0.99, []), None) for index in range(len(crops))))
    detector = lambda image: {"scores": [0.9] * len(polygons), "polygons": polygons, "boxes": boxes}
    reading = page_reading.read_page(page, (None, None), detector, auto_rotate=False)
    assert len(reading.lines) == 3 * len(polygons) // 2 and len(told) == 1


@pytest.mark.parametrize("axis", [0, 1])
def test_a_masks_widening_and_closing_along_an_axis_are_scipys_binary_ones(axis):
    """`widened_along` and `closed_along` (running maxima and minima) give what `ndimage.binary_dilation` and
    `binary_closing` give with a line as their structure, at the mask's edges too and for lines of even length."""
    from scipy import ndimage

    from textrec.processing.page_reading import closed_along, widened_along

    rng = np.random.default_rng(0)
    for _ in range(30):
        mask = rng.random(tuple(rng.integers(1, 50, 2))) < rng.random()
        for size in range(1, 10):
            line = np.ones((size, 1) if axis == 0 else (1, size), dtype=bool)
            assert np.array_equal(widened_along(mask, size, axis), ndimage.binary_dilation(mask, structure=line))
        for gap in range(4):
            line = np.ones((2 * gap + 1, 1) if axis == 0 else (1, 2 * gap + 1), dtype=bool)
            assert np.array_equal(closed_along(mask, gap, axis), ndimage.binary_closing(mask, structure=line))


@pytest.mark.parametrize("axis", [0, 1])
def test_a_mask_shifted_line_by_line_is_what_indexing_each_pixel_gives(axis):
    """`shifted_along` moves each line across `axis` by its own shift as indexing every pixel does (False where the
    shift takes it off the mask), for a page's skews and for shifts longer than the mask."""
    from textrec.processing.page_reading import shifted_along

    rng = np.random.default_rng(0)
    for trial in range(300):
        mask = rng.random(tuple(rng.integers(1, 40, 2))) < 0.3
        count, length = mask.shape[1 - axis], mask.shape[axis]
        slope = rng.normal(0, 0.1 if trial % 2 else 3.0)
        shifts = np.round(np.arange(count) * slope).astype(np.int64)
        source = np.arange(length)[:, None] + shifts[None, :]  # (position along the axis, line)
        inside = (source >= 0) & (source < length)
        lines = np.broadcast_to(np.arange(count)[None, :], source.shape)
        clipped = np.clip(source, 0, length - 1)
        expected = np.where(inside, mask[clipped, lines] if axis == 0 else mask[lines, clipped], False)
        assert np.array_equal(shifted_along(mask, shifts, axis), expected if axis == 0 else expected.T)


def test_a_tiles_neighbourhood_medians_are_pils_median_filters():
    """`neighbourhood_medians` (a sorting network over a stack of tiles) gives PIL's 3 x 3 median filter inside each
    tile, with ties and without, as `paper_grain` measured the grain before."""
    from PIL import ImageFilter

    from textrec.processing.page_reading import neighbourhood_medians

    rng = np.random.default_rng(0)
    for _ in range(20):
        tiles = rng.integers(0, rng.choice([4, 256]), size=(2, *rng.integers(3, 60, 2)), dtype=np.uint8)
        for tile, medians in zip(tiles, neighbourhood_medians(tiles)):
            filtered = np.asarray(Image.fromarray(tile).filter(ImageFilter.MedianFilter(3)))
            assert np.array_equal(medians, filtered[1:-1, 1:-1])


def test_a_skewed_line_is_cut_out_level():
    page = Image.new("L", (400, 200), 255)
    ImageDraw.Draw(page).text((50, 80), "level text", fill=0, font=ImageFont.load_default(size=30))
    turned = page.rotate(3, resample=Image.Resampling.BICUBIC, fillcolor=255)
    angle, centre = math.radians(3), np.array([200, 100])
    rotation = np.array([[math.cos(angle), math.sin(angle)], [-math.sin(angle), math.cos(angle)]])
    polygon = [(centre + rotation @ (np.array(point) - centre)).tolist() for point in ([45, 78], [230, 78], [230, 118], [45, 118])]
    crop = np.asarray(crop_line(turned, polygon)) < 128
    rows = np.nonzero(crop.any(axis=1))[0]
    assert crop.shape[1] > 150 and rows.max() - rows.min() < 34  # level: the ink spans about one text height


def test_a_page_reading_gives_text_json_and_hocr():
    page = PageReading(width=100, height=50, lines=[PageLine("a <b>", 0.9, 0.8, [1, 2, 30, 12]),
                                                    PageLine("c", 0.5, 0.7, [1, 20, 10, 30])])
    assert page.text == "a <b>\nc"
    assert json.loads(page.to_json())["lines"][0]["box"] == [1, 2, 30, 12]
    hocr = page.to_hocr("scan.png")
    assert "class='ocr_line'" in hocr and "bbox 1 2 30 12; x_wconf 90" in hocr and "a &lt;b&gt;" in hocr


def test_runs_read_with_unlikely_characters_are_left_out_of_the_page(monkeypatch):
    """Marks that are not text (a signature, a stamp) read as a few unlikely characters: a run whose mean character
    confidence is under `min_character_confidence` is left out, a long line of likely ones kept whatever its
    product; the line's box and confidence are those of the runs kept."""
    from textrec.processing import page_reading
    from textrec.processing.inference import LineReading

    readings = [LineReading("The committee met on Tuesday", 0.6 ** (1 / 4), []),  # 28 characters, product 0.88
                LineReading("at noon.", 0.9, []), LineReading("gre", 0.3**3, []), LineReading("", 1.0, [])]
    assert page_reading.character_confidence(readings[2]) == pytest.approx(0.3)
    assert page_reading.character_confidence(readings[3]) == 0.0
    searches = []

    def recognize(model, processor, crops, **kwargs):
        if len(crops) != len(readings):  # the doubtful runs read again narrowed: nothing more in them
            return ((index, LineReading("", 1.0, []), None) for index in range(len(crops)))
        searches.append(kwargs["num_beams"])
        return ((index, reading, None) for index, reading in enumerate(readings))

    monkeypatch.setattr(page_reading, "iter_recognize", recognize)
    boxes = [[10.0, 10.0, 300.0, 40.0], [320.0, 10.0, 400.0, 40.0], [20.0, 100.0, 200.0, 190.0], [20.0, 220, 60, 240]]
    detector = lambda page: {"scores": [0.9] * 4, "boxes": boxes, "polygons": [box_to_polygon(box) for box in boxes]}
    page = Image.new("L", (420, 260), 255)
    ImageDraw.Draw(page).rectangle([20, 15, 390, 35], fill=0)  # ink in every box, so that none is faint
    for box in boxes[2:]:
        ImageDraw.Draw(page).rectangle([box[0] + 5, box[1] + 5, box[2] - 5, box[3] - 5], fill=0)

    kept = page_reading.read_page(page, (None, None), detector, auto_rotate=False)
    assert kept.text == "The committee met on Tuesday at noon."
    assert kept.lines[0].box == [10.0, 10.0, 400.0, 40.0]
    assert kept.lines[0].confidence == pytest.approx(0.6 ** (1 / 4) * 0.9)
    every_run = page_reading.read_page(page, (None, None), detector, min_character_confidence=0.0, num_beams=1,
                                       auto_rotate=False)
    assert every_run.text == "The committee met on Tuesday at noon.\ngre"
    assert searches == [None, 1]  # the recognizer's own search unless told


def test_a_line_read_as_marks_alone_is_left_out_of_the_page(monkeypatch):
    """Specks on the paper and an ornament's flourish read confidently as `-`, `*` or `\\` make no line of text: a line
    read as no letter or digit is left out (a minimum character confidence of 0 keeps it); a line of words with marks
    in it, and a page number between its dashes, are kept."""
    from textrec.processing import page_reading
    from textrec.processing.inference import LineReading

    texts = ["Aufklärung ist der Ausgang", "--", "* )", "— „Nun", "12"]
    monkeypatch.setattr(page_reading, "iter_recognize", lambda model, processor, crops, **kwargs: (
        (index, LineReading(texts[index] if len(crops) == len(texts) else "", 0.99, []), None)
        for index in range(len(crops))))
    boxes = [[20.0, 20 + 50 * row, 380.0, 50 + 50 * row] for row in range(len(texts))]
    detector = lambda page: {"scores": [0.9] * len(boxes), "boxes": boxes,
                             "polygons": [box_to_polygon(box) for box in boxes]}
    page = Image.new("L", (400, 280), 255)
    for box in boxes:
        ImageDraw.Draw(page).rectangle([box[0] + 5, box[1] + 8, box[2] - 5, box[3] - 8], fill=0)
    read = page_reading.read_page(page, (None, None), detector, auto_rotate=False)
    assert read.text.split("\n") == ["Aufklärung ist der Ausgang", "— „Nun", "12"]
    every = page_reading.read_page(page, (None, None), detector, auto_rotate=False, min_character_confidence=0.0)
    assert every.text.split("\n") == texts


def test_a_line_far_less_high_than_the_pages_lines_is_left_out(monkeypatch):
    """A receipt's torn edge read as letters (`AN A A NA`): a line less high than `MIN_LINE_HEIGHT_RATIO` of the page's
    median line is left out, not even read (`speck_rows`), a page number's line half as high as the text kept; a
    minimum character confidence of 0 reads and keeps every line."""
    from textrec.processing import page_reading
    from textrec.processing.inference import LineReading

    texts = ["TOTAL QUANTITY 1", "CASH 16.00", "— 21 —", "THANK YOU", "AN A A NA A"]
    read_crops = []

    def recognize(model, processor, crops, **kwargs):
        read_crops.append(len(crops))
        return ((index, LineReading(texts[index] if len(crops) >= len(texts) - 1 else "", 0.99, []), None)
                for index in range(len(crops)))

    monkeypatch.setattr(page_reading, "iter_recognize", recognize)
    boxes = [[20.0, 20.0, 380.0, 60.0], [20.0, 80.0, 380.0, 120.0], [150.0, 140.0, 250.0, 160.0],
             [20.0, 180.0, 380.0, 220.0], [20.0, 250.0, 380.0, 262.0]]
    detector = lambda page: {"scores": [0.9] * len(boxes), "boxes": boxes,
                             "polygons": [box_to_polygon(box) for box in boxes]}
    page = Image.new("L", (400, 280), 255)
    for x0, y0, x1, y1 in boxes:
        ImageDraw.Draw(page).rectangle([x0 + 5, y0 + 3, x1 - 5, y1 - 3], fill=0)
    assert 12 < page_reading.MIN_LINE_HEIGHT_RATIO * 40 < 20
    read = page_reading.read_page(page, (None, None), detector, auto_rotate=False)
    assert read.text.split("\n") == texts[:4]
    assert max(read_crops) == 4
    read_crops.clear()
    every = page_reading.read_page(page, (None, None), detector, auto_rotate=False, min_character_confidence=0.0)
    assert every.text.split("\n") == texts
    assert max(read_crops) == 5


def grainy_paper(size=(400, 280), grain: float = 12.0, seed: int = 0) -> np.ndarray:
    """Light paper (grey 215) with a normal grain of `grain` grey levels, as a scanner gives a blank sheet."""
    noise = np.random.default_rng(seed).normal(0.0, grain, size[::-1])
    return np.clip(215.0 + noise, 0, 255).round().astype(np.uint8)


def test_a_pages_grain_is_measured_in_grey_levels():
    from textrec.processing.page_reading import paper_grain

    assert paper_grain(np.full((300, 400), 230, dtype=np.uint8)) == 1.0  # no grain: the floor
    assert 10.0 < paper_grain(grainy_paper(grain=12.0)) < 14.0
    print_on_clean_paper = np.full((300, 400), 235, dtype=np.uint8)
    print_on_clean_paper[40:260:20, 30:370] = 20  # a line of ink every 20 rows: its edges do not count as grain
    assert paper_grain(print_on_clean_paper) <= 1.5


def test_runs_no_deeper_than_the_papers_grain_are_not_read(monkeypatch):
    """A blank sheet's grain read as single figures (`4`, `2`, `1`): runs whose ink is no deeper than
    `GRAIN_INK_DEPTHS` times the page's grain are not read, print on the same grainy paper is; a page of such runs
    alone is read as no line without reading any; a minimum character confidence of 0 reads them all."""
    from textrec.processing import page_reading
    from textrec.processing.inference import LineReading

    read_crops = []

    def recognize(model, processor, crops, **kwargs):
        read_crops.extend(crops)
        return ((index, LineReading(f"line {len(read_crops) - len(crops) + index}", 0.99, []), None)
                for index in range(len(crops)))

    monkeypatch.setattr(page_reading, "iter_recognize", recognize)
    boxes = [[20.0, 20.0, 380.0, 60.0], [20.0, 80.0, 380.0, 120.0], [20.0, 150.0, 380.0, 190.0],
             [20.0, 220.0, 380.0, 260.0]]
    detector = lambda page: {"scores": [0.9] * len(boxes), "boxes": boxes,
                             "polygons": [box_to_polygon(box) for box in boxes]}
    blank = Image.fromarray(grainy_paper())
    printed = blank.copy()
    for x0, y0, x1, y1 in boxes[:2]:  # print on the first two lines; grain alone on the others
        for x in range(int(x0) + 8, int(x1) - 8, 24):
            ImageDraw.Draw(printed).rectangle([x, y0 + 8, x + 14, y1 - 8], fill=40)
    read = page_reading.read_page(printed, (None, None), detector, auto_rotate=False)
    assert read.text.split("\n") == ["line 0", "line 1"] and len(read_crops) == 2
    read_crops.clear()
    assert page_reading.read_page(blank, (None, None), detector, auto_rotate=False).lines == [] and not read_crops
    every = page_reading.read_page(blank, (None, None), detector, auto_rotate=False, min_character_confidence=0.0)
    assert len(every.lines) == 4 and len(read_crops) >= 4  # the grain parted into pieces: each read


def dithered_page(paper: int = 200) -> Image.Image:
    """Bars of print on grey paper, scanned in 1 bit: the paper's grey dithered into dots (PIL's Floyd-Steinberg)."""
    page = Image.new("L", (500, 300), paper)
    for top in (40, 110, 180):
        ImageDraw.Draw(page).rectangle([30, top, 470, top + 30], fill=0)
    return page.convert("1").convert("L")


def test_a_one_bit_scans_dithered_paper_is_told_from_binarised_print():
    from textrec.processing.page_reading import is_dithered

    assert all(is_dithered(np.asarray(dithered_page(paper))) for paper in (235, 200, 170))
    binarised = dithered_page(255)  # white paper: no dots, print of two levels as a binarised scan has
    assert not is_dithered(np.asarray(binarised))
    assert not is_dithered(np.asarray(Image.new("L", (500, 300), 200)))
    assert not is_dithered(grainy_paper())


def test_a_dithered_page_is_read_with_its_dots_merged_into_their_grey():
    """A 1-bit scan of grey paper was read as dozens of lines of marks (its dots taken for print): the detector and
    the recognizer are given it softened (`DITHER_SOFTENING`), its paper one grey, no dot standing apart."""
    from textrec.processing import page_reading

    given = []

    def detector(page):
        given.append(np.asarray(page.convert("L")))
        return {"scores": [], "boxes": [], "polygons": []}

    page_reading.read_page(dithered_page(200), (None, None), detector, auto_rotate=False)
    paper = given[0][80:100, 40:460]  # between the first two bars
    assert paper.std() < 20 and abs(float(paper.mean()) - 200) < 25 and not page_reading.is_dithered(given[0])
    given.clear()
    page_reading.read_page(dithered_page(255), (None, None), detector, auto_rotate=False)
    assert set(np.unique(given[0])) <= {0, 255}  # binarised print is read as it is


def test_a_run_read_doubtfully_is_read_again_narrowed(monkeypatch):
    """A run read under the confidence floor is read again narrowed (`narrowed_line`: 0.6 of its width, softened), and
    that reading is taken where it is confident (`NARROWED_MIN_CONFIDENCE`) and more so than the first; a run read
    confidently is read once; a mark still read doubtfully is left out."""
    from textrec.processing import page_reading
    from textrec.processing.inference import LineReading

    first = [LineReading("TOTAL", 0.95**5, []), LineReading("IS -DO", 0.35**6, []), LineReading("gre", 0.3**3, [])]
    again = [LineReading("16.00", 0.98**5, []), LineReading("qe", 0.6**2, [])]
    sizes = []

    def recognize(model, processor, crops, **kwargs):
        sizes.append([crop.size for crop in crops])
        return ((index, reading, None) for index, reading in enumerate(first if len(sizes) == 1 else again))

    monkeypatch.setattr(page_reading, "iter_recognize", recognize)
    boxes = [[10.0, 10.0, 110.0, 40.0], [300.0, 10.0, 420.0, 40.0], [20.0, 100.0, 200.0, 190.0]]
    detector = lambda page: {"scores": [0.9] * 3, "boxes": boxes, "polygons": [box_to_polygon(box) for box in boxes]}
    page = Image.new("L", (440, 220), 255)
    for x0, y0, x1, y1 in boxes:
        ImageDraw.Draw(page).rectangle([x0 + 5, y0 + 5, x1 - 5, y1 - 5], fill=0)
    reading = page_reading.read_page(page, (None, None), detector, auto_rotate=False)
    assert reading.text == "TOTAL 16.00"
    assert sizes == [[(100, 30), (120, 30), (180, 90)], [(72, 30), (108, 90)]]  # the doubtful two, narrowed


def test_double_width_dot_print_reads_once_narrowed():
    """What a receipt printer's double-width dots print (its totals), drawn by the data engine's dot printer, reads
    wrong as printed and right narrowed."""
    from textrec.processing.data.capture_effects import dot_matrix
    from textrec.processing.inference import iter_recognize, load_recognizer
    from textrec.processing.page_reading import NARROWED_MIN_CONFIDENCE, character_confidence, narrowed_line

    lines, texts = [], ["TOTAL 16.00", "CASH 52.00", "CHANGE 0.00"]
    for text in texts:
        line = Image.new("L", (300, 48), 245)
        ImageDraw.Draw(line).text((8, 6), text, fill=30, font_size=32)
        lines.append(dot_matrix(line.resize((600, 48), Image.Resampling.BICUBIC), np.random.default_rng(0), 24))
    model, processor = load_recognizer("crnn-lines")
    read = {index: reading for index, reading, _ in iter_recognize(
        model, processor, lines + [narrowed_line(line) for line in lines], progress=False, output_confidences=True)}
    assert [read[index].text for index in range(3)] != texts
    assert [read[index].text for index in range(3, 6)] == texts
    assert all(character_confidence(read[index]) >= NARROWED_MIN_CONFIDENCE for index in range(3, 6))


def test_a_page_on_its_side_or_upside_down_is_read_upright_and_boxed_where_it_lies():
    """The page reader turns a page given a quarter, half or three quarters turned upright (the detector finds glyphs,
    not lines, on a page on its side; the longest runs read better the right way up): the same text, the boxes in the
    pixels of the image as given, and `rotation` (degrees counter-clockwise) in the JSON and in hOCR's textangle.
    Before, such a page read as junk with no word (the 85 real development pages turned 90 or 180 degrees now read
    as scanned: `benchmark_pages.py --rotate`)."""
    from textrec.processing.data.synthetic_pages import render_page
    from textrec.processing.inference import load_recognizer
    from textrec.processing.page_reading import load_line_detector, point_after_turn, read_page, turned

    recognizer, detector = load_recognizer("crnn-lines"), load_line_detector("line-detector")
    page, _ = render_page(5, 1)
    upright = read_page(page, recognizer, detector)
    assert upright.rotation == 0 and len(upright.lines) > 20
    for rotation in (90, 180, 270):
        reading = read_page(turned(page, rotation), recognizer, detector)
        assert reading.rotation == (360 - rotation) % 360 and reading.text == upright.text
        assert (reading.width, reading.height) == turned(page, rotation).size
        for line, upright_line in zip(reading.lines, upright.lines):
            corners = [point_after_turn(x, y, rotation, *page.size) for x, y in (upright_line.box[:2], upright_line.box[2:])]
            expected = [*np.min(corners, axis=0), *np.max(corners, axis=0)]
            assert np.allclose(line.box, expected, atol=1.0), (line.box, expected)
        assert json.loads(reading.to_json())["rotation"] == reading.rotation
        assert f"textangle {rotation}" in reading.to_hocr()
    assert read_page(turned(page, 180), recognizer, detector, auto_rotate=False).text != upright.text


def test_an_upright_page_read_confidently_is_not_read_again_to_tell_its_orientation(monkeypatch):
    """Whether a page is upside down is told from its own reading: an upright page whose widest runs read confidently
    (`READ_UPRIGHT_CONFIDENCE`) is read in one pass over its runs (then its doubtful runs narrowed), nothing read before
    or again. Before, its six longest runs were read first to tell its orientation (a tenth of a receipt page's time,
    a seventh of a form's)."""
    from textrec.processing import page_reading
    from textrec.processing.data.synthetic_pages import render_page
    from textrec.processing.inference import load_recognizer

    recognizer, detector = load_recognizer("crnn-lines"), page_reading.load_line_detector("line-detector")
    batches = []
    iter_recognize = page_reading.iter_recognize

    def counted(model, processor, images, *args, **kwargs):
        images = list(images)
        batches.append(len(images))
        return iter_recognize(model, processor, images, *args, **kwargs)

    monkeypatch.setattr(page_reading, "iter_recognize", counted)
    page = render_page(5, 1)[0]
    reading = page_reading.read_page(page, recognizer, detector)
    runs = sum(len(line.polygons) for line in reading.lines)
    assert reading.rotation == 0 and len(reading.lines) > 20
    assert len(batches) <= 2 and batches[0] >= runs, batches
    # a page on its side lies one way up as often as the other: its longest runs are read both ways up before it,
    # and the page once
    for rotation in (90, 270):
        batches.clear()
        assert page_reading.read_page(page_reading.turned(page, rotation), recognizer, detector).text == reading.text
        assert len([size for size in batches if size > runs // 2]) == 1, batches


def test_synthetic_pages_are_reproducible_and_their_lines_lie_on_the_page():
    from textrec.processing.data.synthetic_pages import render_page

    first, lines = render_page(3, 1)
    again, lines_again = render_page(3, 1)
    assert np.array_equal(np.asarray(first), np.asarray(again)) and lines == lines_again
    assert lines and all(line["text"].strip() for line in lines)
    for line in lines:
        x0, y0, x1, y1 = polygon_to_box(line["polygon"])
        assert -2 <= x0 < x1 <= first.width + 2 and -2 <= y0 < y1 <= first.height + 2


def test_book_pages_carry_page_numbers_between_spaced_dashes_boxed_as_one_line():
    """The real book pages number themselves `— 170 —`, the dashes set well apart from the number; the detector, which
    had never seen that, boxed the number alone. The engine's book pages carry such numbers, one line each, the box
    around the dashes too."""
    from textrec.processing.data.fonts import list_fonts
    from textrec.processing.data.synthetic_pages import _number_page, _Typesetter, render_page

    assert any(re.fullmatch(r"[—–-] \d+ [—–-]", line["text"]) for index in range(16) for line in render_page(7, index)[1])
    fonts = tuple(str(path) for path in list_fonts("print"))[:5]
    spaced = 0
    for seed in range(12):
        page = Image.new("L", (600, 800), 255)
        setter = _Typesetter(np.random.default_rng(seed), page, 0, None)
        left, top, right, bottom = _number_page(setter, fonts, (50, 40, 550, 760), (14, 30))
        (line,) = setter.lines
        x0, y0, x1, y1 = (round(value) for value in polygon_to_box(line["polygon"]))
        assert (left, right) == (50, 550) and (y1 <= top or y0 >= bottom)  # the text's room is left free of it
        assert abs((x0 + x1) / 2 - 300) < 3  # centred
        columns = np.flatnonzero((np.asarray(page.crop((x0, y0, x1, y1))) < 128).any(axis=0))
        assert columns[0] <= 4 and columns[-1] >= x1 - x0 - 5  # the box's ends are ink: the dashes' when there are
        if re.fullmatch(r"[—–-] \d+ [—–-]", line["text"]):
            spaced += 1
            assert np.diff(columns).max() > (y1 - y0) / 4  # the dashes set apart from the number
        else:
            assert re.fullmatch(r"\d+", line["text"])
    assert 4 <= spaced <= 11


def test_a_page_number_boxed_without_its_dashes_is_lengthened_over_them():
    """`— 170 —` with the dashes set two heights apart: the detector boxes `170` (8 of the 13 development book pages);
    the run is lengthened over both dashes, and the runs it then covers are left out. A number with a dash on one side
    only, a long line between dashes and a run whose dash lies in another run keep their boxes."""
    page = Image.new("L", (900, 300), 240)
    draw = ImageDraw.Draw(page)
    draw.rectangle((290, 47, 370, 55), fill=20)  # dashes 9 rows high, about the figures' middle, 40 columns apart
    draw.rectangle((530, 47, 610, 55), fill=20)
    draw.rectangle((120, 47, 200, 55), fill=20)  # and one further than DASH_REACH_HEIGHTS
    draw.text((420, 30), "170", fill=20, font_size=36)
    draw.rectangle((290, 187, 370, 195), fill=20)  # one dash only
    draw.text((420, 170), "171", fill=20, font_size=36)
    grey = np.asarray(page)
    number = box_to_polygon([410, 28, 490, 78])
    inside = box_to_polygon([470, 30, 500, 70])  # a piece of the number detected again
    alone = box_to_polygon([410, 168, 490, 218])
    polygons, kept, page_numbers = flanking_dashes(grey, [number, inside, alone])
    assert kept == [0, 2]
    assert page_numbers == [0]
    assert polygon_to_box(polygons[0]) == pytest.approx([290, 28, 611, 78], abs=1)
    assert polygon_to_box(polygons[1]) == polygon_to_box(alone)
    long_line = box_to_polygon([330, 35, 525, 72])  # longer than PAGE_NUMBER_MAX_HEIGHTS of its height
    assert flanking_dashes(grey, [long_line])[0] == [long_line]
    dash_run = box_to_polygon([520, 35, 620, 70])
    assert polygon_to_box(flanking_dashes(grey, [number, dash_run])[0][0]) == polygon_to_box(number)
    assert flanking_dashes(grey, []) == ([], [], [])

STACKED_TEXTS = ["The first line of print", "and the second below it", "a third one further down",
                 "with a fourth after it", "then a fifth line here", "and a sixth to close"]


def stacked_page() -> tuple[Image.Image, list]:
    """Six lines of print 40 pixels apart below a heading more than twice their size; the runs a detector gives of
    each, about 1.3 pitches high as the released detector's are (the heading's almost twice a line's)."""
    page = Image.new("L", (700, 400), 240)
    draw = ImageDraw.Draw(page)
    draw.text((40, 8), "A Heading", fill=20, font_size=72)
    for row, text in enumerate(STACKED_TEXTS):
        draw.text((40, 120 + 40 * row), text, fill=20, font_size=28)
    runs = [box_to_polygon([30, 0, 420, 100])] + [box_to_polygon([30, 108 + 40 * row, 420, 160 + 40 * row])
                                                 for row in range(len(STACKED_TEXTS))]
    return page, runs


def test_a_run_holding_two_lines_is_cut_between_them():
    """The detector takes two closely set lines together (a column's foot, most lines of a small dark scan): a run
    over lines 2 and 3 is cut at the paper between them, each part holding one line; the heading, twice as high as
    a line but one line of print, stays whole, as do the runs of one line."""
    page, runs = stacked_page()
    grey = np.asarray(page)
    joined = box_to_polygon([30, 148, 420, 240])  # lines 2 and 3 in one run
    given = [runs[0], runs[1], joined, *runs[4:]]
    polygons, sources = split_stacked_lines(grey, given)
    assert sources == [0, 1, 2, 2, 3, 4, 5]
    assert polygons[:2] == given[:2] and polygons[4:] == given[3:]
    middles = [(polygon_to_box(part)[1] + polygon_to_box(part)[3]) / 2 for part in polygons[2:4]]
    ink_rows = [np.flatnonzero((grey[150:240, 40:400] < 128).any(axis=1)) + 150]
    upper = [row for row in ink_rows[0] if row < 200]
    lower = [row for row in ink_rows[0] if row >= 200]
    assert min(upper) <= middles[0] <= max(upper) and min(lower) <= middles[1] <= max(lower)
    part_boxes = [polygon_to_box(part) for part in polygons[2:4]]
    assert part_boxes[0][3] < max(lower) and part_boxes[1][1] > min(upper)  # neither holds the other's line whole


def test_a_line_found_on_its_own_as_well_is_not_read_twice():
    """The run over lines 2 and 3 beside runs of line 2 itself (in two pieces): line 2 is read from them, the run
    gives line 3 alone."""
    page, runs = stacked_page()
    joined = box_to_polygon([30, 148, 420, 240])
    left, right = box_to_polygon([30, 148, 230, 200]), box_to_polygon([225, 148, 420, 200])
    polygons, sources = split_stacked_lines(np.asarray(page), [runs[0], left, right, joined, *runs[4:]])
    assert sources == [0, 1, 2, 3, 4, 5, 6]
    assert polygon_to_box(polygons[3])[1] > 190  # the part below the cut: line 3


def test_a_page_reads_each_of_two_lines_the_detector_took_together():
    """End to end: a detector that gives lines 2 and 3 as one run; the page reads all four lines, in order."""
    from textrec.processing.inference import load_recognizer
    from textrec.processing.page_reading import read_page

    crnn_lines = load_recognizer("crnn-lines")
    page, runs = stacked_page()
    given = [runs[1], box_to_polygon([30, 148, 420, 240]), *runs[4:]]

    def detector(image):
        return {"scores": [0.9] * len(given), "boxes": [polygon_to_box(run) for run in given], "polygons": given}

    reading = read_page(page, crnn_lines, detector, auto_rotate=False)
    assert reading.text.splitlines() == STACKED_TEXTS


MARGIN_TEXTS = ["The committee met on Tuesday", "and agreed to the budget", "for the coming year in full.",
                "Minutes were taken by the clerk", "and signed by the chair."]


def margin_number_page(angle: int) -> Image.Image:
    """Five lines of print and a filing number printed along the right margin, turned `angle` degrees
    counter-clockwise (270: read top to bottom, as the Bates numbers of scanned forms; 90: bottom to top), its first
    glyph beside the fourth line (270) or below the fifth (90)."""
    page = Image.new("L", (760, 560), 240)
    draw = ImageDraw.Draw(page)
    for row, text in enumerate(MARGIN_TEXTS):
        draw.text((40, 60 + 44 * row), text, fill=20, font_size=28)
    label = Image.new("L", (200, 36), 240)
    ImageDraw.Draw(label).text((6, 4), "82253362", fill=20, font_size=24)
    page.paste(label.rotate(angle, expand=True), (690, 200))
    return page


def test_a_number_printed_down_or_up_the_margin_is_read_as_one_line():
    """The detector finds lines across the page, and a number printed down a form's margin a glyph at a time (the
    Bates number on 17 of the 20 development forms read as `OO`, `N`, `ON`, `C`): the stack of glyph runs is read
    turned, whichever way reads it, as one line with its angle (JSON, hOCR's textangle), placed after the line
    its first glyph stands beside; the lines across the page read as before."""
    from textrec.processing.inference import load_recognizer
    from textrec.processing.page_reading import glyph_stacks, load_line_detector, read_page, run_detector

    recognizer, detector = load_recognizer("crnn-lines"), load_line_detector("line-detector")
    for angle, expected in ((270, [*MARGIN_TEXTS[:4], "82253362", MARGIN_TEXTS[4]]), (90, [*MARGIN_TEXTS, "82253362"])):
        page = margin_number_page(angle)
        assert len(glyph_stacks(run_detector(detector, page)["polygons"])) == 1
        reading = read_page(page, recognizer, detector)
        assert reading.text.splitlines() == expected
        number = reading.lines[expected.index("82253362")]
        assert number.angle == angle and reading.text_angle(number) == angle
        x0, y0, x1, y1 = number.box
        assert 680 < x0 < x1 < 730 and y1 - y0 > 100
        assert f"textangle {angle}" in reading.to_hocr()
        assert json.loads(reading.to_json())["lines"][expected.index("82253362")]["angle"] == angle
        assert all(line.angle == 0 for line in reading.lines if line is not number)
        turned_reading = PageReading(reading.width, reading.height, reading.lines, rotation=90)
        assert turned_reading.text_angle(number) == (angle - 90) % 360  # in the image as given, turned


def test_a_column_of_figures_is_read_as_it_lies_not_as_a_line_down_the_page():
    """A receipt's column of prices is a stack of short runs too (`glyph_stacks` finds it): read as they lie, its
    figures read better than the stack turned, and stay on their items' lines."""
    from textrec.processing.inference import load_recognizer
    from textrec.processing.page_reading import glyph_stacks, load_line_detector, read_page, run_detector

    recognizer, detector = load_recognizer("crnn-lines"), load_line_detector("line-detector")
    figures = ["12", "30", "15", "26", "48", "31", "70"]
    page = Image.new("L", (600, 420), 240)
    draw = ImageDraw.Draw(page)
    for row, figure in enumerate(figures):
        draw.text((40, 40 + 30 * row), f"Item number {row + 1}", fill=20, font_size=26)
        draw.text((480, 40 + 30 * row), figure, fill=20, font_size=26)
    assert glyph_stacks(run_detector(detector, page)["polygons"])
    reading = read_page(page, recognizer, detector)
    assert [line.text.split()[-1] for line in reading.lines] == figures
    assert all(line.angle == 0 for line in reading.lines)


def test_only_stacks_of_short_runs_one_below_the_other_may_be_lines_down_the_page():
    from textrec.processing.page_reading import glyph_stacks

    glyphs = [box_to_polygon([700, 200 + 14 * row, 720, 214 + 14 * row]) for row in range(8)]
    lines = [box_to_polygon([40, 60 + 44 * row, 440, 94 + 44 * row]) for row in range(5)]
    assert glyph_stacks(lines + glyphs) == [list(range(5, 13))]
    assert glyph_stacks(lines) == []
    assert glyph_stacks(glyphs[:2]) == []  # too few: two glyphs, or a word's pieces
    spaced = [box_to_polygon([700, 200 + 40 * row, 720, 214 + 40 * row]) for row in range(8)]
    assert glyph_stacks(spaced) == []  # a line's height of paper between each: not one word's glyphs
    astray = [box_to_polygon([700 + 30 * (row % 2), 200 + 14 * row, 720 + 30 * (row % 2), 214 + 14 * row])
              for row in range(8)]
    assert glyph_stacks(astray) == []  # not one above the other


RECEIPT_ITEMS = [("Tilapia", "28.00"), ("White Rice", "5.00"), ("Herbal Tea", "3.00"), ("Vege Item", "16.00")]


def receipt_page() -> tuple[Image.Image, list]:
    """A receipt's items, each under a line of its quantity, `1`, far left of its price; the runs the released
    detector gives of such a receipt (development page 0059): every line but the lone quantities."""
    page = Image.new("L", (640, 400), 235)
    draw = ImageDraw.Draw(page)
    draw.text((40, 30), "Qty  Description", fill=25, font_size=24)
    runs = [[35, 26, 217, 64]]
    for row, (item, price) in enumerate(RECEIPT_ITEMS):
        top = 80 + 70 * row
        draw.text((80, top), "1", fill=25, font_size=24)
        draw.text((400, top), f"D {price} SR", fill=25, font_size=24)
        draw.text((40, top + 32), item, fill=25, font_size=24)
        runs += [[394, top - 2, 524, top + 30], [34, top + 30, 170, top + 64]]
    return page, [box_to_polygon(run) for run in runs]


def test_a_receipts_lone_quantities_the_detector_left_out_are_read_on_their_lines():
    """Ink the detector left out on a detected run's line (a lone `1` far left of its price) is read as a run of its
    own, in its place along the line; what the runs' boxes cut off beside them, specks and ink in the margin are
    not."""
    from textrec.processing.inference import load_recognizer
    from textrec.processing.page_reading import missed_marks, read_page

    page, runs = receipt_page()

    def detector(image):
        return {"scores": [0.9] * len(runs), "boxes": [polygon_to_box(run) for run in runs], "polygons": runs}

    reading = read_page(page, load_recognizer("crnn-lines"), detector, auto_rotate=False)
    lines = reading.text.upper().splitlines()
    assert lines[1::2] == [f"1 D {price} SR" for _, price in RECEIPT_ITEMS], lines
    assert lines[2::2] == [item.upper() for item, _ in RECEIPT_ITEMS]

    grey = np.asarray(page)
    marks, partners = missed_marks(grey, runs)
    assert len(marks) == len(RECEIPT_ITEMS) and partners == [1, 3, 5, 7]
    for mark, (_, top, _, bottom) in zip(marks, [polygon_to_box(runs[partner]) for partner in partners]):
        x0, y0, x1, y1 = polygon_to_box(mark)
        assert x0 < 82 and 88 < x1 < 110 and (y0, y1) == (top, bottom)  # the `1`, at its line's height
    marked = page.copy()
    draw = ImageDraw.Draw(marked)
    draw.ellipse([250, 90, 252, 92], fill=25)  # a speck on the first item's line
    draw.text((600, 80), "7", fill=25, font_size=24)  # a mark in the margin, beyond every line's end
    assert len(missed_marks(np.asarray(marked), runs)[0]) == len(RECEIPT_ITEMS)
    cut_short = [*runs[:1], box_to_polygon([96, 78, 530, 110]), *runs[2:]]  # a run's box ending just beside the `1`
    assert len(missed_marks(grey, cut_short)[0]) == len(RECEIPT_ITEMS) - 1


def text_page() -> Image.Image:
    page = Image.new("L", (240, 160), 235)
    draw = ImageDraw.Draw(page)
    for row in range(4):
        draw.text((10, 10 + 30 * row), "Printed words here", fill=20, font_size=18)
    return page


def test_show_through_is_the_pages_own_print_mirrored_and_faint():
    from textrec.processing.data.capture_effects import show_through

    page = text_page()
    seen = show_through(page, np.random.default_rng(0))
    assert (seen.size, seen.mode) == (page.size, "L")
    assert np.array_equal(np.asarray(seen), np.asarray(show_through(page, np.random.default_rng(0))))
    before, after = np.asarray(page, dtype=np.int16), np.asarray(seen, dtype=np.int16)
    assert (after <= before).all()  # it only darkens
    # Faint: the paper it darkens stays far lighter than the print.
    darkened = (before == 235) & (after < 235)
    assert darkened.sum() > 100 and after[darkened].min() > 120


def test_specks_are_small_dark_dots_on_the_paper():
    from textrec.processing.data.capture_effects import specks

    page = Image.new("L", (400, 300), 230)
    ImageDraw.Draw(page).text((10, 10), "ink", fill=10, font_size=20)
    dusty = np.asarray(specks(page, np.random.default_rng(1)))
    changed = dusty != np.asarray(page)
    assert 0 < changed.mean() < 0.1
    from scipy import ndimage

    regions, count = ndimage.label(changed)
    assert count > 3 and max(np.bincount(regions.ravel())[1:]) < 400  # many spots, none large


@pytest.fixture(scope="module")
def trained_detector(tmp_path_factory):
    """A tiny detector trained 2 steps by `textrec-train-line-detector`, and a page image."""
    from textrec.scripts import train_line_detector

    folder = tmp_path_factory.mktemp("detector")
    train_line_detector.run(["--num_train_pages", "4", "--num_eval_pages", "1", "--max_steps", "2",
                             "--per_device_train_batch_size", "2", "--crop_size", "128", "--stage_channels", "4,4,4,8,8",
                             "--save_steps", "2", "--eval_steps", "2", "--output_dir", str(folder / "detector")])
    page = Image.new("L", (300, 200), 255)
    ImageDraw.Draw(page).rectangle([20, 40, 250, 60], fill=0)
    page.save(folder / "page.png")
    return folder


@pytest.mark.slow
def test_a_trained_detector_folder_loads_and_reads_without_textrec(trained_detector, tmp_path):
    """What `textrec-train-line-detector` saves, and what `textrec-export` writes of it, load with AutoModel and
    AutoImageProcessor from the folder's own code where textrec cannot be imported, and give the same boxes."""
    from textrec.scripts import export as export_cli

    from .remote_code import run_without_textrec

    export_cli.run(["--model", str(trained_detector / "detector"), "--output_dir", str(tmp_path / "exported")])
    page = Image.open(trained_detector / "page.png")
    from textrec.processing.page_reading import load_line_detector

    model, processor = load_line_detector(str(trained_detector / "detector"))
    with torch.no_grad():
        outputs = model(**processor.preprocess([page], return_tensors="pt"))
    inside = json.loads(json.dumps(processor.post_process_line_detection(outputs, target_sizes=[(200, 300)], threshold=0.3)))
    for folder in (trained_detector / "detector", tmp_path / "exported"):
        code = f"""
import json, torch
from PIL import Image
from transformers import AutoImageProcessor, AutoModel
model = AutoModel.from_pretrained({str(folder)!r}, trust_remote_code=True).eval()
processor = AutoImageProcessor.from_pretrained({str(folder)!r}, trust_remote_code=True)
page = Image.open({str(trained_detector / 'page.png')!r})
with torch.no_grad():
    outputs = model(**processor.preprocess([page], return_tensors="pt"))
print(json.dumps(processor.post_process_line_detection(outputs, target_sizes=[(page.height, page.width)], threshold=0.3)))
"""
        outside = json.loads(run_without_textrec(code, tmp_path).strip().splitlines()[-1])
        assert outside == inside, folder


@pytest.mark.slow
def test_recognize_page_prints_lines_json_and_hocr(trained_detector, tmp_path, capsys):
    """`textrec-recognize --page`: a page's lines as text, one JSON object per page, or an hOCR file per page."""
    from textrec.scripts import recognize as recognize_cli

    page, detector = str(trained_detector / "page.png"), str(trained_detector / "detector")
    texts = recognize_cli.run(["--model", "crnn-lines", "--page", "--detector", detector, page])
    assert len(texts) == 1 and isinstance(texts[0], str)
    capsys.readouterr()
    recognize_cli.run(["--model", "crnn-lines", "--page", "--detector", detector, "--output_format", "json", page])
    reading = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert reading["path"] == page and reading["width"] == 300 and "lines" in reading
    recognize_cli.run(["--model", "crnn-lines", "--page", "--detector", detector, "--output_format", "hocr",
                       "--output_dir", str(tmp_path / "read"), page])
    assert "ocr_page" in (tmp_path / "read" / "page.hocr").read_text()
    with pytest.raises(SystemExit):
        recognize_cli.run(["--model", "crnn-lines", "--output_format", "hocr", page])  # hOCR describes pages
    capsys.readouterr()
    recognize_cli.run(["--model", "crnn-lines", "--page", "--no_auto_rotate", "--detector", detector, "--output_format",
                       "json", page])
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["rotation"] == 0
    with pytest.raises(SystemExit):
        recognize_cli.run(["--model", "crnn-lines", "--no_auto_rotate", page])  # how pages are read


def test_the_exported_detectors_card_snippet_finds_a_photos_lines_where_they_stand(tmp_path):
    """The `Use` snippet of the card `textrec-export` writes for `line-detector`, run as written on a JPEG stored on its
    side with an EXIF orientation (as phones store photos), gives the lines' boxes on the upright page: the processor
    reads the image upright, so the snippet's target size is the upright one's."""
    import re

    from textrec.processing.page_reading import detect_lines, load_line_detector
    from textrec.scripts import export as export_cli

    export_cli.run(["--model", "line-detector", "--output_dir", str(tmp_path / "exported")])
    card = (tmp_path / "exported" / "README.md").read_text()
    snippet = re.search(r"## Use\n.*?```python\n(.*?)```", card, re.S).group(1)
    upright = receipt_strip((900, 1200), lines=12).convert("RGB")
    exif = Image.Exif()
    exif[0x0112] = 6  # stored turned a quarter counter-clockwise: shown turned back clockwise
    upright.transpose(Image.Transpose.ROTATE_90).save(tmp_path / "photo.jpg", exif=exif, quality=95)
    snippet = re.sub(r'"[^"]*line-detector"', repr(str(tmp_path / "exported")), snippet)
    snippet = snippet.replace('"page.png"', repr(str(tmp_path / "photo.jpg")))
    namespace = {}
    exec(compile(snippet, "card snippet", "exec"), namespace)
    expected = np.asarray(detect_lines(*load_line_detector("line-detector"), upright)["boxes"])
    found = np.asarray(namespace["lines"]["boxes"])
    assert len(expected) >= 12 and found.shape == expected.shape and np.abs(found - expected).max() < 4


@pytest.mark.parametrize("options", [["--detector", "line-detector"], ["--min_character_confidence", "0.5"],
                                     ["--no_auto_rotate"], ["--pdf_dpi", "200"]])
def test_page_options_without_page_are_refused_not_ignored(options, tmp_path, capsys):
    """An option of the page reader given to the line reader is refused, naming `--page`, before any model loads."""
    from textrec.scripts import recognize as recognize_cli

    Image.new("L", (120, 32), 255).save(tmp_path / "line.png")
    with pytest.raises(SystemExit):
        recognize_cli.run(["--model", "crnn-lines", *options, str(tmp_path / "line.png")])
    assert "use it with --page" in capsys.readouterr().err


def test_training_continues_from_the_released_detector_by_its_short_name():
    from textrec.model_cards import released_model_path
    from textrec.processing.training.line_detection import LineDetectorModelArguments, build_detector

    model, processor = build_detector(LineDetectorModelArguments(model_name_or_path="line-detector"))
    released = LineDetectorConfig.from_pretrained(released_model_path("line-detector"))
    assert model.config.stage_channels == released.stage_channels and model.dtype == torch.float32
    assert processor.longest_edge == 1280
    with pytest.raises(FileNotFoundError, match="no such model folder or released name"):
        build_detector(LineDetectorModelArguments(model_name_or_path="no-such-detector"))


def printed_rows(size: tuple[int, int], pitch: int, columns: int = 3) -> Image.Image:
    """A page of `columns` columns of text lines `pitch` pixels apart."""
    page = Image.new("L", size, 240)
    draw = ImageDraw.Draw(page)
    column_width = size[0] // columns
    for column in range(columns):
        for y in range(pitch, size[1] - pitch, pitch):
            draw.text((column * column_width + 4, y), "Zeitung vom Tage und Abend " * 3, fill=20, font_size=max(6, int(pitch * 0.8)))
    return page


def test_the_line_pitch_of_a_page_of_regular_print_is_measured():
    from textrec.processing.image_processing_line_detection import estimate_line_pitch

    for pitch in (9, 14, 30):
        measured = estimate_line_pitch(np.asarray(printed_rows((1200, 1600), pitch)))
        assert measured is not None and abs(measured - pitch) <= 1, (pitch, measured)
    # No regular rows: a blank page, and scattered words.
    assert estimate_line_pitch(np.full((800, 600), 240, dtype=np.uint8)) is None
    scattered = Image.new("L", (600, 800), 240)
    rng = np.random.default_rng(0)
    for _ in range(40):
        ImageDraw.Draw(scattered).text((int(rng.integers(0, 500)), int(rng.integers(0, 780))), "word", fill=20,
                                       font_size=int(rng.integers(8, 40)))
    assert estimate_line_pitch(np.asarray(scattered)) is None


def test_a_page_of_small_print_is_detected_larger():
    processor = LineDetectionImageProcessor()
    # 4,000 pixels high with lines 24 pixels apart: 7.7 pixels at 1,280, brought to 20 (measured on the page
    # scaled to 2,560, to a pixel there).
    small = printed_rows((2800, 4000), 24, columns=5)
    assert processor.longest_edge_for(small) == pytest.approx(1280 * 20 / (24 * 1280 / 4000), rel=0.05)
    assert processor.longest_edge_for(printed_rows((1000, 1400), 30)) == 1280  # 27 pixels at 1,280: as it is
    processor.small_print_pitch = processor.small_print_line_height = None
    assert processor.longest_edge_for(small) == 1280
    processor = LineDetectionImageProcessor(max_longest_edge=2000, small_print_line_height=None)
    assert processor.longest_edge_for(small) == 2000


def receipt_strip(size: tuple[int, int], lines: int = 20, pitch: int = 40) -> Image.Image:
    """A till receipt's item lines (20-pixel type, `pitch` apart) at the top of a page of `size`, blank below."""
    page = Image.new("L", size, 255)
    draw = ImageDraw.Draw(page)
    for line in range(lines):
        draw.text((40, 40 + line * pitch), f"ITEM {line + 1:02d} WIDGET  {3.5 * (line + 1):8.2f}", fill=0, font_size=20)
    return page


def test_the_line_height_of_a_page_of_any_layout_is_measured():
    from textrec.processing.image_processing_line_detection import estimate_line_height

    # 20-pixel type: from the cap height to the descenders, about 15 pixels of ink a line
    for size in ((900, 1200), (900, 3000)):
        assert 12 <= estimate_line_height(np.asarray(receipt_strip(size))) <= 19
    assert 12 <= estimate_line_height(np.asarray(printed_rows((1200, 1600), 24))) <= 21
    assert estimate_line_height(np.full((800, 600), 240, dtype=np.uint8)) is None


def test_a_long_receipt_or_a_wide_strip_is_detected_larger_and_read(caplog):
    """A receipt's lines at the top of a page 7,000 pixels long were detected at 1,280 pixels along it, 3 pixels high,
    and read as 19 lines of junk; it is detected larger, within the pixels' limit, and read right; so is a strip 8,848
    pixels wide of two lines. A page not shrunk to be detected, or whose lines are high enough, is as before;
    one whose lines stay too small at the limit is detected at the limit, with a warning."""
    processor = LineDetectionImageProcessor()
    assert processor.longest_edge_for(receipt_strip((900, 1200))) == 1280
    long_receipt = receipt_strip((900, 7000))
    edge = processor.longest_edge_for(long_receipt)
    assert 4000 <= edge <= 2 * 7000 and 900 * 7000 * (edge / 7000) ** 2 <= processor.max_pixels
    wide = Image.new("L", (8848, 300), 255)
    ImageDraw.Draw(wide).text((40, 100), "FIRST LINE OF TEXT", fill=0, font_size=20)
    ImageDraw.Draw(wide).text((40, 160), "SECOND LINE 12.50", fill=0, font_size=20)
    assert processor.longest_edge_for(wide) > 4000
    from textrec.processing.inference import load_recognizer
    from textrec.processing.page_reading import load_line_detector, read_page

    recognizer, detector = load_recognizer("crnn-lines"), load_line_detector("line-detector")
    expected = [f"ITEM {line + 1:02d} WIDGET {3.5 * (line + 1):.2f}" for line in range(20)]
    read = [line.text for line in read_page(long_receipt, recognizer, detector).lines]
    assert sum(text.replace(" ", "") == line.replace(" ", "") for text, line in zip(read, expected)) >= 18, read
    # its rows' ink counted against the ink's reach, not the strip's width: two lines, not a line image
    assert [line.text for line in read_page(wide, recognizer, detector).lines] == ["FIRST LINE OF TEXT", "SECOND LINE 12.50"]
    small_limit = LineDetectionImageProcessor(max_longest_edge=1000)
    with caplog.at_level("WARNING"):
        edge = small_limit.longest_edge_for(long_receipt)
    assert 1280 < edge and 900 * 7000 * (edge / 7000) ** 2 <= small_limit.max_pixels < 900 * 7000 * ((edge + 2) / 7000) ** 2
    assert "read it cut into parts" in caplog.text


def test_a_page_a_few_pixels_across_reads_as_no_line_without_numpy_warnings():
    """A page narrower than the line pitch's strips (5 x 5 pixels) is read as no line, quietly (the pitch's strips
    were empty slices: `Mean of empty slice` on stderr)."""
    import warnings

    from textrec.processing.inference import load_recognizer
    from textrec.processing.page_reading import load_line_detector, read_page

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reading = read_page(Image.new("L", (5, 5), 255), load_recognizer("crnn-lines"), load_line_detector("line-detector"))
    assert reading.lines == []
