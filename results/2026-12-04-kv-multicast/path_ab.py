# One-off: the registry path and the same bundle through tiledattn.compile,
# same inputs, alternating; event times, host times and profiled kernel times.
import statistics, sys, time
import torch
import tiledattn
from tiledattn.bench import measure

torch.manual_seed(0)
dev = "cuda"
flush = measure.L2Flusher(256, dev)
for dtype, seq, batch in [(torch.bfloat16, 2048, 8), (torch.bfloat16, 16384, 1), (torch.float16, 16384, 1)]:
    q, k, v = (torch.randn(batch, 8, seq, 256, dtype=dtype, device=dev) for _ in range(3))
    name = "sdpa_fwd_%s_d256" % ("bf16" if dtype == torch.bfloat16 else "f16")
    kern = tiledattn.compile("build/kernels/" + name)
    fns = {
        "registry": lambda: tiledattn.scaled_dot_product_attention(q, k, v),
        "compiled": lambda: kern(q, k, v, is_causal=False),
        "registry2": lambda: tiledattn.scaled_dot_product_attention(q, k, v),
    }
    times = {n: [] for n in fns}
    for f in fns.values():
        measure.time_runs(f, 3, flush, warmup=2, device=dev)
    for r in range(8):
        order = list(fns)[::-1] if r % 2 else list(fns)
        for n in order:
            times[n] += measure.time_runs(fns[n], 10, flush, warmup=1, device=dev)
    host = {}
    for n, f in fns.items():
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(20):
            f()
        host[n] = (time.perf_counter() - t0) / 20 * 1e6
        torch.cuda.synchronize()
    prof = {}
    for n, f in fns.items():
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
            for _ in range(10):
                flush()
                f()
            torch.cuda.synchronize()
        ks = [e for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA and "sdpa" in e.name]
        prof[n] = (statistics.median([e.device_time for e in ks]) if ks else float("nan"), len(ks), {e.name for e in ks})
    print(f"== {dtype} S={seq} B={batch}")
    for n in fns:
        print(f"  {n:10s} event median {statistics.median(times[n]):.4f} ms  p10 {sorted(times[n])[len(times[n])//10]:.4f}"
              f"  host {host[n]:.1f} us/call  kernel {prof[n][0]/1e3:.4f} ms (n={prof[n][1]}) {prof[n][2]}")
