"""Convert the original CharBERT release (RoBERTa flavour) into `CharBertForMaskedLM`, saved as safetensors.

    python -m textrec.scripts.convert_charbert_checkpoint \
        --checkpoint charbert-roberta-wwm/pytorch_model.bin --original_config charbert-roberta-wwm/config.json \
        --char_vocab CharBERT/data/dict/roberta_char_vocab --word_vocab CharBERT/data/dict/term_vocab \
        --tokenizer roberta-base --output_dir charbert-roberta-base

The release's parameter names map onto this model as follows (N: layer number):

    roberta.embeddings.*                        → charbert.embeddings.*            (RoBERTa's own)
    roberta.char_embeddings.char_embeddings.*   → charbert.char_encoder.embeddings.* (rows reordered)
    roberta.char_embeddings.rnn_layer.*         → charbert.char_encoder.gru.*
    roberta.encoder.layer.N.*                   → charbert.encoder.layer.N.*       (RoBERTa's own)
    roberta.encoder.word_linear1 / char_linear1 → charbert.encoder.fusion.0.token_linear / char_linear
    roberta.encoder.fusion_layer                → charbert.encoder.fusion.0.conv
    roberta.encoder.word_norm / char_norm       → charbert.encoder.fusion.0.token_norm / char_norm
    roberta.pooler.*                            → charbert.pooler.*
    lm_head.{dense,char_dense,layer_norm,decoder,bias} → lm_head.* (same names)
    lm_head.adv_decoder                         → lm_head.word_decoder             (rows reordered)

The release shares one fusion across layers and has no divide feed-forward: the converted
configuration keeps `share_fusion_weights=True`, `divide_feed_forward=False`. Character embedding rows
are reordered from the release's character vocabulary (one character per line, line number = id) to
`CHAR_VOCAB`; characters the release lacks get its `<unk>` row. With `--word_vocab` (the release's
`term_vocab`, lower-case) the word decoder's rows are reordered to put `<unk>` first. With
`--tokenizer`, the processor is saved too. Loading is strict: a parameter left over or missing fails.
"""

import argparse
import json
import logging
import re

import torch
from safetensors.torch import load_file
from transformers import AutoTokenizer

from textrec.modeling import CharBertConfig, CharBertForMaskedLM
from textrec.processing import CharBertProcessor
from textrec.processing.tokenization_charbert import CHAR_PAD, CHAR_UNK, CHAR_VOCAB, WORD_UNK

logger = logging.getLogger("textrec.convert_charbert")

RENAMES = [
    (r"^roberta\.embeddings\.", "charbert.embeddings."),
    (r"^roberta\.char_embeddings\.char_embeddings\.", "charbert.char_encoder.embeddings."),
    (r"^roberta\.char_embeddings\.rnn_layer\.", "charbert.char_encoder.gru."),
    (r"^roberta\.encoder\.layer\.", "charbert.encoder.layer."),
    (r"^roberta\.encoder\.word_linear1\.", "charbert.encoder.fusion.0.token_linear."),
    (r"^roberta\.encoder\.char_linear1\.", "charbert.encoder.fusion.0.char_linear."),
    (r"^roberta\.encoder\.fusion_layer\.", "charbert.encoder.fusion.0.conv."),
    (r"^roberta\.encoder\.word_norm\.", "charbert.encoder.fusion.0.token_norm."),
    (r"^roberta\.encoder\.char_norm\.", "charbert.encoder.fusion.0.char_norm."),
    (r"^roberta\.pooler\.", "charbert.pooler."),
    (r"^lm_head\.adv_decoder\.", "lm_head.word_decoder."),
    (r"^lm_head\.(dense|char_dense|layer_norm|decoder)\.", r"lm_head.\1."),
    (r"^lm_head\.bias$", "lm_head.bias"),
]
DROPPED = [
    r"^roberta\.encoder\.embeddings\.",  # an embeddings copy some versions of the release build but never use
    r"\.position_ids$",  # an index buffer, rebuilt by the model
]

CHAR_EMBEDDINGS = "charbert.char_encoder.embeddings.weight"
WORD_DECODER = ("lm_head.word_decoder.weight", "lm_head.word_decoder.bias")


def rename(name: str) -> str | None:
    """This model's name for a parameter of the release; None for those it does not use."""
    if any(re.search(pattern, name) for pattern in DROPPED):
        return None
    for pattern, replacement in RENAMES:
        if re.search(pattern, name):
            return re.sub(pattern, replacement, name)
    raise KeyError(f"No rule converts the release's parameter {name!r}.")


def reorder_char_rows(weight: torch.Tensor, release_chars: list[str]) -> torch.Tensor:
    """The release's character embedding rows arranged in `CHAR_VOCAB` order: padding from row 0,
    each byte-level symbol from its row in the release, or from the release's `<unk>` row."""
    release_ids = {char: index for index, char in enumerate(release_chars)}
    unk = release_ids[CHAR_UNK]
    rows = [0 if char == CHAR_PAD else release_ids.get(char, unk) for char in CHAR_VOCAB]
    return weight[rows].clone()


