"""Multi-workspace OAuth storage on docbot's own database (slack_sdk's SQLAlchemy stores on an AsyncEngine)."""

from __future__ import annotations

from slack_sdk.oauth.installation_store.sqlalchemy import AsyncSQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import AsyncSQLAlchemyOAuthStateStore
from sqlalchemy.ext.asyncio import AsyncEngine

STATE_TTL_S = 600


async def database_oauth_stores(
    engine: AsyncEngine, client_id: str
) -> tuple[AsyncSQLAlchemyInstallationStore, AsyncSQLAlchemyOAuthStateStore]:
    """Installation and OAuth-state stores in tables `slack_bots`, `slack_installations`, `slack_oauth_states`
    (created when missing; they belong to slack_sdk's schema, not to docbot's Alembic migrations)."""
    installations = AsyncSQLAlchemyInstallationStore(client_id=client_id, engine=engine)
    states = AsyncSQLAlchemyOAuthStateStore(expiration_seconds=STATE_TTL_S, engine=engine)
    await installations.create_tables()  # type: ignore[no-untyped-call]
    await states.create_tables()  # type: ignore[no-untyped-call]
    return installations, states
