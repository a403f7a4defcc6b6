"""IAM handwritten text lines, read as the IAM Handwriting Database (FKI) releases them:

    <root>/xml/<form>.xml          one file per form (``a01-000u.xml``); its ``<handwritten-part>`` holds a
                                   ``<line id="a01-000u-00" text="A MOVE to stop Mr. Gaitskell from"
                                   segmentation="ok" ...>`` element per line (``text`` XML-escaped:
                                   ``&quot;``, ``&amp;``, ``&apos;``; ``segmentation`` ``ok`` or ``err``)
    <root>/ascii/lines.txt         the same lines as text, the other ground truth: ``#`` starts a comment,
                                   each other line is "a01-000u-00 ok 154 19 408 746 1661 89 A|MOVE|to|..."
                                   (id, segmentation, grey level, components, bounding box x y w h, and the
                                   words separated by ``|``)
    <root>/lines/a01/a01-000u/a01-000u-00.png      the image of each line

The XML files are the reference ground truth; ``ascii/lines.txt`` is read when they are absent or asked for.
IAM comes without a split of its own: the usual ones (the Aachen/RWTH partition, the official tasks'
``trainset.txt`` ...) are lists of line ids, one a line, read through ``split_file``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Literal, NamedTuple
from xml.etree import ElementTree

import datasets

logger = logging.getLogger(__name__)

XML_FOLDER = "xml"
LINES_FILE = Path("ascii", "lines.txt")
IMAGE_FOLDER = "lines"
FEATURES = datasets.Features(
    {"image": datasets.Image(), "text": datasets.Value("string"), "id": datasets.Value("string")}
)
MAX_EXAMPLES = 5
"""How many line ids a message quotes."""


class _Line(NamedTuple):
    id: str
    text: str
    segmentation: str


def _image_path(root: Path, line_id: str) -> Path:
    """Where the IAM release puts the image of a line: ``lines/a01/a01-000u/a01-000u-00.png``."""
    form = line_id.rsplit("-", 1)[0]
    return root / IMAGE_FOLDER / form.split("-")[0] / form / f"{line_id}.png"


def load_iam_lines(
    root: str | os.PathLike,
    split_file: str | os.PathLike | None = None,
    skip_segmentation_errors: bool = False,
    ground_truth: Literal["xml", "ascii"] | None = None,
) -> datasets.Dataset:
    """Read the text lines of the IAM Handwriting Database.

    Args:
        root: The IAM folder (see the module docstring for its layout).
        split_file: A list of the line ids to read, one a line (the Aachen/RWTH partition's ``tr.lst``, the
            official ``trainset.txt``, ...); a form id (``a01-000u``) selects all the lines of the form.
            ``None`` reads every line.
        skip_segmentation_errors: Leave out the lines whose ``segmentation`` is ``err`` (IAM's flag of a line
            whose segmentation into words has errors).
        ground_truth: ``"xml"`` (the ``xml/`` folder) or ``"ascii"`` (``ascii/lines.txt``); ``None`` reads
            the XML files when there is an ``xml/`` folder, else ``ascii/lines.txt``.

    Returns:
        A dataset with columns ``image`` (``datasets.Image``), ``text`` (words separated by single spaces)
        and ``id``, in the order of the ground truth. Lines whose image is missing are left out, with one
        warning.

    Raises:
        FileNotFoundError: ``root`` lacks the ground truth or the ``lines/`` folder (named in the message).
        ValueError: a malformed ground truth, or no line left.
    """
    root = Path(root).expanduser()
    source = _ground_truth_source(root, ground_truth)
    if not (root / IMAGE_FOLDER).is_dir():
        raise FileNotFoundError(f"{root} has no {IMAGE_FOLDER}/ folder: expected the IAM line images in it")
    lines = _read_xml(source) if source.is_dir() else _read_lines_file(source)
    if split_file is not None:
        lines = _select(lines, Path(split_file).expanduser())
    if skip_segmentation_errors:
        lines = [line for line in lines if line.segmentation != "err"]
    rows, missing = [], []
    for line in lines:
        image = _image_path(root, line.id)
        if image.is_file():
            rows.append({"image": str(image), "text": line.text, "id": line.id})
        else:
            missing.append(line.id)
    if missing:
        logger.warning(
            "Left out %d of %d IAM lines whose image is missing under %s (e.g. %s)",
            len(missing),
            len(lines),
            root / IMAGE_FOLDER,
            ", ".join(missing[:MAX_EXAMPLES]),
        )
    if not rows:
        raise ValueError(f"{source} gives no line with an image" + (f" in {split_file}" if split_file else ""))
    return datasets.Dataset.from_dict({key: [row[key] for row in rows] for key in FEATURES}, features=FEATURES)


def _ground_truth_source(root: Path, ground_truth: str | None) -> Path:
    """The ``xml/`` folder or the ``ascii/lines.txt`` file to read."""
    sources = {
        "xml": (root / XML_FOLDER, f"{XML_FOLDER}/<form>.xml"),
        "ascii": (root / LINES_FILE, str(LINES_FILE)),
    }
    if ground_truth is None:
        for path, _ in sources.values():
            if path.exists():
                return path
        expected = " or ".join(name for _, name in sources.values())
        raise FileNotFoundError(f"{root} holds no IAM ground truth: expected {expected} under it")
    if ground_truth not in sources:
        raise ValueError(f"ground_truth must be 'xml', 'ascii' or None, got {ground_truth!r}")
    path, name = sources[ground_truth]
    if not path.exists():
        raise FileNotFoundError(f"{root} holds no {name} (the {ground_truth} ground truth of IAM)")
    return path


def _read_xml(folder: Path) -> list[_Line]:
    """The handwritten lines of every form file of ``folder``."""
    files = sorted(folder.glob("*.xml"))
    if not files:
        raise FileNotFoundError(f"{folder} holds no <form>.xml file")
    lines = []
    for path in files:
        try:
            form = ElementTree.parse(path).getroot()
        except ElementTree.ParseError as error:
            raise ValueError(f"{path} is not well-formed XML: {error}") from error
        for line in form.iterfind("handwritten-part/line"):
            line_id, text = line.get("id"), line.get("text")
            if line_id is None or text is None:
                raise ValueError(f"{path}: a <line> element lacks its id or text attribute")
            lines.append(_Line(line_id, text, line.get("segmentation", "ok")))
    return lines


def _read_lines_file(path: Path) -> list[_Line]:
    """The lines of ``ascii/lines.txt``."""
    lines = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.strip().split(maxsplit=8)
        if len(fields) != 9:
            raise ValueError(
                f"{path}, line {number}: expected 'id segmentation graylevel components x y w h words', "
                f"got {line!r}"
            )
        lines.append(_Line(fields[0], fields[8].replace("|", " "), fields[1]))
    return lines


def _select(lines: list[_Line], split_file: Path) -> list[_Line]:
    """The lines listed in ``split_file``, by line id or form id; warns about entries matching no line."""
    if not split_file.is_file():
        raise FileNotFoundError(f"No such split file: {split_file}")
    entries = {entry.strip() for entry in split_file.read_text(encoding="utf-8").splitlines() if entry.strip()}
    selected, matched = [], set()
    for line in lines:
        keys = {line.id, line.id.rsplit("-", 1)[0]} & entries
        if keys:
            selected.append(line)
            matched |= keys
    unmatched = sorted(entries - matched)
    if unmatched:
        logger.warning(
            "%d of %d entries of %s match no line of the ground truth (e.g. %s)",
            len(unmatched),
            len(entries),
            split_file,
            ", ".join(unmatched[:MAX_EXAMPLES]),
        )
    return selected