def reorder_words(state_dict: dict, release_words: list[str]) -> list[str]:
    """Move `<unk>` to the front of the word vocabulary and of the word decoder's rows; return the vocabulary."""
    order = [release_words.index(WORD_UNK)] + [i for i, word in enumerate(release_words) if word != WORD_UNK]
    for name in WORD_DECODER:
        state_dict[name] = state_dict[name][order].clone()
    return [release_words[i] for i in order]


def config_from_state_dict(state_dict: dict, original_config: dict) -> CharBertConfig:
    """The configuration the converted weights need: sizes from the tensors, the rest (heads, epsilon,
    activation, special token ids) from the release's `config.json` or roberta-base's values."""
    layers = {int(match.group(1)) for name in state_dict if (match := re.match(r"charbert\.encoder\.layer\.(\d+)\.", name))}
    vocab_size, hidden_size = state_dict["charbert.embeddings.word_embeddings.weight"].shape
    return CharBertConfig(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        num_hidden_layers=len(layers),
        num_attention_heads=original_config.get("num_attention_heads", 12),
        intermediate_size=state_dict["charbert.encoder.layer.0.intermediate.dense.weight"].shape[0],
        hidden_act=original_config.get("hidden_act", "gelu"),
        max_position_embeddings=state_dict["charbert.embeddings.position_embeddings.weight"].shape[0],
        type_vocab_size=state_dict["charbert.embeddings.token_type_embeddings.weight"].shape[0],
        layer_norm_eps=original_config.get("layer_norm_eps", 1e-5),
        char_vocab_size=state_dict[CHAR_EMBEDDINGS].shape[0],
        char_embedding_size=state_dict[CHAR_EMBEDDINGS].shape[1],
        word_vocab_size=state_dict[WORD_DECODER[0]].shape[0],
        share_fusion_weights=True,
        divide_feed_forward=False,
        pad_token_id=original_config.get("pad_token_id", 1),
        bos_token_id=original_config.get("bos_token_id", 0),
        eos_token_id=original_config.get("eos_token_id", 2),
    )


def convert_state_dict(
    original: dict[str, torch.Tensor], release_chars: list[str], release_words: list[str] | None = None
) -> tuple[dict[str, torch.Tensor], list[str] | None]:
    """The release's state dict under this model's names, character rows in `CHAR_VOCAB` order, and
    (given the release's word vocabulary) `<unk>`-first word rows with that vocabulary."""
    converted = {}
    for name, tensor in original.items():
        new_name = rename(name)
        if new_name is None:
            logger.info("Dropped %s (not used by the model)", name)
            continue
        converted[new_name] = tensor
    converted[CHAR_EMBEDDINGS] = reorder_char_rows(converted[CHAR_EMBEDDINGS], release_chars)
    words = reorder_words(converted, release_words) if release_words is not None else None
    return converted, words


def load_checkpoint(path: str) -> dict[str, torch.Tensor]:
    if path.endswith(".safetensors"):
        return load_file(path)
    return torch.load(path, map_location="cpu", weights_only=True)


def read_lines(path: str) -> list[str]:
    """One entry per line, the line number its id (the release's vocabulary files)."""
    with open(path, encoding="utf-8") as file:
        return [line.rstrip("\n") for line in file]


def convert(
    checkpoint: str,
    char_vocab: str,
    output_dir: str,
    original_config: str | None = None,
    word_vocab: str | None = None,
    tokenizer: str | None = None,
) -> CharBertForMaskedLM:
    """Convert, load strictly, save (safetensors) and return the model."""
    state_dict, words = convert_state_dict(
        load_checkpoint(checkpoint), read_lines(char_vocab), read_lines(word_vocab) if word_vocab else None
    )
    settings = {}
    if original_config:
        with open(original_config) as file:
            settings = json.load(file)
    model = CharBertForMaskedLM(config_from_state_dict(state_dict, settings))
    model.load_state_dict(state_dict, strict=True)
    model.save_pretrained(output_dir)
    if tokenizer:
        backend = AutoTokenizer.from_pretrained(tokenizer, add_prefix_space=True)
        processor = CharBertProcessor(backend, word_vocab=words, lowercase_words=words is not None)
        processor.save_pretrained(output_dir)
    logger.info("Saved the converted model to %s", output_dir)
    return model


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="The release's pytorch_model.bin (or a .safetensors).")
    parser.add_argument("--char_vocab", required=True, help="The release's character vocabulary (roberta_char_vocab).")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--original_config", help="The release's config.json (heads, epsilon, activation).")
    parser.add_argument("--word_vocab", help="The release's word vocabulary (term_vocab), for the noisy-LM head.")
    parser.add_argument("--tokenizer", help="The release's BPE tokenizer (folder or Hub id) to save a processor with.")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    convert(args.checkpoint, args.char_vocab, args.output_dir, args.original_config, args.word_vocab, args.tokenizer)


if __name__ == "__main__":
    main()
