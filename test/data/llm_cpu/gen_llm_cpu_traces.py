#!/usr/bin/python3
"""Record real torch.profiler traces of a tiny GPT's generate loop on CPU.

Made for aiprof's CPU LLM trial (same terms as the project).  Run with
Debian's interpreter (/usr/bin/python3, python3-torch 1.13.1), not from /tmp
(a stray inspect.py there shadows the stdlib and breaks `import torch`):

    /usr/bin/python3 test/data/llm_cpu/gen_llm_cpu_traces.py \
        --tools ../shared/tools --out test/data/llm_cpu

The model is a 2-layer decoder-only transformer written here (token and
position embeddings, pre-LayerNorm blocks with
torch.nn.functional._scaled_dot_product_attention (torch 1.13's name of
torch 2's scaled_dot_product_attention; op aten::_scaled_dot_product_attention), a GELU MLP, a tied LM head)
with a KV cache: one prefill forward over the prompt, then one decode forward
per new token (greedy argmax), each forward wrapped in a
torch.profiler.record_function annotation as a user would write it.  Each
trace is one torch.profiler session with schedule()/step(); Debian's torch
has no Kineto, so the profiler's own results are written in the Kineto JSON
layout by ../shared/tools/gen_torch_traces.py (collect_kineto_events,
write_kineto_json: see that file for what is and is not libkineto's).

Traces (all CPU only, torch.set_num_threads(1), record_shapes on):

  named_per_generate  "prefill" / "decode" annotations; one profiler step per
                      generate() call (schedule wait=1 warmup=1 active=2):
                      the last two calls (torch 1.13 names them ProfilerStep#1
                      and #2), each 1 prefill of P tokens and D decode steps.
  sglang_per_forward  "step[EXTEND bs=1 toks=P]" / "step[DECODE bs=1 toks=1]";
                      one profiler step per forward (schedule wait=0
                      warmup=D+1 active=D+1: the second generate() is kept).
  nested_decode_loop  "prefill", then record_function("decode") around the
                      whole token loop holding one "decode_step" per token;
                      one profiler step per generate() call (wait=1 warmup=1
                      active=1).
  vllm_batched        3 prompts of different lengths, right-padded batch with
                      an attention mask: "execute_<T>_context_3(...)_generation_0(...)"
                      for the prefill (T = sum of the real prompt lengths) and
                      "execute_3_context_0(...)_generation_3(...)" per decode
                      step; one profiler step per generate() call
                      (wait=1 warmup=1 active=1).

Each <name>.pt.trace.json.gz has a <name>.meta.json beside it with the
parameters (P, D, prompt lengths, steps) and the script's own wall time of
each forward (time.perf_counter_ns around the annotation), for reference.
"""

import argparse
import json
import os
import sys
import time


