"""Discord adapter: discord.py client, rendering, persistent buttons and the reply sink."""

from adapters.discord.api_url import use_api_url
from adapters.discord.client import DocbotClient, default_intents
from adapters.discord.sink import DiscordReplySink, discord_thread_ref

__all__ = ["DiscordReplySink", "DocbotClient", "default_intents", "discord_thread_ref", "use_api_url"]
