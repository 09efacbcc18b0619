"""The encoder attention settings the long-audio references are made under.

NeMo switches a FastConformer between full and local attention on the same weights with
model.change_attention_model(): "rel_pos" (RelPositionMultiHeadAttention, every frame sees
every frame) or "rel_pos_local_attn" with att_context_size [left, right]
(RelPositionMultiHeadAttentionLongformer + LocalAttRelPositionalEncoding). The call replaces
modules in place, so every setting is applied to a fresh restore of the saved model.
"""
from nemo.collections.asr.parts.submodules.multi_head_attention import (
    RelPositionMultiHeadAttention, RelPositionMultiHeadAttentionLongformer)

# setting name (used in file names) -> att_context_size for local attention, None for full
SETTINGS = {
    "full": None,
    "local128x128": (128, 128),
    # left != right: NeMo's Longformer shifts the position term for some offsets (see
    # docs/fixtures.md), which a symmetric window would never show
    "local64x32": (64, 32),
}


def apply(model, setting: str):
    """Put `model` (as restored from model.nemo) under `setting`; returns the model, in eval mode."""
    context = SETTINGS[setting]
    if context is not None:
        model.change_attention_model("rel_pos_local_attn", list(context))
    model.eval()  # the new attention modules are created in training mode
    want = RelPositionMultiHeadAttention if context is None else RelPositionMultiHeadAttentionLongformer
    for layer in model.encoder.layers:
        assert type(layer.self_attn) is want, f"{setting}: layer attention is {type(layer.self_attn).__name__}"
        if context is not None:
            assert list(layer.self_attn.att_context_size) == list(context)
    return model
