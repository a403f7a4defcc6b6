"""The real sets' loading, on a folder made in the test (the real data are never in the repository)."""

import json

import numpy as np
import pytest
from PIL import Image

import real_sets


def write_pages(folder, pages: dict[str, list[dict]]) -> None:
    """A `pages/` folder: each page a grey image with a black bar where each of its lines is, and `pages.jsonl`."""
    (folder / "pages").mkdir(parents=True)
    with open(folder / "pages" / "pages.jsonl", "w") as rows:
        for name, lines in pages.items():
            pixels = np.full((200, 300), 230, dtype=np.uint8)
            for line in lines:
                left, top, right, bottom = line["box"]
                pixels[top:bottom, left:right] = 0
            Image.fromarray(pixels).save(folder / "pages" / name)
            rows.write(json.dumps({"file_name": name, "subset": "funsd", "lines": lines}) + "\n")


def test_page_lines_are_cut_by_their_boxes_with_a_margin_split_by_page(tmp_path):
    names = [f"{index:04d}.png" for index in range(10)]
    lines = [{"box": [10, 20, 110, 40], "text": "TO: K. A. Sparrow"}, {"box": [0, 0, 30, 12], "text": "( )"},
             {"box": [280, 180, 300, 200], "text": "3"}]
    write_pages(tmp_path, dict.fromkeys(names, lines))
    forms = real_sets.REAL_SETS["forms"]
    crops = tmp_path / "crops"
    parts = {split: real_sets.page_line_crops(forms, split, tmp_path, crops) for split in real_sets.SPLITS}

    held_out_pages = {name for name in names if real_sets.split_of(name) == "held-out"}
    assert 0 < len(held_out_pages) < len(names)  # both parts hold pages
    assert len(parts["held-out"][0]) == 2 * len(held_out_pages)  # a line without a letter or digit is left out
    assert len(parts["development"][0]) == 2 * (len(names) - len(held_out_pages))
    assert parts["development"][1][:2] == ["TO: K. A. Sparrow", "3"]
    first, corner = (Image.open(path) for path in parts["development"][0][:2])
    margin = real_sets.LINE_CROP_MARGIN
    assert first.size == (100 + 2 * margin, 20 + 2 * margin)  # the box and the margin around it
    assert corner.size == (20 + margin, 20 + margin)  # clipped at the page's edge
    grey = np.asarray(first.convert("L"))
    assert grey[margin:-margin, margin:-margin].max() == 0 and grey[0].min() == 230  # the line, framed by paper

    first.close()
    for name in names:  # cut once: later calls read the crops, not the pages
        (tmp_path / "pages" / name).unlink()
    assert real_sets.page_line_crops(forms, "development", tmp_path, crops) == parts["development"]


