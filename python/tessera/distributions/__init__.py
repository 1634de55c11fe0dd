"""Probability distributions (torch.distributions): parameterizable distributions with
sampling (tessera's generator: `ts.manual_seed` reproduces draws), reparameterized
`rsample`, `log_prob`, `entropy`, moments, `kl_divergence` and transforms. Bookkeeping
(shapes, validation, dispatch) is Python; all math is tessera ops, so every quantity is
differentiable and runs on the parameters' device."""
from __future__ import annotations

from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import _register_all, kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .transforms import (AffineTransform, ComposeTransform, ExpTransform, PowerTransform,
                         SigmoidTransform, TanhTransform, Transform, identity_transform)
from .uniform import Uniform

_register_all()

__all__ = [
    "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "ComposeTransform",
    "Dirichlet", "Distribution", "ExpTransform", "Exponential", "Gamma", "Independent",
    "Laplace", "LogNormal", "Multinomial", "MultivariateNormal", "Normal", "OneHotCategorical",
    "Poisson", "PowerTransform", "SigmoidTransform", "TanhTransform", "Transform",
    "TransformedDistribution", "Uniform", "constraints", "identity_transform",
    "kl_divergence", "register_kl", "transforms",
]
