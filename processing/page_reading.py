"""Reading whole pages: the text-line detector finds the lines, reading order sorts them, a recognizer reads them.

    from textrec.processing.page_reading import load_line_detector, read_page
    from textrec.processing.inference import load_recognizer

    page = read_page("scan.png", load_recognizer("crnn-lines"), load_line_detector("line-detector"))
    print(page.text)            # one line per printed line, in reading order
    page.to_json(), page.to_hocr()

A page scanned or photographed on its side is turned a quarter before it is read (`quarter_turn`), then half a turn
where its longest runs read better so (`upside_down`); a page not on its side is turned half a turn where its reading
doubts it and its longest runs read better turned. Its lines' boxes are given in the image's own pixels.

Reading order (`reading_order`): the lines' positions are turned upright by the page's skew (the median direction of
the detected lines). Printed rules across the page's text (`horizontal_rules`) cut it first into sections read top
to bottom (a newspaper's feuilleton is read after the columns above its rule). Each section is cut recursively
(XY-cut): a printed rule between two columns of text (`vertical_rules`) or a wide vertical gap between them splits
the page into columns, read left to right (a box of lines narrower than a column, such as a masthead's ear beside the
title, is a column of its own where its lines stand beside none of the other side's: `_side_box`); otherwise
horizontal gaps split it into bands read top to bottom; what one
band holds side by side (an item and its price, a label and its value) is one output line, its runs joined by a
space, left to right. Where the detector joined lines of two justified columns across a newspaper's narrow gutter,
the gutter is still found (`JOINED_LINES_SHARE`) and `split_at_columns` cuts those lines there before they are read.
Runs of one band side by side lie one beside the other, not above it (`ROW_SIDE_OVERLAP_HEIGHTS`), and the pieces of
one printed line that the detector found a word space apart are read as one image (`join_line_pieces`).

What the detector, which learned lines of words across a page, does not give as lines is read beside them without
changing their order: a line printed up or down the margin, found a glyph at a time (`vertical_lines`), and ink it
left out on a line, such as a receipt's lone quantity (`missed_marks`).
"""

from __future__ import annotations

import copy
import html
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from PIL import Image, ImageFilter

from .document_pages import document_page_count, is_pdf, iter_document_pages
from .image_processing_line_detection import (
    CORE_INSET_RATIO,
    box_to_polygon,
    DETECTION_THRESHOLD,
    even_light,
    light_gain,
    Polygon,
    page_has_light_text,
    polygon_part,
    polygon_to_box,
)
from .image_processing_text_recognition import (
    load_image,
    may_be_page,
    normalize_capture,
    otsu_threshold,
    rule_pixels,
    text_line_count,
    weighted_median,
)
from .inference import LineReading, check_model_source, iter_recognize
from .luminance import grey_percentiles, sparse_ink_contrast
from .old_umlauts import write_page_umlauts_alike

COLUMN_GAP_HEIGHTS = 0.8
"""A vertical gap splits columns when it is at least this many median line heights wide ..."""
COLUMN_MIN_SHARE = 0.15
"""... and the text on each side spans at least this share of the region's width ..."""
COLUMN_MIN_LINES = 3
"""... and holds at least this many lines ..."""
COLUMN_MIN_LINE_HEIGHTS = 6
"""... whose median is at least this many line heights long (prices beside items are not a column of text)."""
SIDE_BOX_MIN_LINES = 6
"""A gap whose sides are not two columns so (under `COLUMN_MIN_SHARE` or `COLUMN_MIN_LINE_HEIGHTS`) still splits
columns where one side is a box of lines of its own (`_side_box`), set beside what the rest of the region holds (a
newspaper masthead's ears, each beside the title: the 1868 NZZ front page's boxes of 14 and 15 lines were read joined
line by line across the title). The box holds at least this many lines (at 4, a form's label and value fields stacked
three deep beside its title were cut apart: development forms 12.73% -> 12.84%) ..."""
SIDE_BOX_MAX_LEADING = 0.5
"""... set one below the other, the blank between them (their median) at most this share of their height (a receipt's
prices printed a line apart, between the lines of their items, are not a box), nor do they overlap by more (a logo's
or a letterhead's scattered pieces) ..."""
SIDE_BOX_SHARED_ROWS = 0.25
"""... one to a printed line: at most this share of them beside another of the box on one line (`_row_partners`; a
signature's or a stamp's pieces lie side by side) ..."""
SIDE_BOX_MIN_LENGTH = 3
"""... of lines at least this many times as long as they are high, by their median (words, not specks) ..."""
SIDE_BOX_PAIRED_SHARE = 0.25
"""... of which at most this share stand on one printed line with a run of the other side (`_row_partners`): a
receipt's prices each stand beside their item and stay with it."""
SHORT_LINES_ALIGNED_SHARE = 0.5
"""Short lines (a title page's, a poem's) are a column of their own beside a column of text (`_text_column`) across a
gap that no line crosses, at most `GUTTER_MAX_WIDTH_HEIGHTS` line heights wide, or across a printed rule the text is
set against (`_rule_cut`), where at most this share of them stand level with one of the text's lines (their middles
within `SHORT_LINE_LEVEL_HEIGHTS` line heights; `_short_lines_column`): a receipt's quantities and a form's labels
stand level with their items and fields and stay with them, and prices a line below their items stand further off."""
SHORT_LINE_LEVEL_HEIGHTS = 0.25
COLUMN_BRIDGE_SHARE = 0.05
"""... where up to this share of the region's lines (at least one) may cross the gap, each with lines of both
columns above and below it: a detection that joined two columns' lines (it goes to the side of its middle); not a
heading across the columns."""
JOINED_LINES_SHARE = 0.5
"""Between justified columns (a newspaper's) more may cross: up to this share of a column's lines (the median number of
lines above and below each line's middle), where at least `COLUMN_AMONG_SHARE` of them lie among lines of both
columns and each column has at least `JUSTIFIED_LINES_PER_CROSSING` lines per crossing one that end (or begin)
within `JUSTIFIED_EDGE_HEIGHTS` line heights of the gap: lines the detector joined across a narrow gutter
(`split_at_columns` cuts them there)."""
COLUMN_AMONG_SHARE = 0.75
JUSTIFIED_LINES_PER_CROSSING = 2
JUSTIFIED_EDGE_HEIGHTS = 1.5
WIDEST_GAP_SHARE = 0.9
"""A region is cut at its horizontal gaps at least this share as wide as its widest one."""
ROW_OVERLAP = 0.5
"""Two runs overlapping vertically by this share of the smaller one's height lie on one printed line."""
ROW_SIDE_OVERLAP_HEIGHTS = 1.0
"""Two runs overlapping horizontally by this many times the smaller one's height lie one above the other, not on one
printed line (a skewed or curved photograph's neighbouring lines); less is two pieces of one line the detector found
overlapping."""
RULE_MIN_SHARE = 0.6
"""A printed rule across at least this share of the text's width separates sections of the page read one after
the other (a newspaper's feuilleton below the columns of the news): the page is cut there before its columns ..."""
RULE_MAX_HEIGHTS = 0.35
"""... a rule being at most this many line heights thick (a line of text is thicker) ..."""
RULE_MIN_RUN_HEIGHTS = 3
"""... and drawn in strokes at least this many line heights long (a word's ink is broken at its letters)."""
RULE_GAP = 2
"""A rule's stroke may break for this many pixels (worn type, a scan's noise) ..."""
RULE_WANDER_HEIGHTS = 0.25
"""... and wander up and down over this many line heights (a rule on a warped sheet is not straight)."""
COLUMN_RULE_MIN_HEIGHTS = 5
"""A printed rule between columns (a newspaper's) is an unbroken vertical stroke (but breaks of `RULE_GAP` pixels) at
least this many line heights long and at most `RULE_MAX_HEIGHTS` line heights thick (no letter is so tall); a detected
line it crosses with at least a line height on each side is two columns' lines joined, cut there
(`split_at_column_rules`) ..."""
COLUMN_RULE_END_HEIGHTS = 2
"""... and a line this many line heights beyond either end of the rule is beside it too (a worn rule breaks off
before the column's last line)."""
TABLE_MIN_ROWS = 3
"""A vertical rule crossed by at least this many horizontal strokes (each unbroken, but for `RULE_GAP` pixels, from a
line height left of it to a line height right of it) ..."""
TABLE_ROW_MAX_HEIGHTS = 4
"""... at least one every this many line heights of its length is a table's rule between ruled rows (a form's table: a
row every 1.3-3 line heights), not a rule between columns of text (a newspaper's is crossed by the rules across its
page only: at most one in 8 line heights): lines it crosses are cut at it all the same, but it does not part the page
into columns (`table_rules`)."""
LINE_PIECES_GAP_HEIGHTS = 1.5
"""Runs of one printed line less than this many line heights apart are pieces of one stretch of print when a rule's
columns are measured (`_printed_lines`): between the detector's pieces of a newspaper's lines the median gap is 0.4
line heights (cores), three in four under 1; between a form's labels and fields 2-3."""
JOINED_PIECES_GAP_HEIGHTS = 1.0
"""Runs of one output line whose cores are less than this many line heights apart, of like heights
(`JOINED_PIECES_MIN_HEIGHT_RATIO`), are read as one image (`join_line_pieces`): the detector's boxes reach beyond
their cores, so that two pieces of a line cut close each hold the glyph between them, which was read twice (`Zürich, ,
wir`) or as a fragment (`und ) des`)."""
JOINED_PIECES_MIN_HEIGHT_RATIO = 0.67
"""... the lower of the two at least this share of the taller's height (a heading's large type and the small print set
beside it are read apart, each at its own size)."""
SHARED_PIECES_MIN_HEIGHT_RATIO = 0.5
"""Runs of one output line of which one reaches into the other's core share a glyph (read twice: `*) ) Neuerdings`, `.
. ( Obgleich`): they are read as one image where the lower lies within the taller's height and is at least this share
of it, the footnote mark `*)` beside its line, a detector's piece spanning the gap between two others (0.6-0.66 of
the line's height on the development book pages; a receipt's short label beside a run twice its height, 0.42, read
worse joined). On the 82 development receipts, forms and book pages: errors 5,735 -> 5,710 (book pages 2.02% -> 1.98%)."""
GUTTER_MIN_WIDTH_HEIGHTS = 0.45
"""A gutter between columns without a printed rule is a vertical band of paper at least this many line heights wide
(wider than most spaces of a justified line) ..."""
GUTTER_MAX_WIDTH_HEIGHTS = 3
"""... and at most this many wide (wider paper parts a receipt's items from their prices, a form's fields) ..."""
GUTTER_MIN_HEIGHTS = 5
"""... and at least this many line heights long (the spaces of lines above one another do not line up so far) ..."""
GUTTER_MAX_INK_SHARE = 0.02
"""... with ink in at most this share of the rows of any stretch of that length (a line-end hyphen standing into the
gutter, a speck; a letter's ink is taller) ..."""
GUTTER_LINES_SHARE = 0.5
"""... beside lines all along: lines crossing it or ending (beginning) within a line height of it, at least this many per
line height of its length (not a page's margin with a line or two across it) ..."""
GUTTER_MIN_CROSSINGS = 2
"""... that at least this many detected lines cross with `COLUMN_MIN_LINE_HEIGHTS` line heights on each side (columns
of text, not a receipt's prices beside their items): lines of two columns the detector joined across a gutter
(`column_gutters`; they are cut there as at a rule, and the columns read apart)."""
GUTTER_FLUSH_SHARE = 0.5
"""... or, crossed or not, with columns of text set against it: at least `COLUMN_MIN_LINES` and this share of the lines
on its left are lines of text (`COLUMN_MIN_LINE_HEIGHTS` long) ending within `JUSTIFIED_EDGE_HEIGHTS` line heights of
it, and as many on its right begin so (columns a line's height apart, whose lines' boxes leave too narrow a gap between
them for the XY-cut; a receipt's items end ragged, its prices begin so, and a form's labels and values are short)."""
GUTTER_CUT_SIDE_HEIGHTS = 1.0
"""A run crossing a gutter is cut there where at least this many line heights of it lie on each side: the detector
joins a column's line, or only its last word, to the next column's line across a gutter narrower than a line height."""
FAINT_CONTRAST_SHARE = 0.45
"""A detected line whose ink contrasts with its paper less than this share of the page's median line contrast is
left out: the other side of the leaf showing through, stains, specks."""
MIN_CHARACTER_CONFIDENCE = 0.4
"""A detected run read with a mean character confidence (`character_confidence`) under this is left out: signatures,
stamps, logos and rules read as a few unlikely characters. Chosen on the real development pages with the sixth
`crnn-lines` (page CER of all 85: 15.64% with none, 14.99% at 0.3, 14.88% at 0.4, 15.08% at 0.5, 17.36% at 0.7; book
pages 5.02% -> 4.18%, forms 15.62% -> 14.36%); checked again with the fourteenth, before `_side_box` (2026-12-01):
8.52% at 0.3, 8.48% at 0.4, 8.70% at 0.5 (receipts 7.98%, 8.17%, 8.86%; book pages 2.39%, 2.23%, 2.18%)."""
MIN_LINE_HEIGHT_RATIO = 0.35
"""An output line whose box is less high than this share of the page's median line (`read_page`) is left out: a
receipt's torn edge read as `AN A A NA A`, a speck under a page's head read `N --`, the serifs of a cut-off line. On the
105 real pages the lowest printed line (a page number between thin dashes, `— 21 —`) is 0.40 of its page's median in
the ground truth and its detected line 0.44; the lines so left out on the 85 development pages were 6, 5 of them
junk (receipts 7.64% -> 7.55%, book pages 2.08% -> 2.05%), on the 20 held-out pages 3, all junk (forms 15.30% ->
15.15%); 0.45 leaves out the page number."""
GRAIN_INK_DEPTHS = 5.0
"""A run whose ink is less deep than this many times the page's grain (`paper_grain`; its ink: `sparse_ink_contrast`,
the grey levels between its darkest and lightest pixels softened over 3 x 3) is grain, not print, and is not read
(`read_page`): a blank page scanned with its paper's grain was read as six single figures (`4`, `2`, `1`), a page of
noise as two hundred lines of marks. The runs detected on such pages are at most 3.2 grains deep; on the 85 real
development pages the faintest run read (a faded receipt's `HARDWARE`) is 11.5 deep, the faintest of all 6.2 (a
dash read `--` at a confidence of 0.2). Tesseract reads the scanned blank as nothing."""
GRAIN_TILES = 8
GRAIN_TILE_SIDE = 64
"""A page's grain is measured on `GRAIN_TILES` x `GRAIN_TILES` squares of this side spread over it (a 14-megapixel
page in 20 ms; within one grey level of the whole page's measure on the 105 real pages)."""
DITHER_TWO_LEVEL_SHARE = 0.99
DITHER_DOT_SHARE = 0.04
"""A page of two grey levels (`DITHER_TWO_LEVEL_SHARE` of its pixels) of which this share are dots standing apart is
dithered (`is_dithered`): a 1-bit scan of grey paper, its grey drawn as scattered dots, which the detector took for
print (a page of three lines on paper dithered from grey 235 was read as 85-90 lines of marks in 45 s; Tesseract
read it). Dithered paper of greys 235, 200 and 170 holds 8%, 22% and 33% such dots; the five two-level pages of the
105 real pages (binarised book pages, a receipt) 0.01-1.2%, every real page at most 5.2%."""
DITHER_SOFTENING = 1.5
"""A dithered page is read softened by a Gaussian blur of this radius in pixels (`read_page`), its dots merged into
their grey: three lines printed 28 pixels high on paper dithered from greys 235, 200 and 170 read right, 16 pixels
high at 1.5% CER (`fox` read `for`, `Invoice` `invoice`); softened by 1 pixel the 16-pixel lines read as junk, by 2 a
28-pixel `Invoice` `invoice` and `2024` `2021`."""
NARROWED_WIDTH = 0.6
"""A run read with a character confidence under `min_character_confidence` is read again narrowed to this share of
its width and softened by a Gaussian blur of a thirty-second of its height (`narrowed_line`): receipt printers set
totals in double-width dots, which the recognizer reads at 0.3-0.4 as printed and at 0.9-1.0 so (development receipt
0047's `TOTAL 16.00`, `CHANGE 0.00`; page CER of the development receipts 7.83% -> 7.47% with 0.6, 7.52% with 0.5,
7.63% unblurred) ..."""
NARROWED_MIN_CONFIDENCE = 0.7
"""... and its narrowed reading is taken where its character confidence is at least this, and higher than as printed
(with none, marks that are not text read so pass: book pages 2.24% -> 2.36%, the newspaper 7.94% -> 8.01%; with 0.6,
2.30% and 7.95%; the receipts 7.60% at 0.7)."""
UNSEARCHED_CONFIDENCE_RATIO = 0.5
"""A run whose best path reads at a character confidence under this share of what its reading needs to be kept
(`min_character_confidence`; a narrowed reading's `NARROWED_MIN_CONFIDENCE`) is read by its best path, not by the
n-gram's beam search (`iter_recognize`'s `best_path_under`): noise, stamps and smudges, whose frames give many tokens
their chance, cost the search most, and it reads none of them well enough to keep (the 85 real development pages read
the same text with 0.5 as with none; with 0.75 four of them read otherwise, no faster)."""
STACKED_MIN_HEIGHTS = 1.6
"""A detected run at least this many times as high as the page's median run may hold two printed lines the detector
took together (closely set lines at a column's foot, a heading and the line under it; on a small dark scan most of
its lines) ..."""
STACKED_VALLEY_SHARE = 0.15
"""... and is cut between them where, in the middle `STACKED_SEARCH` of its height, rows hold at most this share of
the ink of its fullest row, with print above and below (a heading in large type has no such rows) ..."""
STACKED_SEARCH = (0.2, 0.8)
STACKED_PEAK_SHARE = 0.4
"""... with a line's print in each part: a row holding at least this share of the ink of the run's fullest row ..."""
STACKED_MIN_BAND_HEIGHTS = 0.3
"""... each part at least this many median run heights high ..."""
STACKED_MIN_PRINT_HEIGHTS = 0.25
"""... its rows holding at least half the ink of its fullest over at least this many (a line's middle band, not a rule
or an underline a few rows thick) ..."""
STACKED_CONTEXT_HEIGHTS = 0.1
"""... the parts reaching this many median run heights across each cut."""
STACKED_FOUND_SHARE = 0.5
"""A band of a cut run whose length other runs over its height cover at least this share of is a line the detector
found on its own as well: it is read from them, not again from the band."""

