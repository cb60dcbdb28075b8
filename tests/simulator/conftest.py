"""Simulator tests: every figure asserted is computed by hand in the test."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
