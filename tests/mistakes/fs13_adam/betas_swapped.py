# Mistake: unpacks the betas the other way round.
# Expect: the betas are swapped
import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.state = {}  # per parameter: its own step count and moving averages

    def zero_grad(self):
        for p in self.params:
            p.grad = None  # torch.optim's default: a parameter without a gradient is skipped by step

    def decay(self, p, grad):
        # Adam's weight decay is an L2 penalty: it joins the gradient, and the moments see it (coupled)
        return grad + self.weight_decay * p

    @torch.no_grad()
    def step(self):
        beta2, beta1 = self.betas
        for p in self.params:
            if p.grad is None:
                continue  # no gradient, no step: not even its step count moves
            grad = self.decay(p, p.grad)
            if p not in self.state:  # zeros_like: the moments keep the parameter's dtype
                self.state[p] = {"step": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}
            state = self.state[p]
            state["step"] += 1
            state["m"].mul_(beta1).add_(grad, alpha=1 - beta1)
            state["v"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            # bias correction: m and v start at zero, so early averages are too small by these factors
            m_hat = state["m"] / (1 - beta1 ** state["step"])
            v_hat = state["v"] / (1 - beta2 ** state["step"])
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))  # eps outside the square root


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)

    def decay(self, p, grad):
        # decoupled: shrink the parameter itself, by lr * weight_decay, and leave the gradient as it is
        p.mul_(1 - self.lr * self.weight_decay)
        return grad