PAGE_NUMBER_MAX_HEIGHTS = 4.0
"""A detected run at most this many of its heights long may be a page number set between dashes (`— 170 —`, as 19th-century
books set them) ..."""
DASH_REACH_HEIGHTS = 3.0
"""... whose dashes begin within this many of its heights from it on either side (the detector boxes the number and
leaves the dashes out, as it leaves out rules: 8 of the 13 development book pages lost `— ` and ` —` so) ..."""
DASH_MAX_LENGTH_HEIGHTS = 2.0
"""... and end within this many heights more (a blot reaching further is a rule) ..."""
DASH_MAX_HEIGHT = 0.4
"""... each a blot of ink at most this share of the run's height high ..."""
DASH_MIN_WIDTH = 0.4
"""... at least this share of it wide ..."""
DASH_MIN_ASPECT = 2.5
"""... at least this many times as wide as high ..."""
DASH_MIDDLE = (0.25, 0.85)
"""... and with its middle this far down the run (from its top, in its heights), where a dash stands beside figures."""
PAGE_NUMBER_DASH = "—"
"""How a page number's dashes are written (`— 170 —`, as the Deutsches Textarchiv transcribes them): the number is read
alone, between them (a line reader reads a short dash set two heights from the figures as `-`, `*` or nothing)."""

MISSED_MARK_MIN_HEIGHT = 0.4
"""Ink the detector left out, within the height of a run on its printed line (`missed_marks`: a receipt's lone
quantity `1` far left of its price; the detector, which learned lines of words, gives a single narrow glyph a core too
faint to keep) is read as a run of its own where its marks, joined across gaps of `MISSED_MARK_GAP` of that run's
height, are at least this share of its height high ..."""
MISSED_MARK_GAP = 0.5
MISSED_MARK_MAX_LENGTH = 4.0
"""... at most this many of its heights long (a longer stretch of print left out is the detector's choice: a rule, a
logo, a signature) ..."""
MISSED_MARK_MIN_INK = 0.03
"""... hold at least this share of its height squared in ink pixels (not specks) ..."""
MISSED_MARK_CONTEXT_HEIGHTS = 3.0
"""... and lie between the ends of the print within this many of its heights above and below it (runs there begin
left of it and end right of it: a receipt's column of quantities under its heading), not in a margin (a scan's
edge, specks beside a newspaper's outer column)."""
VERTICAL_MIN_GLYPHS = 3
"""A line printed up or down the page (a form's filing number along its margin, a preprint's identifier beside its
first page) is found by the detector, which finds lines across the page, a glyph or two at a time: a stack of at least
this many runs (`glyph_stacks`) ..."""
VERTICAL_GLYPH_MAX_ASPECT = 2.5
"""... each at most this many times as long as it is high (a glyph lying on its side, with the reach the detector's
boxes give their ends) ..."""
VERTICAL_GLYPH_ALIKE = 0.6
"""... of like lengths, overlapping along them by at least this share of the shorter (the shorter at least this share
of the longer) ..."""
VERTICAL_GLYPH_GAP = 0.5
"""... one below the other, at most this share of their mean length of paper between two (a word's glyphs) ..."""
VERTICAL_MIN_LENGTH = 3.0
"""... the stack at least this many times as high as it is wide; it is read turned both ways (`vertical_lines`) ..."""
VERTICAL_CONFIDENCE_MARGIN = 0.1
"""... and taken for a line where one way reads it with a character confidence at least this much higher than its
runs read as they lie (their mean), and at least `min_character_confidence`: a table's column of short figures, a
stack of runs too, reads better as it lies."""


def flanking_dashes(grey: np.ndarray, polygons: Sequence[Polygon],
                    light_text: bool | None = None) -> tuple[list[Polygon], list[int], list[int]]:
    """The detected runs, each short run (`PAGE_NUMBER_MAX_HEIGHTS`) with a dash on both sides (`DASH_*`; ink inside
    no other run) lengthened over its dashes, and the runs it then covers (their boxes four fifths inside its box)
    left out (a shorter run lengthened alike among them: a piece of the number detected again); with the index of
    the run each comes from, and the indices (in the runs returned) of those lengthened:
    page numbers set `— 170 —`, whose number is read alone and written between `PAGE_NUMBER_DASH`es.
    `light_text`: the page's polarity where the caller has told it (None: `page_has_light_text` tells)."""
    polygons = [[list(point) for point in polygon] for polygon in polygons]
    boxes = np.asarray([polygon_to_box(polygon) for polygon in polygons]).reshape(-1, 4)
    heights = boxes[:, 3] - boxes[:, 1]
    short = (heights >= 4) & (boxes[:, 2] - boxes[:, 0] <= PAGE_NUMBER_MAX_HEIGHTS * heights)
    if not short.any():
        return polygons, list(range(len(polygons))), []
    from scipy import ndimage

    ink = _page_ink(grey, light_text)
    lengthened = []
    for index in np.flatnonzero(short).tolist():
        x0, y0, x1, y1 = boxes[index]
        height = y1 - y0
        reach = DASH_REACH_HEIGHTS * height
        window = (DASH_REACH_HEIGHTS + DASH_MAX_LENGTH_HEIGHTS) * height
        left, right = max(0, int(x0 - window)), min(ink.shape[1], int(np.ceil(x1 + window)))
        top, bottom = max(0, int(y0)), min(ink.shape[0], int(np.ceil(y1)))
        labels, _ = ndimage.label(ink[top:bottom, left:right])
        dashes = {"left": [], "right": []}
        for rows, columns in ndimage.find_objects(labels):
            blot_height, blot_width = rows.stop - rows.start, columns.stop - columns.start
            start, stop = left + columns.start, left + columns.stop
            middle = (top + (rows.start + rows.stop) / 2 - y0) / height
            if ((columns.start == 0 < left) or (columns.stop == right - left and right < ink.shape[1])
                    or blot_height > DASH_MAX_HEIGHT * height or blot_width < DASH_MIN_WIDTH * height
                    or blot_width < DASH_MIN_ASPECT * blot_height or not DASH_MIDDLE[0] <= middle <= DASH_MIDDLE[1]):
                continue
            side = "left" if x0 - reach <= stop <= x0 else "right" if x1 <= start <= x1 + reach else None
            others = [other for other in range(len(boxes)) if other != index
                      and boxes[other, 0] < stop and start < boxes[other, 2]
                      and boxes[other, 1] < top + rows.stop and top + rows.start < boxes[other, 3]]
            if side and not others:
                dashes[side].append((start, stop))
        if dashes["left"] and dashes["right"]:
            reach_left = x0 - max(start for start, _ in dashes["left"])
            reach_right = min(stop for _, stop in dashes["right"]) - x1
            top_left, top_right, bottom_right, bottom_left = (np.asarray(point, dtype=np.float64)
                                                              for point in polygons[index])
            along = (top_right - top_left) / max(abs(top_right[0] - top_left[0]), 1e-9)  # one column along the run
            polygons[index] = [list(top_left - reach_left * along), list(top_right + reach_right * along),
                               list(bottom_right + reach_right * along), list(bottom_left - reach_left * along)]
            lengthened.append(index)
    covered = set()
    areas = (boxes[:, 2] - boxes[:, 0]) * heights
    for index in lengthened:
        x0, y0, x1, y1 = polygon_to_box(polygons[index])
        for other, (a0, b0, a1, b1) in enumerate(boxes):
            inside = max(0.0, min(x1, a1) - max(x0, a0)) * max(0.0, min(y1, b1) - max(y0, b0))
            if other != index and inside >= 0.8 * areas[other] and (other not in lengthened
                                                                    or areas[other] < areas[index]):
                covered.add(other)
    kept = [index for index in range(len(polygons)) if index not in covered]
    return [polygons[index] for index in kept], kept, [kept.index(index) for index in lengthened if index in kept]


@dataclass
class PageLine:
    """One output line of a page: its text, confidence (the product of its runs' confidences), the detector's score,
    its box (`[x0, y0, x1, y1]`, page pixels), the polygons of the runs it joins (each's corners from the top left of
    its text, clockwise) and the angle its text runs at on the page as read (degrees counter-clockwise: 0 across
    the page, 90 up it, 270 down it: `vertical_lines`)."""

    text: str
    confidence: float
    score: float
    box: list[float]
    polygons: list[Polygon] = field(default_factory=list)
    angle: int = 0


@dataclass
class PageReading:
    """A page read: its size and lines in reading order, and the quarter turns (`rotation`, degrees counter-clockwise:
    0, 90, 180 or 270) the page was turned by to be read upright; boxes and polygons are the image's pixels as given."""

    width: int
    height: int
    lines: list[PageLine]
    rotation: int = 0

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)

    def to_dict(self) -> dict:
        """The page as JSON-ready data: coordinates to a tenth of a pixel, confidences and scores to 4 places."""
        lines = [{"text": line.text, "confidence": round(line.confidence, 4), "score": round(line.score, 4),
                  "angle": line.angle, "box": [round(value, 1) for value in line.box],
                  "polygons": [[[round(x, 1), round(y, 1)] for x, y in polygon] for polygon in line.polygons]}
                 for line in self.lines]
        return {"width": self.width, "height": self.height, "rotation": self.rotation, "text": self.text, "lines": lines}

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)

    def text_angle(self, line: PageLine) -> int:
        """The angle `line`'s text runs at in the image as given (degrees counter-clockwise, as hOCR's `textangle`):
        its own on the page as read, less the page's turn."""
        return (line.angle - self.rotation) % 360

    def to_hocr(self, title: str = "page") -> str:
        """The page as hOCR (the HTML microformat of Tesseract and ocrmypdf): an `ocr_page` holding one `ocr_line`
        per line, each with its `bbox` and confidence (`x_wconf`, in percent), and the angle its text lies at in the
        image (`textangle`, counter-clockwise: `text_angle`) where it does not run across the image."""
        lines = []
        for index, line in enumerate(self.lines, start=1):
            x0, y0, x1, y1 = (round(value) for value in line.box)
            angle = self.text_angle(line)
            angle = f"; textangle {angle}" if angle else ""
            lines.append(f"   <span class='ocr_line' id='line_1_{index}' title='bbox {x0} {y0} {x1} {y1}{angle}; "
                         f"x_wconf {round(100 * line.confidence)}'>{html.escape(line.text)}</span>")
        body = "\n".join(lines)
        return (
            "<?xml version='1.0' encoding='UTF-8'?>\n<!DOCTYPE html>\n<html xmlns='http://www.w3.org/1999/xhtml'>\n"
            f"<head>\n <title>{html.escape(title)}</title>\n <meta http-equiv='Content-Type' content='text/html; charset=utf-8'/>\n"
            " <meta name='ocr-system' content='textrec'/>\n <meta name='ocr-capabilities' content='ocr_page ocr_line'/>\n"
            f"</head>\n<body>\n <div class='ocr_page' id='page_1' title='image \"{html.escape(title)}\"; bbox 0 0 {self.width} "
            f"{self.height}'>\n{body}\n </div>\n</body>\n</html>\n"
        )


