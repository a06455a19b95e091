"""Hostile documents shared by the issue-21 tests."""

from __future__ import annotations


def billion_laughs(levels: int = 7, fan: int = 9) -> str:
    """The alias bomb of the issue: `levels` anchors, each `fan` aliases of the one before."""
    lines = ["a: &a [" + ", ".join(['"lol"'] * fan) + "]"]
    previous = "a"
    for index in range(1, levels + 1):
        name = f"l{index}"
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * fan) + "]")
        previous = name
    lines.append("name: bomb")
    lines.append(f"jobs: {{j: {{target: 'python:m:f', payload: {{x: *{previous}}}}}}}")
    return "\n".join(lines) + "\n"
