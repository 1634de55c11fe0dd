#!/usr/bin/env python
"""REINFORCE and actor-critic on a small hand-written CartPole (after pytorch/examples
reinforcement_learning). Actions are drawn with NumPy from the policy's probabilities so
that both runs see the same episodes."""
import argparse
import math
import os
from collections import namedtuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical


class CartPole:
    """The classic cart-pole dynamics (Barto, Sutton & Anderson), Euler-integrated."""
    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.state = None

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, size=4)
        return self.state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        total_mass = self.masspole + self.masscart
        polemass_length = self.masspole * self.length
        costheta, sintheta = math.cos(theta), math.sin(theta)
        temp = (force + polemass_length * theta_dot ** 2 * sintheta) / total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta ** 2 / total_mass))
        xacc = temp - polemass_length * thetaacc * costheta / total_mass
        x, x_dot = x + self.tau * x_dot, x_dot + self.tau * xacc
        theta, theta_dot = theta + self.tau * theta_dot, theta_dot + self.tau * thetaacc
        self.state = np.array([x, x_dot, theta, theta_dot])
        done = bool(x < -2.4 or x > 2.4 or theta < -12 * 2 * math.pi / 360
                    or theta > 12 * 2 * math.pi / 360)
        return self.state.astype(np.float32), 1.0, done, False, {}


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=0.0)
        self.affine2 = nn.Linear(128, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])


class ActorCritic(nn.Module):
    def __init__(self):
        super(ActorCritic, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.action_head = nn.Linear(128, 2)
        self.value_head = nn.Linear(128, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


def pick(probs, rng):
    p = probs.detach().numpy().ravel().astype(np.float64)
    return int(rng.rand() >= p[0])


def normalized_returns(rewards, gamma, eps):
    R = 0
    returns = []
    for r in rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    return (returns - returns.mean()) / (returns.std() + eps)


def finish_reinforce(policy, optimizer, gamma, eps):
    policy_loss = []
    returns = normalized_returns(policy.rewards, gamma, eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return policy_loss.item()


def finish_actor_critic(model, optimizer, gamma, eps):
    saved_actions = model.saved_actions
    policy_losses = []
    value_losses = []
    returns = normalized_returns(model.rewards, gamma, eps)
    for (log_prob, value), R in zip(saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    del model.rewards[:]
    del model.saved_actions[:]
    return loss.item()


def run(algo, args, init):
    print('training with', algo)
    env = CartPole(args.seed)
    torch.manual_seed(args.seed)
    rng = np.random.RandomState(args.seed)
    model = Policy() if algo == 'reinforce' else ActorCritic()
    if init:
        if os.path.exists(init):
            model.load_state_dict(torch.load(init))
        else:
            torch.save(model.state_dict(), init)
    optimizer = optim.Adam(model.parameters(), lr=1e-2 if algo == 'reinforce' else 3e-2)
    eps = np.finfo(np.float32).eps.item()

    running_reward = 10
    for i_episode in range(1, args.episodes + 1):
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, 200):
            state = torch.from_numpy(state).float().unsqueeze(0)
            if algo == 'reinforce':
                probs = model(state)
                m = Categorical(probs)
                action = torch.tensor([pick(probs, rng)])
                model.saved_log_probs.append(m.log_prob(action))
            else:
                probs, state_value = model(state)
                m = Categorical(probs)
                action = torch.tensor(pick(probs, rng))
                model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
            state, reward, done, _, _ = env.step(action.item())
            model.rewards.append(reward)
            ep_reward += reward
            if done:
                break
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        if algo == 'reinforce':
            loss = finish_reinforce(model, optimizer, args.gamma, eps)
        else:
            loss = finish_actor_critic(model, optimizer, args.gamma, eps)
        if i_episode % args.log_interval == 0:
            print('Episode {}\tLast reward: {:.2f}\tAverage reward: {:.2f}\tloss: {:.6f}'.format(
                i_episode, ep_reward, running_reward, loss))


def main():
    parser = argparse.ArgumentParser(description='PyTorch REINFORCE / actor-critic example')
    parser.add_argument('--algo', default='both', choices=['reinforce', 'actor_critic', 'both'])
    parser.add_argument('--gamma', type=float, default=0.99, metavar='G')
    parser.add_argument('--episodes', type=int, default=12)
    parser.add_argument('--seed', type=int, default=543, metavar='N')
    parser.add_argument('--log-interval', type=int, default=1, metavar='N')
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()

    algos = ['reinforce', 'actor_critic'] if args.algo == 'both' else [args.algo]
    for algo in algos:
        init = args.init and '{}.{}'.format(args.init, algo)
        run(algo, args, init)


if __name__ == '__main__':
    main()