def load_line_detector(model_name_or_path: str, device: str = "cpu"):
    """The detector (in eval mode) and its image processor, from a released short name, a folder or a Hub id."""
    from textrec.modeling import LineDetectorForTextLineDetection
    from textrec.processing.checkpoints import load_pretrained

    from .image_processing_line_detection import LineDetectionImageProcessor

    resolved = check_model_source(model_name_or_path, required_files=("config.json", "model.safetensors"))
    model = load_pretrained(LineDetectorForTextLineDetection, resolved, dtype=torch.float32)
    processor = LineDetectionImageProcessor.from_pretrained(resolved)
    return model.to(device).eval(), processor


@torch.no_grad()
def detect_lines(detector, processor, image: Image.Image, threshold: float = DETECTION_THRESHOLD) -> dict:
    """The detector's lines of one page: `{"scores", "boxes", "polygons"}` in the page's pixels."""
    grey = processor.grey_page(image)  # once, for the page's print and the detector's input alike
    processor = copy.copy(processor)
    processor.text_polarity = "dark"  # as `grey` is now
    processor.longest_edge = processor.longest_edge_for(grey)  # larger for a page of small print
    inputs = processor.preprocess([grey], return_tensors="pt")
    outputs = detector(pixel_values=inputs["pixel_values"].to(detector.device))
    return processor.post_process_line_detection(outputs, target_sizes=[(image.height, image.width)], threshold=threshold)[0]


def page_skew(polygons: Sequence[Polygon]) -> float:
    """The page's skew in radians (positive: lines rising to the right... in image coordinates, falling), the median
    direction of its lines' top edges, weighted towards the long lines."""
    if not polygons:
        return 0.0
    angles, weights = [], []
    for polygon in polygons:
        (x0, y0), (x1, y1) = polygon[0], polygon[1]
        length = math.hypot(x1 - x0, y1 - y0)
        if length > 0:
            angles.append(math.atan2(y1 - y0, x1 - x0))
            weights.append(length)
    if not angles:
        return 0.0
    order = np.argsort(angles)
    cumulative = np.cumsum(np.asarray(weights)[order])
    return float(np.asarray(angles)[order][np.searchsorted(cumulative, cumulative[-1] / 2)])


def _upright_boxes(polygons: Sequence[Polygon], skew: float) -> np.ndarray:
    """Axis-aligned boxes `(n, 4)` of the polygons turned by `-skew` about the origin."""
    cosine, sine = math.cos(-skew), math.sin(-skew)
    boxes = []
    for polygon in polygons:
        points = np.asarray(polygon, dtype=np.float64)
        turned = np.stack([points[:, 0] * cosine - points[:, 1] * sine, points[:, 0] * sine + points[:, 1] * cosine], 1)
        boxes.append([turned[:, 0].min(), turned[:, 1].min(), turned[:, 0].max(), turned[:, 1].max()])
    return np.asarray(boxes, dtype=np.float64).reshape(-1, 4)


def _gaps(starts: np.ndarray, ends: np.ndarray, allowed: int = 0) -> list[tuple[float, float]]:
    """The intervals that at most `allowed` of the `[start, end]` intervals cover, between covered ones (with 0: the
    empty intervals between their union)."""
    events = sorted([(float(x), 1) for x in starts] + [(float(x), -1) for x in ends], key=lambda event: (event[0], -event[1]))
    gaps, depth, opened = [], 0, None
    for x, step in events:
        depth += step
        if depth <= allowed and opened is None:
            opened = x
        elif depth > allowed and opened is not None:
            if x > opened:
                gaps.append((opened, x))
            opened = None
    return gaps