def build(torch, vocab, d, heads, layers, max_len):
    nn = torch.nn
    F = torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.fc = nn.Linear(d, 4 * d)
            self.out = nn.Linear(4 * d, d)

        def forward(self, x, cache, mask):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q = q.view(b, t, heads, d // heads).transpose(1, 2)
            k = k.view(b, t, heads, d // heads).transpose(1, 2)
            v = v.view(b, t, heads, d // heads).transpose(1, 2)
            if cache is not None:
                k = torch.cat([cache[0], k], dim=2)
                v = torch.cat([cache[1], v], dim=2)
            # torch 1.13's name of torch 2's F.scaled_dot_product_attention: (out, weights)
            a, _ = F._scaled_dot_product_attention(q, k, v, mask, 0.0, False, cache is None and mask is None)
            a = a.transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(a)
            x = x + self.out(F.gelu(self.fc(self.ln2(x))))
            return x, (k, v)

    class TinyGPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(max_len, d)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln = nn.LayerNorm(d)

        def forward(self, ids, pos, caches, mask):
            x = self.tok(ids) + self.pos(pos)
            new = []
            for i, blk in enumerate(self.blocks):
                x, c = blk(x, caches[i] if caches else None, mask)
                new.append(c)
            return self.ln(x) @ self.tok.weight.t(), new

    return TinyGPT().eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tools", default=os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "shared", "tools"),
                    help="folder holding gen_torch_traces.py")
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="comma list of trace names")
    ap.add_argument("--prompt", type=int, default=48, help="P: prompt tokens")
    ap.add_argument("--decode", type=int, default=8, help="D: decode steps")
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.tools))
    import gen_torch_traces as g  # noqa: E402
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    torch.manual_seed(0)
    torch.set_num_threads(1)
    vocab, d, heads, layers = 512, 128, 4, 2
    P, D = args.prompt, args.decode
    model = build(torch, vocab, d, heads, layers, 256)
    gen = torch.Generator().manual_seed(1)
    os.makedirs(args.out, exist_ok=True)
    only = set(s for s in args.only.split(",") if s)

    def write(name, prof, meta):
        records, info = g.collect_kineto_events(prof)
        path = os.path.join(args.out, name + ".pt.trace.json.gz")
        g.write_kineto_json(records, info, path, {
            "trace_generator": "test/data/llm_cpu/gen_llm_cpu_traces.py via gen_torch_traces.py: torch.profiler %s "
                               "(Debian, Kineto not compiled in) results re-serialized in torch-1.13/libkineto "
                               "Chrome-trace layout" % torch.__version__})
        meta["file"] = os.path.basename(path)
        meta["torch"] = torch.__version__
        with open(os.path.join(args.out, name + ".meta.json"), "w") as f:
            json.dump(meta, f, indent=1, sort_keys=True)
            f.write("\n")
        print(name, os.path.getsize(path), "bytes")

    class _Null:
        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

    def generate(ids, prefill_name, decode_name, timings, mask_lengths=None, on_forward=None, loop_name=None):
        """Greedy generate: one prefill, D decodes. ids: [b, P] (right-padded when mask_lengths)."""
        b, t = ids.shape
        mask = None
        if mask_lengths is not None:
            keep = torch.arange(t)[None, :] < torch.tensor(mask_lengths)[:, None]  # [b, t]
            causal = torch.ones(t, t, dtype=torch.bool).tril()
            mask = (causal[None] & keep[:, None, :])[:, None]  # [b, 1, t, t]
        with torch.no_grad():
            t0 = time.perf_counter_ns()
            with record_function(prefill_name):
                logits, caches = model(ids, torch.arange(t)[None, :].expand(b, t), None, mask)
                if mask_lengths is None:
                    nxt = logits[:, -1].argmax(-1, keepdim=True)
                else:
                    last = torch.tensor(mask_lengths) - 1
                    nxt = logits[torch.arange(b), last].argmax(-1, keepdim=True)
            timings.append(["prefill", time.perf_counter_ns() - t0])
            if on_forward:
                on_forward()
            lengths = list(mask_lengths) if mask_lengths is not None else [t] * b
            kv_len = t
            loop = record_function(loop_name) if loop_name else _Null()
            loop.__enter__()
            for _ in range(D):
                t0 = time.perf_counter_ns()
                with record_function(decode_name):
                    pos = torch.tensor(lengths)[:, None]
                    dmask = None
                    if mask_lengths is not None:
                        kv_len += 1
                        # real cache entries: the prompt's, the padding's (masked), then the new ones
                        cols = torch.arange(kv_len)[None, :]
                        dmask = ((cols < torch.tensor(mask_lengths)[:, None]) | (cols >= t))[:, None, None, :]
                    logits, caches = model(nxt, pos, caches, dmask)
                    nxt = logits[:, -1].argmax(-1, keepdim=True)
                    lengths = [n + 1 for n in lengths]
                timings.append(["decode", time.perf_counter_ns() - t0])
                if on_forward:
                    on_forward()
            loop.__exit__(None, None, None)

    acts = [ProfilerActivity.CPU]

    if not only or "named_per_generate" in only:
        prompt = torch.randint(0, vocab, (1, P), generator=gen)
        timings = []
        with profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                     record_shapes=True, on_trace_ready=lambda p: write("named_per_generate", p, meta)) as prof:
            meta = {"prompt_tokens": [P], "decode_steps": D, "profiler_steps": 4, "recorded": "the last 2 of 4 generate() calls",
                    "prefill_annotation": "prefill", "decode_annotation": "decode", "forward_wall_ns": timings}
            for i in range(4):
                if i == 2:
                    del timings[:]  # keep the recorded steps' timings only
                generate(prompt, "prefill", "decode", timings)
                prof.step()

    if not only or "sglang_per_forward" in only:
        prompt = torch.randint(0, vocab, (1, P), generator=gen)
        timings = []
        n = D + 1
        with profile(activities=acts, schedule=schedule(wait=0, warmup=n, active=n, repeat=1),
                     record_shapes=True, on_trace_ready=lambda p: write("sglang_per_forward", p, meta)) as prof:
            meta = {"prompt_tokens": [P], "decode_steps": D, "profiler_steps": 2 * n,
                    "recorded": "the second of 2 generate() calls, one profiler step per forward",
                    "prefill_annotation": "step[EXTEND bs=1 toks=%d]" % P,
                    "decode_annotation": "step[DECODE bs=1 toks=1]", "forward_wall_ns": timings}
            for i in range(2):
                if i == 1:
                    del timings[:]
                generate(prompt, "step[EXTEND bs=1 toks=%d]" % P, "step[DECODE bs=1 toks=1]", timings,
                         on_forward=prof.step)

    if not only or "nested_decode_loop" in only:
        prompt = torch.randint(0, vocab, (1, P), generator=gen)
        timings = []
        with profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=1, repeat=1),
                     record_shapes=True, on_trace_ready=lambda p: write("nested_decode_loop", p, meta)) as prof:
            meta = {"prompt_tokens": [P], "decode_steps": D, "profiler_steps": 3,
                    "recorded": "the last of 3 generate() calls",
                    "prefill_annotation": "prefill", "decode_annotation": "decode_step",
                    "decode_loop_annotation": "decode", "forward_wall_ns": timings}
            for i in range(3):
                if i == 2:
                    del timings[:]
                generate(prompt, "prefill", "decode_step", timings, loop_name="decode")
                prof.step()

    if not only or "vllm_batched" in only:
        lens = [P, P // 2, P // 3]
        t = max(lens)
        ids = torch.randint(0, vocab, (len(lens), t), generator=gen)
        for r, n in enumerate(lens):
            ids[r, n:] = 0  # padding
        b = len(lens)
        pre = "execute_%d_context_%d(%s)_generation_0(0)" % (sum(lens), b, "_".join(str(n) for n in lens))
        dec = "execute_%d_context_0(0)_generation_%d(%s)" % (b, b, "_".join("1" for _ in lens))
        timings = []
        with profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=1, repeat=1),
                     record_shapes=True, on_trace_ready=lambda p: write("vllm_batched", p, meta)) as prof:
            meta = {"prompt_tokens": lens, "decode_steps": D, "profiler_steps": 3, "recorded": "the last of 3 generate() calls",
                    "prefill_annotation": pre, "decode_annotation": dec, "forward_wall_ns": timings}
            for i in range(3):
                if i == 2:
                    del timings[:]
                generate(ids, pre, dec, timings, mask_lengths=lens)
                prof.step()


if __name__ == "__main__":
    main()
