#!/usr/bin/env python
"""Off-policy RL updates the way stable-baselines3 and CleanRL write them, on a tiny
hand-written environment with NumPy exploration: a DQN with a replay buffer, a target network
copied by load_state_dict and later Polyak-averaged through torch.mul/torch.add(out=...) as
stable_baselines3.common.utils.polyak_update does (and torch._foreach_lerp_ for a second
target), Q-values picked by gather, targets from max(1)[0] / argmax double-DQN,
F.smooth_l1_loss; then SAC's actor and twin critics: a tanh-squashed Normal with the log-prob
correction log(1 - tanh(u)^2 + eps), torch.min over twin Q targets, and a learned temperature
log_alpha with its own Adam."""
import argparse
import os
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


class LineWorld:
    """Walk on [-1, 1]; reward is high near 0.5; discrete moves (left, stay, right) or a
    continuous step in [-0.2, 0.2]."""

    def __init__(self, rng):
        self.rng = rng
        self.x = 0.0

    def reset(self):
        self.x = self.rng.uniform(-1, 1)
        return np.array([self.x, self.x ** 2], dtype=np.float32)

    def step(self, move):
        self.x = float(np.clip(self.x + move + 0.02 * self.rng.randn(), -1, 1))
        reward = 1.0 - 2.0 * abs(self.x - 0.5)
        return np.array([self.x, self.x ** 2], dtype=np.float32), reward


class QNetwork(nn.Module):
    def __init__(self, n_obs, n_actions):
        super().__init__()
        self.network = nn.Sequential(nn.Linear(n_obs, 32), nn.ReLU(), nn.Linear(32, 32),
                                     nn.ReLU(), nn.Linear(32, n_actions))

    def forward(self, x):
        return self.network(x)


class Actor(nn.Module):
    def __init__(self, n_obs, log_std_min=-5, log_std_max=2):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(n_obs, 32), nn.ReLU())
        self.fc_mean = nn.Linear(32, 1)
        self.fc_logstd = nn.Linear(32, 1)
        self.log_std_min, self.log_std_max = log_std_min, log_std_max
        self.register_buffer('action_scale', torch.tensor(0.2))
        self.register_buffer('action_bias', torch.tensor(0.0))

    def forward(self, x):
        h = self.fc(x)
        mean = self.fc_mean(h)
        log_std = torch.tanh(self.fc_logstd(h))
        log_std = self.log_std_min + 0.5 * (self.log_std_max - self.log_std_min) * (log_std + 1)
        return mean, log_std

    def get_action(self, x, eps):
        mean, log_std = self(x)
        std = log_std.exp()
        normal = Normal(mean, std)
        x_t = mean + std * eps  # rsample with NumPy noise
        y_t = torch.tanh(x_t)
        action = y_t * self.action_scale + self.action_bias
        log_prob = normal.log_prob(x_t)
        log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + 1e-6)
        log_prob = log_prob.sum(1, keepdim=True)
        return action, log_prob, torch.tanh(mean) * self.action_scale + self.action_bias


class SoftQ(nn.Module):
    def __init__(self, n_obs):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_obs + 1, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x, a):
        return self.net(torch.cat([x, a], 1))


def polyak_update(params, target_params, tau):
    with torch.no_grad():
        for param, target_param in zip(params, target_params):
            target_param.data.mul_(1 - tau)
            torch.add(target_param.data, param.data, alpha=tau, out=target_param.data)


def collect(rng, n, policy):
    env = LineWorld(rng)
    buf = deque(maxlen=n)
    obs = env.reset()
    for t in range(n):
        action = policy(obs)
        next_obs, reward = env.step(action[1])
        buf.append((obs, action[0], reward, next_obs, float(t % 20 == 19)))
        obs = env.reset() if t % 20 == 19 else next_obs
    return buf