def _among(box: np.ndarray, boxes: np.ndarray) -> bool:
    """Whether some of `boxes` lie above the middle of `box` and some below it."""
    middle, middles = (box[1] + box[3]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    return bool((middles < middle).any() and (middles > middle).any())


def _column_lines(boxes: np.ndarray, indices: list[int]) -> float:
    """The median number of lines of `indices` above and below each one's middle: how many lines a column holds."""
    selected = boxes[indices]
    middles = (selected[:, 0] + selected[:, 2]) / 2
    return float(np.median(((selected[:, 0] <= middles[:, None]) & (selected[:, 2] >= middles[:, None])).sum(1)))


def _column_cut(boxes: np.ndarray, indices: list[int], line_height: float,
                page_column_lines: float | None = None) -> float | None:
    """Where to split `indices` into columns (an x), or None: the widest vertical gap meeting the column rules, with
    as many lines crossing as `JOINED_LINES_SHARE` of a column's lines (`_column_lines` of `indices`), or else of the
    page's column, `page_column_lines` (for a section of a page: its columns' lines may be joined as often as the
    page's)."""
    cut = _column_cut_crossed(boxes, indices, line_height, _column_lines(boxes, indices))
    if cut is None and page_column_lines is not None:
        cut = _column_cut_crossed(boxes, indices, line_height, page_column_lines)
    return cut


def _column_cut_crossed(boxes: np.ndarray, indices: list[int], line_height: float, column_lines: float) -> float | None:
    selected = boxes[indices]
    left, right = selected[:, 0].min(), selected[:, 2].max()
    allowed = max(1, int(COLUMN_BRIDGE_SHARE * len(indices)))
    best = None
    gaps = _gaps(selected[:, 0], selected[:, 2], max(allowed, int(JOINED_LINES_SHARE * column_lines)))
    for start, end in dict.fromkeys(gaps + _gaps(selected[:, 0], selected[:, 2])):  # and the empty ones, for side boxes
        if end - start < COLUMN_GAP_HEIGHTS * line_height:
            continue
        cut = (start + end) / 2
        left_side, right_side = selected[selected[:, 2] <= cut], selected[selected[:, 0] >= cut]
        if min(len(left_side), len(right_side)) < COLUMN_MIN_LINES:
            continue
        spans = (left_side[:, 2].max() - left_side[:, 0].min(), right_side[:, 2].max() - right_side[:, 0].min())
        lengths = (np.median(left_side[:, 2] - left_side[:, 0]), np.median(right_side[:, 2] - right_side[:, 0]))
        narrow = [span < COLUMN_MIN_SHARE * (right - left) or length < COLUMN_MIN_LINE_HEIGHTS * line_height
                  for span, length in zip(spans, lengths)]
        crossing = selected[(selected[:, 0] < cut) & (selected[:, 2] > cut)]
        short, column = (left_side, right_side) if narrow[0] else (right_side, left_side)
        if any(narrow) and not (narrow[0] and _side_box(left_side, right_side)
                                or narrow[1] and _side_box(right_side, left_side)
                                or not len(crossing) and not all(narrow)
                                and end - start <= GUTTER_MAX_WIDTH_HEIGHTS * line_height
                                and _short_lines_column(short, column, line_height)):
            continue
        among = sum(_among(box, left_side) and _among(box, right_side) for box in crossing)
        if len(crossing) > allowed or among < len(crossing):  # more than a few cross: only between justified columns
            edge = JUSTIFIED_EDGE_HEIGHTS * line_height
            flush = min(int((left_side[:, 2] > start - edge).sum()), int((right_side[:, 0] < end + edge).sum()))
            if among < COLUMN_AMONG_SHARE * len(crossing) or flush < JUSTIFIED_LINES_PER_CROSSING * len(crossing):
                continue
        if best is None or end - start > best[1]:
            best = (cut, end - start)
    return None if best is None else best[0]


def _alike_heights(height, other):
    """Whether two runs are of like heights: the lower at least `JOINED_PIECES_MIN_HEIGHT_RATIO` of the taller
    (of arrays of heights, pair by pair)."""
    return np.minimum(height, other) >= JOINED_PIECES_MIN_HEIGHT_RATIO * np.maximum(height, other)


def _row_partners(boxes: np.ndarray, others: np.ndarray, apart_from_itself: bool = False) -> np.ndarray:
    """Per box of `boxes`, whether the nearest of `others` beside it on its printed line (overlapping it vertically by
    `ROW_OVERLAP` of the smaller height) is of a like height (`JOINED_PIECES_MIN_HEIGHT_RATIO`): a price beside its
    item, not a title beside a masthead's ear (a third box between them hides the other ear's lines). With
    `apart_from_itself`, `others` are `boxes` and a box is not its own partner."""
    if not len(others):
        return np.zeros(len(boxes), dtype=bool)
    heights, other_heights = boxes[:, 3] - boxes[:, 1], others[:, 3] - others[:, 1]
    overlap = np.minimum(boxes[:, None, 3], others[None, :, 3]) - np.maximum(boxes[:, None, 1], others[None, :, 1])
    beside = overlap >= ROW_OVERLAP * np.minimum(heights[:, None], other_heights[None, :])
    if apart_from_itself:
        np.fill_diagonal(beside, False)
    distance = np.maximum(others[None, :, 0] - boxes[:, None, 2], boxes[:, None, 0] - others[None, :, 2])
    nearest = np.argmin(np.where(beside, distance, np.inf), axis=1)
    return beside.any(axis=1) & _alike_heights(heights, other_heights[nearest])


def _side_box(side: np.ndarray, other: np.ndarray) -> bool:
    """Whether the lines `side` (boxes) are a box of lines of their own beside `other`'s (`SIDE_BOX_MIN_LINES`,
    `SIDE_BOX_MAX_LEADING`, `SIDE_BOX_SHARED_ROWS`, `SIDE_BOX_MIN_LENGTH`, `SIDE_BOX_PAIRED_SHARE`), though narrower
    than a column of text."""
    if len(side) < SIDE_BOX_MIN_LINES:
        return False
    heights = side[:, 3] - side[:, 1]
    stacked = side[np.argsort(side[:, 1])]
    leading = np.median(stacked[1:, 1] - stacked[:-1, 3]) / np.median(heights)  # negative: they overlap
    shared = int(_row_partners(side, side, apart_from_itself=True).sum())
    paired = int(_row_partners(side, other).sum())
    return (-SIDE_BOX_MAX_LEADING <= leading <= SIDE_BOX_MAX_LEADING and shared <= SIDE_BOX_SHARED_ROWS * len(side)
            and np.median((side[:, 2] - side[:, 0]) / heights) >= SIDE_BOX_MIN_LENGTH
            and paired <= SIDE_BOX_PAIRED_SHARE * len(side))


def _text_column(lines: np.ndarray, line_height: float) -> bool:
    """Whether `lines` (boxes) are a column of justified text: at least `SIDE_BOX_MIN_LINES` of them, their median
    `COLUMN_MIN_LINE_HEIGHTS` line heights long, half of them reaching both the column's edges within
    `JUSTIFIED_EDGE_HEIGHTS`."""
    edge = JUSTIFIED_EDGE_HEIGHTS * line_height
    full = (lines[:, 0] < lines[:, 0].min() + edge) & (lines[:, 2] > lines[:, 2].max() - edge)
    return bool(len(lines) >= SIDE_BOX_MIN_LINES and full.mean() >= 0.5
                and np.median(lines[:, 2] - lines[:, 0]) >= COLUMN_MIN_LINE_HEIGHTS * line_height)


def _short_lines_column(side: np.ndarray, column: np.ndarray, line_height: float) -> bool:
    """Whether the short lines `side` (boxes) are a column of their own beside the column of text `column`
    (`SHORT_LINES_ALIGNED_SHARE`); the caller has found what parts them (a gap no line crosses, a rule)."""
    if not _text_column(column, line_height):
        return False
    middles, column_middles = (side[:, 1] + side[:, 3]) / 2, (column[:, 1] + column[:, 3]) / 2
    level = np.abs(middles[:, None] - column_middles[None, :]).min(1) <= SHORT_LINE_LEVEL_HEIGHTS * line_height
    return bool(level.mean() <= SHORT_LINES_ALIGNED_SHARE)


def _rows(boxes: np.ndarray, indices: list[int]) -> list[list[int]]:
    """`indices` grouped into printed lines (runs overlapping vertically by `ROW_OVERLAP` and side by side, not one
    above the other: the runs of one line overlap horizontally by less than `ROW_SIDE_OVERLAP_HEIGHTS` of their
    heights), each left to right, the lines top to bottom."""
    listed = boxes.tolist()  # Python's floats: the same arithmetic, looked up faster than an array's
    rows: list[list[int]] = []
    for index in sorted(indices, key=lambda i: (listed[i][1] + listed[i][3]) / 2):
        left, top, right, bottom = listed[index]
        for row in rows:  # measured against the run that began the row, so that rows do not grow into each other
            _, row_top, _, row_bottom = listed[row[0]]
            overlap = min(bottom, row_bottom) - max(top, row_top)
            if overlap < ROW_OVERLAP * min(bottom - top, row_bottom - row_top):
                continue
            if all(min(right, other_right) - max(left, other_left)
                   < ROW_SIDE_OVERLAP_HEIGHTS * min(bottom - top, other_bottom - other_top)
                   for other_left, other_top, other_right, other_bottom in (listed[other] for other in row)):
                row.append(index)
                break
        else:
            rows.append([index])
    return [sorted(row, key=lambda i: listed[i][0]) for row in sorted(rows, key=lambda r: min(listed[i][1] for i in r))]


def _is_light_text(grey: np.ndarray, light_text: bool | None) -> bool:
    """`light_text` where the caller has told the page's polarity (a page is looked at many times over), else
    `page_has_light_text` of `grey`."""
    return page_has_light_text(grey) if light_text is None else light_text


def _page_ink(grey: np.ndarray, light_text: bool | None = None) -> np.ndarray:
    """The page's ink: `grey` (its luminance) below its Otsu threshold, light print on dark turned first (`light_text`;
    None: told from the page, `page_has_light_text`)."""
    from .image_processing_text_recognition import otsu_threshold

    grey = 255 - grey if _is_light_text(grey, light_text) else grey
    return grey < otsu_threshold(grey)


def widened_along(mask: np.ndarray, size: int, axis: int) -> np.ndarray:
    """`mask` dilated by a line of `size` pixels along `axis`: what `scipy.ndimage.binary_dilation` gives with that
    line as its structure, by running maxima (a page's mask in a few milliseconds rather than tens)."""
    from scipy import ndimage

    origin = -1 if size % 2 == 0 else 0  # where binary_dilation centres a line of even length
    return ndimage.maximum_filter1d(mask.view(np.uint8), size, axis=axis, mode="constant", cval=0,
                                    origin=origin).astype(bool)


def shifted_along(mask: np.ndarray, shifts: np.ndarray, axis: int) -> np.ndarray:
    """`mask` (2-D) with each of its lines across `axis` moved along `axis` by its own shift: along axis 0, column c
    holds at row r what `mask` holds at row `r + shifts[c]`; along axis 1, row r holds at column c what `mask` holds at
    column `c + shifts[r]`; False where that lies outside. Lines of equal shift are moved together (a page levelled by
    its skew: a few dozen slices rather than an index per pixel)."""
    shifts = np.asarray(shifts, dtype=np.int64)
    if not shifts.any():
        return mask
    length = mask.shape[axis]
    result = np.zeros_like(mask)
    changes = np.flatnonzero(np.diff(shifts)) + 1
    for start, end in zip([0, *changes], [*changes, len(shifts)]):
        shift = int(shifts[start])
        given = slice(shift, None) if shift >= 0 else slice(0, max(length + shift, 0))
        taken = slice(0, max(length - shift, 0)) if shift >= 0 else slice(-shift, None)
        lines = slice(start, end)
        if axis == 0:
            result[taken, lines] = mask[given, lines]
        else:
            result[lines, taken] = mask[lines, given]
    return result


def closed_along(mask: np.ndarray, gap: int, axis: int) -> np.ndarray:
    """`mask` with its breaks of up to `2 * gap` pixels along `axis` closed: what `scipy.ndimage.binary_closing` gives
    with a line of `2 * gap + 1` pixels as its structure, by running maxima then minima."""
    from scipy import ndimage

    size = 2 * gap + 1
    dilated = ndimage.maximum_filter1d(mask.view(np.uint8), size, axis=axis, mode="constant", cval=0)
    return ndimage.minimum_filter1d(dilated, size, axis=axis, mode="constant", cval=0).astype(bool)


def _vertical_runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The vertical runs of True in `mask`: each one's column, first row and row after it, column by column."""
    steps = np.diff(np.pad(mask, ((1, 1), (0, 0))).astype(np.int8), axis=0)
    starts, ends = np.nonzero(steps.T == 1), np.nonzero(steps.T == -1)  # column-major: the k-th start and end are one run
    return starts[0], starts[1], ends[1]


def _line_axis(polygon: Polygon) -> tuple[np.ndarray, np.ndarray, float]:
    """A detected line's left and right ends (the middles of its left and right edges) and its height."""
    top_left, top_right, bottom_right, bottom_left = (np.asarray(point, dtype=np.float64) for point in polygon)
    height = (np.linalg.norm(bottom_left - top_left) + np.linalg.norm(bottom_right - top_right)) / 2
    return (top_left + bottom_left) / 2, (top_right + bottom_right) / 2, height


def horizontal_rules(grey: np.ndarray, polygons: Sequence[Polygon], light_text: bool | None = None) -> list[float]:
    """The printed rules running across the page's text: rows of unbroken ink (but breaks of `RULE_GAP` pixels, and
    `RULE_WANDER_HEIGHTS` up or down) in
    strokes of at least `RULE_MIN_RUN_HEIGHTS` line heights that together span `RULE_MIN_SHARE` of the width the
    detected lines span, at most `RULE_MAX_HEIGHTS` line heights thick (print's letters are apart: no row of a line of
    text is unbroken for long). Each rule as its height in the upright frame of `_upright_boxes` (the page turned by
    its skew), top to bottom. `grey` is the page's luminance; light print on dark is turned first.
    `light_text`: the page's polarity where the caller has told it (None: `page_has_light_text` tells)."""
    if len(polygons) < 2 or min(grey.shape) < 2:
        return []
    upright, _, line_height = _core_boxes(polygons)
    skew = page_skew(polygons)
    ink = _page_ink(grey, light_text)
    rows, columns = ink.shape
    # Level the page: row r of column c holds what lies on the page's slope through that row's left end.
    ink = shifted_along(ink, np.round(np.arange(columns) * math.tan(skew)).astype(np.int64), axis=0)
    wander = max(1, round(RULE_WANDER_HEIGHTS * line_height))
    ink = closed_along(widened_along(ink, wander, axis=0), RULE_GAP, axis=1)
    padded = np.pad(ink, ((0, 0), (1, 1))).astype(np.int8)
    steps = np.diff(padded, axis=1)
    starts, ends = np.nonzero(steps == 1), np.nonzero(steps == -1)  # row-major: the k-th start and end are one run
    lengths = ends[1] - starts[1]
    long_run = lengths >= RULE_MIN_RUN_HEIGHTS * line_height
    # A row's strokes make one rule where they follow one another less than a line height apart (a rule broken at a
    # column's rule or by worn type), not a rule one column wide and the closed-up small print beside it.
    covered, chain, previous_row, previous_end = np.zeros(rows), 0.0, -1, 0
    for row, start, end in zip(starts[0][long_run], starts[1][long_run], ends[1][long_run]):  # row by row, left to right
        chain = chain + end - start if row == previous_row and start - previous_end < line_height else end - start
        previous_row, previous_end = row, end
        covered[row] = max(covered[row], chain)
    across = (covered > 0) & (covered >= RULE_MIN_SHARE * (upright[:, 2].max() - upright[:, 0].min()))
    return [(start + end - 1) / 2 * math.cos(skew) for start, end in runs_of(across)
            if end - start <= max(3.0, RULE_MAX_HEIGHTS * line_height) + wander]


def vertical_rules(grey: np.ndarray, polygons: Sequence[Polygon],
                   light_text: bool | None = None) -> list[tuple[float, float, float]]:
    """The printed rules between the page's columns: vertical strokes of ink at least `COLUMN_RULE_MIN_HEIGHTS` line
    heights long (breaks of `RULE_GAP` pixels closed), at most `RULE_MAX_HEIGHTS` line heights thick in each row (a
    rule may wander sideways over more: a page scanned small, skewed or warped), each as `(x, top, bottom)` in page
    pixels (x: its mean over its thin rows), left to right. `grey` is the page's luminance; light print on dark is turned
    first. `light_text`: the page's polarity where the caller has told it (None: `page_has_light_text` tells)."""
    if len(polygons) < 2 or min(grey.shape) < 2:
        return []
    _, _, line_height = _core_boxes(polygons)
    ink = closed_along(_page_ink(grey, light_text), RULE_GAP, axis=0)
    columns, tops, bottoms = _vertical_runs(ink)
    long_run = bottoms - tops >= COLUMN_RULE_MIN_HEIGHTS * line_height
    columns, tops, bottoms = columns[long_run], tops[long_run], bottoms[long_run]
    thickest = max(3.0, RULE_MAX_HEIGHTS * line_height)
    rules = []
    for start, end in runs_of(np.bincount(columns, minlength=ink.shape[1]) > 0, gap=2):
        # The band of columns holding long strokes, row by row: a rule is thin in each row, though a rule that
        # wanders (a skewed or warped page) or runs on from a headline's letter makes the band wider than itself.
        inside = (columns >= start) & (columns < end)
        band = np.zeros((ink.shape[0], end - start), dtype=bool)
        for column, top, bottom in zip(columns[inside], tops[inside], bottoms[inside]):
            band[top:bottom, column - start] = True
        thickness = band.sum(axis=1)
        thin = np.flatnonzero((thickness > 0) & (thickness <= thickest))
        if thin.size < COLUMN_RULE_MIN_HEIGHTS * line_height:
            continue  # a band of ink (a picture's edge, the scan's border, a headline's letters), not a rule
        x = start + float(np.mean((band[thin] * np.arange(end - start)).sum(axis=1) / thickness[thin]))
        rules.append((x, float(thin[0]), float(thin[-1] + 1)))
    return rules


def table_rules(grey: np.ndarray, polygons: Sequence[Polygon],
                rules: Sequence[tuple[float, float, float]],
                light_text: bool | None = None) -> list[tuple[float, float, float]]:
    """The `rules` (`vertical_rules`) that ruled rows cross as a table's are (`TABLE_MIN_ROWS`, `TABLE_ROW_MAX_HEIGHTS`):
    horizontal strokes of ink unbroken (but for `RULE_GAP` pixels) from a line height left of the rule to a line height
    right of it, counted along the rule's length. `grey` is the page's luminance; light print on dark is turned
    first. `light_text`: the page's polarity where the caller has told it (None: `page_has_light_text` tells)."""
    if not rules:
        return []
    _, _, line_height = _core_boxes(polygons)
    ink = closed_along(_page_ink(grey, light_text), RULE_GAP, axis=1)
    reach = max(1, round(line_height))
    tables = []
    for x, top, bottom in rules:
        left, right = max(0, round(x) - reach), min(ink.shape[1], round(x) + reach + 1)
        crossed = ink[int(top):int(bottom), left:right].all(axis=1)
        rows = len(runs_of(crossed, gap=RULE_GAP))
        if rows >= TABLE_MIN_ROWS and rows * TABLE_ROW_MAX_HEIGHTS * line_height >= bottom - top:
            tables.append((x, top, bottom))
    return tables


GUTTER_CELL_HEIGHTS = 1 / 12
"""`column_gutters` looks at the page in cells of this many line heights (a cell is ink where any of its pixels is)."""


def _levelled_ink(grey: np.ndarray, skew: float, cell: int, light_text: bool | None = None) -> np.ndarray:
    """The page's ink (`_page_ink`) in cells of `cell` pixels, levelled by `skew`: column c of row r holds what lies on
    the page's vertical through that column's top end."""
    ink = _page_ink(grey, light_text)
    rows, columns = ink.shape[0] // cell, ink.shape[1] // cell
    ink = ink[:rows * cell, :columns * cell].reshape(rows, cell, columns, cell).any(axis=(1, 3))
    return shifted_along(ink, np.round(-np.arange(rows) * math.tan(skew)).astype(np.int64), axis=1)


def column_gutters(grey: np.ndarray, polygons: Sequence[Polygon],
                   light_text: bool | None = None) -> list[tuple[float, float, float]]:
    """The gutters between columns that the detector joined lines across: vertical bands of paper
    `GUTTER_MIN_WIDTH_HEIGHTS` to `GUTTER_MAX_WIDTH_HEIGHTS` line heights wide and at least `GUTTER_MIN_HEIGHTS` long
    (but for `GUTTER_MAX_INK_SHARE` of its rows), with lines beside them all along (`GUTTER_LINES_SHARE`), at least
    `GUTTER_MIN_CROSSINGS` of which cross them at their middle with `COLUMN_MIN_LINE_HEIGHTS` line heights on each side:
    a newspaper's columns set without rules between them. Each as `(x, top, bottom)` in page pixels, left to right, as
    `vertical_rules` gives the printed rules. The page is levelled by its skew first; `grey` is its luminance, light
    print on dark turned.
    `light_text`: the page's polarity where the caller has told it (None: `page_has_light_text` tells)."""
    if len(polygons) < GUTTER_MIN_CROSSINGS or min(grey.shape) < 2:
        return []
    from scipy import ndimage

    _, _, line_height = _core_boxes(polygons)
    skew = page_skew(polygons)
    cell = max(1, int(GUTTER_CELL_HEIGHTS * line_height))
    ink = _levelled_ink(grey, skew, cell, light_text)
    rows, columns = ink.shape
    height = line_height / cell  # in cells from here on
    half_width = max(1, round(GUTTER_MIN_WIDTH_HEIGHTS * height / 2))
    window = max(2, round(GUTTER_MIN_HEIGHTS * height))
    if rows < window or columns < 2 * half_width + 1:
        return []
    ink = ndimage.maximum_filter1d(ink.astype(np.uint8), 2 * half_width + 1, axis=1)  # ink within half a width
    inked_rows = np.concatenate([np.zeros((1, columns), dtype=np.int32), np.cumsum(ink, axis=0, dtype=np.int32)])
    clear = (inked_rows[window:] - inked_rows[:-window]) <= GUTTER_MAX_INK_SHARE * window  # windows starting at each row
    clear_before = np.concatenate([np.zeros((1, columns), dtype=np.int32), np.cumsum(clear, axis=0, dtype=np.int32)])
    # A row is paper of a gutter where a clear window starting at one of the `window` rows up to it covers it.
    start_rows = np.arange(rows)
    upto, since = np.minimum(start_rows, rows - window) + 1, np.maximum(start_rows - window + 1, 0)
    paper = clear_before[upto] - clear_before[np.minimum(since, upto)] > 0
    run_x, run_top, run_bottom = _vertical_runs(paper)
    if not run_x.size:
        return []
    # The lines in the levelled frame, in cells: their ends along the page's vertical through their middle height.
    lines = []
    for polygon in polygons:
        left, right, _ = _line_axis(polygon)
        middle = (left[1] + right[1]) / 2
        lines.append((left[0] + middle * math.tan(skew), right[0] + middle * math.tan(skew), middle))
    left, right, middle = (np.asarray(lines).T / cell)[:, None, :]
    x, reach = run_x[:, None], COLUMN_MIN_LINE_HEIGHTS * height
    along = (middle >= run_top[:, None]) & (middle <= run_bottom[:, None])
    crossed = (along & (left < x - reach) & (right > x + reach)).sum(1)
    beside = (along & (left < x + height) & (right > x - height)).sum(1)  # crossing, or ending by it
    # Columns of text set against the gutter: most lines of text on its left end by it, most on its right begin by it
    # (a line run on from the last word of the line beside it begins by it too).
    edge, text = JUSTIFIED_EDGE_HEIGHTS * height, along & (right - left >= reach)
    on_left, on_right = text & (left < x) & (right <= x + edge), text & (right > x) & (left >= x - edge)
    ending, beginning = (on_left & (right >= x - edge)).sum(1), (on_right & (left <= x + edge)).sum(1)
    flush = ((ending >= COLUMN_MIN_LINES) & (ending >= GUTTER_FLUSH_SHARE * on_left.sum(1))
             & (beginning >= COLUMN_MIN_LINES) & (beginning >= GUTTER_FLUSH_SHARE * on_right.sum(1)))
    keep = (flush | (crossed >= GUTTER_MIN_CROSSINGS)) & (beside >= GUTTER_LINES_SHARE * (run_bottom - run_top) / height)
    # Neighbouring columns of paper, overlapping, make one gutter.
    mask = np.zeros((rows, columns), dtype=bool)
    for x, top, bottom in zip(run_x[keep].tolist(), run_top[keep].tolist(), run_bottom[keep].tolist()):
        mask[top:bottom, x] = True
    labels, _ = ndimage.label(mask, structure=np.ones((3, 3), dtype=bool))
    gutters = []
    for label, found in enumerate(ndimage.find_objects(labels), start=1):
        (top, bottom), (first, last) = (found[0].start, found[0].stop), (found[1].start, found[1].stop - 1)
        if last - first + 2 * half_width > GUTTER_MAX_WIDTH_HEIGHTS * height:
            continue
        clear_rows = (labels[found] == label).sum(axis=0)  # the gutter's x: the columns clear the longest
        x = first + float(np.flatnonzero(clear_rows == clear_rows.max()).mean())
        x, top, bottom = (x + 0.5) * cell, top * cell, bottom * cell  # back to page pixels,
        gutters.append((x - (top + bottom) / 2 * math.tan(skew), float(top), float(bottom)))  # at its middle height
    # Bands of one gutter found apart (a skewed page's) are one: the longest of those within a line height of it.
    kept: list[tuple[float, float, float]] = []
    for gutter in sorted(gutters, key=lambda found: found[1] - found[2]):
        if not any(abs(gutter[0] - other[0]) < line_height and min(gutter[2], other[2]) > max(gutter[1], other[1])
                   for other in kept):
            kept.append(gutter)
    return sorted(kept)


def split_at_column_rules(polygons: Sequence[Polygon], rules: Sequence[tuple[float, float, float]],
                          reach_heights: float = COLUMN_RULE_END_HEIGHTS,
                          side_heights: float = 1.0) -> tuple[list[Polygon], list[int]]:
    """The detected runs with those that a column rule (`vertical_rules`, or a gutter, `column_gutters`) crosses at
    their middle height (or within `reach_heights` line heights of its ends: a worn rule breaks off before the column's
    last line; a gutter's paper ends where it ends, 0), with at least `side_heights` line heights of the run on each
    side, cut at the rule: runs of two columns' lines the detector joined across it. The pieces and the index of the
    run each came from, as `split_at_columns` gives them."""
    pieces, sources = [], []
    for index, polygon in enumerate(polygons):
        left, right, height = _line_axis(polygon)
        length, reach = right[0] - left[0], reach_heights * height
        cuts = []
        for x, top, bottom in rules if length > 2 * side_heights * height else ():
            along = (x - left[0]) / length
            middle = left[1] + (right[1] - left[1]) * along
            side = side_heights * height / length
            if side <= along <= 1 - side and top - reach <= middle <= bottom + reach:
                cuts.append(along)
        edges = [0.0, *sorted(cuts), 1.0]
        pieces.extend(polygon_part(polygon, start, end) for start, end in zip(edges, edges[1:]))
        sources.extend([index] * (len(edges) - 1))
    return pieces, sources


def split_at_gutters(polygons: Sequence[Polygon],
                     gutters: Sequence[tuple[float, float, float]]) -> tuple[list[Polygon], list[int]]:
    """The detected runs with those crossing a gutter (`column_gutters`) cut there, as `split_at_column_rules` cuts
    them at a printed rule: within the gutter's paper only, `GUTTER_CUT_SIDE_HEIGHTS` line heights on each side."""
    return split_at_column_rules(polygons, gutters, reach_heights=0, side_heights=GUTTER_CUT_SIDE_HEIGHTS)


def runs_of(flags: np.ndarray, gap: int = 1) -> list[tuple[int, int]]:
    """The `[start, end)` index ranges of the runs of True in `flags`, runs closer than `gap` merged."""
    runs: list[tuple[int, int]] = []
    for start, end in np.flatnonzero(np.diff(np.concatenate([[0], flags.astype(np.int8), [0]]))).reshape(-1, 2).tolist():
        if runs and start - runs[-1][1] < gap:
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((start, end))
    return runs


def _sections(boxes: np.ndarray, rules: Sequence[float], line_height: float) -> list[tuple[list[int], float | None]]:
    """The lines of `boxes` (their indices) in the sections that `rules` (heights) cut the page into, top to bottom,
    by their lines' middles, the empty ones left out; each with how many lines the page's columns hold
    (`_column_lines` of the whole page), or None where no rule cuts the page. Rules cut a page of columns only (a
    form's rules and underlines part fields that its bands part as well)."""
    indices = list(range(len(boxes)))
    if not rules or not indices or _column_cut(boxes, indices, line_height) is None:
        return [(indices, None)] if indices else []
    column_lines = _column_lines(boxes, indices)
    edges = [-math.inf, *sorted(rules), math.inf]
    middles = (boxes[:, 1] + boxes[:, 3]) / 2
    sections = [[i for i in indices if top <= middles[i] < bottom] for top, bottom in zip(edges, edges[1:])]
    return [(section, column_lines) for section in sections if section]


def _order(boxes: np.ndarray, indices: list[int], line_height: float,
           cuts: list[tuple[float, list[int]]] | None = None, column_lines: float | None = None,
           column_rules: Sequence[tuple[float, float, float]] = ()) -> list[list[int]]:
    """XY-cut of `indices` into output lines; each column cut and the runs crossing it go into `cuts` if given.
    `column_lines`: the page's, for a section of it (`_column_cut`'s `page_column_lines`); `column_rules`: the
    page's printed rules between columns, `(x, top, bottom)` in the boxes' frame (`_rule_cut`)."""
    if len(indices) <= 1:
        return [indices] if indices else []
    cut = _rule_cut(boxes, indices, line_height, column_rules)
    if cut is None:
        cut = _column_cut(boxes, indices, line_height, column_lines)
    if cut is not None:
        left = [i for i in indices if boxes[i, 0] + boxes[i, 2] < 2 * cut]  # by their middle: a few cross the gap
        right = [i for i in indices if boxes[i, 0] + boxes[i, 2] >= 2 * cut]
        if cuts is not None:
            cuts.append((cut, [i for i in indices if boxes[i, 0] < cut < boxes[i, 2]]))
        return (_order(boxes, left, line_height, cuts, column_lines, column_rules)
                + _order(boxes, right, line_height, cuts, column_lines, column_rules))
    selected = boxes[indices]
    gaps = _gaps(selected[:, 1], selected[:, 3])
    if not gaps:
        return _rows(boxes, indices)
    # The widest horizontal gaps first (XY-cut): below a heading spanning two columns the columns are found in the
    # next cut, before their lines' gaps, level across the columns, could split the page into bands.
    widest = max(end - start for start, end in gaps)
    gaps = [(start, end) for start, end in gaps if end - start >= WIDEST_GAP_SHARE * widest]
    bands, edges = [], [-math.inf, *((start + end) / 2 for start, end in gaps), math.inf]
    for top, bottom in zip(edges, edges[1:]):
        bands.append([i for i in indices if top <= (boxes[i, 1] + boxes[i, 3]) / 2 < bottom])
    return [row for band in bands for row in _order(boxes, band, line_height, cuts, column_lines, column_rules)]


def _printed_lines(boxes: np.ndarray, line_height: float) -> np.ndarray:
    """The boxes of the stretches of print that runs (`boxes`) make: the runs of one printed line (`_rows`) joined
    where less than `LINE_PIECES_GAP_HEIGHTS` line heights apart (a line the detector found in pieces, word by word),
    kept apart across wider gaps (a form's label and its field, a table's cells)."""
    if not len(boxes):
        return boxes
    joined = []
    for row in _rows(boxes, list(range(len(boxes)))):
        current = boxes[row[0]].copy()
        for index in row[1:]:
            if boxes[index, 0] - current[2] < LINE_PIECES_GAP_HEIGHTS * line_height:
                current = np.concatenate([np.minimum(current[:2], boxes[index, :2]), np.maximum(current[2:], boxes[index, 2:])])
            else:
                joined.append(current)
                current = boxes[index].copy()
        joined.append(current)
    return np.asarray(joined)


def _rule_cut(boxes: np.ndarray, indices: list[int], line_height: float,
              column_rules: Sequence[tuple[float, float, float]]) -> float | None:
    """The x of a printed rule between columns (`vertical_rules`, in the boxes' frame) that splits `indices` into
    columns, or None: one that no line of them crosses by a line height on each side (the rule's own fragments, which
    the detector may take for lines, do not count), with at least `COLUMN_MIN_LINES` lines on each side beside it
    (their middles within its height, `COLUMN_RULE_END_HEIGHTS` more at each end; the pieces of one printed line
    taken together, `_printed_lines`) whose median is at least
    `COLUMN_MIN_LINE_HEIGHTS` line heights long and half of which end (or begin) within `JUSTIFIED_EDGE_HEIGHTS` line
    heights of it: columns of text set against the rule, not a table's or a form's cells; or so on one side, short
    lines on the other that are a column of their own (`_short_lines_column`: a title page beside a page of text); of
    several, the one with the most lines beside it."""
    selected = boxes[indices]
    middles = (selected[:, 1] + selected[:, 3]) / 2
    reach = COLUMN_RULE_END_HEIGHTS * line_height
    best = None
    for x, top, bottom in column_rules:
        if ((selected[:, 0] < x - line_height) & (selected[:, 2] > x + line_height)).any():
            continue
        beside = (middles >= top - reach) & (middles <= bottom + reach)
        left = _printed_lines(selected[beside & (selected[:, 2] <= x)], line_height)
        right = _printed_lines(selected[beside & (selected[:, 0] >= x)], line_height)
        if min(len(left), len(right)) < COLUMN_MIN_LINES:
            continue
        lengths = (np.median(left[:, 2] - left[:, 0]), np.median(right[:, 2] - right[:, 0]))
        edge = JUSTIFIED_EDGE_HEIGHTS * line_height
        flush = (float((left[:, 2] > x - edge).mean()), float((right[:, 0] < x + edge).mean()))
        set_against = [length >= COLUMN_MIN_LINE_HEIGHTS * line_height and share >= 0.5
                       for length, share in zip(lengths, flush)]
        if not all(set_against) and not (set_against[0] and _short_lines_column(right, left, line_height)
                                         or set_against[1] and _short_lines_column(left, right, line_height)):
            continue
        if best is None or len(left) + len(right) > best[1]:
            best = (x, len(left) + len(right))
    return None if best is None else best[0]


def _upright_rules(column_rules: Sequence[tuple[float, float, float]], skew: float) -> list[tuple[float, float, float]]:
    """`column_rules` (page pixels) turned by `-skew` about the origin, as `_upright_boxes` turns the lines."""
    ends = _upright_boxes([[(x, top), (x, bottom)] for x, top, bottom in column_rules], skew)
    return [((x0 + x1) / 2, top, bottom) for x0, top, x1, bottom in ends.tolist()]


def _core_boxes(polygons: Sequence[Polygon]) -> tuple[np.ndarray, np.ndarray, float]:
    """The polygons' upright boxes (`_upright_boxes` by the page's skew), the same boxes shrunk to the lines' cores
    and the median line height. Columns are looked for between the cores: a detector's line reaches
    CORE_INSET_RATIO heights beyond its core at each end, and more where it takes the line for taller than it is
    (small print), which would close a newspaper's narrow gutter."""
    upright = _upright_boxes(polygons, page_skew(polygons))
    cores = upright.copy()
    inset = np.minimum(CORE_INSET_RATIO * (cores[:, 3] - cores[:, 1]), 0.25 * (cores[:, 2] - cores[:, 0]))
    cores[:, 0] += inset
    cores[:, 2] -= inset
    return upright, cores, max(float(np.median(cores[:, 3] - cores[:, 1])), 1.0)


def join_line_pieces(polygons: Sequence[Polygon], rows: Sequence[Sequence[int]], detections: Sequence[int],
                     column_rules: Sequence[tuple[float, float, float]] = (), keep_apart: Sequence[int] = (),
                     max_gap_heights: float = JOINED_PIECES_GAP_HEIGHTS,
                     ) -> tuple[list[Polygon], list[list[int]], list[list[int]]]:
    """The runs of each output line of `rows` (`reading_order`'s) that follow one another within `max_gap_heights` line
    heights (between their cores, in the page's upright frame), of like heights, or of which one reaches into the
    other's core (a glyph both hold; `SHARED_PIECES_MIN_HEIGHT_RATIO`), joined into one run: the polygon of
    their union, turned back by the page's skew. Runs cut from one detected run (`detections`: the detected run each
    polygon is a piece of), runs a printed rule between columns or a table's rule parts (`column_rules`, `(x, top,
    bottom)` in page pixels) and the runs of `keep_apart` (page numbers between dashes) are not joined. Returns the
    runs, the output lines as indices of them, and for each run the indices of `polygons` it is made of."""
    if not polygons:
        return [], [], []
    skew = page_skew(polygons)
    upright, cores, _ = _core_boxes(polygons)
    rules = _upright_rules(column_rules, skew)
    heights = upright[:, 3] - upright[:, 1]
    apart = set(keep_apart)

    def joinable(previous: int, index: int) -> bool:
        middle = (upright[index, 1] + upright[index, 3]) / 2
        lower, taller = sorted((previous, index), key=lambda run: heights[run])
        sharing = ((upright[index, 0] < cores[previous, 2] or upright[previous, 2] > cores[index, 0])
                   and heights[lower] >= SHARED_PIECES_MIN_HEIGHT_RATIO * heights[taller]
                   and upright[taller, 1] <= upright[lower, 1] and upright[lower, 3] <= upright[taller, 3])
        return (previous not in apart and index not in apart and detections[previous] != detections[index]
                and (sharing or cores[index, 0] - cores[previous, 2] < max_gap_heights * min(heights[previous], heights[index])
                     and _alike_heights(heights[previous], heights[index]))
                and not any(cores[previous, 0] < x < cores[index, 2] and top <= middle <= bottom for x, top, bottom in rules))

    joined, members, joined_rows = [], [], []
    cosine, sine = math.cos(skew), math.sin(skew)
    for row in rows:
        groups: list[list[int]] = []
        for index in row:
            if groups and joinable(groups[-1][-1], index):
                groups[-1].append(index)
            else:
                groups.append([index])
        joined_rows.append([])
        for group in groups:
            joined_rows[-1].append(len(joined))
            members.append(group)
            if len(group) == 1:
                joined.append([list(point) for point in polygons[group[0]]])
                continue
            x0, y0 = upright[group, 0].min(), upright[group, 1].min()
            x1, y1 = upright[group, 2].max(), upright[group, 3].max()
            joined.append([[x * cosine - y * sine, x * sine + y * cosine] for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))])
    return joined, joined_rows, members


