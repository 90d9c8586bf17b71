"""The results database (SQLAlchemy 2): testers, served samples and scored answers.

SQLite by default (WAL journal and a busy timeout, set on every connection), any SQLAlchemy URL
by option. An answer row is written once: a unique key per (tester, problem, split, sample,
practice) and per (tester, idempotency key) makes a retried or doubled submission a no-op.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from datetime import datetime, timezone
from typing import Any, TypeVar

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker
from sqlalchemy.pool import StaticPool

from tvr.core.errors import UserError

#: one writer at a time in this process: SQLite allows one anyway, and waiting on a lock here
#: is quicker than SQLite's busy-wait back-off (sleeps of up to 100 ms) under many testers
WRITE_LOCK = threading.Lock()


def commit(db: Session) -> None:
    """Commit `db` holding the process's write lock."""
    with WRITE_LOCK:
        db.commit()


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


B = TypeVar("B", bound=Base)

#: a submission's idempotency key, which the browser makes once per answer: a retried or doubled
#: request carries the same key, and the row stored under it is the answer
IDEMPOTENCY_KEY = re.compile(r"^[A-Za-z0-9_-]{8,64}$")


def insert(db: Session, row: Base) -> bool:
    """Add `row` and commit it (`commit`); False, rolled back, when a unique key of its table
    holds another row already (a doubled request stored its row first)."""
    db.add(row)
    try:
        commit(db)
    except IntegrityError:
        db.rollback()
        return False
    return True


def stored_by_key(db: Session, table: type[B], tester_id: int, key: str) -> B | None:
    """The row of `table` the tester stored under the idempotency key `key`, or None."""
    return db.scalar(
        select(table).where(table.tester_id == tester_id, table.idempotency_key == key)
    )


NAME_KEY_INDEX = "uq_testers_name_key"


def name_key(name: str) -> str:
    """The key that makes names one name when they differ only in case or Unicode width
    ("Ada", "ada", "Ａｄａ"): NFKC, case folded, NFKC again."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


class Tester(Base):
    """One person taking tests; the browser holds a secret token whose hash is stored here.
    `name_key` (`tvr.web.testers.name_key`) is unique: "Ada" and "ａｄａ" are one tester."""

    __tablename__ = "testers"
    __table_args__ = (Index(NAME_KEY_INDEX, "name_key", unique=True),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    # NULL only in a database made before the key existed, for a name whose key an older
    # tester holds already (that tester comes back by resume code only)
    name_key: Mapped[str | None] = mapped_column(String(200), nullable=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Serving(Base):
    """When a sample was first shown to a tester: the start of the server-measured time."""

    __tablename__ = "servings"
    __table_args__ = (
        UniqueConstraint(
            "tester_id", "problem", "split", "sample_id", "practice", name="uq_serving"
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tester_id: Mapped[int] = mapped_column(ForeignKey("testers.id"), index=True)
    problem: Mapped[str] = mapped_column(String(16))
    split: Mapped[str] = mapped_column(String(64))
    sample_id: Mapped[str] = mapped_column(String(200))
    sample_index: Mapped[int] = mapped_column(Integer)
    practice: Mapped[bool] = mapped_column(Boolean)
    view: Mapped[str] = mapped_column(String(1))
    served_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Answer(Base):
    """One scored answer (the tester's steps as JSON, the scores of `tvr.trance.eval.metrics`)."""

    __tablename__ = "answers"
    __table_args__ = (
        UniqueConstraint(
            "tester_id", "problem", "split", "sample_id", "practice", name="uq_answer"
        ),
        UniqueConstraint("tester_id", "idempotency_key", name="uq_answer_key"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tester_id: Mapped[int] = mapped_column(ForeignKey("testers.id"), index=True)
    idempotency_key: Mapped[str] = mapped_column(String(64))
    problem: Mapped[str] = mapped_column(String(16))
    split: Mapped[str] = mapped_column(String(64))
    sample_id: Mapped[str] = mapped_column(String(200))
    sample_index: Mapped[int] = mapped_column(Integer)
    practice: Mapped[bool] = mapped_column(Boolean)
    view: Mapped[str] = mapped_column(String(1))
    steps_json: Mapped[str] = mapped_column(Text)
    num_ref_steps: Mapped[int] = mapped_column(Integer)
    served_at: Mapped[datetime] = mapped_column(DateTime)
    submitted_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    server_seconds: Mapped[float] = mapped_column(Float)
    client_seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    correct: Mapped[bool] = mapped_column(Boolean)
    loose_correct: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    distance: Mapped[int | None] = mapped_column(Integer, nullable=True)
    norm_distance: Mapped[float | None] = mapped_column(Float, nullable=True)
    broken_rule: Mapped[str | None] = mapped_column(String(32), nullable=True)
    broken_step: Mapped[int | None] = mapped_column(Integer, nullable=True)
    obj_correct: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    attr_correct: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    value_correct: Mapped[bool | None] = mapped_column(Boolean, nullable=True)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def make_engine(url: str) -> Engine:
    """An engine for `url` with the tables created; SQLite gets WAL mode and a busy timeout."""
    if url in ("sqlite://", "sqlite:///:memory:"):  # one shared in-memory database (tests, demos)
        engine = create_engine(url, connect_args={"check_same_thread": False}, poolclass=StaticPool)
        event.listen(engine, "connect", _sqlite_pragmas)
    elif url.startswith("sqlite"):
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=20,
            max_overflow=40,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    try:
        Base.metadata.create_all(engine)
        _add_name_keys(engine)
    except OperationalError as err:
        raise UserError(
            f"cannot open the results database {url}: {err.orig}; choose another with --db"
        ) from None
    return engine


def _add_name_keys(engine: Engine) -> None:
    """Bring a database made before `testers.name_key` existed up to date: add the column, fill
    it (the oldest tester of a key gets it), then create its unique index."""
    if "name_key" in {c["name"] for c in inspect(engine).get_columns("testers")}:
        return
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE testers ADD COLUMN name_key VARCHAR(200)"))
        taken: set[str] = set()
        for tid, name in conn.execute(select(Tester.id, Tester.name).order_by(Tester.id)):
            key = name_key(name)
            if key not in taken:
                taken.add(key)
                conn.execute(update(Tester).where(Tester.id == tid).values(name_key=key))
    next(i for i in Tester.__table__.indexes if i.name == NAME_KEY_INDEX).create(engine)


def make_sessionmaker(engine: Engine) -> sessionmaker:
    return sessionmaker(engine, expire_on_commit=False)
