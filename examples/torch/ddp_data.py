"""Models and data sets for train_ddp.py, built the same way on every rank from one seed.

digits:   scikit-learn's 8x8 handwritten digits (1797 images shipped with python3-sklearn), an MLP
          of ~13k parameters: latency-bound communication (one small bucket per iteration).
resnet18: torchvision's ResNet-18 (11.2 M parameters, 44.7 MB of float32 gradients per
          iteration) on synthetic 3x32x32 images: bandwidth-bound communication. The images are
          a per-class random template plus noise, so the loss falls and two runs can be compared
          by their loss curves; no download is needed.
"""
import torch


def digits(seed):
    """(model, train_x, train_y, test_x, test_y): 80/20 split, pixels scaled to [0, 1]."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.data, dtype=torch.float32) / 16.0
    y = torch.tensor(d.target, dtype=torch.int64)
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(len(y), generator=g)
    ntrain = len(y) * 4 // 5
    tr, te = perm[:ntrain], perm[ntrain:]
    torch.manual_seed(seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(),
        torch.nn.Linear(128, 32), torch.nn.ReLU(),
        torch.nn.Linear(32, 10))
    return model, x[tr], y[tr], x[te], y[te]


def resnet18(seed, samples):
    """(model, train_x, train_y, None, None): `samples` synthetic images over 10 classes."""
    import torchvision  # strata-deps: bench (scripts/install-deps.sh --bench)

    g = torch.Generator().manual_seed(seed)
    templates = torch.randn(10, 3, 32, 32, generator=g)
    y = torch.randint(0, 10, (samples,), generator=g)
    x = 0.5 * templates[y] + torch.randn(samples, 3, 32, 32, generator=g)
    torch.manual_seed(seed)
    model = torchvision.models.resnet18(num_classes=10)
    return model, x, y, None, None


def shard(n, epoch, seed, rank, world):
    """This rank's sample indices for one epoch: one permutation shared by all ranks (seeded by
    seed and epoch), dealt round-robin, so the ranks together see every sample once."""
    g = torch.Generator().manual_seed(seed * 1000 + epoch)
    return torch.randperm(n, generator=g)[rank::world]
