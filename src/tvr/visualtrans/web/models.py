"""The verification pages' tables in the results database (SQLAlchemy, on `tvr.web.db.Base`).

`vt_servings` records when an item was first shown to a verifier (the start of the
server-measured time, and a claim on the item while it is being verified); `vt_verdicts` holds
what the verifier did with it, in two steps: their answer, given without seeing the generated
one (`answer`, `agrees`), then, once the generated answer is shown, their review: the flags and
a proposed corrected answer (`flags_json`, `fix`, `reviewed`). The generated answer the verifier
saw is stored with the verdict (`label`), so a verdict on an answer that a later build changed is
known as such. A verdict is written once: unique per (verifier, item) and per (verifier,
idempotency key), so a retried submission is a no-op. Only SQLAlchemy: the export reads these
tables without FastAPI.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from tvr.web.db import Base, utcnow


class VtServing(Base):
    """An item shown to a verifier: when it was first shown."""

    __tablename__ = "vt_servings"
    __table_args__ = (UniqueConstraint("tester_id", "item_id", name="uq_vt_serving"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tester_id: Mapped[int] = mapped_column(ForeignKey("testers.id"), index=True)
    item_id: Mapped[str] = mapped_column(String(64), index=True)
    served_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class VtVerdict(Base):
    """One verifier's answer to one item, then their review of the generated answer."""

    __tablename__ = "vt_verdicts"
    __table_args__ = (
        UniqueConstraint("tester_id", "item_id", name="uq_vt_verdict"),
        UniqueConstraint("tester_id", "idempotency_key", name="uq_vt_verdict_key"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tester_id: Mapped[int] = mapped_column(ForeignKey("testers.id"), index=True)
    serving_id: Mapped[int] = mapped_column(ForeignKey("vt_servings.id"), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(64))
    item_id: Mapped[str] = mapped_column(String(64), index=True)
    label: Mapped[str] = mapped_column(Text)  # the generated answer, as it was when answered
    answer: Mapped[str] = mapped_column(Text)  # the verifier's answer, in the label's form
    agrees: Mapped[bool] = mapped_column(Boolean)  # the answer equals the generated one
    reviewed: Mapped[bool] = mapped_column(Boolean, default=False)
    flags_json: Mapped[str] = mapped_column(Text, default="[]")  # a JSON list of FLAGS
    fix: Mapped[str | None] = mapped_column(Text, nullable=True)  # a corrected answer
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    served_at: Mapped[datetime] = mapped_column(DateTime)
    submitted_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    reviewed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    server_seconds: Mapped[float] = mapped_column(Float)
    client_seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
