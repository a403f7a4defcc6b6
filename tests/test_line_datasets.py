"""Tests of the handwritten-line loaders: the George Washington database and IAM.

Each test writes a small copy of the release in ``tmp_path``, in the exact public layout and formats (PNG
line images drawn with PIL, ``transcription.txt`` and the ``sets/cv1..cv4`` lists; IAM ``xml/<form>.xml``
files with escaped attributes, ``ascii/lines.txt`` and ``lines/<a01>/<a01-000u>/<id>.png``).
"""

import logging
from xml.sax.saxutils import escape

import pytest
from PIL import Image, ImageDraw

from textrec.processing.data.iam import load_iam_lines
from textrec.processing.data.loading import load_text_recognition_dataset, parse_dataset_options
from textrec.processing.data.washington import decode_washington_transcription, load_washington_lines

# ----------------------------------------------------------------------------------------- fixtures

GW_LINES = {
    "270-01": (
        "s_2-s_7-s_0-s_pt|L-e-t-t-e-r-s-s_cm|O-r-d-e-r-s-s_cm|a-n-d|I-n-s-t-r-u-c-t-i-o-n-s-s_pt",
        "270. Letters, Orders, and Instructions.",
    ),
    "270-02": (
        "o-n-l-y|f-o-r|t-h-e|p-u-b-l-i-c-k|u-s-e-s_cm|b-y|p-a-r-t-i-c-u-s_mi",
        "only for the publick use, by particu-",
    ),
    "270-03": ("O-c-t-o-b-e-r|s_2-s_6th-s_pt|s_GW", "October 26th. G.W."),
    "270-04": ("R-a-n-g-e-r-s-s_sq|t-o|s_mi|d-a-y|s_qo", "Rangers; to - day :"),
    "270-05": ("C-o-c-k-e-s-s_qt|s_bl|s_lb|s_1-s_0|s_br", "Cockes' ( £ 10 )"),
    "270-06": ("t-h-e|s_1st|o-f|S-t-o-r-e-s-s_cm|s_et-c-s_pt", "the 1st of Stores, &c."),
}
GW_SETS = {
    fold: {
        "train": [f"270-0{n}" for n in order[:4]],
        "validation": [f"270-0{order[4]}"],
        "test": [f"270-0{order[5]}"],
    }
    for fold, order in {1: "123456", 2: "234561", 3: "345612", 4: "456123"}.items()
}
"""The line ids of each fold and split: every (fold, split) pair lists different lines."""

IAM_LINES = [  # (id, text, segmentation), in the order of the ground truth
    ("a01-000u-00", "A MOVE to stop Mr. Gaitskell from", "ok"),
    ("a01-000u-01", "\"I'm tired & cold\" he said .", "ok"),
    ("a01-000u-02", "nominating any more Labour", "err"),
    ("a01-003-00", "Though they may gather some Left-wing support", "ok"),
    ("a01-003-01", "a large majority of Labour M Ps", "ok"),
]


