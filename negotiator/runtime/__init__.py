"""Running negotiations: one seller vs one buyer -> an Episode; the JSONL episode log."""

from .episode import SCHEMA_VERSION, Episode, Outcome, PartyInfo, episode_id
from .log import EpisodeLog, episode_ids, iter_episodes, read_episodes
from .parties import make_party
from .run import run_negotiation

__all__ = [
    "SCHEMA_VERSION",
    "Episode",
    "Outcome",
    "PartyInfo",
    "episode_id",
    "EpisodeLog",
    "episode_ids",
    "iter_episodes",
    "read_episodes",
    "make_party",
    "run_negotiation",
]
