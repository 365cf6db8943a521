"""Parity of Paragraf's EmbeddingGemma encoder with the numpy reference (gemma_reference.py), run by gemma_parity.sh.

Texts: BGB paragraphs (short), whole long BGB sections (several over 512 tokens, so the sliding window matters),
hand-written questions and edge cases (emoji, right-to-left, HTML-like tags that are Gemma's added tokens). Checks:
  1. the model card's example similarities within 1e-3 (the reference is right);
  2. identical token ids for every text (Rust tokenizer vs the Hugging Face tokenizer);
  3. cosine(Rust vector, reference vector) >= 0.99 for every text with --vectors all, else for a spread subset
     (every VECTOR_STEP-th text, every edge case and the shortest text over 512 tokens): the numpy forward pass
     is the slow part (minutes per long section on two cores), the tokenizer check is cheap.
Prints min/mean cosine and exits non-zero on any failure.
"""
import argparse
import html
import json
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from gemma_reference import DOCUMENT_PROMPT, QUERY_PROMPT, Gemma  # noqa: E402

CARD = [0.3011, 0.6359, 0.4930, 0.4889]
COS_MIN = 0.99
VECTOR_STEP = 6

QUESTIONS = [
    "Muss mein Vermieter die Kaution nach dem Auszug zurückzahlen?",
    "Wie lange habe ich Gewährleistung auf ein gebrauchtes Auto vom Händler?",
    "Mein Hund hat den Nachbarn gebissen, wer zahlt das Schmerzensgeld?",
    "Kann ich ein Erbe ausschlagen, wenn der Nachlass überschuldet ist?",
    "Darf mein Chef mir wegen Krankheit kündigen?",
    "Ich habe online ein Handy gekauft und will es zurückschicken. Welche Frist gilt?",
]
EDGE = [
    "Emoji \U0001F600 und 中文 und Ελληνικά und \u0645\u0631\u062d\u0628\u0627",
    "\u202eRechts-nach-links\u202c und <b>HTML</b> <script>alert(1)</script> <eos> <bos>",
    "Tab\tund  doppelte   Leerzeichen\n\nneue Zeilen",
    "§§ 823 Abs. 1, 2 BGB i.V.m. Art. 2 Abs. 1 GG; 1.000,00 € (vgl. BGHZ 13, 334)",
]


def bgb_texts(xml_path):
    xml = open(xml_path, encoding="utf-8").read()
    clean = lambda s: re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", s))).strip()
    paras = [clean(p) for p in re.findall(r"<P>(.*?)</P>", xml, re.S)]
    paras = [p for p in paras if len(p) > 40]
    short = paras[:: max(1, len(paras) // 50)][:50]
    sections = []
    for norm in re.findall(r"<norm\b.*?</norm>", xml, re.S):
        text = " ".join(clean(p) for p in re.findall(r"<P>(.*?)</P>", norm, re.S))
        if len(text) > 2500:
            sections.append(text)
    sections.sort(key=len)
    return short, sections[:: max(1, len(sections) // 8)][:8]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--embed", required=True, help="the gemma_embed example binary")
    ap.add_argument("--shared", required=True)
    ap.add_argument("--vectors", choices=["subset", "all"], default="subset",
                    help="which texts' vectors to compare with the reference (token ids: always all)")
    args = ap.parse_args()

    ref = Gemma(args.model_dir)
    q = ref.embed("Which planet is known as the Red Planet?", "query")[1]
    docs = [
        "Venus is often called Earth's twin because of its similar size and proximity.",
        "Mars, known for its reddish appearance, is often referred to as the Red Planet.",
        "Jupiter, the largest planet in our solar system, has a prominent red spot.",
        "Saturn, famous for its rings, is sometimes mistaken for the Red Planet.",
    ]
    sims = [float(q @ ref.embed(d, "document")[1]) for d in docs]
    worst = max(abs(a - b) for a, b in zip(sims, CARD))
    print(f"model card similarities {np.round(sims, 4).tolist()} vs {CARD}: max difference {worst:.4f}")
    ok = worst <= 1e-3

    short, long_ = bgb_texts(f"{args.shared}/corpus/BGB.xml")
    items = [(t, "document") for t in short + long_ + EDGE] + [(t, "query") for t in QUESTIONS + EDGE]
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = f"{tmp}/in.jsonl", f"{tmp}/out.jsonl"
        with open(src, "w") as f:
            for text, kind in items:
                f.write(json.dumps({"text": text, "kind": kind}) + "\n")
        subprocess.run([args.embed, args.model_dir, src, dst], check=True)
        ours = [json.loads(line) for line in open(dst)]
    lengths = [len(mine["ids"]) for mine in ours]
    over = [i for i, n in enumerate(lengths) if n > 512]
    wanted = set(range(len(items))) if args.vectors == "all" else (
        set(range(0, len(items), VECTOR_STEP))
        | {i for i, (text, _) in enumerate(items) if text in EDGE}
        | ({min(over, key=lambda i: lengths[i])} if over else set())
    )
    coss, long_count, long_compared = [], 0, 0
    for index, ((text, kind), mine) in enumerate(zip(items, ours)):
        ids = ref.ids((QUERY_PROMPT if kind == "query" else DOCUMENT_PROMPT) + text)
        long_count += len(ids) > 512
        if ids != mine["ids"]:
            first = next((i for i, (a, b) in enumerate(zip(ids, mine["ids"])) if a != b), min(len(ids), len(mine["ids"])))
            print(f"TOKEN IDS DIFFER at {first} for {text[:60]!r}: ref {ids[first:first+5]} ours {mine['ids'][first:first+5]}")
            ok = False
        if index not in wanted:
            continue
        long_compared += len(ids) > 512
        vec = ref.forward(ids)
        c = float(np.dot(vec, np.array(mine["vector"], dtype=np.float32)))
        coss.append(c)
        if c < COS_MIN:
            print(f"COSINE {c:.5f} < {COS_MIN} for {text[:60]!r}")
            ok = False
    if not long_compared:
        print("NO TEXT OVER 512 TOKENS among the vectors compared")
        ok = False
    print(f"parity: {len(items)} texts ({long_count} over 512 tokens), token ids equal: "
          f"{'all' if ok else 'see above'}; vectors of {len(coss)} texts ({long_compared} over 512 tokens): "
          f"cosine min {min(coss):.5f} mean {np.mean(coss):.5f}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
