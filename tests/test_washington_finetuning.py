"""The Washington fine-tuning study's split: training and test pages apart, line level only, the real set's
images linked (never copied) into the folders it trains on."""

import json

import pytest
from PIL import Image

from textrec.processing.data import load_text_recognition_dataset

washington_finetuning = pytest.importorskip("washington_finetuning")


def fake_real_data(root):
    folder = root / "handwriting" / "test"
    folder.mkdir(parents=True)
    rows = []
    for index, (subset, level, page, gw_id) in enumerate([
        ("gw", "line", "gw-page-271", "271-02"), ("gw", "line", "gw-page-270", "270-01"),
        ("gw", "word", "gw-page-270", "270-01-01"), ("gw", "line", "gw-page-300", "300-01"),
        ("iamondb", "line", "a01-000", ""), ("gw", "line", "gw-page-270", "270-02"),
    ]):
        Image.new("L", (40, 12), 255).save(folder / f"{index}.png")
        rows.append({"file_name": f"{index}.png", "text": f"line {index}", "subset": subset, "level": level,
                     "form": page, "gw_id": gw_id})
    (folder / "metadata.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return root


def test_pages_split_lines_in_page_order_and_words_left_out(tmp_path):
    data_dir = fake_real_data(tmp_path / "real")
    train = washington_finetuning.washington_lines(washington_finetuning.TRAIN_PAGES, data_dir)
    test = washington_finetuning.washington_lines(washington_finetuning.TEST_PAGES, data_dir)
    assert [row["gw_id"] for row in train] == ["270-01", "270-02", "271-02"]
    assert [row["gw_id"] for row in test] == ["300-01"]


def test_split_folder_links_the_images_and_reads_as_a_dataset(tmp_path):
    data_dir = fake_real_data(tmp_path / "real")
    rows = washington_finetuning.washington_lines(washington_finetuning.TRAIN_PAGES, data_dir)
    folder = washington_finetuning.write_split_folder(rows, tmp_path / "train")
    assert all((folder / row["file_name"]).is_symlink() for row in rows)
    assert list(load_text_recognition_dataset(folder)["text"]) == ["line 1", "line 5", "line 0"]


def test_the_real_washington_pages_split_as_the_study_says():
    if not washington_finetuning.REAL_DATA_DIR.is_dir():
        pytest.skip(f"the real sets are not at {washington_finetuning.REAL_DATA_DIR} (a checkout without ../shared)")
    train = washington_finetuning.washington_lines(washington_finetuning.TRAIN_PAGES)
    test = washington_finetuning.washington_lines(washington_finetuning.TEST_PAGES)
    assert len({row["form"] for row in train}) == 10 and len({row["form"] for row in test}) == 5
    assert (len(train), len(test)) == (317, 166)
    assert not {row["file_name"] for row in train} & {row["file_name"] for row in test}


def test_charbert_study_on_washington_trains_on_the_training_pages_and_tests_on_the_test_pages(tmp_path):
    """`study_trocr_charbert.py --lines washington`: the thesis's protocol on its own dataset, with the fine-tuning
    curve's page split; no evaluation steers a fine-tuning (no page is left to stop on), and CharBERT's corpus gains
    IAM-OnDB's training transcriptions."""
    study = pytest.importorskip("study_trocr_charbert")
    data_dir = fake_real_data(tmp_path / "real")
    train_folder = data_dir / "handwriting" / "train"
    train_folder.mkdir()
    (train_folder / "metadata.jsonl").write_text(json.dumps({"file_name": "a.png", "text": "A MOVE to stop"}) + "\n")
    args = study.build_parser().parse_args(["--lines=washington", "--max_steps=7"])
    lines = study.study_lines(args, tmp_path / "study", data_dir)
    assert lines.train == f"captured:{tmp_path / 'study' / 'washington-train'}:copies={washington_finetuning.COPIES}"
    assert not lines.early_stopping and lines.evaluation == (str(tmp_path / "study" / "washington-train"), "train")
    assert lines.test_references == ["line 3"] and len(lines.test_images) == 1
    assert lines.confusion_references == ["line 1", "line 5", "line 0"]
    assert lines.corpus[-1] == str(tmp_path / "study" / "iam-ondb-train.txt")
    assert (tmp_path / "study" / "iam-ondb-train.txt").read_text() == "A MOVE to stop\n"
    stage = study.Stage("finetune", lines.train, args.max_steps, final=True)
    arguments = study.finetune_arguments(args, lines, tmp_path / "run", tmp_path / "start", stage, None, 10.0)
    assert "--eval_strategy=no" in arguments and f"--dataset={lines.train}" in arguments
    assert not any(argument.startswith(("--early_stopping_patience", "--metric_for_best_model")) for argument in arguments)
