"""A job's frozen dataclass config as the JSON dict saved beside its output, and back."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, ClassVar, TypeVar

from tvr.core.typed_config import build_config

C = TypeVar("C", bound="JobConfig")


class JobConfig:
    """Base of a job's config, a frozen `@dataclass` subclass with a `validate()` that returns
    the config or raises UserError.

    `to_dict()` is what the job saves as config.json: the fields, tuples as lists, led by
    {"format": FORMAT_TAG} when the class names one. `from_dict(d)` reads it back: the "format"
    key dropped (when FORMAT_TAG is set), lists back to tuples where a field is a tuple, any
    other key refused as an "unknown OPTION_KIND option", then validated.
    """

    FORMAT_TAG: ClassVar[str | None] = None
    OPTION_KIND: ClassVar[str] = "job"

    def to_dict(self) -> dict[str, Any]:
        d = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}  # type: ignore[call-overload]
        return d if self.FORMAT_TAG is None else {"format": self.FORMAT_TAG, **d}

    @classmethod
    def from_dict(cls: type[C], d: dict[str, Any], where: str = "config") -> C:
        """The config of `d` (a config.json's dict): keys, types and bounds checked by
        `tvr.core.typed_config` (UserError naming `where` and the key), then validated."""
        if isinstance(d, dict) and cls.FORMAT_TAG is not None:
            d = {k: v for k, v in d.items() if k != "format"}
        return build_config(cls, d, where, cls.OPTION_KIND)

