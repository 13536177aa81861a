# Seed article 000 (PyTorch 04: computational graph and dynamic graph), its code example.
import torch

# 叶子结点
w = torch.tensor([1.], requires_grad=True)
x = torch.tensor([2.], requires_grad=True)

# 非叶子结点
a = torch.add(w, x)
b = torch.add(w, 1)
y = torch.mul(a, b)

# PyTorch 中，为了节省内存，在计算完成后会丢弃非叶子结点的梯度值，即为 None；
# 如果希望保存非叶子结点梯度值，需要在反向传播之前使用 .retain_grad() 方法。
a.retain_grad()
b.retain_grad()
y.retain_grad()

# 反向传播
y.backward()
print(w.grad)

# 查看叶子结点
print("is_leaf:\n", w.is_leaf, x.is_leaf, a.is_leaf, b.is_leaf, y.is_leaf)

# 查看梯度
print("gradient:\n", w.grad, x.grad, a.grad, b.grad, y.grad)

# 查看 grad_fn
print("grad_fn:\n", w.grad_fn, x.grad_fn, a.grad_fn, b.grad_fn, y.grad_fn)
