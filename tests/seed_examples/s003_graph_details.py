# Seed article 003 (Graph in PyTorch), its five code blocks in order; each block's error, if
# any, is printed as "Type: message" by the test harness, and the next block runs.
import torch
from torch import nn
from torch.autograd import Variable

# --- block 1
tensor = torch.FloatTensor([[1,2]])
var = Variable(tensor, requires_grad=True)
# requires_grad: 如果需要为张量(tensor)计算梯度(gradient)，则为True，否则为False。
v_out = torch.mean(torch.mm(var))
# print(v_out): v_out = (1 * 1 + 2 * 2)/2 = 2.5
v_out.backward() # 也就是求gradient，公式见如下, .backward() 返回值为None，但会更改var
# print(var.data) 得到gradient
# --- block 2
net = nn.Linear(3, 4)  # 一层的网络，也可以算是一个计算图就构建好了
input = Variable(torch.randn(2, 3), requires_grad=True)  # 定义一个图的输入变量
output = net(input)  # 最后的输出
loss = torch.sum(output)  # 这边加了一个sum() ,因为被backward只能是标量
loss.backward() # 到这计算图已经结束，计算图被释放了
# --- block 3
net = nn.Linear(3, 4)
input = Variable(torch.randn(2, 3), requires_grad=True)
output = net(input)
loss = torch.sum(output)

loss.backward()
loss.backward()
# --- block 4
net = nn.Linear(3, 4)
input = Variable(torch.randn(2, 3), requires_grad=True)
output = net(input)
loss = torch.sum(output)
loss.backward(retain_graph=True) # 添加retain_graph=True标识，让计算图不被立即释放
loss.backward()
# --- block 5
x = Variable(torch.FloatTensor([[1, 2]]), requires_grad=True)  # 定义一个输入变量
y = Variable(torch.FloatTensor([[3, 4],
                                [5, 6]]))
loss = torch.mm(x, y)    # 变量之间的运算
loss.backward(torch.FloatTensor([[1, 0]]), retain_graph=True)  # 求梯度，保留图
print(x.grad.data)   # 求出 x_1 的梯度
x.grad.data.zero_()  # 最后的梯度会累加到叶节点，所以叶节点清零
loss.backward(torch.FloatTensor([[0, 1]]))   # 求出 x_2的梯度
print(x.grad.data)        # 求出 x_2的梯度