def reading_order(polygons: Sequence[Polygon], rules: Sequence[float] = (),
                  column_rules: Sequence[tuple[float, float, float]] = ()) -> list[list[int]]:
    """The output lines of a page as lists of the indices of `polygons` (its detected runs): the sections between
    `rules` (`horizontal_rules`) top to bottom, in each its columns left to right, lines top to bottom within each,
    the runs of one printed line left to right (see the module docstring). A run crossing a column gutter goes with
    the column of its middle (`split_at_columns` cuts such runs first)."""
    if not polygons:
        return []
    _, cores, line_height = _core_boxes(polygons)
    upright_rules = _upright_rules(column_rules, page_skew(polygons))
    return [row for section, column_lines in _sections(cores, rules, line_height)
            for row in _order(cores, section, line_height, column_lines=column_lines, column_rules=upright_rules)]


def split_at_columns(polygons: Sequence[Polygon], rules: Sequence[float] = (),
                     column_rules: Sequence[tuple[float, float, float]] = ()) -> tuple[list[Polygon], list[int]]:
    """The detected runs with those that cross a column gutter (runs of two columns' lines the detector joined
    across it) cut at the gutter's middle: the pieces (at least a line height long) and the index of the run each
    came from. Columns are looked for in each section between `rules`, as `reading_order` does."""
    if not polygons:
        return [], []
    upright, cores, line_height = _core_boxes(polygons)
    cuts: list[tuple[float, list[int]]] = []
    upright_rules = _upright_rules(column_rules, page_skew(polygons))
    for section, column_lines in _sections(cores, rules, line_height):
        _order(cores, section, line_height, cuts, column_lines, upright_rules)
    cut_at: dict[int, list[float]] = {}
    for x, crossing in cuts:
        for index in crossing:
            cut_at.setdefault(index, []).append(x)
    pieces, sources = [], []
    for index, polygon in enumerate(polygons):
        left, right = upright[index, 0], upright[index, 2]
        edges = [left, *sorted(cut_at.get(index, [])), right]
        for start, end in zip(edges, edges[1:]):
            if len(edges) > 2 and end - start < line_height:
                continue
            pieces.append(polygon_part(polygon, (start - left) / (right - left), (end - left) / (right - left)))
            sources.append(index)
    return pieces, sources


