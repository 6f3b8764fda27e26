"""The fixed order of stage kinds in one tick."""

#: Stage kinds in the order they run each tick. Within a kind, stages run in
#: the order their components were declared.
RING_ORDER: tuple[str, ...] = (
    "clock",
    "clear",
    "command",
    "force",
    "step",
    "state",
    "sensor",
    "estimate",
    "guide",
    "control",
    "record",
)

_RANK = {kind: index for index, kind in enumerate(RING_ORDER)}


def kind_rank(kind: str) -> int:
    """Position of ``kind`` in the ring; raises ``KeyError`` for an unknown kind."""
    return _RANK[kind]


def is_known_kind(kind: str) -> bool:
    return kind in _RANK
