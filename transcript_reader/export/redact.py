"""Secrets and the home directory taken out of a session before it is exported, in every format.

The finding is ``detect-secrets``' (Yelp's scanner): its plugins' own patterns for cloud and service keys
and tokens, private keys, passwords in URLs and quoted ``password = "…"`` style assignments, and its
base64 entropy measure, with its heuristic filters against false positives. Its plugins are used as
pattern sets only: nothing is verified against a service, nothing leaves the machine. A few shapes its
plugins predate (project-scoped OpenAI keys, Anthropic, Google and Hugging Face keys, a secret in an
upper-case environment assignment such as ``export GITHUB_TOKEN=…``) are written here in the same
plugin form (``RegexBasedDetector``).

What is found is replaced by ``[REDACTED:<kind>]``; what was replaced is counted by kind, never kept.
Hex strings are not judged by entropy (commit hashes and digests fill ordinary transcripts), nor is
base64 below the ``ENTROPY_MIN_CHARS`` length or limit: a false positive costs the reader text, and
every key shape above is matched by its own pattern.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Iterable
from enum import Enum
from typing import Any, TypeVar

from transcript_reader.model import FileChange, SessionInfo

#: Fields that hold ids and times, never text a secret could sit in (not scanned: a read stays cheap).
SKIP_FIELDS = frozenset({"line", "timestamp", "turn_id", "call_id", "session_id", "truncated_chars", "kind"})

#: A base64 string is judged a secret by entropy only from this length and this entropy (bits a
#: character) up: a random 32-byte token in base64 has ~5.2, English words and identifiers stay below.
ENTROPY_MIN_CHARS = 24
ENTROPY_LIMIT = 4.8

HOME_LABEL = "home directory"

_T = TypeVar("_T")


def _extra_plugins() -> list[Any]:
    """Key shapes the bundled plugins do not know, as ``detect-secrets`` plugins."""
    from detect_secrets.plugins.base import RegexBasedDetector

    class ModernApiKeyDetector(RegexBasedDetector):
        """OpenAI project/service keys, Anthropic, Google and Hugging Face API keys."""

        secret_type = "API Key"
        denylist = [
            re.compile(r"\bsk-(?:proj|svcacct|admin|ant-[a-z0-9]+)-[A-Za-z0-9_-]{20,}"),
            re.compile(r"\bsk-[A-Za-z0-9]{32,}\b"),
            re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
            re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),
        ]

    class EnvAssignmentDetector(RegexBasedDetector):
        """``NAME_TOKEN=value``: an upper-case environment name that says it holds a secret, assigned a
        literal (in a shell command, a ``.env`` file, ``env`` output)."""

        secret_type = "Secret Assignment"
        denylist = [
            re.compile(r"\b[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY)"
                       r"[A-Z0-9_]*=['\"]?([^\s'\"$`{}<>]{8,})"),
        ]

    return [ModernApiKeyDetector(), EnvAssignmentDetector()]


def _plugins() -> tuple[list[Any], Any, Any]:
    """``(regex plugins, keyword plugin, base64 entropy plugin)``."""
    from detect_secrets.plugins.artifactory import ArtifactoryDetector
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
    from detect_secrets.plugins.basic_auth import BasicAuthDetector
    from detect_secrets.plugins.cloudant import CloudantDetector
    from detect_secrets.plugins.discord import DiscordBotTokenDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
    from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
    from detect_secrets.plugins.jwt import JwtTokenDetector
    from detect_secrets.plugins.keyword import KeywordDetector
    from detect_secrets.plugins.mailchimp import MailchimpDetector
    from detect_secrets.plugins.npm import NpmDetector
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.sendgrid import SendGridDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.square_oauth import SquareOAuthDetector
    from detect_secrets.plugins.stripe import StripeDetector
    from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
    from detect_secrets.plugins.twilio import TwilioKeyDetector

    regex = [cls() for cls in (
        AWSKeyDetector, ArtifactoryDetector, AzureStorageKeyDetector, BasicAuthDetector, CloudantDetector,
        DiscordBotTokenDetector, GitHubTokenDetector, GitLabTokenDetector, IbmCloudIamDetector, JwtTokenDetector,
        MailchimpDetector, NpmDetector, OpenAIDetector, PypiTokenDetector, SendGridDetector, SlackDetector,
        SquareOAuthDetector, StripeDetector, TelegramBotTokenDetector, TwilioKeyDetector,
    )] + _extra_plugins()
    return regex, KeywordDetector(), Base64HighEntropyString(limit=ENTROPY_LIMIT)


#: A private key block, from its BEGIN line to its END line (or the end of the text: an excerpt cut
#: inside the key still hides what it holds); PuTTY's key file to its MAC line.
_KEY_BLOCK = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?)-----.*?(?:-----END \1PRIVATE KEY\2-----|\Z)"
    r"|PuTTY-User-Key-File-\d+:.*?(?:Private-MAC: *\S+|\Z)",
    re.DOTALL,
)
#: Plugins whose pattern's first group is the secret itself, the rest context (``aws_secret = "…"``,
#: ``://user:PASSWORD@``); for the others the first group is a prefix and the whole match is the secret.
VALUE_GROUP = frozenset({"AWSKeyDetector", "BasicAuthDetector", "CloudantDetector", "IbmCloudIamDetector",
                         "NpmDetector", "EnvAssignmentDetector"})
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-.+/=]*")
_B64 = "[A-Za-z0-9+/=_-]{" + str(ENTROPY_MIN_CHARS) + ",}"
_QUOTED_B64 = re.compile(r"""(["'])(""" + _B64 + r""")\1""")


class Redactor:
    """Takes secrets and the home directories out of text, counting what it replaced by kind.

    ``homes``: home directories to show as ``~`` (the exporter's own, say); :meth:`add_home_of` adds the
    one a session's working directory lies in (``/home/NAME``, ``/Users/NAME``)."""

    def __init__(self, homes: Iterable[str] = ()) -> None:
        from detect_secrets.filters.heuristic import (
            is_potential_uuid,
            is_sequential_string,
            is_templated_secret,
        )
        from detect_secrets.plugins.private_key import PrivateKeyDetector

        self._regex, self._keyword, self._entropy = _plugins()
        self._trigger = _trigger(self._regex)
        self._private = PrivateKeyDetector()
        self._benign = (is_potential_uuid, is_sequential_string, is_templated_secret)
        self.counts: Counter[str] = Counter()
        self._homes: list[str] = []
        self._home_re: re.Pattern[str] | None = None
        for h in homes:
            self.add_home(h)

    # ---- homes ------------------------------------------------------------------------------------

    def add_home(self, home: str | None) -> None:
        home = (home or "").rstrip("/\\")
        if len(home) < 2 or home in self._homes or home.count("/") + home.count("\\") < 1:
            return  # "/" or "" is no home to hide
        self._homes.append(home)
        alts = "|".join(re.escape(h) for h in sorted(self._homes, key=len, reverse=True))
        # the home itself or a path under it, never a longer name that starts the same (/home/al vs /home/alice)
        self._home_re = re.compile(rf"(?:{alts})(?![\w.-])")

    def add_home_of(self, cwd: str | None) -> None:
        m = re.match(r"^(/home/[^/]+|/Users/[^/]+|[A-Za-z]:\\Users\\[^\\]+)", cwd or "")
        if m:
            self.add_home(m.group(1))

    # ---- text -------------------------------------------------------------------------------------

    def text(self, s: str, *, count: bool = True) -> str:
        """``s`` with every secret replaced by ``[REDACTED:<kind>]`` and every home by ``~``. ``count``
        False: a copy of text already counted (a session's title is its first prompt), not counted again."""
        if not s:
            return s
        if not count:
            before = self.counts.copy()
            try:
                return self.text(s)
            finally:
                self.counts = before
        if any(r.search(s) for r in self._private.denylist):
            s, n = _KEY_BLOCK.subn("[REDACTED:Private Key]", s)
            self.counts["Private Key"] += n
        if "\n" in s:
            s = "".join(self._line(line) for line in s.splitlines(keepends=True))
        else:
            s = self._line(s)
        if self._home_re is not None:
            s, n = self._home_re.subn("~", s)
            if n:
                self.counts[HOME_LABEL] += n
        return s

    def _line(self, line: str) -> str:
        if self._trigger is not None and not self._trigger.search(line):
            return line  # no pattern can match here (most lines of a session)
        spans: list[tuple[int, int, str]] = []
        for plugin in self._regex:
            name = type(plugin).__name__
            g = 1 if name in VALUE_GROUP else 0
            for regex in plugin.denylist:
                for m in regex.finditer(line):
                    gg = g if regex.groups else 0
                    start, end = m.start(gg), m.end(gg)
                    if name == "JwtTokenDetector":  # its pattern stops lazily before the signature
                        end = _TOKEN_TAIL.match(line, end).end()  # type: ignore[union-attr]
                    if start >= 0 and end > start:
                        spans.append((start, end, plugin.secret_type))
        for regex, group in _keyword_regexes().items():
            for m in regex.finditer(line):
                value = m.group(group)
                if value and len(value) >= 4 and not any(f(value) for f in self._benign) \
                        and not value.startswith("[REDACTED:"):
                    spans.append((m.start(group), m.end(group), self._keyword.secret_type))
        if len(line) >= ENTROPY_MIN_CHARS:
            for m in _QUOTED_B64.finditer(line):
                value = m.group(2)
                if self._entropy.calculate_shannon_entropy(value) >= ENTROPY_LIMIT \
                        and not any(f(value) for f in self._benign):
                    spans.append((m.start(2), m.end(2), self._entropy.secret_type))
        if not spans:
            return line
        spans.sort()
        merged: list[tuple[int, int, str]] = []
        for start, end, kind in spans:
            if merged and start < merged[-1][1]:
                s0, e0, k0 = merged[-1]
                merged[-1] = (s0, max(e0, end), k0)
            else:
                merged.append((start, end, kind))
        out = []
        pos = 0
        for start, end, kind in merged:
            out.append(line[pos:start])
            out.append(f"[REDACTED:{kind}]")
            self.counts[kind] += 1
            pos = end
        out.append(line[pos:])
        return "".join(out)

    # ---- model ------------------------------------------------------------------------------------

    def item(self, item: _T) -> _T:
        """The item with every text field redacted (argv, images, patch files and diffs too)."""
        changes: dict[str, Any] = {}
        for f in dataclasses.fields(item):  # type: ignore[arg-type]
            if f.name in SKIP_FIELDS or not f.init:
                continue
            value = getattr(item, f.name)
            new = self._value(value)
            if new is not value:
                changes[f.name] = new
        if "output" in changes and getattr(item, "output_chars", None):
            # the full length follows the text it measures (a redacted output is no excerpt)
            changes["output_chars"] = item.output_chars + len(changes["output"]) - len(item.output)  # type: ignore[attr-defined]
        return dataclasses.replace(item, **changes) if changes else item  # type: ignore[type-var]

    def _value(self, value: Any) -> Any:
        if isinstance(value, Enum) or value is None:
            return value
        if isinstance(value, str):
            new = self.text(value)
            return value if new == value else new
        if isinstance(value, tuple):
            items = tuple(self._value(v) for v in value)
            return value if all(a is b for a, b in zip(items, value)) else items
        if isinstance(value, FileChange):
            return self.item(value)
        return value

    def info(self, info: SessionInfo | None) -> SessionInfo | None:
        """The session's figures with its path, working directory and title redacted."""
        if info is None:
            return None
        # copies of what the items hold (the title is the first prompt): redacted, not counted again
        return dataclasses.replace(info, path=self.text(info.path, count=False),
                                   cwd=self.text(info.cwd, count=False) if info.cwd else None,
                                   title=self.text(info.title, count=False) if info.title else None,
                                   run_error=self.text(info.run_error, count=False) if info.run_error else None)

    def summary(self) -> Summary:
        """What was redacted, counted (never the values)."""
        return Summary(secrets=tuple(sorted((k, n) for k, n in self.counts.items() if k != HOME_LABEL)),
                       home=self.counts.get(HOME_LABEL, 0))


@dataclasses.dataclass(frozen=True, slots=True)
class Summary:
    """Counts of what ``--redact`` replaced: secrets by kind, and home directories shown as ``~``."""

    secrets: tuple[tuple[str, int], ...] = ()
    home: int = 0

    @property
    def secret_count(self) -> int:
        return sum(n for _, n in self.secrets)

    def words(self) -> str:
        """One phrase for a header: ``3 secrets redacted (AWS Access Key 1, …); home directory shown as ~ (12)``."""
        kinds = ", ".join(f"{k} {n}" for k, n in self.secrets)
        n = self.secret_count
        head = f"{n} secret{'' if n == 1 else 's'} redacted" + (f" ({kinds})" if kinds else "")
        return head + f"; home directory shown as ~ ({self.home})"

    def as_dict(self) -> dict[str, Any]:
        return {"secrets": self.secret_count, "by_kind": dict(self.secrets), "home_directory": self.home}


_KEYWORD_REGEXES: dict[Any, int] | None = None

#: What a line must contain for a pattern RE2 cannot compile (a lookbehind, a backreference) to match:
#: every keyword pattern names one of ``detect-secrets``' keywords; Cloudant's and IBM's name a key,
#: password or token.
_KEYWORD_TRIGGER = r"(?i)(?:api_?key|auth_?key|service_?key|account_?key|db_?key|database_?key|priv_?key|" \
                   r"private_?key|client_?key|db_?pass|database_?pass|key_?pass|password|passwd|pwd|secret|" \
                   r"contraseña|contrasena)"
_KEY_TRIGGER = r"(?i)(?:key|pwd|pw|pass|token)"
_LOOKAROUND = re.compile(r"\(\?<?[=!](?:[^()]|\([^()]*\))*\)")
_BIG_REPEAT = re.compile(r"\{(\d+),(\d{4,})\}")


def _trigger(regex_plugins: list[Any]) -> Any:
    """One RE2 pattern that matches every line any pattern of the scan could match (a superset): the
    plugins' own patterns where RE2 compiles them, a looser trigger where it does not, and the quoted
    base64 shape. A line it does not match is not scanned pattern by pattern: scanning every line with
    each of ~40 backtracking patterns cost ~20x the reading (``corpus_tools.bench_export``); RE2 runs
    them as one linear pass. None (scan every line) if RE2 is unavailable."""
    try:
        import re2
    except ImportError:
        return None
    opts = re2.Options()
    opts.log_errors = False  # a pattern it cannot compile is expected: it gets a trigger instead
    parts: list[str] = []
    patterns = [(r, type(p).__name__) for p in regex_plugins for r in p.denylist]
    patterns += [(r, "KeywordDetector") for r in _keyword_regexes()]
    for rx, owner in patterns:
        flags = "(?i)" if rx.flags & re.IGNORECASE else ""
        # lookarounds only narrow a match, and a bounded repeat over RE2's limit of 1000 only bounds it:
        # without them the pattern matches a superset of lines
        loose = _LOOKAROUND.sub("", rx.pattern)
        loose = _BIG_REPEAT.sub(lambda m: "{" + m.group(1) + ",}", loose)
        for text in (flags + rx.pattern, flags + loose):
            try:
                re2.compile(text, opts)
                break
            except re2.error:
                continue
        else:
            if owner == "KeywordDetector":
                text = _KEYWORD_TRIGGER
            elif owner in ("CloudantDetector", "IbmCloudIamDetector"):
                text = _KEY_TRIGGER
            else:
                return None  # no trigger known: every line is scanned
        parts.append(text)
    parts.append(f"\"{_B64}\"|'{_B64}'")  # _QUOTED_B64 without its backreference
    parts.append(r"BEGIN|PuTTY")
    try:
        return re2.compile("|".join(f"(?:{p})" for p in dict.fromkeys(parts)), opts)
    except re2.error:
        return None


def _keyword_regexes() -> dict[Any, int]:
    """``detect-secrets``' quote-requiring keyword patterns (``password = "…"``, ``"api_key": "…"``)."""
    global _KEYWORD_REGEXES
    if _KEYWORD_REGEXES is None:
        from detect_secrets.plugins.keyword import QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP

        _KEYWORD_REGEXES = dict(QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
    return _KEYWORD_REGEXES