def sample(rng, buf, batch):
    idx = rng.randint(0, len(buf), size=batch)
    obs, act, rew, nxt, done = zip(*[buf[i] for i in idx])
    return (torch.from_numpy(np.stack(obs)), torch.tensor(act), torch.tensor(rew).float(),
            torch.from_numpy(np.stack(nxt)), torch.tensor(done).float())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--updates', type=int, default=60)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(1)
    rng = np.random.RandomState(1)
    q_network, target_network, target2 = QNetwork(2, 3), QNetwork(2, 3), QNetwork(2, 3)
    actor, qf1, qf2 = Actor(2), SoftQ(2), SoftQ(2)
    nets = {'q': q_network, 'actor': actor, 'qf1': qf1, 'qf2': qf2}
    if args.init:
        if os.path.exists(args.init):
            state = torch.load(args.init)
            for k, net in nets.items():
                net.load_state_dict(state[k])
        else:
            torch.save({k: net.state_dict() for k, net in nets.items()}, args.init)
    target_network.load_state_dict(q_network.state_dict())
    target2.load_state_dict(q_network.state_dict())
    qf1_target, qf2_target = SoftQ(2), SoftQ(2)
    qf1_target.load_state_dict(qf1.state_dict())
    qf2_target.load_state_dict(qf2.state_dict())

    # ---- DQN
    moves = [-0.1, 0.0, 0.1]
    buf = collect(rng, 500, lambda o: (a := rng.randint(3), moves[a]))
    optimizer = torch.optim.Adam(q_network.parameters(), lr=2.5e-3)
    gamma = 0.9
    for update in range(args.updates):
        obs, act, rew, nxt, done = sample(rng, buf, 32)
        with torch.no_grad():
            if update % 2 == 0:
                target_max, _ = target_network(nxt).max(dim=1)
            else:  # double DQN: the online net picks, the target net evaluates
                best = q_network(nxt).argmax(dim=1, keepdim=True)
                target_max = target_network(nxt).gather(1, best).squeeze()
            td_target = rew.flatten() + gamma * target_max * (1 - done.flatten())
        old_val = q_network(obs).gather(1, act.view(-1, 1)).squeeze()
        loss = F.smooth_l1_loss(td_target, old_val)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(q_network.parameters(), 10.0)
        optimizer.step()
        polyak_update(q_network.parameters(), target_network.parameters(), 0.05)
        with torch.no_grad():
            torch._foreach_lerp_(list(target2.parameters()), list(q_network.parameters()), 0.05)
        if update % 15 == 14:
            print('dqn update {} td loss {:.5f} q mean {:.5f}'.format(
                update, loss.item(), old_val.mean().item()))
    drift = max((a - b).abs().max().item() for a, b in zip(target_network.parameters(),
                                                            target2.parameters()))
    print('polyak and foreach_lerp targets agree', drift < 1e-5)
    greedy = q_network(torch.tensor([[-0.5, 0.25], [0.9, 0.81]])).argmax(1).tolist()
    print('greedy moves', greedy)

    # ---- SAC
    buf = collect(rng, 500, lambda o: (a := float(rng.uniform(-0.2, 0.2)), a))
    q_optimizer = torch.optim.Adam(list(qf1.parameters()) + list(qf2.parameters()), lr=3e-3)
    actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)
    target_entropy = -1.0
    log_alpha = torch.zeros(1, requires_grad=True)
    alpha = log_alpha.exp().item()
    a_optimizer = torch.optim.Adam([log_alpha], lr=3e-3)
    for update in range(args.updates):
        obs, act, rew, nxt, done = sample(rng, buf, 32)
        act = act.float().view(-1, 1)
        with torch.no_grad():
            eps = torch.from_numpy(rng.randn(32, 1).astype(np.float32))
            next_actions, next_log_pi, _ = actor.get_action(nxt, eps)
            min_qf_next = torch.min(qf1_target(nxt, next_actions),
                                    qf2_target(nxt, next_actions)) - alpha * next_log_pi
            next_q_value = rew.flatten() + (1 - done.flatten()) * gamma * min_qf_next.view(-1)
        qf1_a_values = qf1(obs, act).view(-1)
        qf2_a_values = qf2(obs, act).view(-1)
        qf_loss = F.mse_loss(qf1_a_values, next_q_value) + F.mse_loss(qf2_a_values, next_q_value)
        q_optimizer.zero_grad()
        qf_loss.backward()
        q_optimizer.step()

        eps = torch.from_numpy(rng.randn(32, 1).astype(np.float32))
        pi, log_pi, _ = actor.get_action(obs, eps)
        min_qf_pi = torch.min(qf1(obs, pi), qf2(obs, pi))
        actor_loss = ((alpha * log_pi) - min_qf_pi).mean()
        actor_optimizer.zero_grad()
        actor_loss.backward()
        actor_optimizer.step()

        with torch.no_grad():
            _, log_pi, _ = actor.get_action(obs, eps)
        alpha_loss = (-log_alpha.exp() * (log_pi + target_entropy)).mean()
        a_optimizer.zero_grad()
        alpha_loss.backward()
        a_optimizer.step()
        alpha = log_alpha.exp().item()
        polyak_update(qf1.parameters(), qf1_target.parameters(), 0.05)
        polyak_update(qf2.parameters(), qf2_target.parameters(), 0.05)
        if update % 15 == 14:
            print('sac update {} qf loss {:.5f} actor loss {:.5f} alpha loss {:.5f} '
                  'alpha {:.4f}'.format(update, qf_loss.item(), actor_loss.item(),
                                        alpha_loss.item(), alpha))
    with torch.no_grad():
        _, _, mean_action = actor.get_action(torch.tensor([[0.0, 0.0], [0.9, 0.81]]),
                                             torch.zeros(2, 1))
    print('deterministic actions', [round(v, 4) for v in mean_action.flatten().tolist()])


if __name__ == '__main__':
    main()
