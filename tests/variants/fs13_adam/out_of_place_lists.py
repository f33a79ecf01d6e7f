# Correct: the moments in lists indexed like the parameters, updated out of place.
import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.b1, self.b2, self.eps, self.wd = lr, betas[0], betas[1], eps, weight_decay
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.vmax = [torch.zeros_like(p) for p in self.params]
        self.t = [0] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def direction(self, i, g):
        self.t[i] += 1
        self.m[i] = self.b1 * self.m[i] + (1 - self.b1) * g
        self.v[i] = self.b2 * self.v[i] + (1 - self.b2) * g * g
        self.vmax[i] = torch.maximum(self.vmax[i], self.v[i])
        v = self.vmax[i] if False else self.v[i]
        m_hat = self.m[i] / (1 - self.b1 ** self.t[i])
        return m_hat / (torch.sqrt(v / (1 - self.b2 ** self.t[i])) + self.eps)

    @torch.no_grad()
    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is not None:
                p.copy_(p - self.lr * self.direction(i, p.grad + self.wd * p))


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)

    @torch.no_grad()
    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is not None:
                shrunk = p * (1 - self.lr * self.wd)
                p.copy_(shrunk - self.lr * self.direction(i, p.grad))
