# Correct: torch.optim's own arithmetic (lerp_, addcdiv_ with the bias corrections folded into
# step size and denominator), AdamW as a flag.
import math

import torch


class Adam:
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.groups = [p for p in params]
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.state = {}

    def zero_grad(self):
        for p in self.groups:
            p.grad = None

    def step(self):
        beta1, beta2 = self.betas
        with torch.no_grad():
            for p in self.groups:
                if p.grad is None:
                    continue
                st = self.state.get(p)
                if st is None:
                    st = self.state[p] = {"t": 0, "exp_avg": torch.zeros_like(p), "exp_avg_sq": torch.zeros_like(p),
                                          "max_sq": torch.zeros_like(p)}
                grad = p.grad
                if self.decoupled:
                    p.mul_(1 - self.lr * self.weight_decay)
                elif self.weight_decay:
                    grad = grad.add(p, alpha=self.weight_decay)
                st["t"] += 1
                st["exp_avg"].lerp_(grad, 1 - beta1)
                st["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad.conj(), value=1 - beta2)
                sq = st["exp_avg_sq"]
                if False:
                    torch.maximum(st["max_sq"], sq, out=st["max_sq"])
                    sq = st["max_sq"]
                step_size = self.lr / (1 - beta1 ** st["t"])
                denom = (sq.sqrt() / math.sqrt(1 - beta2 ** st["t"])).add_(self.eps)
                p.addcdiv_(st["exp_avg"], denom, value=-step_size)


class AdamW(Adam):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
