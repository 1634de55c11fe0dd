import os

from hypothesis import HealthCheck, settings

# CI is derandomized: each test draws the same examples every run, so a submission's result does
# not depend on luck; the dev profile keeps exploring new examples.
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=100, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
