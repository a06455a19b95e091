"""A part's use case offered on the service itself (`service.create_schedule(...)`).

`ScheduleService` is composed of parts (`service.schedules`, `service.runs`, …);
the use cases the edges call are also its own methods, declared once on the
class as `create_schedule = Offered("schedules", Schedules.create_schedule)`.
mypy reads each one's signature from the part's method (ParamSpec), so the
`ControlPlane` port is checked against the real signatures, and no method is
copied onto each instance.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MethodType
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

Part = TypeVar("Part")
P = ParamSpec("P")
R = TypeVar("R")


class Offered(Generic[Part, P, R]):
    """The method `method` of the service's attribute `part`, called on that part."""

    def __init__(self, part: str, method: Callable[Concatenate[Part, P], R]) -> None:
        self.part = part
        self.method = method

    @overload
    def __get__(self, service: None, owner: type[Any]) -> Offered[Part, P, R]: ...

    @overload
    def __get__(self, service: object, owner: type[Any] | None = None) -> Callable[P, R]: ...

    def __get__(
        self, service: object | None, owner: type[Any] | None = None
    ) -> Offered[Part, P, R] | Callable[P, R]:
        if service is None:
            return self
        return cast(Callable[P, R], MethodType(self.method, getattr(service, self.part)))
