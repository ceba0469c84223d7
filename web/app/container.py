"""The process's shared parts, built once from settings and handed to routes, worker and CLI alike."""

from dataclasses import dataclass, field

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from agent.profile.synthesis import profile_synthesizer
from incidents.database import make_engine, make_folder, make_session_factory, ready_schema
from memory.factory import open_bank, open_embedder
from memory.service import Embedder, MemoryBank
from memory.settings import MemorySettings
from web.app.lanes import Lane, Worker
from web.app.notify.notifier import Notifier
from web.app.offload import Offload
from web.app.settings import Settings
from web.app.write_thread import WriteThread


@dataclass
class Container:
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    bank: MemoryBank
    embedder: Embedder
    notifier: Notifier
    worker: Worker | None = field(default=None)
    lanes: list[Lane] = field(default_factory=list)
    offload: Offload = field(default_factory=Offload)
    intake: WriteThread = field(init=False)  # where alert intake's transactions run

    def __post_init__(self) -> None:
        self.intake = WriteThread(self.engine, self.sessions)

    @classmethod
    def build(cls, settings: Settings | None = None, *, migrate: bool = True) -> "Container":
        settings = settings or Settings()
        make_folder(settings.web.data_dir, "RECALLOPS_DATA_DIR")
        engine = make_engine(settings.database_url)
        try:
            if migrate:
                incidents = settings.incidents
                ready_schema(engine, migrate=incidents.migrate_on_start, wait_s=incidents.schema_wait_s)
        except BaseException:
            engine.dispose()
            raise
        # One embedder per process (it loads lazily): the embedded bank's vectors, the briefing head's
        # merging and the action guard's matching all use it.
        embedder = open_embedder()
        bank = open_memory(settings, settings.memory, embedder)
        sessions = make_session_factory(engine)
        notifier = Notifier.load(settings.notify, base_url=f"http://{settings.web.host}:{settings.web.port}")
        return cls(
            settings=settings,
            engine=engine,
            sessions=sessions,
            bank=bank,
            embedder=embedder,
            notifier=notifier,
        )

    def open_other_bank(self, memory: MemorySettings) -> MemoryBank:
        """A bank other than the service's own (the source of ``recallops memory copy``), opened as the
        service opens its own and sharing its embedder, but only to be read: a Hindsight bank the server
        does not have is not created by reading it. The caller closes it."""
        return open_memory(self.settings, memory, self.embedder, read_only=True)

    async def aclose(self) -> None:
        if self.worker is not None:
            self.worker.stop()
        self.offload.close()
        self.intake.close()
        await self.bank.close()
        self.engine.dispose()


def open_memory(
    settings: Settings, memory: MemorySettings, embedder: Embedder, *, read_only: bool = False
) -> MemoryBank:
    """Open the bank ``memory`` names, with the profile synthesizer ``settings`` configure."""
    return open_bank(
        memory,
        profile_synthesizer=profile_synthesizer(settings.llm, embedder),
        embedder=embedder,
        read_only=read_only,
    )
