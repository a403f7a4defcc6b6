# Copied from modeling/charbert/configuration_charbert.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
"""Configuration of CharBERT, the character-aware RoBERTa."""

from transformers import PretrainedConfig

from .checkpoint_format import CheckpointFormatMixin
from .presets import ConfigPresetsMixin


class CharBertConfig(CheckpointFormatMixin, ConfigPresetsMixin, PretrainedConfig):
    r"""
    Configuration of [`CharBertModel`] and [`CharBertForMaskedLM`] (Ma et al., "CharBERT:
    Character-aware Pre-trained Language Model", COLING 2020), RoBERTa flavour.

    Two streams run side by side through the same transformer layers: the subword tokens (RoBERTa
    embeddings) and a character stream in which each token is represented by a bidirectional GRU over
    its characters (the GRU states at the token's first and last character, concatenated). After every
    layer a fusion step mixes the two streams (per-stream linear, concatenation, a 1-D convolution of
    kernel 3 back to `hidden_size`) and a divide step adds the fused features back to each stream with
    its own residual and LayerNorm.

    The original release and the paper differ in two places; both are options here and the defaults
    follow the release, whose weights `scripts/convert_charbert_checkpoint.py` converts:

    - `share_fusion_weights=True` (release): one set of fusion/divide weights used after every layer;
      `False` (paper): one set per layer.
    - `divide_feed_forward=False` (release): the convolution output is added to each stream as it is;
      `True` (paper): GELU on the convolution output, then a per-stream linear layer with GELU before
      the residual.

    In both, the transformer layer weights are shared by the two streams (as in the release).

    Args:
        vocab_size (`int`): subword vocabulary size (the byte-level BPE tokenizer's).
        hidden_size (`int`): width H of both streams; a multiple of 4 (the GRU has H/4 units per
            direction, and first + last character states of both directions make H).
        num_hidden_layers (`int`): transformer layers, each followed by fusion and divide.
        num_attention_heads (`int`): attention heads per layer.
        intermediate_size (`int`): inner size of the transformer feed-forward.
        hidden_act (`str`): activation of the feed-forward, the heads and the paper's divide step.
        hidden_dropout_prob (`float`): dropout on embeddings and sub-layer outputs.
        attention_probs_dropout_prob (`float`): dropout on attention weights.
        max_position_embeddings (`int`): position table size; RoBERTa numbers positions from
            `pad_token_id + 1`, so the longest sequence is `max_position_embeddings - pad_token_id - 1`.
        type_vocab_size (`int`): token type ids (1 in RoBERTa).
        initializer_range (`float`): standard deviation of the normal initialisation.
        layer_norm_eps (`float`): epsilon of every LayerNorm.
        char_vocab_size (`int`): character vocabulary size (`CharBertProcessor.char_vocab`).
        char_embedding_size (`int`): width of the character embeddings fed to the GRU.
        max_chars_per_token (`int`): character slots per token; the character sequence of T tokens
            is `T * max_chars_per_token` long, token t owning slots `[t * C, (t + 1) * C)`.
        word_vocab_size (`int`): word vocabulary of the noisy-LM head (the original word of a
            corrupted one is predicted from it).
        char_rnn_scope (`str`): `"sequence"` (release): the GRU runs over the whole character
            sequence, so a token's character vector also depends on its neighbours' characters;
            `"token"`: it runs within each token's slots only, which is also C instead of T * C
            sequential steps (many times faster on a CPU). Default: `"token"` when `causal`, else
            `"sequence"`.
        causal (`bool`): no position sees the future: causal self-attention in both streams, the GRU
            within each token (`char_rnn_scope="token"`, required), and a left-padded (causal) fusion
            convolution. For the TrOCR–CharBERT composite, which reads CharBERT while decoding.
        share_fusion_weights (`bool`): see above.
        divide_feed_forward (`bool`): see above.
        char_pad_token_id (`int`): the padding character id (empty slots, special and masked tokens).
        pad_token_id, bos_token_id, eos_token_id (`int`): RoBERTa's special tokens.
        tie_word_embeddings (`bool`): the MLM decoder shares the token embedding matrix.
    """

    model_type = "textrec-charbert"
    # Read by transformers' RobertaLayer; CharBERT has no cross-attention and handles causality itself.
    is_decoder = False
    add_cross_attention = False

    # Sizes for `textrec-pretrain-charbert --preset`. `base` is roberta-base.
    PRESETS = {
        "tiny": dict(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            char_embedding_size=16,
            max_position_embeddings=130,
        ),
        "small": dict(
            hidden_size=256,
            num_hidden_layers=4,
            num_attention_heads=4,
            intermediate_size=1024,
            char_embedding_size=256,
            max_position_embeddings=514,
        ),
        "base": dict(
            hidden_size=768,
            num_hidden_layers=12,
            num_attention_heads=12,
            intermediate_size=3072,
            char_embedding_size=256,
            max_position_embeddings=514,
        ),
    }

    def __init__(
        self,
        vocab_size: int = 50265,
        hidden_size: int = 768,
        num_hidden_layers: int = 12,
        num_attention_heads: int = 12,
        intermediate_size: int = 3072,
        hidden_act: str = "gelu",
        hidden_dropout_prob: float = 0.1,
        attention_probs_dropout_prob: float = 0.1,
        max_position_embeddings: int = 514,
        type_vocab_size: int = 1,
        initializer_range: float = 0.02,
        layer_norm_eps: float = 1e-5,
        char_vocab_size: int = 258,
        char_embedding_size: int = 256,
        max_chars_per_token: int = 6,
        word_vocab_size: int = 30001,
        char_rnn_scope: str | None = None,
        causal: bool = False,
        share_fusion_weights: bool = True,
        divide_feed_forward: bool = False,
        char_pad_token_id: int = 0,
        pad_token_id: int = 1,
        bos_token_id: int = 0,
        eos_token_id: int = 2,
        tie_word_embeddings: bool = True,
        **kwargs,
    ):
        if hidden_size % 4:
            raise ValueError(f"hidden_size must be a multiple of 4 (the GRU has hidden_size/4 units), got {hidden_size}.")
        if hidden_size % num_attention_heads:
            raise ValueError(f"hidden_size {hidden_size} is not a multiple of num_attention_heads {num_attention_heads}.")
        if max_chars_per_token < 1:
            raise ValueError(f"max_chars_per_token must be at least 1, got {max_chars_per_token}.")
        char_rnn_scope = char_rnn_scope or ("token" if causal else "sequence")
        if char_rnn_scope not in ("sequence", "token"):
            raise ValueError(f"char_rnn_scope must be 'sequence' or 'token', got {char_rnn_scope!r}.")
        if causal and char_rnn_scope != "token":
            raise ValueError("causal=True needs char_rnn_scope='token': a bidirectional GRU over the sequence sees the future.")
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.hidden_act = hidden_act
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.initializer_range = initializer_range
        self.layer_norm_eps = layer_norm_eps
        self.char_vocab_size = char_vocab_size
        self.char_embedding_size = char_embedding_size
        self.max_chars_per_token = max_chars_per_token
        self.word_vocab_size = word_vocab_size
        self.char_rnn_scope = char_rnn_scope
        self.causal = causal
        self.share_fusion_weights = share_fusion_weights
        self.divide_feed_forward = divide_feed_forward
        self.char_pad_token_id = char_pad_token_id
        super().__init__(
            pad_token_id=pad_token_id,
            bos_token_id=bos_token_id,
            eos_token_id=eos_token_id,
            tie_word_embeddings=tie_word_embeddings,
            **kwargs,
        )


CharBertConfig.register_for_auto_class()
