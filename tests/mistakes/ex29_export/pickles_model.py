# Mistake: "exports" with torch.save(model): a pickled Python object, which needs the model's class to load.
# Expect: neither TorchScript
import torch


def export_mlp(model, example, path):
    model.eval()
    torch.save(model, path)


def export_gated(model, example, path):
    model.eval()
    torch.save(model, path)
