"""Slack: slack-bolt in HTTP mode or Socket Mode, Block Kit replies, a reply sink the outbox can drive."""

from adapters.slack.app import SlackAdapter
from adapters.slack.installations import database_oauth_stores
from adapters.slack.sink import SlackReplySink, slack_thread_ref

__all__ = ["SlackAdapter", "SlackReplySink", "database_oauth_stores", "slack_thread_ref"]
