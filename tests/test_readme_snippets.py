"""README's calls, exactly as written, for every model type, in a subprocess where textrec cannot be imported
(as on a machine without it): `AutoModelForImageTextToText` + `AutoProcessor` with `trust_remote_code=True`,
`model.generate(**processor(images=[...], return_tensors="pt"))`, `batch_decode`, and the
`pipeline("text-recognition", ...)` one-liner; for CharBERT, the text model, its pre-trained folder through
`AutoModelForMaskedLM` and `AutoProcessor`. Each must give what textrec itself gives."""

import json

import pytest
import torch

from textrec.modeling import ARCHITECTURES, CharBertForMaskedLM
from textrec.scripts.architectures import get_spec
from textrec.scripts.hub_export import export_for_hub
from textrec.scripts.inference import load_recognizer
from textrec.scripts.train import ModelArguments, build_model, build_processor

from .charbert_fixtures import fortune_texts, make_processor, tiny_config
from .remote_code import run_without_textrec

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_readme_snippet_and_pipeline_without_textrec(name, tmp_path, sample_line_images):
    torch.manual_seed(0)
    model_args = ModelArguments(model=name, preset="tiny", max_target_length=8)
    spec = get_spec(name)
    processor = build_processor(model_args, spec)
    folder = tmp_path / "model"
    export_for_hub(build_model(model_args, spec, processor).eval(), processor, folder)
    paths = []
    for index, image in enumerate(sample_line_images[:2]):
        paths.append(f"line{index}.png")
        image.save(tmp_path / paths[-1])
    model, processor = load_recognizer(str(folder))
    expected = processor.batch_decode(
        model.generate(**processor(images=[str(tmp_path / path) for path in paths], return_tensors="pt")),
        skip_special_tokens=True,
    )

    output = run_without_textrec(
        f"""
        import json
        from transformers import AutoModelForImageTextToText, AutoProcessor, pipeline

        model = AutoModelForImageTextToText.from_pretrained({str(folder)!r}, trust_remote_code=True)
        processor = AutoProcessor.from_pretrained({str(folder)!r}, trust_remote_code=True)
        ids = model.generate(**processor(images={paths!r}, return_tensors="pt"))
        texts = processor.batch_decode(ids, skip_special_tokens=True)

        recognize = pipeline("text-recognition", model={str(folder)!r}, trust_remote_code=True)
        piped = [result["generated_text"] for result in recognize({paths!r}, batch_size=8)]
        print(json.dumps([texts, piped]))
        """,
        tmp_path,
    )
    texts, piped = json.loads(output.strip().splitlines()[-1])
    assert texts == expected
    assert piped == expected


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
