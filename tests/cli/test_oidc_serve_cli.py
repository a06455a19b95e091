"""`cronplane serve` with a bad CRONPLANE_OIDC_* setting refuses to start: X400390OIDCFG
naming the variable, exit 2, before it listens."""

from __future__ import annotations

import pytest
from cli_process import Cronplane

GOOD = {
    "CRONPLANE_OIDC_ISSUER": "https://login.example.test/realms/ops",
    "CRONPLANE_OIDC_CLIENT_ID": "cronplane",
    "CRONPLANE_OIDC_CLIENT_SECRET": "s3cret",
    "CRONPLANE_OIDC_ROLE_MAP": "ops=*:admin",
    "CRONPLANE_SECRET_KEY": "k" * 32,
}


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"CRONPLANE_OIDC_ROLE_MAP": "ops=*:owner"}, "CRONPLANE_OIDC_ROLE_MAP"),
        ({"CRONPLANE_SECRET_KEY": ""}, "CRONPLANE_SECRET_KEY"),
    ],
)
def test_serve_refuses_to_start(cronplane: Cronplane, changes: dict[str, str], field: str) -> None:
    done = cronplane("serve", "--port", "0", timeout=60, **{**GOOD, **changes})
    assert done.code == 2, done.stdout + done.stderr
    assert "X400390OIDCFG" in done.stderr and field in done.stderr