def test_readmes_result_tables_are_the_results_files():
    """Each README table marked `<!-- ... table: PATH -->` is the table of the results file PATH (which its command
    writes), row for row: README's numbers come from what the benchmarks wrote, not from a hand's copy."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    markers = re.findall(r"<!-- [^>]*table: (\S+) -->\n((?:\|.*\n)+)", readme)
    assert len(markers) >= 3, "README's real-data, handwriting and pages tables carry their results file's name"
    for path, table in markers:
        written = [line for line in (root / path).read_text(encoding="utf-8").splitlines() if line.startswith("|")]
        assert table.splitlines() == written, path


def test_pages_are_compared_at_their_ground_truths_transcription_level():
    """The page benchmark compares the NZZ's pages as its ground truth writes them (the long s as s, a line-end break
    as ¬, whatever mark an engine prints), the book pages with their long s but a line-end break as one mark too
    (their ground truth writes Fraktur's double hyphen `-`, the OCR-D line set `—`), both with Fraktur's capital J
    before a consonant as I, receipts upper-cased; lines become one space; a dash after a word or a number is no
    break."""
    from benchmark_pages import normalise

    page = "Die Uni-\nverſität ſo —\nBaſel⸗\nim Jahre 12-\nzwölf"
    assert normalise(page, "nzz") == "Die Uni¬ versität so — Basel¬ im Jahre 12- zwölf"
    assert normalise(page, "ocrd") == "Die Uni¬ verſität ſo — Baſel¬ im Jahre 12- zwölf"
    assert normalise("Die Uni—\nverſität", "ocrd") == normalise("Die Uni-\nverſität", "ocrd")
    assert normalise("Total  5.00\nCash", "sroie") == "TOTAL 5.00 CASH"
    # Fraktur's one capital for I and J: the pages' ground truth writes it by its sound, the recognizers as printed
    assert normalise("Jch ſah Jhn, Ja, im Jahr", "ocrd") == normalise("Ich ſah Ihn, Ja, im Jahr", "ocrd")
    assert normalise("Jn der Stadt", "nzz") == "In der Stadt" and normalise("Jch", "sroie") == "JCH"


def test_a_timed_set_is_read_once_before_the_read_that_is_timed_and_scored():
    """`benchmark_real_data.score_system` times each system warm: the sets whose lines/s a table shows are read twice,
    the others once, and the scores are the timed read's."""
    from benchmark_real_data import SPEED_SET, score_system

    sets = {SPEED_SET: (["a.png", "b.png"], ["AB", "CD"]), "scene": (["c.png"], ["ef"])}
    reads, answers = [], iter([["XX", "YY"], ["AB", "CD"], ["ef"]])

    def read(paths, name):
        reads.append(name)
        return next(answers)

    scores = score_system(read, sets)
    assert reads == [SPEED_SET, SPEED_SET, "scene"]
    assert scores[SPEED_SET]["cer"] == 0.0 and scores["scene"]["cer"] == 0.0
    assert scores[SPEED_SET]["lines_per_second"] > 0


def test_two_column_pages_set_each_pages_text_block_beside_the_next_of_its_document(tmp_path, monkeypatch):
    """`benchmark_pages.py --two_columns`: pages of one document are paired in turn, a page alone in its document with
    the next such page; each composed page holds the first page's text block, then the second's scaled to the first's
    line height, the gutter between them as asked; its lines' boxes lie on the same print as on the pages they came
    from, the second page's rows after the first's."""
    import benchmark_pages

    monkeypatch.setattr(benchmark_pages, "PAGES_DIR", tmp_path)
    pages = []
    for name, document, size, height in [("a.png", "x", (300, 400), 20), ("b.png", "x", (300, 400), 20),
                                         ("c.png", "y", (600, 800), 40), ("d.png", "z", (300, 400), 20)]:
        pixels = np.full(size[::-1], 240, dtype=np.uint8)
        lines = []
        for row, top in enumerate(range(60, 60 + 5 * 2 * height, 2 * height)):
            box = [size[0] // 5, top, size[0] * 4 // 5, top + height]
            pixels[box[1]:box[3], box[0]:box[2]] = 10 + 40 * row
            lines.append({"box": box, "text": f"{name} {row}", "row": row, "polygon": []})
        Image.fromarray(pixels).save(tmp_path / name)
        pages.append({"file_name": name, "subset": "ocrd", "document": document, "lines": lines})
    pairs = benchmark_pages.page_runs(pages)
    assert [(left["file_name"], right["file_name"]) for left, right in pairs] == [("a.png", "b.png"),
                                                                                ("c.png", "d.png")]
    pages.append({**pages[0], "file_name": "e.png", "document": "x"})
    Image.open(tmp_path / "a.png").save(tmp_path / "e.png")
    triples = benchmark_pages.page_runs(pages, 3)
    assert [[page["file_name"] for page in run] for run in triples] == [["a.png", "b.png", "e.png"]]
    three = benchmark_pages.two_column_page(benchmark_pages.two_column_page(*triples[0][:2], 1.0, tmp_path),
                                            triples[0][2], 1.0, tmp_path)
    assert [text for _, text in benchmark_pages.printed_lines(three)] == [
        f"{name} {row}" for name in ("a.png", "b.png", "a.png") for row in range(5)]
    boxes = np.asarray([line["box"] for line in three["lines"]])
    assert np.all(np.diff(boxes[::5, 0]) > 0) and np.allclose(boxes[:5, 1], boxes[10:, 1])  # side by side, level
    image = np.asarray(Image.open(three["path"]).convert("L"))
    for row, box in enumerate(boxes.round().astype(int)):
        assert abs(float(np.median(image[box[1] + 2:box[3] - 2, box[0] + 2:box[2] - 2])) - (10 + 40 * (row % 5))) <= 2
    pages.pop()
    composed = benchmark_pages.two_column_page(pages[2], pages[3], 1.5, tmp_path)
    image = np.asarray(Image.open(composed["path"]).convert("L"))
    assert [text for _, text in benchmark_pages.printed_lines(composed)] == [
        *(f"c.png {row}" for row in range(5)), *(f"d.png {row}" for row in range(5))]
    boxes = np.asarray([line["box"] for line in composed["lines"]])
    for row, box in enumerate(boxes.round().astype(int)):
        print_inside = image[box[1] + 2:box[3] - 2, box[0] + 2:box[2] - 2]
        assert abs(float(np.median(print_inside)) - (10 + 40 * (row % 5))) <= 2
    assert np.allclose(boxes[5:, 3] - boxes[5:, 1], 40)  # the second page scaled to the first's line height
    assert boxes[5, 0] - boxes[0, 2] == pytest.approx(1.5 * 40, abs=2)
    assert "polygon" not in composed["lines"][0]
    gutter = image[:, int(boxes[0, 2]) + 2:int(boxes[5, 0]) - 2]
    assert gutter.min() >= 200  # paper only
    ruled = benchmark_pages.two_column_page(pages[2], pages[3], 1.5, tmp_path, column_rule=True)
    image = np.asarray(Image.open(ruled["path"]).convert("L"))
    dark = np.flatnonzero((image[:, int(boxes[0, 2]) + 2:int(boxes[5, 0]) - 2] < 128).any(axis=0))
    assert len(dark) == 2 and dark[1] - dark[0] == 1  # a rule two pixels thick (a twentieth of 40) ...
    middle = int(boxes[0, 2]) + 2 + dark[0] + 1
    assert middle == pytest.approx((boxes[0, 2] + boxes[5, 0]) / 2, abs=2)  # ... down the gutter's middle ...
    rows = np.flatnonzero(image[:, middle - 1] < 128)
    assert rows[0] == pytest.approx(boxes[:, 1].min(), abs=1) and rows[-1] == pytest.approx(boxes[:, 3].max(), abs=1)
    assert np.ptp(image[rows, middle - 1]) <= 2 and image[rows[0], middle - 1] <= 20  # ... in the page's ink


def test_pages_of_other_documents_are_set_side_by_side_on_one_paper(tmp_path, monkeypatch):
    """`--across_documents`: each page beside a page of another document (no run holds two pages of one), every page a
    left column once; the right page's paper, darker on its scan, comes out in the left page's tone, its print dark."""
    import benchmark_pages

    monkeypatch.setattr(benchmark_pages, "PAGES_DIR", tmp_path)
    pages = []
    for name, document, paper in [("a.png", "x", 240), ("b.png", "x", 240), ("c.png", "y", 150), ("d.png", "z", 200)]:
        pixels = np.full((400, 300), paper, dtype=np.uint8)
        lines = []
        for row, top in enumerate(range(60, 260, 40)):
            pixels[top:top + 20, 60:240] = 20
            lines.append({"box": [60, top, 240, top + 20], "text": f"{name} {row}", "row": row, "polygon": []})
        Image.fromarray(pixels).save(tmp_path / name)
        pages.append({"file_name": name, "subset": "ocrd", "document": document, "lines": lines})
    runs = benchmark_pages.page_runs(pages, across_documents=True)
    assert [(left["file_name"], right["file_name"]) for left, right in runs] == [
        ("a.png", "c.png"), ("b.png", "d.png"), ("c.png", "a.png"), ("d.png", "b.png")]
    assert benchmark_pages.page_runs(pages, 2) == [(pages[0], pages[1]), (pages[2], pages[3])]  # as before without
    composed = benchmark_pages.two_column_page(pages[0], pages[2], 1.0, tmp_path)
    image = np.asarray(Image.open(composed["path"]).convert("L")).astype(int)
    boxes = np.asarray([line["box"] for line in composed["lines"]]).round().astype(int)
    right_paper = image[:, boxes[5, 0] - 8:boxes[5, 0] - 2]
    assert abs(int(np.median(right_paper)) - 240) <= 2 and np.ptp(image[:, boxes[0, 2] + 2:boxes[5, 0] - 2]) <= 4
    right_print = image[boxes[5, 1] + 2:boxes[5, 3] - 2, boxes[5, 0] + 2:boxes[5, 2] - 2]
    assert np.median(right_print) <= 40


def test_the_error_breakdown_splits_a_cer_into_kinds_that_add_up_to_it():
    import error_breakdown

    references = ["TOTAL 12.50", "THANK YOU", "abcdef", "RM 5", "ABCDEFG"]
    hypotheses = ["TOTAL 12,50", "THANKYOU", "xyz", "RM 6", "ABCDEFG "]
    result = error_breakdown.break_down(references, hypotheses)
    total = sum(len(reference) for reference in references)
    # `.` read `,` (a mark), a space left out, the third line not read (6 edits), `5` read `6`, a space added at a
    # line's end (not stripped, as the CER does not strip it)
    assert result["points"] == pytest.approx({"spaces": 2 / total, "marks": 1 / total, "letters and digits": 1 / total,
                                              "lines under 50% read": 6 / total})
    assert result["cer"] == pytest.approx(evaluate_cer(hypotheses, references))
    assert result["substitutions"][:2] == [((".", ","), 1), (("5", "6"), 1)]
    assert error_breakdown.kind_of("", "-") == "marks" and error_breakdown.kind_of(" ", "") == "spaces"
    assert error_breakdown.kind_of("B", "8") == "letters and digits"


def evaluate_cer(predictions, references):
    from textrec.processing.metrics import evaluate_texts

    return evaluate_texts(predictions, references)["cer"]
