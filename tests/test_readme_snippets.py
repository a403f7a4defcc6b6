"""README's calls, exactly as written, for every model type, in a subprocess where textrec cannot be imported
(as on a machine without it): the README's Python block itself (`AutoModelForImageTextToText` + `AutoProcessor`
with `trust_remote_code=True`, `model.generate(**processor(images=[...], return_tensors="pt"))`,
`batch_decode`, and the `pipeline("text-recognition", ...)` one-liner) on a folder saved as textrec-train saves
one; for CharBERT, the text model, its pre-trained folder through `AutoModelForMaskedLM` and `AutoProcessor`.
Each must give what textrec itself gives."""

import ast
import json
import re
from pathlib import Path

import pytest
import torch

from textrec.modeling import ARCHITECTURES, CharBertForMaskedLM
from textrec.processing.training.architectures import get_spec
from textrec.model_cards.hub import export_for_hub
from textrec.processing.inference import load_recognizer
from textrec.processing.training import ModelArguments, build_recognizer


from .charbert_fixtures import fortune_texts, make_processor, tiny_config
from .remote_code import run_without_textrec

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parent.parent / "README.md"
README_FOLDER = "runs/self-attention"
"""The model folder README's snippet names; the test puts a fresh folder of each model type there."""


def readme_snippet() -> str:
    """README's Python block for reading without textrec (the one loading `AutoModelForImageTextToText` and calling
    the `text-recognition` pipeline), its last expression (the pipeline call) assigned to `piped` so that the test
    can read it."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    snippet = next(block for block in blocks if 'pipeline("text-recognition"' in block and "AutoModelForImageTextToText" in block)
    tree = ast.parse(snippet)
    assert isinstance(tree.body[-1], ast.Expr), "README's snippet should end with the pipeline call"
    tree.body[-1] = ast.Assign(targets=[ast.Name("piped", ast.Store())], value=tree.body[-1].value, lineno=0)
    return ast.unparse(ast.fix_missing_locations(tree))


def image_files(snippet: str) -> list[str]:
    return sorted(set(re.findall(r"[\w-]+\.png", snippet)))


def test_readme_snippet_reads_a_saved_folder_and_names_image_files():
    snippet = readme_snippet()
    assert README_FOLDER in snippet and "trust_remote_code=True" in snippet
    assert image_files(snippet) == ["line.png", "line1.png", "line2.png"]


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_readme_snippet_and_pipeline_without_textrec(name, tmp_path, sample_line_images):
    snippet = readme_snippet()
    torch.manual_seed(0)
    model_args = ModelArguments(model=name, preset="tiny", max_target_length=8)
    spec = get_spec(name)
    model, processor = build_recognizer(model_args, spec)
    folder = tmp_path / README_FOLDER
    export_for_hub(model.eval(), processor, folder)
    for image, file_name in zip(sample_line_images, image_files(snippet)):
        image.save(tmp_path / file_name)
    model, processor = load_recognizer(str(folder))

    def read(file_names: list[str]) -> list[str]:
        inputs = processor(images=[str(tmp_path / file_name) for file_name in file_names], return_tensors="pt")
        return processor.batch_decode(model.generate(**inputs))

    output = run_without_textrec(
        snippet + "\nimport json\nprint(json.dumps([processor.batch_decode(ids), piped]))\n", tmp_path
    )
    texts, piped = json.loads(output.strip().splitlines()[-1])
    assert texts == read(["line.png"])
    assert [result["generated_text"] for result in piped] == read(["line1.png", "line2.png"])


def test_charbert_loads_without_textrec(tmp_path):
    texts = fortune_texts(200)
    processor = make_processor(texts)
    torch.manual_seed(0)
    model = CharBertForMaskedLM(tiny_config(processor)).eval()
    folder = tmp_path / "charbert"
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    sentence = texts[0]
    inputs = processor(sentence)
    expected = model(**inputs).logits

    output = run_without_textrec(
        f"""
        import json
        from transformers import AutoModelForMaskedLM, AutoProcessor

        processor = AutoProcessor.from_pretrained({str(folder)!r}, trust_remote_code=True)
        model = AutoModelForMaskedLM.from_pretrained({str(folder)!r}, trust_remote_code=True).eval()
        logits = model(**processor({sentence!r})).logits
        print(json.dumps([logits.argmax(-1).tolist(), logits.sum().item()]))
        """,
        tmp_path,
    )
    predicted, logits_sum = json.loads(output.strip().splitlines()[-1])
    assert predicted == expected.argmax(-1).tolist()
    assert logits_sum == pytest.approx(expected.sum().item(), rel=1e-4)
