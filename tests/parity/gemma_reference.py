"""A plain numpy reference of EmbeddingGemma-300m, written from the published architecture, for parity checks of
Paragraf's Rust encoder (crates/embed/src/gemma). Not used at run time.

    python gemma_reference.py MODEL_DIR --card            # the model card's example similarities
    python gemma_reference.py MODEL_DIR --jsonl IN OUT    # {"text", "kind"} lines -> {"ids", "vector"} lines

MODEL_DIR is the `model_download/` folder that `paragraf model fetch embeddinggemma` extracts. Needs numpy, safetensors
and tokenizers (the Hugging Face tokenizer library gives the reference token ids).

Architecture (Gemma 3 text encoder as configured in config.json): token embeddings scaled by sqrt(hidden); 24 layers of
pre/post-normed attention and GeGLU MLP with RMSNorm(x) * (1 + w); grouped-query attention (3 query heads, 1 key/value
head, head dim 256) with RMSNorm on queries and keys, rotary positions (theta 10,000 on sliding layers, 1,000,000 on
every sixth, full layer), scaling query_pre_attn_scalar^-1/2, bidirectional: full layers see every token, sliding
layers the tokens within distance < sliding_window // 2 + 1 (as transformers configures a bidirectional Gemma 3);
final norm, mean pooling over all tokens, two bias-free dense layers (768 -> 3072 -> 768), L2 normalisation.
"""
import json
import math
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

QUERY_PROMPT = "task: search result | query: "
DOCUMENT_PROMPT = "title: none | text: "


class Gemma:
    def __init__(self, folder):
        self.cfg = json.load(open(f"{folder}/config.json"))
        self.w = load_file(f"{folder}/model.safetensors")
        self.dense = [
            load_file(f"{folder}/2_Dense/model.safetensors")["linear.weight"],
            load_file(f"{folder}/3_Dense/model.safetensors")["linear.weight"],
        ]
        self.tok = Tokenizer.from_file(f"{folder}/tokenizer.json")

    def ids(self, text):
        return self.tok.encode(text).ids

    def norm(self, x, w):
        eps = self.cfg["rms_norm_eps"]
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * (1.0 + w)

    @staticmethod
    def rope(x, theta):
        n, d = x.shape[-2], x.shape[-1]
        inv = 1.0 / theta ** (np.arange(0, d, 2, dtype=np.float64) / d)
        ang = np.arange(n, dtype=np.float64)[:, None] * inv[None, :]
        cos = np.cos(np.concatenate([ang, ang], -1)).astype(np.float32)
        sin = np.sin(np.concatenate([ang, ang], -1)).astype(np.float32)
        half = d // 2
        rot = np.concatenate([-x[..., half:], x[..., :half]], -1)
        return x * cos + rot * sin

    def forward(self, ids):
        c, w = self.cfg, self.w
        hd, nh, nkv = c["head_dim"], c["num_attention_heads"], c["num_key_value_heads"]
        n = len(ids)
        x = w["embed_tokens.weight"][ids] * np.float32(math.sqrt(c["hidden_size"]))
        radius = c["sliding_window"] // 2 + 1
        dist = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
        for i, kind in enumerate(c["layer_types"]):
            p = f"layers.{i}."
            h = self.norm(x, w[p + "input_layernorm.weight"])
            q = (h @ w[p + "self_attn.q_proj.weight"].T).reshape(n, nh, hd).transpose(1, 0, 2)
            k = (h @ w[p + "self_attn.k_proj.weight"].T).reshape(n, nkv, hd).transpose(1, 0, 2)
            v = (h @ w[p + "self_attn.v_proj.weight"].T).reshape(n, nkv, hd).transpose(1, 0, 2)
            q = self.norm(q, w[p + "self_attn.q_norm.weight"])
            k = self.norm(k, w[p + "self_attn.k_norm.weight"])
            theta = c["rope_theta"] if kind == "full_attention" else c["rope_local_base_freq"]
            q, k = self.rope(q, theta), self.rope(k, theta)
            k = np.repeat(k, nh // nkv, axis=0)
            v = np.repeat(v, nh // nkv, axis=0)
            s = q @ k.transpose(0, 2, 1) * np.float32(c["query_pre_attn_scalar"] ** -0.5)
            if kind != "full_attention":
                s = np.where(dist[None] < radius, s, -np.inf)
            s = s - s.max(-1, keepdims=True)
            a = np.exp(s)
            a /= a.sum(-1, keepdims=True)
            o = (a @ v).transpose(1, 0, 2).reshape(n, nh * hd) @ w[p + "self_attn.o_proj.weight"].T
            x = x + self.norm(o, w[p + "post_attention_layernorm.weight"])
            h = self.norm(x, w[p + "pre_feedforward_layernorm.weight"])
            g = h @ w[p + "mlp.gate_proj.weight"].T
            g = 0.5 * g * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (g + 0.044715 * g**3)))
            m = (g * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
            x = x + self.norm(m, w[p + "post_feedforward_layernorm.weight"])
        x = self.norm(x, w["norm.weight"])
        pooled = x.mean(0)
        for d in self.dense:
            pooled = d @ pooled
        return pooled / np.linalg.norm(pooled)

    def embed(self, text, kind):
        ids = self.ids((QUERY_PROMPT if kind == "query" else DOCUMENT_PROMPT) + text)
        return ids, self.forward(ids)


def main():
    model = Gemma(sys.argv[1])
    if sys.argv[2] == "--card":
        query = "Which planet is known as the Red Planet?"
        documents = [
            "Venus is often called Earth's twin because of its similar size and proximity.",
            "Mars, known for its reddish appearance, is often referred to as the Red Planet.",
            "Jupiter, the largest planet in our solar system, has a prominent red spot.",
            "Saturn, famous for its rings, is sometimes mistaken for the Red Planet.",
        ]
        _, q = model.embed(query, "query")
        sims = [float(q @ model.embed(d, "document")[1]) for d in documents]
        print(json.dumps([round(s, 4) for s in sims]))
    elif sys.argv[2] == "--jsonl":
        with open(sys.argv[3]) as src, open(sys.argv[4], "w") as out:
            for line in src:
                item = json.loads(line)
                ids, vec = model.embed(item["text"], item["kind"])
                out.write(json.dumps({"ids": ids, "vector": [float(v) for v in vec]}) + "\n")


if __name__ == "__main__":
    main()
