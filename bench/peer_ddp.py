#!/usr/bin/python3
"""The peer for throughput: PyTorch DDP training the same model on the same
kind of data, written the way a careful user would (batch indexing of an
in-memory tensor, no per-sample DataLoader overhead; on a GPU the bytes cross
the bus and become floats there). Gloo on CPUs; with --device cuda, NCCL when
every worker has a GPU of its own, Gloo when they share. Run directly for one
worker, or under `python3 -m torch.distributed.run --nproc_per_node N`.
The options a PyTorch user sets for speed are here too, each matching one of
`tula train`'s so a comparison is like for like: --precision bf16|fp16
(torch.autocast; fp16 with a GradScaler), --channels-last, cuDNN's benchmark
mode (on unless --no-cudnn-benchmark), and the optimizer's multi-tensor
(foreach) SGD, PyTorch's default on a GPU, named explicitly (--no-foreach:
the per-tensor loop).
Prints one JSON line: samples/s over the steps after the warm-up."""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class SmallCnn(nn.Module):
    """Tula's small_cnn, layer for layer (src/models/small_cnn.cpp)."""

    def __init__(self, channels, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.pool = nn.MaxPool2d(2, 2)
        self.avgpool = nn.AdaptiveAvgPool2d(7)
        self.dropout1 = nn.Dropout(0.25)
        self.fc1 = nn.Linear(64 * 7 * 7, 128)
        self.dropout2 = nn.Dropout(0.5)
        self.fc2 = nn.Linear(128, classes)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(self.dropout1(self.avgpool(x)), 1)
        x = self.dropout2(F.relu(self.fc1(x)))
        return self.fc2(x)


class CifarBlock(nn.Module):
    """Tula's resnet20 block (src/models/cifar_resnet.cpp): option-A shortcut."""

    def __init__(self, cin, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.stride, self.pad = stride, (planes - cin) // 2

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        short = x
        if self.stride != 1 or self.pad:
            short = F.pad(x[:, :, ::self.stride, ::self.stride], (0, 0, 0, 0, self.pad, self.pad))
        return F.relu(out + short)


class CifarResNet(nn.Module):
    def __init__(self, depth, channels, classes):
        super().__init__()
        n = (depth - 2) // 6
        self.conv1 = nn.Conv2d(channels, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        blocks, cin = [], 16
        for stage, planes in enumerate((16, 32, 64)):
            for b in range(n):
                blocks.append(CifarBlock(cin, planes, 2 if stage > 0 and b == 0 else 1))
                cin = planes
        self.blocks = nn.Sequential(*blocks)
        self.linear = nn.Linear(64, classes)

    def forward(self, x):
        x = self.blocks(F.relu(self.bn1(self.conv1(x))))
        return self.linear(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def make_model(name, channels, classes):
    if name == "small_cnn":
        return SmallCnn(channels, classes)
    if name in ("resnet20", "resnet32", "resnet56"):
        return CifarResNet(int(name[6:]), channels, classes)
    model = getattr(torchvision.models, name)(num_classes=classes)
    if channels != 3:
        raise SystemExit("peer: only small_cnn takes other than 3 channels here")
    return model


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--shape", default="3x32x32")
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--precision", choices=("fp32", "bf16", "fp16"), default="fp32")
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--no-cudnn-benchmark", dest="cudnn_benchmark", action="store_false")
    p.add_argument("--no-foreach", dest="foreach", action="store_false")
    args = p.parse_args()
    if args.precision == "fp16" and args.device != "cuda":
        raise SystemExit("peer: --precision fp16 needs --device cuda")
    torch.backends.cudnn.benchmark = args.cudnn_benchmark

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    torch.set_num_threads(max(1, os.cpu_count() // local_world))
    torch.manual_seed(0)
    c, h, w = (int(v) for v in args.shape.split("x"))
    device = torch.device("cpu")
    if args.device == "cuda":
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    model = make_model(args.model, c, args.classes).to(device)
    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format
    model = model.to(memory_format=memory_format)
    if world > 1:
        own_gpus = args.device == "cuda" and torch.cuda.device_count() >= local_world
        dist.init_process_group("nccl" if own_gpus else "gloo")
        model = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=25,
                                                    device_ids=[device.index] if args.device == "cuda" else None)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4, foreach=args.foreach)
    lower = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(args.precision)
    scaler = torch.cuda.amp.GradScaler() if args.precision == "fp16" else None

    n = args.batch_size * (args.steps + args.warmup)
    images = torch.randint(0, 256, (n, c, h, w), dtype=torch.uint8)
    labels = torch.randint(0, args.classes, (n,))
    order = torch.randperm(n, generator=torch.Generator().manual_seed(rank))
    model.train()
    elapsed = 0.0
    for step in range(args.steps + args.warmup):
        start = time.perf_counter()
        idx = order[step * args.batch_size:(step + 1) * args.batch_size]
        x = images[idx].to(device).float() / 255.0  # as tula's synthetic data: bytes / 255
        x = x.contiguous(memory_format=memory_format)
        y = labels[idx].to(device)
        opt.zero_grad(set_to_none=False)
        with torch.autocast(device.type, dtype=lower, enabled=lower is not None):
            loss = F.cross_entropy(model(x), y)
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        loss.item()
        if step >= args.warmup:
            elapsed += time.perf_counter() - start
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    if rank == 0:
        print(json.dumps({"system": "pytorch-ddp", "model": args.model, "batch_size": args.batch_size,
                          "workers": world, "steps": args.steps, "device": str(device), "torch": torch.__version__,
                          "precision": args.precision, "channels_last": args.channels_last,
                          "cudnn_benchmark": args.cudnn_benchmark, "foreach": args.foreach,
                          "samples_per_s": args.batch_size * world * args.steps / elapsed}))


if __name__ == "__main__":
    main()
