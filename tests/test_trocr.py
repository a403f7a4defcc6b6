"""What is specific to the TrOCR recognizer (transformers' TrOCR decoder over textrec's convolutional encoder).
The shared matrix (test_model_matrix.py) covers training, generation, caching, saving, remote code and padding."""

import torch
from transformers import TrOCRForCausalLM, VisionEncoderDecoderModel

from textrec.modeling import TrOCRForTextRecognition, TrOCRRecognizerConfig
# The trocr folder carries its own copy of the encoder's module (a saved model's code is self-contained).
from textrec.modeling.trocr.modeling_self_attention import SelfAttentionRecognizerEncoder
from textrec.processing.pipeline_text_recognition import available_decodings


def tiny(**overrides) -> TrOCRForTextRecognition:
    torch.manual_seed(0)
    return TrOCRForTextRecognition(TrOCRRecognizerConfig.from_preset("tiny", vocab_size=20, max_target_length=12, **overrides))


def test_it_is_a_vision_encoder_decoder_with_transformers_trocr_decoder():
    model = tiny()
    assert isinstance(model, VisionEncoderDecoderModel)
    assert type(model.decoder) is TrOCRForCausalLM
    assert isinstance(model.encoder, SelfAttentionRecognizerEncoder)
    assert available_decodings(model) == ("attention", "ctc", "joint")


def test_without_ctc_it_reads_with_its_decoder_only():
    model = tiny(ctc_loss_weight=0.0)
    assert model.ctc_head is None and available_decodings(model) == ("attention",)


def test_ctc_weight_mixes_the_two_losses():
    model = tiny().eval()
    pixel_values = torch.randn(2, 1, 32, 48, generator=torch.Generator().manual_seed(0))
    labels = torch.tensor([[5, 6, 2], [7, 2, -100]])
    with torch.no_grad():
        mixed = model(pixel_values=pixel_values, labels=labels).loss
        model.config.ctc_loss_weight = 1e-9
        cross_entropy = model(pixel_values=pixel_values, labels=labels).loss
    assert not torch.isclose(mixed, cross_entropy)


def test_reset_vocabulary_replaces_only_embeddings_classifier_and_ctc_head():
    model = tiny()
    before = {name: value.clone() for name, value in model.state_dict().items()}
    model.reset_vocabulary(14)
    after = model.state_dict()
    changed = {"decoder.model.decoder.embed_tokens.weight", "decoder.output_projection.weight",
               "ctc_head.classifier.weight", "ctc_head.classifier.bias"}
    assert after["decoder.output_projection.weight"].shape[0] == 14 == model.config.vocab_size
    assert after["ctc_head.classifier.weight"].shape[0] == 14
    assert all(torch.equal(before[name], after[name]) for name in before if name not in changed)
    labels = torch.tensor([[5, 13, 2]])
    assert model(pixel_values=torch.randn(1, 1, 32, 48), labels=labels).loss.isfinite()
