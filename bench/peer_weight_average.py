#!/usr/bin/python3
# The peer's view of evaluating averaged weights (docs/benchmarks/decisions.md,
# "Evaluating the averaged weights"): PyTorch trains a copy of the zoo's
# small_cnn (two 3x3 convolutions with max-pooling, dropout 0.25 and 0.5, a
# 128-unit layer) on Fashion-MNIST as the default (a) does: batch 128, SGD
# 0.05, momentum 0.9, weight decay 5e-4, random crop (padding 3) and flip,
# 5,000 training samples held out; every eighth of an epoch it scores on them
# the weights themselves ("raw") and exponential moving averages of them at
# three decays, each ramped in as min(decay, (1 + t) / (10 + t)) over steps t
# (so within two epochs, 858 steps, they differ only after step 440, 890 and
# 1790). One row a reading, appended to stdout.
#   for s in 1 2 3; do /usr/bin/python3 bench/peer_weight_average.py $s 2.0 >> bench/results/peer_weight_average.jsonl; done
#   /usr/bin/python3 bench/peer_weight_average_summary.py bench/results/peer_weight_average.jsonl
import gzip, json, sys, time, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
torch.set_num_threads(2)
def idx(path):
    with gzip.open(path) as f: d=f.read()
    if d[2]==8 and d[3]==3: n=int.from_bytes(d[4:8],'big'); return np.frombuffer(d,np.uint8,offset=16).reshape(n,28,28)
    return np.frombuffer(d,np.uint8,offset=8)
D='/usr/share/datasets/fashion-mnist/'
X=torch.tensor(idx(D+'train-images-idx3-ubyte.gz'),dtype=torch.float32).div(255).unsqueeze(1)
Y=torch.tensor(idx(D+'train-labels-idx1-ubyte.gz'),dtype=torch.long)
X=(X-0.2860)/0.3530
g=torch.Generator().manual_seed(1234); perm=torch.randperm(60000,generator=g)
vi,ti=perm[:5000],perm[5000:]
Xv,Yv,Xt,Yt=X[vi],Y[vi],X[ti],Y[ti]
class Net(nn.Module):
    def __init__(s):
        super().__init__(); s.c1=nn.Conv2d(1,32,3,padding=1); s.c2=nn.Conv2d(32,64,3,padding=1); s.f1=nn.Linear(64*49,128); s.f2=nn.Linear(128,10)
    def forward(s,x):
        x=F.max_pool2d(F.relu(s.c1(x)),2); x=F.max_pool2d(F.relu(s.c2(x)),2)
        x=torch.flatten(F.dropout(F.adaptive_avg_pool2d(x,7),0.25,s.training),1)
        return s.f2(F.dropout(F.relu(s.f1(x)),0.5,s.training))
def aug(x,gen):
    n=x.shape[0]; p=F.pad(x,(3,3,3,3))
    ox=torch.randint(0,7,(n,),generator=gen); oy=torch.randint(0,7,(n,),generator=gen); fl=torch.rand(n,generator=gen)<0.5
    ar=torch.arange(28); rows=oy[:,None]+ar
    cols=torch.where(fl[:,None],ox[:,None]+27-ar,ox[:,None]+ar)
    return p[torch.arange(n)[:,None,None],0,rows[:,:,None],cols[:,None,:]].unsqueeze(1)
@torch.no_grad()
def acc(m):
    m.eval(); c=0
    for i in range(0,5000,1000): c+=(m(Xv[i:i+1000]).argmax(1)==Yv[i:i+1000]).sum().item()
    m.train(); return c/5000
seed=int(sys.argv[1]); decays=[0.98,0.99,0.995]; epochs=float(sys.argv[2]) if len(sys.argv)>2 else 2.0
torch.manual_seed(seed); gen=torch.Generator().manual_seed(seed)
m=Net(); emas=[Net() for _ in decays]
for e in emas: e.load_state_dict(m.state_dict())
opt=torch.optim.SGD(m.parameters(),lr=0.05,momentum=0.9,weight_decay=5e-4)
B=128; spe=len(ti)//B; every=spe//8; step=0; rows=[]
while step < epochs*spe:
    order=torch.randperm(len(Xt),generator=gen)
    for k in range(spe):
        b=order[k*B:(k+1)*B]; x=aug(Xt[b],gen)
        loss=F.cross_entropy(m(x),Yt[b]); opt.zero_grad(); loss.backward(); opt.step(); step+=1
        with torch.no_grad():
            for d,e in zip(decays,emas):
                dd=min(d,(1+step)/(10+step))
                for pe,pm in zip(e.parameters(),m.parameters()): pe.mul_(dd).add_(pm,alpha=1-dd)
        if step%every==0:
            r={"seed":seed,"step":step,"epoch":step/spe,"raw":acc(m)}
            for d,e in zip(decays,emas): r[f"ema{d}"]=acc(e)
            rows.append(r); print(json.dumps(r),flush=True)
        if step>=epochs*spe: break
