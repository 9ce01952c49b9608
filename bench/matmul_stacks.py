"""gemmkit.matmul beside np.matmul on stacks of small products and squares (argument: thread count),
both libraries held at that count by threadpoolctl; medians of 9 calls."""
import time, numpy as np, gemmkit, sys
def med(f, n=9):
    f(); ts=[]
    for _ in range(n):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return sorted(ts)[n//2]
th = int(sys.argv[1]); gemmkit.set_num_threads(th)
from threadpoolctl import threadpool_limits
for dt in (np.float32, np.float64):
    for (b,n) in ((10000,8),(1000,32),(100,64),(None,64),(None,256),(None,1024)):
        rng=np.random.default_rng(0)
        shp=(b,n,n) if b else (n,n)
        a=rng.standard_normal(shp).astype(dt); bb=rng.standard_normal(shp).astype(dt); o=np.empty(shp,dt)
        with threadpool_limits(th):
            t1=med(lambda: gemmkit.matmul(a,bb,out=o)); t2=med(lambda: np.matmul(a,bb,out=o))
        print(f"{np.dtype(dt).name} {shp} gk {t1*1e6:9.1f}us np {t2*1e6:9.1f}us ratio {t2/t1:5.2f}",flush=True)
