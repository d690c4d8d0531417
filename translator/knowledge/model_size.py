"""The exact number of parameters of the decoder a set of canonical fields describes.

Counts what the modeling code builds: token embeddings (+ a learned position table and an
embedding norm), per block the attention projections (grouped-query, explicit head_dim, biases,
per-head q/k norms, sink logits, or multi-head latent attention), a dense or mixture-of-experts MLP (gated or
plain, routed experts + router + shared experts and their gate) and its norms (one or two for a
parallel block, two or four for a sequential one), the final norm, and an untied output projection
(+ its bias). Tied weights count once; buffers (rotary frequencies, embedding scales) are no
parameters. Expert and shared-expert MLPs carry biases when model.mlp_bias says so (the frameworks
that give experts biases at all do it this way).

Values come as canonical field names (schemas/canonical.yaml). A field the count depends on and
whose absence has no meaning in the catalogue must be given: ValueError names what is missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

GATED = frozenset(
    {"swiglu", "geglu", "geglu_tanh", "reglu", "bilinear", "glu", "quick_geglu"}
)  # act(gate) x up: three matrices


@dataclass(frozen=True)
class ParameterCount:
    embeddings: int  # token embeddings, learned position table, embedding norm
    layers: int  # every block
    final_norm: int
    head: int  # untied output projection and the output bias
    idle_experts: int  # routed-expert parameters a token does not use (num_experts - top-k per MoE layer)

    @property
    def total(self) -> int:
        return self.embeddings + self.layers + self.final_norm + self.head

    @property
    def active(self) -> int:
        """Parameters one token goes through (the "activated" size of a mixture of experts)."""
        return self.total - self.idle_experts


def count_parameters(values: Mapping[str, Any]) -> ParameterCount:
    """Parameters of the model `values` (canonical field -> value) describe."""
    m = _Model(values)
    layers = idle = 0
    for index in range(m.num_layers):
        layers += m.attention() + m.block_norms()
        if m.is_moe(index):
            layers += m.moe()
            idle += (m.experts - m.top_k) * m.mlp(m.expert_width)
        else:
            layers += m.mlp(m.dense_width)
    vocab, hidden = m.vocab, m.hidden
    embeddings = vocab * hidden
    if m.position_embedding == "learned":
        rows = m.need_int("model.max_position_embeddings") + m.get("model.position_embedding_offset", 0)
        embeddings += rows * hidden  # (OPT's table has 2 rows before position 0's)
    if m.flag("model.embedding_norm"):
        embeddings += m.norm(hidden)
    head = 0 if m.need("model.tie_embeddings") else vocab * hidden
    if m.flag("model.lm_head_bias"):
        head += vocab
    return ParameterCount(embeddings, layers, m.norm(hidden), head, idle)


def moe_layers(values: Mapping[str, Any]) -> list[int]:
    """Indices (from 0) of the blocks whose MLP is a mixture of experts."""
    m = _Model(values)
    return [i for i in range(m.num_layers) if m.is_moe(i)]


def _linear(inputs: int, outputs: int, bias: bool) -> int:
    return inputs * outputs + (outputs if bias else 0)


class _Model:
    """The canonical values with the catalogue's meaning of an absent field."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = values
        self.vocab = self.need_int("model.vocab_size")
        self.hidden = self.need_int("model.hidden_size")
        self.num_layers = self.need_int("model.num_layers")
        self.heads = self.need_int("model.num_heads")
        self.kv_heads = self.get("model.num_kv_heads", self.heads)
        self.position_embedding = self.need("model.position_embedding")
        self.gated = self.need("model.activation") in GATED
        self.mlp_bias = bool(self.need("model.mlp_bias"))
        self.norm_kind = self.need("model.norm")
        self.experts = self.get("model.moe_num_experts", 0)
        self.top_k = self.get("model.moe_experts_per_token", 1) if self.experts else 0

    # ---- access -------------------------------------------------------------------------------
    def get(self, name: str, default: Any) -> Any:
        value = self.values.get(name)
        return default if value is None else value

    def need(self, name: str) -> Any:
        value = self.values.get(name)
        if value is None:
            raise ValueError(f"the parameter count needs {name}")
        return value

    def need_int(self, name: str) -> int:
        value = self.need(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"the parameter count needs {name} as a whole number, got {value!r}")
        return value

    def flag(self, name: str) -> bool:
        return bool(self.values.get(name))

    # ---- pieces -------------------------------------------------------------------------------
    def norm(self, width: int, bias: bool | None = None) -> int:
        """Parameters of one norm over `width` features (`bias`: other than the model's norms, the qk-norms')."""
        if self.norm_kind == "non_parametric_layernorm":
            return 0
        if self.norm_kind == "scalenorm":
            return 1  # one learned gain
        return width * (2 if (self.need("model.norm_bias") if bias is None else bias) else 1)

    def block_norms(self) -> int:
        if self.flag("model.parallel_residual"):
            count = 1 if self.need("model.parallel_shared_norm") else 2
        else:
            # input norms (unless OLMo 2's output-only blocks), and output norms with sandwich_norm
            count = (0 if self.values.get("model.input_norm") is False else 2) + (
                2 if self.flag("model.sandwich_norm") else 0
            )
        return count * self.norm(self.hidden)

    @property
    def head_dim(self) -> int:
        explicit = self.values.get("model.head_dim")
        if explicit is not None:
            return int(explicit)
        if self.hidden % self.heads:
            raise ValueError(
                f"hidden_size {self.hidden} is not divisible by num_heads {self.heads}: the count needs model.head_dim"
            )
        return self.hidden // self.heads

    def attention(self) -> int:
        bias = bool(self.need("model.attention_bias"))
        out_bias = bool(self.get("model.attention_output_bias", bias))
        if self.values.get("model.mla_kv_lora_rank") is not None:
            return self._latent_attention(bias, out_bias)
        h, d = self.hidden, self.head_dim
        total = _linear(h, self.heads * d, bias) + 2 * _linear(h, self.kv_heads * d, bias)
        total += _linear(self.heads * d, h, out_bias)
        if self.flag("model.qk_norm"):  # per head: one head_dim vector each; OLMo 2: the whole projection
            span, b = self.values.get("model.qk_norm_span"), self.values.get("model.qk_norm_bias")
            # (Cohere's, StableLM's head_weights: statistics per head, a weight per head and feature: the projection's count)
            total += (
                self.norm(self.heads * d, b) + self.norm(self.kv_heads * d, b)
                if span in ("projection", "head_weights")
                else 2 * self.norm(d, b)
            )
        if self.flag("model.attention_sinks"):  # one learned sink logit per head (gpt-oss)
            total += self.heads
        return total

    def _latent_attention(self, bias: bool, out_bias: bool) -> int:
        """DeepSeek's multi-head latent attention: queries (optionally through a latent), one
        shared key/value latent plus the rotary key part, expanded per head."""
        h, a = self.hidden, self.heads
        latent = self.need_int("model.mla_kv_lora_rank")
        nope = self.need_int("model.mla_qk_nope_head_dim")
        rope = self.need_int("model.mla_qk_rope_head_dim")
        value = self.need_int("model.mla_v_head_dim")
        q_rank = self.values.get("model.mla_q_lora_rank")
        if q_rank is None:
            query = h * a * (nope + rope)
        else:
            query = _linear(h, q_rank, bias) + self.norm(q_rank) + q_rank * a * (nope + rope)
        key_value = _linear(h, latent + rope, bias) + self.norm(latent) + latent * a * (nope + value)
        return query + key_value + _linear(a * value, h, out_bias)

    def mlp(self, width: int) -> int:
        h, b = self.hidden, self.mlp_bias
        if self.gated:
            return 3 * h * width + ((2 * width + h) if b else 0)
        return 2 * h * width + ((width + h) if b else 0)

    @property
    def dense_width(self) -> int:
        return self.need_int("model.ffn_hidden_size")

    @property
    def expert_width(self) -> int:
        width = self.values.get("model.moe_ffn_hidden_size")
        return self.dense_width if width is None else int(width)

    def moe(self) -> int:
        total = self.experts * self.mlp(self.expert_width) + self.experts * self.hidden  # experts + router
        if self.flag("model.moe_router_bias"):
            total += self.experts
        shared = self.get("model.moe_shared_experts", 0)
        if shared:
            total += shared * self.mlp(self.get("model.moe_shared_ffn_hidden_size", self.expert_width))
            if self.flag("model.moe_shared_expert_gate"):
                total += self.hidden  # Linear(hidden, 1) without bias
        return total

    def is_moe(self, index: int) -> bool:
        if not self.experts:
            return False
        first = self.get("model.moe_first_dense_layers", 0)
        interval = self.get("model.moe_layer_interval", 1)
        dense = self.values.get("model.moe_dense_layers") or ()
        return index >= first and (index - first) % interval == 0 and index not in dense
