"""The language prompt of NeMo's prompt-conditioned models → the ``parakeet.prompt.*`` keys.

``EncDecRNNTBPEModelWithPrompt`` / ``EncDecHybridRNNTCTCBPEModelWithPrompt`` (NeMo 3.0.0,
``PromptStreamingMixin``) concatenate a one-hot vector of ``model_defaults.num_prompts`` entries
(the locale's id in ``model_defaults.prompt_dictionary``) to every encoder output frame and map
it back to ``enc_hidden`` with ``prompt_kernel`` (Linear, ReLU, Linear) before the heads. The
keys are parakeet.cpp's; the default locale is NeMo's default ``target_lang``, ``auto``, when the
table has it (without it NeMo's ``transcribe()`` needs an explicit language, and so do we).
"""

from typing import Dict, List, Tuple

from . import gguf_schema as schema
from .meta_value import MetaValue

PROMPT_CLASSES = ("EncDecRNNTBPEModelWithPrompt", "EncDecHybridRNNTCTCBPEModelWithPrompt")
NEMO_DEFAULT_LANG = "auto"  # RNNTPromptTranscribeConfig / HybridRNNTCTCPromptTranscribeConfig


def prompt_metadata(r, check, shapes: Dict[str, Tuple[int, ...]], d_model: int) -> List[MetaValue]:
    """The prompt keys (empty for a model without a prompt network), checking the table and the
    ``prompt_kernel`` shapes; problems go to ``r``."""
    target = r.get_str("target", None) or ""
    is_prompt_class = target.rsplit(".", 1)[-1] in PROMPT_CLASSES
    has_kernel = f"{schema.PROMPT_KERNEL_IN}.weight" in shapes
    if not has_kernel:
        if is_prompt_class:
            r.warnings.append(f"{target} has no prompt_kernel tensors (initialize_prompt_feature off): "
                              "converted without a language prompt, as NeMo then runs it")
        return []
    table = r.raw("model_defaults.prompt_dictionary", None)
    num = r.raw("model_defaults.num_prompts", 128)
    if type(num) is not int or num < 1:
        r.problem(f"config key 'model_defaults.num_prompts' should be a positive integer, not {num!r}")
        return []
    if not isinstance(table, dict) or not table:
        r.problem("the model has a prompt network but 'model_defaults.prompt_dictionary' is empty or missing")
        return []
    keys = [str(k) for k in table]
    values = list(table.values())
    bad = [k for k, v in zip(keys, values) if type(v) is not int or not 0 <= v < num]
    if bad:
        r.problem(f"prompt_dictionary ids must be integers in [0, {num}); bad: {', '.join(bad[:5])}")
        return []
    check.need(f"{schema.PROMPT_KERNEL_IN}.weight", (2 * d_model, d_model + num))
    check.need(f"{schema.PROMPT_KERNEL_IN}.bias", (2 * d_model,))
    check.need(f"{schema.PROMPT_KERNEL_OUT}.weight", (d_model, 2 * d_model))
    check.need(f"{schema.PROMPT_KERNEL_OUT}.bias", (d_model,))
    default = NEMO_DEFAULT_LANG if NEMO_DEFAULT_LANG in keys else ""
    return [
        MetaValue(schema.PROMPT_PRESENT, "bool", True),
        MetaValue(schema.PROMPT_NUM_PROMPTS, "u32", num),
        MetaValue(schema.PROMPT_DEFAULT_LANG, "str", default),
        MetaValue(schema.PROMPT_DICTIONARY_KEYS, "str[]", keys),
        MetaValue(schema.PROMPT_DICTIONARY_VALUES, "i32[]", values),
    ]