def distinct_lines(grey: np.ndarray, boxes: Sequence[Sequence[float]], light_text: bool | None = None) -> list[bool]:
    """Which detected lines are printed on this side of the page: each line's contrast (its paper's grey, the 60th
    percentile of its box, less its ink's, the 5th) against the page's median line contrast (`FAINT_CONTRAST_SHARE`).
    Light text on dark is turned first (`page_has_light_text`).
    `light_text`: the page's polarity where the caller has told it (None: `page_has_light_text` tells)."""
    if _is_light_text(grey, light_text):
        grey = 255 - grey
    contrasts = []
    for x0, y0, x1, y1 in boxes:
        region = grey[max(int(y0), 0):max(int(y1), int(y0) + 1), max(int(x0), 0):max(int(x1), int(x0) + 1)]
        paper, ink = grey_percentiles(region, (60, 5)) if region.size else (0.0, 0.0)
        contrasts.append(float(paper - ink))
    if not contrasts:
        return []
    typical = float(np.median(contrasts))
    return [contrast >= FAINT_CONTRAST_SHARE * typical for contrast in contrasts]


def _stacked_bands(rows_ink: np.ndarray, run_height: float) -> list[tuple[int, int]]:
    """The printed lines (first and last row + 1) that a run's row profile of ink (`rows_ink`, upright) holds, parted
    at rows of little ink in its middle (`STACKED_VALLEY_SHARE`, `STACKED_SEARCH`); one band where there is no such
    row."""
    size = len(rows_ink)
    fullest = float(rows_ink.max()) if size else 0.0
    if fullest <= 0:
        return [(0, size)]
    low = rows_ink <= STACKED_VALLEY_SHARE * fullest
    low[: round(STACKED_SEARCH[0] * size)] = False
    low[round(STACKED_SEARCH[1] * size):] = False
    cuts = [(start + end) // 2 for start, end in runs_of(low)]
    edges = [0, *cuts, size]
    bands = [(start, end) for start, end in zip(edges, edges[1:])]
    # A part without print of a line's own (paper, descenders, the tops of a few capitals) is no line: it goes with
    # its neighbour.
    kept = []
    for start, end in bands:
        rows = rows_ink[start:end]
        if (end - start >= STACKED_MIN_BAND_HEIGHTS * run_height and rows.max() >= STACKED_PEAK_SHARE * fullest
                and (rows >= 0.5 * rows.max()).sum() >= STACKED_MIN_PRINT_HEIGHTS * run_height):
            kept.append((start, end))
    if len(kept) < 2:
        return [(0, size)]
    return [(0 if index == 0 else start, size if index == len(kept) - 1 else end)
            for index, (start, end) in enumerate(kept)]


def _found_elsewhere(box: np.ndarray, boxes: np.ndarray, index: int) -> bool:
    """Whether detected runs other than `index` (`boxes`) hold the line of `box` (a band of a cut run): runs over at
    least half of its height whose lengths beside it cover `STACKED_FOUND_SHARE` of its length."""
    x0, y0, x1, y1 = box
    over = np.clip(np.minimum(boxes[:, 3], y1) - np.maximum(boxes[:, 1], y0), 0, None) >= 0.5 * (y1 - y0)
    over[index] = False
    spans = sorted((max(a, x0), min(b, x1)) for a, b in boxes[over][:, [0, 2]] if min(b, x1) > max(a, x0))
    covered, reach = 0.0, x0
    for left, right in spans:
        covered += max(0.0, right - max(left, reach))
        reach = max(reach, right)
    return covered >= STACKED_FOUND_SHARE * (x1 - x0)


def split_stacked_lines(grey: np.ndarray, polygons: Sequence[Polygon],
                        light_text: bool | None = None) -> tuple[list[Polygon], list[int]]:
    """The detected runs with each that holds printed lines stacked one above the other cut into them: a run at least
    `STACKED_MIN_HEIGHTS` times the page's median run height whose rows of ink, cut out upright, part into bands
    (`_stacked_bands`). A band whose line the detector also found in other runs (`_found_elsewhere`: the run took the
    line above or below with its own) is left to them; each other band becomes a part reaching
    `STACKED_CONTEXT_HEIGHTS` median heights across a cut. Returns the runs and parts, and the index of the run each
    came from. `light_text`: the page's polarity where the caller has told it (None: `page_has_light_text` tells)."""
    if len(polygons) < 3:
        return list(polygons), list(range(len(polygons)))
    heights = [_line_axis(polygon)[2] for polygon in polygons]
    typical = float(np.median(heights))
    if not any(height >= STACKED_MIN_HEIGHTS * typical for height in heights):
        return list(polygons), list(range(len(polygons)))
    dark_text = 255 - grey if _is_light_text(grey, light_text) else grey
    page = Image.fromarray(np.ascontiguousarray(dark_text))
    paper = paper_colour(page)
    boxes = np.asarray([polygon_to_box(polygon) for polygon in polygons], dtype=np.float64)
    pieces, sources = [], []
    for index, (polygon, height) in enumerate(zip(polygons, heights)):
        bands = [(0, 1)]
        if height >= STACKED_MIN_HEIGHTS * typical:
            crop = np.asarray(crop_line(page, polygon, paper), dtype=np.uint8)
            ink = crop < otsu_threshold(crop)
            rows_ink = (ink & ~rule_pixels(ink)).mean(axis=1)  # a form's rules and underlines are no line of print
            size = len(rows_ink)
            found = _stacked_bands(rows_ink, typical * size / height)
            if len(found) > 1:
                context = STACKED_CONTEXT_HEIGHTS * typical * size / height
                bands = []
                for start, end in found:
                    band = polygon_to_box(polygon_part(polygon, 0.0, 1.0, start / size, end / size))
                    if not _found_elsewhere(np.asarray(band), boxes, index):
                        bands.append((max(start - context, 0) / size, min(end + context, size) / size))
        for top, bottom in bands:
            pieces.append(polygon if (top, bottom) == (0, 1) else polygon_part(polygon, 0.0, 1.0, top, bottom))
            sources.append(index)
    return pieces, sources


def crop_line(page: Image.Image, polygon: Polygon, paper=None) -> Image.Image:
    """The line of `polygon` cut from the page and turned upright (a skewed line comes out level); what falls outside
    the page is `paper` (by default the page's paper colour, `paper_colour`: pass it when cutting many lines)."""
    top_left, top_right, bottom_right, bottom_left = polygon
    width = max(2, round(math.dist(top_left, top_right)))
    height = max(2, round(math.dist(top_left, bottom_left)))
    quad = [*top_left, *bottom_left, *bottom_right, *top_right]
    return page.transform((width, height), Image.Transform.QUAD, quad, resample=Image.Resampling.BICUBIC,
                          fillcolor=paper_colour(page) if paper is None else paper)


UNEVEN_LINE_GAIN_RATIO = 1.1
"""A line is cut from the page with its light evened (`even_light`) where the light along it varies more than this: its
`light_gain` in its box, the 95th percentile over the 5th (a line across a shadow's edge); a line lit evenly, in the
light or in the shade, is cut from the page as it is, which the recognizer's own normalisation reads."""


def unevenly_lit(gain: np.ndarray, polygon: Polygon) -> bool:
    """Whether the light along the line of `polygon` varies by more than `UNEVEN_LINE_GAIN_RATIO` (`gain`: the page's
    `light_gain`)."""
    x0, y0, x1, y1 = (int(round(value)) for value in polygon_to_box(polygon))
    inside = gain[max(0, y0):max(0, y1), max(0, x0):max(0, x1)]
    if not inside.size:
        return False
    low, high = np.percentile(inside, [5, 95])
    return bool(high > UNEVEN_LINE_GAIN_RATIO * low)


def paper_colour(page: Image.Image):
    """The page's paper colour (the 90th percentile of its grey), as a fill value for its mode."""
    value = int(grey_percentiles(np.asarray(page.convert("L")), 90))
    return value if len(page.getbands()) == 1 else (value,) * len(page.getbands())


MEDIAN_OF_NINE = ((1, 2), (4, 5), (7, 8), (0, 1), (3, 4), (6, 7), (1, 2), (4, 5), (7, 8), (0, 3), (5, 8), (4, 7),
                  (3, 6), (1, 4), (2, 5), (4, 7), (4, 2), (6, 4), (4, 2))
"""The 19 compare-exchanges after which the fifth of nine values is their median (Paeth's network, as in Devillard's
`opt_med9`)."""


def neighbourhood_medians(images: np.ndarray) -> np.ndarray:
    """The median of each inner pixel's 3 x 3 neighbourhood in `images` (`(..., height, width)`), `(..., height - 2,
    width - 2)`: `MEDIAN_OF_NINE`'s minima and maxima over the nine shifted views at once, the same values as a
    median filter's, ten times faster than PIL's filter tile by tile."""
    height, width = images.shape[-2:]
    values = [images[..., row:height - 2 + row, column:width - 2 + column] for row in range(3) for column in range(3)]
    for low, high in MEDIAN_OF_NINE:
        values[low], values[high] = np.minimum(values[low], values[high]), np.maximum(values[low], values[high])
    return values[4]


def median_deviations(grey: np.ndarray) -> np.ndarray:
    """How far each pixel of an 8-bit grey page lies from the median of its 3 x 3 neighbourhood, in grey levels, on
    `GRAIN_TILES` x `GRAIN_TILES` tiles of `GRAIN_TILE_SIDE` spread over the page (their inner pixels, flattened);
    empty for a page under 3 pixels."""
    grey = np.asarray(grey)
    height, width = grey.shape[:2]
    side = min(GRAIN_TILE_SIDE, height, width)
    if side < 3:
        return np.zeros(0, dtype=np.int16)
    tiles = np.stack([grey[top:top + side, left:left + side]
                      for top in np.linspace(0, height - side, GRAIN_TILES).round().astype(int)
                      for left in np.linspace(0, width - side, GRAIN_TILES).round().astype(int)])
    # the tiles' edges have no full neighbourhood: their inner pixels only
    return np.abs(tiles[:, 1:-1, 1:-1].astype(np.int16) - neighbourhood_medians(tiles)).ravel()


def paper_grain(grey: np.ndarray) -> float:
    """The grain of an 8-bit grey page, in grey levels: the spread of its pixels about the median of their 3 x 3
    neighbourhood (`median_deviations`: their median absolute deviation times 1.4826, the standard deviation of normal
    noise); at least 1. Print's edges are a small share of a page's pixels and do not move the median: 0-4.4 levels on
    the 105 real pages, a blank sheet's grain 13, uniform noise 74."""
    deviations = median_deviations(grey)
    return max(1.0, 1.4826 * float(np.median(deviations))) if len(deviations) else 1.0


def is_dithered(grey: np.ndarray) -> bool:
    """Whether an 8-bit grey page is a 1-bit scan whose greys are dithered into dots: of two grey levels (all but
    `1 - DITHER_TWO_LEVEL_SHARE` of its pixels within 8 levels of its darkest or lightest, at least 128 apart) and with
    `DITHER_DOT_SHARE` or more of its pixels dots standing apart from their 3 x 3 neighbourhood (`median_deviations`
    over 64 levels)."""
    grey = np.asarray(grey)
    if grey.size == 0:
        return False
    darkest, lightest = int(grey.min()), int(grey.max())
    if lightest - darkest < 128 or float(((grey <= darkest + 8) | (grey >= lightest - 8)).mean()) < DITHER_TWO_LEVEL_SHARE:
        return False
    deviations = median_deviations(grey)
    return bool(len(deviations)) and float((deviations > 64).mean()) >= DITHER_DOT_SHARE


def character_confidence(reading: LineReading) -> float:
    """The geometric mean of a reading's character confidences (its line confidence to the power of one over its
    length): what a character of it is worth, whatever the line's length; 0.0 for an empty reading."""
    return reading.confidence ** (1 / len(reading.text)) if reading.text else 0.0


SIDEWAYS_RUN_ASPECT = 2.0
"""A page whose detected runs are, in the median, less than this many times as wide as high may lie on its side: the
detector, which finds horizontal lines, finds a glyph or two at a time on a page turned a quarter (median 1.2-1.9
on the 105 real pages so turned, 1.9-11 on the pages as scanned)."""
ORIENTATION_SAMPLE_RUNS = 6
"""The longest runs of a page read both ways up to tell whether it is upside down."""
UPSIDE_DOWN_MARGIN = 0.05
"""A page is upside down where its sample runs turned half a turn are read with a median character confidence this
much higher than as they are (on the 85 real development pages as scanned they read 0.10-0.56 lower turned; by best
path, 6 runs: 12 read by the n-gram's beam took twice the time, and one form read 0.05 higher turned)."""
UPRIGHT_CONFIDENCE = 0.9
"""Sample runs read as they are with a median character confidence of at least this are taken for upright (turned
upside down, those of the 105 real pages read at most 0.82; upright, 89 of them read at 0.9 or more)."""
READ_UPRIGHT_CONFIDENCE = 0.85
"""A page whose widest runs are read (`read_lines_as_they_lie`) with a median character confidence of at least this is
upright, and is not read turned; one read under it is told by `upside_down` (on the 105 real pages turned upside down
the readings' median was at most 0.70; upright, 94 of them read at 0.85 or more)."""
TRANSPOSES = {90: Image.Transpose.ROTATE_90, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_270}


def median_run_aspect(found: dict) -> float:
    """The median width over height of the detected runs (`post_process_line_detection`'s dict); 0 for none."""
    boxes = np.asarray(found["boxes"], dtype=np.float64).reshape(-1, 4)
    if not len(boxes):
        return 0.0
    return float(np.median((boxes[:, 2] - boxes[:, 0]) / np.maximum(boxes[:, 3] - boxes[:, 1], 1.0)))


def turned(page: Image.Image, rotation: int) -> Image.Image:
    """The page turned `rotation` degrees counter-clockwise (0, 90, 180 or 270)."""
    return page.transpose(TRANSPOSES[rotation]) if rotation else page


def point_after_turn(x: float, y: float, rotation: int, width: int, height: int) -> tuple[float, float]:
    """Where a point of a page of `width` x `height` pixels lies on the page turned `rotation` degrees
    counter-clockwise (`turned`)."""
    if rotation == 90:
        return y, width - x
    if rotation == 180:
        return width - x, height - y
    if rotation == 270:
        return height - y, x
    return x, y


def point_before_turn(x: float, y: float, rotation: int, width: int, height: int) -> tuple[float, float]:
    """Where a point of the page turned `rotation` degrees counter-clockwise lies on the page of `width` x `height`
    pixels as it was given."""
    if rotation == 90:
        return width - y, x
    if rotation == 180:
        return width - x, height - y
    if rotation == 270:
        return y, height - x
    return x, y


def upside_down(page: Image.Image, found: dict, recognizer, decoding: str | None = None) -> bool:
    """Whether the page's longest detected runs (`ORIENTATION_SAMPLE_RUNS`) read better turned half a turn
    (`UPSIDE_DOWN_MARGIN`), read by best path or greedily (`num_beams=1`: what the network sees, quickly); runs that
    read as they are with a median character confidence of `UPRIGHT_CONFIDENCE` are not read turned."""
    boxes = np.asarray(found["boxes"], dtype=np.float64).reshape(-1, 4)
    longest = np.argsort(boxes[:, 0] - boxes[:, 2], kind="stable")[:ORIENTATION_SAMPLE_RUNS]
    if not len(longest):
        return False
    paper = paper_colour(page)
    crops = [crop_line(page, found["polygons"][index], paper) for index in longest]
    model, processor = recognizer

    def median_confidence(images: list[Image.Image]) -> float:
        return float(np.median([character_confidence(reading) for _, reading, _ in iter_recognize(
            model, processor, images, decoding=decoding, num_beams=1, progress=False, output_confidences=True,
            warn_of_sizes=False)]))

    as_they_are = median_confidence(crops)
    if as_they_are >= UPRIGHT_CONFIDENCE:
        return False
    return median_confidence([crop.transpose(Image.Transpose.ROTATE_180) for crop in crops]) > (
        as_they_are + UPSIDE_DOWN_MARGIN)


def run_detector(detector, page: Image.Image, threshold: float = DETECTION_THRESHOLD) -> dict:
    """The lines `detector` finds on the page: the model and image processor of `load_line_detector`
    (`detect_lines`), or a function of the page giving `post_process_line_detection`'s dict."""
    return detector(page) if callable(detector) else detect_lines(*detector, page, threshold=threshold)


def quarter_turn(page: Image.Image, detector, threshold: float = DETECTION_THRESHOLD) -> tuple[int, dict]:
    """The quarter turn (0 or 90 degrees counter-clockwise) that lays a page's lines across it, and the lines detected on
    it so turned: a page whose runs look like glyphs rather than lines (`SIDEWAYS_RUN_ASPECT`) is tried a quarter
    turned, kept so where its runs are longer. Whether it then lies upside down: `read_page`."""
    rotation, found = 0, run_detector(detector, page, threshold)
    if median_run_aspect(found) < SIDEWAYS_RUN_ASPECT:
        quarter = run_detector(detector, turned(page, 90), threshold)
        if median_run_aspect(quarter) > median_run_aspect(found):
            rotation, found = 90, quarter
    return rotation, found


def is_line_image(image: Image.Image) -> bool:
    """Whether an image given as a page is one line of text cropped close (wider than high, one line by its rows
    (`text_line_count`), too low to be a page or a block of lines: `may_be_page`). The detector learned lines on
    pages: a page this small is brought up to its `longest_edge`, where one line is taller than any it learned."""
    if image.width <= image.height:
        return False
    luminance = np.asarray(normalize_capture(image.convert("L"), "auto"))
    return not may_be_page(luminance) and text_line_count(luminance) == 1


def narrowed_line(crop: Image.Image) -> Image.Image:
    """A line's crop narrowed to `NARROWED_WIDTH` of its width and softened by a Gaussian blur of a thirty-second of its
    height (a pixel where the recognizer reads 32 high): double-width print, its dots apart, as a line of print."""
    width = max(2, round(crop.width * NARROWED_WIDTH))
    narrowed = crop.resize((width, crop.height), Image.Resampling.BICUBIC)
    return narrowed.filter(ImageFilter.GaussianBlur(crop.height / 32))


def read_line_image(image: Image.Image, recognizer, batch_size: int = 32, decoding: str | None = None,
                    num_beams: int | None = None, old_umlauts: bool = False,
                    min_character_confidence: float = MIN_CHARACTER_CONFIDENCE) -> PageReading:
    """A line image (`is_line_image`) read as a page of one line: the whole image is the line (its box and
    polygon, a detector score of 1), read by `recognizer` as `read_page` reads a detected line."""
    model, processor = recognizer
    reading = next(iter_recognize(model, processor, [image], batch_size=batch_size, decoding=decoding,
                                  num_beams=num_beams, progress=False, output_confidences=True,
                                  old_umlauts=old_umlauts))[1]
    width, height = image.size
    lines = []
    if reading is not None and reading.text and character_confidence(reading) >= min_character_confidence:
        polygon = [[0.0, 0.0], [float(width), 0.0], [float(width), float(height)], [0.0, float(height)]]
        lines.append(PageLine(text=reading.text, confidence=reading.confidence, score=1.0,
                              box=[0.0, 0.0, float(width), float(height)], polygons=[polygon]))
    return PageReading(width=width, height=height, lines=lines)


def missed_marks(grey: np.ndarray, polygons: Sequence[Polygon],
                 light_text: bool | None = None) -> tuple[list[Polygon], list[int]]:
    """Runs for the ink the detector left out on the printed lines of its runs (`MISSED_MARK_MIN_HEIGHT`), each
    with the run on its line it lies nearest to: the page's ink outside every run's box, in marks (8-connected) lying
    within a run's height, joined along the line, each group boxed at that run's height, reaching a quarter of it
    beyond the ink at each end as the detector's boxes do. Ink within `MISSED_MARK_GAP` of that height from a run on
    its level is that run's own print, which its box cut short (the run reads it or not).
    `light_text`: the page's polarity where the caller has told it (None: `page_has_light_text` tells)."""
    from scipy import ndimage

    boxes = np.asarray([polygon_to_box(polygon) for polygon in polygons], dtype=np.float64).reshape(-1, 4)
    if not len(boxes):
        return [], []
    ink = _page_ink(grey, light_text)
    covered = np.zeros_like(ink)
    for x0, y0, x1, y1 in boxes:
        covered[max(int(y0), 0):max(math.ceil(y1), 0), max(int(x0), 0):max(math.ceil(x1), 0)] = True
    labels, _ = ndimage.label(ink & ~covered, structure=np.ones((3, 3)))
    heights = boxes[:, 3] - boxes[:, 1]
    marks: dict[int, list[tuple[int, int, int, int, int]]] = {}
    for label, found in enumerate(ndimage.find_objects(labels), start=1):
        y0, y1, x0, x1 = found[0].start, found[0].stop, found[1].start, found[1].stop
        within = np.flatnonzero((boxes[:, 1] <= y0) & (boxes[:, 3] >= y1))
        if not len(within):
            continue
        distance = np.maximum(boxes[within, 0] - x1, x0 - boxes[within, 2])
        partner = int(within[np.argmin(distance)])
        marks.setdefault(partner, []).append((x0, y0, x1, y1, int((labels[found] == label).sum())))
    added, partners = [], []
    for partner, found in marks.items():
        height = heights[partner]
        groups: list[list] = []
        for mark in sorted(found):
            if groups and mark[0] - groups[-1][2] <= MISSED_MARK_GAP * height:
                group = groups[-1]
                groups[-1] = [group[0], min(group[1], mark[1]), max(group[2], mark[2]), max(group[3], mark[3]),
                              group[4] + mark[4]]
            else:
                groups.append(list(mark))
        for x0, y0, x1, y1, pixels in groups:
            level = (np.minimum(boxes[:, 3], y1) - np.maximum(boxes[:, 1], y0)) > 0
            beside = np.maximum(boxes[level, 0] - x1, x0 - boxes[level, 2]).min()
            middle = (y0 + y1) / 2
            around = np.abs((boxes[:, 1] + boxes[:, 3]) / 2 - middle) <= MISSED_MARK_CONTEXT_HEIGHTS * height
            if (y1 - y0 >= MISSED_MARK_MIN_HEIGHT * height and x1 - x0 <= MISSED_MARK_MAX_LENGTH * height
                    and pixels >= MISSED_MARK_MIN_INK * height**2 and beside > MISSED_MARK_GAP * height
                    and boxes[around, 0].min() < x0 and boxes[around, 2].max() > x1):
                reach = CORE_INSET_RATIO * height
                added.append(box_to_polygon([max(x0 - reach, 0.0), boxes[partner, 1],
                                             min(x1 + reach, float(grey.shape[1])), boxes[partner, 3]]))
                partners.append(partner)
    return added, partners


def glyph_stacks(polygons: Sequence[Polygon]) -> list[list[int]]:
    """The runs that may be the glyphs of lines printed up or down the page: stacks, top to bottom, of at least
    `VERTICAL_MIN_GLYPHS` short runs (`VERTICAL_GLYPH_MAX_ASPECT`) of like length, one below the other with little
    paper between (`VERTICAL_GLYPH_ALIKE`, `VERTICAL_GLYPH_GAP`), at least `VERTICAL_MIN_LENGTH` times as high as
    wide. Each run is in one stack at most."""
    boxes = np.asarray([polygon_to_box(polygon) for polygon in polygons], dtype=np.float64).reshape(-1, 4)
    lengths, heights = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    glyphs = [index for index in np.argsort(boxes[:, 1], kind="stable")
              if lengths[index] <= VERTICAL_GLYPH_MAX_ASPECT * heights[index]]
    stacks: list[list[int]] = []
    for index in glyphs:
        best, best_gap = None, math.inf
        for stack in stacks:
            last = stack[-1]
            shorter, longer = sorted((lengths[index], lengths[last]))
            overlap = min(boxes[index, 2], boxes[last, 2]) - max(boxes[index, 0], boxes[last, 0])
            gap = boxes[index, 1] - boxes[last, 3]
            below = boxes[index, 1] + boxes[index, 3] > boxes[last, 1] + boxes[last, 3]
            if (below and shorter >= VERTICAL_GLYPH_ALIKE * longer and overlap >= VERTICAL_GLYPH_ALIKE * shorter
                    and gap <= VERTICAL_GLYPH_GAP * (shorter + longer) / 2 and gap < best_gap):
                best, best_gap = stack, gap
        if best is None:
            stacks.append([int(index)])
        else:
            best.append(int(index))
    found = []
    for stack in stacks:
        width = float(np.median(lengths[stack]))
        if (len(stack) >= VERTICAL_MIN_GLYPHS
                and boxes[stack, 3].max() - boxes[stack, 1].min() >= VERTICAL_MIN_LENGTH * width):
            found.append(stack)
    return found


def vertical_lines(page: Image.Image, polygons: Sequence[Polygon], scores: Sequence[float], recognizer,
                   paper=None, min_character_confidence: float = MIN_CHARACTER_CONFIDENCE,
                   **reading_options) -> list[tuple[PageLine, list[int]]]:
    """The lines printed up or down the page (`glyph_stacks`), read, each with the runs it is read from: each stack's
    box is read turned both ways, and kept, in the way read more confidently, where that reads it better than its runs
    as they lie (`VERTICAL_CONFIDENCE_MARGIN`). `reading_options` go to `iter_recognize` (decoding, num_beams,
    old_umlauts)."""
    stacks = glyph_stacks(polygons)
    if not stacks:
        return []
    paper = paper_colour(page) if paper is None else paper
    crops, ways = [], []
    for stack in stacks:
        x0, y0, x1, y1 = np.asarray([polygon_to_box(polygons[index]) for index in stack]).T
        x0, y0, x1, y1 = float(x0.min()), float(y0.min()), float(x1.max()), float(y1.max())
        down = [[x1, y0], [x1, y1], [x0, y1], [x0, y0]]  # its glyphs' tops to the right: read top to bottom
        up = [[x0, y1], [x0, y0], [x1, y0], [x1, y1]]
        ways.append([(270, down), (90, up)])
        crops += [crop_line(page, down, paper), crop_line(page, up, paper)]
        crops += [crop_line(page, polygons[index], paper) for index in stack]
    model, processor = recognizer
    read = {index: reading for index, reading, _ in iter_recognize(
        model, processor, crops, progress=False, output_confidences=True, warn_of_sizes=False, **reading_options)}
    readings = [read[index] for index in range(len(crops))]
    lines, start = [], 0
    for stack, both in zip(stacks, ways):
        turned_readings = readings[start:start + 2]
        as_they_lie = float(np.mean([character_confidence(reading)
                                     for reading in readings[start + 2:start + 2 + len(stack)]]))
        start += 2 + len(stack)
        way = max(range(2), key=lambda option: character_confidence(turned_readings[option]))
        reading, confidence = turned_readings[way], character_confidence(turned_readings[way])
        if confidence < max(min_character_confidence, as_they_lie + VERTICAL_CONFIDENCE_MARGIN):
            continue
        angle, polygon = both[way]
        lines.append((PageLine(text=reading.text, confidence=reading.confidence,
                              score=float(np.mean([scores[index] for index in stack])),
                              box=polygon_to_box(polygon), polygons=[polygon], angle=angle), stack))
    return lines


def speck_rows(polygons: Sequence[Polygon], rows: Sequence[Sequence[int]]) -> set[int]:
    """The runs of the rows far less high than the page's printed lines: rows whose box is less high than
    `MIN_LINE_HEIGHT_RATIO` of the page's typical row, the height at and under which half of all rows' width lies (a
    speck is narrow, so a noisy scan's hundreds of specks do not make the typical row a speck). Such a row, read,
    would be left out as a line far less high than the page's; it is not read (a noisy fax page: 281 runs, most
    of them specks)."""
    rows = [row for row in rows if row]
    if len(rows) < 2:
        return set()
    boxes = [np.asarray([polygon_to_box(polygons[index]) for index in row], dtype=np.float64) for row in rows]
    heights = np.asarray([row_boxes[:, 3].max() - row_boxes[:, 1].min() for row_boxes in boxes])
    widths = np.asarray([row_boxes[:, 2].max() - row_boxes[:, 0].min() for row_boxes in boxes])
    lowest = MIN_LINE_HEIGHT_RATIO * weighted_median(heights, widths)
    return {index for row, height in zip(rows, heights) if height < lowest for index in row}


def read_lines_as_they_lie(page: Image.Image, found: dict, recognizer, batch_size: int = 32, decoding: str | None = None,
                           min_character_confidence: float = MIN_CHARACTER_CONFIDENCE, num_beams: int | None = None,
                           old_umlauts: bool = False) -> tuple[list[PageLine], float | None]:
    """The printed lines of a page as it lies, in reading order (`read_page`'s steps after the detector, whose lines
    on the page `found` holds), and the median character confidence of its widest runs' readings
    (`ORIENTATION_SAMPLE_RUNS`; None where no run was read): what tells an upright page from one upside down."""
    grey = np.asarray(page.convert("L"))
    gain = light_gain(grey)  # a page in a shadow is looked at evenly lit
    grey = even_light(grey, gain)
    # a run no deeper than the paper's grain is not print, and is not read (`GRAIN_INK_DEPTHS`); a page of such runs
    # alone (a blank sheet's grain, noise) holds no text
    deepest_grain = GRAIN_INK_DEPTHS * paper_grain(grey) if min_character_confidence > 0 else 0.0
    if not any(sparse_ink_contrast(grey[max(int(y0), 0):math.ceil(y1), max(int(x0), 0):math.ceil(x1)]) >= deepest_grain
               for x0, y0, x1, y1 in np.asarray(found["boxes"], dtype=np.float64).reshape(-1, 4)):
        return [], None
    light_text = page_has_light_text(grey)  # told once for every look at the page's ink below
    kept = distinct_lines(grey, found["boxes"], light_text)
    polygons = [polygon for polygon, keep in zip(found["polygons"], kept) if keep]
    detected_scores = [score for score, keep in zip(found["scores"], kept) if keep]
    paper = paper_colour(page)
    vertical = vertical_lines(page, polygons, detected_scores, recognizer, paper, min_character_confidence,
                              decoding=decoding, num_beams=num_beams, old_umlauts=old_umlauts)
    # the detected run each polygon is (a piece of)
    polygons, detections = split_stacked_lines(grey, polygons, light_text)
    rules_between_columns = vertical_rules(grey, polygons, light_text)
    polygons, sources = split_at_column_rules(polygons, rules_between_columns)
    detections = [detections[source] for source in sources]
    tables = table_rules(grey, polygons, rules_between_columns, light_text)
    rules_between_columns = [rule for rule in rules_between_columns if rule not in tables]
    gutters = column_gutters(grey, polygons, light_text)
    polygons, sources = split_at_gutters(polygons, gutters)
    detections = [detections[source] for source in sources]
    rules_between_columns = sorted(rules_between_columns + gutters)
    rules = horizontal_rules(grey, polygons, light_text)
    polygons, sources = split_at_columns(polygons, rules, rules_between_columns)
    detections = [detections[source] for source in sources]
    numbered = polygons
    polygons, sources, page_numbers = flanking_dashes(grey, polygons, light_text)
    detections = [detections[source] for source in sources]
    rows = reading_order(polygons, rules, rules_between_columns)
    polygons, rows, members = join_line_pieces(polygons, rows, detections, rules_between_columns + tables,
                                               keep_apart=page_numbers)
    scores = [float(np.mean([detected_scores[detections[member]] for member in group])) for group in members]
    page_numbers = [index for index, group in enumerate(members) if group[0] in page_numbers]
    sources = [sources[group[0]] for group in members]
    # a line up or down the page is read from its box, after the output line its first glyph run comes in
    glyphs = {index for index, group in enumerate(members)
              if any(all(detections[member] in stack for member in group) for _, stack in vertical)}
    placed: dict[int, list[PageLine]] = {}
    for line, stack in vertical:
        first = next((position for position, row in enumerate(rows)
                      if any(detections[member] in stack for index in row for member in members[index])), len(rows) - 1)
        placed.setdefault(first, []).append(line)
    # ink the detector left out on a line is read with the line, in its place along it; the reading order is the runs'
    marks, partners = missed_marks(grey, polygons, light_text)
    for mark, partner in zip(marks, partners):
        row = next((row for row in rows if partner in row), None)
        if row is None:
            continue
        start = polygon_to_box(mark)[0]
        row.insert(sum(polygon_to_box(polygons[index])[0] < start for index in row), len(polygons))
        polygons.append(mark)
        scores.append(scores[partner])
        sources.append(sources[partner])
    uneven = {index for index, polygon in enumerate(polygons) if unevenly_lit(gain, polygon)}
    evened = Image.fromarray(even_light(np.asarray(page), gain)) if uneven else page
    specks = speck_rows(polygons, rows) if min_character_confidence > 0 else set()
    crops = {index: crop_line(evened if index in uneven else page,
                              numbered[source] if index in page_numbers else polygon, paper)
             for index, (polygon, source) in enumerate(zip(polygons, sources))
             if index not in glyphs and index not in specks}
    crops = {index: crop for index, crop in crops.items()
             if sparse_ink_contrast(np.asarray(crop.convert("L"))) >= deepest_grain}
    readings: dict[int, LineReading] = {}
    widest_confidence = None
    if crops:
        model, processor = recognizer
        cropped = list(crops)  # the glyph runs of a line up or down the page are read with it, not again
        unsearched_under = UNSEARCHED_CONFIDENCE_RATIO * min_character_confidence
        for position, reading, _ in iter_recognize(model, processor, list(crops.values()), batch_size=batch_size,
                                                    decoding=decoding, num_beams=num_beams, progress=False,
                                                    output_confidences=True, warn_of_sizes=False,
                                                    old_umlauts=old_umlauts, best_path_under=unsearched_under):
            readings[cropped[position]] = reading
        widest = sorted(crops, key=lambda index: -crops[index].width)[:ORIENTATION_SAMPLE_RUNS]
        widest_confidence = float(np.median([character_confidence(readings[index]) for index in widest]))
        doubtful = [index for index, reading in readings.items()
                    if index not in page_numbers and character_confidence(reading) < min_character_confidence]
        narrowed = [narrowed_line(crops[index]) for index in doubtful]
        narrowed_under = UNSEARCHED_CONFIDENCE_RATIO * NARROWED_MIN_CONFIDENCE if min_character_confidence > 0 else 0.0
        for position, reading, _ in iter_recognize(model, processor, narrowed, batch_size=batch_size, decoding=decoding,
                                                    num_beams=num_beams, progress=False, output_confidences=True,
                                                    warn_of_sizes=False, old_umlauts=old_umlauts,
                                                    best_path_under=narrowed_under):
            index = doubtful[position]
            if character_confidence(reading) >= NARROWED_MIN_CONFIDENCE and (
                    character_confidence(reading) > character_confidence(readings[index])):
                readings[index] = reading
        if old_umlauts:
            readings = dict(zip(readings, write_page_umlauts_alike(list(readings.values()))))
    lines = []
    for position, row in enumerate(rows):
        row = [index for index in row if index in readings and readings[index].text and (
            index in page_numbers or character_confidence(readings[index]) >= min_character_confidence)]
        texts = [f"{PAGE_NUMBER_DASH} {readings[index].text} {PAGE_NUMBER_DASH}" if index in page_numbers
                 else readings[index].text for index in row]
        if min_character_confidence > 0 and not any(character.isalnum() for text in texts for character in text):
            texts = []  # a speck, a smudge or an ornament read as marks alone (`-`, `*`, `\`): no line of text
        if texts:
            boxes = np.asarray([polygon_to_box(polygons[index]) for index in row])
            lines.append(PageLine(
                text=" ".join(texts),
                confidence=float(np.prod([readings[index].confidence for index in row])),
                score=float(np.mean([scores[index] for index in row])),
                box=[float(boxes[:, 0].min()), float(boxes[:, 1].min()), float(boxes[:, 2].max()),
                     float(boxes[:, 3].max())],
                polygons=[polygons[index] for index in row],
            ))
        lines += placed.get(position, [])  # after what its first glyph stands beside
    if min_character_confidence > 0 and len(lines) > 1:  # a line far less high than the page's lines is a speck, an edge or a rule read as marks
        heights = [line.box[3] - line.box[1] for line in lines]
        lowest = MIN_LINE_HEIGHT_RATIO * float(np.median(heights))
        lines = [line for line, height in zip(lines, heights) if height >= lowest]
    return lines, widest_confidence


def read_page(image, recognizer, detector, batch_size: int = 32, decoding: str | None = None,
              threshold: float = DETECTION_THRESHOLD, min_character_confidence: float = MIN_CHARACTER_CONFIDENCE,
              num_beams: int | None = None, old_umlauts: bool = False, auto_rotate: bool = True) -> PageReading:
    """Reads one page (a path, PIL image or array): detects its lines (`detector`: the model and image processor of
    `load_line_detector`, or a function of the page giving `post_process_line_detection`'s dict), leaves out the
    faint ones (`distinct_lines`), reads a stack of glyph runs as a line up or down the page where it reads so
    (`vertical_lines`), cuts a run holding printed lines stacked one above the other between them
    (`split_stacked_lines`), cuts the lines joined across a printed rule between columns (`vertical_rules`,
    `split_at_column_rules`; a table's rules cut them too, but do not part columns: `table_rules`) or a gutter without
    one (`column_gutters`), finds the rules across the page (`horizontal_rules`), lengthens a page number boxed
    without its dashes over them, its number read alone and written between dashes (`flanking_dashes`), orders the
    lines (`reading_order`), joins the pieces of a line that the detector found apart into one run (`join_line_pieces`),
    adds the ink it left out on a line as runs in their places along it (`missed_marks`),
    reads each with `recognizer` (the model and processor of `load_recognizer`; a run its best path reads too unsurely
    to keep, by its best path alone: `UNSEARCHED_CONFIDENCE_RATIO`), reads those read with a
    `character_confidence` under `min_character_confidence` again narrowed (`narrowed_line`: double-width print), leaves
    out those still read so (marks that are not text; 0 keeps every run; a page number between dashes is kept: the
    dashes say it is text), joins the runs of each printed line and leaves out a line read as no letter or digit (a
    speck or an ornament read as `-`, `*`) and a line far less high than the page's (`MIN_LINE_HEIGHT_RATIO`: a torn
    edge, a speck, the rows of which are not read at all where they are told before reading, `speck_rows`; 0 reads and
    keeps them too). A run no deeper than the paper's grain (`GRAIN_INK_DEPTHS`) is not read, and a
    page of such runs alone (a blank sheet scanned, noise) is read as no line (0 reads them). A 1-bit scan whose grey
    paper is dithered into dots (`is_dithered`) is read softened, its dots merged into their grey (`DITHER_SOFTENING`).
    `decoding`, `num_beams` and `old_umlauts` as `iter_recognize` takes them (None: as the recognizer's `generate()`
    reads); with `old_umlauts` the page's umlauts are then written alike
    (`write_page_umlauts_alike`). With `auto_rotate` (the default) a page on its side or upside down is read
    turned upright (`quarter_turn`, then `upside_down`: before a page on its side is read, after a page not on its
    side is read where its widest runs read with a median character confidence under `READ_UPRIGHT_CONFIDENCE`;
    `PageReading.rotation`), its boxes given in the image's pixels. An image of
    one line cropped close is read as that line, without the detector (`is_line_image`, `read_line_image`). A PDF of
    one page is read as that page, at its scan's resolution (`textrec.processing.document_pages`); a document of
    several pages (a PDF, a TIFF) is refused: `read_document` reads each."""
    if isinstance(image, (str, os.PathLike)):  # a PDF's pages, a TIFF's frames (`document_page_count`)
        pages = document_page_count(image)
        if pages != 1:
            kind = "PDF" if is_pdf(image) else "TIFF"
            raise ValueError(f"{image}: a {kind} of {pages} pages: read_document() reads each of them")
    if is_pdf(image):
        rendered = iter_document_pages(image)
        image = next(rendered)[1]
        rendered.close()
    given = load_image(image)
    given = given.convert("L") if given.mode not in ("L", "RGB") else given
    if is_dithered(np.asarray(given.convert("L"))):  # a 1-bit scan's grey paper in dots: read with its dots merged
        given = given.filter(ImageFilter.GaussianBlur(DITHER_SOFTENING))
    if is_line_image(given):
        return read_line_image(given, recognizer, batch_size=batch_size, decoding=decoding, num_beams=num_beams,
                               old_umlauts=old_umlauts, min_character_confidence=min_character_confidence)
    if auto_rotate:
        rotation, found = quarter_turn(given, detector, threshold)
    else:
        rotation, found = 0, run_detector(detector, given, threshold)
    options = dict(batch_size=batch_size, decoding=decoding, min_character_confidence=min_character_confidence,
                   num_beams=num_beams, old_umlauts=old_umlauts)
    # a page found on its side lies one way up as often as the other: its longest runs are read both ways up first
    sideways = rotation == 90
    if sideways and upside_down(turned(given, rotation), found, recognizer, decoding):
        rotation = 270
        found = run_detector(detector, turned(given, rotation), threshold)
    lines, widest_confidence = read_lines_as_they_lie(turned(given, rotation), found, recognizer, **options)
    # a page whose widest runs read as upright print does is upright; one read doubtfully is read half a turn turned
    # where its longest runs read better so (`upside_down`)
    doubted = auto_rotate and not sideways and widest_confidence is not None and (
        widest_confidence < READ_UPRIGHT_CONFIDENCE)
    if doubted and upside_down(turned(given, rotation), found, recognizer, decoding):
        rotation = (rotation + 180) % 360
        found = run_detector(detector, turned(given, rotation), threshold)
        lines, _ = read_lines_as_they_lie(turned(given, rotation), found, recognizer, **options)
    if rotation:
        for line in lines:
            line.polygons = [[list(point_before_turn(x, y, rotation, given.width, given.height)) for x, y in polygon]
                             for polygon in line.polygons]
            points = np.asarray([point for polygon in line.polygons for point in polygon], dtype=np.float64)
            line.box = [*map(float, points.min(axis=0)), *map(float, points.max(axis=0))]
    return PageReading(width=given.width, height=given.height, lines=lines, rotation=rotation)


def read_document(path, recognizer, detector, dpi: float | None = None, progress: bool = True,
                  **read_page_arguments) -> list[PageReading]:
    """Reads every page of a document file (a PDF, a multi-page TIFF; an image file, or an image in memory, is a
    document of one page) with `read_page` (`read_page_arguments`: its keyword arguments), in page order. PDF pages are
    rendered at their scans' resolution, or at `dpi` if given (`textrec.processing.document_pages`); a progress bar counts the pages of a
    document of several where `progress`."""
    from tqdm.auto import tqdm

    if not isinstance(path, (str, os.PathLike)):  # an image in memory (a PIL image, an array): one page
        return [read_page(path, recognizer, detector, **read_page_arguments)]
    total = document_page_count(path)
    pages = iter_document_pages(path, dpi)
    return [read_page(image, recognizer, detector, **read_page_arguments)
            for _, image in tqdm(pages, total=total, unit="page", disable=not progress or total < 2)]


PICTURE_COLOURS = ((220, 30, 30), (30, 120, 220), (20, 160, 60), (200, 120, 0))
"""The colours the lines of a page picture take in turn."""


def draw_page_reading(page: Image.Image, reading: PageReading, longest_side: int = 1400) -> Image.Image:
    """A picture of what the page reader found: each output line's runs outlined and numbered in reading order, the
    picture no larger than `longest_side` pixels."""
    from PIL import ImageDraw, ImageFont

    picture = page.convert("RGB")
    canvas = ImageDraw.Draw(picture)
    font = ImageFont.load_default(size=max(12, picture.height // 90))
    for number, line in enumerate(reading.lines, start=1):
        colour = PICTURE_COLOURS[number % len(PICTURE_COLOURS)]
        for polygon in line.polygons:
            canvas.polygon([tuple(point) for point in polygon], outline=colour, width=max(2, picture.height // 600))
        canvas.text((line.box[0] - 4, line.box[1]), str(number), fill=colour, font=font, anchor="rt")
    scale = longest_side / max(picture.size)
    return picture.resize((round(picture.width * scale), round(picture.height * scale))) if scale < 1 else picture

