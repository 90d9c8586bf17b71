"""The VTT rating pages' tables in the results database (SQLAlchemy, on `tvr.web.db.Base`).

A unit is one model's descriptions of one sample. `vtt_servings` records when a unit was first
shown to a rater (the start of the server-measured time, and a claim on the unit while it is
being rated); `vtt_ratings` holds the rater's scores: fluency, relevance and logical soundness,
each 1-5, or none of them when the rater could not decide. A rating is written once: unique per
(rater, sample, model) and per (rater, idempotency key), so a retried submission is a no-op.
The descriptions shown are stored with the rating, so an export needs no other file.
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


class VttServing(Base):
    """A unit shown to a rater: when it was first shown."""

    __tablename__ = "vtt_servings"
    __table_args__ = (UniqueConstraint("tester_id", "sample_id", "model", name="uq_vtt_serving"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tester_id: Mapped[int] = mapped_column(ForeignKey("testers.id"), index=True)
    sample_id: Mapped[str] = mapped_column(String(64), index=True)
    model: Mapped[str] = mapped_column(String(200))
    served_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class VttRating(Base):
    """One rater's scores of one unit (all None when `undecided`)."""

    __tablename__ = "vtt_ratings"
    __table_args__ = (
        UniqueConstraint("tester_id", "sample_id", "model", name="uq_vtt_rating"),
        UniqueConstraint("tester_id", "idempotency_key", name="uq_vtt_rating_key"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tester_id: Mapped[int] = mapped_column(ForeignKey("testers.id"), index=True)
    serving_id: Mapped[int] = mapped_column(ForeignKey("vtt_servings.id"))
    idempotency_key: Mapped[str] = mapped_column(String(64))
    sample_id: Mapped[str] = mapped_column(String(64), index=True)
    model: Mapped[str] = mapped_column(String(200))
    n: Mapped[int] = mapped_column(Integer)  # the sample's number of transformations
    descriptions_json: Mapped[str] = mapped_column(Text)  # what the rater saw, a JSON list
    fluency: Mapped[int | None] = mapped_column(Integer, nullable=True)
    relevance: Mapped[int | None] = mapped_column(Integer, nullable=True)
    logical_soundness: Mapped[int | None] = mapped_column(Integer, nullable=True)
    undecided: Mapped[bool] = mapped_column(Boolean, default=False)
    served_at: Mapped[datetime] = mapped_column(DateTime)
    submitted_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    server_seconds: Mapped[float] = mapped_column(Float)
    client_seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
