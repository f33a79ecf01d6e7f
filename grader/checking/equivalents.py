"""Rules by meaning: a built-in a statement forbids is forbidden with what computes the same thing, in one table.

Runs in: the judge (a check filters the names its probe recorded); plain data, no torch. A statement that says
"do not use F.softmax" forbids a softmax however torch computes it: `F.softmin` of the negation, `log_softmax` then
`exp`, `torch._softmax`, `torch.special.softmax`, `Tensor.softmax`, `logsumexp` (the normaliser itself). `EQUIVALENTS`
maps each rule (the built-in's name) to that family: torch functions' names as `recording_calls` records them, a
Tensor method and its torch function alike, an ATen op's with its namespace and overload dropped
(`aten._softmax.default` is `_softmax`). `forbidden_calls(rule, calls)` is what a check asks.
"""

from __future__ import annotations

_SOFTMAX = frozenset({"softmax", "_softmax", "special_softmax", "softmin", "log_softmax", "_log_softmax",
                      "special_log_softmax", "logsumexp", "special_logsumexp"})
_LOG_SOFTMAX = frozenset({"log_softmax", "_log_softmax", "special_log_softmax"})
_NORMS = frozenset({"layer_norm", "native_layer_norm", "group_norm", "native_group_norm", "instance_norm",
                    "batch_norm", "native_batch_norm", "_native_batch_norm_legit", "_batch_norm_impl_index",
                    "_native_batch_norm_legit_no_training", "batch_norm_stats", "batch_norm_elemt"})
_ATTENTION = frozenset({"scaled_dot_product_attention", "_scaled_dot_product_attention_math",
                        "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_for_cpu",
                        "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
                        "_fused_sdp_choice", "flex_attention"})
_MHA = frozenset({"multi_head_attention_forward", "_native_multi_head_attention", "MultiheadAttention"})

EQUIVALENTS: dict[str, frozenset[str]] = {  # rule -> every torch function that computes what it forbids
    # a softmax, its log, the softmin of the negation, the normaliser logsumexp (fs01 forbids both functions)
    "softmax": _SOFTMAX,
    "log_softmax": _SOFTMAX,
    # a cross-entropy: the loss itself, NLL over log-probabilities, and the log-softmax it is built on; KL divergence
    # against one-hot targets is the NLL of the input
    "cross_entropy": frozenset({"cross_entropy", "nll_loss", "nll_loss_nd", "nll_loss2d", "kl_div"}) | _LOG_SOFTMAX,
    "gelu": frozenset({"gelu", "gelu_"}),
    "silu": frozenset({"silu", "silu_"}),
    # x @ W.T + b in one call: F.linear and the fused add-matmul
    "linear": frozenset({"linear", "addmm", "_addmm_activation", "mkldnn_linear"}),
    "dropout": frozenset({"dropout", "dropout_", "native_dropout", "_fused_dropout", "feature_dropout",
                          "feature_dropout_", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                          "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_"}),
    # every normalisation computes a layer norm, on the right axes (a group norm of one group, a batch or instance
    # norm of the transpose), and an RMS norm of the centred input does too
    "layer_norm": _NORMS | {"rms_norm", "_fused_rms_norm"},
    "rms_norm": frozenset({"rms_norm", "_fused_rms_norm"}),
    "batch_norm": _NORMS,
    "conv2d": frozenset({"conv1d", "conv2d", "conv3d", "convolution", "_convolution", "conv_transpose1d",
                         "conv_transpose2d", "conv_transpose3d", "conv_tbc", "mkldnn_convolution",
                         "_conv_depthwise2d", "_slow_conv2d_forward", "slow_conv3d", "cudnn_convolution",
                         "_convolution_mode", "conv2d_padding", "thnn_conv2d"}),
    "max_pool2d": frozenset({"max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
                             "max_pool2d_with_indices", "max_pool3d_with_indices", "max_unpool1d", "max_unpool2d",
                             "max_unpool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
                             "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
                             "mkldnn_max_pool2d", "quantized_max_pool2d"}),
    "embedding": frozenset({"embedding", "embedding_bag", "_embedding_bag", "_embedding_bag_forward_only",
                            "embedding_renorm_"}),
    # an LSTM cell, and torch's other recurrent cells and layers (the statement: "no built-in cell")
    "lstm_cell": frozenset({"lstm", "lstm_cell", "_thnn_fused_lstm_cell", "gru", "gru_cell", "rnn_tanh", "rnn_relu",
                            "rnn_tanh_cell", "rnn_relu_cell", "_thnn_fused_gru_cell"}),
    "scaled_dot_product_attention": _ATTENTION | _MHA,
    "multi_head_attention_forward": _MHA,
}


def base_name(name: str) -> str:
    """A recorded torch function's name without an ATen namespace or overload: `aten._softmax.default` -> `_softmax`."""
    parts = name.split(".")
    return parts[1] if parts[0] == "aten" and len(parts) > 1 else parts[0]


def forbidden_calls(rule: str, calls) -> list[str]:
    """The names among `calls` (as a probe recorded them) that compute what `rule` forbids, in order, once each."""
    family = EQUIVALENTS[rule]
    return list(dict.fromkeys(name for name in calls if base_name(name) in family))
