"""A template for the next policy: copy this folder, rename, register it.

Status: template (not registered). Steps for a new paper ``foo``:

1. copy ``_template/`` to ``foo/``; set ``NAME = "foo"`` in ``params.py``;
2. ``params.py``: the paper's parameters, with its defaults and bounds;
3. ``inputs.py``: Snapshot -> the paper's terms (plain values);
4. ``core.py``: the paper's maths on those values, equation by equation,
   each function named and documented after its equation;
5. ``state.py``: what must survive to the next cycle, immutable, with
   ``to_json``/``from_json``;
6. ``advice.py``: results -> recommendations, each with its explanation;
7. ``README.md``: which equation lives where, and every deviation;
8. add ``foo`` to ``POLICIES`` in ``advisor/policies/__init__.py`` and its
   package to ``pyproject.toml``; test ``core`` on the paper's worked
   examples and ``advise`` on recorded snapshots.

This example recommends nothing unless an application has waited longer than
``max_wait_s`` with pending containers; then it advises (advisory only) a
higher priority.
"""

from yarn_advisor.advisor.policies._base import Policy
from yarn_advisor.advisor.policies._template.advice import advise
from yarn_advisor.advisor.policies._template.params import NAME, Params
from yarn_advisor.advisor.policies._template.state import State

POLICY: Policy[Params, State] = Policy(NAME, Params, State, advise)

__all__ = ["NAME", "POLICY", "Params", "State", "advise"]
