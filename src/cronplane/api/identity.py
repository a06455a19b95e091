"""`whoami`: what the presented credential is and grants (clients check their setup)."""

from __future__ import annotations

from fastapi import APIRouter

from cronplane.api.auth import Authenticated
from cronplane.api.schemas import WhoAmI
from cronplane.core.access import permissions

router = APIRouter(tags=["identity"])


@router.get("/whoami", response_model=WhoAmI, summary="The caller's tenant, role and permissions")
async def whoami(principal: Authenticated) -> WhoAmI:
    """The credential's tenant (null for a platform token), role and granted permissions."""
    return WhoAmI(
        tenant=principal.tenant,
        role=principal.role.value,
        name=principal.name,
        permissions=sorted(p.value for p in permissions(principal.role)),
    )
