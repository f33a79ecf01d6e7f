# Mistake: saves the state_dict: weights only, no program to run.
# Expect: holds weights only
import torch


def export_mlp(model, example, path):
    torch.save(model.state_dict(), path)


def export_gated(model, example, path):
    torch.save(model.state_dict(), path)
