"""Probability distributions (torch.distributions): parameterizable distributions with
sampling (tessera's generator: `ts.manual_seed` reproduces draws), reparameterized
`rsample`, `log_prob`, `entropy`, moments, `kl_divergence` and transforms. Bookkeeping
(shapes, validation, dispatch) is Python; all math is tessera ops, so every quantity is
differentiable and runs on the parameters' device."""
from __future__ import annotations

from . import constraints, transforms
from .constraint_registry import biject_to, transform_to
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .fishersnedecor import FisherSnedecor
from .exponential import Exponential
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import _register_all, kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .lkj_cholesky import LKJCholesky
from .laplace import Laplace
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform,
                         CorrCholeskyTransform,
                         CumulativeDistributionTransform, ExpTransform, IndependentTransform,
                         LowerCholeskyTransform, PositiveDefiniteTransform, PowerTransform,
                         ReshapeTransform, SigmoidTransform, SoftmaxTransform, SoftplusTransform,
                         StackTransform, StickBreakingTransform, TanhTransform, Transform,
                         identity_transform)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

_register_all()

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
    "Categorical", "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "Dirichlet", "Distribution",
    "ExpRelaxedCategorical", "ExpTransform", "Exponential", "ExponentialFamily",
    "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy",
    "HalfNormal", "Independent", "IndependentTransform", "InverseGamma", "Kumaraswamy",
    "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LogitRelaxedBernoulli",
    "LowRankMultivariateNormal", "LowerCholeskyTransform", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "PositiveDefiniteTransform",
    "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical", "ReshapeTransform",
    "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform",
    "StickBreakingTransform", "StudentT", "TanhTransform", "Transform",
    "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart", "biject_to",
    "constraints", "identity_transform", "kl_divergence", "register_kl", "transform_to",
    "transforms",
]
