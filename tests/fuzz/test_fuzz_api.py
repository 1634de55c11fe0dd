"""The public-API fuzzer (fuzz_api.py) as a test: a bounded, derandomized session in CI; a long
random one with TESSERA_FUZZ_LONG=1 (TESSERA_FUZZ_SECONDS, default 1800)."""
from __future__ import annotations

import os

import pytest

import fuzz_api

LONG = os.environ.get("TESSERA_FUZZ_LONG") == "1"


def test_fuzz_public_api() -> None:
    seconds = float(os.environ.get("TESSERA_FUZZ_SECONDS", "1800" if LONG else "30"))
    findings = fuzz_api.fuzz_for(seconds, seed=None if LONG else 22, batch_size=150)
    assert not findings, f"{len(findings)} findings:\n\n" + "\n\n".join(findings[:20])


def test_fuzz_targets_cover_the_public_api() -> None:
    targets = fuzz_api.public_targets()
    assert len(targets) > 1000
    for name in ("ts.add", "ts.reshape", "linalg.inv", "fft.fft", "special.zeta", "F.conv2d",
                 "Tensor.sum", "ts.vander", "ts.combinations"):
        assert name in targets


@pytest.mark.parametrize("case,expect", [("abort", "CRASH (signal 6)"), ("hang", "HANG"),
                                         ("spin", "hang: "), ("keyerror", "KeyError"),
                                         ("leak", "C++ text")])
def test_fuzz_harness_reports_each_kind_of_finding(monkeypatch, case: str, expect: str) -> None:
    monkeypatch.setenv("TESSERA_FUZZ_SELFTEST", "1")
    monkeypatch.setenv("TESSERA_FUZZ_CALL_TIMEOUT", "1")
    ok = ("ts.add", [("py", 1), ("T", (2,), "float32", "c", "normal", False)], [])
    findings = fuzz_api.run_batch([ok, (f"selftest.{case}", [], []), ok],
                                 deadline=8 if case == "hang" else 60)
    assert len(findings) == 1 and expect in findings[0], findings
    if case in ("abort", "hang"):
        assert "call 1: selftest." in findings[0]
