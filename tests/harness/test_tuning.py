"""The tuned step: fused optimizers rebuilt with their hyper-parameters, CNN settings on CUDA only."""

import torch
from torch import nn

from trainbench.harness.tuning import fuse_optimizer, tune


def test_fused_optimizer_keeps_type_groups_and_hyperparameters():
    model = nn.Linear(4, 3)
    opt = torch.optim.AdamW([{"params": [model.weight], "lr": 1e-3}, {"params": [model.bias], "lr": 5e-4}],
                            betas=(0.9, 0.95), weight_decay=0.1)
    fused = fuse_optimizer(opt)
    if fused is opt:  # a build without a fused kernel for this device
        return
    assert type(fused) is torch.optim.AdamW and fused.defaults["fused"] is True
    assert [g["lr"] for g in fused.param_groups] == [1e-3, 5e-4] and fused.defaults["betas"] == (0.9, 0.95)
    assert fused.param_groups[0]["params"][0] is model.weight
    # the same update as the plain optimizer
    ref = nn.Linear(4, 3)
    ref.load_state_dict(model.state_dict())
    plain = torch.optim.AdamW([{"params": [ref.weight], "lr": 1e-3}, {"params": [ref.bias], "lr": 5e-4}],
                              betas=(0.9, 0.95), weight_decay=0.1)
    x = torch.randn(8, 4)
    for m, o in ((model, fused), (ref, plain)):
        m(x).square().mean().backward()
        o.step()
    torch.testing.assert_close(model.weight, ref.weight)


def test_an_optimizer_with_state_is_left_alone():
    model = nn.Linear(2, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.randn(3, 2)).sum().backward()
    opt.step()
    assert fuse_optimizer(opt) is opt


def test_cpu_and_plain_change_nothing_and_say_so():
    model = nn.Sequential(nn.Conv2d(3, 4, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for device, tuning in ((torch.device("cpu"), "tuned"), (torch.device("cuda"), "plain")):
        m, o, settings = tune(model, opt, device, tuning)
        assert m is model and o is opt and not settings["channels_last"] and settings["tuning"] == tuning


def test_loader_workers_scale_with_the_cores_per_gpu():
    from trainbench.harness.run import auto_workers

    cuda = torch.device("cuda")
    assert auto_workers(torch.device("cpu"), cores=64, gpus=1) == 0
    assert auto_workers(cuda, cores=8, gpus=1) == 7  # a g5.2xlarge-like box: not a fixed 4
    assert auto_workers(cuda, cores=96, gpus=8) == 8  # 12 cores per GPU, capped
    assert auto_workers(cuda, cores=16, gpus=8) == 1  # 2 cores per GPU: one worker, one trainer
    assert auto_workers(cuda, cores=4, gpus=1) == 3
