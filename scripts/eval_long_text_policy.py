"""Experiment: which long-text policy retrieves better? (window-average vs truncate, issue 3)

Embeds every BGB section (whole text, crude <P> extraction) as a passage with both policies — they differ only for
sections over 510 tokens — and GerLayQA dev questions as queries, then ranks sections by cosine and reports
Recall@10 and MRR@10 against the gold sections, overall and for questions whose gold includes a long section.
Vectors go through `paragraf embed --cache`, so a later build reuses them.

usage: python3 scripts/eval_long_text_policy.py [--questions N]   (needs numpy; PARAGRAF_SHARED, PARAGRAF_BIN)
"""
import argparse
import html
import json
import math
import os
import re
import subprocess
import tempfile

import numpy as np

repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
shared = os.environ.get("PARAGRAF_SHARED", os.path.join(repo, "..", "shared"))
binary = os.environ.get("PARAGRAF_BIN", os.path.join(repo, "target", "release", "paragraf"))


def sections():
    xml = open(os.path.join(shared, "corpus", "BGB.xml"), encoding="utf-8").read()
    clean = lambda s: re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", s))).strip()
    out = []
    for norm in re.findall(r"<norm\b.*?</norm>", xml, re.S):
        m = re.search(r"<enbez>(§ [0-9]+[a-z]*)</enbez>", norm)
        text = " ".join(clean(p) for p in re.findall(r"<P>(.*?)</P>", norm, re.S))
        if m and text and "(weggefallen)" not in text[:20]:
            title = re.search(r"<titel[^>]*>(.*?)</titel>", norm, re.S)
            out.append((m.group(1), (clean(title.group(1)) + " " if title else "") + text))
    return out


def embed(texts, *flags):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write("\n".join(re.sub(r"[\r\n]+", " ", t) for t in texts) + "\n")
    try:
        out = subprocess.run([binary, "embed", "--batch", f.name, "--json", "--cache", *flags],
                             capture_output=True, text=True, check=True)
    finally:
        os.unlink(f.name)
    rows = [json.loads(l) for l in out.stdout.splitlines()]
    return np.array([r["vector"] for r in rows], np.float32), np.array([r["tokens"] for r in rows])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=400)
    a = ap.parse_args()
    secs = sections()
    names = [s for s, _ in secs]
    index = {s: i for i, s in enumerate(names)}
    qs = json.load(open(os.path.join(shared, "eval", "gerlayqa", "bgb_dev.json"), encoding="utf-8"))
    qs = [q for q in qs if any(p in index for p in q["Paragraphs"])]
    qs = qs[:: max(1, len(qs) // a.questions)][: a.questions]

    P_avg, tokens = embed([t for _, t in secs])
    P_cut, _ = embed([t for _, t in secs], "--long-text", "truncate")
    Q, _ = embed([q["Question_text"] for q in qs], "--query")
    long_ = tokens > 512
    print(f"{len(secs)} BGB sections ({long_.sum()} over 512 tokens), {len(qs)} dev questions")
    gold = [{index[p] for p in q["Paragraphs"] if p in index} for q in qs]
    touches_long = np.array([any(long_[g] for g in gs) for gs in gold])
    hits = {}
    for label, P in [("window-average", P_avg), ("truncate", P_cut)]:
        ranks = np.argsort(-(Q @ P.T), axis=1)[:, :10]
        hit = np.array([any(r in gs for r in row) for row, gs in zip(ranks, gold)])
        rr = np.array([next((1 / (k + 1) for k, r in enumerate(row) if r in gs), 0) for row, gs in zip(ranks, gold)])
        hits[label] = hit
        print(f"{label:15} R@10 {hit.mean():.3f}  MRR@10 {rr.mean():.3f}   "
              f"| gold has a long section ({touches_long.sum()} q): R@10 {hit[touches_long].mean():.3f} "
              f"MRR@10 {rr[touches_long].mean():.3f}")
    # Paired exact McNemar test on R@10 hits.
    b = int((hits["window-average"] & ~hits["truncate"]).sum())
    c = int((~hits["window-average"] & hits["truncate"]).sum())
    n, k = b + c, min(b, c)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n) if n else 1.0
    print(f"R@10 discordant questions: window-average only {b}, truncate only {c}; exact McNemar p = {p:.4f}")


if __name__ == "__main__":
    main()