def write_line_image(path, text, width):
    """A white line image with ``text`` in black; ``width`` tells the images apart."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.new("L", (width, 24), 255)
    ImageDraw.Draw(image).text((2, 6), text, fill=0)
    image.save(path, format="PNG")


@pytest.fixture
def gw_root(tmp_path):
    """A ``washingtondb-v1.0`` folder with the lines of :data:`GW_LINES`; image widths 101, 102, ..."""
    root = tmp_path / "washingtondb-v1.0"
    (root / "ground_truth").mkdir(parents=True)
    (root / "ground_truth" / "transcription.txt").write_text(
        "".join(f"{line_id} {encoded}\n" for line_id, (encoded, _) in GW_LINES.items())
    )
    for line_id, (_, text) in GW_LINES.items():
        write_line_image(root / "data" / "line_images_normalized" / f"{line_id}.png", text, gw_width(line_id))
    for fold, splits in GW_SETS.items():
        (root / "sets" / f"cv{fold}").mkdir(parents=True)
        for split, file_name in (("train", "train.txt"), ("validation", "valid.txt"), ("test", "test.txt")):
            (root / "sets" / f"cv{fold}" / file_name).write_text("".join(f"{i}\n" for i in splits[split]))
    return root


def gw_width(line_id):
    return 100 + int(line_id[-1])


def xml_attribute(value):
    """``value`` quoted and escaped as the release escapes its attributes (``&quot;``, ``&apos;``, ``&amp;``)."""
    return '"' + escape(value, {'"': "&quot;", "'": "&apos;"}) + '"'


def iam_form_xml(form_id, lines):
    """An IAM form file holding ``lines``."""
    line_elements = []
    for line_id, text, segmentation in lines:
        words = "".join(
            f'<word id="{line_id}-{index:02d}" text={xml_attribute(word)} tag="NN">'
            f'<cmp x="{10 * index}" y="10" width="9" height="20"/></word>'
            for index, word in enumerate(text.split(" "))
        )
        line_elements.append(
            f'<line id="{line_id}" text={xml_attribute(text)} segmentation="{segmentation}" threshold="154" '
            f'lbx="408" lby="746" asx="408" asy="720" dsx="408" dsy="790">{words}</line>'
        )
    return (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n'
        f'<form created="2002-02-05" height="3542" id="{form_id}" width="2479" writer-id="000">\n'
        '<machine-printed-part><machine-print-line text="A MOVE to stop Mr. Gaitskell from"/>'
        "</machine-printed-part>\n"
        f'<handwritten-part>{"".join(line_elements)}</handwritten-part>\n'
        "</form>\n"
    )


@pytest.fixture
def iam_root(tmp_path):
    """An IAM folder with the lines of :data:`IAM_LINES` in both ground truths."""
    root = tmp_path / "iam"
    (root / "xml").mkdir(parents=True)
    for form_id in ("a01-000u", "a01-003"):
        form_lines = [line for line in IAM_LINES if line[0].startswith(form_id + "-")]
        (root / "xml" / f"{form_id}.xml").write_text(iam_form_xml(form_id, form_lines), encoding="iso-8859-1")
    (root / "ascii").mkdir()
    (root / "ascii" / "lines.txt").write_text(
        "#--- lines.txt ---\n"
        "# format: a01-000u-00 ok 154 19 408 746 1661 89 A|MOVE|to|stop|Mr.|Gaitskell|from\n#\n"
        + "".join(f"{i} {seg} 154 19 408 746 1661 89 {text.replace(' ', '|')}\n" for i, text, seg in IAM_LINES)
    )
    for index, (line_id, text, _) in enumerate(IAM_LINES):
        form = line_id.rsplit("-", 1)[0]
        write_line_image(root / "lines" / form.split("-")[0] / form / f"{line_id}.png", text, 200 + index)
    return root


IAM_IDS = [line_id for line_id, _, _ in IAM_LINES]

# ------------------------------------------------------------------------------ George Washington


@pytest.mark.parametrize(
    ("encoded", "text"),
    [
        ("s_2-s_7-s_0", "270"),  # digits
        ("s_pt|s_cm|s_sq|s_qo|s_mi|s_qt|s_bl|s_br", ". , ; : - ' ( )"),  # punctuation
        ("a-n-d|I-n-s-t-r-u-c-t-i-o-n-s", "and Instructions"),  # words
        ("s_1st|s_2-s_6th", "1st 26th"),  # ordinals
        ("s_GW|s_lb|s_et-c-s_pt|b-u-s_s", "G.W. £ &c. bus"),  # signs
    ],
    ids=["digits", "punctuation", "words", "ordinals", "signs"],
)
def test_washington_codes_decode(encoded, text):
    assert decode_washington_transcription(encoded) == text


def test_washington_unknown_code_raises_with_its_name():
    with pytest.raises(ValueError, match="s_zz"):
        decode_washington_transcription("a-s_zz|b")


def test_washington_fold_and_split_select_their_lines(gw_root):
    for fold, splits in GW_SETS.items():
        for split, ids in splits.items():
            assert load_washington_lines(gw_root, fold=fold, split=split)["id"] == ids, (fold, split)


def test_washington_rows_pair_decoded_text_with_their_image(gw_root):
    dataset = load_washington_lines(gw_root, fold=1, split="train")
    assert dataset.column_names == ["image", "text", "id"]
    for row in dataset:
        assert row["text"] == GW_LINES[row["id"]][1]
        assert row["image"].size == (gw_width(row["id"]), 24)


def test_washington_unknown_code_in_a_split_raises_with_code_and_line(gw_root):
    transcription = gw_root / "ground_truth" / "transcription.txt"
    transcription.write_text(transcription.read_text().replace("270-05 C-o", "270-05 s_sl-C-o"))
    with pytest.raises(ValueError, match=r"'s_sl' \(1x, e\.g\. line 270-05\)"):
        load_washington_lines(gw_root, fold=1, split="validation")


def test_washington_unknown_code_skipped_on_request_with_one_warning(gw_root, caplog):
    transcription = gw_root / "ground_truth" / "transcription.txt"
    transcription.write_text(transcription.read_text().replace("270-02 o", "270-02 s_sl-o"))
    with caplog.at_level(logging.WARNING):
        dataset = load_washington_lines(gw_root, fold=1, split="train", on_unknown="skip")
    assert dataset["id"] == ["270-01", "270-03", "270-04"]
    assert len(caplog.records) == 1 and "1 of 4 lines" in caplog.text and "'s_sl' (1x" in caplog.text


def test_washington_missing_image_is_skipped_with_one_warning(gw_root, caplog):
    (gw_root / "data" / "line_images_normalized" / "270-03.png").unlink()
    with caplog.at_level(logging.WARNING):
        dataset = load_washington_lines(gw_root, fold=1, split="train")
    assert dataset["id"] == ["270-01", "270-02", "270-04"]
    assert len(caplog.records) == 1 and "1 of 4 lines" in caplog.text and "270-03" in caplog.text


@pytest.mark.parametrize("fold", [0, 5, True])
def test_washington_fold_outside_1_to_4_is_refused(gw_root, fold):
    with pytest.raises(ValueError, match="fold must be one of"):
        load_washington_lines(gw_root, fold=fold)


def test_washington_missing_files_are_named(tmp_path):
    (tmp_path / "ground_truth").mkdir()
    (tmp_path / "ground_truth" / "transcription.txt").write_text("270-01 a\n")
    with pytest.raises(FileNotFoundError, match=r"lacks sets/cv3/test\.txt, data/line_images_normalized\."):
        load_washington_lines(tmp_path, fold=3, split="test")


# ------------------------------------------------------------------------------------------------ IAM


@pytest.mark.parametrize("ground_truth", ["xml", "ascii"])
def test_iam_lines_read_from_either_ground_truth(iam_root, ground_truth):
    dataset = load_iam_lines(iam_root, ground_truth=ground_truth)
    assert dataset.column_names == ["image", "text", "id"]
    assert list(zip(dataset["id"], dataset["text"])) == [(line_id, text) for line_id, text, _ in IAM_LINES]


def test_iam_xml_entities_are_decoded(iam_root):
    assert "&quot;I&apos;m tired &amp; cold&quot;" in (iam_root / "xml" / "a01-000u.xml").read_text("iso-8859-1")
    assert load_iam_lines(iam_root)["text"][1] == "\"I'm tired & cold\" he said ."


def test_iam_images_follow_the_release_layout(iam_root):
    widths = [image.size[0] for image in load_iam_lines(iam_root)["image"]]
    assert widths == [200, 201, 202, 203, 204]


def test_iam_reads_lines_txt_without_xml_folder(iam_root):
    for path in (iam_root / "xml").iterdir():
        path.unlink()
    (iam_root / "xml").rmdir()
    assert load_iam_lines(iam_root)["id"] == IAM_IDS


def test_iam_segmentation_errors_are_dropped_on_request(iam_root):
    kept = [line_id for line_id, _, segmentation in IAM_LINES if segmentation == "ok"]
    assert load_iam_lines(iam_root, skip_segmentation_errors=True)["id"] == kept


def test_iam_split_file_selects_lines_and_forms(iam_root, tmp_path):
    split_file = tmp_path / "va.lst"
    split_file.write_text("a01-000u-01\na01-003\n")
    assert load_iam_lines(iam_root, split_file=split_file)["id"] == ["a01-000u-01", "a01-003-00", "a01-003-01"]


def test_iam_split_file_entries_matching_nothing_are_reported(iam_root, tmp_path, caplog):
    split_file = tmp_path / "te.lst"
    split_file.write_text("a01-000u-00\nz09-999-00\n")
    with caplog.at_level(logging.WARNING):
        load_iam_lines(iam_root, split_file=split_file)
    assert len(caplog.records) == 1 and "1 of 2 entries" in caplog.text and "z09-999-00" in caplog.text


def test_iam_missing_image_is_skipped_with_one_warning(iam_root, caplog):
    (iam_root / "lines" / "a01" / "a01-003" / "a01-003-00.png").unlink()
    with caplog.at_level(logging.WARNING):
        dataset = load_iam_lines(iam_root)
    assert dataset["id"] == [line_id for line_id in IAM_IDS if line_id != "a01-003-00"]
    assert len(caplog.records) == 1 and "1 of 5 IAM lines" in caplog.text and "a01-003-00" in caplog.text


def test_iam_missing_ground_truth_is_named(tmp_path):
    (tmp_path / "lines").mkdir()
    with pytest.raises(FileNotFoundError, match=r"expected xml/<form>\.xml or ascii/lines\.txt"):
        load_iam_lines(tmp_path)


# ------------------------------------------------------------------------------------- dataset names


def test_line_dataset_names_carry_the_folder_and_options():
    assert parse_dataset_options("washington:/data/gw:fold=2,on_unknown=skip") == (
        "washington",
        {"root": "/data/gw", "fold": 2, "on_unknown": "skip"},
    )
    assert parse_dataset_options("iam:/data/iam") == ("iam", {"root": "/data/iam"})
    assert parse_dataset_options("iam:C:/data/iam") == ("iam", {"root": "C:/data/iam"})


def test_washington_name_loads_the_fold_split(gw_root):
    dataset = load_text_recognition_dataset(f"washington:{gw_root}:fold=2", split="validation")
    assert dataset["id"] == GW_SETS[2]["validation"]


def test_iam_name_without_split_lists_is_one_train_split(iam_root):
    assert load_text_recognition_dataset(f"iam:{iam_root}", split="train")["id"] == IAM_IDS


def test_iam_name_without_split_lists_has_no_validation_split(iam_root):
    with pytest.raises(ValueError, match="no split 'validation'"):
        load_text_recognition_dataset(f"iam:{iam_root}", split="validation")


def test_iam_name_with_split_lists_and_options(iam_root, tmp_path):
    (tmp_path / "tr.lst").write_text("a01-000u\n")
    (tmp_path / "va.lst").write_text("a01-003\n")
    options = f"train={tmp_path / 'tr.lst'},validation={tmp_path / 'va.lst'},skip_segmentation_errors=true"
    name = f"iam:{iam_root}:{options}"
    assert load_text_recognition_dataset(name, split="train")["id"] == ["a01-000u-00", "a01-000u-01"]
    assert load_text_recognition_dataset(name, split="validation")["id"] == ["a01-003-00", "a01-003-01"]


def test_line_dataset_name_without_folder_is_refused():
    with pytest.raises(ValueError, match="needs its folder"):
        load_text_recognition_dataset("iam")
