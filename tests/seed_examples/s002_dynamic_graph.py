# Seed article 002 (DAY02: computational graph and dynamic graph), its code example.
import torch

# 创建叶子结点(requires_grad=True表示需要计算梯度)
w = torch.tensor([1.], requires_grad=True)
x = torch.tensor([2.], requires_grad=True)

# 中间结点运算
a = torch.add(w, x)  # a = w + x
a.retain_grad()      # 保留中间变量a的梯度(非叶子结点默认不保留)
b = torch.add(w, 1)  # b = w + 1
y = torch.mul(a, b)  # y = a * b

# 反向传播计算梯度
y.backward()

# 查看叶子结点状态
print("is_leaf:", w.is_leaf, x.is_leaf, a.is_leaf, b.is_leaf, y.is_leaf)
# 输出:is_leaf: True True False False False

# 查看梯度(w的梯度应为5,x的梯度为b=2)
print("grad:", w.grad, x.grad, a.grad, b.grad, y.grad)
# 输出:grad: tensor([5.]) tensor([2.]) tensor([2.]) tensor([3.]) None

# 查看梯度函数(记录运算类型)
print("grad_fn:", w.grad_fn, x.grad_fn, a.grad_fn, b.grad_fn, y.grad_fn)
# 输出:grad_fn: None None <AddBackward0 object at ...> <AddBackward0 object at ...> <MulBackward0 object at ...>
